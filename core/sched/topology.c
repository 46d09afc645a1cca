/*
 * Network topology: Volcano's HyperNodes (topology.volcano.sh/v1alpha1)
 * as the session reads them, for the network-topology-aware plugin.
 *
 * A HyperNode has a tier (1 = the closest nodes, a rack; higher tiers
 * group lower ones: spine blocks, pods of a fabric) and members: nodes
 * (by exact name, regular expression or label selector) or HyperNodes of
 * a lower tier (by exact name or regular expression). topology_build
 * resolves them once per session, when the plugin asks for it: each
 * HyperNode gets its nodes (those of its member HyperNodes included) and
 * each node its HyperNode at every tier, so that the lowest common tier
 * of two nodes is a few pointer compares.
 *
 * allocate.c uses it for a job's networkTopology: in hard mode a job is
 * placed within one HyperNode of at most highestTierAllowed, the lowest
 * tier that can hold it first (Volcano's gradients), the fullest
 * HyperNode that fits (its binpack score) first within a tier; in soft
 * mode each task prefers the nodes closest to the job's others.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

/*
 * Add n to h once. seen is the session's mark per node: seen[n] == mark
 * when n is in h already (h's mark: its index + 1).
 */
static void
add_node(struct s_hypernode *h, struct s_node *n, int *seen)
{
	if (seen[n->idx] == h->idx + 1)
		return;
	seen[n->idx] = h->idx + 1;
	XGROW(h->nodes, h->capnodes, (size_t)h->nnodes + 1);
	h->nodes[h->nnodes++] = n;
}

/*
 * Nodes by the value of one label, built the first time a selector names
 * the key: a rack's matchLabels looks up its nodes instead of testing
 * every node (313 racks x 5,000 nodes took most of a session's time).
 */
struct by_label {
	hmap *keys;			/* label key -> hmap value -> nodes */
};
struct node_list {
	struct s_node **n;
	int count;
	size_t cap;
};

static hmap *
label_index(struct session *ss, struct by_label *bl, const char *key)
{
	hmap *vals = hmap_get(bl->keys, key);
	int i;

	if (vals != NULL)
		return vals;
	vals = hmap_new();
	for (i = 0; i < ss->nnodes; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_at(
		    ss->nodes[i].obj, "metadata.labels"), key);
		struct node_list *l;

		if (!cJSON_IsString(v))
			continue;
		if ((l = hmap_get(vals, v->valuestring)) == NULL) {
			l = xcalloc(1, sizeof *l);
			hmap_put(vals, v->valuestring, l);
		}
		XGROW(l->n, l->cap, (size_t)l->count + 1);
		l->n[l->count++] = &ss->nodes[i];
	}
	hmap_put(bl->keys, key, vals);
	return vals;
}

static int
free_list(const char *key, void *value, void *arg)
{
	struct node_list *l = value;

	(void)key;
	(void)arg;
	free(l->n);
	free(l);
	return 0;
}

static int
free_vals(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	hmap_each(value, free_list, NULL);
	hmap_free(value);
	return 0;
}

/* A regular expression member, or NULL (logged once per session). */
static int
compile(regex_t *re, const char *pattern, const char *hn)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc != 0)
		log_warn("scheduler: HyperNode %s: member pattern \"%s\" is "
		    "not a regular expression (POSIX ERE); ignored", hn,
		    pattern);
	return rc;
}

/* The members of h: nodes into h->nodes, HyperNodes get h as parent. */
static void
resolve_members(struct session *ss, struct s_hypernode *h, hmap *by_name,
    int *seen, struct by_label *bl)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, json_at(h->obj, "spec.members")) {
		const char *type = json_str(m, "type");
		const char *exact = json_str(m, "selector.exactMatch.name");
		const char *pattern = json_str(m, "selector.regexMatch.pattern");
		const cJSON *sel = json_at(m, "selector.labelMatch");
		int nodes = type == NULL || strcmp(type, "Node") == 0, i;
		regex_t re;

		if (!nodes && (type == NULL || strcmp(type, "HyperNode") != 0))
			continue;
		if (exact != NULL) {
			if (nodes) {
				struct s_node *n = hmap_get(ss->node_index,
				    exact);

				if (n != NULL)
					add_node(h, n, seen);
			} else {
				struct s_hypernode *c = hmap_get(by_name, exact);

				if (c != NULL && c != h && c->parent == NULL)
					c->parent = h;
			}
		} else if (pattern != NULL) {
			if (compile(&re, pattern, h->name) != 0)
				continue;
			if (nodes) {
				for (i = 0; i < ss->nnodes; i++)
					if (regexec(&re, ss->nodes[i].name, 0,
					    NULL, 0) == 0)
						add_node(h, &ss->nodes[i],
						    seen);
			} else {
				for (i = 0; i < ss->nhns; i++)
					if (&ss->hns[i] != h &&
					    ss->hns[i].parent == NULL &&
					    regexec(&re, ss->hns[i].name, 0,
					    NULL, 0) == 0)
						ss->hns[i].parent = h;
			}
			regfree(&re);
		} else if (sel != NULL && nodes) {
			/* Parsed once; with matchLabels, matched only
			   against the nodes of its first label's value. */
			selector *x = selector_from_json(sel, NULL);
			const cJSON *ml = json_at(sel, "matchLabels");
			const cJSON *first = ml != NULL ? ml->child : NULL;

			if (x != NULL && first != NULL &&
			    cJSON_IsString(first)) {
				struct node_list *l = hmap_get(label_index(ss,
				    bl, first->string), first->valuestring);

				for (i = 0; l != NULL && i < l->count; i++)
					if (selector_match_labels(x, json_at(
					    l->n[i]->obj, "metadata.labels")))
						add_node(h, l->n[i], seen);
			} else
				for (i = 0; x != NULL && i < ss->nnodes; i++)
					if (selector_match_labels(x, json_at(
					    ss->nodes[i].obj, "metadata.labels")))
						add_node(h, &ss->nodes[i], seen);
			selector_free(x);
		}
	}
}

static int
cmp_tier(const void *a, const void *b)
{
	const struct s_hypernode *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
topology_build(struct session *ss)
{
	struct by_label bl;
	hmap *by_name;
	int i, k, *seen;

	if (ss->topo_built)
		return;
	ss->topo_built = 1;
	if (ss->nhn_objs == 0)
		return;
	ss->hns = xcalloc((size_t)ss->nhn_objs, sizeof *ss->hns);
	for (i = 0; i < ss->nhn_objs; i++) {
		const cJSON *o = ss->hn_objs[i];
		const cJSON *tier = json_at(o, "spec.tier");
		struct s_hypernode *h = &ss->hns[ss->nhns];

		if (json_str(o, "metadata.name") == NULL ||
		    !cJSON_IsNumber(tier) || tier->valuedouble < 1)
			continue;
		h->name = json_str(o, "metadata.name");
		h->tier = (int)tier->valuedouble;
		h->tier_name = json_str(o, "spec.tierName");
		h->obj = o;
		ss->nhns++;
	}
	/* Lowest tier first: children are resolved before their parents. */
	qsort(ss->hns, (size_t)ss->nhns, sizeof *ss->hns, cmp_tier);
	by_name = hmap_new();
	seen = xcalloc((size_t)ss->nnodes + 1, sizeof *seen);
	bl.keys = hmap_new();
	for (i = 0; i < ss->nhns; i++) {
		ss->hns[i].idx = i;
		hmap_put(by_name, ss->hns[i].name, &ss->hns[i]);
		if (ss->min_tier == 0 || ss->hns[i].tier < ss->min_tier)
			ss->min_tier = ss->hns[i].tier;
		if (ss->hns[i].tier > ss->max_tier)
			ss->max_tier = ss->hns[i].tier;
	}
	for (i = 0; i < ss->nhns; i++)
		resolve_members(ss, &ss->hns[i], by_name, seen, &bl);
	hmap_each(bl.keys, free_vals, NULL);
	hmap_free(bl.keys);
	/* A HyperNode holds its children's nodes too: lowest tier first,
	   so children are complete before their parent takes theirs. */
	for (i = 0; i < ss->nhns; i++)
		if (ss->hns[i].parent != NULL &&
		    ss->hns[i].parent->tier <= ss->hns[i].tier)
			ss->hns[i].parent = NULL;	/* not a tree: cut */
	for (i = 0; i < ss->nhns; i++) {
		struct s_hypernode *p = &ss->hns[i];
		int c;

		for (k = 0; k < p->nnodes; k++)
			seen[p->nodes[k]->idx] = p->idx + 1;
		for (c = 0; c < i; c++)
			if (ss->hns[c].parent == p)
				for (k = 0; k < ss->hns[c].nnodes; k++)
					add_node(p, ss->hns[c].nodes[k], seen);
	}
	free(seen);
	/* Each node's HyperNode per tier (the first one listing it). */
	ss->node_hn = xcalloc((size_t)ss->nnodes * (size_t)(ss->max_tier + 1)
	    + 1, sizeof *ss->node_hn);
	for (i = 0; i < ss->nhns; i++) {
		struct s_hypernode *h = &ss->hns[i];

		for (k = 0; k < h->nnodes; k++) {
			struct s_hypernode **slot = &ss->node_hn[
			    (size_t)h->nodes[k]->idx * (size_t)(ss->max_tier + 1) +
			    (size_t)h->tier];

			if (*slot == NULL)
				*slot = h;
		}
		for (k = 0; k < h->nnodes; k++) {
			struct s_node *n = h->nodes[k];
			struct podspec_res fi;

			podspec_res_add(&h->alloc, &n->alloc, 1);
			node_future_idle(n, &fi);
			podspec_res_add(&h->fidle, &fi, 1);
			podspec_res_add(&h->used, &n->used, 1);
			/* From now on node.c keeps the sums. */
			n->hns = xreallocarray(n->hns, (size_t)n->nhns + 1,
			    sizeof *n->hns);
			n->hns[n->nhns++] = h;
		}
	}
	/* Tier names for highestTierName. */
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		if (j->topo_tier_name == NULL)
			continue;
		for (k = 0; k < ss->nhns; k++)
			if (ss->hns[k].tier_name != NULL &&
			    strcmp(ss->hns[k].tier_name, j->topo_tier_name) == 0)
				j->topo_tier = ss->hns[k].tier;
	}
	hmap_free(by_name);
}

void
topology_free(struct session *ss)
{
	int i;

	for (i = 0; i < ss->nhns; i++)
		free(ss->hns[i].nodes);
	for (i = 0; i < ss->nnodes; i++) {
		free(ss->nodes[i].hns);
		ss->nodes[i].hns = NULL;
		ss->nodes[i].nhns = 0;
	}
	free(ss->hns);
	free(ss->node_hn);
	free(ss->hn_objs);
}

struct s_hypernode *
topology_node_at(const struct session *ss, const struct s_node *n, int tier)
{
	if (ss->node_hn == NULL || tier < 1 || tier > ss->max_tier)
		return NULL;
	return ss->node_hn[(size_t)n->idx * (size_t)(ss->max_tier + 1) +
	    (size_t)tier];
}

/* The lowest tier at which a and b share a HyperNode; max_tier + 1 when
   they share none. */
int
topology_common_tier(const struct session *ss, const struct s_node *a,
    const struct s_node *b)
{
	int t;

	for (t = ss->min_tier; t <= ss->max_tier; t++) {
		struct s_hypernode *x = topology_node_at(ss, a, t);

		if (x != NULL && x == topology_node_at(ss, b, t))
			return t;
	}
	return ss->max_tier + 1;
}

/* Is every node of the job's placed tasks in h? */
static int
holds_placed(const struct session *ss, const struct s_hypernode *h,
    const struct s_job *j)
{
	int i;

	for (i = 0; i < j->ntasks; i++) {
		const struct s_node *n = j->tasks[i]->node;

		if (n == NULL || j->tasks[i]->status == TS_PIPELINED)
			continue;
		if (topology_node_at(ss, n, h->tier) != h)
			return 0;
	}
	return 1;
}

/*
 * Volcano's hypernode binpack score for placing req in h: the weighted
 * mean of (used + req) / allocatable over cpu and memory; -1 when req
 * does not fit h's idle (or future idle) at all.
 */
static double
binpack(const struct session *ss, const struct s_hypernode *h,
    const struct podspec_res *req)
{
	double s = 0, w = 0;

	/* The sums node.c keeps as tasks move (no walk of h's nodes). */
	if (!predicate_fits(req, &h->fidle))
		return -1;
	if (h->alloc.cpu > 0 && req->cpu > 0) {
		s += ss->topo_w_cpu * (double)(h->used.cpu + req->cpu) /
		    (double)h->alloc.cpu;
		w += ss->topo_w_cpu;
	}
	if (h->alloc.memory > 0 && req->memory > 0) {
		s += ss->topo_w_memory * (double)(h->used.memory + req->memory) /
		    (double)h->alloc.memory;
		w += ss->topo_w_memory;
	}
	return w > 0 ? s / w : 0;
}

struct cand {
	struct s_hypernode *h;
	double score;
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->h->tier != y->h->tier)
		return x->h->tier < y->h->tier ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(x->h->name, y->h->name);
}

/*
 * The HyperNodes a hard-mode job may go into, in the order to try them:
 * tier by tier from the lowest, within a tier the best binpack score
 * first; only those of at most the allowed tier, holding the nodes of the
 * job's placed tasks, and whose future idle holds the job's remaining
 * need (req). *n gets the count; free the result.
 */
struct s_hypernode **
topology_candidates(struct session *ss, struct s_job *j,
    const struct podspec_res *req, int *n)
{
	struct cand *c = xcalloc((size_t)ss->nhns + 1, sizeof *c);
	struct s_hypernode **out;
	int i, nc = 0;

	for (i = 0; i < ss->nhns; i++) {
		struct s_hypernode *h = &ss->hns[i];
		double s;

		if (h->tier > j->topo_tier || h->nnodes == 0 ||
		    !holds_placed(ss, h, j) || (s = binpack(ss, h, req)) < 0)
			continue;
		c[nc].h = h;
		c[nc++].score = s;
	}
	qsort(c, (size_t)nc, sizeof *c, cmp_cand);
	out = xcalloc((size_t)nc + 1, sizeof *out);
	for (i = 0; i < nc; i++)
		out[i] = c[i].h;
	free(c);
	*n = nc;
	return out;
}

/* How many copies of min avail holds (INT64_MAX when min asks nothing). */
static int64_t
copies(const struct podspec_res *avail, const struct podspec_res *min)
{
	int64_t k = INT64_MAX;

	if (min->cpu > 0)
		k = avail->cpu > 0 ? avail->cpu / min->cpu : 0;
	if (min->memory > 0 && (avail->memory > 0 ?
	    avail->memory / min->memory : 0) < k)
		k = avail->memory > 0 ? avail->memory / min->memory : 0;
	if (min->pods > 0 && (avail->pods > 0 ? avail->pods / min->pods : 0) < k)
		k = avail->pods > 0 ? avail->pods / min->pods : 0;
	return k;
}

int
topology_may_hold(const struct s_hypernode *h, const struct podspec_res *min,
    int want)
{
	int64_t slots = 0;
	int i;

	for (i = 0; i < h->nnodes && slots < want; i++) {
		struct podspec_res fi;
		int64_t k;

		node_future_idle(h->nodes[i], &fi);
		k = copies(&fi, min);
		slots = k > want ? want : slots + k;
	}
	return slots >= want;
}

static int
cmp_evict(const void *a, const void *b)
{
	const struct s_hypernode *x = *(struct s_hypernode *const *)a;
	const struct s_hypernode *y = *(struct s_hypernode *const *)b;

	if (x->tier != y->tier)
		return x->tier > y->tier ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Where a hard-mode job may make room by eviction (Volcano's evict
 * gradients): the HyperNodes of at most its allowed tier that hold its
 * placed tasks and whose allocatable holds its need, highest tier first,
 * at most max of them.
 */
struct s_hypernode **
topology_domains(struct session *ss, struct s_job *j,
    const struct podspec_res *need, int max, int *n)
{
	struct s_hypernode **out = xcalloc((size_t)ss->nhns + 1, sizeof *out);
	int i, k = 0;

	for (i = 0; i < ss->nhns; i++) {
		struct s_hypernode *h = &ss->hns[i];

		if (h->tier <= j->topo_tier && h->nnodes > 0 &&
		    holds_placed(ss, h, j) && predicate_fits(need, &h->alloc))
			out[k++] = h;
	}
	qsort(out, (size_t)k, sizeof *out, cmp_evict);
	*n = k < max ? k : max;
	return out;
}

/*
 * Soft mode: how close n is to the job's placed tasks, Volcano's score:
 * 100 in the same lowest-tier HyperNode as all of them, else less by
 * tier, 0 when they share none; times the plugin's weight. 0 before the
 * job has a task placed.
 */
double
topology_score(struct session *ss, struct s_job *j, struct s_node *n)
{
	int i, worst = 0, t;

	for (i = 0; i < j->ntasks; i++) {
		const struct s_node *m = j->tasks[i]->node;

		if (m == NULL)
			continue;
		t = topology_common_tier(ss, n, m);
		if (t > worst)
			worst = t;
	}
	if (worst == 0)
		return 0;
	if (worst > ss->max_tier)
		return 0;
	if (worst == ss->min_tier || ss->max_tier == ss->min_tier)
		return 100.0 * ss->topo_weight;
	return 100.0 * ss->topo_weight * (double)(ss->max_tier - worst) /
	    (double)(ss->max_tier - ss->min_tier);
}
