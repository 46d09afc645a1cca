/*
 * Registry: the semantics of create, update and delete, and the path
 * every write takes.
 *
 * Every write follows one path: decode -> merge with the stored object
 * (update, patch, status subresource) -> system metadata (uid,
 * creationTimestamp, generation, resourceVersion precondition) -> admission
 * defaults -> validation (admission rules, CRD schema) -> store_put. The
 * result carries the revision the caller waits on (group commit) before it
 * answers. Deletion honours finalizers and propagation policies; the
 * garbage collector (gc.c) finishes what deletion starts.
 *
 * Beside this file: patches and server-side apply (registry_patch.c),
 * managedFields (registry_managed.c), the pods/binding and Scale
 * subresources (registry_bind.c, registry_scale.c) and the objects a
 * cluster starts with (registry_bootstrap.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/admission.h"
#include "registry/kinds/kinds.h"
#include "registry/limitrange.h"
#include "registry/quota.h"
#include "registry/registry_int.h"
#include "registry/schema.h"

static cJSON *check_type(const struct resource *, cJSON *);

void
registry_set_pod_runtime(registry *rg, int (*fn)(void *, const char *),
    void *arg)
{
	rg->pod_runtime = fn;
	rg->pod_runtime_arg = arg;
}

/*
 * The grace period a pod deletion gets: the request's, else the pod's
 * terminationGracePeriodSeconds (default 30); 0 when no runtime on its
 * node will stop it, so that it goes at once.
 */
static long
pod_grace(registry *rg, const store_obj *cur, const cJSON *obj,
    const struct reg_opts *opts)
{
	const cJSON *t;
	long g = 30;

	if (cur->node_name[0] == '\0' || rg->pod_runtime == NULL ||
	    !rg->pod_runtime(rg->pod_runtime_arg, cur->node_name))
		return 0;
	if (opts != NULL && opts->grace_set)
		g = opts->grace_period;
	else if (cJSON_IsNumber(t = json_at(obj,
	    "spec.terminationGracePeriodSeconds")))
		g = (long)t->valuedouble;
	return g < 0 ? 0 : g;
}

/* Mark a pod for graceful deletion (or shorten the grace it has). */
static uint64_t
mark_pod_deleting(registry *rg, const resource *r, const char *ns,
    const char *name, cJSON *obj, long grace)
{
	cJSON *md = json_obj(obj, "metadata");
	char when[32];

	util_time_format(time(NULL) + grace, when);
	json_set_str(md, "deletionTimestamp", when);
	json_set_num(md, "deletionGracePeriodSeconds", (double)grace);
	return store_put(rg->st, r->store_key, ns, name, obj);
}

store *
registry_store(registry *rg)
{
	return rg->st;
}

registry *
registry_new(store *st)
{
	registry *rg = xcalloc(1, sizeof *rg);

	rg->st = st;
	return rg;
}

void
registry_free(registry *rg)
{
	free(rg);
}


registry_admit_fn
registry_set_admit(registry *rg, registry_admit_fn fn, void *arg,
    void **prev_arg, int statuses)
{
	registry_admit_fn prev = rg->admit;

	if (prev_arg != NULL)
		*prev_arg = rg->admit_arg;
	rg->admit = fn;
	rg->admit_arg = arg;
	/* A chained hook still sees what it asked for. */
	rg->admit_status |= statuses;
	return prev;
}

void
registry_set_review(registry *rg, registry_review_fn fn, void *arg)
{
	rg->review = fn;
	rg->review_arg = arg;
}

/* The admission hook's verdict on a write: NULL, or a Status. */
static cJSON *
admit_hook(registry *rg, const resource *r, const char *ns, const cJSON *old,
    const cJSON *obj, const struct reg_opts *opts)
{
	if (rg->admit == NULL)
		return NULL;
	return rg->admit(rg->admit_arg, r, r->namespaced ? ns : "", old, obj,
	    opts ? opts->user : NULL);
}

/*
 * A POST to a review kind: the answer is computed, never stored. A review
 * asks about the requester, so without one there is nothing to answer
 * (kube-apiserver: "no user present on request").
 */
static void
create_review(registry *rg, const resource *r, cJSON *obj,
    const struct reg_opts *opts, struct reg_result *res)
{
	char *cause = NULL;
	cJSON *out, *err;

	if ((err = check_type(r, obj)) != NULL) {
		cJSON_Delete(obj);
		reg_fail(res, err);
		return;
	}
	if (rg->review == NULL || opts == NULL || opts->user == NULL) {
		cJSON_Delete(obj);
		reg_fail(res, status_bad_request("no user present on request"));
		return;
	}
	out = rg->review(rg->review_arg, r, opts->user, obj, &cause);
	cJSON_Delete(obj);
	if (out == NULL) {
		reg_fail(res, status_bad_request("%s", cause ? cause :
		    "invalid review"));
		free(cause);
		return;
	}
	if (json_str(out, "kind") != NULL && strcmp(json_str(out, "kind"),
	    "Status") == 0) {
		reg_fail(res, out);
		return;
	}
	reg_ok(res, 201, out, 0);
}

/*
 * Hand the API the bytes just stored, so it answers without serializing
 * the object a second time.
 */
static void
stored_json(registry *rg, const resource *r, const char *ns,
    const char *name, uint64_t rev, const struct reg_opts *opts,
    struct reg_result *res)
{
	const store_obj *o;

	if (opts == NULL || !opts->want_json || rev == 0)
		return;
	o = store_get(rg->st, r->store_key, r->namespaced ? ns : "", name);
	if (o != NULL && o->rev == rev)
		res->json = rbuf_ref(o->json);
}

cJSON *
registry_get(registry *rg, const resource *r, const char *ns,
    const char *name)
{
	const store_obj *o = store_get(rg->st, r->store_key,
	    r->namespaced ? ns : "", name);

	return o ? store_obj_tree(o) : NULL;
}

/* Everything but metadata and status: what a generation counts. */
static int
spec_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *x;
	int n = 0, m = 0;

	cJSON_ArrayForEach(x, a) {
		if (strcmp(x->string, "metadata") == 0 ||
		    strcmp(x->string, "status") == 0)
			continue;
		n++;
		if (!json_equal(x, cJSON_GetObjectItemCaseSensitive(b,
		    x->string)))
			return 0;
	}
	cJSON_ArrayForEach(x, b)
		if (strcmp(x->string, "metadata") != 0 &&
		    strcmp(x->string, "status") != 0)
			m++;
	return n == m;
}

static const char *
obj_name(const cJSON *obj)
{
	return json_str(obj, "metadata.name");
}

/* Where standard base64 (with its padding) goes wrong in s, as Go's
   decoder reports it, or -1 when it is fine. */
static long
bad_base64(const char *s)
{
	size_t n = strlen(s), i, pad = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '=') {
			if (i + 2 < n || (i + 2 == n && s[i + 1] != '='))
				return (long)i;
			pad++;
			continue;
		}
		if (pad > 0 || !((c >= 'A' && c <= 'Z') || (c >= 'a' &&
		    c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
		    c == '/'))
			return (long)i;
	}
	if (n % 4 != 0)
		return (long)(n - n % 4);
	return -1;
}

/* Kind and apiVersion of a body must name the resource of the URL. */
static cJSON *
check_type(const resource *r, cJSON *obj)
{
	const char *kind = json_str(obj, "kind");
	const char *av = json_str(obj, "apiVersion");

	if (!cJSON_IsObject(obj))
		return status_bad_request("the request body must be a JSON "
		    "object");
	if (kind != NULL && strcmp(kind, r->kind) != 0) {
		/* kube-apiserver's decoder: "Secret in version \"v1\"
		   cannot be handled as a ConfigMap: converting (v1.Secret)
		   to (core.ConfigMap): unknown conversion". */
		const char *v = av && strchr(av, '/') ? strchr(av, '/') + 1 :
		    av ? av : r->version;
		int glen = (int)strcspn(r->group, ".");

		return status_bad_request("%s in version \"%s\" cannot be "
		    "handled as a %s: converting (%s.%s) to (%.*s.%s): unknown "
		    "conversion", kind, v, r->kind, v, kind,
		    *r->group ? glen : 4, *r->group ? r->group : "core",
		    r->kind);
	}
	if (av != NULL && strcmp(av, r->gv) != 0) {
		/* Other served versions of the same CRD are accepted. */
		const resource *o = resource_by_gvk(av, r->kind);

		if (o == NULL || strcmp(o->store_key, r->store_key) != 0)
			return status_bad_request("the API version in the "
			    "data (%s) does not match the expected API "
			    "version (%s)", av, r->gv);
	}
	if (r->desc != NULL && r->desc->bytes_map != NULL) {
		/* []byte fields: Go's decoder reads them as base64. */
		const cJSON *it;
		long at;

		cJSON_ArrayForEach(it, json_at(obj, r->desc->bytes_map))
			if (cJSON_IsString(it) &&
			    (at = bad_base64(it->valuestring)) >= 0)
				return status_bad_request("%s in version "
				    "\"%s\" cannot be handled as a %s: illegal "
				    "base64 data at input byte %ld", r->kind,
				    r->version, r->kind, at);
	}
	/* Objects are stored in the storage version's apiVersion. */
	json_set_str(obj, "kind", r->kind);
	json_set_str(obj, "apiVersion", r->storage ? r->gv :
	    resource_by_store_key(r->store_key)->gv);
	return NULL;
}

/* Namespaced writes need an existing, non-terminating namespace. */
static cJSON *
check_namespace(registry *rg, const resource *r, const char *ns, int create)
{
	const store_obj *o;

	if (!r->namespaced)
		return NULL;
	o = store_get(rg->st, "namespaces", "", ns);
	if (o == NULL) {
		cJSON *s = status_error(404, "NotFound",
		    "namespaces \"%s\" not found", ns);

		status_details(s, resource_find("", "v1", "namespaces"), ns);
		return s;
	}
	if (create && o->deleting) {
		cJSON *s = status_error(403, "Forbidden", "%s \"%s\" is "
		    "forbidden: unable to create new content in namespace %s "
		    "because it is being terminated", r->plural, "", ns);
		return s;
	}
	return NULL;
}

/*
 * Defaults, validation and schema: the checks both create and update run.
 * Returns a Status on failure.
 */
/*
 * Shape rules every kind shares: labels and annotations map strings to
 * strings, spec and status are objects. (CRD schemas check the rest of a
 * custom resource; admission.c the rest of a built-in one.)
 */
static void
check_shape(const cJSON *obj, cJSON *causes)
{
	static const char *maps[] = { "labels", "annotations", NULL };
	static const char *objs[] = { "spec", "status", NULL };
	const cJSON *m, *it;
	char field[300];
	int i;

	for (i = 0; maps[i] != NULL; i++) {
		m = json_at(obj, "metadata") ? cJSON_GetObjectItemCaseSensitive(
		    json_at(obj, "metadata"), maps[i]) : NULL;
		if (m == NULL || cJSON_IsNull(m))
			continue;
		snprintf(field, sizeof field, "metadata.%s", maps[i]);
		if (!cJSON_IsObject(m)) {
			status_add_cause(causes, "FieldValueTypeInvalid", field,
			    "Invalid value: must be a map of strings");
			continue;
		}
		cJSON_ArrayForEach(it, m)
			if (!cJSON_IsString(it)) {
				snprintf(field, sizeof field, "metadata.%s[%s]",
				    maps[i], it->string);
				status_add_cause(causes, "FieldValueTypeInvalid",
				    field, "Invalid value: must be a string");
			}
	}
	for (i = 0; objs[i] != NULL; i++) {
		m = cJSON_GetObjectItemCaseSensitive(obj, objs[i]);
		if (m != NULL && !cJSON_IsObject(m) && !cJSON_IsNull(m))
			status_add_cause(causes, "FieldValueTypeInvalid",
			    objs[i], "Invalid value: must be an object");
	}
}

/*
 * The top-level fields of the built-in kinds volrayd knows no schema of
 * (custom resources are pruned by theirs): any other is dropped, as
 * kube-apiserver's decoder drops it, its name going to *pruned when
 * pruned is not NULL. A kind not listed keeps whatever it is given.
 */
static void
prune_toplevel(const resource *r, cJSON *obj, char **pruned)
{
	static const struct {
		const char *store_key;
		const char *fields;	/* besides apiVersion, kind, metadata */
	} kinds[] = {
		{ "configmaps", " data binaryData immutable " },
		{ "secrets", " data stringData type immutable " },
		{ "serviceaccounts", " secrets imagePullSecrets "
		    "automountServiceAccountToken " },
		{ "roles.rbac.authorization.k8s.io", " rules " },
		{ "clusterroles.rbac.authorization.k8s.io",
		    " rules aggregationRule " },
		{ "rolebindings.rbac.authorization.k8s.io",
		    " subjects roleRef " },
		{ "clusterrolebindings.rbac.authorization.k8s.io",
		    " subjects roleRef " },
		{ "pods", " spec status " },
		{ "services", " spec status " },
		{ "namespaces", " spec status " },
		{ "deployments.apps", " spec status " },
		{ "replicasets.apps", " spec status " },
		{ "statefulsets.apps", " spec status " },
		{ "daemonsets.apps", " spec status " },
		{ "jobs.batch", " spec status " },
		{ "cronjobs.batch", " spec status " },
	};
	const char *fields = NULL;
	cJSON *it, *next;
	char key[130], *p;
	size_t i;

	if (!r->builtin)
		return;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].store_key, r->store_key) == 0)
			fields = kinds[i].fields;
	if (fields == NULL)
		return;
	for (it = obj->child; it != NULL; it = next) {
		next = it->next;
		if (it->string == NULL || strcmp(it->string, "apiVersion") == 0 ||
		    strcmp(it->string, "kind") == 0 ||
		    strcmp(it->string, "metadata") == 0)
			continue;
		snprintf(key, sizeof key, " %.120s ", it->string);
		if (strstr(fields, key) != NULL)
			continue;
		if (pruned != NULL) {
			p = util_printf("%s%s%s", *pruned ? *pruned : "",
			    *pruned ? "\n" : "", it->string);
			free(*pruned);
			*pruned = p;
		}
		cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
	}
}

/*
 * ObjectMeta's fields: any other key under metadata is dropped, as
 * kube-apiserver's decoder drops it; its path goes to *pruned (a
 * newline-separated list, appended to) when pruned is not NULL.
 */
static void
prune_metadata(cJSON *obj, char **pruned)
{
	static const char *const known[] = { "name", "generateName",
	    "namespace", "selfLink", "uid", "resourceVersion", "generation",
	    "creationTimestamp", "deletionTimestamp",
	    "deletionGracePeriodSeconds", "labels", "annotations",
	    "ownerReferences", "finalizers", "managedFields", NULL };
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *it, *next;
	char *p;
	int i;

	if (!cJSON_IsObject(md))
		return;
	for (it = md->child; it != NULL; it = next) {
		next = it->next;
		for (i = 0; known[i] != NULL; i++)
			if (it->string != NULL && strcmp(it->string, known[i]) == 0)
				break;
		if (known[i] != NULL)
			continue;
		if (pruned != NULL) {
			p = util_printf("%s%smetadata.%s", *pruned ? *pruned : "",
			    *pruned ? "\n" : "", it->string ? it->string : "");
			free(*pruned);
			*pruned = p;
		}
		cJSON_Delete(cJSON_DetachItemViaPointer(md, it));
	}
}

static cJSON *
admit(registry *rg, const resource *r, cJSON *obj, const cJSON *old,
    const struct reg_opts *opts)
{
	cJSON *causes = cJSON_CreateArray();
	char *pruned = NULL;

	check_shape(obj, causes);
	if (cJSON_GetArraySize(causes) > 0)
		return status_invalid(r, r->kind, obj_name(obj), causes);
	admission_mutate(rg->st, r, obj, old);
	admission_validate(rg->st, r, obj, old, causes);
	if (r->schema != NULL)
		schema_validate_pruned(r->schema, obj, causes, opts != NULL &&
		    (opts->validate_strict || opts->warn != NULL) ? &pruned :
		    NULL);
	prune_toplevel(r, obj, opts != NULL && (opts->validate_strict ||
	    opts->warn != NULL) ? &pruned : NULL);
	prune_metadata(obj, opts != NULL && (opts->validate_strict ||
	    opts->warn != NULL) ? &pruned : NULL);
	if (pruned != NULL && opts->validate_strict) {
		/* fieldValidation=Strict: kube-apiserver's refusal. */
		cJSON *err = status_strict_decoding(r->kind, json_str(obj,
		    "apiVersion"), "unknown field", pruned);

		free(pruned);
		cJSON_Delete(causes);
		return err;
	}
	if (pruned != NULL) {
		/* fieldValidation=Warn: pruned, and said so. */
		opts->warn(opts->warn_arg, "unknown field", pruned);
		free(pruned);
	}
	if (cJSON_GetArraySize(causes) > 0)
		return status_invalid(r, r->kind, obj_name(obj), causes);
	cJSON_Delete(causes);
	return NULL;
}

void
registry_create(registry *rg, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *opts, struct reg_result *res)
{
	cJSON *md, *err;
	const char *name, *gen, *bodyns;
	char buf[300], uid[37], now[32], nsbuf[256];
	uint64_t rev;

	memset(res, 0, sizeof *res);
	if (r->create_only) {
		create_review(rg, r, obj, opts, res);
		return;
	}
	/* ns may point into obj, which is edited below. */
	if (ns != NULL) {
		snprintf(nsbuf, sizeof nsbuf, "%s", ns);
		ns = nsbuf;
	}
	if ((err = check_type(r, obj)) != NULL)
		goto failed;
	md = json_obj(obj, "metadata");
	bodyns = json_str(md, "namespace");
	if (r->namespaced) {
		if (bodyns != NULL && *bodyns && ns != NULL &&
		    strcmp(bodyns, ns) != 0) {
			err = status_bad_request("the namespace of the "
			    "provided object does not match the namespace "
			    "sent on the request");
			goto failed;
		}
		if (ns == NULL || *ns == '\0')
			ns = bodyns && *bodyns ? bodyns : "default";
		json_set_str(md, "namespace", ns);
	} else {
		ns = "";
		json_del(md, "namespace");
	}
	name = json_str(md, "name");
	gen = json_str(md, "generateName");
	if ((name == NULL || *name == '\0') && gen != NULL && *gen) {
		char suffix[8];

		util_random_suffix(suffix, 5);
		snprintf(buf, sizeof buf, "%.*s%s", 58, gen, suffix);
		json_set_str(md, "name", buf);
		name = json_str(md, "name");
	}
	if (name == NULL || *name == '\0') {
		cJSON *causes = cJSON_CreateArray();

		status_add_cause(causes, "FieldValueRequired", "metadata.name",
		    "Required value: name or generateName is required");
		err = status_invalid(r, r->kind, "", causes);
		goto failed;
	}
	if (admission_check_name(r, name) != NULL) {
		cJSON *causes = cJSON_CreateArray();

		status_add_cause(causes, "FieldValueInvalid", "metadata.name",
		    "Invalid value: \"%s\": %s", name,
		    admission_check_name(r, name));
		err = status_invalid(r, r->kind, name, causes);
		goto failed;
	}
	if ((err = check_namespace(rg, r, ns, 1)) != NULL)
		goto failed;
	if (store_get(rg->st, r->store_key, ns, name) != NULL) {
		err = status_already_exists(r, name);
		goto failed;
	}
	util_uuid(uid);
	util_now(now);
	json_set_str(md, "uid", uid);
	json_set_str(md, "creationTimestamp", now);
	json_set_num(md, "generation", 1);
	json_del(md, "resourceVersion");
	json_del(md, "deletionTimestamp");
	json_del(md, "deletionGracePeriodSeconds");
	json_del(md, "managedFields");
	if (r->has_status && !resource_status_in_main(r))
		json_del(obj, "status");
	if ((err = admit(rg, r, obj, NULL, opts)) != NULL)
		goto failed;
	if (r->builtin && strcmp(r->store_key, "pods") == 0) {
		if ((err = limitrange_admit_pod(rg->st, ns, obj)) != NULL)
			goto failed;
		/* After the LimitRange's defaults, as kube-apiserver's
		   PrepareForCreate follows the mutating admission. */
		json_set_str(json_obj(obj, "status"), "qosClass",
		    podspec_qos(obj));
	}
	if ((err = quota_admit(rg->st, r, ns, obj)) != NULL)
		goto failed;
	if ((err = admit_hook(rg, r, ns, NULL, obj, opts)) != NULL)
		goto failed;
	if (opts && opts->field_manager && *opts->field_manager)
		registry_managed_set(obj, opts->field_manager, "Update", NULL,
		    r, NULL);
	if (opts && opts->dry_run) {
		reg_ok(res, 201, obj, 0);
		return;
	}
	rev = store_put(rg->st, r->store_key, ns, name, obj);
	if (r->desc != NULL && r->desc->stored != NULL)
		r->desc->stored(r, obj, NULL);
	reg_ok(res, 201, obj, rev);
	stored_json(rg, r, ns, name, rev, opts, res);
	return;
failed:
	cJSON_Delete(obj);
	reg_fail(res, err);
}

/* Really remove an object whose finalizers are gone. */
static uint64_t
finish_delete(registry *rg, const resource *r, const char *ns,
    const char *name, cJSON *last)
{
	uint64_t rev = store_delete(rg->st, r->store_key, ns, name, last);

	if (r->desc != NULL && r->desc->removed != NULL)
		r->desc->removed(r, name);
	return rev;
}

/*
 * A write of the status subresource: only .status comes from the request
 * (req); spec and metadata stay the stored ones (old, a tree of cur), so
 * the generation cannot move. Unless an admission hook reviews status
 * writes (it sees old and new side by side), the stored tree itself
 * becomes the new object with its status swapped: no copy of the object,
 * and the no-op check compares statuses (and asks set_managed whether the
 * managed fields changed), not whole trees.
 */
static void
update_status(registry *rg, const resource *r, const char *name, cJSON *req,
    const store_obj *cur, cJSON *old, const struct reg_opts *opts,
    struct reg_result *res)
{
	cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(req, "status");
	cJSON *obj, *was, *causes, *err = NULL;
	const char *fm = opts->field_manager;
	int track = fm != NULL && *fm && strcmp(fm, "kubectl") != 0;
	int managed = 0;	/* the managed fields changed */
	uint64_t rev;

	cJSON_Delete(req);
	if (rg->admit != NULL && rg->admit_status)
		obj = cJSON_Duplicate(old, 1);
	else {
		obj = old;
		old = NULL;
	}
	was = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
	if (st != NULL)
		cJSON_AddItemToObject(obj, "status", st);
	causes = cJSON_CreateArray();
	check_shape(obj, causes);
	if (cJSON_GetArraySize(causes) > 0 || (r->schema != NULL &&
	    schema_validate(r->schema, obj, causes) > 0)) {
		err = status_invalid(r, r->kind, name, causes);
		causes = NULL;
	}
	cJSON_Delete(causes);
	if (err == NULL && track)
		managed = registry_managed_set(obj, fm, "Update", "status",
		    r, NULL);
	if (err == NULL && old != NULL)
		err = admit_hook(rg, r, cur->ns, old, obj, opts);
	if (err != NULL) {
		cJSON_Delete(obj);
		cJSON_Delete(old);
		cJSON_Delete(was);
		reg_fail(res, err);
		return;
	}
	if (old != NULL ? json_equal(obj, old) : !managed &&
	    json_equal(st, was)) {
		/* A no-op write: obj equals the current object. */
		cJSON_Delete(old);
		cJSON_Delete(was);
		reg_ok(res, 200, obj, 0);
		return;
	}
	cJSON_Delete(was);
	if (opts->dry_run) {
		cJSON_Delete(old);
		reg_ok(res, 200, obj, 0);
		return;
	}
	if (fm != NULL && *fm)
		registry_managed_touch(obj, fm);
	/* The last finalizer gone (see registry_update_merged) also ends a
	   pod whose status write comes after it. */
	if (cur->deleting && cJSON_GetArraySize(json_at(obj,
	    "metadata.finalizers")) == 0 &&
	    cJSON_GetNumberValue(json_at(obj,
	    "metadata.deletionGracePeriodSeconds")) <= 0) {
		json_del(json_obj(obj, "metadata"), "finalizers");
		rev = finish_delete(rg, r, cur->ns, name, obj);
	} else
		rev = store_put(rg->st, r->store_key, cur->ns, name, obj);
	cJSON_Delete(old);
	reg_ok(res, 200, obj, rev);
	stored_json(rg, r, cur->ns, name, rev, opts, res);
}

/*
 * The common tail of update and patch: obj is the complete new object.
 * Status writes keep the old spec and metadata; spec writes keep the old
 * status; nothing changes -> no write.
 */
void
registry_update_merged(registry *rg, const resource *r, const char *ns,
    const char *name, cJSON *obj, const store_obj *cur, cJSON *old,
    const struct reg_opts *opts, struct reg_result *res)
{
	cJSON *md, *omd, *err, *v;
	const char *rv, *nm;
	int status_only = opts && opts->subresource &&
	    strcmp(opts->subresource, "status") == 0;
	static const char *keep[] = { "uid", "creationTimestamp",
	    "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
	    "namespace", "name", NULL };
	uint64_t rev;
	int i;
	double gen;

	if (old == NULL)
		old = store_obj_tree(cur);
	if ((err = check_type(r, obj)) != NULL)
		goto failed;
	md = json_obj(obj, "metadata");
	omd = json_obj(old, "metadata");
	nm = json_str(md, "name");
	if (nm != NULL && strcmp(nm, name) != 0) {
		err = status_bad_request("the name of the object (%s) does not "
		    "match the name on the URL (%s)", nm, name);
		goto failed;
	}
	rv = json_str(md, "resourceVersion");
	if (rv != NULL && *rv && strtoull(rv, NULL, 10) != cur->rev) {
		err = status_conflict(r, name);
		goto failed;
	}
	if (status_only) {
		update_status(rg, r, name, obj, cur, old, opts, res);
		return;
	}
	if (r->has_status && !resource_status_in_main(r)) {
		json_del(obj, "status");
		if ((v = cJSON_GetObjectItemCaseSensitive(old, "status")) !=
		    NULL)
			cJSON_AddItemToObject(obj, "status",
			    cJSON_Duplicate(v, 1));
	}
	/* System metadata cannot be changed by a write. */
	for (i = 0; keep[i] != NULL; i++) {
		json_del(md, keep[i]);
		if ((v = cJSON_GetObjectItemCaseSensitive(omd, keep[i])) !=
		    NULL)
			cJSON_AddItemToObject(md, keep[i],
			    cJSON_Duplicate(v, 1));
	}
	if (!r->namespaced)
		json_del(md, "namespace");
	json_set_str(md, "resourceVersion", json_str(omd, "resourceVersion"));
	if ((err = admit(rg, r, obj, old, opts)) != NULL)
		goto failed;
	if (opts && opts->field_manager && *opts->field_manager &&
	    (opts->subresource == NULL ||
	    strcmp(opts->field_manager, "kubectl") != 0))
		registry_managed_set(obj, opts->field_manager, "Update",
		    opts->subresource, r, NULL);
	if ((err = admit_hook(rg, r, cur->ns, old, obj, opts)) != NULL)
		goto failed;
	gen = cJSON_GetNumberValue(json_at(omd, "generation"));
	if (!spec_equal(obj, old))
		json_set_num(md, "generation", (gen > 0 ? gen : 1) + 1);
	if (json_equal(obj, old)) {
		/* A no-op write: answer with the current object, no revision. */
		cJSON_Delete(obj);
		reg_ok(res, 200, old, 0);
		return;
	}
	if (opts && opts->dry_run) {
		cJSON_Delete(old);
		reg_ok(res, 200, obj, 0);
		return;
	}
	if (opts && opts->field_manager && *opts->field_manager)
		registry_managed_touch(obj, opts->field_manager);
	/*
	 * The last finalizer removed from a deleting object ends it, unless
	 * a grace period still runs (a pod that its node is stopping).
	 */
	if (cur->deleting && cJSON_GetArraySize(json_at(obj,
	    "metadata.finalizers")) == 0 &&
	    cJSON_GetNumberValue(json_at(omd,
	    "deletionGracePeriodSeconds")) <= 0) {
		json_del(md, "finalizers");
		rev = finish_delete(rg, r, cur->ns, name, obj);
		cJSON_Delete(old);
		reg_ok(res, 200, obj, rev);
		return;
	}
	rev = store_put(rg->st, r->store_key, cur->ns, name, obj);
	if (r->desc != NULL && r->desc->stored != NULL &&
	    !spec_equal(obj, old))
		r->desc->stored(r, obj, old);
	cJSON_Delete(old);
	reg_ok(res, 200, obj, rev);
	stored_json(rg, r, cur->ns, name, rev, opts, res);
	return;
failed:
	cJSON_Delete(old);
	cJSON_Delete(obj);
	reg_fail(res, err);
}

void
registry_update_status(registry *rg, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *opts, struct reg_result *res)
{
	struct reg_opts o = { 0 };
	const store_obj *cur;
	char nsbuf[256], namebuf[256];
	const char *rv;
	cJSON *obj;

	memset(res, 0, sizeof *res);
	snprintf(nsbuf, sizeof nsbuf, "%s", r->namespaced && ns ? ns : "");
	snprintf(namebuf, sizeof namebuf, "%s", name ? name : "");
	if ((cur = store_get(rg->st, r->store_key, nsbuf, namebuf)) == NULL) {
		cJSON_Delete(current);
		cJSON_Delete(status);
		reg_fail(res, status_not_found(r, namebuf));
		return;
	}
	/* Not the stored version: what an update with its resourceVersion
	   gets. */
	rv = json_str(current, "metadata.resourceVersion");
	if (rv == NULL || strtoull(rv, NULL, 10) != cur->rev) {
		cJSON_Delete(current);
		cJSON_Delete(status);
		reg_fail(res, status_conflict(r, namebuf));
		return;
	}
	if (opts != NULL)
		o = *opts;
	o.subresource = "status";
	obj = cJSON_CreateObject();
	if (status != NULL)
		cJSON_AddItemToObject(obj, "status", status);
	registry_update_merged(rg, r, nsbuf, namebuf, obj, cur, current, &o,
	    res);
}

void
registry_update(registry *rg, const resource *r, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *opts,
    struct reg_result *res)
{
	const store_obj *cur;
	char nsbuf[256], namebuf[256];

	memset(res, 0, sizeof *res);
	if (reg_review_only(r, res)) {
		cJSON_Delete(obj);
		return;
	}
	/* ns and name may point into obj, which is edited below. */
	snprintf(nsbuf, sizeof nsbuf, "%s", r->namespaced && ns ? ns : "");
	snprintf(namebuf, sizeof namebuf, "%s", name ? name : "");
	ns = nsbuf;
	name = namebuf;
	cur = store_get(rg->st, r->store_key, ns, name);
	if (cur == NULL) {
		cJSON_Delete(obj);
		reg_fail(res, status_not_found(r, name));
		return;
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		reg_fail(res, status_bad_request("the request body must be a "
		    "JSON object"));
		return;
	}
	registry_update_merged(rg, r, ns, name, obj, cur, NULL, opts, res);
}

static void
add_finalizer(cJSON *obj, const char *f)
{
	cJSON *md = json_obj(obj, "metadata");
	cJSON *fin = cJSON_GetObjectItemCaseSensitive(md, "finalizers");

	if (json_has_string(obj, "metadata.finalizers", f))
		return;
	if (!cJSON_IsArray(fin)) {
		fin = cJSON_CreateArray();
		json_set(md, "finalizers", fin);
	}
	cJSON_AddItemToArray(fin, cJSON_CreateString(f));
}

/* Remove our owner reference from every dependent (Orphan propagation). */
static uint64_t
orphan_dependents(registry *rg, const char *uid)
{
	const char **keys;
	size_t n = store_dependents(rg->st, uid, &keys), i;
	char **copy = xcalloc(n + 1, sizeof *copy);
	uint64_t rev = 0;

	for (i = 0; i < n; i++)
		copy[i] = xstrdup(keys[i]);
	for (i = 0; i < n; i++) {
		const store_obj *d = store_get_key(rg->st, copy[i]);
		cJSON *t, *refs, *it;
		int j = 0;

		if (d == NULL)
			continue;
		t = store_obj_tree(d);
		refs = json_at(t, "metadata.ownerReferences");
		cJSON_ArrayForEach(it, refs) {
			if (json_str(it, "uid") && strcmp(json_str(it, "uid"),
			    uid) == 0) {
				cJSON_DeleteItemFromArray(refs, j);
				break;
			}
			j++;
		}
		if (cJSON_GetArraySize(refs) == 0)
			json_del(json_obj(t, "metadata"), "ownerReferences");
		rev = store_put(rg->st, d->res, d->ns, d->name, t);
		cJSON_Delete(t);
		free(copy[i]);
	}
	free(copy);
	return rev;
}

void
registry_delete(registry *rg, const resource *r, const char *ns,
    const char *name, const struct reg_opts *opts, struct reg_result *res)
{
	const store_obj *cur;
	cJSON *obj, *md;
	const char *prop = opts ? opts->propagation : NULL;
	const char **keys;
	char now[32];
	int ndeps;
	uint64_t rev;

	memset(res, 0, sizeof *res);
	if (reg_review_only(r, res))
		return;
	ns = r->namespaced ? ns : "";
	cur = store_get(rg->st, r->store_key, ns, name);
	if (cur == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	if (opts && opts->precond_uid && *opts->precond_uid &&
	    strcmp(opts->precond_uid, cur->uid) != 0) {
		/* kube-apiserver's words, about the kind. */
		cJSON *st = status_error(409, "Conflict", "Operation cannot "
		    "be fulfilled on %s \"%s\": the UID in the precondition "
		    "(%s) does not match the UID in record (%s). The object "
		    "might have been deleted and then recreated", r->kind,
		    name, opts->precond_uid, cur->uid);

		status_details(st, r, name);
		json_set_str(json_obj(st, "details"), "kind", r->kind);
		reg_fail(res, st);
		return;
	}
	if (opts && opts->precond_rv && *opts->precond_rv &&
	    strtoull(opts->precond_rv, NULL, 10) != cur->rev) {
		reg_fail(res, status_conflict(r, name));
		return;
	}
	if (strcmp(r->store_key, "namespaces") == 0 &&
	    (strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
	    strcmp(name, "kube-public") == 0)) {
		/* kube-apiserver's NamespaceLifecycle: immortal ones. */
		cJSON *st = status_error(403, "Forbidden", "namespaces \"%s\" "
		    "is forbidden: this namespace may not be deleted", name);

		status_details(st, r, name);
		reg_fail(res, st);
		return;
	}
	{
		char *why = admission_volcano_delete(rg->st, r, name);

		if (why != NULL) {
			reg_fail(res, status_error(403, "Forbidden", "%s \"%s\" "
			    "is forbidden: %s", resource_qualified(r), name,
			    why));
			free(why);
			return;
		}
	}
	obj = store_obj_tree(cur);
	if (opts && opts->dry_run) {
		reg_ok(res, 200, obj, 0);
		return;
	}
	ndeps = (int)store_dependents(rg->st, cur->uid, &keys);
	md = json_obj(obj, "metadata");
	if (prop != NULL && strcmp(prop, "Orphan") == 0 && ndeps > 0) {
		rev = orphan_dependents(rg, cur->uid);
		cur = store_get(rg->st, r->store_key, ns, name);
		(void)rev;
	}
	if (strcmp(r->store_key, "pods") == 0) {
		long grace = pod_grace(rg, cur, obj, opts);
		const cJSON *had = json_at(md, "deletionGracePeriodSeconds");

		if (cur->deleting && cJSON_IsNumber(had) &&
		    had->valuedouble > 0 && grace < had->valuedouble) {
			/* A shorter grace period (0: force) overrides. */
			if (grace == 0 && cur->nfinalizers == 0) {
				rev = finish_delete(rg, r, ns, name, obj);
				reg_ok(res, 200, obj, rev);
				return;
			}
			rev = mark_pod_deleting(rg, r, ns, name, obj, grace);
			reg_ok(res, 200, obj, rev);
			return;
		}
		if (!cur->deleting && grace > 0) {
			if (prop != NULL && strcmp(prop, "Foreground") == 0 &&
			    ndeps > 0)
				add_finalizer(obj, "foregroundDeletion");
			rev = mark_pod_deleting(rg, r, ns, name, obj, grace);
			reg_ok(res, 200, obj, rev);
			return;
		}
	}
	if (cur->deleting) {
		/* Already terminating: nothing more to start. */
		reg_ok(res, 200, obj, 0);
		return;
	}
	if (strcmp(r->store_key, "namespaces") == 0 ||
	    cur->nfinalizers > 0 ||
	    (prop != NULL && strcmp(prop, "Foreground") == 0 && ndeps > 0)) {
		/* Graceful: mark, and let finalizers and gc.c finish. */
		util_now(now);
		json_set_str(md, "deletionTimestamp", now);
		json_set_num(md, "deletionGracePeriodSeconds", 0);
		if (prop != NULL && strcmp(prop, "Foreground") == 0 &&
		    ndeps > 0)
			add_finalizer(obj, "foregroundDeletion");
		if (strcmp(r->store_key, "namespaces") == 0)
			json_set_str(json_obj(obj, "status"), "phase",
			    "Terminating");
		rev = store_put(rg->st, r->store_key, ns, name, obj);
		reg_ok(res, 200, obj, rev);
		return;
	}
	rev = finish_delete(rg, r, ns, name, obj);
	reg_ok(res, 200, obj, rev);
}

void
registry_remove(registry *rg, const resource *r, const char *ns,
    const char *name, struct reg_result *res)
{
	const store_obj *cur;
	cJSON *obj;
	uint64_t rev;

	memset(res, 0, sizeof *res);
	ns = r->namespaced ? ns : "";
	cur = store_get(rg->st, r->store_key, ns, name);
	if (cur == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	obj = store_obj_tree(cur);
	rev = finish_delete(rg, r, ns, name, obj);
	reg_ok(res, 200, obj, rev);
}
