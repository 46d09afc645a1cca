/*
 * volray queue: Volcano's queues from the terminal. list prints one row
 * per queue with its counts of PodGroups by phase (status, kept by the
 * queue controller); get shows one queue whole: weight, capability,
 * guarantee, deserved, allocated, reclaimable, state, counts and the
 * PodGroups in it by phase (read from the PodGroups themselves); open and
 * close set the annotation volray.io/queue-state that the queue controller
 * acts on (a closed queue is Closing while PodGroups remain, then Closed).
 * create, delete and operate are vcctl's verbs: create NAME with
 * --weight, --priority, --parent, --capability, --deserved, --guarantee
 * and --reclaimable; delete NAME (the server refuses root, default and
 * parents); operate NAME --action open|close|update (update: --weight).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

#define QUEUES		"/apis/scheduling.volcano.sh/v1beta1/queues"
#define PODGROUPS	"/apis/scheduling.volcano.sh/v1beta1/podgroups"
#define STATE_KEY	"volray.io/queue-state"

static const char *const counts[] = { "pending", "inqueue", "running",
    "unknown", "completed" };
static const char *const phases[] = { "Pending", "Inqueue", "Running",
    "Unknown", "Completed" };
#define NCOUNTS	(sizeof counts / sizeof counts[0])

static int
usage(const char *why)
{
	return cli_opt_usage("queue", "%s\nusage: volray queue list | get NAME "
	    "| pending NAME | open NAME | close NAME\n"
	    "       | create NAME [--weight N] [--priority N] [--parent Q] "
	    "[--capability K=V,...]\n"
	    "         [--deserved K=V,...] [--guarantee K=V,...] "
	    "[--reclaimable true|false]\n"
	    "       | delete NAME | operate NAME --action open|close|update "
	    "[--weight N]", why);
}

static char *
num(const cJSON *o, const char *path)
{
	const cJSON *n = json_at(o, path);
	struct cli_buf b = { 0 };

	cli_buf_printf(&b, "%.0f", cJSON_IsNumber(n) ? n->valuedouble : 0);
	return b.p;
}

static char *
str(const cJSON *o, const char *path, const char *dflt)
{
	const char *s = json_str(o, path);

	return xstrdup(s != NULL && *s != '\0' ? s : dflt);
}

/* A parent as the controller reads it: root for every queue but root. */
static const char *
parent_of(const cJSON *q)
{
	const char *p = json_str(q, "spec.parent");

	if (strcmp(json_str(q, "metadata.name"), "root") == 0)
		return "";
	return p != NULL && *p != '\0' ? p : "root";
}

static int
queue_list(void)
{
	static const char *const head[] = { "NAME", "WEIGHT", "STATE",
	    "PARENT", "PENDING", "INQUEUE", "RUNNING", "UNKNOWN",
	    "COMPLETED" };
	struct cli_table t = { 0 };
	char *cells[9];
	const cJSON *q;
	cJSON *list;
	size_t i;

	if ((list = cli_http_list(QUEUES, NULL)) == NULL)
		return CLI_FAIL;
	t.ncol = 9;
	for (i = 0; i < 9; i++)
		cells[i] = xstrdup(head[i]);
	cli_table_add(&t, cells);
	cJSON_ArrayForEach(q, json_at(list, "items")) {
		cells[0] = str(q, "metadata.name", "");
		cells[1] = num(q, "spec.weight");
		cells[2] = str(q, "status.state", "<none>");
		cells[3] = xstrdup(*parent_of(q) ? parent_of(q) :
		    "<none>");
		for (i = 0; i < NCOUNTS; i++) {
			struct cli_buf p = { 0 };

			cli_buf_printf(&p, "status.%s", counts[i]);
			cells[4 + i] = num(q, p.p);
			cli_buf_free(&p);
		}
		cli_table_add(&t, cells);
	}
	cli_table_flush(&t);
	cJSON_Delete(list);
	return CLI_OK;
}

/* "cpu=4, memory=8Gi", or <none>. */
static void
resources(const char *title, const cJSON *map)
{
	const cJSON *el;
	int n = 0;

	printf("%-13s", title);
	cJSON_ArrayForEach(el, map) {
		char *v = cJSON_IsString(el) ? xstrdup(el->valuestring) :
		    NULL;

		if (v == NULL) {
			struct cli_buf b = { 0 };

			cli_buf_printf(&b, "%g", el->valuedouble);
			v = b.p;
		}
		printf("%s%s=%s", n++ ? ", " : "", el->string, v);
		free(v);
	}
	printf("%s\n", n == 0 ? "<none>" : "");
}

static int
queue_get(const char *name)
{
	struct cli_buf path = { 0 };
	const cJSON *pg, *rec;
	cJSON *q, *pgs;
	size_t i;
	int n;

	cli_buf_printf(&path, "%s/%s", QUEUES, name);
	q = cli_http_get_json(path.p, NULL);
	cli_buf_free(&path);
	if (q == NULL)
		return CLI_FAIL;
	if ((pgs = cli_http_list(PODGROUPS, NULL)) == NULL) {
		cJSON_Delete(q);
		return CLI_FAIL;
	}
	rec = json_at(q, "spec.reclaimable");
	printf("%-13s%s\n", "Name:", name);
	printf("%-13s%s\n", "Parent:", *parent_of(q) ? parent_of(q) :
	    "<none>");
	printf("%-13s%.0f\n", "Weight:", cJSON_IsNumber(json_at(q,
	    "spec.weight")) ? json_at(q, "spec.weight")->valuedouble : 1);
	if (cJSON_IsNumber(json_at(q, "spec.priority")))
		printf("%-13s%.0f\n", "Priority:",
		    json_at(q, "spec.priority")->valuedouble);
	printf("%-13s%s\n", "Reclaimable:", cJSON_IsFalse(rec) ? "false" :
	    "true");
	printf("%-13s%s\n", "State:", json_str(q, "status.state") ?
	    json_str(q, "status.state") : "<none>");
	resources("Capability:", json_at(q, "spec.capability"));
	resources("Guarantee:", json_at(q, "spec.guarantee.resource"));
	resources("Deserved:", json_at(q, "spec.deserved"));
	resources("Allocated:", json_at(q, "status.allocated"));
	printf("PodGroups:  ");
	for (i = 0; i < NCOUNTS; i++) {
		struct cli_buf p = { 0 };
		char *c;

		cli_buf_printf(&p, "status.%s", counts[i]);
		c = num(q, p.p);
		printf(" %s %s%s", counts[i], c, i + 1 < NCOUNTS ? "," : "\n");
		free(c);
		cli_buf_free(&p);
	}
	/* The PodGroups themselves, by phase; no phase yet is Pending. */
	for (i = 0; i < NCOUNTS; i++) {
		n = 0;
		cJSON_ArrayForEach(pg, json_at(pgs, "items")) {
			const char *qn = json_str(pg, "spec.queue");
			const char *ph = json_str(pg, "status.phase");

			if (strcmp(qn != NULL && *qn ? qn : "default", name) !=
			    0 || strcmp(ph != NULL && *ph ? ph : "Pending",
			    phases[i]) != 0)
				continue;
			if (n++ == 0)
				printf("  %s:\n", phases[i]);
			printf("    %s/%s\n", json_str(pg, "metadata.namespace"),
			    json_str(pg, "metadata.name"));
		}
	}
	cJSON_Delete(pgs);
	cJSON_Delete(q);
	return CLI_OK;
}

/* open NAME / close NAME: the annotation the queue controller acts on. */
static int
queue_set_state(const char *name, const char *state)
{
	struct cli_buf path = { 0 }, body = { 0 };
	struct cli_http_resp r;

	cli_buf_printf(&path, "%s/%s", QUEUES, name);
	cli_buf_printf(&body, "{\"metadata\":{\"annotations\":{\"%s\":\"%s\"}}}",
	    STATE_KEY, state);
	cli_http_request("PATCH", path.p, "application/merge-patch+json",
	    body.p, NULL, &r);
	cli_buf_free(&path);
	cli_buf_free(&body);
	if (r.code != 200) {
		cli_http_report(&r);
		cli_buf_free(&r.body);
		return CLI_FAIL;
	}
	cli_buf_free(&r.body);
	printf("queue.scheduling.volcano.sh/%s %s\n", name,
	    strcmp(state, "Open") == 0 ? "opened" : "closed");
	return CLI_OK;
}

/* "cpu=8,memory=32Gi" into a resource list (vcctl's "mem" is memory);
   -1 when malformed. */
int
cli_res_list(const char *s, cJSON *into)
{
	char *copy = xstrdup(s), *save, *tok;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || eq == tok || eq[1] == '\0') {
			rc = -1;
			break;
		}
		*eq = '\0';
		cJSON_AddStringToObject(into, strcmp(tok, "mem") == 0 ?
		    "memory" : tok, eq + 1);
	}
	free(copy);
	return rc;
}

static int
queue_send(const char *method, const char *path, const char *ctype,
    const cJSON *doc, const char *done, const char *name)
{
	struct cli_http_resp r;
	char *body = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;

	cli_http_request(method, path, ctype, body, NULL, &r);
	free(body);
	if (r.code >= 300) {
		cli_http_report(&r);
		cli_buf_free(&r.body);
		return CLI_FAIL;
	}
	cli_buf_free(&r.body);
	printf("queue.scheduling.volcano.sh/%s %s\n", name, done);
	return CLI_OK;
}

static int
queue_create(const char *name)
{
	const struct cli_queue_opts *o = &cli_opts.queue;
	cJSON *d = cJSON_CreateObject(), *spec;
	int rc;

	cJSON_AddStringToObject(d, "apiVersion",
	    "scheduling.volcano.sh/v1beta1");
	cJSON_AddStringToObject(d, "kind", "Queue");
	json_set_str(json_obj(d, "metadata"), "name", name);
	spec = json_obj(d, "spec");
	cJSON_AddNumberToObject(spec, "weight", o->weight > 0 ?
	    (double)o->weight : 1);
	if (o->priority != 0)
		cJSON_AddNumberToObject(spec, "priority", (double)o->priority);
	if (o->parent != NULL)
		json_set_str(spec, "parent", o->parent);
	if (o->reclaimable != NULL) {
		if (strcmp(o->reclaimable, "true") != 0 &&
		    strcmp(o->reclaimable, "false") != 0) {
			cJSON_Delete(d);
			return usage("--reclaimable wants true or false");
		}
		cJSON_AddBoolToObject(spec, "reclaimable",
		    strcmp(o->reclaimable, "true") == 0);
	}
	if ((o->capability != NULL && cli_res_list(o->capability, json_obj(spec,
	    "capability")) != 0) || (o->deserved != NULL &&
	    cli_res_list(o->deserved, json_obj(spec, "deserved")) != 0) ||
	    (o->guarantee != NULL && cli_res_list(o->guarantee,
	    json_obj(json_obj(spec, "guarantee"), "resource")) != 0)) {
		cJSON_Delete(d);
		return usage("--capability, --deserved and --guarantee want "
		    "K=V,... such as cpu=8,memory=32Gi");
	}
	rc = queue_send("POST", QUEUES, "application/json", d, "created", name);
	cJSON_Delete(d);
	return rc;
}

static int
queue_delete(const char *name)
{
	struct cli_buf path = { 0 };
	int rc;

	cli_buf_printf(&path, "%s/%s", QUEUES, name);
	rc = queue_send("DELETE", path.p, NULL, NULL, "deleted", name);
	cli_buf_free(&path);
	return rc;
}

/* operate --action open|close|update (update: the weight). */
static int
queue_operate(const char *name)
{
	const char *a = cli_opts.queue.action;
	struct cli_buf path = { 0 };
	cJSON *d;
	int rc;

	if (a == NULL)
		return usage("queue operate needs --action open|close|update");
	if (strcmp(a, "open") == 0 || strcmp(a, "close") == 0)
		return queue_set_state(name, a[0] == 'o' ? "Open" : "Closed");
	if (strcmp(a, "update") != 0)
		return usage("--action is open, close or update");
	if (cli_opts.queue.weight <= 0)
		return usage("queue operate --action update needs --weight N "
		    "(at least 1)");
	d = cJSON_CreateObject();
	cJSON_AddNumberToObject(json_obj(d, "spec"), "weight",
	    (double)cli_opts.queue.weight);
	cli_buf_printf(&path, "%s/%s", QUEUES, name);
	rc = queue_send("PATCH", path.p, "application/merge-patch+json", d,
	    "updated", name);
	cli_buf_free(&path);
	cJSON_Delete(d);
	return rc;
}

int
cli_queue_run(int argc, char **argv)
{
	if (argc == 0)
		return usage("queue needs a subcommand");
	if (strcmp(argv[0], "list") == 0) {
		if (argc != 1)
			return usage("queue list takes no arguments");
		return queue_list();
	}
	if (strcmp(argv[0], "get") != 0 && strcmp(argv[0], "open") != 0 &&
	    strcmp(argv[0], "close") != 0 && strcmp(argv[0], "pending") != 0 &&
	    strcmp(argv[0], "create") != 0 && strcmp(argv[0], "delete") != 0 &&
	    strcmp(argv[0], "operate") != 0)
		return usage("unknown queue subcommand");
	if (argc != 2)
		return usage("a queue name, and only one, is needed");
	if (strcmp(argv[0], "create") == 0)
		return queue_create(argv[1]);
	if (strcmp(argv[0], "delete") == 0)
		return queue_delete(argv[1]);
	if (strcmp(argv[0], "operate") == 0)
		return queue_operate(argv[1]);
	if (strcmp(argv[0], "get") == 0)
		return queue_get(argv[1]);
	if (strcmp(argv[0], "pending") == 0)
		return cli_queue_pending(argv[1]);
	return queue_set_state(argv[1], strcmp(argv[0], "open") == 0 ?
	    "Open" : "Closed");
}
