/*
 * kubectl's describers for the kinds that have their own: containers and
 * pod templates (shared by pods, deployments and jobs), nodes with their
 * lease, conditions, capacity and the requests of the pods on them,
 * deployments and jobs. Each writes tab-separated lines that
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
#include "cli_obj.h"
#include "cli_print.h"
#include "lib/json.h"
#include "lib/podspec.h"

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
static void
quantities(struct cli_buf *b, int level, const char *title, const cJSON *m)
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

/* A container state: Running, Waiting or Terminated and its details. */
static void
state(struct cli_buf *b, const char *title, const cJSON *s)
{
	const cJSON *r = json_at(s, "running"), *w = json_at(s, "waiting");
	const cJSON *t = json_at(s, "terminated");
	char *tm, *v;

	if (r != NULL) {
		cli_describe_w(b, 2, "%s:\tRunning\n", title);
		tm = cli_describe_time(json_str(r, "startedAt"));
		cli_describe_w(b, 3, "Started:\t%s\n", tm);
		free(tm);
	} else if (t != NULL) {
		cli_describe_w(b, 2, "%s:\tTerminated\n", title);
		if (json_str(t, "reason") != NULL)
			cli_describe_w(b, 3, "Reason:\t%s\n", str(t, "reason"));
		if (json_str(t, "message") != NULL)
			cli_describe_w(b, 3, "Message:\t%s\n", str(t, "message"));
		v = cli_describe_value(json_at(t, "exitCode"));
		cli_describe_w(b, 3, "Exit Code:\t%s\n", v);
		free(v);
		tm = cli_describe_time(json_str(t, "startedAt"));
		cli_describe_w(b, 3, "Started:\t%s\n", tm);
		free(tm);
		tm = cli_describe_time(json_str(t, "finishedAt"));
		cli_describe_w(b, 3, "Finished:\t%s\n", tm);
		free(tm);
	} else {
		cli_describe_w(b, 2, "%s:\tWaiting\n", title);
		if (json_str(w, "reason") != NULL)
			cli_describe_w(b, 3, "Reason:\t%s\n", str(w, "reason"));
	}
}

/* Port: or Ports: and Host Port(s): of a container. */
static void
ports(struct cli_buf *b, const cJSON *c)
{
	struct cli_buf p = { 0 }, h = { 0 };
	const cJSON *el;
	int n = cJSON_GetArraySize(json_at(c, "ports"));

	cli_buf_add(&p, "", 0);
	cli_buf_add(&h, "", 0);
	cJSON_ArrayForEach(el, json_at(c, "ports")) {
		const char *proto = json_str(el, "protocol");
		const cJSON *hp = json_at(el, "hostPort");

		cli_buf_printf(&p, "%s%.0f/%s", p.len ? ", " : "",
		    json_at(el, "containerPort") ?
		    json_at(el, "containerPort")->valuedouble : 0,
		    proto ? proto : "TCP");
		cli_buf_printf(&h, "%s%.0f/%s", h.len ? ", " : "",
		    hp ? hp->valuedouble : 0, proto ? proto : "TCP");
	}
	if (n == 0) {
		cli_describe_w(b, 2, "Port:\t<none>\n");
		cli_describe_w(b, 2, "Host Port:\t<none>\n");
	} else {
		cli_describe_w(b, 2, "Port%s:\t%s\n", n > 1 ? "s" : "", p.p);
		cli_describe_w(b, 2, "Host Port%s:\t%s\n", n > 1 ? "s" : "",
		    h.p);
	}
	cli_buf_free(&p);
	cli_buf_free(&h);
}

/* One env entry's value as kubectl shows it. */
static void
env_line(struct cli_buf *b, const cJSON *e)
{
	const cJSON *vf = json_at(e, "valueFrom");

	if (vf == NULL)
		cli_describe_w(b, 3, "%s:\t%s\n", str(e, "name"), str(e, "value"));
	else if (json_at(vf, "fieldRef") != NULL)
		cli_describe_w(b, 3, "%s:\t (%s:%s)\n", str(e, "name"),
		    str(vf, "fieldRef.apiVersion"),
		    str(vf, "fieldRef.fieldPath"));
	else if (json_at(vf, "secretKeyRef") != NULL)
		cli_describe_w(b, 3, "%s:\t<set to the key '%s' in secret "
		    "'%s'>\tOptional: %s\n", str(e, "name"),
		    str(vf, "secretKeyRef.key"), str(vf, "secretKeyRef.name"),
		    cJSON_IsTrue(json_at(vf, "secretKeyRef.optional")) ?
		    "true" : "false");
	else if (json_at(vf, "configMapKeyRef") != NULL)
		cli_describe_w(b, 3, "%s:\t<set to the key '%s' of config "
		    "map '%s'>\tOptional: %s\n", str(e, "name"),
		    str(vf, "configMapKeyRef.key"),
		    str(vf, "configMapKeyRef.name"),
		    cJSON_IsTrue(json_at(vf, "configMapKeyRef.optional")) ?
		    "true" : "false");
	else
		cli_describe_w(b, 3, "%s:\t<unknown>\n", str(e, "name"));
}

/* Command: or Args: with one item per line. */
static void
words(struct cli_buf *b, const char *title, const cJSON *list)
{
	const cJSON *el;

	if (cJSON_GetArraySize(list) == 0)
		return;
	cli_describe_w(b, 2, "%s:\n", title);
	cJSON_ArrayForEach(el, list)
		cli_describe_w(b, 3, "%s\n", cJSON_IsString(el) ?
		    el->valuestring : "");
}

void
cli_describe_containers(struct cli_buf *b, const char *title,
    const cJSON *containers, const cJSON *statuses, const char *space)
{
	const cJSON *c, *st, *s, *el;
	char *v;

	cli_describe_w(b, 0, "%s%s:\n", space, title);
	cJSON_ArrayForEach(c, containers) {
		st = NULL;
		cJSON_ArrayForEach(s, statuses)
			if (strcmp(str(s, "name"), str(c, "name")) == 0)
				st = s;
		cli_describe_w(b, 1, "%s%s:\n", *space ? " " : "",
		    str(c, "name"));
		if (st != NULL && json_str(st, "containerID") != NULL)
			cli_describe_w(b, 2, "Container ID:\t%s\n",
			    str(st, "containerID"));
		cli_describe_w(b, 2, "Image:\t%s\n", str(c, "image"));
		if (st != NULL)
			cli_describe_w(b, 2, "Image ID:\t%s\n",
			    str(st, "imageID"));
		ports(b, c);
		words(b, "Command", json_at(c, "command"));
		words(b, "Args", json_at(c, "args"));
		if (st != NULL) {
			state(b, "State", json_at(st, "state"));
			if (cJSON_GetArraySize(json_at(st, "lastState")) > 0)
				state(b, "Last State", json_at(st, "lastState"));
			cli_describe_w(b, 2, "Ready:\t%s\n",
			    cJSON_IsTrue(json_at(st, "ready")) ? "True" :
			    "False");
			v = cli_describe_value(json_at(st, "restartCount"));
			cli_describe_w(b, 2, "Restart Count:\t%s\n", v);
			free(v);
		}
		if (cJSON_GetArraySize(json_at(c, "resources.limits")) > 0)
			quantities(b, 2, "Limits", json_at(c,
			    "resources.limits"));
		if (cJSON_GetArraySize(json_at(c, "resources.requests")) > 0)
			quantities(b, 2, "Requests", json_at(c,
			    "resources.requests"));
		if (cJSON_GetArraySize(json_at(c, "env")) == 0)
			cli_describe_w(b, 2, "Environment:\t<none>\n");
		else {
			cli_describe_w(b, 2, "Environment:\n");
			cJSON_ArrayForEach(el, json_at(c, "env"))
				env_line(b, el);
		}
		if (cJSON_GetArraySize(json_at(c, "volumeMounts")) == 0)
			cli_describe_w(b, 2, "Mounts:\t<none>\n");
		else {
			cli_describe_w(b, 2, "Mounts:\n");
			cJSON_ArrayForEach(el, json_at(c, "volumeMounts"))
				cli_describe_w(b, 3, "%s from %s (%s)\n",
				    str(el, "mountPath"), str(el, "name"),
				    cJSON_IsTrue(json_at(el, "readOnly")) ?
				    "ro" : "rw");
		}
	}
}

/* A toleration as kubectl writes it: key=value:Effect op=Exists for Ns. */
static char *
toleration(const cJSON *t)
{
	struct cli_buf b = { 0 };
	const char *key = str(t, "key"), *val = str(t, "value");
	const char *eff = str(t, "effect");

	cli_buf_add(&b, "", 0);
	cli_buf_printf(&b, "%s", key);
	if (*val)
		cli_buf_printf(&b, "=%s", val);
	if (*eff)
		cli_buf_printf(&b, ":%s", eff);
	if (strcmp(str(t, "operator"), "Exists") == 0 && *val == '\0')
		cli_buf_printf(&b, "%sop=Exists", *key || *eff ? " " : "");
	if (json_at(t, "tolerationSeconds") != NULL)
		cli_buf_printf(&b, " for %.0fs",
		    json_at(t, "tolerationSeconds")->valuedouble);
	return b.p;
}

static int
tol_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Volumes:, Node-Selectors: and Tolerations: with a space prefix. */
void
cli_describe_spec_tail(struct cli_buf *b, int level, const cJSON *spec,
    const char *qos)
{
	const char *sp = level > 0 ? "  " : "";
	const cJSON *el;
	char **t;
	size_t n = 0, i;

	if (cJSON_GetArraySize(json_at(spec, "volumes")) == 0)
		cli_describe_w(b, 0, "%sVolumes:\t<none>\n", sp);
	else {
		cli_describe_w(b, 0, "%sVolumes:\n", sp);
		cJSON_ArrayForEach(el, json_at(spec, "volumes")) {
			cli_describe_w(b, 1, "%s%s:\n", sp, str(el, "name"));
			if (json_at(el, "configMap") != NULL) {
				cli_describe_w(b, 2, "Type:\tConfigMap (a volume "
				    "populated by a ConfigMap)\n");
				cli_describe_w(b, 2, "Name:\t%s\n",
				    str(el, "configMap.name"));
				cli_describe_w(b, 2, "Optional:\t%s\n",
				    cJSON_IsTrue(json_at(el,
				    "configMap.optional")) ? "true" : "false");
			} else if (json_at(el, "emptyDir") != NULL) {
				cli_describe_w(b, 2, "Type:\tEmptyDir (a "
				    "temporary directory that shares a pod's "
				    "lifetime)\n");
				cli_describe_w(b, 2, "Medium:\t%s\n",
				    str(el, "emptyDir.medium"));
				cli_describe_w(b, 2, "SizeLimit:\t%s\n",
				    json_str(el, "emptyDir.sizeLimit") ?
				    str(el, "emptyDir.sizeLimit") : "<unset>");
			} else if (json_at(el, "hostPath") != NULL) {
				cli_describe_w(b, 2, "Type:\tHostPath (bare host "
				    "directory volume)\n");
				cli_describe_w(b, 2, "Path:\t%s\n",
				    str(el, "hostPath.path"));
			} else if (json_at(el, "secret") != NULL) {
				cli_describe_w(b, 2, "Type:\tSecret (a volume "
				    "populated by a Secret)\n");
				cli_describe_w(b, 2, "SecretName:\t%s\n",
				    str(el, "secret.secretName"));
			}
		}
	}
	if (qos != NULL)
		cli_describe_w(b, 0, "QoS Class:\t%s\n", qos);
	cli_describe_labels(b, 0, level > 0 ? "  Node-Selectors" :
	    "Node-Selectors", json_at(spec, "nodeSelector"));
	t = cli_buf_realloc(NULL, (cJSON_GetArraySize(json_at(spec,
	    "tolerations")) + 1) * sizeof *t);
	cJSON_ArrayForEach(el, json_at(spec, "tolerations"))
		t[n++] = toleration(el);
	qsort(t, n, sizeof *t, tol_cmp);
	if (n == 0)
		cli_describe_w(b, 0, "%sTolerations:\t<none>\n", sp);
	for (i = 0; i < n; i++) {
		cli_describe_w(b, 0, "%s%s\t%s\n", i == 0 ? sp : "",
		    i == 0 ? "Tolerations:" : "", t[i]);
		free(t[i]);
	}
	free(t);
}

/* Pod Template: of a deployment or job. */
void
cli_describe_template(struct cli_buf *b, const cJSON *tpl)
{
	const cJSON *spec = json_at(tpl, "spec");

	cli_describe_w(b, 0, "Pod Template:\n");
	cli_describe_labels(b, 1, "Labels", json_at(tpl, "metadata.labels"));
	if (cJSON_GetArraySize(json_at(tpl, "metadata.annotations")) > 0)
		cli_describe_annotations(b, 1, json_at(tpl,
		    "metadata.annotations"));
	if (json_str(spec, "serviceAccountName") != NULL)
		cli_describe_w(b, 1, "Service Account:\t%s\n",
		    str(spec, "serviceAccountName"));
	if (cJSON_GetArraySize(json_at(spec, "initContainers")) > 0)
		cli_describe_containers(b, "Init Containers",
		    json_at(spec, "initContainers"), NULL, "  ");
	cli_describe_containers(b, "Containers", json_at(spec, "containers"),
	    NULL, "  ");
	cli_describe_spec_tail(b, 1, spec, NULL);
}

/* Conditions: with the given keys as columns; pod style has no dashes
 * and a space after every cell, the others a space after all but the
 * last. */
void
cli_describe_conditions(struct cli_buf *b, const cJSON *conds,
    const char *const *cols, int n, int pod_style)
{
	struct cli_buf l = { 0 };
	const cJSON *c;
	int i;
	char *t;

	cli_describe_w(b, 0, "Conditions:\n");
	for (i = 0; i < n; i++) {
		cli_buf_printf(&l, "%c%s", i ? '\t' : ' ', cols[i]);
		l.p[l.len - strlen(cols[i])] = (char)(l.p[l.len -
		    strlen(cols[i])] - 'a' + 'A');
	}
	cli_describe_w(b, 1, "%s\n", l.p + 1);
	if (!pod_style) {
		l.len = 0;
		for (i = 0; i < n; i++) {
			cli_buf_printf(&l, "%s", i ? "\t" : "");
			for (t = (char *)cols[i]; *t != '\0'; t++)
				cli_buf_add(&l, "-", 1);
		}
		cli_describe_w(b, 1, "%s\n", l.p);
	}
	cJSON_ArrayForEach(c, conds) {
		l.len = 0;
		for (i = 0; i < n; i++) {
			if (strstr(cols[i], "Time") != NULL) {
				t = cli_describe_time(json_str(c, cols[i]));
				cli_buf_printf(&l, "%s ", t);
				free(t);
			} else
				cli_buf_printf(&l, "%s%s", str(c, cols[i]),
				    pod_style || i + 1 < n ? " " : "");
			if (i + 1 < n)
				cli_buf_add(&l, "\t", 1);
		}
		cli_describe_w(b, 1, "%s\n", l.p);
	}
	cli_buf_free(&l);
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

/* A pod's summed limits (cpu millicores, memory bytes). */
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
}

/* Non-terminated Pods: and Allocated resources: of a node. */
static void
node_pods(struct cli_buf *b, const cJSON *node)
{
	const struct cli_http_res *pr = cli_http_resolve("pods");
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
	cli_http_res_path(&path, pr, NULL, NULL, NULL);
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
		    json_str(l, "spec.acquireTime")) : cli_buf_strdup("<unset>");
		cli_describe_w(b, 1, "AcquireTime:\t%s\n", t);
		free(t);
		t = json_str(l, "spec.renewTime") ? cli_describe_time(
		    json_str(l, "spec.renewTime")) : cli_buf_strdup("<unset>");
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
		quantities(b, 0, "Capacity", json_at(n, "status.capacity"));
	if (json_at(n, "status.allocatable") != NULL)
		quantities(b, 0, "Allocatable", json_at(n, "status.allocatable"));
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
	char *s = cli_print_labels(json_at(sel, "matchLabels"), ",");

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
	const struct cli_http_res *r = cli_http_resolve("replicasets.apps");
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
	cli_http_res_path(&path, r, str(d, "metadata.namespace"), NULL, NULL);
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
