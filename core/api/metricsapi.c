/*
 * metrics.k8s.io/v1beta1, as metrics-server serves it, so that kubectl
 * top works: NodeMetrics and PodMetrics, get and list (labelSelector),
 * made when asked from what this process knows. A running container of
 * the local node reports what its cgroups say over the last window
 * (node/usage.c, through api_set_usage); any other running container
 * what the pod asks to be shown -- the annotations volray.io/sim-cpu and
 * volray.io/sim-memory (the pod's total, shared out evenly among its
 * containers) -- else its requests. A node's usage is the sum of its
 * running pods'. Pods that do not run have no metrics (404 for one), as
 * metrics-server has none for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "registry/status.h"

#define WINDOW "10s"

struct usage {
	double nanocores, bytes;
};

static int
pod_running(const cJSON *pod)
{
	const char *ph = json_str(pod, "status.phase");

	return ph != NULL && strcmp(ph, "Running") == 0 &&
	    json_str(pod, "spec.nodeName") != NULL;
}

/* A quantity annotation of the pod, or -1. */
static double
annotation(const cJSON *pod, const char *key)
{
	const cJSON *a = json_at(pod, "metadata.annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
	double q;

	return cJSON_IsString(v) && quantity_parse(v->valuestring, &q) == 0 ?
	    q : -1;
}

/* One container's usage: measured, the annotations' share, or asked. */
static void
container_usage(api *a, const cJSON *pod, const cJSON *c, int nctrs,
    struct usage *u)
{
	uint64_t nc, mem;
	struct podspec_res req;
	double cpu = annotation(pod, "volray.io/sim-cpu");
	double bytes = annotation(pod, "volray.io/sim-memory");

	if (a->usage != NULL && a->usage(a->usage_arg, json_str(pod,
	    "metadata.uid"), json_str(c, "name"), &nc, &mem)) {
		u->nanocores = (double)nc;
		u->bytes = (double)mem;
		return;
	}
	memset(&req, 0, sizeof req);
	podspec_read_list(json_at(c, "resources.requests"), &req);
	u->nanocores = cpu >= 0 ? cpu * 1e9 / nctrs : (double)req.cpu * 1e6;
	u->bytes = bytes >= 0 ? bytes / nctrs : (double)req.memory;
}

static cJSON *
usage_json(const struct usage *u)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	s = util_printf("%.0fn", u->nanocores);
	cJSON_AddStringToObject(o, "cpu", s);
	free(s);
	s = util_printf("%.0fKi", u->bytes / 1024);
	cJSON_AddStringToObject(o, "memory", s);
	free(s);
	return o;
}

static cJSON *
item(const char *kind, const cJSON *obj, const char *now)
{
	cJSON *m = cJSON_CreateObject(), *md = json_obj(m, "metadata");
	const cJSON *labels = json_at(obj, "metadata.labels");

	cJSON_AddStringToObject(m, "kind", kind);
	cJSON_AddStringToObject(m, "apiVersion", "metrics.k8s.io/v1beta1");
	json_set_str(md, "name", json_str(obj, "metadata.name"));
	if (json_str(obj, "metadata.namespace") != NULL)
		json_set_str(md, "namespace", json_str(obj,
		    "metadata.namespace"));
	json_set_str(md, "creationTimestamp", now);
	if (labels != NULL)
		cJSON_AddItemToObject(md, "labels", cJSON_Duplicate(labels, 1));
	cJSON_AddStringToObject(m, "timestamp", now);
	cJSON_AddStringToObject(m, "window", WINDOW);
	return m;
}

/* A running pod's usage added to *sum. */
static void
pod_sum(api *a, const cJSON *pod, struct usage *sum)
{
	const cJSON *c;
	int n = cJSON_GetArraySize(json_at(pod, "spec.containers"));
	struct usage u;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		container_usage(a, pod, c, n > 0 ? n : 1, &u);
		sum->nanocores += u.nanocores;
		sum->bytes += u.bytes;
	}
}

/* A running pod's PodMetrics. */
static cJSON *
pod_metrics(api *a, const cJSON *pod, const char *now)
{
	cJSON *m = item("PodMetrics", pod, now), *cs;
	const cJSON *c;
	int n = cJSON_GetArraySize(json_at(pod, "spec.containers"));
	struct usage u;

	cs = cJSON_AddArrayToObject(m, "containers");
	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		cJSON *e = cJSON_CreateObject();

		container_usage(a, pod, c, n > 0 ? n : 1, &u);
		cJSON_AddStringToObject(e, "name", json_str(c, "name") ?
		    json_str(c, "name") : "");
		cJSON_AddItemToObject(e, "usage", usage_json(&u));
		cJSON_AddItemToArray(cs, e);
	}
	return m;
}

/* The node's NodeMetrics: the sum of its running pods'. */
static cJSON *
node_metrics(api *a, const cJSON *node, const char *now)
{
	struct usage sum = { 0, 0 };
	const char **keys;
	size_t n, i;
	cJSON *m;

	n = store_on_node(a->st, json_str(node, "metadata.name"), &keys);
	for (i = 0; i < n; i++) {
		const store_obj *o = store_get_key(a->st, keys[i]);
		cJSON *pod;

		if (o == NULL || strncmp(keys[i], "pods/", 5) != 0)
			continue;
		pod = store_obj_tree(o);
		if (pod_running(pod))
			pod_sum(a, pod, &sum);
		cJSON_Delete(pod);
	}
	m = item("NodeMetrics", node, now);
	cJSON_AddItemToObject(m, "usage", usage_json(&sum));
	return m;
}

void
metricsapi_get(api *a, http_req *req, struct route *rt)
{
	int nodes = strcmp(rt->r->plural, "nodes") == 0;
	const store_obj *o = store_get(a->st, nodes ? "nodes" : "pods",
	    nodes ? "" : (rt->ns ? rt->ns : ""), rt->name);
	char now[32];
	cJSON *t, *m;

	rt->verb = "get";
	util_now(now);
	t = o != NULL ? store_obj_tree(o) : NULL;
	if (t == NULL || (!nodes && !pod_running(t))) {
		cJSON_Delete(t);
		reply_status(req, rt, status_error(404, "NotFound",
		    "%s \"%s\" not found", rt->r->plural, rt->name));
		return;
	}
	m = nodes ? node_metrics(a, t, now) : pod_metrics(a, t, now);
	cJSON_Delete(t);
	reply_json(req, rt, 200, m);
}

void
metricsapi_list(api *a, http_req *req, struct route *rt)
{
	int nodes = strcmp(rt->r->plural, "nodes") == 0;
	selector *sel;
	store_obj *const *objs;
	cJSON *list, *items;
	char now[32];
	size_t n, i;

	rt->verb = "list";
	if (reply_label_selector(req, rt, &sel) != 0)
		return;
	util_now(now);
	list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "kind", nodes ? "NodeMetricsList" :
	    "PodMetricsList");
	cJSON_AddStringToObject(list, "apiVersion", "metrics.k8s.io/v1beta1");
	json_obj(list, "metadata");
	items = cJSON_AddArrayToObject(list, "items");
	n = store_list(a->st, nodes ? "nodes" : "pods", nodes ? NULL : rt->ns,
	    &objs);
	for (i = 0; i < n; i++) {
		cJSON *t;

		if (sel != NULL && !selector_match_labels(sel, objs[i]->labels))
			continue;
		t = store_obj_tree(objs[i]);
		if (nodes)
			cJSON_AddItemToArray(items, node_metrics(a, t, now));
		else if (pod_running(t))
			cJSON_AddItemToArray(items, pod_metrics(a, t, now));
		cJSON_Delete(t);
	}
	selector_free(sel);
	reply_json(req, rt, 200, list);
}
