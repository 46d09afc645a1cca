/*
 * apiregistration.k8s.io/v1 APIServices, read-only: one for each
 * group-version this server serves (v1., v1.apps, v1beta1.metrics.k8s.io,
 * the CRDs' groups), made when asked from the resource registry, as
 * kube-apiserver's aggregator lists its local APIServices. Every one is
 * Local (served in this process, spec.service null) and Available. The
 * priorities are kube-apiserver's for the groups it has, 1000 and 100 for
 * the others, as it gives CRD groups. get and list only: nothing is
 * stored, so nothing can be written or watched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "api/table.h"
#include "lib/json.h"
#include "lib/util.h"
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
	{ "discovery.k8s.io", 16200, 15 },
	{ "metrics.k8s.io", 100, 100 },
};

static char started[32];

static cJSON *
item(const resource *r)
{
	cJSON *o = cJSON_CreateObject(), *md, *spec, *c, *conds;
	char name[512], uid[37];
	int gmin = 1000, vprio = 100;
	unsigned h = 2166136261u;
	size_t i;

	if (*started == '\0')
		util_now(started);
	snprintf(name, sizeof name, "%s.%s", r->version, r->group);
	for (i = 0; i < sizeof priorities / sizeof priorities[0]; i++)
		if (strcmp(priorities[i].group, r->group) == 0) {
			gmin = priorities[i].group_min;
			vprio = priorities[i].version;
		}
	/* A uid that stays the same for the same name. */
	for (i = 0; name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
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
	conds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(o, "status"),
	    "conditions");
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "Available");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "lastTransitionTime", started);
	cJSON_AddStringToObject(c, "reason", "Local");
	cJSON_AddStringToObject(c, "message",
	    "Local APIServices are always available");
	cJSON_AddItemToArray(conds, c);
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

void
apiservice_get(api *a, http_req *req, struct route *rt)
{
	const resource *r;
	char name[512];
	int i;

	(void)a;
	rt->verb = "get";
	for (i = 0; i < resource_count(); i++) {
		if ((r = nth_gv(i)) == NULL)
			continue;
		snprintf(name, sizeof name, "%s.%s", r->version, r->group);
		if (strcmp(name, rt->name) == 0) {
			cJSON *o = item(r);

			if (reply_wants_table(req)) {
				cJSON *t = table_new(rt->r, "");

				table_add_row(t, rt->r, o, TABLE_METADATA);
				cJSON_Delete(o);
				o = t;
			}
			reply_json(req, rt, 200, o);
			return;
		}
	}
	reply_status(req, rt, status_error(404, "NotFound", "%s \"%s\" not "
	    "found", resource_qualified(rt->r), rt->name));
}

void
apiservice_list(api *a, http_req *req, struct route *rt)
{
	cJSON *list, *items, *t = NULL;
	const resource *r;
	int i;

	(void)a;
	rt->verb = "list";
	list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "kind", "APIServiceList");
	cJSON_AddStringToObject(list, "apiVersion", "apiregistration.k8s.io/v1");
	json_obj(list, "metadata");
	items = cJSON_AddArrayToObject(list, "items");
	if (reply_wants_table(req))
		t = table_new(rt->r, "");
	for (i = 0; i < resource_count(); i++) {
		if ((r = nth_gv(i)) == NULL)
			continue;
		if (t != NULL) {
			cJSON *o = item(r);

			table_add_row(t, rt->r, o, TABLE_METADATA);
			cJSON_Delete(o);
		} else
			cJSON_AddItemToArray(items, item(r));
	}
	if (t != NULL) {
		cJSON_Delete(list);
		list = t;
	}
	reply_json(req, rt, 200, list);
}
