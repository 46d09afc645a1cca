/*
 * PATCH: a change described against the stored object. A merge patch
 * (RFC 7386), a JSON patch (RFC 6902) or, for built-in kinds, a strategic
 * merge patch is applied to a tree of the stored version (patch.c) and the
 * result takes the path of an update (registry_update_merged). Server-side
 * apply sends a configuration instead: it creates the object when there is
 * none, or is merged into the stored one (strategically for built-in
 * kinds), and records its field manager's entry in managedFields with the
 * fields the configuration sets (registry_managed.c).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/yamljson.h"
#include "registry/patch.h"
#include "registry/registry_int.h"

/* Server-side apply: create, or merge the applied configuration. */
static void
apply(registry *rg, const resource *r, const char *ns, const char *name,
    const char *body, size_t len, const struct reg_opts *opts,
    struct reg_result *res)
{
	char *cause = NULL;
	cJSON *cfg = yamljson_parse(body, len, &cause), *cur, *merged;
	const store_obj *o;
	struct reg_opts o2;

	if (cfg == NULL) {
		reg_fail(res, status_bad_request("error decoding YAML: %s",
		    cause ? cause : "empty body"));
		free(cause);
		return;
	}
	if (opts == NULL || opts->field_manager == NULL ||
	    *opts->field_manager == '\0') {
		cJSON_Delete(cfg);
		static const resource meta = { .group = "meta.k8s.io",
		    .plural = "" };
		cJSON *causes = cJSON_CreateArray();

		/* kube-apiserver's ValidatePatchOptions: a 422. */
		status_add_cause(causes, "FieldValueRequired", "fieldManager",
		    "Required value: is required for apply patch");
		reg_fail(res, status_invalid(&meta, "PatchOptions", NULL,
		    causes));
		return;
	}
	o2 = *opts;
	o2.field_manager = NULL;
	o = store_get(rg->st, r->store_key, r->namespaced ? ns : "", name);
	if (o == NULL) {
		cJSON *copy = cJSON_Duplicate(cfg, 1);

		json_set_str(json_obj(cfg, "metadata"), "name", name);
		registry_create(rg, r, ns, cfg, &o2, res);
		if (res->code == 201) {
			/* Record the manager in the object just written. */
			registry_managed_set(res->body, opts->field_manager,
			    "Apply", NULL, r, copy);
			if (res->rev != 0)
				res->rev = store_put(rg->st, r->store_key,
				    r->namespaced ? ns : "", name, res->body);
			/* The bytes of the first put are stale now. */
			rbuf_unref(res->json);
			res->json = NULL;
		}
		cJSON_Delete(copy);
		return;
	}
	cur = store_obj_tree(o);
	merged = r->builtin ? patch_strategic(cur, cfg, r->kind, &cause) :
	    patch_merge(cur, cfg, &cause);
	cJSON_Delete(cur);
	if (merged == NULL) {
		cJSON_Delete(cfg);
		reg_fail(res, status_error(422, "Invalid", "%s", cause));
		free(cause);
		return;
	}
	/* An apply without resourceVersion never conflicts on it. */
	if (json_str(cfg, "metadata.resourceVersion") == NULL)
		json_del(json_obj(merged, "metadata"), "resourceVersion");
	registry_managed_set(merged, opts->field_manager, "Apply", NULL, r,
	    cfg);
	cJSON_Delete(cfg);
	registry_update_merged(rg, r, r->namespaced ? ns : "", name, merged, o,
	    NULL, &o2, res);
}

void
registry_patch(registry *rg, const resource *r, const char *ns,
    const char *name, const char *ctype, const char *body, size_t len,
    const struct reg_opts *opts, struct reg_result *res)
{
	const store_obj *cur;
	cJSON *p, *tree, *out = NULL;
	char *cause = NULL;
	enum { MERGE, JSONP, STRATEGIC, APPLY } kind;

	memset(res, 0, sizeof *res);
	if (reg_review_only(r, res))
		return;
	ns = r->namespaced ? ns : "";
	if (ctype == NULL)
		ctype = "";
	if (strncmp(ctype, "application/merge-patch+json", 28) == 0)
		kind = MERGE;
	else if (strncmp(ctype, "application/json-patch+json", 27) == 0)
		kind = JSONP;
	else if (strncmp(ctype, "application/strategic-merge-patch+json",
	    38) == 0)
		kind = STRATEGIC;
	else if (strncmp(ctype, "application/apply-patch+yaml", 28) == 0 ||
	    strncmp(ctype, "application/apply-patch+json", 28) == 0)
		kind = APPLY;
	else {
		/* What kube-apiserver's router answers a content type no
		   PATCH route consumes. */
		reg_fail(res, status_error(415, "UnsupportedMediaType",
		    "415: Unsupported Media Type"));
		return;
	}
	if (kind == STRATEGIC && !r->builtin) {
		reg_fail(res, status_error(415, "UnsupportedMediaType",
		    "strategic merge patch is not supported for custom "
		    "resources (%s); use a merge patch",
		    resource_qualified(r)));
		return;
	}
	if (kind == APPLY) {
		apply(rg, r, ns, name, body, len, opts, res);
		return;
	}
	cur = store_get(rg->st, r->store_key, ns, name);
	if (cur == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	if ((p = cJSON_ParseWithLength(body, len)) == NULL) {
		reg_fail(res, status_bad_request("error decoding patch: "
		    "invalid JSON"));
		return;
	}
	if (kind == JSONP && !cJSON_IsArray(p)) {
		/* Go's decoding of the operations, a 400. */
		const char *what = cJSON_IsObject(p) ? "object" :
		    cJSON_IsString(p) ? "string" : cJSON_IsNumber(p) ?
		    "number" : cJSON_IsBool(p) ? "bool" : "null";

		cJSON_Delete(p);
		reg_fail(res, status_bad_request("error decoding patch: json: "
		    "cannot unmarshal %s into Go value of type "
		    "[]handlers.jsonPatchOp", what));
		return;
	}
	tree = store_obj_tree(cur);
	switch (kind) {
	case MERGE:
		out = patch_merge(tree, p, &cause);
		break;
	case JSONP:
		out = patch_json(tree, p, &cause);
		break;
	default:
		out = patch_strategic(tree, p, r->kind, &cause);
		break;
	}
	cJSON_Delete(tree);
	cJSON_Delete(p);
	if (out == NULL) {
		reg_fail(res, status_error(kind == JSONP ? 422 : 400, kind ==
		    JSONP ? "Invalid" : "BadRequest", "%s", cause ? cause :
		    "invalid patch"));
		free(cause);
		return;
	}
	registry_update_merged(rg, r, ns, name, out, cur, NULL, opts, res);
}
