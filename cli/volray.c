/*
 * volray: the command-line client, volray(1). main parses the options
 * (anywhere on the line, as kubectl does), opens the connection described by
 * the kubeconfig and runs one verb: get, apply, create, delete, logs, wait,
 * policy reload, version or api-resources. The verbs speak the same HTTP API
 * as kubectl through cli_http.c, which also turns command-line words into
 * resources by discovery, and print through cli_print.c: the default output
 * asks the server for a meta.k8s.io Table, -o json, yaml, name and jsonpath
 * print the objects. apply is server-side apply under the field manager
 * "volray". wait reads the object, then follows a watch on that one name and
 * reads it again whenever the watch ends or expires (410).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_http.h"
#include "cli_node.h"
#include "cli_print.h"
#include "lib/json.h"
#include "lib/yamljson.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define TABLE_ACCEPT	"application/json;as=Table;v=v1;g=meta.k8s.io"
#define APPLY_CTYPE	"application/apply-patch+yaml"
#define RELOAD_PATH	"/apis/volray.io/v1/policy/reload"
#define DELETE_BODY	"{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"," \
			"\"propagationPolicy\":\"Background\"}"

/* Command-line options; every verb reads the ones it uses. */
struct opts {
	const char	*ns, *selector, *fselector;
	const char	*output, *container, *forcond;
	const char	**files;
	int		 nfiles, all_ns, ignore_nf, managed;
	long		 tail, timeout_ms;
	struct cli_http_conf conn;	/* --kubeconfig, --server, --token, ... */
	struct cli_node_opts node;	/* node add: --virtual, --count, ... */
};

static struct opts o = { .tail = -1, .timeout_ms = 30000 };

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: volray [--kubeconfig FILE] [-s URL] [--token T] "
	    "[--certificate-authority FILE]\n"
	    "              [--insecure-skip-tls-verify] [-n NS] COMMAND ...\n"
	    "  get RESOURCE [NAME] [-A] [-l SEL] [--field-selector SEL]"
	    " [-o json|yaml|name|wide|jsonpath=T]\n"
	    "  apply -f FILE        create -f FILE\n"
	    "  delete RESOURCE NAME... | RESOURCE -l SEL | -f FILE"
	    " [--ignore-not-found]\n"
	    "  logs POD [-c CONTAINER] [--tail N]\n"
	    "  wait RESOURCE/NAME --for=condition=COND[=VALUE]|delete"
	    " [--timeout DURATION]\n"
	    "  policy reload        version        api-resources [-o name|wide]\n"
	    "  node add --virtual --count N --cpu C --memory M [--pods P]"
	    " [--labels k=v,...]\n"
	    "       [--taints k=v:Effect,...] [--name-prefix P]\n");
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Parse "30s", "500ms", "2m", "1h30m" or a plain number of seconds. */
static long
parse_duration(const char *s)
{
	long total = 0, n;
	char *end;

	if (*s == '\0')
		return -1;
	n = strtol(s, &end, 10);
	if (*end == '\0')
		return n < 0 ? -1 : n * 1000;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		n = strtol(s, &end, 10);
		if (strncmp(end, "ms", 2) == 0) {
			total += n;
			end += 2;
		} else if (*end == 's')
			total += n * 1000, end++;
		else if (*end == 'm')
			total += n * 60000, end++;
		else if (*end == 'h')
			total += n * 3600000, end++;
		else
			return -1;
		s = end;
	}
	return total;
}

/* Put key: value in front of an object's members. */
static void
jprepend(cJSON *obj, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);

	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	v->string = cli_buf_strdup(key);
	cJSON_InsertItemInArray(obj, 0, v);
}

/* The namespace a namespaced resource is used in: -n, else the context's. */
static const char *
namespace_of(const struct cli_http_res *r)
{
	if (!r->namespaced)
		return NULL;
	return o.ns != NULL ? o.ns : cli_http_namespace();
}

/* Split "TYPE/NAME" or take TYPE NAME... from the arguments. */
static const struct cli_http_res *
target(int argc, char **argv, const char **name, int *rest)
{
	const struct cli_http_res *r;
	char *slash, *type;

	*name = NULL;
	*rest = 1;
	if (argc < 1) {
		fprintf(stderr, "error: you must specify the type of resource\n");
		return NULL;
	}
	type = cli_buf_strdup(argv[0]);
	if ((slash = strchr(type, '/')) != NULL) {
		*slash = '\0';
		*name = argv[0] + (slash - type) + 1;
	} else if (argc > 1) {
		*name = argv[1];
		*rest = 2;
	}
	r = cli_http_resolve(type);
	free(type);
	return r;
}

/* Give list items the apiVersion and kind the server may leave out. */
static cJSON *
as_list(cJSON *list, const struct cli_http_res *r)
{
	cJSON *out = cJSON_CreateObject(), *items, *el, *md;
	struct cli_buf av = { 0 };

	cli_buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "",
	    r->version);
	items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	if (items == NULL)
		items = cJSON_CreateArray();
	cJSON_ArrayForEach(el, items) {
		if (json_str(el, "kind") == NULL)
			jprepend(el, "kind", r->kind);
		if (json_str(el, "apiVersion") == NULL)
			jprepend(el, "apiVersion", av.p);
	}
	cJSON_AddStringToObject(out, "apiVersion", "v1");
	cJSON_AddItemToObject(out, "items", items);
	cJSON_AddStringToObject(out, "kind", "List");
	md = cJSON_AddObjectToObject(out, "metadata");
	cJSON_AddStringToObject(md, "resourceVersion", "");
	cJSON_Delete(list);
	cli_buf_free(&av);
	return out;
}

/* get: one object or a list, as a table or in the -o format. */
static int
cmd_get(int argc, char **argv)
{
	const struct cli_http_res *r;
	const char *name, *ns;
	struct cli_buf path = { 0 };
	int rest, rc = 0, table;
	char *type;
	cJSON *doc;

	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	if (rest < argc) {
		fprintf(stderr, "error: get takes one name\n");
		return 1;
	}
	ns = o.all_ns && name == NULL ? NULL : namespace_of(r);
	cli_http_res_path(&path, r, ns, name, NULL);
	if (name == NULL) {
		cli_http_query_add(&path, "labelSelector", o.selector);
		cli_http_query_add(&path, "fieldSelector", o.fselector);
	}
	table = o.output == NULL || strcmp(o.output, "wide") == 0;
	if (name != NULL)
		doc = cli_http_get_json(path.p, table ? TABLE_ACCEPT : NULL);
	else
		doc = cli_http_list(path.p, table ? TABLE_ACCEPT : NULL);
	cli_buf_free(&path);
	if (doc == NULL)
		return 1;
	if (table && (json_str(doc, "kind") == NULL ||
	    strcmp(json_str(doc, "kind"), "Table") != 0))
		doc = cli_print_name_table(doc);
	if (table && cJSON_GetArraySize(json_at(doc, "rows")) == 0) {
		if (r->namespaced && ns != NULL)
			fprintf(stderr, "No resources found in %s namespace.\n",
			    ns);
		else
			fprintf(stderr, "No resources found\n");
	} else if (table)
		cli_print_table(doc, r->namespaced && ns == NULL,
		    o.output != NULL && strcmp(o.output, "wide") == 0);
	else {
		if (name == NULL)
			doc = as_list(doc, r);
		type = cli_http_res_type(r);
		rc = cli_print_objects(doc, o.output, type, o.managed) != 0;
		free(type);
	}
	cJSON_Delete(doc);
	return rc;
}

/* Load the documents of every -f file, with List items spread out. */
static cJSON *
load_files(void)
{
	cJSON *all = cJSON_CreateArray(), *docs, *doc, *items, *el;
	struct cli_buf in = { 0 };
	char *cause = NULL, chunk[65536];
	size_t n;
	int i;

	if (o.nfiles == 0) {
		fprintf(stderr, "error: must specify -f FILE\n");
		goto fail;
	}
	for (i = 0; i < o.nfiles; i++) {
		if (strcmp(o.files[i], "-") == 0) {
			in.len = 0;
			cli_buf_add(&in, "", 0);
			while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
				cli_buf_add(&in, chunk, n);
			docs = yamljson_parse_all(in.p, in.len, &cause);
		} else
			docs = yamljson_load_file(o.files[i], &cause);
		if (docs == NULL) {
			fprintf(stderr, "error: %s: %s\n", o.files[i], cause);
			free(cause);
			goto fail;
		}
		while ((doc = cJSON_DetachItemFromArray(docs, 0)) != NULL) {
			if (cJSON_IsNull(doc)) {
				cJSON_Delete(doc);
				continue;
			}
			if (!cJSON_IsObject(doc) ||
			    json_str(doc, "kind") == NULL ||
			    json_str(doc, "apiVersion") == NULL) {
				fprintf(stderr, "error: %s: every document "
				    "needs apiVersion and kind\n", o.files[i]);
				cJSON_Delete(doc);
				cJSON_Delete(docs);
				goto fail;
			}
			if (strcmp(json_str(doc, "kind"), "List") == 0) {
				items = cJSON_GetObjectItemCaseSensitive(doc,
				    "items");
				while ((el = cJSON_DetachItemFromArray(items,
				    0)) != NULL)
					cJSON_AddItemToArray(all, el);
				cJSON_Delete(doc);
			} else
				cJSON_AddItemToArray(all, doc);
		}
		cJSON_Delete(docs);
	}
	cli_buf_free(&in);
	return all;

fail:
	cli_buf_free(&in);
	cJSON_Delete(all);
	return NULL;
}

/* The resource, namespace and name a document is about. */
static const struct cli_http_res *
doc_target(cJSON *doc, const char **ns, const char **name)
{
	const struct cli_http_res *r;
	cJSON *md;
	const char *dns;

	r = cli_http_resolve_kind(json_str(doc, "apiVersion"),
	    json_str(doc, "kind"));
	if (r == NULL)
		return NULL;
	if ((md = cJSON_GetObjectItemCaseSensitive(doc, "metadata")) == NULL)
		md = cJSON_AddObjectToObject(doc, "metadata");
	*name = json_str(md, "name");
	*ns = NULL;
	if (!r->namespaced)
		return r;
	dns = json_str(md, "namespace");
	if (dns != NULL && o.ns != NULL && strcmp(dns, o.ns) != 0) {
		fprintf(stderr, "error: the namespace from the provided object "
		    "\"%s\" does not match the namespace \"%s\"\n", dns, o.ns);
		return NULL;
	}
	if (dns == NULL) {
		cJSON_AddStringToObject(md, "namespace", namespace_of(r));
		dns = json_str(md, "namespace");
	}
	*ns = dns;
	return r;
}

/* create: POST one document to its collection. */
static int
create_one(cJSON *doc)
{
	const struct cli_http_res *r;
	const char *ns, *name;
	struct cli_buf path = { 0 };
	struct cli_http_resp rsp;
	char *body, *type;
	cJSON *made;

	if ((r = doc_target(doc, &ns, &name)) == NULL)
		return 1;
	cli_http_res_path(&path, r, ns, NULL, NULL);
	body = cJSON_PrintUnformatted(doc);
	cli_http_request("POST", path.p, "application/json", body, NULL, &rsp);
	free(body);
	cli_buf_free(&path);
	if (rsp.code != 201 && rsp.code != 200) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return 1;
	}
	made = cJSON_Parse(rsp.body.p);
	if ((name = json_str(made, "metadata.name")) == NULL)
		name = "?";
	type = cli_http_res_type(r);
	printf("%s/%s created\n", type, name);
	free(type);
	cJSON_Delete(made);
	cli_buf_free(&rsp.body);
	return 0;
}

static char *
resource_version(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	const char *rv = json_str(j, "metadata.resourceVersion");
	char *s = rv != NULL ? cli_buf_strdup(rv) : NULL;

	cJSON_Delete(j);
	return s;
}

/* apply: server-side apply of one document, said as kubectl says it. */
static int
apply_one(cJSON *doc)
{
	const struct cli_http_res *r;
	const char *ns, *name, *how;
	struct cli_buf path = { 0 };
	char *body, *type, *before = NULL, *after;
	struct cli_http_resp rsp;

	if ((r = doc_target(doc, &ns, &name)) == NULL)
		return 1;
	if (name == NULL || *name == '\0') {
		fprintf(stderr, "error: a %s to apply needs metadata.name\n",
		    r->kind);
		return 1;
	}
	cli_http_res_path(&path, r, ns, name, NULL);
	cli_http_request("GET", path.p, NULL, NULL, NULL, &rsp);
	if (rsp.code == 200)
		before = resource_version(rsp.body.p);
	else if (rsp.code != 404) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		cli_buf_free(&path);
		return 1;
	}
	cli_buf_free(&rsp.body);
	cli_http_query_add(&path, "fieldManager", "volray");
	cli_http_query_add(&path, "force", "true");
	body = cJSON_PrintUnformatted(doc);
	cli_http_request("PATCH", path.p, APPLY_CTYPE, body, NULL, &rsp);
	free(body);
	cli_buf_free(&path);
	if (rsp.code != 200 && rsp.code != 201) {
		cli_http_report(&rsp);
		free(before);
		cli_buf_free(&rsp.body);
		return 1;
	}
	after = resource_version(rsp.body.p);
	if (rsp.code == 201 || before == NULL)
		how = "created";
	else if (after != NULL && strcmp(before, after) == 0)
		how = "unchanged";
	else
		how = "configured";
	type = cli_http_res_type(r);
	printf("%s/%s %s\n", type, name, how);
	free(type);
	free(before);
	free(after);
	cli_buf_free(&rsp.body);
	return 0;
}

/* apply -f and create -f: every document, going on after a failure. */
static int
cmd_apply(int create)
{
	cJSON *docs, *doc;
	int rc = 0;

	if ((docs = load_files()) == NULL)
		return 1;
	cJSON_ArrayForEach(doc, docs)
		rc |= create ? create_one(doc) : apply_one(doc);
	cJSON_Delete(docs);
	return rc;
}

/* DELETE one object with background propagation, said as kubectl says it. */
static int
delete_one(const struct cli_http_res *r, const char *ns, const char *name)
{
	struct cli_buf path = { 0 };
	struct cli_http_resp rsp;
	char *type;

	cli_http_res_path(&path, r, ns, name, NULL);
	cli_http_request("DELETE", path.p, "application/json", DELETE_BODY,
	    NULL, &rsp);
	cli_buf_free(&path);
	if (rsp.code == 404 && o.ignore_nf) {
		cli_buf_free(&rsp.body);
		return 0;
	}
	if (rsp.code != 200 && rsp.code != 202) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return 1;
	}
	type = cli_http_res_type(r);
	printf("%s \"%s\" deleted\n", type, name);
	free(type);
	cli_buf_free(&rsp.body);
	return 0;
}

/* delete: named objects, those a selector matches, or a file's documents. */
static int
cmd_delete(int argc, char **argv)
{
	const struct cli_http_res *r;
	const char *name, *ns;
	struct cli_buf path = { 0 };
	cJSON *docs, *doc;
	const cJSON *el;
	int rest, rc = 0, i;

	if (o.nfiles > 0) {
		if ((docs = load_files()) == NULL)
			return 1;
		cJSON_ArrayForEach(doc, docs) {
			if ((r = doc_target(doc, &ns, &name)) == NULL ||
			    name == NULL)
				rc = 1;
			else
				rc |= delete_one(r, ns, name);
		}
		cJSON_Delete(docs);
		return rc;
	}
	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	ns = namespace_of(r);
	if (name != NULL) {
		rc = delete_one(r, ns, name);
		for (i = rest; i < argc; i++)
			rc |= delete_one(r, ns, argv[i]);
		return rc;
	}
	if (o.selector == NULL && o.fselector == NULL) {
		fprintf(stderr, "error: resource(s) were provided, but no name "
		    "was specified\n");
		return 1;
	}
	cli_http_res_path(&path, r, ns, NULL, NULL);
	cli_http_query_add(&path, "labelSelector", o.selector);
	cli_http_query_add(&path, "fieldSelector", o.fselector);
	docs = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	if (docs == NULL)
		return 1;
	cJSON_ArrayForEach(el, json_at(docs, "items"))
		rc |= delete_one(r, ns, json_str(el, "metadata.name"));
	if (cJSON_GetArraySize(json_at(docs, "items")) == 0)
		fprintf(stderr, "No resources found\n");
	cJSON_Delete(docs);
	return rc;
}

/* logs: a container's log as the server keeps it. */
static int
cmd_logs(int argc, char **argv)
{
	const struct cli_http_res *r;
	struct cli_buf path = { 0 };
	const char *name = argv[0], *slash;
	struct cli_http_resp rsp;
	char tail[32];

	if (argc != 1) {
		fprintf(stderr, "error: logs takes one pod name\n");
		return 1;
	}
	if ((slash = strchr(name, '/')) != NULL) {
		if (strncmp(name, "pod/", 4) != 0 &&
		    strncmp(name, "pods/", 5) != 0 &&
		    strncmp(name, "po/", 3) != 0) {
			fprintf(stderr, "error: logs reads pods only\n");
			return 1;
		}
		name = slash + 1;
	}
	if ((r = cli_http_resolve("pods")) == NULL)
		return 1;
	cli_http_res_path(&path, r, namespace_of(r), name, "log");
	cli_http_query_add(&path, "container", o.container);
	if (o.tail >= 0) {
		snprintf(tail, sizeof tail, "%ld", o.tail);
		cli_http_query_add(&path, "tailLines", tail);
	}
	cli_http_request("GET", path.p, NULL, NULL, "*/*", &rsp);
	cli_buf_free(&path);
	if (rsp.code != 200) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return 1;
	}
	fwrite(rsp.body.p, 1, rsp.body.len, stdout);
	cli_buf_free(&rsp.body);
	return 0;
}

/* What wait waits for. */
struct waitfor {
	int		 deletion;	/* --for=delete */
	char		*cond, *value;	/* --for=condition=COND[=VALUE] */
	int		 met, gone, expired;
	char		*rv;
	long		 code;
};

/* Does status.conditions have the awaited type with the awaited status? */
static int
condition_met(const struct waitfor *w, const cJSON *obj)
{
	const cJSON *c;
	const char *status;

	cJSON_ArrayForEach(c, json_at(obj, "status.conditions")) {
		if (json_str(c, "type") == NULL ||
		    strcasecmp(json_str(c, "type"), w->cond) != 0)
			continue;
		status = json_str(c, "status");
		return status != NULL && strcasecmp(status, w->value) == 0;
	}
	return 0;
}

/* Look at one watch event; nonzero ends the watch. */
static int
wait_event(const cJSON *ev, void *arg)
{
	struct waitfor *w = arg;
	const char *type = json_str(ev, "type");
	const cJSON *obj = json_at(ev, "object");
	const char *rv = json_str(obj, "metadata.resourceVersion");

	if (type == NULL)
		return 0;
	if (strcmp(type, "ERROR") == 0) {
		w->expired = 1;
		return 1;
	}
	if (rv != NULL) {
		free(w->rv);
		w->rv = cli_buf_strdup(rv);
	}
	if (strcmp(type, "DELETED") == 0) {
		w->gone = 1;
		return 1;
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	if (!w->deletion && condition_met(w, obj))
		w->met = 1;
	return w->met;
}

/* Follow a watch from w->rv until the wait is settled or the stream ends. */
static int
wait_watch(const char *path, struct waitfor *w, long left_ms)
{
	if (cli_http_watch(path, w->rv, left_ms, wait_event, w, &w->code) != 0)
		return -1;
	if (w->code == 410)
		w->expired = 1;
	return 0;
}

/* Read --for=condition=TYPE[=VALUE] or --for=delete. */
static int
parse_for(struct waitfor *w)
{
	char *eq;

	if (o.forcond == NULL) {
		fprintf(stderr, "error: wait needs --for=condition=COND or "
		    "--for=delete\n");
		return -1;
	}
	if (strcmp(o.forcond, "delete") == 0) {
		w->deletion = 1;
		return 0;
	}
	if (strncmp(o.forcond, "condition=", 10) != 0 ||
	    o.forcond[10] == '\0') {
		fprintf(stderr, "error: unknown --for %s: want condition=COND"
		    "[=VALUE] or delete\n", o.forcond);
		return -1;
	}
	w->cond = cli_buf_strdup(o.forcond + 10);
	if ((eq = strchr(w->cond, '=')) != NULL) {
		*eq = '\0';
		w->value = cli_buf_strdup(eq + 1);
	} else
		w->value = cli_buf_strdup("True");
	return 0;
}

/* wait: read the object, then watch it until the condition holds. */
static int
cmd_wait(int argc, char **argv)
{
	struct waitfor w = { 0 };
	const struct cli_http_res *r;
	struct cli_buf path = { 0 }, list = { 0 }, sel = { 0 };
	const char *name, *rv;
	long deadline, left, started;
	struct cli_http_resp rsp;
	int rest, rc = 1;
	cJSON *obj;

	if (parse_for(&w) != 0)
		return 1;
	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	if (name == NULL || rest < argc) {
		fprintf(stderr, "error: wait takes one RESOURCE/NAME\n");
		return 1;
	}
	cli_http_res_path(&path, r, namespace_of(r), name, NULL);
	cli_http_res_path(&list, r, namespace_of(r), NULL, NULL);
	cli_buf_printf(&sel, "metadata.name=%s", name);
	cli_http_query_add(&list, "fieldSelector", sel.p);
	deadline = now_ms() + o.timeout_ms;
	for (;;) {
		cli_http_request("GET", path.p, NULL, NULL, NULL, &rsp);
		if (rsp.code == 404 && w.deletion) {
			w.met = 1;
			break;
		}
		if (rsp.code != 200) {
			cli_http_report(&rsp);
			cli_buf_free(&rsp.body);
			goto out;
		}
		obj = cJSON_Parse(rsp.body.p);
		cli_buf_free(&rsp.body);
		w.met = !w.deletion && condition_met(&w, obj);
		free(w.rv);
		rv = json_str(obj, "metadata.resourceVersion");
		w.rv = cli_buf_strdup(rv != NULL ? rv : "0");
		cJSON_Delete(obj);
		while (!w.met && !w.gone && !w.expired &&
		    (left = deadline - now_ms()) > 0) {
			started = now_ms();
			if (wait_watch(list.p, &w, left) != 0)
				goto out;
			/* A server that ends watches at once is not spun on. */
			if (now_ms() - started < 100)
				usleep(100000);
		}
		if (w.met || (w.gone && w.deletion)) {
			w.met = 1;
			break;
		}
		if (w.gone && !w.deletion) {
			fprintf(stderr, "error: %s/%s was deleted\n", r->name,
			    name);
			goto out;
		}
		if (deadline - now_ms() <= 0) {
			fprintf(stderr, "error: timed out waiting for the "
			    "condition on %s/%s\n", r->name, name);
			goto out;
		}
		w.expired = 0;
	}
	rc = 0;
	{
		char *type = cli_http_res_type(r);

		printf("%s/%s %s\n", type, name, w.deletion ? "deleted" :
		    "condition met");
		free(type);
	}
out:
	cli_buf_free(&path);
	cli_buf_free(&list);
	cli_buf_free(&sel);
	free(w.cond);
	free(w.value);
	free(w.rv);
	return rc;
}

/* policy reload: ask the daemon to reload Lua policies and scheduler.yaml. */
static int
cmd_policy(int argc, char **argv)
{
	struct cli_http_resp rsp;
	cJSON *st;
	const char *msg;

	if (argc != 1 || strcmp(argv[0], "reload") != 0) {
		fprintf(stderr, "error: usage: volray policy reload\n");
		return 1;
	}
	cli_http_request("POST", RELOAD_PATH, "application/json", "{}", NULL,
	    &rsp);
	if (rsp.code < 200 || rsp.code > 299) {
		cli_http_report(&rsp);
		if (rsp.code == 404 || rsp.code == 405)
			fprintf(stderr, "volray: this server has no policy "
			    "reload endpoint; send volrayd SIGHUP instead\n");
		cli_buf_free(&rsp.body);
		return 1;
	}
	st = cJSON_Parse(rsp.body.p);
	msg = json_str(st, "message");
	printf("%s\n", msg != NULL && *msg != '\0' ? msg : "policies reloaded");
	cJSON_Delete(st);
	cli_buf_free(&rsp.body);
	return 0;
}

/* version: this client's and the server's. */
static int
cmd_version(void)
{
	const char *gv;
	cJSON *v;

	printf("Client Version: v%s\n", PACKAGE_VERSION);
	if ((v = cli_http_get_json("/version", NULL)) == NULL)
		return 1;
	gv = json_str(v, "gitVersion");
	printf("Server Version: %s\n", gv != NULL ? gv : "unknown");
	cJSON_Delete(v);
	return 0;
}

static int
res_cmp(const void *a, const void *b)
{
	const struct cli_http_res *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c != 0 ? c : strcmp(x->name, y->name);
}

static char *
join(const cJSON *list)
{
	struct cli_buf b = { 0 };
	const cJSON *el;

	cli_buf_add(&b, "", 0);
	cJSON_ArrayForEach(el, list)
		if (cJSON_IsString(el))
			cli_buf_printf(&b, "%s%s", b.len ? "," : "",
			    el->valuestring);
	return b.p;
}

/* Add a row of seven cells, dropping VERBS and CATEGORIES unless wide. */
static void
api_row(struct cli_print_cols *t, char **cells)
{
	int i;

	for (i = t->ncol; i < 7; i++)
		free(cells[i]);
	cli_print_cols_add(t, cells);
}

/* api-resources: the resources discovery found, preferred versions only. */
static int
cmd_api_resources(void)
{
	const struct cli_http_res *all;
	struct cli_http_res *sorted, *r;
	struct cli_print_cols t = { 0 };
	struct cli_buf av = { 0 };
	char *cells[7];
	size_t i, n = 0, nall;

	if (cli_http_discover(&all, &nall) != 0)
		return 1;
	sorted = cli_buf_realloc(NULL, nall * sizeof *sorted);
	for (i = 0; i < nall; i++)
		if (all[i].preferred)
			sorted[n++] = all[i];
	qsort(sorted, n, sizeof *sorted, res_cmp);
	if (o.output != NULL && strcmp(o.output, "name") == 0) {
		for (i = 0; i < n; i++)
			printf("%s%s%s\n", sorted[i].name,
			    *sorted[i].group ? "." : "", sorted[i].group);
		free(sorted);
		return 0;
	}
	t.ncol = o.output != NULL && strcmp(o.output, "wide") == 0 ? 7 : 5;
	cells[0] = cli_buf_strdup("NAME");
	cells[1] = cli_buf_strdup("SHORTNAMES");
	cells[2] = cli_buf_strdup("APIVERSION");
	cells[3] = cli_buf_strdup("NAMESPACED");
	cells[4] = cli_buf_strdup("KIND");
	cells[5] = cli_buf_strdup("VERBS");
	cells[6] = cli_buf_strdup("CATEGORIES");
	api_row(&t, cells);
	for (i = 0; i < n; i++) {
		r = &sorted[i];
		av.len = 0;
		cli_buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "",
		    r->version);
		cells[0] = cli_buf_strdup(r->name);
		cells[1] = join(r->shorts);
		cells[2] = cli_buf_strdup(av.p);
		cells[3] = cli_buf_strdup(r->namespaced ? "true" : "false");
		cells[4] = cli_buf_strdup(r->kind);
		cells[5] = join(r->verbs);
		cells[6] = join(r->categories);
		api_row(&t, cells);
	}
	cli_print_cols_flush(&t);
	cli_buf_free(&av);
	free(sorted);
	return 0;
}

/* Parse options anywhere on the line, read the kubeconfig, run the verb. */
int
main(int argc, char **argv)
{
	enum { O_KUBECONFIG = 256, O_FSEL, O_TAIL, O_FOR, O_TIMEOUT,
	    O_REQTIMEOUT, O_IGNORENF, O_MANAGED, O_VERSION, O_TOKEN, O_CA,
	    O_INSECURE, O_VIRTUAL, O_COUNT, O_CPU, O_MEMORY, O_PODS, O_LABELS,
	    O_TAINTS, O_PREFIX };
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
		{ "server", required_argument, NULL, 's' },
		{ "token", required_argument, NULL, O_TOKEN },
		{ "certificate-authority", required_argument, NULL, O_CA },
		{ "insecure-skip-tls-verify", no_argument, NULL, O_INSECURE },
		{ "virtual", no_argument, NULL, O_VIRTUAL },
		{ "count", required_argument, NULL, O_COUNT },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "pods", required_argument, NULL, O_PODS },
		{ "labels", required_argument, NULL, O_LABELS },
		{ "taints", required_argument, NULL, O_TAINTS },
		{ "name-prefix", required_argument, NULL, O_PREFIX },
		{ "namespace", required_argument, NULL, 'n' },
		{ "all-namespaces", no_argument, NULL, 'A' },
		{ "selector", required_argument, NULL, 'l' },
		{ "field-selector", required_argument, NULL, O_FSEL },
		{ "output", required_argument, NULL, 'o' },
		{ "filename", required_argument, NULL, 'f' },
		{ "container", required_argument, NULL, 'c' },
		{ "tail", required_argument, NULL, O_TAIL },
		{ "for", required_argument, NULL, O_FOR },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "request-timeout", required_argument, NULL, O_REQTIMEOUT },
		{ "ignore-not-found", no_argument, NULL, O_IGNORENF },
		{ "show-managed-fields", no_argument, NULL, O_MANAGED },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *verb;
	char *end;
	int c, rc;

	while ((c = getopt_long(argc, argv, "s:n:Al:o:f:c:h", longopts,
	    NULL)) != -1) {
		switch (c) {
		case O_KUBECONFIG:
			o.conn.kubeconfig = optarg;
			break;
		case 's':
			o.conn.server = optarg;
			break;
		case O_TOKEN:
			o.conn.token = optarg;
			break;
		case O_CA:
			o.conn.ca_file = optarg;
			break;
		case O_INSECURE:
			o.conn.insecure = 1;
			break;
		case O_VIRTUAL:
			o.node.is_virtual = 1;
			break;
		case O_COUNT:
			o.node.count = strtol(optarg, &end, 10);
			if (*end != '\0' || *optarg == '\0') {
				fprintf(stderr, "error: bad --count %s\n", optarg);
				return 2;
			}
			break;
		case O_CPU:
			o.node.cpu = optarg;
			break;
		case O_MEMORY:
			o.node.memory = optarg;
			break;
		case O_PODS:
			o.node.pods = optarg;
			break;
		case O_LABELS:
			o.node.labels = optarg;
			break;
		case O_TAINTS:
			o.node.taints = optarg;
			break;
		case O_PREFIX:
			o.node.prefix = optarg;
			break;
		case 'n':
			o.ns = optarg;
			break;
		case 'A':
			o.all_ns = 1;
			break;
		case 'l':
			o.selector = optarg;
			break;
		case O_FSEL:
			o.fselector = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'f':
			o.files = cli_buf_realloc(o.files, (o.nfiles + 1) *
			    sizeof *o.files);
			o.files[o.nfiles++] = optarg;
			break;
		case 'c':
			o.container = optarg;
			break;
		case O_TAIL:
			o.tail = strtol(optarg, &end, 10);
			if (*end != '\0' || *optarg == '\0') {
				fprintf(stderr, "error: bad --tail %s\n",
				    optarg);
				return 1;
			}
			break;
		case O_FOR:
			o.forcond = optarg;
			break;
		case O_TIMEOUT:
		case O_REQTIMEOUT:
			if (parse_duration(optarg) < 0) {
				fprintf(stderr, "error: bad duration %s\n",
				    optarg);
				return 1;
			}
			if (c == O_TIMEOUT)
				o.timeout_ms = parse_duration(optarg);
			else
				o.conn.req_timeout_ms = parse_duration(optarg);
			break;
		case O_IGNORENF:
			o.ignore_nf = 1;
			break;
		case O_MANAGED:
			o.managed = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_VERSION:
			printf("volray %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return 1;
	}
	verb = argv[0];
	argc--;
	argv++;
	if (strcmp(verb, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (!cli_print_known(o.output)) {
		fprintf(stderr, "error: unknown output format %s\n", o.output);
		return 1;
	}
	if (cli_http_open(&o.conn) != 0)
		return 1;
	if (strcmp(verb, "get") == 0)
		rc = cmd_get(argc, argv);
	else if (strcmp(verb, "apply") == 0 || strcmp(verb, "create") == 0)
		rc = argc == 0 ? cmd_apply(verb[0] == 'c') : (fprintf(stderr,
		    "error: %s takes -f FILE\n", verb), 1);
	else if (strcmp(verb, "delete") == 0)
		rc = cmd_delete(argc, argv);
	else if (strcmp(verb, "logs") == 0)
		rc = cmd_logs(argc, argv);
	else if (strcmp(verb, "wait") == 0)
		rc = cmd_wait(argc, argv);
	else if (strcmp(verb, "node") == 0)
		rc = cli_node(argc, argv, &o.node);
	else if (strcmp(verb, "policy") == 0)
		rc = cmd_policy(argc, argv);
	else if (strcmp(verb, "version") == 0)
		rc = cmd_version();
	else if (strcmp(verb, "api-resources") == 0)
		rc = cmd_api_resources();
	else {
		fprintf(stderr, "error: unknown command \"%s\"\n", verb);
		usage(stderr);
		rc = 1;
	}
	cli_http_close();
	return rc;
}
