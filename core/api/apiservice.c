/*
 * apiregistration.k8s.io/v1 APIServices, as kube-apiserver's aggregator
 * serves them: the ones users write are stored (registry: admission in
 * registry/admission_apiservice.c; status by apiservice_avail.c); beside
 * them, one Local APIService for each group-version this server serves
 * (v1., v1.apps, v1beta1.metrics.k8s.io, the CRDs' groups), made when
 * asked from the resource registry and never stored, as the aggregator's
 * autoregistration keeps its local ones. Every Local one is Available,
 * spec.service null. The priorities are kube-apiserver's for the groups
 * it has, 1000 and 100 for the others, as it gives CRD groups. A list
 * holds both, in name order; a get of a Local name answers it; a write to
 * one is refused (409), where kube-apiserver would write it and then put
 * its own back. A watch sees the stored ones only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "api/table.h"
#include "auth/rbac.h"
#include "lib/json.h"
#include "lib/selector.h"
#include "registry/admission.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/http.h"
#include "registry/resource.h"
#include "registry/status.h"

static const struct {
	const char *group;
	int group_min, version;
} priorities[] = {
	{ "", 18000, 1 }, { "apps", 17800, 15 }, { "policy", 17600, 15 },
	{ "batch", 17400, 15 }, { "networking.k8s.io", 17200, 15 },
	{ "authentication.k8s.io", 17700, 15 },
	{ "authorization.k8s.io", 17600, 15 },
	{ "rbac.authorization.k8s.io", 17000, 15 },
	{ "apiextensions.k8s.io", 16700, 15 },
	{ "scheduling.k8s.io", 16600, 15 },
	{ "coordination.k8s.io", 16500, 15 },
	{ "storage.k8s.io", 16800, 15 },
	{ "discovery.k8s.io", 16200, 15 },
	{ "resource.k8s.io", 15900, 15 },
	{ "metrics.k8s.io", 100, 100 },
};

#define APISERVICES	"apiservices.apiregistration.k8s.io"

static char started[32];

static cJSON *
item(const resource *r)
{
	cJSON *o = cJSON_CreateObject(), *md, *spec;
	char name[512], uid[37];
	int gmin = 1000, vprio = 100;
	unsigned h;
	size_t i;

	if (*started == '\0')
		util_now(started);	/* a unit test without apiservice_start */
	snprintf(name, sizeof name, "%s.%s", r->version, r->group);
	for (i = 0; i < sizeof priorities / sizeof priorities[0]; i++)
		if (strcmp(priorities[i].group, r->group) == 0) {
			gmin = priorities[i].group_min;
			vprio = priorities[i].version;
		}
	/* kube-aggregator's default for an alpha version of a group. */
	if (r->builtin && strstr(r->version, "alpha") != NULL && vprio == 15)
		vprio = 9;
	/* A uid that stays the same for the same name. */
	h = (uint32_t)util_fnv1a(UTIL_FNV_SEED, name, strlen(name));
	snprintf(uid, sizeof uid, "%08x-0000-4000-8000-%012x", h, h);
	cJSON_AddStringToObject(o, "kind", "APIService");
	cJSON_AddStringToObject(o, "apiVersion", "apiregistration.k8s.io/v1");
	md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "uid", uid);
	cJSON_AddStringToObject(md, "creationTimestamp", started);
	json_set_str(json_obj(md, "labels"),
	    "kube-aggregator.kubernetes.io/automanaged", r->builtin ?
	    "onstart" : "true");
	spec = cJSON_AddObjectToObject(o, "spec");
	if (*r->group)
		cJSON_AddStringToObject(spec, "group", r->group);
	cJSON_AddStringToObject(spec, "version", r->version);
	cJSON_AddNumberToObject(spec, "groupPriorityMinimum", gmin);
	cJSON_AddNumberToObject(spec, "versionPriority", vprio);
	admission_apiservice_local_status(cJSON_AddObjectToObject(o, "status"),
	    started);
	return o;
}

/* The first descriptor of each group-version, in registration order. */
static const resource *
nth_gv(int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (strcmp(resource_at(j)->gv, resource_at(i)->gv) == 0)
			return NULL;
	return resource_at(i);
}

/* Order list items by metadata.name. */
static int
by_name(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a;
	const cJSON *y = *(const cJSON *const *)b;

	return strcmp(json_str(x, "metadata.name"),
	    json_str(y, "metadata.name"));
}

/* The stored ones and the Local ones not shadowed by a stored name. */
static void
list(api *a, http_req *req, struct route *rt)
{
	store_obj *const *objs;
	cJSON **v = NULL, *out, *items, *t = NULL;
	const resource *r;
	selector *labels = NULL, *fields = NULL;
	char *ls = http_query_get(req->query, "labelSelector"), *cause = NULL;
	char *fs = http_query_get(req->query, "fieldSelector");
	char rv[32], name[512];
	size_t n, i, nv = 0;
	int j;

	rt->verb = "list";
	if ((ls != NULL && *ls &&
	    (labels = selector_parse_labels(ls, &cause)) == NULL) ||
	    (fs != NULL && *fs &&
	    (fields = selector_parse_fields(fs, &cause)) == NULL)) {
		reply_status(req, rt, status_bad_request("%s: %s", labels ==
		    NULL && ls != NULL && *ls ? "unable to parse requirement" :
		    "invalid field selector", cause ? cause : ""));
		free(cause);
		free(ls);
		free(fs);
		selector_free(labels);
		return;
	}
	free(ls);
	free(fs);
	snprintf(rv, sizeof rv, "%llu", (unsigned long long)store_rev(a->st));
	n = store_list(a->st, rt->r->store_key, NULL, &objs);
	v = xreallocarray(NULL, n + (size_t)resource_count() + 1, sizeof *v);
	for (i = 0; i < n; i++)
		v[nv++] = store_obj_tree(objs[i]);
	for (j = 0; j < resource_count(); j++) {
		if ((r = nth_gv(j)) == NULL)
			continue;
		snprintf(name, sizeof name, "%s.%s", r->version, r->group);
		if (store_get(a->st, rt->r->store_key, "", name) == NULL)
			v[nv++] = item(r);
	}
	qsort(v, nv, sizeof *v, by_name);
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "kind", "APIServiceList");
	cJSON_AddStringToObject(out, "apiVersion", "apiregistration.k8s.io/v1");
	cJSON_AddStringToObject(json_obj(out, "metadata"), "resourceVersion",
	    rv);
	items = cJSON_AddArrayToObject(out, "items");
	if (reply_wants_table(req))
		t = table_new(rt->r, rv);
	for (i = 0; i < nv; i++) {
		if ((labels != NULL && !selector_match_labels(labels,
		    json_at(v[i], "metadata.labels"))) || (fields != NULL &&
		    !selector_match_fields(fields, v[i]))) {
			cJSON_Delete(v[i]);
			continue;
		}
		if (t != NULL) {
			table_add_row(t, rt->r, v[i], TABLE_METADATA);
			cJSON_Delete(v[i]);
		} else
			cJSON_AddItemToArray(items, v[i]);
	}
	free(v);
	selector_free(labels);
	selector_free(fields);
	if (t != NULL) {
		cJSON_Delete(out);
		out = t;
	}
	reply_json(req, rt, 200, out);
}

int
apiservice_serve(api *a, http_req *req, struct route *rt, int watch)
{
	const char *m = req->method;
	int get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	const resource *r;

	watch = watch || http_query_bool(req->query, "watch", 0);
	if (rt->name == NULL) {
		if (!get || watch)
			return 0;
		list(a, req, rt);
		return 1;
	}
	if ((r = admission_apiservice_local(rt->name)) == NULL ||
	    store_get(a->st, rt->r->store_key, "", rt->name) != NULL ||
	    (get && watch))
		return 0;
	if (get) {
		cJSON *o = item(r);

		rt->verb = "get";
		if (rt->sub != NULL && strcmp(rt->sub, "status") != 0) {
			cJSON_Delete(o);
			return 0;
		}
		if (reply_wants_table(req)) {
			cJSON *t = table_new(rt->r, "");

			table_add_row(t, rt->r, o, TABLE_METADATA);
			cJSON_Delete(o);
			o = t;
		}
		reply_json(req, rt, 200, o);
		return 1;
	}
	rt->verb = strcmp(m, "DELETE") == 0 ? "delete" : "update";
	reply_status(req, rt, status_error(409, "Conflict", "Operation cannot "
	    "be fulfilled on %s \"%s\": served by this server itself (a "
	    "Local APIService, not stored): it cannot be created, replaced or "
	    "deleted", resource_qualified(rt->r), rt->name));
	return 1;
}

/* The stored APIService version.group if it has a service, or NULL. */
static cJSON *
remote_of(api *a, const char *group, const char *version)
{
	char name[512];
	const store_obj *o;
	cJSON *as;

	snprintf(name, sizeof name, "%s.%s", version, group);
	/* Every request under /apis asks: the store first, it is cheaper. */
	if ((o = store_get(a->st, APISERVICES, "", name)) == NULL ||
	    admission_apiservice_local(name) != NULL)
		return NULL;
	as = store_obj_tree(o);
	if (!cJSON_IsObject(json_at(as, "spec.service"))) {
		cJSON_Delete(as);
		return NULL;
	}
	return as;
}

/*
 * Authorize a request for an aggregated group as kube-apiserver does
 * before its aggregator proxies it: RBAC on the request's attributes
 * (/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUB]]), the
 * discovery path as a non-resource URL. 0, or -1 after a 403.
 */
static int
may_proxy(api *a, http_req *req, struct route *rt, const char *group)
{
	char *copy, *seg[8], *save = NULL, *p, verb[16], *reason = NULL;
	const char *m = req->method;
	rbac_attrs at;
	int n = 0, i = 0, ok;

	if (a->authz == NULL || rt->user == NULL)
		return 0;
	copy = xstrdup(req->path);
	for (p = strtok_r(copy, "/", &save); p != NULL && n < 8;
	    p = strtok_r(NULL, "/", &save))
		seg[n++] = p;
	memset(&at, 0, sizeof at);
	at.api_group = at.resource = at.subresource = at.ns = at.name = "";
	at.path = req->path;
	/* seg: apis GROUP VERSION [namespaces NS] RESOURCE [NAME [SUB]] */
	i = 3;
	if (n >= i + 2 && strcmp(seg[i], "namespaces") == 0) {
		at.ns = seg[i + 1];
		i += 2;
	}
	if (n <= 3 || n == i) {
		for (n = 0; m[n] && n < (int)sizeof verb - 1; n++)
			verb[n] = (char)(m[n] | 0x20);
		verb[n] = '\0';
		at.verb = verb;
		at.ns = "";
	} else {
		at.path = NULL;
		at.api_group = group;
		at.resource = seg[i];
		if (n > i + 1)
			at.name = seg[i + 1];
		if (n > i + 2)
			at.subresource = seg[i + 2];
		if (strcmp(m, "POST") == 0)
			at.verb = "create";
		else if (strcmp(m, "PUT") == 0)
			at.verb = "update";
		else if (strcmp(m, "PATCH") == 0)
			at.verb = "patch";
		else if (strcmp(m, "DELETE") == 0)
			at.verb = *at.name ? "delete" : "deletecollection";
		else if (http_query_bool(req->query, "watch", 0))
			at.verb = "watch";
		else
			at.verb = *at.name ? "get" : "list";
	}
	ok = rbac_check(a->authz, rt->user, &at, &reason);
	if (!ok)
		reply_status(req, rt, rbac_forbidden_reason(rt->user, &at,
		    reason));
	free(reason);
	free(copy);
	return ok ? 0 : -1;
}

int
apiservice_proxy(api *a, http_req *req, struct route *rt, const char *group,
    const char *version)
{
	const char *hdr[ROUTE_MAX_GROUPS + 3];
	char *lines[ROUTE_MAX_GROUPS + 2], base[400], msg[1024], *path;
	const char *reason;
	cJSON *as;
	size_t nl = 0, i;
	int g;

	if ((as = remote_of(a, group, version)) == NULL)
		return 0;
	rt->verb = "proxy";
	if (a->authn != NULL && rt->user == NULL) {
		reply_status(req, rt, status_error(401, "Unauthorized",
		    "Unauthorized"));
		goto done;
	}
	if (may_proxy(a, req, rt, group) != 0)
		goto done;
	if (!json_condition_true(as, "Available")) {
		reply_status(req, rt, status_error(503, "ServiceUnavailable",
		    "the server is currently unable to handle the request "
		    "(APIService %s is not available)", json_str(as,
		    "metadata.name")));
		goto done;
	}
	if (apiservice_backend(a, as, base, sizeof base, &reason, msg,
	    sizeof msg, NULL, 0) != 0) {
		reply_status(req, rt, status_error(503, "ServiceUnavailable",
		    "service unavailable: %s", msg));
		goto done;
	}
	/* Who asks, as kube-aggregator tells the server it proxies to. */
	if (rt->user != NULL) {
		lines[nl++] = util_printf("X-Remote-User: %s", rt->user->name);
		for (g = 0; g < rt->user->ngroups && nl < ROUTE_MAX_GROUPS + 1;
		    g++)
			lines[nl++] = util_printf("X-Remote-Group: %s",
			    rt->user->groups[g]);
	}
	for (i = 0; i < nl; i++)
		hdr[i] = lines[i];
	hdr[nl] = NULL;
	path = util_printf("%s%s%s", req->path, *req->query ? "?" : "",
	    req->query);
	nodeproxy_forward_with(a, req, rt, apiservice_client(a, as), base,
	    path, hdr);
	free(path);
	for (i = 0; i < nl; i++)
		free(lines[i]);
done:
	cJSON_Delete(as);
	return 1;
}

/* Whether version.group is a stored APIService with a service. */
static int
is_remote(api *a, const char *group, const char *version)
{
	cJSON *as = remote_of(a, group, version);

	cJSON_Delete(as);
	return as != NULL;
}

/*
 * Add group/version to a group list's entry (made when missing); the
 * version of the highest priority is the preferred one, as
 * kube-aggregator sorts them (a local group keeps its own).
 */
static void
add_version(cJSON *groups, const char *group, const char *version, int prio)
{
	cJSON *g = NULL, *it, *v, *best;
	char gv[600];

	cJSON_ArrayForEach(it, groups)
		if (strcmp(json_str(it, "name") ? json_str(it, "name") : "",
		    group) == 0)
			g = it;
	if (g == NULL) {
		g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "name", group);
		cJSON_AddArrayToObject(g, "versions");
		cJSON_AddNumberToObject(g, "\001prio", -1);
		cJSON_AddItemToArray(groups, g);
	}
	snprintf(gv, sizeof gv, "%s/%s", group, version);
	cJSON_ArrayForEach(it, json_at(g, "versions"))
		if (strcmp(json_str(it, "groupVersion"), gv) == 0)
			return;
	v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "groupVersion", gv);
	cJSON_AddStringToObject(v, "version", version);
	cJSON_AddItemToArray(json_at(g, "versions"), v);
	best = cJSON_GetObjectItemCaseSensitive(g, "\001prio");
	if (best != NULL && prio > best->valueint) {
		cJSON_SetNumberValue(best, prio);
		json_set(g, "preferredVersion", cJSON_Duplicate(v, 1));
	}
}

cJSON *
apiservice_discovery(api *a, const char *path, cJSON *doc)
{
	store_obj *const *objs;
	char group[256];
	cJSON *groups, *g;
	size_t n, i;
	int one = 0;

	if (strcmp(path, "/apis") != 0 && strcmp(path, "/apis/") != 0) {
		/* /apis/GROUP of a group no local resource has. */
		if (doc != NULL || sscanf(path, "/apis/%255[^/]", group) != 1 ||
		    strchr(path + 6, '/') != NULL)
			return doc;
		one = 1;
	}
	n = store_list(a->st, APISERVICES, NULL, &objs);
	if (n == 0)
		return doc;
	groups = one ? cJSON_CreateArray() : json_at(doc, "groups");
	for (i = 0; i < n; i++) {
		cJSON *as = store_obj_tree(objs[i]);
		const char *gr = json_str(as, "spec.group");
		const char *ver = json_str(as, "spec.version");
		const cJSON *vp = json_at(as, "spec.versionPriority");

		if (gr != NULL && ver != NULL && *gr &&
		    (!one || strcmp(gr, group) == 0) && is_remote(a, gr, ver))
			add_version(groups, gr, ver, cJSON_IsNumber(vp) ?
			    vp->valueint : 0);
		cJSON_Delete(as);
	}
	cJSON_ArrayForEach(g, groups)
		cJSON_DeleteItemFromObjectCaseSensitive(g, "\001prio");
	if (!one)
		return doc;
	g = cJSON_DetachItemFromArray(groups, 0);
	cJSON_Delete(groups);
	if (g == NULL)
		return NULL;
	cJSON_AddStringToObject(g, "kind", "APIGroup");
	cJSON_AddStringToObject(g, "apiVersion", "v1");
	return g;
}

void
apiservice_start(api *a)
{
	/* The Local ones are as old as this server. */
	util_now(started);
	apiservice_avail_start(a);
}
