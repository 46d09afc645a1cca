/*
 * kubectl's describers for nodes (their lease, conditions, capacity and
 * the requests of the pods on them), deployments (with their replica
 * sets) and jobs, and the quantities they print. Each writes tab-separated lines that
 * cli_describe_flush lays out; the field names, their order and the
 * spacing follow kubectl's, so that scripts reading one read the other.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_describe.h"
#include "cli_http.h"
#include "cli_res.h"
#include "cli_obj.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/xmalloc.h"

static const char *
str(const cJSON *o, const char *path)
{
	const char *s = json_str(o, path);

	return s != NULL ? s : "";
}

/* A quantity as Kubernetes prints it back: a binary one with the largest
 * suffix that keeps it whole ("8388608Ki" as "8Gi"); others as given. */
static char *
canonical(const cJSON *q)
{
	static const char *const bin[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	const char *s = cJSON_IsString(q) ? q->valuestring : NULL;
	struct cli_buf b = { 0 };
	size_t n;
	double d;
	long long v;
	int i;

	if (s == NULL || (n = strlen(s)) < 3 || s[n - 1] != 'i' ||
	    quantity_parse(s, &d) != 0 || d < 1024 || d > 9e18)
		return cli_describe_value(q);
	v = (long long)d;
	for (i = 5; i >= 0; i--)
		if (v % (1LL << (10 * (i + 1))) == 0) {
			cli_buf_printf(&b, "%lld%s", v >> (10 * (i + 1)),
			    bin[i]);
			return b.p;
		}
	return cli_describe_value(q);
}

/* "Title:\tk: v" lines of a map at level+1 (Capacity:, Limits:). */
void
cli_describe_quantities(struct cli_buf *b, int level, const char *title, const cJSON *m)
{
	const cJSON *el;
	char *v;

	cli_describe_w(b, level, "%s:\n", title);
	cJSON_ArrayForEach(el, m) {
		v = canonical(el);
		cli_describe_w(b, level + 1, "%s:\t%s\n", el->string, v);
		free(v);
	}
}

/* CPU millicores and memory bytes as Kubernetes prints quantities. */
static void
quantity(struct cli_buf *b, int64_t v, int cpu)
{
	static const char *const bin[] = { "Ki", "Mi", "Gi", "Ti", "Pi" };
	int i;

	if (cpu) {
		if (v % 1000 == 0)
			cli_buf_printf(b, "%lld", (long long)(v / 1000));
		else
			cli_buf_printf(b, "%lldm", (long long)v);
		return;
	}
	for (i = 4; i >= 0 && v != 0; i--)
		if (v % (1LL << (10 * (i + 1))) == 0) {
			cli_buf_printf(b, "%lld%s", (long long)(v >>
			    (10 * (i + 1))), bin[i]);
			return;
		}
	cli_buf_printf(b, "%lld", (long long)v);
}

/* "q (p%)" of a sum against what the node has. */
static void
share(struct cli_buf *b, int64_t v, int64_t of, int cpu)
{
	quantity(b, v, cpu);
	cli_buf_printf(b, " (%d%%)", of > 0 ? (int)((double)v / (double)of *
	    100) : 0);
}

/*
 * A pod's limits (cpu millicores, memory bytes) as kubectl counts them:
 * its containers' summed, or an init container's when that is more
 * (init containers run one at a time, before the others).
 */
static void
limits(const cJSON *pod, int64_t *cpu, int64_t *mem)
{
	const cJSON *c;
	double d;

	*cpu = *mem = 0;
	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		if (quantity_json(json_at(c, "resources.limits.cpu"), &d) == 0)
			*cpu += (int64_t)llround(d * 1000);
		if (quantity_json(json_at(c, "resources.limits.memory"), &d) == 0)
			*mem += (int64_t)llround(d);
	}
	cJSON_ArrayForEach(c, json_at(pod, "spec.initContainers")) {
		if (quantity_json(json_at(c, "resources.limits.cpu"), &d) == 0 &&
		    (int64_t)llround(d * 1000) > *cpu)
			*cpu = (int64_t)llround(d * 1000);
		if (quantity_json(json_at(c, "resources.limits.memory"), &d) ==
		    0 && (int64_t)llround(d) > *mem)
			*mem = (int64_t)llround(d);
	}
}

/* Non-terminated Pods: and Allocated resources: of a node. */
static void
node_pods(struct cli_buf *b, const cJSON *node)
{
	const struct cli_res *pr = cli_res_resolve("pods");
	struct cli_buf path = { 0 }, sel = { 0 }, l = { 0 };
	struct podspec_res alloc, req, sum = { 0 };
	int64_t lc, lm, slc = 0, slm = 0;
	const cJSON *p;
	cJSON *list;
	char *age;

	if (pr == NULL)
		return;
	podspec_allocatable(node, &alloc);
	cli_buf_printf(&sel, "spec.nodeName=%s,status.phase!=Succeeded,"
	    "status.phase!=Failed", str(node, "metadata.name"));
	cli_res_path(&path, pr, NULL, NULL, NULL);
	cli_http_query_add(&path, "fieldSelector", sel.p);
	list = cli_http_list(path.p, NULL);
	cli_describe_w(b, 0, "Non-terminated Pods:\t(%d in total)\n",
	    cJSON_GetArraySize(json_at(list, "items")));
	cli_describe_w(b, 1, "Namespace\tName\t\tCPU Requests\tCPU Limits\t"
	    "Memory Requests\tMemory Limits\tAge\n");
	cli_describe_w(b, 1, "---------\t----\t\t------------\t----------\t"
	    "---------------\t-------------\t---\n");
	cJSON_ArrayForEach(p, json_at(list, "items")) {
		podspec_requests(p, &req);
		limits(p, &lc, &lm);
		podspec_res_add(&sum, &req, 1);
		slc += lc, slm += lm;
		l.len = 0;
		cli_buf_printf(&l, "%s\t%s\t\t", str(p, "metadata.namespace"),
		    str(p, "metadata.name"));
		share(&l, req.cpu, alloc.cpu, 1);
		cli_buf_add(&l, "\t", 1);
		share(&l, lc, alloc.cpu, 1);
		cli_buf_add(&l, "\t", 1);
		share(&l, req.memory, alloc.memory, 0);
		cli_buf_add(&l, "\t", 1);
		share(&l, lm, alloc.memory, 0);
		age = cli_obj_age(json_str(p, "metadata.creationTimestamp"));
		cli_describe_w(b, 1, "%s\t%s\n", l.p, age);
		free(age);
	}
	cli_describe_w(b, 0, "Allocated resources:\n");
	cli_describe_w(b, 1, "(Total limits may be over 100 percent, i.e., "
	    "overcommitted.)\n");
	cli_describe_w(b, 1, "Resource\tRequests\tLimits\n");
	cli_describe_w(b, 1, "--------\t--------\t------\n");
	l.len = 0;
	cli_buf_printf(&l, "cpu\t");
	share(&l, sum.cpu, alloc.cpu, 1);
	cli_buf_add(&l, "\t", 1);
	share(&l, slc, alloc.cpu, 1);
	cli_describe_w(b, 1, "%s\n", l.p);
	l.len = 0;
	cli_buf_printf(&l, "memory\t");
	share(&l, sum.memory, alloc.memory, 0);
	cli_buf_add(&l, "\t", 1);
	share(&l, slm, alloc.memory, 0);
	cli_describe_w(b, 1, "%s\n", l.p);
	cli_describe_w(b, 1, "ephemeral-storage\t0 (0%%)\t0 (0%%)\n");
	cJSON_Delete(list);
	cli_buf_free(&path);
	cli_buf_free(&sel);
	cli_buf_free(&l);
}

/* The node's Lease in kube-node-lease, or why there is none. */
static void
node_lease(struct cli_buf *b, const char *name)
{
	struct cli_buf path = { 0 };
	struct cli_http_resp rsp;
	cJSON *l, *st;
	char *t;

	cli_buf_printf(&path, "/apis/coordination.k8s.io/v1/namespaces/"
	    "kube-node-lease/leases/%s", name);
	cli_http_request("GET", path.p, NULL, NULL, NULL, &rsp);
	cli_buf_free(&path);
	l = rsp.code == 200 ? cJSON_Parse(rsp.body.p) : NULL;
	if (l == NULL) {
		st = cJSON_Parse(rsp.body.p);
		cli_describe_w(b, 0, "Lease:\tFailed to get lease: %s\n",
		    json_str(st, "message") ? json_str(st, "message") : "");
		cJSON_Delete(st);
	} else {
		cli_describe_w(b, 0, "Lease:\n");
		cli_describe_w(b, 1, "HolderIdentity:\t%s\n",
		    json_str(l, "spec.holderIdentity") ?
		    str(l, "spec.holderIdentity") : "<unset>");
		t = json_str(l, "spec.acquireTime") ? cli_describe_time(
		    json_str(l, "spec.acquireTime")) : xstrdup("<unset>");
		cli_describe_w(b, 1, "AcquireTime:\t%s\n", t);
		free(t);
		t = json_str(l, "spec.renewTime") ? cli_describe_time(
		    json_str(l, "spec.renewTime")) : xstrdup("<unset>");
		cli_describe_w(b, 1, "RenewTime:\t%s\n", t);
		free(t);
	}
	cJSON_Delete(l);
	cli_buf_free(&rsp.body);
}

void
cli_describe_node(struct cli_buf *b, const cJSON *n)
{
	static const char *const cols[] = { "type", "status",
	    "lastHeartbeatTime", "lastTransitionTime", "reason", "message" };
	static const char *const info[][2] = {
		{ "Machine ID", "machineID" }, { "System UUID", "systemUUID" },
		{ "Boot ID", "bootID" }, { "Kernel Version", "kernelVersion" },
		{ "OS Image", "osImage" },
		{ "Operating System", "operatingSystem" },
		{ "Architecture", "architecture" },
		{ "Container Runtime Version", "containerRuntimeVersion" },
		{ "Kubelet Version", "kubeletVersion" },
		{ "Kube-Proxy Version", "kubeProxyVersion" }
	};
	struct cli_buf roles = { 0 };
	const cJSON *el;
	size_t i;
	char *t;

	cli_describe_w(b, 0, "Name:\t%s\n", str(n, "metadata.name"));
	cli_buf_add(&roles, "", 0);
	cJSON_ArrayForEach(el, json_at(n, "metadata.labels"))
		if (strncmp(el->string, "node-role.kubernetes.io/", 24) == 0)
			cli_buf_printf(&roles, "%s%s", roles.len ? "," : "",
			    el->string + 24);
	cli_describe_w(b, 0, "Roles:\t%s\n", roles.len ? roles.p : "<none>");
	cli_buf_free(&roles);
	cli_describe_labels(b, 0, "Labels", json_at(n, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(n, "metadata.annotations"));
	t = cli_describe_time(json_str(n, "metadata.creationTimestamp"));
	cli_describe_w(b, 0, "CreationTimestamp:\t%s\n", t);
	free(t);
	if (cJSON_GetArraySize(json_at(n, "spec.taints")) == 0)
		cli_describe_w(b, 0, "Taints:\t<none>\n");
	i = 0;
	cJSON_ArrayForEach(el, json_at(n, "spec.taints"))
		cli_describe_w(b, 0, "%s\t%s%s%s:%s\n", i++ ? "" : "Taints:",
		    str(el, "key"), json_str(el, "value") ? "=" : "",
		    str(el, "value"), str(el, "effect"));
	cli_describe_w(b, 0, "Unschedulable:\t%s\n",
	    cJSON_IsTrue(json_at(n, "spec.unschedulable")) ? "true" : "false");
	node_lease(b, str(n, "metadata.name"));
	if (cJSON_GetArraySize(json_at(n, "status.conditions")) > 0)
		cli_describe_conditions(b, json_at(n, "status.conditions"),
		    cols, 6, 0);
	cli_describe_w(b, 0, "Addresses:\n");
	cJSON_ArrayForEach(el, json_at(n, "status.addresses"))
		cli_describe_w(b, 1, "%s:\t%s\n", str(el, "type"),
		    str(el, "address"));
	if (json_at(n, "status.capacity") != NULL)
		cli_describe_quantities(b, 0, "Capacity", json_at(n, "status.capacity"));
	if (json_at(n, "status.allocatable") != NULL)
		cli_describe_quantities(b, 0, "Allocatable", json_at(n, "status.allocatable"));
	cli_describe_w(b, 0, "System Info:\n");
	for (i = 0; i < sizeof info / sizeof info[0]; i++)
		cli_describe_w(b, 1, "%s:\t%s\n", info[i][0],
		    str(json_at(n, "status.nodeInfo"), info[i][1]));
	if (json_str(n, "spec.podCIDR") != NULL)
		cli_describe_w(b, 0, "PodCIDR:\t%s\n", str(n, "spec.podCIDR"));
	if (json_str(n, "spec.providerID") != NULL)
		cli_describe_w(b, 0, "ProviderID:\t%s\n",
		    str(n, "spec.providerID"));
	node_pods(b, n);
}

/* A label selector's matchLabels as k=v,... */
static char *
selector(const cJSON *sel)
{
	char *s = cli_table_labels(json_at(sel, "matchLabels"), ",");

	return s;
}

/* Is a replica set the one of the deployment's revision rev? */
static int
revision_of(const cJSON *rs, const cJSON *d, const char *rev)
{
	const cJSON *a = json_at(rs, "metadata.annotations"), *el;

	(void)d;
	cJSON_ArrayForEach(el, a)
		if (strcmp(el->string, "deployment.kubernetes.io/revision") == 0)
			return cJSON_IsString(el) && *rev != '\0' &&
			    strcmp(el->valuestring, rev) == 0;
	return 0;
}

/* OldReplicaSets: and NewReplicaSet: of a deployment: the replica sets it
 * controls, new being the one of its current revision, old the others
 * that still want pods. */
static void
replica_sets(struct cli_buf *b, const cJSON *d)
{
	const struct cli_res *r = cli_res_resolve("replicasets.apps");
	const char *uid = str(d, "metadata.uid"), *rev;
	struct cli_buf path = { 0 }, old = { 0 }, cur = { 0 }, *to;
	const cJSON *rs, *ref;
	cJSON *list;
	int mine;

	if (r == NULL)
		return;
	ref = cJSON_GetObjectItemCaseSensitive(json_at(d,
	    "metadata.annotations"), "deployment.kubernetes.io/revision");
	rev = cJSON_IsString(ref) ? ref->valuestring : "";
	cli_res_path(&path, r, str(d, "metadata.namespace"), NULL, NULL);
	list = cli_http_list(path.p, NULL);
	cli_buf_add(&old, "", 0);
	cli_buf_add(&cur, "", 0);
	cJSON_ArrayForEach(rs, json_at(list, "items")) {
		mine = 0;
		cJSON_ArrayForEach(ref, json_at(rs, "metadata.ownerReferences"))
			mine |= strcmp(str(ref, "uid"), uid) == 0;
		if (!mine)
			continue;
		to = revision_of(rs, d, rev) ? &cur : &old;
		if (to == &old && (json_at(rs, "spec.replicas") == NULL ||
		    json_at(rs, "spec.replicas")->valuedouble == 0))
			continue;
		cli_buf_printf(to, "%s%s (%.0f/%.0f replicas created)",
		    to->len ? ", " : "", str(rs, "metadata.name"),
		    json_at(rs, "status.replicas") ?
		    json_at(rs, "status.replicas")->valuedouble : 0,
		    json_at(rs, "spec.replicas") ?
		    json_at(rs, "spec.replicas")->valuedouble : 0);
	}
	cli_describe_w(b, 0, "OldReplicaSets:\t%s\n", old.len ? old.p :
	    "<none>");
	cli_describe_w(b, 0, "NewReplicaSet:\t%s\n", cur.len ? cur.p :
	    "<none>");
	cJSON_Delete(list);
	cli_buf_free(&path);
	cli_buf_free(&old);
	cli_buf_free(&cur);
}

void
cli_describe_deployment(struct cli_buf *b, const cJSON *d)
{
	static const char *const cols[] = { "type", "status", "reason" };
	const cJSON *spec = json_at(d, "spec"), *st = json_at(d, "status");
	char *t, *sel;

	cli_describe_w(b, 0, "Name:\t%s\n", str(d, "metadata.name"));
	cli_describe_w(b, 0, "Namespace:\t%s\n", str(d, "metadata.namespace"));
	t = cli_describe_time(json_str(d, "metadata.creationTimestamp"));
	cli_describe_w(b, 0, "CreationTimestamp:\t%s\n", t);
	free(t);
	cli_describe_labels(b, 0, "Labels", json_at(d, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(d, "metadata.annotations"));
	sel = selector(json_at(spec, "selector"));
	cli_describe_w(b, 0, "Selector:\t%s\n", sel);
	free(sel);
#define N(o, p) (json_at(o, p) != NULL ? json_at(o, p)->valuedouble : 0)
	cli_describe_w(b, 0, "Replicas:\t%.0f desired | %.0f updated | %.0f "
	    "total | %.0f available | %.0f unavailable\n",
	    json_at(spec, "replicas") ? N(spec, "replicas") : 1,
	    N(st, "updatedReplicas"), N(st, "replicas"),
	    N(st, "availableReplicas"), N(st, "unavailableReplicas"));
	cli_describe_w(b, 0, "StrategyType:\t%s\n", json_str(spec,
	    "strategy.type") ? str(spec, "strategy.type") : "RollingUpdate");
	cli_describe_w(b, 0, "MinReadySeconds:\t%.0f\n",
	    N(spec, "minReadySeconds"));
	if (json_str(spec, "strategy.type") == NULL ||
	    strcmp(str(spec, "strategy.type"), "RollingUpdate") == 0) {
		t = cli_describe_value(json_at(spec,
		    "strategy.rollingUpdate.maxUnavailable"));
		sel = cli_describe_value(json_at(spec,
		    "strategy.rollingUpdate.maxSurge"));
		cli_describe_w(b, 0, "RollingUpdateStrategy:\t%s max "
		    "unavailable, %s max surge\n", strcmp(t, "<nil>") ? t :
		    "25%", strcmp(sel, "<nil>") ? sel : "25%");
		free(t);
		free(sel);
	}
	cli_describe_template(b, json_at(spec, "template"));
	if (cJSON_GetArraySize(json_at(st, "conditions")) > 0)
		cli_describe_conditions(b, json_at(st, "conditions"), cols, 3, 0);
	replica_sets(b, d);
}

void
cli_describe_job(struct cli_buf *b, const cJSON *j)
{
	const cJSON *spec = json_at(j, "spec"), *st = json_at(j, "status");
	char *t, *v;

	cli_describe_w(b, 0, "Name:\t%s\n", str(j, "metadata.name"));
	cli_describe_w(b, 0, "Namespace:\t%s\n", str(j, "metadata.namespace"));
	v = selector(json_at(spec, "selector"));
	cli_describe_w(b, 0, "Selector:\t%s\n", v);
	free(v);
	cli_describe_labels(b, 0, "Labels", json_at(j, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(j, "metadata.annotations"));
	cli_describe_w(b, 0, "Parallelism:\t%.0f\n", json_at(spec,
	    "parallelism") ? N(spec, "parallelism") : 1);
	if (json_at(spec, "completions") != NULL)
		cli_describe_w(b, 0, "Completions:\t%.0f\n",
		    N(spec, "completions"));
	else
		cli_describe_w(b, 0, "Completions:\t<unset>\n");
	cli_describe_w(b, 0, "Completion Mode:\t%s\n", json_str(spec,
	    "completionMode") ? str(spec, "completionMode") : "NonIndexed");
	cli_describe_w(b, 0, "Suspend:\t%s\n", cJSON_IsTrue(json_at(spec,
	    "suspend")) ? "true" : "false");
	cli_describe_w(b, 0, "Backoff Limit:\t%.0f\n", json_at(spec,
	    "backoffLimit") ? N(spec, "backoffLimit") : 6);
	if (json_str(st, "startTime") != NULL) {
		t = cli_describe_time(json_str(st, "startTime"));
		cli_describe_w(b, 0, "Start Time:\t%s\n", t);
		free(t);
	}
	if (json_str(st, "completionTime") != NULL) {
		t = cli_describe_time(json_str(st, "completionTime"));
		cli_describe_w(b, 0, "Completed At:\t%s\n", t);
		free(t);
	}
	cli_describe_w(b, 0, "Pods Statuses:\t%.0f Active (%.0f Ready) / %.0f "
	    "Succeeded / %.0f Failed\n", N(st, "active"), N(st, "ready"),
	    N(st, "succeeded"), N(st, "failed"));
#undef N
	cli_describe_template(b, json_at(spec, "template"));
}

/* Names of the members of obj, sorted, into names (at most max). */
static int
sorted_keys(const cJSON *obj, const char **names, int max)
{
	const cJSON *it;
	int n = 0, i, j;

	cJSON_ArrayForEach(it, obj)
		if (n < max)
			names[n++] = it->string;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	return n;
}

static const char *
or_dash(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : "-";
}

/* kubectl's DescribeResourceQuotas. */
static void
namespace_quotas(struct cli_buf *b, const char *ns)
{
	struct cli_buf path = { 0 };
	const char *names[64];
	const cJSON *q, *hard, *used, *v;
	cJSON *list;
	int n, i;

	cli_buf_printf(&path, "/api/v1/namespaces/%s/resourcequotas", ns);
	list = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	cli_describe_w(b, 0, "\n");
	if (cJSON_GetArraySize(json_at(list, "items")) == 0) {
		cli_describe_w(b, 0, "No resource quota.\n");
		cJSON_Delete(list);
		return;
	}
	cli_describe_w(b, 0, "Resource Quotas\n");
	cJSON_ArrayForEach(q, json_at(list, "items")) {
		cli_describe_w(b, 1, "Name:\t%s\n", str(q, "metadata.name"));
		hard = json_at(q, "status.hard");
		used = json_at(q, "status.used");
		cli_describe_w(b, 1, "Resource\tUsed\tHard\n");
		cli_describe_w(b, 1, "--------\t---\t---\n");
		n = sorted_keys(hard, names, 64);
		for (i = 0; i < n; i++) {
			v = cJSON_GetObjectItemCaseSensitive(used, names[i]);
			cli_describe_w(b, 1, "%s\t%s\t%s\n", names[i],
			    cJSON_IsString(v) ? v->valuestring : "0",
			    or_dash(hard, names[i]));
		}
	}
	cJSON_Delete(list);
}

/* kubectl's DescribeLimitRanges. */
static void
namespace_limits(struct cli_buf *b, const char *ns)
{
	static const char *const fields[] = { "min", "max", "defaultRequest",
	    "default", "maxLimitRequestRatio" };
	struct cli_buf path = { 0 };
	const char *names[64], *seen[64];
	const cJSON *lr, *it, *f;
	cJSON *list;
	int n, ns_, i, j, k, dup;

	cli_buf_printf(&path, "/api/v1/namespaces/%s/limitranges", ns);
	list = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	cli_describe_w(b, 0, "\n");
	if (cJSON_GetArraySize(json_at(list, "items")) == 0) {
		cli_describe_w(b, 0, "No LimitRange resource.\n");
		cJSON_Delete(list);
		return;
	}
	cli_describe_w(b, 0, "Resource Limits\n Type\tResource\tMin\tMax\t"
	    "Default Request\tDefault Limit\tMax Limit/Request Ratio\n");
	cli_describe_w(b, 0, " ----\t--------\t---\t---\t---------------\t"
	    "-------------\t-----------------------\n");
	cJSON_ArrayForEach(lr, json_at(list, "items"))
		cJSON_ArrayForEach(it, json_at(lr, "spec.limits")) {
			ns_ = 0;
			for (k = 0; k < 5; k++) {
				f = json_at(it, fields[k]);
				n = sorted_keys(f, names, 64);
				for (i = 0; i < n; i++) {
					for (dup = 0, j = 0; j < ns_; j++)
						dup |= strcmp(seen[j], names[i]) == 0;
					if (!dup && ns_ < 64)
						seen[ns_++] = names[i];
				}
			}
			for (i = 0; i < ns_; i++)
				cli_describe_w(b, 0, " %s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				    str(it, "type"), seen[i],
				    or_dash(json_at(it, "min"), seen[i]),
				    or_dash(json_at(it, "max"), seen[i]),
				    or_dash(json_at(it, "defaultRequest"), seen[i]),
				    or_dash(json_at(it, "default"), seen[i]),
				    or_dash(json_at(it, "maxLimitRequestRatio"),
				    seen[i]));
		}
	cJSON_Delete(list);
}

void
cli_describe_namespace(struct cli_buf *b, const cJSON *ns)
{
	cli_describe_w(b, 0, "Name:\t%s\n", str(ns, "metadata.name"));
	cli_describe_labels(b, 0, "Labels", json_at(ns, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(ns, "metadata.annotations"));
	cli_describe_w(b, 0, "Status:\t%s\n", str(ns, "status.phase"));
	namespace_quotas(b, str(ns, "metadata.name"));
	namespace_limits(b, str(ns, "metadata.name"));
}
