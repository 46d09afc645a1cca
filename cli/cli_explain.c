/*
 * volray explain KIND/NAME: why a job waits, as the scheduler recorded
 * it over its last sessions (GET /apis/volray.io/v1/explain/..., see
 * volrayd(8)). KIND is a pod, a PodGroup, a Volcano job (its PodGroup is
 * NAME-UID), a RayJob or a RayCluster (KubeRay's PodGroup ray-NAME-pg, a
 * RayJob's for the cluster it made) or a queue; -o json|yaml prints the
 * whole record, else one screen for a person. volray queue pending NAME
 * prints a queue's waiting jobs in the order the scheduler takes them up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

#define EXPLAIN "/apis/volray.io/v1/explain"

static int
usage(const char *why)
{
	return cli_opt_usage("explain", "%s\nusage: volray explain "
	    "pod|podgroup|vcjob|rayjob|raycluster|queue/NAME [-o json|yaml]\n"
	    "       volray explain KIND NAME [-o json|yaml]",
	    why);
}

static const char *
ns(void)
{
	return cli_opts.ns != NULL ? cli_opts.ns : cli_http_namespace();
}

/* "cpu 8, memory 16Gi" of a ResourceList; "-" when empty. */
static char *
res_str(const cJSON *r)
{
	struct cli_buf b = { 0 };
	const cJSON *it;

	cJSON_ArrayForEach(it, r)
		cli_buf_printf(&b, "%s%s %s", b.p != NULL ? ", " : "",
		    it->string, cJSON_IsString(it) ? it->valuestring : "?");
	return b.p != NULL ? b.p : xstrdup("-");
}

static void
print_res(const char *label, const cJSON *o, const char *k)
{
	char *s;

	if (json_at(o, k) == NULL)
		return;
	s = res_str(json_at(o, k));
	printf("  %-11s %s\n", label, s);
	free(s);
}

static const char *
s_or(const cJSON *o, const char *k, const char *dflt)
{
	const char *s = json_str(o, k);

	return s != NULL ? s : dflt;
}

static double
n_of(const cJSON *o, const char *k)
{
	const cJSON *n = json_at(o, k);

	return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

static void
print_session(const cJSON *doc)
{
	printf("Session:   #%.0f at %s, %.0f nodes, %.0f jobs (%s)\n",
	    n_of(doc, "session.number"), s_or(doc, "session.time", "?"),
	    n_of(doc, "session.nodes"), n_of(doc, "session.jobs"),
	    s_or(doc, "session.policy", "built-in policy"));
}

static void
print_queue_state(const cJSON *q)
{
	const cJSON *it;

	printf("Queue %s (%s, weight %.0f, priority %.0f%s%s):\n",
	    s_or(q, "name", "?"), s_or(q, "state", "?"), n_of(q, "weight"),
	    n_of(q, "priority"), json_str(q, "overusedBy") ? ", overused by " :
	    "", s_or(q, "overusedBy", ""));
	print_res("allocated", q, "allocated");
	print_res("request", q, "request");
	print_res("inqueue", q, "inqueue");
	print_res("capability", q, "capability");
	print_res("guarantee", q, "guarantee");
	/* The plugins' figures (deserved, ...). */
	cJSON_ArrayForEach(it, q) {
		static const char *const known[] = { "name", "state", "weight",
		    "priority", "overusedBy", "allocated", "request", "inqueue",
		    "capability", "guarantee", "pending", "session", "kind",
		    "apiVersion" };
		size_t i;

		for (i = 0; i < sizeof known / sizeof *known; i++)
			if (strcmp(it->string, known[i]) == 0)
				break;
		if (i == sizeof known / sizeof *known)
			print_res(it->string, q, it->string);
	}
}

/* A preemption step's victims, at most VICTIMS_SHOWN of them (JSON has
   them all). */
#define VICTIMS_SHOWN	12
static void
print_victims(const cJSON *step)
{
	const cJSON *v;
	int n = 0, total = cJSON_GetArraySize(json_at(step, "victims"));

	if (total == 0)
		return;
	printf("\nVictims considered (%s):\n", s_or(step, "action", "?"));
	cJSON_ArrayForEach(v, json_at(step, "victims")) {
		if (n++ == VICTIMS_SHOWN)
			break;
		printf("  %-15s %s on %s: %s", s_or(v, "verdict", "?"),
		    s_or(v, "pod", "?"), s_or(v, "node", "?"),
		    s_or(v, "message", ""));
		if (json_str(v, "plugin") != NULL)
			printf(" (plugin %s)", json_str(v, "plugin"));
		printf("\n");
	}
	total += (int)n_of(step, "victimsNotListed");
	if (total > VICTIMS_SHOWN)
		printf("  ... %d more (-o json lists the first %d)\n",
		    total - VICTIMS_SHOWN, cJSON_GetArraySize(json_at(step,
		    "victims")));
}

static void
print_job(const cJSON *doc)
{
	const cJSON *it;

	printf("Job:       %s (%s, queue %s, %s, minMember %.0f)\n",
	    s_or(doc, "job", "?"), json_str(doc, "podGroup") ? "a PodGroup" :
	    "the implicit group of a pod", s_or(doc, "queue", "?"),
	    s_or(doc, "phase", "?"), n_of(doc, "minMember"));
	printf("Pods:      %.0f pending, %.0f pipelined, %.0f allocated, "
	    "%.0f running, of %.0f\n", n_of(doc, "tasks.pending"),
	    n_of(doc, "tasks.pipelined"), n_of(doc, "tasks.allocated"),
	    n_of(doc, "tasks.running"), n_of(doc, "tasks.total"));
	printf("Reason:    %s: %s\n", s_or(doc, "reason", "?"),
	    s_or(doc, "message", ""));
	print_session(doc);
	printf("\nSteps:\n");
	cJSON_ArrayForEach(it, json_at(doc, "steps")) {
		printf("  %-15s %s", s_or(it, "action", "?"),
		    s_or(it, "result", "?"));
		if (json_at(it, "turn") != NULL)
			printf(", its queue's job #%.0f", n_of(it, "turn"));
		if (json_at(it, "position") != NULL)
			printf(", #%.0f in line", n_of(it, "position"));
		if (json_at(it, "candidates") != NULL)
			printf(", %.0f candidate victims (%.0f not preemptable)"
			    ", %.0f allowed by the plugins",
			    n_of(it, "candidates"), n_of(it, "notPreemptable"),
			    n_of(it, "allowed"));
		if (json_str(it, "reason") != NULL)
			printf(": %s", json_str(it, "reason"));
		if (json_str(it, "plugin") != NULL)
			printf(" (plugin %s)", json_str(it, "plugin"));
		if (json_str(it, "message") != NULL)
			printf(": %s", json_str(it, "message"));
		printf("\n");
	}
	cJSON_ArrayForEach(it, json_at(doc, "steps"))
		print_victims(it);
	if (cJSON_GetArraySize(json_at(doc, "pods")) > 0) {
		printf("\nPending pods:\n");
		cJSON_ArrayForEach(it, json_at(doc, "pods"))
			printf("  %.0f (like %s): %s\n", n_of(it, "count"),
			    s_or(it, "example", "?"), s_or(it, "message", ""));
	}
	if (cJSON_GetArraySize(json_at(doc, "evicted")) > 0) {
		printf("\nEvicted:\n");
		cJSON_ArrayForEach(it, json_at(doc, "evicted"))
			printf("  %s: %s\n", s_or(it, "pod", "?"),
			    s_or(it, "reason", ""));
	}
	if (json_at(doc, "queueState") != NULL) {
		printf("\n");
		print_queue_state(json_at(doc, "queueState"));
	}
	if (json_at(doc, "cluster") != NULL) {
		char *a = res_str(json_at(doc, "cluster.allocatable"));
		char *i = res_str(json_at(doc, "cluster.idle"));

		printf("\nCluster:   %.0f nodes; allocatable %s; idle %s\n",
		    n_of(doc, "cluster.nodes"), a, i);
		free(a);
		free(i);
	}
	if (cJSON_GetArraySize(json_at(doc, "notes")) > 0) {
		printf("\nNotes:\n");
		cJSON_ArrayForEach(it, json_at(doc, "notes"))
			printf("  %s\n", cJSON_IsString(it) ? it->valuestring :
			    "?");
	}
}

static char *
num(double x)
{
	struct cli_buf b = { 0 };

	cli_buf_printf(&b, "%.0f", x);
	return b.p;
}

static void
print_queue(const cJSON *doc)
{
	static const char *const head[] = { "POSITION", "JOB", "PHASE",
	    "PRIORITY", "PENDING", "REQUEST", "REASON" };
	struct cli_table t = { 0 };
	const cJSON *it;
	char *cells[7];
	int i;

	print_queue_state(doc);
	print_session(doc);
	printf("\n");
	t.ncol = 7;
	for (i = 0; i < 7; i++)
		cells[i] = xstrdup(head[i]);
	cli_table_add(&t, cells);
	cJSON_ArrayForEach(it, json_at(doc, "pending")) {
		cells[0] = num(n_of(it, "position"));
		cells[1] = xstrdup(s_or(it, "job", "?"));
		cells[2] = xstrdup(s_or(it, "phase", "?"));
		cells[3] = num(n_of(it, "priority"));
		cells[4] = num(n_of(it, "pending"));
		cells[5] = res_str(json_at(it, json_at(it, "minResources") ?
		    "minResources" : "request"));
		cells[6] = xstrdup(s_or(it, "reason", ""));
		cli_table_add(&t, cells);
	}
	cli_table_flush(&t);
}

/* GET an object; NULL (reported) when it cannot be read. */
static cJSON *
get_obj(const char *group_version, const char *res, const char *name)
{
	struct cli_buf p = { 0 };
	cJSON *o;

	cli_buf_printf(&p, "%s/namespaces/%s/%s/%s", group_version, ns(), res,
	    name);
	o = cli_http_get_json(p.p, NULL);
	cli_buf_free(&p);
	return o;
}

/* The explain path of KIND/NAME; NULL (reported) when it has none. */
static char *
path_of(const char *kind, const char *name)
{
	struct cli_buf p = { 0 }, pg = { 0 };
	cJSON *o = NULL, *owner;

	if (strcmp(kind, "queue") == 0 || strcmp(kind, "queues") == 0 ||
	    strcmp(kind, "q") == 0) {
		cli_buf_printf(&p, EXPLAIN "/queues/%s", name);
		return p.p;
	}
	if (strcmp(kind, "pod") == 0 || strcmp(kind, "pods") == 0 ||
	    strcmp(kind, "po") == 0) {
		cli_buf_printf(&p, EXPLAIN "/namespaces/%s/pods/%s", ns(), name);
		return p.p;
	}
	if (strcmp(kind, "podgroup") == 0 || strcmp(kind, "podgroups") == 0 ||
	    strcmp(kind, "pg") == 0)
		cli_buf_printf(&pg, "%s", name);
	else if (strcmp(kind, "vcjob") == 0 || strcmp(kind, "vcjobs") == 0 ||
	    strcmp(kind, "job.batch.volcano.sh") == 0 ||
	    strcmp(kind, "jobs.batch.volcano.sh") == 0) {
		if ((o = get_obj("/apis/batch.volcano.sh/v1alpha1", "jobs",
		    name)) == NULL)
			return NULL;
		cli_buf_printf(&pg, "%s-%s", name, s_or(o, "metadata.uid",
		    ""));
	} else if (strcmp(kind, "rayjob") == 0 || strcmp(kind, "rayjobs") ==
	    0) {
		cli_buf_printf(&pg, "ray-%s-pg", name);
	} else if (strcmp(kind, "raycluster") == 0 ||
	    strcmp(kind, "rayclusters") == 0) {
		/* A RayJob's cluster joins the RayJob's PodGroup. */
		if ((o = get_obj("/apis/ray.io/v1", "rayclusters", name)) ==
		    NULL)
			return NULL;
		cJSON_ArrayForEach(owner, json_at(o, "metadata.ownerReferences"))
			if (strcmp(s_or(owner, "kind", ""), "RayJob") == 0)
				name = s_or(owner, "name", name);
		cli_buf_printf(&pg, "ray-%s-pg", name);
	} else {
		cJSON_Delete(o);
		usage("explain knows pod, podgroup, vcjob, rayjob, raycluster "
		    "and queue");
		return NULL;
	}
	cli_buf_printf(&p, EXPLAIN "/namespaces/%s/podgroups/%s", ns(), pg.p);
	cli_buf_free(&pg);
	cJSON_Delete(o);
	return p.p;
}

static int
explain_print(const char *path, int queue)
{
	const char *out = cli_opts.output;
	cJSON *doc;
	int rc = CLI_OK;

	if ((doc = cli_http_get_json(path, NULL)) == NULL)
		return CLI_FAIL;
	if (out != NULL)
		rc = cli_print_objects(doc, out, NULL, 0) == 0 ? CLI_OK :
		    CLI_FAIL;
	else if (queue)
		print_queue(doc);
	else
		print_job(doc);
	cJSON_Delete(doc);
	return rc;
}

int
cli_explain_run(int argc, char **argv)
{
	const char *out = cli_opts.output;
	const char *name;
	char *kind, *slash, *path;
	int rc;

	/* KIND/NAME, or KIND NAME as kubectl takes it. */
	if (argc == 2 && strchr(argv[0], '/') == NULL && argv[1][0] != '\0' &&
	    strchr(argv[1], '/') == NULL) {
		kind = xstrdup(argv[0]);
		name = argv[1];
	} else if (argc == 1 && (slash = strchr(argv[0], '/')) != NULL &&
	    slash[1] != '\0' && strchr(slash + 1, '/') == NULL) {
		kind = xstrndup(argv[0], (size_t)(slash - argv[0]));
		name = slash + 1;
	} else
		return usage("explain wants one KIND/NAME or KIND NAME");
	if (out != NULL && strcmp(out, "json") != 0 && strcmp(out, "yaml") !=
	    0) {
		free(kind);
		return usage("-o must be json or yaml");
	}
	if ((path = path_of(kind, name)) == NULL) {
		free(kind);
		return CLI_FAIL;
	}
	rc = explain_print(path, strstr(path, EXPLAIN "/queues/") == path);
	free(path);
	free(kind);
	return rc;
}

int
cli_queue_pending(const char *name)
{
	struct cli_buf p = { 0 };
	int rc;

	cli_buf_printf(&p, EXPLAIN "/queues/%s", name);
	rc = explain_print(p.p, 1);
	cli_buf_free(&p);
	return rc;
}
