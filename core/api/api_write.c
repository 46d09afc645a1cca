/*
 * Write verbs over HTTP: decode the body (JSON, or YAML when the client
 * says so), read the options from the query and body, call the registry,
 * and answer once the write is durable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/protobuf.h"
#include "api/reply.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "registry/kinds/kinds.h"
#include "registry/status.h"

/* fieldValidation: Strict, Warn (also when absent, as kube-apiserver
   has it since 1.27) or Ignore. */
enum field_validation { FV_IGNORE, FV_WARN, FV_STRICT };

static enum field_validation
field_validation(const http_req *req)
{
	char *fv = http_query_get(req->query, "fieldValidation");
	enum field_validation v = fv == NULL ? FV_WARN :
	    strcmp(fv, "Strict") == 0 ? FV_STRICT :
	    strcmp(fv, "Ignore") == 0 ? FV_IGNORE : FV_WARN;

	free(fv);
	return v;
}

/*
 * kube-apiserver's answer to fieldValidation=Warn: a Warning header per
 * field, 299 - "unknown field \"spec.x\"", which kubectl prints as
 * 'Warning: unknown field "spec.x"'. paths is one a line; what does not
 * fit the response's headers is left out.
 */
static void
warn_fields(void *arg, const char *what, const char *paths)
{
	http_req *req = arg;
	const char *p, *e, *c;
	char value[300];
	size_t n;

	for (p = paths; *p != '\0'; p = *e ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		n = (size_t)snprintf(value, sizeof value, "299 - \"%s \\\"",
		    what);
		for (c = p; c < e && n + 8 < sizeof value; c++) {
			if (*c == '"' || *c == '\\')
				value[n++] = '\\';
			value[n++] = (unsigned char)*c < 0x20 ? '?' : *c;
		}
		memcpy(value + n, "\\\"\"", 4);	/* and the NUL */
		(void)http_req_add_header(req, "Warning", value);
	}
}

/* Decode a request body; on failure reply 400 and return NULL. */
static cJSON *
decode(http_req *req, struct route *rt)
{
	const char *ct = http_req_header(req, "Content-Type");
	char *cause = NULL, *dups;
	cJSON *obj;

	if (req->body_len == 0) {
		reply_status(req, rt, status_bad_request("the request body "
		    "is empty"));
		return NULL;
	}
	if (ct != NULL && strstr(ct, "yaml") != NULL) {
		obj = yamljson_parse(req->body, req->body_len, &cause);
		if (obj == NULL) {
			reply_status(req, rt, status_bad_request(
			    "error decoding YAML: %s", cause ? cause : ""));
			free(cause);
			return NULL;
		}
	} else if (ct != NULL && strstr(ct, "protobuf") != NULL) {
		/* kubectl's typed clients (create namespace, configmap, ...). */
		obj = protobuf_decode(req->body, req->body_len, &cause);
		if (obj == NULL) {
			reply_status(req, rt, status_bad_request("%s",
			    cause ? cause : "invalid protobuf body"));
			free(cause);
			return NULL;
		}
	} else {
		obj = cJSON_ParseWithLength(req->body, req->body_len);
		if (obj == NULL) {
			const char *at = cJSON_GetErrorPtr();
			long off = at ? (long)(at - req->body) : 0;

			reply_status(req, rt, status_bad_request(
			    "couldn't get version/kind; json parse error: "
			    "invalid JSON at offset %ld", off < 0 ||
			    (size_t)off > req->body_len ? 0 : off));
			return NULL;
		}
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		reply_status(req, rt, status_bad_request("the request body "
		    "must be a JSON object"));
		return NULL;
	}
	/* A repeated field keeps its last value (Go's decoder); with
	   fieldValidation=Strict it is refused, with Warn said, as
	   kube-apiserver does. */
	if ((dups = json_drop_duplicates(obj)) != NULL) {
		enum field_validation fv = field_validation(req);

		if (fv == FV_STRICT) {
			reply_status(req, rt, status_strict_decoding(
			    json_str(obj, "kind"), json_str(obj, "apiVersion"),
			    "duplicate field", dups));
			free(dups);
			cJSON_Delete(obj);
			return NULL;
		}
		if (fv == FV_WARN)
			warn_fields(req, "duplicate field", dups);
		free(dups);
	}
	return obj;
}

/*
 * kube-apiserver's ValidateCreateOptions (Update, Patch, Delete): a
 * dryRun other than All, a fieldValidation other than Ignore, Warn or
 * Strict is a 422 about the options, before the body is read. what is
 * "CreateOptions", ...; 0, or -1 once answered.
 */
static int
opts_check(http_req *req, struct route *rt, const char *what)
{
	static const resource meta = { .group = "meta.k8s.io", .plural = "" };
	char *dry = http_query_get(req->query, "dryRun");
	char *fv = strcmp(what, "DeleteOptions") == 0 ? NULL :
	    http_query_get(req->query, "fieldValidation");
	cJSON *causes = cJSON_CreateArray();

	if (dry != NULL && strcmp(dry, "All") != 0)
		status_add_cause(causes, "FieldValueNotSupported", "dryRun",
		    "Unsupported value: [\"%s\"]: supported values: \"All\"",
		    dry);
	if (fv != NULL && *fv != '\0' && strcmp(fv, "Ignore") != 0 &&
	    strcmp(fv, "Warn") != 0 && strcmp(fv, "Strict") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "fieldValidation", "Unsupported value: \"%s\": supported "
		    "values: \"\", \"Ignore\", \"Strict\", \"Warn\"", fv);
	free(dry);
	free(fv);
	if (cJSON_GetArraySize(causes) == 0) {
		cJSON_Delete(causes);
		return 0;
	}
	reply_status(req, rt, status_invalid(&meta, what, NULL, causes));
	return -1;
}

/* Options common to all writes, from the query. The strings are freed by
 * opts_free. */
static void
opts_parse(http_req *req, struct reg_opts *o, struct route *rt)
{
	char *dry = http_query_get(req->query, "dryRun");
	enum field_validation fv = field_validation(req);

	memset(o, 0, sizeof *o);
	o->subresource = rt->sub;
	o->user = rt->user;	/* escalation checks, access reviews */
	o->field_manager = http_query_get(req->query, "fieldManager");
	o->propagation = http_query_get(req->query, "propagationPolicy");
	o->dry_run = dry != NULL && strcmp(dry, "All") == 0;
	o->force = http_query_bool(req->query, "force", 0);
	o->validate_strict = fv == FV_STRICT;
	if (fv == FV_WARN) {
		o->warn = warn_fields;
		o->warn_arg = req;
	}
	o->want_json = 1;
	free(dry);
}

static void
opts_free(struct reg_opts *o)
{
	free((char *)o->field_manager);
	free((char *)o->propagation);
	free((char *)o->precond_uid);
	free((char *)o->precond_rv);
}

static void
finish(api *a, http_req *req, struct route *rt, struct reg_result *res)
{
	if (res->code >= 300)
		reply_status(req, rt, res->body);
	else if (res->json != NULL) {
		cJSON_Delete(res->body);
		reply_durable_rbuf(a->st, req, rt, res->code, res->json,
		    res->rev);
	} else
		reply_durable(a->st, req, rt, res->code, res->body, res->rev);
}

void
api_write_create(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;
	cJSON *obj;

	rt->verb = "create";
	if (opts_check(req, rt, "CreateOptions") != 0 ||
	    (obj = decode(req, rt)) == NULL)
		return;
	if (json_str(obj, "metadata.resourceVersion") != NULL &&
	    *json_str(obj, "metadata.resourceVersion") != '\0') {
		/* kube-apiserver's storage refuses it, as a 500. */
		cJSON_Delete(obj);
		reply_status(req, rt, status_error(500, NULL, "resourceVersion "
		    "should not be set on objects to be created"));
		return;
	}
	opts_parse(req, &o, rt);
	registry_create(a->rg, rt->r, rt->ns, obj, &o, &res);
	opts_free(&o);
	finish(a, req, rt, &res);
}

void
api_write_update(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;
	cJSON *obj;

	rt->verb = "update";
	if (opts_check(req, rt, "UpdateOptions") != 0 ||
	    (obj = decode(req, rt)) == NULL)
		return;
	opts_parse(req, &o, rt);
	if (rt->sub != NULL && strcmp(rt->sub, "finalize") == 0)
		o.subresource = NULL;
	registry_update(a->rg, rt->r, rt->ns, rt->name, obj, &o, &res);
	opts_free(&o);
	finish(a, req, rt, &res);
}

void
api_write_patch(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;

	rt->verb = "patch";
	if (opts_check(req, rt, "PatchOptions") != 0)
		return;
	opts_parse(req, &o, rt);
	registry_patch(a->rg, rt->r, rt->ns, rt->name,
	    http_req_header(req, "Content-Type"), req->body, req->body_len, &o,
	    &res);
	opts_free(&o);
	finish(a, req, rt, &res);
}

/* A propagationPolicy from the query or the body: kube-apiserver's 422
   about the DeleteOptions for any other; o is freed then. */
static int
check_propagation(http_req *req, struct route *rt, struct reg_opts *o)
{
	static const resource meta = { .group = "meta.k8s.io", .plural = "" };
	cJSON *causes;

	if (o->propagation == NULL ||
	    strcmp(o->propagation, "Background") == 0 ||
	    strcmp(o->propagation, "Foreground") == 0 ||
	    strcmp(o->propagation, "Orphan") == 0)
		return 0;
	causes = cJSON_CreateArray();
	status_add_cause(causes, "FieldValueNotSupported", "propagationPolicy",
	    "Unsupported value: \"%s\": supported values: \"Foreground\", "
	    "\"Background\", \"Orphan\", \"nil\"", o->propagation);
	reply_status(req, rt, status_invalid(&meta, "DeleteOptions", NULL,
	    causes));
	opts_free(o);
	return -1;
}

/* DeleteOptions from the body override the query. */
static int
delete_opts(http_req *req, struct route *rt, struct reg_opts *o)
{
	cJSON *body, *v;
	const char *ct;

	if (opts_check(req, rt, "DeleteOptions") != 0)
		return -1;
	opts_parse(req, o, rt);
	{
		long long g;
		char *cause = NULL;
		int rc = http_query_int(req->query, "gracePeriodSeconds", &g,
		    &cause);

		if (rc < 0) {
			reply_status(req, rt, status_bad_request("%s", cause));
			free(cause);
			opts_free(o);
			return -1;
		}
		if (rc > 0) {
			o->grace_set = 1;
			o->grace_period = (long)g;
		}
	}
	if (http_query_bool(req->query, "orphanDependents", 0)) {
		free((char *)o->propagation);
		o->propagation = xstrdup("Orphan");
	}
	if (req->body_len == 0)
		return check_propagation(req, rt, o);
	ct = http_req_header(req, "Content-Type");
	if (ct != NULL && strstr(ct, "protobuf") != NULL) {
		/* client-go's typed clients (controller-runtime's too). */
		char *cause = NULL;

		if ((body = protobuf_decode(req->body, req->body_len,
		    &cause)) == NULL) {
			reply_status(req, rt, status_bad_request("invalid "
			    "DeleteOptions: %s", cause ? cause :
			    "protobuf decode error"));
			free(cause);
			opts_free(o);
			return -1;
		}
	} else if ((body = cJSON_ParseWithLength(req->body,
	    req->body_len)) == NULL) {
		reply_status(req, rt, status_bad_request("invalid "
		    "DeleteOptions: json parse error"));
		opts_free(o);
		return -1;
	}
	if ((v = json_at(body, "propagationPolicy")) != NULL &&
	    cJSON_IsString(v)) {
		free((char *)o->propagation);
		o->propagation = xstrdup(v->valuestring);
	}
	if (cJSON_IsNumber(v = json_at(body, "gracePeriodSeconds"))) {
		o->grace_set = 1;
		o->grace_period = (long)v->valuedouble;
	}
	if (cJSON_IsTrue(json_at(body, "orphanDependents"))) {
		free((char *)o->propagation);
		o->propagation = xstrdup("Orphan");
	}
	if (json_str(body, "preconditions.uid"))
		o->precond_uid = xstrdup(json_str(body, "preconditions.uid"));
	if (json_str(body, "preconditions.resourceVersion"))
		o->precond_rv = xstrdup(json_str(body,
		    "preconditions.resourceVersion"));
	if (cJSON_IsArray(json_at(body, "dryRun")) &&
	    cJSON_GetArraySize(json_at(body, "dryRun")) > 0)
		o->dry_run = 1;
	cJSON_Delete(body);
	return check_propagation(req, rt, o);
}

/*
 * Whether kube-apiserver answers a DELETE of r with the object
 * (ReturnDeletedObject: pods, services, custom resources; a namespace goes
 * through Terminating) rather than a Status, once it is gone.
 */
static int
returns_deleted(const resource *r)
{
	return !r->builtin || (r->desc != NULL && r->desc->delete_returns);
}

/* Whether the deleted object is still stored (finalizers, a grace period):
   then the answer is the object, with its deletionTimestamp. */
static int
still_there(api *a, const struct route *rt, const cJSON *obj)
{
	const char *ns = rt->r->namespaced ? (rt->ns ? rt->ns : "") : "";
	const store_obj *o = store_get(a->st, rt->r->store_key, ns, rt->name);
	const char *uid = json_str(obj, "metadata.uid");
	int staged = store_batch_staged(a->st, rt->r->store_key, ns, rt->name);

	if (staged >= 0)	/* on etcd, not committed yet */
		return staged;
	return o != NULL && uid != NULL && strcmp(o->uid, uid) == 0;
}

/* {"kind":"Status",...,"status":"Success","details":{name,group,kind,uid}}:
   details.kind is the resource, as kube-apiserver writes it. */
static cJSON *
status_deleted(const resource *r, const cJSON *obj)
{
	cJSON *st = cJSON_CreateObject(), *d;

	cJSON_AddStringToObject(st, "kind", "Status");
	cJSON_AddStringToObject(st, "apiVersion", "v1");
	cJSON_AddObjectToObject(st, "metadata");
	cJSON_AddStringToObject(st, "status", "Success");
	d = cJSON_AddObjectToObject(st, "details");
	json_set_str(d, "name", json_str(obj, "metadata.name"));
	if (*r->group != '\0')
		json_set_str(d, "group", r->group);
	json_set_str(d, "kind", r->plural);
	if (json_str(obj, "metadata.uid") != NULL)
		json_set_str(d, "uid", json_str(obj, "metadata.uid"));
	return st;
}

void
api_write_delete(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;

	rt->verb = "delete";
	if (delete_opts(req, rt, &o) != 0)
		return;
	registry_delete(a->rg, rt->r, rt->ns, rt->name, &o, &res);
	opts_free(&o);
	if (res.code == 200 && res.body != NULL && !returns_deleted(rt->r) &&
	    !still_there(a, rt, res.body)) {
		/* Gone: kube-apiserver's Status for these kinds. */
		cJSON *st = status_deleted(rt->r, res.body);

		if (res.json != NULL)
			rbuf_unref(res.json);
		res.json = NULL;
		cJSON_Delete(res.body);
		res.body = st;
	}
	finish(a, req, rt, &res);
}

void
api_write_delete_collection(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;
	store_obj *const *objs;
	char **names, **nss;
	selector *sel;
	size_t n, i, k = 0;
	uint64_t rev = 0;
	cJSON *list, *items;

	rt->verb = "deletecollection";
	if (reply_label_selector(req, rt, &sel) != 0)
		return;
	if (delete_opts(req, rt, &o) != 0) {
		selector_free(sel);
		return;
	}
	n = store_list(a->st, rt->r->store_key, rt->r->namespaced ? rt->ns :
	    NULL, &objs);
	/* Copy the names: deleting changes the listing under us. */
	names = xcalloc(n + 1, sizeof *names);
	nss = xcalloc(n + 1, sizeof *nss);
	for (i = 0; i < n; i++) {
		if (sel && !selector_match_labels(sel, objs[i]->labels))
			continue;
		names[k] = xstrdup(objs[i]->name);
		nss[k++] = xstrdup(objs[i]->ns);
	}
	list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "kind", rt->r->list_kind);
	cJSON_AddStringToObject(list, "apiVersion", rt->r->gv);
	cJSON_AddObjectToObject(list, "metadata");
	items = cJSON_AddArrayToObject(list, "items");
	for (i = 0; i < k; i++) {
		registry_delete(a->rg, rt->r, nss[i], names[i], &o, &res);
		if (res.code < 300) {
			cJSON_AddItemToArray(items, res.body);
			if (res.rev > rev)
				rev = res.rev;
		} else
			cJSON_Delete(res.body);
		free(names[i]);
		free(nss[i]);
	}
	free(names);
	free(nss);
	opts_free(&o);
	selector_free(sel);
	reply_durable(a->st, req, rt, 200, list, rev);
}

void
api_write_bind(api *a, http_req *req, struct route *rt)
{
	struct reg_result res;
	cJSON *obj;
	const char *node;

	rt->verb = "create";
	if ((obj = decode(req, rt)) == NULL)
		return;
	node = json_str(obj, "target.name");
	if (node == NULL || *node == '\0') {
		cJSON_Delete(obj);
		reply_status(req, rt, status_error(422, "Invalid",
		    "Binding \"%s\" is invalid: target.name: Required value",
		    rt->name));
		return;
	}
	registry_bind(a->rg, rt->ns ? rt->ns : "default", rt->name, node,
	    &res);
	cJSON_Delete(obj);
	finish(a, req, rt, &res);
}

/* GET, PUT and PATCH on .../scale. */
void
api_write_scale(api *a, http_req *req, struct route *rt)
{
	struct reg_result res;
	const char *m = req->method;

	if (strcmp(m, "GET") == 0) {
		rt->verb = "get";
		registry_get_scale(a->rg, rt->r, rt->ns, rt->name, &res);
	} else if (strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0) {
		rt->verb = m[1] == 'U' ? "update" : "patch";
		registry_put_scale(a->rg, rt->r, rt->ns, rt->name,
		    http_req_header(req, "Content-Type"), req->body,
		    req->body_len, m[1] == 'A', &res);
	} else {
		reply_status(req, rt, status_error(405, "MethodNotAllowed",
		    "the server does not allow this method on the requested "
		    "resource"));
		return;
	}
	finish(a, req, rt, &res);
}

/*
 * POST pods/NAME/eviction (kubectl drain): delete the pod as an Eviction
 * asks, if its PodDisruptionBudget allows (registry_evict); DeleteOptions
 * inside the Eviction are honoured.
 */
void
api_write_evict(api *a, http_req *req, struct route *rt)
{
	struct reg_opts o;
	struct reg_result res;
	cJSON *ev, *s;
	const char *prop;

	rt->verb = "create";
	if ((ev = decode(req, rt)) == NULL)
		return;
	opts_parse(req, &o, rt);
	o.subresource = NULL;
	prop = json_str(ev, "deleteOptions.propagationPolicy");
	if (prop != NULL) {
		free((char *)o.propagation);
		o.propagation = xstrdup(prop);
	}
	if (json_str(ev, "deleteOptions.preconditions.uid"))
		o.precond_uid = xstrdup(json_str(ev,
		    "deleteOptions.preconditions.uid"));
	/* kubectl drain --grace-period sends it here. */
	if (cJSON_IsNumber(json_at(ev, "deleteOptions.gracePeriodSeconds"))) {
		o.grace_set = 1;
		o.grace_period = (long)json_at(ev,
		    "deleteOptions.gracePeriodSeconds")->valuedouble;
	}
	cJSON_Delete(ev);
	registry_evict(a->rg, rt->ns, rt->name, &o, &res);
	opts_free(&o);
	if (res.code >= 300) {
		reply_status(req, rt, res.body);
		return;
	}
	cJSON_Delete(res.body);
	s = status_success();
	reply_durable(a->st, req, rt, 201, s, res.rev);
}
