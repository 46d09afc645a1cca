/*
 * Pod resource arithmetic and node matching. Quantities are parsed into
 * doubles and rounded up into integer base units (millicores for cpu,
 * bytes for memory), as Kubernetes' resource.Quantity rounds MilliValue
 * and Value. Extended resources ("nvidia.com/gpu") live in a small array
 * by name; anything beyond PODSPEC_MAX_EXT distinct names is ignored.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/xmalloc.h"

int
quantity_parse(const char *s, double *out)
{
	static const struct { const char *suf; double mul; } sufs[] = {
		{ "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
		{ "Ti", 1099511627776.0 }, { "Pi", 1125899906842624.0 },
		{ "Ei", 1152921504606846976.0 }, { "n", 1e-9 }, { "u", 1e-6 },
		{ "m", 1e-3 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
		{ "T", 1e12 }, { "P", 1e15 }, { "E", 1e18 }, { NULL, 0 } };
	char *end;
	double v;
	int i;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtod(s, &end);
	if (end == s || !isfinite(v))
		return -1;
	if (*end == '\0') {
		*out = v;
		return 0;
	}
	for (i = 0; sufs[i].suf != NULL; i++) {
		if (strcmp(end, sufs[i].suf) == 0) {
			*out = v * sufs[i].mul;
			return 0;
		}
	}
	return -1;
}

int
quantity_json(const cJSON *v, double *out)
{
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 0;
	}
	if (cJSON_IsString(v))
		return quantity_parse(v->valuestring, out);
	return -1;
}

void
quantity_format(double v, int binary, char out[32])
{
	static const struct { const char *suf; double mul; } bins[] = {
		{ "Ti", 1099511627776.0 }, { "Gi", 1073741824.0 },
		{ "Mi", 1048576.0 }, { "Ki", 1024.0 }, { NULL, 0 } };
	double m = v * 1000;
	int i;

	if (v == floor(v) && fabs(v) < 9e18) {
		for (i = 0; binary && v != 0 && bins[i].suf != NULL; i++)
			if (fmod(v, bins[i].mul) == 0) {
				snprintf(out, 32, "%lld%s",
				    (long long)(v / bins[i].mul), bins[i].suf);
				return;
			}
		snprintf(out, 32, "%lld", (long long)v);
	} else if (fabs(m - floor(m + 0.5)) < 1e-6)
		snprintf(out, 32, "%lldm", (long long)floor(m + 0.5));
	else
		snprintf(out, 32, "%g", v);
}

static int64_t
round_up(double v)
{
	double c = ceil(v - 1e-9);

	return c > 9e18 ? INT64_MAX : c < 0 ? 0 : (int64_t)c;
}

/*
 * Extended resource names, interned: a resource vector holds a pointer,
 * not a copy (sessions make hundreds of thousands of vectors a cycle).
 * Few distinct names exist; a mutex because the scheduler's session
 * thread reads resources too.
 */
#define EXT_NAME_MAX	64

static const char *
intern(const char *name)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char **names;
	static size_t n, cap;
	const char *out = NULL;
	size_t i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < n && out == NULL; i++)
		if (strcmp(names[i], name) == 0)
			out = names[i];
	if (out == NULL) {
		XGROW(names, cap, n + 1);
		names[n] = xstrdup(name);
		out = names[n++];
	}
	pthread_mutex_unlock(&mu);
	return out;
}

static int64_t *
slot(struct podspec_res *r, const char *name, int create)
{
	int i;

	if (strcmp(name, "cpu") == 0)
		return &r->cpu;
	if (strcmp(name, "memory") == 0)
		return &r->memory;
	if (strcmp(name, "pods") == 0)
		return &r->pods;
	for (i = 0; i < r->next; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return &r->ext[i].value;
	if (!create || r->next == PODSPEC_MAX_EXT ||
	    strlen(name) >= EXT_NAME_MAX)
		return NULL;
	r->ext[r->next].name = intern(name);
	r->ext[r->next].value = 0;
	return &r->ext[r->next++].value;
}

int64_t
podspec_res_get(const struct podspec_res *r, const char *name)
{
	int64_t *p = slot((struct podspec_res *)r, name, 0);

	return p != NULL ? *p : 0;
}

/* Read a resource list ({"cpu": "500m", ...}) into r. */
void
podspec_read_list(const cJSON *list, struct podspec_res *r)
{
	const cJSON *it;
	double v;
	int64_t *p;

	cJSON_ArrayForEach(it, list) {
		if (it->string == NULL || quantity_json(it, &v) != 0 ||
		    (p = slot(r, it->string, 1)) == NULL)
			continue;
		*p = strcmp(it->string, "cpu") == 0 ? round_up(v * 1000) :
		    round_up(v);
	}
}

/* A container's requests, a missing request taken from its limit. */
static void
container_requests(const cJSON *c, struct podspec_res *r)
{
	struct podspec_res lim;
	int i;

	memset(r, 0, sizeof *r);
	memset(&lim, 0, sizeof lim);
	podspec_read_list(json_at(c, "resources.requests"), r);
	podspec_read_list(json_at(c, "resources.limits"), &lim);
	if (json_at(c, "resources.requests.cpu") == NULL)
		r->cpu = lim.cpu;
	if (json_at(c, "resources.requests.memory") == NULL)
		r->memory = lim.memory;
	/* Extended resource names have dots too: by name, never as paths. */
	for (i = 0; i < lim.next; i++) {
		int64_t *p = slot(r, lim.ext[i].name, 1);

		if (p != NULL && *p == 0)
			*p = lim.ext[i].value;
	}
}

void
podspec_res_add(struct podspec_res *a, const struct podspec_res *b, int sign)
{
	int i;

	a->cpu += sign * b->cpu;
	a->memory += sign * b->memory;
	a->pods += sign * b->pods;
	for (i = 0; i < b->next; i++) {
		int64_t *p = slot(a, b->ext[i].name, 1);

		if (p != NULL)
			*p += sign * b->ext[i].value;
	}
}

/* a = max(a, b) per resource. */
static void
res_max(struct podspec_res *a, const struct podspec_res *b)
{
	int i;

	if (b->cpu > a->cpu)
		a->cpu = b->cpu;
	if (b->memory > a->memory)
		a->memory = b->memory;
	for (i = 0; i < b->next; i++) {
		int64_t *p = slot(a, b->ext[i].name, 1);

		if (p != NULL && b->ext[i].value > *p)
			*p = b->ext[i].value;
	}
}

void
podspec_requests(const cJSON *pod, struct podspec_res *out)
{
	struct podspec_res c, init;
	const cJSON *it;

	memset(out, 0, sizeof *out);
	memset(&init, 0, sizeof init);
	cJSON_ArrayForEach(it, json_at(pod, "spec.containers")) {
		container_requests(it, &c);
		podspec_res_add(out, &c, 1);
	}
	cJSON_ArrayForEach(it, json_at(pod, "spec.initContainers")) {
		container_requests(it, &c);
		res_max(&init, &c);
	}
	res_max(out, &init);
	/* Pod overhead (RuntimeClass) adds to the requests. */
	if (json_at(pod, "spec.overhead") != NULL) {
		memset(&c, 0, sizeof c);
		podspec_read_list(json_at(pod, "spec.overhead"), &c);
		podspec_res_add(out, &c, 1);
	}
	out->pods = 1;
}

/*
 * Add one ResourceList's cpu and memory (positive amounts only) into
 * sums[0..1]; a resource named in limits but not in requests counts as
 * requested too when dflt is given (the API's defaulting of requests from
 * limits). Sets bit 0 of *found for cpu, bit 1 for memory.
 */
static void
qos_add(const cJSON *list, const cJSON *dflt, double sums[2], int *found)
{
	static const char *names[] = { "cpu", "memory" };
	const cJSON *q;
	double v;
	int k;

	for (k = 0; k < 2; k++) {
		q = cJSON_GetObjectItemCaseSensitive(list, names[k]);
		if (q == NULL && dflt != NULL)
			q = cJSON_GetObjectItemCaseSensitive(dflt, names[k]);
		if (q == NULL || quantity_json(q, &v) != 0 || v <= 0)
			continue;
		sums[k] += v;
		*found |= 1 << k;
	}
}

/*
 * What the API defaults a missing pod-level cpu or memory request to when
 * the pod-level limit is set: the containers' effective request (the sum
 * of the containers', or the largest init container's if larger) when any
 * container asks for it, else the limit itself.
 */
static cJSON *
pod_request_defaults(const cJSON *pod)
{
	static const char *names[] = { "cpu", "memory" };
	cJSON *out = cJSON_CreateObject();
	const cJSON *it, *lim = json_at(pod, "spec.resources.limits"), *q;
	double sum[2] = { 0, 0 }, init[2] = { 0, 0 }, v;
	int found, k;

	for (k = 0; k < 2; k++) {
		found = 0;
		cJSON_ArrayForEach(it, json_at(pod, "spec.containers")) {
			double one[2] = { 0, 0 };

			qos_add(json_at(it, "resources.requests"),
			    json_at(it, "resources.limits"), one, &found);
			sum[k] += one[k];
		}
		cJSON_ArrayForEach(it, json_at(pod, "spec.initContainers")) {
			double one[2] = { 0, 0 };

			qos_add(json_at(it, "resources.requests"),
			    json_at(it, "resources.limits"), one, &found);
			if (one[k] > init[k])
				init[k] = one[k];
		}
		if (found & (1 << k))
			cJSON_AddNumberToObject(out, names[k],
			    sum[k] > init[k] ? sum[k] : init[k]);
		else if ((q = cJSON_GetObjectItemCaseSensitive(lim,
		    names[k])) != NULL && quantity_json(q, &v) == 0)
			cJSON_AddNumberToObject(out, names[k], v);
	}
	return out;
}

/*
 * Kubernetes' ComputePodQOS: only cpu and memory count; BestEffort when
 * no container (init containers included) requests or limits either;
 * Guaranteed when every container limits both and the summed requests
 * equal the summed limits; else Burstable. Pod-level spec.resources, when
 * set, decide alone (PodLevelResources, on by default since 1.34).
 */
const char *
podspec_qos(const cJSON *pod)
{
	static const char *lists[] = { "spec.containers", "spec.initContainers" };
	const cJSON *podres = json_at(pod, "spec.resources"), *it;
	double req[2] = { 0, 0 }, lim[2] = { 0, 0 };
	int rfound = 0, lfound = 0, guaranteed = 1, k, l;

	if (cJSON_GetArraySize(json_at(podres, "requests")) > 0 ||
	    cJSON_GetArraySize(json_at(podres, "limits")) > 0) {
		cJSON *dflt = pod_request_defaults(pod);

		qos_add(json_at(podres, "requests"), dflt, req, &rfound);
		qos_add(json_at(podres, "limits"), NULL, lim, &lfound);
		guaranteed = lfound == 3;
		cJSON_Delete(dflt);
	} else
		for (l = 0; l < 2; l++)
			cJSON_ArrayForEach(it, json_at(pod, lists[l])) {
				const cJSON *cl = json_at(it,
				    "resources.limits");
				int cfound = 0;

				qos_add(json_at(it, "resources.requests"), cl,
				    req, &rfound);
				qos_add(cl, NULL, lim, &cfound);
				lfound |= cfound;
				if (cfound != 3)
					guaranteed = 0;
			}
	if (rfound == 0 && lfound == 0)
		return "BestEffort";
	for (k = 0; k < 2 && guaranteed; k++)
		/* Equal up to the doubles' rounding ("1" and "1000m"). */
		if (((rfound >> k) & 1) != ((lfound >> k) & 1) ||
		    fabs(req[k] - lim[k]) > 1e-9 * fabs(lim[k]))
			guaranteed = 0;
	return guaranteed ? "Guaranteed" : "Burstable";
}

void
podspec_allocatable(const cJSON *node, struct podspec_res *out)
{
	const cJSON *list = json_at(node, "status.allocatable");
	const cJSON *ann = json_at(node, "metadata.annotations");
	double v;

	memset(out, 0, sizeof *out);
	if (list == NULL || cJSON_GetArraySize(list) == 0)
		list = json_at(node, "status.capacity");
	if (list != NULL && cJSON_GetArraySize(list) > 0) {
		podspec_read_list(list, out);
		if (json_at(list, "pods") == NULL)
			out->pods = 110;
		return;
	}
	/* Annotation keys have dots: look them up whole, not as paths. */
	if (quantity_json(cJSON_GetObjectItemCaseSensitive(ann,
	    "volray.io/cpu"), &v) == 0)
		out->cpu = round_up(v * 1000);
	if (quantity_json(cJSON_GetObjectItemCaseSensitive(ann,
	    "volray.io/memory"), &v) == 0)
		out->memory = round_up(v);
	out->pods = quantity_json(cJSON_GetObjectItemCaseSensitive(ann,
	    "volray.io/pods"), &v) == 0 ? round_up(v) : 110;
}

const char *
podspec_res_exceeds(const struct podspec_res *want,
    const struct podspec_res *free)
{
	int i;

	if (want->pods > free->pods)
		return "pods";
	if (want->cpu > free->cpu)
		return "cpu";
	if (want->memory > free->memory)
		return "memory";
	for (i = 0; i < want->next; i++)
		if (want->ext[i].value > 0 &&
		    want->ext[i].value > podspec_res_get(free, want->ext[i].name))
			return want->ext[i].name;
	return NULL;
}

static int
in_values(const cJSON *values, const char *v)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, values)
		if (cJSON_IsString(it) && strcmp(it->valuestring, v) == 0)
			return 1;
	return 0;
}

/* One NodeSelectorRequirement against a value (NULL when the key is absent). */
static int
requirement(const cJSON *req, const char *v)
{
	const char *op = json_str(req, "operator");
	const cJSON *values = json_at(req, "values");
	const cJSON *first = cJSON_GetArrayItem(values, 0);
	char *end;
	long long a, b;

	if (op == NULL)
		return 0;
	if (strcmp(op, "In") == 0)
		return v != NULL && in_values(values, v);
	if (strcmp(op, "NotIn") == 0)
		return v == NULL || !in_values(values, v);
	if (strcmp(op, "Exists") == 0)
		return v != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return v == NULL;
	if ((strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) && v != NULL &&
	    cJSON_IsString(first)) {
		a = strtoll(v, &end, 10);
		if (*end != '\0' || *v == '\0')
			return 0;
		b = strtoll(first->valuestring, &end, 10);
		if (*end != '\0')
			return 0;
		return op[0] == 'G' ? a > b : a < b;
	}
	return 0;
}

/* A NodeSelectorTerm: every expression and field holds; an empty term none. */
static int
term_matches(const cJSON *term, const cJSON *labels, const char *name)
{
	const cJSON *exprs = json_at(term, "matchExpressions");
	const cJSON *fields = json_at(term, "matchFields");
	const cJSON *it;

	if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
		return 0;
	cJSON_ArrayForEach(it, exprs) {
		const char *key = json_str(it, "key");
		const cJSON *v = key ? cJSON_GetObjectItemCaseSensitive(labels,
		    key) : NULL;

		if (key == NULL || !requirement(it, cJSON_IsString(v) ?
		    v->valuestring : NULL))
			return 0;
	}
	cJSON_ArrayForEach(it, fields) {
		const char *key = json_str(it, "key");

		if (key == NULL || strcmp(key, "metadata.name") != 0 ||
		    !requirement(it, name))
			return 0;
	}
	return 1;
}

int
podspec_node_matches(const cJSON *pod, const cJSON *node)
{
	const cJSON *labels = json_at(node, "metadata.labels");
	const char *name = json_str(node, "metadata.name");
	const cJSON *sel = json_at(pod, "spec.nodeSelector"), *it, *req;

	cJSON_ArrayForEach(it, sel) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels,
		    it->string);

		if (!cJSON_IsString(it) || !cJSON_IsString(v) ||
		    strcmp(it->valuestring, v->valuestring) != 0)
			return 0;
	}
	req = json_at(pod, "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution");
	if (req == NULL)
		return 1;
	cJSON_ArrayForEach(it, json_at(req, "nodeSelectorTerms"))
		if (term_matches(it, labels, name ? name : ""))
			return 1;
	return 0;
}

/* Whether one toleration tolerates one taint (Kubernetes' ToleratesTaint). */
static int
tolerates(const cJSON *tol, const cJSON *taint)
{
	const char *tk = json_str(tol, "key"), *op = json_str(tol, "operator");
	const char *te = json_str(tol, "effect"), *tv = json_str(tol, "value");
	const char *k = json_str(taint, "key"), *v = json_str(taint, "value");
	const char *e = json_str(taint, "effect");

	if (te != NULL && *te && (e == NULL || strcmp(te, e) != 0))
		return 0;
	if (tk != NULL && *tk && (k == NULL || strcmp(tk, k) != 0))
		return 0;
	if (op != NULL && strcmp(op, "Exists") == 0)
		return 1;
	/* Equal (the default): an empty key matches only with Exists. */
	if (tk == NULL || *tk == '\0')
		return 0;
	return strcmp(tv ? tv : "", v ? v : "") == 0;
}

const cJSON *
podspec_untolerated(const cJSON *pod, const cJSON *node)
{
	const cJSON *taint, *tol;

	cJSON_ArrayForEach(taint, json_at(node, "spec.taints")) {
		const char *e = json_str(taint, "effect");
		int ok = 0;

		if (e == NULL || strcmp(e, "PreferNoSchedule") == 0)
			continue;
		cJSON_ArrayForEach(tol, json_at(pod, "spec.tolerations"))
			if (tolerates(tol, taint)) {
				ok = 1;
				break;
			}
		if (!ok)
			return taint;
	}
	return NULL;
}

int
podspec_tolerates_unschedulable(const cJSON *pod)
{
	cJSON *taint = cJSON_CreateObject();
	const cJSON *tol;
	int ok = 0;

	cJSON_AddStringToObject(taint, "key", "node.kubernetes.io/unschedulable");
	cJSON_AddStringToObject(taint, "effect", "NoSchedule");
	cJSON_ArrayForEach(tol, json_at(pod, "spec.tolerations"))
		if (tolerates(tol, taint)) {
			ok = 1;
			break;
		}
	cJSON_Delete(taint);
	return ok;
}
