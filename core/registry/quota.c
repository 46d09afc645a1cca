/*
 * ResourceQuota admission, as kube-apiserver's ResourceQuota plugin: an
 * object created in a namespace with ResourceQuotas must not take any
 * resource the quotas limit (spec.hard) past its limit. What an object
 * takes: one of count/<resource> (count/pods, count/deployments.apps)
 * and of the old names of the core kinds (pods, services, configmaps,
 * secrets, replicationcontrollers, resourcequotas), services.nodeports
 * and services.loadbalancers by type, and for a pod that has not
 * finished, its requests (requests.cpu, requests.memory, or cpu, memory)
 * and limits (limits.cpu, limits.memory): the sum of its containers', or
 * its largest init container's when larger. What is used is counted from
 * the store at the moment of the request (so two creations in a row are
 * both counted, without waiting for the quota's status, which
 * lua/controllers/resourcequota.lua keeps for people to read). A quota
 * on cpu or memory wants every container of a pod to say its own. Over a
 * limit is 403 Forbidden in the plugin's words: "exceeded quota: NAME,
 * requested: ..., used: ..., limited: ...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "registry/quota.h"
#include "registry/status.h"

/* Old names of the core kinds' counts. */
static const char *const legacy[] = { "pods", "services", "configmaps",
    "secrets", "replicationcontrollers", "resourcequotas",
    "persistentvolumeclaims", NULL };

static int
is_compute(const char *key)
{
	return strcmp(key, "cpu") == 0 || strcmp(key, "memory") == 0 ||
	    strncmp(key, "requests.", 9) == 0 ||
	    strncmp(key, "limits.", 7) == 0;
}

static int
pod_finished(const cJSON *pod)
{
	const char *ph = json_str(pod, "status.phase");

	return ph != NULL && (strcmp(ph, "Succeeded") == 0 ||
	    strcmp(ph, "Failed") == 0);
}

/* A ResourceList summed over containers, the larger of that and any one
   init container (a pod's effective requests or limits). */
static double
pod_amount(const cJSON *pod, const char *list, const char *res)
{
	const cJSON *c;
	double sum = 0, init = 0, v;
	char path[64];

	snprintf(path, sizeof path, "resources.%s", list);
	cJSON_ArrayForEach(c, json_at(pod, "spec.containers"))
		if (quantity_json(cJSON_GetObjectItemCaseSensitive(json_at(c,
		    path), res), &v) == 0)
			sum += v;
	cJSON_ArrayForEach(c, json_at(pod, "spec.initContainers"))
		if (quantity_json(cJSON_GetObjectItemCaseSensitive(json_at(c,
		    path), res), &v) == 0 && v > init)
			init = v;
	return sum > init ? sum : init;
}

/* How much of key the object (of resource r) takes. */
static double
usage(const resource *r, const cJSON *obj, const char *key)
{
	const char *type;
	int i;

	if (strcmp(key, "count/pods") == 0)
		key = "pods";
	if (strncmp(key, "count/", 6) == 0)
		return strcmp(key + 6, r->store_key) == 0;
	for (i = 0; legacy[i] != NULL; i++)
		if (strcmp(key, legacy[i]) == 0)
			return strcmp(key, r->store_key) == 0 &&
			    (strcmp(key, "pods") != 0 || !pod_finished(obj));
	if (strcmp(r->store_key, "services") == 0) {
		type = json_str(obj, "spec.type");
		if (strcmp(key, "services.nodeports") == 0)
			return type != NULL && (strcmp(type, "NodePort") == 0 ||
			    strcmp(type, "LoadBalancer") == 0);
		if (strcmp(key, "services.loadbalancers") == 0)
			return type != NULL && strcmp(type, "LoadBalancer") == 0;
		return 0;
	}
	if (strcmp(r->store_key, "pods") != 0 || pod_finished(obj) ||
	    !is_compute(key))
		return 0;
	if (strcmp(key, "cpu") == 0 || strcmp(key, "memory") == 0)
		return pod_amount(obj, "requests", key);
	if (strncmp(key, "requests.", 9) == 0)
		return pod_amount(obj, "requests", key + 9);
	return pod_amount(obj, "limits", key + 7);
}

/* The resource whose objects key counts, or NULL. */
static const resource *
counted(const char *key)
{
	int i;

	if (strncmp(key, "count/", 6) == 0) {
		for (i = 0; i < resource_count(); i++)
			if (resource_at(i)->storage && strcmp(resource_at(i)->
			    store_key, key + 6) == 0)
				return resource_at(i);
		return NULL;
	}
	if (strncmp(key, "services.", 9) == 0)
		return resource_find("", "v1", "services");
	for (i = 0; legacy[i] != NULL; i++)
		if (strcmp(key, legacy[i]) == 0)
			return resource_find("", "v1", key);
	return resource_find("", "v1", "pods");
}

static double
used_now(store *st, const char *ns, const char *key)
{
	const resource *r = counted(key);
	store_obj *const *objs;
	double sum = 0;
	size_t n, i;

	if (r == NULL)
		return 0;
	n = store_list(st, r->store_key, ns, &objs);
	for (i = 0; i < n; i++) {
		cJSON *t;

		if (strncmp(key, "count/", 6) == 0 &&
		    strcmp(key, "count/pods") != 0) {
			sum++;
			continue;
		}
		t = store_obj_tree(objs[i]);
		sum += usage(r, t, key);
		cJSON_Delete(t);
	}
	return sum;
}

static int
binary(const char *key)
{
	return strstr(key, "memory") != NULL || strstr(key, "storage") != NULL;
}

/* key=value, sorted keys, as the plugin's prettyPrint. */
static void
pretty(char *out, size_t n, const char *const *keys, const double *vals,
    int count)
{
	size_t len = 0;
	char q[32];
	int i;

	out[0] = '\0';
	for (i = 0; i < count; i++) {
		quantity_format(vals[i], binary(keys[i]), q);
		len += snprintf(out + len, len < n ? n - len : 0, "%s%s=%s",
		    i ? "," : "", keys[i], q);
	}
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const cJSON *const *)a)[0]->string,
	    ((const cJSON *const *)b)[0]->string);
}

/* A pod that does not say the compute resources the quota limits. */
static int
missing(const cJSON *pod, const cJSON *hard, char *out, size_t n)
{
	static const struct { const char *key, *list, *res; } need[] = {
		{ "cpu", "requests", "cpu" }, { "limits.cpu", "limits", "cpu" },
		{ "limits.memory", "limits", "memory" },
		{ "memory", "requests", "memory" },
		{ "requests.cpu", "requests", "cpu" },
		{ "requests.memory", "requests", "memory" }, { NULL, NULL, NULL }
	};
	const cJSON *c;
	size_t len = 0;
	int i, found = 0;

	for (i = 0; need[i].key != NULL; i++) {
		char names[512] = "", path[64];
		size_t nl = 0;

		if (cJSON_GetObjectItemCaseSensitive(hard, need[i].key) == NULL)
			continue;
		snprintf(path, sizeof path, "resources.%s", need[i].list);
		cJSON_ArrayForEach(c, json_at(pod, "spec.containers"))
			if (cJSON_GetObjectItemCaseSensitive(json_at(c, path),
			    need[i].res) == NULL)
				nl += snprintf(names + nl, nl < sizeof names ?
				    sizeof names - nl : 0, "%s%s", nl ? "," : "",
				    json_str(c, "name") ? json_str(c, "name") :
				    "");
		if (nl == 0)
			continue;
		len += snprintf(out + len, len < n ? n - len : 0, "%s%s for: %s",
		    found++ ? "; " : "must specify ", need[i].key, names);
	}
	return found;
}

/* One quota against the new object: NULL, or the Forbidden Status. */
static cJSON *
check_quota(store *st, const resource *r, const char *ns, const cJSON *obj,
    const cJSON *quota)
{
	const cJSON *hard = json_at(quota, "spec.hard"), *h, *sorted[64];
	const char *keys[64], *qname = json_str(quota, "metadata.name");
	const char *name = json_str(obj, "metadata.name");
	double req[64], used[64], lim[64];
	char a[1024], b[1024], c[1024], why[1024];
	int n = 0, ns_ = 0, i;

	if (strcmp(r->store_key, "pods") == 0 &&
	    missing(obj, hard, why, sizeof why))
		return status_error(403, "Forbidden", "%s \"%s\" is forbidden: "
		    "failed quota: %s: %s", resource_qualified(r), name ? name :
		    "", qname ? qname : "", why);
	cJSON_ArrayForEach(h, hard)
		if (ns_ < 64)
			sorted[ns_++] = h;
	qsort(sorted, ns_, sizeof sorted[0], by_name);
	for (i = 0; i < ns_; i++) {
		double want = usage(r, obj, sorted[i]->string), max, now;

		if (want <= 0 || quantity_json(sorted[i], &max) != 0)
			continue;
		now = used_now(st, ns, sorted[i]->string);
		if (now + want <= max + 1e-9)
			continue;
		keys[n] = sorted[i]->string;
		req[n] = want;
		used[n] = now;
		lim[n++] = max;
	}
	if (n == 0)
		return NULL;
	pretty(a, sizeof a, keys, req, n);
	pretty(b, sizeof b, keys, used, n);
	pretty(c, sizeof c, keys, lim, n);
	return status_error(403, "Forbidden", "%s \"%s\" is forbidden: "
	    "exceeded quota: %s, requested: %s, used: %s, limited: %s",
	    resource_qualified(r), name ? name : "", qname ? qname : "", a, b,
	    c);
}

cJSON *
quota_admit(store *st, const resource *r, const char *ns, const cJSON *obj)
{
	store_obj *const *objs;
	size_t n, i;
	cJSON *err = NULL, *quotas;

	if (!r->namespaced || ns == NULL)
		return NULL;
	/* Trees first: counting lists other resources. */
	quotas = cJSON_CreateArray();
	n = store_list(st, "resourcequotas", ns, &objs);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(quotas, store_obj_tree(objs[i]));
	for (i = 0; i < n && err == NULL; i++)
		err = check_quota(st, r, ns, obj, cJSON_GetArrayItem(quotas,
		    (int)i));
	cJSON_Delete(quotas);
	return err;
}
