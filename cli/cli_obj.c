/*
 * The objects volray(1) verbs act on. A command line names a resource by
 * a word discovery knows (cli_res_resolve) and objects by name; -f files
 * give whole documents, which carry their own apiVersion, kind, name and
 * namespace. Both come here to be turned into a resource, a namespace and
 * a name. A -f path may be a file, - for standard input, or a directory
 * (its subdirectories too with -R).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

long
cli_obj_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Put key: value in front of an object's members. */
void
cli_obj_prepend(cJSON *obj, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);

	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	v->string = xstrdup(key);
	cJSON_InsertItemInArray(obj, 0, v);
}

/* The namespace a namespaced resource is used in: -n, else the context's. */
const char *
cli_obj_ns(const struct cli_res *r)
{
	if (!r->namespaced)
		return NULL;
	return cli_opts.ns != NULL ? cli_opts.ns : cli_http_namespace();
}

/* Split "TYPE/NAME" or take TYPE NAME... from the arguments. */
int
cli_obj_target(const char *verb, int argc, char **argv,
    const struct cli_res **r, const char **name, int *rest)
{
	char *slash, *type;

	*name = NULL;
	*rest = 1;
	if (argc < 1)
		return cli_opt_usage(verb, "you must specify the type of "
		    "resource");
	type = xstrdup(argv[0]);
	if ((slash = strchr(type, '/')) != NULL) {
		*slash = '\0';
		*name = argv[0] + (slash - type) + 1;
	} else if (argc > 1) {
		*name = argv[1];
		*rest = 2;
	}
	*r = cli_res_resolve(type);
	free(type);
	return *r != NULL ? CLI_OK : CLI_FAIL;
}

/* Spread one file's documents (Lists as their items) into all. */
static int
add_docs(cJSON *all, cJSON *docs, const char *file)
{
	cJSON *doc, *items, *el;

	while ((doc = cJSON_DetachItemFromArray(docs, 0)) != NULL) {
		if (cJSON_IsNull(doc)) {
			cJSON_Delete(doc);
			continue;
		}
		if (!cJSON_IsObject(doc) || json_str(doc, "kind") == NULL ||
		    json_str(doc, "apiVersion") == NULL) {
			cli_color_errorf("%s: every document needs "
			    "apiVersion and kind\n", file);
			cJSON_Delete(doc);
			return -1;
		}
		if (strcmp(json_str(doc, "kind"), "List") == 0) {
			items = cJSON_GetObjectItemCaseSensitive(doc, "items");
			while ((el = cJSON_DetachItemFromArray(items, 0)) !=
			    NULL)
				cJSON_AddItemToArray(all, el);
			cJSON_Delete(doc);
		} else
			cJSON_AddItemToArray(all, doc);
	}
	return 0;
}

/* Read standard input or one file into all. */
static int
load_file(cJSON *all, const char *file)
{
	struct cli_buf in = { 0 };
	char *cause = NULL, chunk[65536];
	cJSON *docs;
	size_t n;
	int rc;

	if (strcmp(file, "-") == 0) {
		cli_buf_add(&in, "", 0);
		while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
			cli_buf_add(&in, chunk, n);
		docs = yamljson_parse_all(in.p, in.len, &cause);
		cli_buf_free(&in);
	} else
		docs = yamljson_load_file(file, &cause);
	if (docs == NULL) {
		cli_color_errorf("%s: %s\n", file, cause);
		free(cause);
		return -1;
	}
	rc = add_docs(all, docs, file);
	cJSON_Delete(docs);
	return rc;
}

/* Does a file found in a directory have one of kubectl's extensions? */
static int
manifest_name(const char *name)
{
	static const char *const ext[] = { ".json", ".yaml", ".yml" };
	size_t i, n = strlen(name), e;

	for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		e = strlen(ext[i]);
		if (n > e && strcmp(name + n - e, ext[i]) == 0)
			return 1;
	}
	return 0;
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * Load a -f path as kubectl walks it: a file whatever its name; in a
 * directory, the .json, .yaml and .yml files in name order, and the
 * subdirectories' only with -R.
 */
static int
load_path(cJSON *all, const char *path, int top)
{
	struct dirent **ents;
	struct cli_buf sub = { 0 };
	struct stat st;
	int n, i, rc = 0;

	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 ||
	    !S_ISDIR(st.st_mode))
		return top || manifest_name(path) ? load_file(all, path) : 0;
	if (!top && !cli_opts.recursive)
		return 0;
	if ((n = scandir(path, &ents, NULL, name_cmp)) < 0) {
		cli_color_errorf("%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (rc == 0 && ents[i]->d_name[0] != '.') {
			sub.len = 0;
			cli_buf_printf(&sub, "%s/%s", path, ents[i]->d_name);
			rc = load_path(all, sub.p, 0);
		}
		free(ents[i]);
	}
	free(ents);
	cli_buf_free(&sub);
	return rc;
}

/* Load the documents of every -f path, with List items spread out. */
cJSON *
cli_obj_load(const char *verb, int *rc)
{
	cJSON *all = cJSON_CreateArray();
	int i;

	*rc = CLI_FAIL;
	if (cli_opts.nfiles == 0) {
		*rc = cli_opt_usage(verb, "must specify -f FILE");
		cJSON_Delete(all);
		return NULL;
	}
	for (i = 0; i < cli_opts.nfiles; i++)
		if (load_path(all, cli_opts.files[i], 1) != 0) {
			cJSON_Delete(all);
			return NULL;
		}
	if (cJSON_GetArraySize(all) == 0) {
		cli_color_errorf("no objects passed to %s\n", verb);
		cJSON_Delete(all);
		return NULL;
	}
	*rc = CLI_OK;
	return all;
}

/* The resource, namespace and name a document is about. */
const struct cli_res *
cli_obj_of_doc(cJSON *doc, const char **ns, const char **name)
{
	const struct cli_res *r;
	const char *dns;
	cJSON *md;

	r = cli_res_kind(json_str(doc, "apiVersion"),
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
	if (dns != NULL && cli_opts.ns != NULL && strcmp(dns, cli_opts.ns) != 0) {
		cli_color_errorf("the namespace from the provided object "
		    "\"%s\" does not match the namespace \"%s\"\n", dns,
		    cli_opts.ns);
		return NULL;
	}
	if (dns == NULL) {
		cJSON_AddStringToObject(md, "namespace", cli_obj_ns(r));
		dns = json_str(md, "namespace");
	}
	*ns = dns;
	return r;
}

/* Send a request; the reply's object on 2xx, else NULL (reported). */
cJSON *
cli_obj_send(const char *method, const char *path, const char *ctype,
    const char *body)
{
	struct cli_http_resp rsp;
	cJSON *j = NULL;

	cli_http_request(method, path, ctype, body, NULL, &rsp);
	if (rsp.code >= 200 && rsp.code <= 299) {
		if ((j = cJSON_Parse(rsp.body.p)) == NULL)
			j = cJSON_CreateObject();
	} else
		cli_http_report(&rsp);
	cli_buf_free(&rsp.body);
	return j;
}

/* kubectl's HumanDuration of the time since an RFC 3339 timestamp. */
char *
cli_obj_age(const char *ts)
{
	struct tm tm = { 0 };
	struct cli_buf b = { 0 };
	long s, m, h, d;

	if (ts == NULL || strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return xstrdup("<unknown>");
	s = (long)(time(NULL) - timegm(&tm));
	if (s < -1)
		return xstrdup("<invalid>");
	if (s < 0)
		s = 0;
	m = s / 60, h = s / 3600, d = h / 24;
	if (s < 120)
		cli_buf_printf(&b, "%lds", s);
	else if (m < 10 && s % 60 != 0)
		cli_buf_printf(&b, "%ldm%lds", m, s % 60);
	else if (m < 180)
		cli_buf_printf(&b, "%ldm", m);
	else if (h < 8 && m % 60 != 0)
		cli_buf_printf(&b, "%ldh%ldm", h, m % 60);
	else if (h < 48)
		cli_buf_printf(&b, "%ldh", h);
	else if (h < 192 && h % 24 != 0)
		cli_buf_printf(&b, "%ldd%ldh", d, h % 24);
	else if (d < 730)
		cli_buf_printf(&b, "%ldd", d);
	else if (d < 2920 && d % 365 != 0)
		cli_buf_printf(&b, "%ldy%ldd", d / 365, d % 365);
	else
		cli_buf_printf(&b, "%ldy", d / 365);
	return b.p;
}
