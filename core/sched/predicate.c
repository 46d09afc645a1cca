/*
 * Predicates and scores in C, the fast path every placement takes. With
 * the predicates plugin on, a node fits a task when it is schedulable (or
 * the pod tolerates the unschedulable taint, as DaemonSet pods do),
 * matches the pod's nodeSelector and required node affinity, carries no
 * NoSchedule/NoExecute taint the pod does not tolerate, and satisfies the
 * pod's required pod (anti-)affinity on kubernetes.io/hostname; the
 * resources (cpu, memory, pod count, extended resources) are always
 * checked, against idle or future idle as the action decides. Scores,
 * each 0..100 times the weight its plugin's arguments give:
 * least-requested and balanced allocation (kube-scheduler's, counting a
 * request of zero as 100m / 200 MiB), preferred node affinity, taint
 * toleration (PreferNoSchedule), and binpack (Volcano's). The reasons of
 * the nodes that did not fit are counted into kube-scheduler's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "sched/sched_int.h"

#define HOSTNAME_KEY "kubernetes.io/hostname"

int
predicate_fits(const struct podspec_res *a, const struct podspec_res *b)
{
	return podspec_res_exceeds(a, b) == NULL;
}

enum fit_reason
predicate_resources(const struct s_task *t, const struct podspec_res *avail)
{
	const char *short_of = podspec_res_exceeds(&t->req, avail);

	if (short_of == NULL)
		return FIT_OK;
	if (strcmp(short_of, "cpu") == 0)
		return FIT_CPU;
	if (strcmp(short_of, "memory") == 0)
		return FIT_MEMORY;
	if (strcmp(short_of, "pods") == 0)
		return FIT_PODS;
	return FIT_EXT;
}

#define ANTI_TERMS	"spec.affinity.podAntiAffinity." \
			"requiredDuringSchedulingIgnoredDuringExecution"
#define AFFINITY_TERMS	"spec.affinity.podAffinity." \
			"requiredDuringSchedulingIgnoredDuringExecution"

/* A pod already on t's node that (anti-)affinity weighs against t. */
static int
neighbour(const struct s_task *o, const struct s_task *t)
{
	return o != t && o->status != TS_RELEASING && strcmp(o->ns, t->ns) == 0;
}

/*
 * A required term's selector when its topology is the hostname, the only
 * one judged here (*hostname says whether it is); NULL for another
 * topology or a selector that does not parse.
 */
static selector *
hostname_selector(const cJSON *term, int *hostname)
{
	const char *key = json_str(term, "topologyKey");
	char *cause = NULL;
	selector *sel;

	*hostname = key != NULL && strcmp(key, HOSTNAME_KEY) == 0;
	if (!*hostname)
		return NULL;
	if ((sel = selector_from_json(json_at(term, "labelSelector"),
	    &cause)) == NULL)
		free(cause);
	return sel;
}

/* Does any pod placed on n match the term's selector (same namespace)?
   -1 for another topology: not judged here. */
static int
term_matches_node(struct session *ss, const cJSON *term,
    const struct s_task *t, const struct s_node *n)
{
	int i, hit = 0, hostname;
	selector *sel = hostname_selector(term, &hostname);

	if (!hostname)
		return -1;
	for (i = 0; sel != NULL && i < n->ntasks && !hit; i++)
		if (neighbour(n->tasks[i], t))
			hit = selector_match_labels(sel, json_at(task_obj(ss,
			    n->tasks[i]), "metadata.labels"));
	selector_free(sel);
	return hit;
}

static enum fit_reason
pod_affinity(struct session *ss, const struct s_task *t,
    const struct s_node *n)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(t->obj, ANTI_TERMS))
		if (term_matches_node(ss, it, t, n) == 1)
			return FIT_ANTI_AFFINITY;
	cJSON_ArrayForEach(it, json_at(t->obj, AFFINITY_TERMS))
		if (term_matches_node(ss, it, t, n) == 0)
			return FIT_AFFINITY;
	return FIT_OK;
}

/*
 * Symmetry, as kube-scheduler's InterPodAffinity: a pod already on n whose
 * required anti-affinity (on the hostname, in its namespace) selects t's
 * labels keeps t off n.
 */
static int
repelled(struct session *ss, const struct s_task *t, const struct s_node *n)
{
	const cJSON *labels = json_at(t->obj, "metadata.labels"), *it;
	int i, hit = 0, hostname;

	for (i = 0; i < n->ntasks && !hit; i++) {
		if (!n->tasks[i]->has_pod_affinity || !neighbour(n->tasks[i], t))
			continue;
		cJSON_ArrayForEach(it, json_at(task_obj(ss, n->tasks[i]),
		    ANTI_TERMS)) {
			selector *sel = hostname_selector(it, &hostname);

			hit = sel != NULL && selector_match_labels(sel, labels);
			selector_free(sel);
			if (hit)
				break;
		}
	}
	return hit;
}

enum fit_reason
predicate_static(struct session *ss, const struct s_task *t,
    const struct s_node *n)
{
	if (!ss->c_predicates)
		return FIT_OK;
	if (n->unschedulable && !podspec_tolerates_unschedulable(t->obj))
		return FIT_UNSCHEDULABLE;
	if (n->has_taints && podspec_untolerated(t->obj, n->obj) != NULL)
		return FIT_TAINT;
	if (t->has_selector && !podspec_node_matches(t->obj, n->obj))
		return FIT_SELECTOR;
	if (n->naffine > 0 && repelled(ss, t, n))
		return FIT_ANTI_AFFINITY;
	if (t->has_pod_affinity)
		return pod_affinity(ss, t, n);
	return FIT_OK;
}

static double
ratio(int64_t free_after, int64_t alloc)
{
	double r = alloc > 0 ? (double)free_after / (double)alloc : 0;

	return r < 0 ? 0 : r;
}

#define NONZERO_CPU	100
#define NONZERO_MEMORY	(200LL << 20)

static int64_t
nz(int64_t v, int64_t def)
{
	return v > 0 ? v : def;
}

/* Preferred node affinity: matched weight over total, 0..100. */
static double
affinity_score(const struct s_task *t, const struct s_node *n)
{
	const cJSON *it;
	double total = 0, hit = 0;

	cJSON_ArrayForEach(it, json_at(t->obj, "spec.affinity.nodeAffinity."
	    "preferredDuringSchedulingIgnoredDuringExecution")) {
		double w = cJSON_GetNumberValue(json_at(it, "weight"));
		cJSON *probe;

		if (!(w > 0))
			continue;
		total += w;
		/* Check the preference as a required term of a probe pod. */
		{
			cJSON *aff, *na, *req, *terms;

			probe = cJSON_CreateObject();
			aff = cJSON_AddObjectToObject(cJSON_AddObjectToObject(
			    probe, "spec"), "affinity");
			na = cJSON_AddObjectToObject(aff, "nodeAffinity");
			req = cJSON_AddObjectToObject(na,
			    "requiredDuringSchedulingIgnoredDuringExecution");
			terms = cJSON_AddArrayToObject(req, "nodeSelectorTerms");
			cJSON_AddItemToArray(terms, cJSON_Duplicate(json_at(it,
			    "preference"), 1));
		}
		if (podspec_node_matches(probe, n->obj))
			hit += w;
		cJSON_Delete(probe);
	}
	return total > 0 ? hit / total * 100 : 0;
}

static double
taint_score(const struct s_task *t, const struct s_node *n)
{
	const cJSON *it, *tol;
	int bad = 0;

	cJSON_ArrayForEach(it, json_at(n->obj, "spec.taints")) {
		const char *eff = json_str(it, "effect");
		int ok = 0;

		if (eff == NULL || strcmp(eff, "PreferNoSchedule") != 0)
			continue;
		cJSON_ArrayForEach(tol, json_at(t->obj, "spec.tolerations")) {
			const char *k = json_str(tol, "key");
			const char *op = json_str(tol, "operator");
			const char *te = json_str(tol, "effect");

			if ((k == NULL || *k == '\0' || (json_str(it, "key") &&
			    strcmp(k, json_str(it, "key")) == 0)) &&
			    (te == NULL || *te == '\0' ||
			    strcmp(te, eff) == 0) && (op == NULL ||
			    strcmp(op, "Exists") == 0 || (json_str(tol,
			    "value") && json_str(it, "value") &&
			    strcmp(json_str(tol, "value"), json_str(it,
			    "value")) == 0)))
				ok = 1;
		}
		bad += !ok;
	}
	return bad > 4 ? 0 : 100 - bad * 25;
}

double
predicate_score(struct session *ss, const struct s_task *t,
    const struct s_node *n)
{
	const struct score_weights *w = &ss->w;
	double s = 0;

	if (w->least > 0 || w->balanced > 0) {
		double cpu = ratio(n->alloc.cpu - n->nz_cpu - nz(t->req.cpu,
		    NONZERO_CPU), n->alloc.cpu);
		double mem = ratio(n->alloc.memory - n->nz_memory -
		    nz(t->req.memory, NONZERO_MEMORY), n->alloc.memory);

		s += w->least * (cpu + mem) * 50;
		s += w->balanced * (100 - (cpu > mem ? cpu - mem : mem - cpu) *
		    100);
	}
	if (w->affinity > 0 && t->has_selector)
		s += w->affinity * affinity_score(t, n);
	if (w->taint > 0 && n->has_taints)
		s += w->taint * taint_score(t, n);
	if (w->binpack > 0) {
		double sum = 0, ws = 0;

		if (w->bp_cpu > 0 && t->req.cpu > 0 && n->alloc.cpu > 0) {
			sum += w->bp_cpu * (double)(n->used.cpu + t->req.cpu) /
			    (double)n->alloc.cpu;
			ws += w->bp_cpu;
		}
		if (w->bp_memory > 0 && t->req.memory > 0 &&
		    n->alloc.memory > 0) {
			sum += w->bp_memory * (double)(n->used.memory +
			    t->req.memory) / (double)n->alloc.memory;
			ws += w->bp_memory;
		}
		if (ws > 0)
			s += sum / ws * 100 * w->binpack;
	}
	return s;
}

struct reason_count {
	const char *word;
	int n;
};

static int
by_word(const void *a, const void *b)
{
	return strcmp(((const struct reason_count *)a)->word,
	    ((const struct reason_count *)b)->word);
}

char *
predicate_message(int nnodes, const int counts[FIT_NREASONS],
    const char *lua_reason)
{
	static const char *const words[FIT_NREASONS] = {
		"", "Insufficient cpu", "Insufficient memory", "Too many pods",
		"Insufficient extended resources",
		"node(s) didn't match Pod's node affinity/selector",
		"node(s) had untolerated taint",
		"node(s) were unschedulable",
		"node(s) didn't match the requested node name",
		"node(s) didn't match pod anti-affinity rules",
		"node(s) didn't match pod affinity rules",
		"",
	};
	struct reason_count rc[FIT_NREASONS];
	char *msg = util_printf("0/%d nodes are available", nnodes), *next;
	int i, n = 0;

	/* kube-scheduler lists the reasons sorted by their text. */
	for (i = 1; i < FIT_NREASONS; i++)
		if (counts[i] > 0) {
			rc[n].word = i == FIT_LUA ? (lua_reason ? lua_reason :
			    "node(s) rejected by a policy") : words[i];
			rc[n++].n = counts[i];
		}
	qsort(rc, (size_t)n, sizeof rc[0], by_word);
	for (i = 0; i < n; i++) {
		next = util_printf("%s%s %d %s", msg, i == 0 ? ":" : ",",
		    rc[i].n, rc[i].word);
		free(msg);
		msg = next;
	}
	next = util_printf("%s.", msg);
	free(msg);
	return next;
}
