/*
 * volray apply, create and replace: every document of the -f files, one
 * request each, going on after a failure. apply is server-side apply
 * under the field manager "volray" (conflicts forced), reported as kubectl
 * reports it: created, configured, or unchanged when the object's
 * resourceVersion did not move. create POSTs; replace GETs (for a clear
 * NotFound) then PUTs the document whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_res.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "lib/json.h"

#define APPLY_CTYPE	"application/apply-patch+yaml"

static char *
resource_version(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	const char *rv = json_str(j, "metadata.resourceVersion");
	char *s = rv != NULL ? cli_buf_strdup(rv) : NULL;

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
	body = cJSON_PrintUnformatted(doc);
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

/* apply: server-side apply of one document, said as kubectl says it. */
static int
apply_one(cJSON *doc)
{
	const struct cli_res *r;
	const char *ns, *name, *how;
	struct cli_buf path = { 0 };
	char *body, *before = NULL, *after;
	struct cli_http_resp rsp;

	if ((r = cli_obj_of_doc(doc, &ns, &name)) == NULL)
		return CLI_FAIL;
	if (name == NULL || *name == '\0') {
		fprintf(stderr, "error: a %s to apply needs metadata.name\n",
		    r->kind);
		return CLI_FAIL;
	}
	cli_res_path(&path, r, ns, name, NULL);
	cli_http_request("GET", path.p, NULL, NULL, NULL, &rsp);
	if (rsp.code == 200)
		before = resource_version(rsp.body.p);
	else if (rsp.code != 404) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		cli_buf_free(&path);
		return CLI_FAIL;
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
		fprintf(stderr, "error: a %s to replace needs metadata.name\n",
		    r->kind);
		return CLI_FAIL;
	}
	cli_res_path(&path, r, ns, name, NULL);
	if ((cur = cli_http_get_json(path.p, NULL)) == NULL) {
		cli_buf_free(&path);
		return CLI_FAIL;
	}
	cJSON_Delete(cur);
	body = cJSON_PrintUnformatted(doc);
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
