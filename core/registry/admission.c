/*
 * Admission for built-in kinds: defaults and validation, applied on every
 * create and update through the registry. Only the rules a kubectl user
 * would notice are here; everything else is stored as sent.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/resource.h"
#include "registry/limitrange.h"
#include "registry/podtemplate.h"
#include "registry/status.h"

static void
set_default_str(cJSON *o, const char *key, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddStringToObject(o, key, v);
}

static void
set_default_num(cJSON *o, const char *key, double v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddNumberToObject(o, key, v);
}

static int
is_dns_subdomain(const char *s)
{
	char buf[256], *tok, *save;

	if (strlen(s) == 0 || strlen(s) > 253)
		return 0;
	snprintf(buf, sizeof buf, "%s", s);
	if (buf[0] == '.' || buf[strlen(buf) - 1] == '.' || strstr(buf, ".."))
		return 0;
	/* Go's IsDNS1123Subdomain: the regex and 253 in all, no limit of 63
	   per part (a Deployment of 53 characters has a ReplicaSet of 64). */
	for (tok = strtok_r(buf, ".", &save); tok != NULL;
	    tok = strtok_r(NULL, ".", &save))
		if (!podtemplate_is_dns_label(tok, 253, 0))
			return 0;
	return 1;
}

/*
 * A ConfigMap's or Secret's keys as kube-apiserver's IsConfigMapKey
 * checks them: [-._a-zA-Z0-9]+, at most 253, neither "." nor "..", not
 * starting with "..".
 */
static void
check_keys(const cJSON *m, const char *field, cJSON *causes)
{
	const cJSON *it;
	const char *key, *c;
	char f[300];

	cJSON_ArrayForEach(it, m) {
		key = it->string ? it->string : "";
		snprintf(f, sizeof f, "%s[%s]", field, key);
		for (c = key; *c != '\0'; c++)
			if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' &&
			    *c <= 'Z') && !(*c >= '0' && *c <= '9') &&
			    *c != '-' && *c != '_' && *c != '.')
				break;
		if (*key == '\0' || *c != '\0')
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": a valid config key must "
			    "consist of alphanumeric characters, '-', '_' or "
			    "'.' (e.g. 'key.name',  or 'KEY_NAME',  or "
			    "'key-name', regex used for validation is "
			    "'[-._a-zA-Z0-9]+')", key);
		else if (strlen(key) > 253)
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": must be no more than 253 "
			    "characters", key);
		else if (strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": must not be '.' or '..'",
			    key);
		else if (strncmp(key, "..", 2) == 0)
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": must not start with '..'",
			    key);
	}
}

const char *
admission_check_name(const resource *r, const char *name)
{
	enum kind_names rule = r->desc != NULL ? r->desc->names :
	    KIND_NAMES_SUBDOMAIN;

	if (rule == KIND_NAMES_LABEL || rule == KIND_NAMES_LABEL_ALPHA) {
		/* kube-apiserver 1.34's words for a namespace name that
		   would be a subdomain. */
		if (rule == KIND_NAMES_LABEL &&
		    strchr(name, '.') != NULL && strlen(name) <= 63 &&
		    is_dns_subdomain(name))
			return "must not contain dots";
		if (!podtemplate_is_dns_label(name, 63,
		    rule == KIND_NAMES_LABEL_ALPHA))
			return "a lowercase RFC 1123 label must consist of "
			    "lower case alphanumeric characters or '-', and "
			    "must start and end with an alphanumeric character "
			    "(e.g. 'my-name',  or '123-abc', regex used for "
			    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
		return NULL;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strchr(name, '/') != NULL || strchr(name, '%') != NULL)
		return "may not be '.' or '..' and may not contain '/' or '%'";
	/* RBAC names are path segments: "system:controller:job-controller". */
	if (rule == KIND_NAMES_SEGMENT)
		return NULL;
	if (r->builtin && strlen(name) > 253)
		return "must be no more than 253 characters";
	if (r->builtin && !is_dns_subdomain(name))
		return "a lowercase RFC 1123 subdomain must consist of lower "
		    "case alphanumeric characters, '-' or '.', and must start "
		    "and end with an alphanumeric character (e.g. "
		    "'example.com', regex used for validation is "
		    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
		    "[a-z0-9])?)*')";
	if (!r->builtin && (strlen(name) > 253 || !is_dns_subdomain(name)))
		return "a lowercase RFC 1123 subdomain must consist of lower "
		    "case alphanumeric characters, '-' or '.', and must start "
		    "and end with an alphanumeric character";
	return NULL;
}

/* The priority of a named PriorityClass, or of the global default. */
static int
priority_of(store *st, const char *pcname, int *found, char **default_name)
{
	store_obj *const *objs;
	size_t n, i;
	const store_obj *o;
	cJSON *t;
	int v = 0;

	*found = 0;
	if (pcname != NULL) {
		if (strcmp(pcname, "system-cluster-critical") == 0) {
			*found = 1;
			return 2000000000;
		}
		if (strcmp(pcname, "system-node-critical") == 0) {
			*found = 1;
			return 2000001000;
		}
		o = store_get(st, "priorityclasses.scheduling.k8s.io", "",
		    pcname);
		if (o == NULL)
			return 0;
		t = store_obj_tree(o);
		v = (int)cJSON_GetNumberValue(json_at(t, "value"));
		cJSON_Delete(t);
		*found = 1;
		return v;
	}
	n = store_list(st, "priorityclasses.scheduling.k8s.io", NULL, &objs);
	for (i = 0; i < n; i++) {
		t = store_obj_tree(objs[i]);
		if (cJSON_IsTrue(json_at(t, "globalDefault"))) {
			v = (int)cJSON_GetNumberValue(json_at(t, "value"));
			*default_name = xstrdup(objs[i]->name);
			*found = 1;
			cJSON_Delete(t);
			return v;
		}
		cJSON_Delete(t);
	}
	return 0;
}

/* DefaultTolerationSeconds: how long pods stay on a not-ready node. */
static long not_ready_seconds = 300, unreachable_seconds = 300;

void
admission_set_toleration_seconds(long not_ready, long unreachable)
{
	not_ready_seconds = not_ready;
	unreachable_seconds = unreachable;
}

/*
 * As kube-apiserver's DefaultTolerationSeconds plugin: a pod that does
 * not tolerate node.kubernetes.io/not-ready (or unreachable) NoExecute
 * gets a toleration of it for the default seconds (a toleration with no
 * key, or no effect, counts).
 */
static void
default_tolerations(cJSON *spec)
{
	static const char *const keys[] = { "node.kubernetes.io/not-ready",
	    "node.kubernetes.io/unreachable" };
	long secs[2] = { not_ready_seconds, unreachable_seconds };
	cJSON *tols = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");
	const cJSON *it;
	int i, have;

	for (i = 0; i < 2; i++) {
		cJSON *t;

		have = 0;
		cJSON_ArrayForEach(it, tols) {
			const char *k = json_str(it, "key");
			const char *e = json_str(it, "effect");

			if ((k == NULL || *k == '\0' || strcmp(k, keys[i]) ==
			    0) && (e == NULL || *e == '\0' ||
			    strcmp(e, "NoExecute") == 0))
				have = 1;
		}
		if (have)
			continue;
		if (!cJSON_IsArray(tols)) {
			json_del(spec, "tolerations");
			tols = cJSON_AddArrayToObject(spec, "tolerations");
		}
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "key", keys[i]);
		cJSON_AddStringToObject(t, "operator", "Exists");
		cJSON_AddStringToObject(t, "effect", "NoExecute");
		cJSON_AddNumberToObject(t, "tolerationSeconds", secs[i]);
		cJSON_AddItemToArray(tols, t);
	}
}

/* After creation a pod's scheduling gates may only be removed. */
static void
gates_only_removed(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *g, *o;

	cJSON_ArrayForEach(g, json_at(obj, "spec.schedulingGates")) {
		const char *name = json_str(g, "name");
		int found = 0;

		cJSON_ArrayForEach(o, json_at(old, "spec.schedulingGates"))
			if (name != NULL && json_str(o, "name") != NULL &&
			    strcmp(json_str(o, "name"), name) == 0)
				found = 1;
		if (!found) {
			status_add_cause(causes, "FieldValueForbidden",
			    "spec.schedulingGates", "Forbidden: only deletion "
			    "is allowed, but found new scheduling gate");
			return;
		}
	}
}

/*
 * Volcano 1.15's queue admission (SchedulingGatesQueueAdmission, its
 * webhook's part): a pod annotated scheduling.volcano.sh/
 * queue-allocation-gate: "true" gets the scheduling gate of that name,
 * which the scheduler removes once its queue has room, so that cluster
 * autoscalers see it Unschedulable only for a real shortage. A pod
 * created with any gate says PodScheduled=False SchedulingGated, as
 * kube-apiserver writes it.
 */
#define QUEUE_GATE "scheduling.volcano.sh/queue-allocation-gate"

static void
queue_gate(cJSON *obj, cJSON *spec, cJSON *status)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(json_at(obj,
	    "metadata.annotations"), QUEUE_GATE);
	const char *opt = cJSON_IsString(a) ? a->valuestring : NULL;
	cJSON *gates = cJSON_GetObjectItemCaseSensitive(spec,
	    "schedulingGates"), *it, *g, *conds, *c;
	int have = 0;

	if (opt != NULL && strcmp(opt, "true") == 0) {
		if (!cJSON_IsArray(gates)) {
			cJSON_DeleteItemFromObjectCaseSensitive(spec,
			    "schedulingGates");
			gates = cJSON_AddArrayToObject(spec, "schedulingGates");
		}
		cJSON_ArrayForEach(it, gates)
			if (json_str(it, "name") != NULL &&
			    strcmp(json_str(it, "name"), QUEUE_GATE) == 0)
				have = 1;
		if (!have) {
			g = cJSON_CreateObject();
			cJSON_AddStringToObject(g, "name", QUEUE_GATE);
			cJSON_AddItemToArray(gates, g);
		}
	}
	if (cJSON_GetArraySize(gates) == 0)
		return;
	conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conds = cJSON_AddArrayToObject(status, "conditions");
	}
	cJSON_ArrayForEach(it, conds)
		if (json_str(it, "type") != NULL &&
		    strcmp(json_str(it, "type"), "PodScheduled") == 0)
			return;
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "PodScheduled");
	cJSON_AddStringToObject(c, "status", "False");
	cJSON_AddNullToObject(c, "lastProbeTime");
	{
		char now[32];

		util_now(now);
		cJSON_AddStringToObject(c, "lastTransitionTime", now);
	}
	cJSON_AddStringToObject(c, "reason", "SchedulingGated");
	cJSON_AddStringToObject(c, "message", "Scheduling is blocked due to "
	    "non-empty scheduling gates");
	cJSON_AddItemToArray(conds, c);
}

static void
pod_mutate(store *st, cJSON *obj, const cJSON *old)
{
	cJSON *spec = json_obj(obj, "spec"), *status;
	const char *pc = json_str(spec, "priorityClassName");
	char *defname = NULL;
	int found, prio;

	podtemplate_defaults(spec);
	/* kube-apiserver drops a field whose gate is off unless the stored
	   pod has it already. */
	if (!resource_gate("GenericWorkload") &&
	    json_at(old, "spec.schedulingGroup") == NULL)
		json_del(spec, "schedulingGroup");
	if (old == NULL) {
		prio = priority_of(st, pc, &found, &defname);
		if (defname != NULL && pc == NULL)
			cJSON_AddStringToObject(spec, "priorityClassName",
			    defname);
		free(defname);
		if (cJSON_GetObjectItemCaseSensitive(spec, "priority") == NULL)
			cJSON_AddNumberToObject(spec, "priority", prio);
		set_default_str(spec, "preemptionPolicy",
		    "PreemptLowerPriority");
		if (json_at(spec, "enableServiceLinks") == NULL)
			cJSON_AddTrueToObject(spec, "enableServiceLinks");
		admission_service_account(st, json_str(obj,
		    "metadata.namespace"), spec);
		default_tolerations(spec);
		status = json_obj(obj, "status");
		set_default_str(status, "phase", "Pending");
		queue_gate(obj, spec, status);
	}
}

static void
template_mutate(cJSON *obj)
{
	podtemplate_defaults(json_at(obj, "spec.template.spec"));
}

static void
deployment_mutate(cJSON *obj)
{
	cJSON *spec = json_obj(obj, "spec"), *strat, *ru;

	set_default_num(spec, "replicas", 1);
	set_default_num(spec, "revisionHistoryLimit", 10);
	set_default_num(spec, "progressDeadlineSeconds", 600);
	strat = json_obj(spec, "strategy");
	set_default_str(strat, "type", "RollingUpdate");
	if (strcmp(json_str(strat, "type"), "RollingUpdate") == 0) {
		ru = json_obj(strat, "rollingUpdate");
		set_default_str(ru, "maxUnavailable", "25%");
		set_default_str(ru, "maxSurge", "25%");
	}
	template_mutate(obj);
}

static void
job_mutate(cJSON *obj, const cJSON *old)
{
	cJSON *spec = json_obj(obj, "spec"), *tmd, *labels, *sel, *ml;
	const char *uid = json_str(obj, "metadata.uid");
	const char *name = json_str(obj, "metadata.name");

	/* Both unset: one pod, once. parallelism alone: a work queue. */
	if (old == NULL && json_at(spec, "completions") == NULL &&
	    json_at(spec, "parallelism") == NULL)
		cJSON_AddNumberToObject(spec, "completions", 1);
	set_default_num(spec, "parallelism", 1);
	set_default_num(spec, "backoffLimit", 6);
	set_default_str(spec, "completionMode", "NonIndexed");
	if (cJSON_GetObjectItemCaseSensitive(spec, "suspend") == NULL)
		cJSON_AddFalseToObject(spec, "suspend");
	if (old == NULL && !cJSON_IsTrue(json_at(spec, "manualSelector")) &&
	    uid != NULL) {
		tmd = json_obj(json_obj(spec, "template"), "metadata");
		labels = json_obj(tmd, "labels");
		json_set_str(labels, "batch.kubernetes.io/controller-uid", uid);
		json_set_str(labels, "batch.kubernetes.io/job-name", name);
		json_set_str(labels, "controller-uid", uid);
		json_set_str(labels, "job-name", name);
		sel = json_obj(spec, "selector");
		ml = json_obj(sel, "matchLabels");
		json_set_str(ml, "batch.kubernetes.io/controller-uid", uid);
	}
	podtemplate_defaults_job(json_at(spec, "template.spec"));
}

int
admission_ip_used(store *st, const char *ip)
{
	store_obj *const *objs;
	size_t n = store_list(st, "services", NULL, &objs), i;
	char needle[64];

	snprintf(needle, sizeof needle, "\"clusterIP\":\"%s\"", ip);
	for (i = 0; i < n; i++)
		if (strstr(objs[i]->json->data, needle) != NULL)
			return 1;
	return 0;
}

static uint32_t svc_net = 0x0a600000u;	/* 10.96.0.0 */
static int svc_plen = 16;

int
admission_set_service_range(const char *cidr)
{
	uint32_t net;
	int plen;

	if (util_cidr4(cidr, &net, &plen, 12, 28) != 0)
		return -1;
	svc_net = net;
	svc_plen = plen;
	return 0;
}

void
admission_service_ip(unsigned n, char *out, size_t size)
{
	struct in_addr a = { htonl(svc_net + n) };

	inet_ntop(AF_INET, &a, out, (socklen_t)size);
}

/* A Service's ports as kube-apiserver checks them: some (but for an
   ExternalName or headless Service), each port and numeric targetPort in
   1-65535. */
static void
check_service_ports(const cJSON *obj, cJSON *causes)
{
	const cJSON *ports = json_at(obj, "spec.ports"), *p, *v;
	const char *t = json_str(obj, "spec.type");
	const char *ip = json_str(obj, "spec.clusterIP");
	char f[64];
	int i = 0;

	if (cJSON_GetArraySize(ports) == 0 && (t == NULL ||
	    strcmp(t, "ExternalName") != 0) && (ip == NULL ||
	    strcmp(ip, "None") != 0))
		status_add_cause(causes, "FieldValueRequired", "spec.ports",
		    "Required value");
	cJSON_ArrayForEach(p, ports) {
		v = json_at(p, "port");
		if (cJSON_IsNumber(v) && (v->valuedouble < 1 ||
		    v->valuedouble > 65535)) {
			snprintf(f, sizeof f, "spec.ports[%d].port", i);
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: %.0f: must be between 1 and 65535, "
			    "inclusive", v->valuedouble);
		}
		v = json_at(p, "targetPort");
		if (cJSON_IsNumber(v) && (v->valuedouble < 1 ||
		    v->valuedouble > 65535)) {
			snprintf(f, sizeof f, "spec.ports[%d].targetPort", i);
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: %.0f: must be between 1 and 65535, "
			    "inclusive", v->valuedouble);
		}
		i++;
	}
}

/* Allocate a cluster IP in the Service range not used by another Service. */
static void
service_mutate(store *st, cJSON *obj, const cJSON *old)
{
	cJSON *spec = json_obj(obj, "spec"), *p;
	const cJSON *oldip = old ? json_at(old, "spec.clusterIP") : NULL;
	static unsigned next = 1;
	char ip[32];
	int tries;

	set_default_str(spec, "type", "ClusterIP");
	set_default_str(spec, "sessionAffinity", "None");
	/* As kube-apiserver stores every Service: an empty load balancer. */
	if (json_at(obj, "status") == NULL)
		json_obj(json_obj(obj, "status"), "loadBalancer");
	cJSON_ArrayForEach(p, json_at(spec, "ports")) {
		const cJSON *port = json_at(p, "port");

		const cJSON *tp = json_at(p, "targetPort");

		set_default_str(p, "protocol", "TCP");
		/*
		 * As kube-apiserver defaults it: absent, 0 or "" is the
		 * port (client-go's typed clients send an unset intstr as
		 * 0, as KubeRay's head Service has it).
		 */
		if (cJSON_IsNumber(port) && (tp == NULL ||
		    (cJSON_IsNumber(tp) && tp->valuedouble == 0) ||
		    (cJSON_IsString(tp) && *tp->valuestring == '\0')))
			json_set_num(p, "targetPort", port->valuedouble);
	}
	if (oldip != NULL && cJSON_IsString(oldip) &&
	    (json_str(spec, "clusterIP") == NULL ||
	    *json_str(spec, "clusterIP") == '\0')) {
		/* Kept when not sent; a different one is refused. */
		json_set(spec, "clusterIP", cJSON_Duplicate(oldip, 1));
	} else if (json_at(spec, "clusterIP") == NULL) {
		unsigned size = 1u << (32 - svc_plen);

		for (tries = 0; tries < (int)size - 2; tries++) {
			if (next < 1 || next > size - 2)
				next = 1;
			admission_service_ip(next, ip, sizeof ip);
			next++;
			if (!admission_ip_used(st, ip))
				break;
		}
		cJSON_AddStringToObject(spec, "clusterIP", ip);
	}
	if (json_at(spec, "clusterIPs") == NULL) {
		p = cJSON_CreateArray();
		cJSON_AddItemToArray(p, cJSON_CreateString(json_str(spec,
		    "clusterIP")));
		cJSON_AddItemToObject(spec, "clusterIPs", p);
	}
	/* kube-apiserver's defaults on a single-stack IPv4 cluster (a
	   headless Service's policy is left to the client). */
	if (strcmp(json_str(spec, "type"), "ExternalName") != 0) {
		if (json_str(spec, "clusterIP") == NULL ||
		    strcmp(json_str(spec, "clusterIP"), "None") != 0)
			set_default_str(spec, "ipFamilyPolicy", "SingleStack");
		if (json_at(spec, "ipFamilies") == NULL) {
			p = cJSON_CreateArray();
			cJSON_AddItemToArray(p, cJSON_CreateString("IPv4"));
			cJSON_AddItemToObject(spec, "ipFamilies", p);
		}
		set_default_str(spec, "internalTrafficPolicy", "Cluster");
	}
	if (strcmp(json_str(spec, "type"), "NodePort") == 0 ||
	    strcmp(json_str(spec, "type"), "LoadBalancer") == 0)
		set_default_str(spec, "externalTrafficPolicy", "Cluster");
}

/* A CRD is accepted and established as soon as it is stored. */
static void
crd_mutate(cJSON *obj)
{
	cJSON *st = json_obj(obj, "status"), *conds, *c, *vs;
	const cJSON *v;
	char now[32];
	int i;
	static const char *types[] = { "NamesAccepted", "Established" };
	static const char *reasons[] = { "NoConflicts", "InitialNamesAccepted" };
	static const char *msgs[] = { "no conflicts found",
	    "the initial names have been accepted" };

	util_now(now);
	conds = cJSON_CreateArray();
	for (i = 0; i < 2; i++) {
		const cJSON *prev;
		const char *since = now;

		cJSON_ArrayForEach(prev, json_at(st, "conditions"))
			if (json_str(prev, "type") && strcmp(json_str(prev,
			    "type"), types[i]) == 0 &&
			    json_str(prev, "lastTransitionTime"))
				since = json_str(prev, "lastTransitionTime");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", types[i]);
		cJSON_AddStringToObject(c, "status", "True");
		cJSON_AddStringToObject(c, "lastTransitionTime", since);
		cJSON_AddStringToObject(c, "reason", reasons[i]);
		cJSON_AddStringToObject(c, "message", msgs[i]);
		cJSON_AddItemToArray(conds, c);
	}
	json_set(st, "conditions", conds);
	if (json_at(obj, "spec.names") != NULL)
		json_set(st, "acceptedNames", cJSON_Duplicate(json_at(obj,
		    "spec.names"), 1));
	vs = cJSON_CreateArray();
	cJSON_ArrayForEach(v, json_at(obj, "spec.versions"))
		if (cJSON_IsTrue(json_at(v, "storage")) && json_str(v, "name"))
			cJSON_AddItemToArray(vs, cJSON_CreateString(json_str(v,
			    "name")));
	json_set(st, "storedVersions", vs);
}

/*
 * A Secret's stringData goes into data, base64-encoded, and is not
 * stored (kube-apiserver's Secret strategy): a key in both takes
 * stringData's value; type defaults to Opaque.
 */
static void
secret_mutate(cJSON *obj)
{
	cJSON *sd = cJSON_DetachItemFromObjectCaseSensitive(obj, "stringData");
	const cJSON *e;

	set_default_str(obj, "type", "Opaque");
	if (!cJSON_IsObject(sd)) {
		cJSON_Delete(sd);
		return;
	}
	cJSON_ArrayForEach(e, sd) {
		size_t n;
		char *b;

		if (!cJSON_IsString(e))
			continue;
		n = strlen(e->valuestring);
		b = xmalloc(4 * ((n + 2) / 3) + 1);
		EVP_EncodeBlock((unsigned char *)b,
		    (const unsigned char *)e->valuestring, (int)n);
		json_set_str(json_obj(obj, "data"), e->string, b);
		free(b);
	}
	cJSON_Delete(sd);
}

/*
 * The hooks of the built-in kinds' descriptors (registry/kinds/): the
 * defaults kube-apiserver's strategies fill in.
 */
void
admission_pod_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	pod_mutate(st, obj, old);
}

void
admission_deployment_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	deployment_mutate(obj);
}

void
admission_replicaset_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	set_default_num(json_obj(obj, "spec"), "replicas", 1);
	template_mutate(obj);
}

void
admission_job_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	job_mutate(obj, old);
}

void
admission_service_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	service_mutate(st, obj, old);
}

void
admission_namespace_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	cJSON *md = json_obj(obj, "metadata");
	cJSON *fin, *labels = json_obj(md, "labels");

	json_set_str(labels, "kubernetes.io/metadata.name",
	    json_str(md, "name"));
	if (json_at(obj, "spec.finalizers") == NULL) {
		fin = cJSON_CreateArray();
		cJSON_AddItemToArray(fin, cJSON_CreateString("kubernetes"));
		cJSON_AddItemToObject(json_obj(obj, "spec"), "finalizers", fin);
	}
	if (old == NULL)
		json_set_str(json_obj(obj, "status"), "phase", "Active");
}

void
admission_priorityclass_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	set_default_str(obj, "preemptionPolicy", "PreemptLowerPriority");
}

void
admission_secret_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	secret_mutate(obj);
}

/*
 * Claims and volumes are stored as kube-apiserver's strategies leave
 * them: nothing here provisions or binds, so they stay Pending.
 */
static void
volume_mutate(cJSON *obj, const cJSON *old, int pv)
{
	cJSON *spec = json_obj(obj, "spec");

	set_default_str(spec, "volumeMode", "Filesystem");
	if (pv)
		set_default_str(spec, "persistentVolumeReclaimPolicy",
		    "Retain");
	if (old == NULL)
		json_set_str(json_obj(obj, "status"), "phase", "Pending");
}

void
admission_pvc_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	volume_mutate(obj, old, 0);
}

void
admission_pv_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	volume_mutate(obj, old, 1);
}

void
admission_event_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	set_default_num(obj, "count", 1);
}

void
admission_limitrange_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	limitrange_defaults(obj);
}

void
admission_crd_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	crd_mutate(obj);
	if (old == NULL) {
		/* Deleting the CRD first deletes its objects (gc.c). */
		cJSON *fin = cJSON_CreateArray();

		cJSON_AddItemToArray(fin, cJSON_CreateString(
		    "customresourcecleanup.apiextensions.k8s.io"));
		json_set(json_obj(obj, "metadata"), "finalizers", fin);
	}
}

void
admission_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	if (r->desc != NULL && r->desc->mutate != NULL)
		r->desc->mutate(st, r, obj, old);
}

/*
 * A cluster IP the user gave on create: in the Service range (and not
 * its network or broadcast address) and no other Service's, as
 * kube-apiserver's allocator takes it.
 */
static void
check_cluster_ip(store *st, const cJSON *obj, const cJSON *old,
    cJSON *causes)
{
	const char *ip = json_str(obj, "spec.clusterIP");
	unsigned a, b, c, d;
	char end;

	if (old != NULL || ip == NULL || *ip == '\0' ||
	    strcmp(ip, "None") == 0)
		return;
	if (sscanf(ip, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 ||
	    c > 255 || d > 255)
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.clusterIPs[0]", "Invalid value: \"%s\": must be a "
		    "valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)", ip);
	else if (((a << 24 | b << 16 | c << 8 | d) & (0xffffffffu <<
	    (32 - svc_plen))) != svc_net || (a << 24 | b << 16 | c << 8 | d) ==
	    svc_net || (a << 24 | b << 16 | c << 8 | d) == (svc_net |
	    ~(0xffffffffu << (32 - svc_plen))))
		status_add_cause(causes, "FieldValueInvalid", "spec.clusterIPs",
		    "Invalid value: []string{\"%s\"}: failed to allocate IP "
		    "%s: the provided network does not match the current range",
		    ip, ip);
	else if (admission_ip_used(st, ip))
		status_add_cause(causes, "FieldValueInvalid", "spec.clusterIPs",
		    "Invalid value: []string{\"%s\"}: failed to allocate IP "
		    "%s: provided IP is already allocated", ip, ip);
}

/* Copy from's member key into to (or remove it there). */
static void
take(cJSON *to, const cJSON *from, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);

	json_del(to, key);
	if (v != NULL)
		cJSON_AddItemToObject(to, key, cJSON_Duplicate(v, 1));
}

/*
 * Whether a pod update changes only what kube-apiserver lets change in a
 * pod's spec: containers' and init containers' images,
 * activeDeadlineSeconds, tolerations, scheduling gates (removed, checked
 * apart), ephemeral containers, a negative terminationGracePeriodSeconds,
 * and a nodeName not set before (volrayd's own writers bind that way).
 */
static int
pod_update_allowed(const cJSON *obj, const cJSON *old)
{
	static const char *const lists[] = { "containers", "initContainers",
	    NULL };
	const cJSON *ns = json_at(obj, "spec"), *os = json_at(old, "spec");
	cJSON *a, *b, *ca, *cb;
	int i, j, same;

	if (json_equal(ns, os))
		return 1;
	if (!cJSON_IsObject(ns) || !cJSON_IsObject(os))
		return 0;
	a = cJSON_Duplicate(ns, 1);
	b = cJSON_Duplicate(os, 1);
	for (i = 0; lists[i] != NULL; i++) {
		j = 0;
		cJSON_ArrayForEach(ca, cJSON_GetObjectItemCaseSensitive(a,
		    lists[i]))
			if ((cb = cJSON_GetArrayItem(
			    cJSON_GetObjectItemCaseSensitive(b, lists[i]),
			    j++)) != NULL)
				take(cb, ca, "image");
	}
	take(b, a, "activeDeadlineSeconds");
	take(b, a, "tolerations");
	take(b, a, "schedulingGates");
	take(b, a, "ephemeralContainers");
	if (cJSON_IsNumber(json_at(os, "terminationGracePeriodSeconds")) &&
	    json_at(os, "terminationGracePeriodSeconds")->valuedouble < 0)
		take(b, a, "terminationGracePeriodSeconds");
	if (json_str(os, "nodeName") == NULL || *json_str(os, "nodeName") ==
	    '\0')
		take(b, a, "nodeName");
	same = json_equal(a, b);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return same;
}

void
admission_pod_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	podtemplate_check(json_at(obj, "spec"), "spec", causes, 0);
	if (admission_gang_pod_validate(obj, old, causes))
		return;
	if (old != NULL)
		gates_only_removed(obj, old, causes);
	if (old != NULL && !json_equal(json_at(obj, "spec.containers"),
	    json_at(old, "spec.containers")) &&
	    cJSON_GetArraySize(json_at(obj, "spec.containers")) !=
	    cJSON_GetArraySize(json_at(old, "spec.containers")))
		status_add_cause(causes, "FieldValueForbidden",
		    "spec", "Forbidden: pod updates may not add or "
		    "remove containers");
	else if (old != NULL && !pod_update_allowed(obj, old))
		status_add_cause(causes, "FieldValueForbidden",
		    "spec", "Forbidden: pod updates may not change "
		    "fields other than `spec.containers[*].image`,"
		    "`spec.initContainers[*].image`,"
		    "`spec.activeDeadlineSeconds`,`spec.tolerations` "
		    "(only additions to existing tolerations),"
		    "`spec.terminationGracePeriodSeconds` (allow it to "
		    "be set to 1 if it was previously negative)");
}

/* Deployments and ReplicaSets. */
void
admission_replicas_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	podtemplate_check_nonneg(obj, "spec.replicas", causes);
	podtemplate_check_selector(obj, causes);
	if (old != NULL && !json_equal(json_at(obj, "spec.selector"),
	    json_at(old, "spec.selector"))) {
		/* apps/v1: immutable, shown as JSON as 1.34 does. */
		char *v = json_print_sorted(json_at(obj, "spec.selector"));

		status_add_cause(causes, "FieldValueInvalid",
		    "spec.selector", "Invalid value: %s: field is "
		    "immutable", v);
		free(v);
	}
	if (json_at(obj, "spec.template.spec") != NULL)
		podtemplate_check(json_at(obj, "spec.template.spec"),
		    "spec.template.spec", causes, 0);
}

void
admission_job_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	podtemplate_check_nonneg(obj, "spec.parallelism", causes);
	podtemplate_check_nonneg(obj, "spec.completions", causes);
	podtemplate_check_nonneg(obj, "spec.backoffLimit", causes);
	if (json_at(obj, "spec.template.spec") == NULL)
		status_add_cause(causes, "FieldValueRequired",
		    "spec.template.spec.containers", "Required value");
	else
		podtemplate_check(json_at(obj, "spec.template.spec"),
		    "spec.template.spec", causes, 1);
	if (old != NULL && !json_equal(json_at(obj, "spec.template"),
	    json_at(old, "spec.template")))
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.template", "Invalid value: field is "
		    "immutable");
}

void
admission_service_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	const char *t = json_str(obj, "spec.type");

	check_cluster_ip(st, obj, old, causes);
	check_service_ports(obj, causes);
	if (old != NULL && json_str(old, "spec.clusterIP") != NULL &&
	    *json_str(old, "spec.clusterIP") != '\0' &&
	    json_str(obj, "spec.clusterIP") != NULL &&
	    *json_str(obj, "spec.clusterIP") != '\0' &&
	    strcmp(json_str(obj, "spec.clusterIP"), json_str(old,
	    "spec.clusterIP")) != 0 && (t == NULL ||
	    strcmp(t, "ExternalName") != 0))
		/* Kept silently before: kube-apiserver's 422. */
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.clusterIPs[0]", "Invalid value: [\"%s\"]: may "
		    "not change once set", json_str(obj,
		    "spec.clusterIP"));
	if (t && strcmp(t, "ClusterIP") && strcmp(t, "NodePort") &&
	    strcmp(t, "LoadBalancer") && strcmp(t, "ExternalName"))
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.type", "Unsupported value: \"%s\": supported "
		    "values: \"ClusterIP\", \"ExternalName\", "
		    "\"LoadBalancer\", \"NodePort\"", t);
}

void
admission_priorityclass_validate(store *st, const resource *r,
    const cJSON *obj, const cJSON *old, cJSON *causes)
{
	if (!cJSON_IsNumber(json_at(obj, "value")))
		status_add_cause(causes, "FieldValueRequired", "value",
		    "Required value");
	if (old != NULL && !json_equal(json_at(obj, "value"),
	    json_at(old, "value")))
		status_add_cause(causes, "FieldValueForbidden",
		    "value", "Forbidden: may not be changed in an "
		    "update.");
}

void
admission_configmap_validate(store *st, const resource *r,
    const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(obj, "data"))
		if (!cJSON_IsString(it))
			status_add_cause(causes, "FieldValueTypeInvalid",
			    "data", "Invalid value: data values must be "
			    "strings");
	check_keys(json_at(obj, "data"), "data", causes);
	check_keys(json_at(obj, "binaryData"), "binaryData", causes);
}

void
admission_secret_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	const char *t = json_str(obj, "type");
	const char *ot = old ? json_str(old, "type") : NULL;

	if (old != NULL && !(t == NULL && ot == NULL) && (t == NULL ||
	    ot == NULL || strcmp(t, ot) != 0))
		status_add_cause(causes, "FieldValueInvalid", "type",
		    "Invalid value: \"%s\": field is immutable",
		    t ? t : "");
	check_keys(json_at(obj, "data"), "data", causes);
	if (t != NULL && strcmp(t, "kubernetes.io/tls") == 0) {
		/* kube-apiserver's ValidateSecret for TLS. */
		if (cJSON_GetObjectItemCaseSensitive(json_at(obj,
		    "data"), "tls.crt") == NULL)
			status_add_cause(causes, "FieldValueRequired",
			    "data[tls.crt]", "Required value");
		if (cJSON_GetObjectItemCaseSensitive(json_at(obj,
		    "data"), "tls.key") == NULL)
			status_add_cause(causes, "FieldValueRequired",
			    "data[tls.key]", "Required value");
	}
}

/* The CRD's names, scope and versions, and its versions' schemas. */
void
admission_crd_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	char *cause = NULL;

	if (resource_check_crd(obj, &cause) != 0) {
		status_add_cause(causes, "FieldValueInvalid", "spec", "%s",
		    cause);
		free(cause);
	}
}

void
admission_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	if (admission_volcano_validate(st, r, obj, old, causes))
		return;
	if (r->desc != NULL && r->desc->validate != NULL)
		r->desc->validate(st, r, obj, old, causes);
}
