/*
 * volray apply, create and replace: every document of the -f files, one
 * request each, going on after a failure. apply is kubectl's client-side
 * apply (the last-applied-configuration annotation and a three-way patch,
 * cli_lastapplied.c and cli_threeway.c), so kubectl apply and volray
 * apply can take turns on one object; with --server-side it is one
 * server-side apply patch under --field-manager (default "volray"). Each
 * is reported as kubectl reports it: created, configured or unchanged.
 * create POSTs; replace GETs (for a clear NotFound) then PUTs the
 * document whole; with --save-config both write the annotation, as
 * kubectl's do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_lastapplied.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_res.h"
#include "cli_threeway.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

#define APPLY_CTYPE	"application/apply-patch+yaml"
#define SMP_CTYPE	"application/strategic-merge-patch+json"
#define MERGE_CTYPE	"application/merge-patch+json"
#define CSA_MANAGER	"volray-client-side-apply"
#define APPLY_TRIES	5

static char *
resource_version(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	const char *rv = json_str(j, "metadata.resourceVersion");
	char *s = rv != NULL ? xstrdup(rv) : NULL;

	cJSON_Delete(j);
	return s;
}

/* Print "type/name how" for a document the server took. */
static void
said(const struct cli_res *r, const char *name, const char *how)
{
	char *type = cli_res_type(r);

	printf("%s/%s %s\n", type, name, how);
	free(type);
}

/* The body of create and replace: the document, with --save-config its
 * last-applied annotation too (as kubectl's), so apply can follow. */
static char *
saved_body(const cJSON *doc)
{
	cJSON *m;
	char *body;

	if (!cli_opts.save_config)
		return cJSON_PrintUnformatted(doc);
	m = cli_lastapplied_modified(doc);
	body = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	return body;
}

/* create: POST one document to its collection. */
static int
create_one(cJSON *doc)
{
	const struct cli_res *r;
	const char *ns, *name;
	struct cli_buf path = { 0 };
	char *body;
	cJSON *made;

	if ((r = cli_obj_of_doc(doc, &ns, &name)) == NULL)
		return CLI_FAIL;
	cli_res_path(&path, r, ns, NULL, NULL);
	body = saved_body(doc);
	made = cli_obj_send("POST", path.p, "application/json", body);
	free(body);
	cli_buf_free(&path);
	if (made == NULL)
		return CLI_FAIL;
	if ((name = json_str(made, "metadata.name")) == NULL)
		name = "?";
	said(r, name, "created");
	cJSON_Delete(made);
	return CLI_OK;
}

/* Is a group one of kubectl's own, whose kinds take a strategic merge
 * patch? Custom resources (and CRDs themselves) take a merge patch. */
static int
builtin_group(const char *group)
{
	size_t n = strlen(group);

	if (strchr(group, '.') == NULL)
		return 1;
	if (strcmp(group, "apiextensions.k8s.io") == 0)
		return 0;
	return n > 7 && strcmp(group + n - 7, ".k8s.io") == 0;
}

/* apply --server-side: one apply patch, said as kubectl says it. */
static int
apply_server(const struct cli_res *r, const char *name, cJSON *doc,
    struct cli_buf *path)
{
	struct cli_http_resp rsp;
	char *body, *before = NULL, *after;
	const char *how;

	cli_http_request("GET", path->p, NULL, NULL, NULL, &rsp);
	if (rsp.code == 200)
		before = resource_version(rsp.body.p);
	else if (rsp.code != 404) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return CLI_FAIL;
	}
	cli_buf_free(&rsp.body);
	cli_http_query_add(path, "fieldManager", cli_opts.field_manager !=
	    NULL ? cli_opts.field_manager : "volray");
	if (cli_opts.force_conflicts)
		cli_http_query_add(path, "force", "true");
	body = cJSON_PrintUnformatted(doc);
	cli_http_request("PATCH", path->p, APPLY_CTYPE, body, NULL, &rsp);
	free(body);
	if (rsp.code != 200 && rsp.code != 201) {
		cli_http_report(&rsp);
		free(before);
		cli_buf_free(&rsp.body);
		return CLI_FAIL;
	}
	after = resource_version(rsp.body.p);
	if (rsp.code == 201 || before == NULL)
		how = "created";
	else if (after != NULL && strcmp(before, after) == 0)
		how = "unchanged";
	else
		how = "configured";
	said(r, name, how);
	free(before);
	free(after);
	cli_buf_free(&rsp.body);
	return CLI_OK;
}

/* The first try, and each retry after a conflict, of a client-side
 * apply: read the live object, then create or patch it. */
static int
apply_client_once(const struct cli_res *r, const char *ns, const char *name,
    const cJSON *modified, struct cli_buf *path, long *code)
{
	struct cli_http_resp rsp;
	struct cli_buf coll = { 0 }, p = { 0 };
	cJSON *live, *orig, *patch;
	char *body, *cause;
	const char *mgr = cli_opts.field_manager != NULL ?
	    cli_opts.field_manager : CSA_MANAGER;
	int missing, rc = CLI_FAIL;

	cli_http_request("GET", path->p, NULL, NULL, NULL, &rsp);
	*code = rsp.code;
	if (rsp.code == 404) {
		cli_buf_free(&rsp.body);
		cli_res_path(&coll, r, ns, NULL, NULL);
		cli_http_query_add(&coll, "fieldManager", mgr);
		body = cJSON_PrintUnformatted(modified);
		cli_http_request("POST", coll.p, "application/json", body,
		    NULL, &rsp);
		free(body);
		cli_buf_free(&coll);
		if ((*code = rsp.code) == 201 || rsp.code == 200) {
			said(r, name, "created");
			rc = CLI_OK;
		} else if (rsp.code != 409)
			cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return rc;
	}
	if (rsp.code != 200) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return CLI_FAIL;
	}
	live = cJSON_Parse(rsp.body.p);
	cli_buf_free(&rsp.body);
	orig = cli_lastapplied_of(live, &missing);
	if (missing) {
		fprintf(stderr, "Warning: resource %s%s%s/%s is missing the %s "
		    "annotation which is required by volray apply. volray "
		    "apply should only be used on resources created "
		    "declaratively by either volray create --save-config or "
		    "volray apply. "
		    "The missing annotation will be patched automatically.\n",
		    r->name, *r->group ? "." : "", r->group, name,
		    CLI_LASTAPPLIED);
	}
	patch = cli_threeway_patch(orig, modified, live,
	    builtin_group(r->group) ? r->kind : NULL, &cause);
	cJSON_Delete(orig);
	cJSON_Delete(live);
	if (patch == NULL) {
		cli_color_errorf("%s/%s: %s\n", r->name, name, cause);
		free(cause);
		return CLI_FAIL;
	}
	if (patch->child == NULL) {
		said(r, name, "unchanged");
		cJSON_Delete(patch);
		return CLI_OK;
	}
	cli_buf_printf(&p, "%s", path->p);
	cli_http_query_add(&p, "fieldManager", mgr);
	body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	cli_http_request("PATCH", p.p, builtin_group(r->group) ? SMP_CTYPE :
	    MERGE_CTYPE, body, NULL, &rsp);
	free(body);
	cli_buf_free(&p);
	if ((*code = rsp.code) == 200) {
		said(r, name, "configured");
		rc = CLI_OK;
	} else if (rsp.code != 409)
		cli_http_report(&rsp);
	cli_buf_free(&rsp.body);
	return rc;
}

/*
 * apply: kubectl's client-side apply. The file's configuration goes into
 * the last-applied annotation; an absent object is created with it, a
 * live one gets the three-way patch (cli_threeway.c). A conflict (someone
 * wrote between the read and the patch, or created the object) is tried
 * again from a fresh read, as kubectl does.
 */
static int
apply_one(cJSON *doc)
{
	const struct cli_res *r;
	const char *ns, *name;
	struct cli_buf path = { 0 };
	cJSON *modified;
	long code = 0;
	int rc = CLI_FAIL, try;

	if ((r = cli_obj_of_doc(doc, &ns, &name)) == NULL)
		return CLI_FAIL;
	if (name == NULL || *name == '\0') {
		cli_color_errorf("a %s to apply needs metadata.name\n",
		    r->kind);
		return CLI_FAIL;
	}
	cli_res_path(&path, r, ns, name, NULL);
	if (cli_opts.server_side) {
		rc = apply_server(r, name, doc, &path);
		cli_buf_free(&path);
		return rc;
	}
	modified = cli_lastapplied_modified(doc);
	for (try = 0; try < APPLY_TRIES; try++) {
		rc = apply_client_once(r, ns, name, modified, &path, &code);
		if (rc == CLI_OK || code != 409)
			break;
	}
	if (rc != CLI_OK && code == 409)
		cli_color_errorf("%s/%s: still conflicting after %d "
		    "tries\n", r->name, name, APPLY_TRIES);
	cJSON_Delete(modified);
	cli_buf_free(&path);
	return rc;
}

/* replace: the object must exist; PUT the document in its place. */
static int
replace_one(cJSON *doc)
{
	const struct cli_res *r;
	const char *ns, *name;
	struct cli_buf path = { 0 };
	cJSON *cur, *done;
	char *body;

	if ((r = cli_obj_of_doc(doc, &ns, &name)) == NULL)
		return CLI_FAIL;
	if (name == NULL || *name == '\0') {
		cli_color_errorf("a %s to replace needs metadata.name\n",
		    r->kind);
		return CLI_FAIL;
	}
	cli_res_path(&path, r, ns, name, NULL);
	if ((cur = cli_http_get_json(path.p, NULL)) == NULL) {
		cli_buf_free(&path);
		return CLI_FAIL;
	}
	cJSON_Delete(cur);
	body = saved_body(doc);
	done = cli_obj_send("PUT", path.p, "application/json", body);
	free(body);
	cli_buf_free(&path);
	if (done == NULL)
		return CLI_FAIL;
	said(r, name, "replaced");
	cJSON_Delete(done);
	return CLI_OK;
}

/* Run one of the three over every document of the files. */
static int
each_doc(const char *verb, int argc, int (*fn)(cJSON *))
{
	cJSON *docs, *doc;
	int rc = CLI_OK;

	if (argc != 0)
		return cli_opt_usage(verb, "%s takes -f FILE, not arguments",
		    verb);
	if ((docs = cli_obj_load(verb, &rc)) == NULL)
		return rc;
	cJSON_ArrayForEach(doc, docs)
		if (fn(doc) != CLI_OK)
			rc = CLI_FAIL;
	cJSON_Delete(docs);
	return rc;
}

int
cli_apply_run(int argc, char **argv)
{
	return each_doc("apply", argc, apply_one);
}

int
cli_apply_create(int argc, char **argv)
{
	return each_doc("create", argc, create_one);
}

int
cli_apply_replace(int argc, char **argv)
{
	return each_doc("replace", argc, replace_one);
}
