/*
 * Discovery documents, built on demand from the resource registry (tens of
 * descriptors: rebuilding costs microseconds, so nothing is cached and a CRD
 * shows up immediately). We serve legacy discovery; clients that prefer the
 * aggregated form fall back to it. The OpenAPI v3 documents carry just what
 * kubectl needs to use server-side field validation: for each kind, its
 * object path with get/put/patch operations, the group-version-kind
 * extension and the fieldValidation parameter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/discovery.h"
#include "lib/json.h"
#include "registry/kinds/kinds.h"
#include "registry/resource.h"

/*
 * The Kubernetes minor the API follows: 1.34's, whose resource.k8s.io/v1 is
 * served, as the kube-apiserver anchor's. Clients take defaults from it:
 * vc-scheduler 1.14 sets its Kubernetes feature gates to this version's,
 * and at 1.32 had DynamicResourceAllocation off (its claims not allocated).
 * kubectl 1.32 warns of the skew in `kubectl version` only.
 */
#define K8S_MINOR "34"

cJSON *
discovery_version(void)
{
	cJSON *v = cJSON_CreateObject();

	cJSON_AddStringToObject(v, "major", "1");
	cJSON_AddStringToObject(v, "minor", K8S_MINOR);
	cJSON_AddStringToObject(v, "gitVersion", "v1." K8S_MINOR
	    ".0+volray." PACKAGE_VERSION);
	cJSON_AddStringToObject(v, "gitCommit", "volray");
	cJSON_AddStringToObject(v, "gitTreeState", "clean");
	cJSON_AddStringToObject(v, "buildDate", "2026-11-29T00:00:00Z");
	cJSON_AddStringToObject(v, "goVersion", "n/a");
	cJSON_AddStringToObject(v, "compiler", "gcc");
	cJSON_AddStringToObject(v, "platform", "linux/amd64");
	return v;
}

static cJSON *
strings(char **v, int n)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static cJSON *
verbs(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();

	for (; *v != NULL; v++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*v));
	return a;
}

static void
add_sub(cJSON *list, const resource *r, const char *sub, const char *kind,
    const char *const *vs)
{
	cJSON *e = cJSON_CreateObject();
	char name[256];

	snprintf(name, sizeof name, "%s/%s", r->plural, sub);
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "singularName", "");
	cJSON_AddBoolToObject(e, "namespaced", r->namespaced);
	cJSON_AddStringToObject(e, "kind", kind);
	cJSON_AddItemToObject(e, "verbs", verbs(vs));
	cJSON_AddItemToArray(list, e);
}

/* APIResourceList of one group-version. */
static cJSON *
resource_list(const char *group, const char *version)
{
	static const char *const all[] = { "create", "delete",
	    "deletecollection", "get", "list", "patch", "update", "watch",
	    NULL };
	static const char *const status[] = { "get", "patch", "update", NULL };
	static const char *const create[] = { "create", NULL };
	static const char *const getlist[] = { "get", "list", NULL };
	cJSON *doc = cJSON_CreateObject(), *list;
	char gv[256];
	int i, found = 0;

	snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
	cJSON_AddStringToObject(doc, "kind", "APIResourceList");
	cJSON_AddStringToObject(doc, "apiVersion", "v1");
	cJSON_AddStringToObject(doc, "groupVersion", gv);
	list = cJSON_AddArrayToObject(doc, "resources");
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		const struct kind_sub *s;
		cJSON *e;

		if (strcmp(r->group, group) != 0 ||
		    strcmp(r->version, version) != 0)
			continue;
		found = 1;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", r->plural);
		cJSON_AddStringToObject(e, "singularName", r->singular);
		cJSON_AddBoolToObject(e, "namespaced", r->namespaced);
		cJSON_AddStringToObject(e, "kind", r->kind);
		cJSON_AddItemToObject(e, "verbs", verbs(r->create_only ?
		    create : r->computed ? getlist : all));
		if (r->nshort > 0)
			cJSON_AddItemToObject(e, "shortNames",
			    strings(r->short_names, r->nshort));
		if (r->ncat > 0)
			cJSON_AddItemToObject(e, "categories",
			    strings(r->categories, r->ncat));
		cJSON_AddItemToArray(list, e);
		if (r->has_status)
			add_sub(list, r, "status", r->kind, status);
		if (resource_has_scale(r)) {
			add_sub(list, r, "scale", "Scale", status);
			cJSON_AddStringToObject(cJSON_GetArrayItem(list,
			    cJSON_GetArraySize(list) - 1), "group",
			    "autoscaling");
			cJSON_AddStringToObject(cJSON_GetArrayItem(list,
			    cJSON_GetArraySize(list) - 1), "version", "v1");
		}
		for (s = r->desc != NULL ? r->desc->subs : NULL;
		    s != NULL && s->name != NULL; s++) {
			const char *one[] = { s->verb, NULL };

			if (s->kind == NULL)
				continue;
			add_sub(list, r, s->name, s->kind, one);
			if (s->group == NULL)
				continue;
			cJSON_AddStringToObject(cJSON_GetArrayItem(list,
			    cJSON_GetArraySize(list) - 1), "group", s->group);
			cJSON_AddStringToObject(cJSON_GetArrayItem(list,
			    cJSON_GetArraySize(list) - 1), "version",
			    s->version);
		}
	}
	if (!found) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* The distinct groups with their versions, storage version preferred. */
static cJSON *
group_entry(const char *group)
{
	cJSON *g = cJSON_CreateObject(), *vs, *pref = NULL;
	int i, j, dup, pref_storage = 0;
	char gv[256];

	cJSON_AddStringToObject(g, "kind", "APIGroup");
	cJSON_AddStringToObject(g, "apiVersion", "v1");
	cJSON_AddStringToObject(g, "name", group);
	vs = cJSON_AddArrayToObject(g, "versions");
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);

		if (strcmp(r->group, group) != 0)
			continue;
		for (dup = 0, j = 0; j < i; j++)
			if (strcmp(resource_at(j)->group, group) == 0 &&
			    strcmp(resource_at(j)->version, r->version) == 0)
				dup = 1;
		if (dup)
			continue;
		snprintf(gv, sizeof gv, "%s/%s", group, r->version);
		{
			cJSON *v = cJSON_CreateObject();

			cJSON_AddStringToObject(v, "groupVersion", gv);
			cJSON_AddStringToObject(v, "version", r->version);
			cJSON_AddItemToArray(vs, v);
			/* The first storage version: scheduling.k8s.io's v1
			   before the v1alpha2 of its gang kinds. */
			if (pref == NULL || (r->storage && !pref_storage)) {
				pref_storage = r->storage;
				cJSON_Delete(pref);
				pref = cJSON_Duplicate(v, 1);
			}
		}
	}
	if (pref != NULL)
		cJSON_AddItemToObject(g, "preferredVersion", pref);
	return g;
}

static cJSON *
group_list(void)
{
	cJSON *doc = cJSON_CreateObject(), *groups;
	int i, j, dup;

	cJSON_AddStringToObject(doc, "kind", "APIGroupList");
	cJSON_AddStringToObject(doc, "apiVersion", "v1");
	groups = cJSON_AddArrayToObject(doc, "groups");
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);

		if (*r->group == '\0')
			continue;
		for (dup = 0, j = 0; j < i; j++)
			if (strcmp(resource_at(j)->group, r->group) == 0)
				dup = 1;
		if (!dup) {
			cJSON *g = group_entry(r->group);

			json_del(g, "kind");
			json_del(g, "apiVersion");
			cJSON_AddItemToArray(groups, g);
		}
	}
	return doc;
}

cJSON *
discovery_document(const char *path)
{
	char group[256], version[64];
	int i;

	if (strcmp(path, "/api") == 0 || strcmp(path, "/api/") == 0) {
		cJSON *d = cJSON_CreateObject(), *cidr, *e;

		cJSON_AddStringToObject(d, "kind", "APIVersions");
		cJSON_AddItemToObject(d, "versions", cJSON_CreateStringArray(
		    (const char *[]){ "v1" }, 1));
		cidr = cJSON_AddArrayToObject(d, "serverAddressByClientCIDRs");
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "clientCIDR", "0.0.0.0/0");
		cJSON_AddStringToObject(e, "serverAddress", "127.0.0.1:6443");
		cJSON_AddItemToArray(cidr, e);
		return d;
	}
	if (strcmp(path, "/apis") == 0 || strcmp(path, "/apis/") == 0)
		return group_list();
	/* The Python client's get_api_resources asks for /api/v1/. */
	if (strcmp(path, "/api/v1") == 0 || strcmp(path, "/api/v1/") == 0)
		return resource_list("", "v1");
	if (sscanf(path, "/apis/%255[^/]/%63[^/]", group, version) == 2)
		return resource_list(group, version);
	if (sscanf(path, "/apis/%255[^/]", group) == 1) {
		for (i = 0; i < resource_count(); i++)
			if (strcmp(resource_at(i)->group, group) == 0)
				return group_entry(group);
	}
	return NULL;
}

static cJSON *
operation(const resource *r, const char *action)
{
	cJSON *op = cJSON_CreateObject(), *gvk, *params, *p, *sch;

	cJSON_AddStringToObject(op, "operationId", action);
	cJSON_AddStringToObject(op, "x-kubernetes-action", action);
	gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
	cJSON_AddStringToObject(gvk, "group", r->group);
	cJSON_AddStringToObject(gvk, "version", r->version);
	cJSON_AddStringToObject(gvk, "kind", r->kind);
	params = cJSON_AddArrayToObject(op, "parameters");
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", "fieldValidation");
	cJSON_AddStringToObject(p, "in", "query");
	cJSON_AddStringToObject(p, "description", "fieldValidation "
	    "instructs the server on how to handle objects in the request "
	    "containing unknown or duplicate fields.");
	sch = cJSON_AddObjectToObject(p, "schema");
	cJSON_AddStringToObject(sch, "type", "string");
	cJSON_AddBoolToObject(sch, "uniqueItems", 1);
	cJSON_AddItemToArray(params, p);
	cJSON_AddObjectToObject(op, "responses");
	return op;
}

/* A group-version's OpenAPI document with one path per kind. */
static cJSON *
openapi_gv(const char *group, const char *version)
{
	cJSON *doc = cJSON_CreateObject(), *paths, *info, *schemas;
	char path[512];
	int i, found = 0;

	cJSON_AddStringToObject(doc, "openapi", "3.0.0");
	info = cJSON_AddObjectToObject(doc, "info");
	cJSON_AddStringToObject(info, "title", "Kubernetes");
	cJSON_AddStringToObject(info, "version", "v1." K8S_MINOR ".0");
	paths = cJSON_AddObjectToObject(doc, "paths");
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		cJSON *item;

		if (strcmp(r->group, group) != 0 ||
		    strcmp(r->version, version) != 0)
			continue;
		found = 1;
		if (r->create_only)
			continue;
		if (*group)
			snprintf(path, sizeof path, "/apis/%s/%s/%s%s/{name}",
			    group, version, r->namespaced ?
			    "namespaces/{namespace}/" : "", r->plural);
		else
			snprintf(path, sizeof path, "/api/%s/%s%s/{name}",
			    version, r->namespaced ?
			    "namespaces/{namespace}/" : "", r->plural);
		item = cJSON_AddObjectToObject(paths, path);
		cJSON_AddItemToObject(item, "get", operation(r, "get"));
		/* Computed kinds (APIServices, metrics) are read-only. */
		if (r->computed)
			continue;
		cJSON_AddItemToObject(item, "put", operation(r, "put"));
		cJSON_AddItemToObject(item, "patch", operation(r, "patch"));
		cJSON_AddItemToObject(item, "delete", operation(r, "delete"));
	}
	schemas = cJSON_AddObjectToObject(cJSON_AddObjectToObject(doc,
	    "components"), "schemas");
	/* A CRD's schema lets `kubectl explain` describe its fields. */
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		cJSON *sch, *gvks, *gvk;
		char key[512];

		if (r->openapi == NULL || strcmp(r->group, group) != 0 ||
		    strcmp(r->version, version) != 0)
			continue;
		sch = cJSON_Duplicate(r->openapi, 1);
		gvks = cJSON_CreateArray();
		gvk = cJSON_CreateObject();
		cJSON_AddStringToObject(gvk, "group", r->group);
		cJSON_AddStringToObject(gvk, "kind", r->kind);
		cJSON_AddStringToObject(gvk, "version", r->version);
		cJSON_AddItemToArray(gvks, gvk);
		json_set(sch, "x-kubernetes-group-version-kind", gvks);
		snprintf(key, sizeof key, "%s.%s.%s", r->group, r->version,
		    r->kind);
		cJSON_AddItemToObject(schemas, key, sch);
	}
	if (!found) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

cJSON *
discovery_openapi(const char *path)
{
	char group[256], version[64], key[512], url[768];
	cJSON *root, *paths, *e;
	int i, j, dup;

	if (strcmp(path, "/openapi/v3") == 0 ||
	    strcmp(path, "/openapi/v3/") == 0) {
		root = cJSON_CreateObject();
		paths = cJSON_AddObjectToObject(root, "paths");
		for (i = 0; i < resource_count(); i++) {
			const resource *r = resource_at(i);

			for (dup = 0, j = 0; j < i; j++)
				if (strcmp(resource_at(j)->gv, r->gv) == 0)
					dup = 1;
			if (dup)
				continue;
			snprintf(key, sizeof key, "%s%s", *r->group ?
			    "apis/" : "api/", r->gv);
			snprintf(url, sizeof url, "/openapi/v3/%s?hash=%llx",
			    key, (unsigned long long)resource_generation());
			e = cJSON_AddObjectToObject(paths, key);
			cJSON_AddStringToObject(e, "serverRelativeURL", url);
		}
		return root;
	}
	if (strcmp(path, "/openapi/v3/api/v1") == 0)
		return openapi_gv("", "v1");
	if (sscanf(path, "/openapi/v3/apis/%255[^/]/%63[^/]", group,
	    version) == 2)
		return openapi_gv(group, version);
	return NULL;
}
