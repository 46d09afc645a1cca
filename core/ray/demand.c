/*
 * What an autoscaler asks a Ray head: the cluster's nodes with their
 * resources, what is in use on each and for how long each has been idle,
 * and the resource demand that does not fit. Ray's GCS knows this from
 * its raylets; here a simulated job declares its demand as bundles: its
 * entrypoint's (entrypoint_num_cpus, entrypoint_num_gpus,
 * entrypoint_memory) and those of its metadata's volray.io/sim-bundles,
 * a JSON list of {"CPU": n, "GPU": n, "memory": q, "count": n}. A running
 * job's bundles are placed all together, first fit over the cluster's
 * Running Ray pods (head first, then by name), on what each pod's `ray
 * start` line gives it (--num-cpus, --num-gpus, --memory); its simulated
 * duration counts from then (jobs.c starts it), so a job whose bundles
 * do not fit waits, as a Ray job waits for its tasks' resources, and its
 * bundles are the pending demand; jobs.c tries again every second while
 * some job waits, and when a job ends. Jobs of a local head run as
 * processes: they declare nothing and are not placed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define MAX_BUNDLES	10000

/* One Ray node: a Running pod of the cluster. */
struct rnode {
	const char *name;	/* the pod's (points into the store) */
	char *group;
	int head;
	struct bundle total, used;
};

/* A resource amount: a number, or a quantity string ("4Gi", "500m"). */
static double
amount(const cJSON *v)
{
	double d;

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	return quantity_json(v, &d) == 0 ? d : 0;
}

static void
add_bundle(struct ray_job *j, double cpu, double gpu, double mem)
{
	struct bundle *b;

	if (cpu <= 0 && gpu <= 0 && mem <= 0)
		return;
	XGROW(j->bundles, j->bundle_cap, (size_t)j->nbundles + 1);
	b = &j->bundles[j->nbundles++];
	memset(b, 0, sizeof *b);
	b->cpu_m = (int64_t)(cpu * 1000 + 0.5);
	b->gpu = (int64_t)(gpu + 0.5);
	b->mem = (int64_t)mem;
}

/* The job's bundles from its request; 0, or -1 with *cause when bad. */
int
ray_demand_parse(struct ray_job *j, char **cause)
{
	const cJSON *md = json_at(j->req, "metadata"), *b;
	const cJSON *sb = cJSON_GetObjectItemCaseSensitive(md,
	    "volray.io/sim-bundles");
	cJSON *list;
	int total = 0;

	add_bundle(j, amount(json_at(j->req, "entrypoint_num_cpus")),
	    amount(json_at(j->req, "entrypoint_num_gpus")),
	    amount(json_at(j->req, "entrypoint_memory")));
	/* With entrypoint resources the driver runs where its bundle goes,
	   else on the head (Ray's JobSupervisor). */
	j->driver_bundle = j->nbundles == 1;
	if (!cJSON_IsString(sb))
		return 0;
	list = cJSON_Parse(sb->valuestring);
	if (!cJSON_IsArray(list)) {
		cJSON_Delete(list);
		*cause = xstrdup("volray.io/sim-bundles: a JSON list of "
		    "{\"CPU\": n, \"GPU\": n, \"memory\": q, \"count\": n} "
		    "wanted");
		return -1;
	}
	cJSON_ArrayForEach(b, list) {
		const cJSON *cv = cJSON_GetObjectItemCaseSensitive(b, "count");
		int n = cJSON_IsNumber(cv) ? cv->valueint : 1, i;

		if (!cJSON_IsObject(b) || n < 0 || (total += n) > MAX_BUNDLES) {
			cJSON_Delete(list);
			*cause = util_printf(
			    "volray.io/sim-bundles: objects with "
			    "a count of 0 to %d in all wanted", MAX_BUNDLES);
			return -1;
		}
		for (i = 0; i < n; i++)
			add_bundle(j, amount(cJSON_GetObjectItemCaseSensitive(b,
			    "CPU")), amount(cJSON_GetObjectItemCaseSensitive(b,
			    "GPU")), amount(cJSON_GetObjectItemCaseSensitive(b,
			    "memory")));
	}
	cJSON_Delete(list);
	return 0;
}

/* --flag=N or --flag N in s, as a number; 0 when absent. */
static double
start_flag(const char *s, const char *flag)
{
	size_t fl = strlen(flag);
	const char *p = s;

	while ((p = strstr(p, flag)) != NULL) {
		p += fl;
		if (*p == '=' || *p == ' ')
			return atof(p + 1 + (p[1] == '\'' || p[1] == '"'));
	}
	return 0;
}

/* A pod's Ray resources: its Ray container's generated `ray start`. */
static void
pod_resources(const cJSON *pod, struct bundle *out)
{
	const cJSON *c = cJSON_GetArrayItem(json_at(pod, "spec.containers"), 0);
	const cJSON *e;
	const char *cmd = NULL;

	memset(out, 0, sizeof *out);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "env")) {
		const char *n = json_str(e, "name");

		if (n != NULL && strcmp(n, "KUBERAY_GEN_RAY_START_CMD") == 0)
			cmd = json_str(e, "value");
	}
	if (cmd == NULL)
		return;
	out->cpu_m = (int64_t)(start_flag(cmd, "--num-cpus") * 1000 + 0.5);
	out->gpu = (int64_t)(start_flag(cmd, "--num-gpus") + 0.5);
	out->mem = (int64_t)start_flag(cmd, "--memory");
}

static int
by_name(const void *a, const void *b)
{
	const struct rnode *x = a, *y = b;

	if (x->head != y->head)
		return y->head - x->head;
	return strcmp(x->name, y->name);
}

/*
 * The cluster's Ray nodes: the Running pods its RayCluster owns (the
 * head pod's controller), with what placed bundles use of each.
 */
static size_t
cluster_nodes(struct ray_head *h, struct rnode **out)
{
	const store_obj *head = client_get(h->r->c, "pods", h->ns, h->name), *o;
	const char **keys;
	struct rnode *nodes = NULL;
	size_t n = 0, cap = 0, nk, i, k;
	const char *owner = NULL;
	hmap *byname;
	int jn, b;

	*out = NULL;
	if (head == NULL)
		return 0;
	for (i = 0; i < (size_t)head->nowners; i++)
		if (head->owners[i].controller)
			owner = head->owners[i].uid;
	nk = owner != NULL ? client_dependents(h->r->c, owner, &keys) : 0;
	for (k = 0; k < nk + 1; k++) {
		cJSON *t;
		const cJSON *g;

		if (k == nk)
			o = owner == NULL ? head : NULL;
		else
			o = strncmp(keys[k], "pods/", 5) == 0 ?
			    client_get_key(h->r->c, keys[k]) : NULL;
		if (o == NULL || o->deleting || strcmp(o->phase, "Running") != 0)
			continue;
		XGROW(nodes, cap, n + 1);
		memset(&nodes[n], 0, sizeof nodes[n]);
		nodes[n].name = o->name;
		nodes[n].head = strcmp(o->name, h->name) == 0;
		g = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/group");
		nodes[n].group = xstrdup(cJSON_IsString(g) ? g->valuestring : "");
		t = store_obj_tree(o);
		pod_resources(t, &nodes[n].total);
		cJSON_Delete(t);
		n++;
	}
	if (n > 1)
		qsort(nodes, n, sizeof *nodes, by_name);
	/* Each placed bundle's node by name: a map, not a scan (10,000
	   bundles on 10,000 workers). */
	byname = hmap_new();
	for (i = 0; i < n; i++)
		hmap_put(byname, nodes[i].name, &nodes[i]);
	for (jn = 0; jn < h->njobs; jn++) {
		struct ray_job *j = h->order[jn];

		if (!j->placed)
			continue;
		for (b = 0; b < j->nbundles; b++) {
			struct rnode *nd;

			if (j->bundles[b].node == NULL ||
			    (nd = hmap_get(byname, j->bundles[b].node)) == NULL)
				continue;
			nd->used.cpu_m += j->bundles[b].cpu_m;
			nd->used.gpu += j->bundles[b].gpu;
			nd->used.mem += j->bundles[b].mem;
		}
	}
	hmap_free(byname);
	*out = nodes;
	return n;
}

static void
nodes_free(struct rnode *nodes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(nodes[i].group);
	free(nodes);
}

static int
fits(const struct rnode *nd, const struct bundle *b)
{
	return nd->used.cpu_m + b->cpu_m <= nd->total.cpu_m &&
	    nd->used.gpu + b->gpu <= nd->total.gpu &&
	    nd->used.mem + b->mem <= nd->total.mem;
}

static int
same_shape(const struct bundle *x, const struct bundle *y)
{
	return x->cpu_m == y->cpu_m && x->gpu == y->gpu && x->mem == y->mem;
}

/*
 * Place every bundle of j or none; 1 if placed. First fit; a bundle of
 * the shape of the one before it starts where that one went (what is
 * free only shrinks while placing, so no earlier node holds it): a job of
 * 10,000 equal bundles is placed in one pass over the nodes.
 */
static int
place_job(struct ray_job *j, struct rnode *nodes, size_t n)
{
	size_t *at = xcalloc((size_t)j->nbundles + 1, sizeof *at), i;
	int b, ok = 1;

	for (b = 0; b < j->nbundles && ok; b++) {
		i = b > 0 && same_shape(&j->bundles[b], &j->bundles[b - 1]) ?
		    at[b - 1] : 0;
		for (; i < n && !fits(&nodes[i], &j->bundles[b]); i++)
			;
		if (i == n) {
			ok = 0;
			break;
		}
		at[b] = i;
		nodes[i].used.cpu_m += j->bundles[b].cpu_m;
		nodes[i].used.gpu += j->bundles[b].gpu;
		nodes[i].used.mem += j->bundles[b].mem;
	}
	if (!ok) {
		while (b-- > 0) {
			nodes[at[b]].used.cpu_m -= j->bundles[b].cpu_m;
			nodes[at[b]].used.gpu -= j->bundles[b].gpu;
			nodes[at[b]].used.mem -= j->bundles[b].mem;
		}
		free(at);
		return 0;
	}
	for (b = 0; b < j->nbundles; b++) {
		free(j->bundles[b].node);
		j->bundles[b].node = xstrdup(nodes[at[b]].name);
	}
	free(at);
	j->placed = 1;
	return 1;
}

/* A node's idle time: from when it was first seen or last freed. */
struct idle {
	uint64_t since;
	char name[];			/* the key */
};

static int
collect_gone(const char *key, void *value, void *arg)
{
	struct idle ***gone = arg;

	(void)key;
	if (((struct idle *)value)->since & (1ULL << 63))
		*(*gone)++ = value;
	return 0;
}

static int
mark_stale(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	((struct idle *)value)->since |= 1ULL << 63;
	return 0;
}

/* Record nodes first seen now; forget those that are gone. */
static void
mark_seen(struct ray_head *h, const struct rnode *nodes, size_t n)
{
	struct idle **gone, **end, **g, *e;
	size_t i, len;

	if (h->idle_since == NULL)
		h->idle_since = hmap_new();
	hmap_each(h->idle_since, mark_stale, NULL);
	for (i = 0; i < n; i++) {
		if ((e = hmap_get(h->idle_since, nodes[i].name)) != NULL) {
			e->since &= ~(1ULL << 63);
			continue;
		}
		len = strlen(nodes[i].name) + 1;
		e = xmalloc(sizeof *e + len);
		e->since = util_now_ms();
		memcpy(e->name, nodes[i].name, len);
		hmap_put(h->idle_since, e->name, e);
	}
	gone = end = xcalloc(hmap_count(h->idle_since) + 1, sizeof *gone);
	hmap_each(h->idle_since, collect_gone, &end);
	for (g = gone; g < end; g++) {
		hmap_del(h->idle_since, (*g)->name);
		free(*g);
	}
	free(gone);
}

int
ray_demand_place(struct ray_head *h, struct ray_job ***placed, size_t *n)
{
	struct rnode *nodes;
	size_t nn = cluster_nodes(h, &nodes), cap = 0;
	int jn, waiting = 0;

	*placed = NULL;
	*n = 0;
	mark_seen(h, nodes, nn);
	for (jn = 0; jn < h->njobs; jn++) {
		struct ray_job *j = h->order[jn];

		if (j->status != JOB_RUNNING || !j->simulated || j->placed ||
		    j->nbundles == 0)
			continue;
		if (place_job(j, nodes, nn)) {
			XGROW(*placed, cap, *n + 1);
			(*placed)[(*n)++] = j;
		} else
			waiting = 1;
	}
	nodes_free(nodes, nn);
	return waiting;
}

/* A job ends: its nodes are idle from now if nothing else is on them. */
int
ray_demand_release(struct ray_job *j)
{
	struct ray_head *h = j->head;
	int b, was = j->placed;

	for (b = 0; b < j->nbundles; b++) {
		struct idle *e;

		if (j->bundles[b].node == NULL)
			continue;
		if (h->idle_since != NULL &&
		    (e = hmap_get(h->idle_since, j->bundles[b].node)) != NULL)
			e->since = util_now_ms();
		free(j->bundles[b].node);
		j->bundles[b].node = NULL;
	}
	j->placed = 0;
	return was;
}

void
ray_demand_free(struct ray_job *j)
{
	int b;

	for (b = 0; b < j->nbundles; b++)
		free(j->bundles[b].node);
	free(j->bundles);
	j->bundles = NULL;
	j->nbundles = 0;
}

static int
free_value(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 0;
}

void
ray_demand_head_free(struct ray_head *h)
{
	if (h->idle_since != NULL) {
		hmap_each(h->idle_since, free_value, NULL);
		hmap_free(h->idle_since);
		h->idle_since = NULL;
	}
}

static cJSON *
res_json(const struct bundle *b)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "CPU", (double)b->cpu_m / 1000);
	cJSON_AddNumberToObject(o, "GPU", (double)b->gpu);
	cJSON_AddNumberToObject(o, "memory", (double)b->mem);
	return o;
}

/*
 * GET /api/volray/autoscaler: {"nodes": [{"name", "group", "head",
 * "resources", "used", "idle_seconds"}], "pending": [{"submission_id",
 * "bundles": [...]}]}; idle_seconds is 0 for a node in use.
 */
cJSON *
ray_demand_report(struct ray_head *h)
{
	cJSON *out = cJSON_CreateObject();
	cJSON *an = cJSON_AddArrayToObject(out, "nodes");
	cJSON *ap = cJSON_AddArrayToObject(out, "pending");
	struct rnode *nodes;
	size_t n = cluster_nodes(h, &nodes), i;
	uint64_t now = util_now_ms();
	int jn, b;

	mark_seen(h, nodes, n);
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		struct idle *e = hmap_get(h->idle_since, nodes[i].name);
		int busy = nodes[i].used.cpu_m || nodes[i].used.gpu ||
		    nodes[i].used.mem;

		cJSON_AddStringToObject(o, "name", nodes[i].name);
		cJSON_AddStringToObject(o, "group", nodes[i].group);
		cJSON_AddBoolToObject(o, "head", nodes[i].head);
		cJSON_AddItemToObject(o, "resources", res_json(&nodes[i].total));
		cJSON_AddItemToObject(o, "used", res_json(&nodes[i].used));
		cJSON_AddNumberToObject(o, "idle_seconds", busy || e == NULL ||
		    e->since > now ? 0 : (double)(now - e->since) / 1000);
		cJSON_AddItemToArray(an, o);
	}
	nodes_free(nodes, n);
	for (jn = 0; jn < h->njobs; jn++) {
		struct ray_job *j = h->order[jn];
		cJSON *o, *bl;

		if (j->status != JOB_RUNNING || j->placed || j->nbundles == 0)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "submission_id", j->id);
		bl = cJSON_AddArrayToObject(o, "bundles");
		for (b = 0; b < j->nbundles; b++)
			cJSON_AddItemToArray(bl, res_json(&j->bundles[b]));
		cJSON_AddItemToArray(ap, o);
	}
	return out;
}
