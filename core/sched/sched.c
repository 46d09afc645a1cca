/*
 * The scheduler in the daemon: runs a session every schedulePeriod (1 s)
 * and soon after new pending work arrives (20 ms later, or four times
 * the last cycle when that is longer, so a burst of creates is a few
 * cycles and the API keeps most of the loop), and applies what the
 * session decided through the registry, as an API client would: binds
 * through pods/binding (all in one loop turn: one group commit), evictions
 * as a DisruptionTarget condition then a graceful delete, nominated
 * nodes, PodScheduled=False with the reason for pods left pending,
 * PodGroup and Queue status, and Warning events (at most one per object
 * and reason a minute). Only what changed is written.
 *
 * The snapshot source is the store, through a cache of parsed objects
 * that re-parses an object only when its revision changed. The policy
 * (scheduler.yaml and the plugins) is reloaded on SIGHUP and `volray
 * policy reload` (with the controllers), and when one of its files
 * changes; a policy that does not load is refused and the running one
 * stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/metrics.h"
#include "ctrl/luaapi.h"
#include "ctrl/luahost.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "sched/sched.h"
#include "sched/sched_int.h"

#define SOON_MS		20
#define BIND_CHUNK	2000		/* binds per loop turn */
#define EVENT_EVERY_S	60

struct cached {
	char *key;
	uint64_t rev;
	cJSON *obj;
	void *memo;			/* the snapshot's derived data */
	int seen;
};

struct sched {
	uv_loop_t *loop;
	store *st;
	registry *rg;
	luahost *lua;
	struct policy *pol;
	uint64_t pol_mtime;		/* fingerprint of its files */
	uv_timer_t timer;
	uv_timer_t soon;
	hmap *cache;			/* "res|key" -> struct cached */
	hmap *events;			/* object|reason -> struct event_seen */
	time_t events_swept;
	/* Binds of the last session, written BIND_CHUNK per loop turn so
	   the API is served between chunks; no cycle runs until they are
	   all written. */
	struct pending_bind { char *ns, *name, *node; } *binds;
	int nbinds, next_bind;
	uv_timer_t bind_timer;
	struct sched_stats stats;
	int pending_work;
};

static const char *const storage[][2] = {
	{ "nodes", "nodes" },
	{ "pods", "pods" },
	{ "podgroups", "podgroups.scheduling.volcano.sh" },
	{ "queues", "queues.scheduling.volcano.sh" },
	{ "priorityclasses", "priorityclasses.scheduling.k8s.io" },
};

/* ------------------------------------------------------------------ */
/* The store as a snapshot source.                                     */

/*
 * A bound pod changes often (the kubelet's status) but the scheduler
 * reads few of its fields after binding: its node, phase and deletion.
 * Take those from the store's extracted fields instead of parsing the
 * new version. 0 when the pod must be parsed again (another uid, or
 * still pending: its spec and annotations matter then). Writes never use
 * these trees for bound pods (see fresh()).
 */
static int
refresh_bound_pod(cJSON *tree, const store_obj *o)
{
	const char *uid = json_str(tree, "metadata.uid");
	const char *node = json_str(tree, "spec.nodeName");

	if (uid == NULL || strcmp(uid, o->uid) != 0 || o->node_name[0] == '\0')
		return 0;
	if (node == NULL || strcmp(node, o->node_name) != 0)
		json_set_str(json_obj(tree, "spec"), "nodeName", o->node_name);
	if (o->phase[0] != '\0')
		json_set_str(json_obj(tree, "status"), "phase", o->phase);
	if (o->deleting && json_at(tree, "metadata.deletionTimestamp") == NULL)
		json_set_str(json_obj(tree, "metadata"), "deletionTimestamp",
		    "1970-01-01T00:00:00Z");
	return 1;
}

/* The stored object now, for a write (the cache may lag for bound pods). */
static cJSON *
fresh(struct sched *s, const char *res, const cJSON *cached)
{
	const store_obj *o = store_get(s->st, res, json_str(cached,
	    "metadata.namespace") ? json_str(cached, "metadata.namespace") : "",
	    json_str(cached, "metadata.name"));

	return o != NULL ? store_obj_tree(o) : NULL;
}

static void
store_source_list(void *arg, const char *res,
    void (*fn)(void *, cJSON *, void **), void *fnarg)
{
	struct sched *s = arg;
	store_obj *const *objs;
	const char *sres = NULL;
	size_t n, i;
	int pods;

	for (i = 0; i < sizeof storage / sizeof *storage; i++)
		if (strcmp(storage[i][0], res) == 0)
			sres = storage[i][1];
	if (sres == NULL)
		return;
	pods = strcmp(sres, "pods") == 0;
	n = store_list(s->st, sres, NULL, &objs);
	for (i = 0; i < n; i++) {
		const store_obj *o = objs[i];
		struct cached *c = hmap_get(s->cache, o->key);

		if (c == NULL) {
			if ((c = calloc(1, sizeof *c)) == NULL ||
			    (c->key = strdup(o->key)) == NULL)
				fatal("out of memory");
			hmap_put(s->cache, c->key, c);
		}
		if (c->obj != NULL && c->rev != o->rev && pods &&
		    refresh_bound_pod(c->obj, o))
			c->rev = o->rev;
		else if (c->obj == NULL || c->rev != o->rev) {
			cJSON_Delete(c->obj);
			free(c->memo);
			c->memo = NULL;
			c->obj = store_obj_tree(o);
			c->rev = o->rev;
		}
		c->seen = 1;
		fn(fnarg, c->obj, &c->memo);
	}
}

static int
unseen(const char *key, void *value, void *arg)
{
	struct cached *c = value;
	struct cached ***drop = arg;

	(void)key;
	if (!c->seen)
		*(*drop)++ = c;
	c->seen = 0;
	return 0;
}

static void
sweep(struct sched *s)
{
	size_t n = hmap_count(s->cache), i;
	struct cached **drop = calloc(n + 1, sizeof *drop), **end = drop;

	if (drop == NULL)
		fatal("out of memory");
	hmap_each(s->cache, unseen, &end);
	for (i = 0; drop + i < end; i++) {
		hmap_del(s->cache, drop[i]->key);
		cJSON_Delete(drop[i]->obj);
		free(drop[i]->memo);
		free(drop[i]->key);
		free(drop[i]);
	}
	free(drop);
}

/* ------------------------------------------------------------------ */
/* Applying decisions.                                                 */

/* When an object last got an event of a reason from the scheduler. */
struct event_seen {
	char *key;			/* "ns/name|reason" */
	time_t last;
};

static void
record_event(struct sched *s, const cJSON *obj, const char *type,
    const char *reason, const char *msg)
{
	struct luaapi_ctx c = { s->rg, s->st, NULL, NULL };
	char *key = util_printf("%s/%s|%s", json_str(obj, "metadata.namespace") ?
	    json_str(obj, "metadata.namespace") : "",
	    json_str(obj, "metadata.name"), reason);
	struct event_seen *e = hmap_get(s->events, key);
	time_t now = time(NULL);

	if (e != NULL) {
		free(key);
		if (now - e->last < EVENT_EVERY_S)
			return;
	} else {
		if ((e = malloc(sizeof *e)) == NULL)
			fatal("out of memory");
		e->key = key;
		hmap_put(s->events, e->key, e);
	}
	e->last = now;
	luaapi_record_event(&c, obj, type, reason, msg, "volcano", NULL);
}

static int
stale_event(const char *key, void *value, void *arg)
{
	struct event_seen *e = value;
	struct event_seen ***drop = arg;

	(void)key;
	if (time(NULL) - e->last >= EVENT_EVERY_S)
		*(*drop)++ = e;
	return 0;
}

/* Forget what is past the aggregation window (once a minute). */
static void
sweep_events(struct sched *s)
{
	struct event_seen **drop, **end;
	size_t i;

	if (time(NULL) - s->events_swept < EVENT_EVERY_S)
		return;
	s->events_swept = time(NULL);
	if ((drop = calloc(hmap_count(s->events) + 1, sizeof *drop)) == NULL)
		fatal("out of memory");
	end = drop;
	hmap_each(s->events, stale_event, &end);
	for (i = 0; drop + i < end; i++) {
		hmap_del(s->events, drop[i]->key);
		free(drop[i]->key);
		free(drop[i]);
	}
	free(drop);
}

static int
cond_is(const cJSON *pod, const char *type, const char *status,
    const char *reason, const char *msg)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(pod, "status.conditions"))
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    type) == 0)
			return json_str(it, "status") && strcmp(json_str(it,
			    "status"), status) == 0 && json_str(it, "reason") &&
			    strcmp(json_str(it, "reason"), reason) == 0 &&
			    json_str(it, "message") && strcmp(json_str(it,
			    "message"), msg) == 0;
	return 0;
}

/* Set a pod condition (and, if given, nominatedNodeName) in its status. */
static void
pod_condition(struct sched *s, const cJSON *cur, const char *type,
    const char *status, const char *reason, const char *msg,
    const char *nominated)
{
	const resource *r = resource_find("", "v1", "pods");
	const char *ns = json_str(cur, "metadata.namespace");
	const char *name = json_str(cur, "metadata.name");
	cJSON *t, *st, *conds, *c = NULL, *it;
	struct reg_opts o;
	struct reg_result res;
	char now[32];

	if (cond_is(cur, type, status, reason, msg) && (nominated == NULL ||
	    (json_str(cur, "status.nominatedNodeName") != NULL &&
	    strcmp(json_str(cur, "status.nominatedNodeName"), nominated) == 0)))
		return;		/* already says so */
	t = cJSON_Duplicate(cur, 1);
	st = json_obj(t, "status");
	conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	cJSON_ArrayForEach(it, conds)
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    type) == 0)
			c = it;
	util_now(now);
	if (c == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", type);
		cJSON_AddItemToArray(conds, c);
	}
	if (json_str(c, "status") == NULL || strcmp(json_str(c, "status"),
	    status) != 0)
		json_set_str(c, "lastTransitionTime", now);
	json_set_str(c, "status", status);
	json_set_str(c, "reason", reason);
	json_set_str(c, "message", msg);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "lastProbeTime");
	cJSON_AddNullToObject(c, "lastProbeTime");
	if (json_str(t, "status.phase") == NULL)
		json_set_str(st, "phase", "Pending");
	if (nominated != NULL)
		json_set_str(st, "nominatedNodeName", nominated);
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	registry_update(s->rg, r, ns, name, t, &o, &res);
	if (res.code >= 300 && res.code != 404 && res.code != 409)
		log_warn("scheduler: status of %s/%s: code %d", ns, name,
		    res.code);
	cJSON_Delete(res.body);
}

static void on_soon(uv_timer_t *);

/* Write the next chunk of binds; then the next chunk, or a cycle. */
static void
on_bind_chunk(uv_timer_t *h)
{
	struct sched *s = h->data;
	int end = s->next_bind + BIND_CHUNK;

	if (end > s->nbinds)
		end = s->nbinds;
	for (; s->next_bind < end; s->next_bind++) {
		struct pending_bind *b = &s->binds[s->next_bind];
		struct reg_result res;

		registry_bind(s->rg, b->ns, b->name, b->node, &res);
		if (res.code >= 300) {
			const char *msg = json_str(res.body, "message");
			char *why = util_printf("Binding rejected: %s", msg ?
			    msg : "error");
			const store_obj *o = store_get(s->st, "pods", b->ns,
			    b->name);
			cJSON *cur = o != NULL ? store_obj_tree(o) : NULL;

			log_info("scheduler: binding %s/%s to %s: %s", b->ns,
			    b->name, b->node, why);
			if (cur != NULL)
				pod_condition(s, cur, "PodScheduled", "False",
				    "SchedulerError", why, NULL);
			cJSON_Delete(cur);
			free(why);
		} else
			s->stats.binds++;
		cJSON_Delete(res.body);
		free(b->ns);
		free(b->name);
		free(b->node);
	}
	if (s->next_bind < s->nbinds) {
		uv_timer_start(&s->bind_timer, on_bind_chunk, 0, 0);
		return;
	}
	free(s->binds);
	s->binds = NULL;
	s->nbinds = s->next_bind = 0;
	/* What did not fit may fit now; what failed is taken again. */
	s->pending_work = 1;
	uv_timer_start(&s->soon, on_soon, SOON_MS, 0);
}

static void
dispatch(struct sched *s, struct session *ss)
{
	int i;

	if (ss->nbinds > 0) {
		if ((s->binds = calloc((size_t)ss->nbinds, sizeof *s->binds)) ==
		    NULL)
			fatal("out of memory");
		for (i = 0; i < ss->nbinds; i++) {
			s->binds[i].ns = strdup(ss->binds[i].t->ns);
			s->binds[i].name = strdup(ss->binds[i].t->name);
			s->binds[i].node = strdup(ss->binds[i].n->name);
		}
		s->nbinds = ss->nbinds;
		s->next_bind = 0;
		on_bind_chunk(&s->bind_timer);
	}
	for (i = 0; i < ss->nevicts; i++) {
		struct s_task *t = ss->evicts[i].t;
		const resource *r = resource_find("", "v1", "pods");
		struct reg_opts o;
		struct reg_result res;

		cJSON *cur = fresh(s, "pods", t->obj);

		if (cur != NULL)
			pod_condition(s, cur, "DisruptionTarget", "True",
			    "PreemptionByScheduler", ss->evicts[i].reason, NULL);
		cJSON_Delete(cur);
		record_event(s, t->obj, "Normal", "Preempted",
		    ss->evicts[i].reason);
		memset(&o, 0, sizeof o);
		registry_delete(s->rg, r, t->ns, t->name, &o, &res);
		if (res.code < 300)
			s->stats.evictions++;
		cJSON_Delete(res.body);
	}
}

static void
tell_pending(struct sched *s, struct session *ss)
{
	int i;

	for (i = 0; i < ss->ntasks; i++) {
		struct s_task *t = ss->tasks[i];
		struct s_job *j = t->job;
		char *msg = NULL;

		if (j == NULL || (t->status != TS_PENDING &&
		    t->status != TS_PIPELINED))
			continue;
		if (t->status == TS_PIPELINED) {
			if (t->nominated != NULL)
				pod_condition(s, t->obj, "PodScheduled", "False",
				    "Unschedulable", "waiting for preempted or "
				    "reclaimed pods to release their resources",
				    t->nominated);
			continue;
		}
		if (j->invalid)
			msg = util_printf("%s", j->invalid_msg);
		else if (j->queue == NULL)
			msg = util_printf("queue %s does not exist",
			    j->queue_name);
		else if (j->pg != NULL && strcmp(j->phase, "Pending") == 0)
			msg = util_printf("pod group %s is Pending%s%s", j->name,
			    j->enqueue_msg ? ": " : "", j->enqueue_msg ?
			    j->enqueue_msg : "");
		else if (j->cond_type != NULL &&
		    strcmp(j->cond_type, "Unschedulable") == 0 &&
		    j->min_member > 1)
			msg = util_printf("%s%s%s", j->cond_msg, t->why ? "; " :
			    "", t->why ? t->why : "");
		else if (t->why != NULL)
			msg = strdup(t->why);
		if (msg == NULL)
			continue;
		pod_condition(s, t->obj, "PodScheduled", "False",
		    "Unschedulable", msg, NULL);
		s->stats.unschedulable++;
		free(msg);
	}
}

static void
write_status(struct sched *s, const char *res, const char *group,
    const char *version, const cJSON *cur, cJSON *status)
{
	const resource *r = resource_find(group, version, res);
	cJSON *t;
	struct reg_opts o;
	struct reg_result rr;

	if (r == NULL || json_equal(json_at(cur, "status"), status)) {
		cJSON_Delete(status);
		return;
	}
	t = cJSON_Duplicate(cur, 1);
	json_set(t, "status", status);
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	registry_update(s->rg, r, json_str(cur, "metadata.namespace"),
	    json_str(cur, "metadata.name"), t, &o, &rr);
	if (rr.code >= 300 && rr.code != 404 && rr.code != 409)
		log_warn("scheduler: status of %s %s: code %d", res,
		    json_str(cur, "metadata.name"), rr.code);
	cJSON_Delete(rr.body);
}

static void
apply_outcome(struct sched *s, struct session *ss)
{
	struct sched_outcome out;
	int i;

	session_outcome(ss, &out);
	for (i = 0; i < out.npgs; i++) {
		struct s_job *j = out.pgs[i].job;

		write_status(s, "podgroups", "scheduling.volcano.sh", "v1beta1",
		    j->pg, out.pgs[i].status);
		out.pgs[i].status = NULL;
		if (j->cond_type != NULL &&
		    strcmp(j->cond_type, "Unschedulable") == 0)
			record_event(s, j->pg, "Warning", "Unschedulable",
			    j->cond_msg);
		if (j->enqueue_msg != NULL)
			record_event(s, j->pg, "Warning", "NotEnqueued",
			    j->enqueue_msg);
	}
	for (i = 0; i < out.nqueues; i++) {
		/* A merge patch of status.allocated alone: the Queue
		   controller writes the state and the counts. */
		struct s_queue *q = out.queues[i].q;
		const resource *r = resource_find("scheduling.volcano.sh",
		    "v1beta1", "queues");
		cJSON *patch, *alloc = out.queues[i].allocated;
		struct reg_opts o;
		struct reg_result rr;
		char *body;

		out.queues[i].allocated = NULL;
		if (r == NULL || json_equal(json_at(q->obj, "status.allocated"),
		    alloc)) {
			cJSON_Delete(alloc);
			continue;
		}
		patch = cJSON_CreateObject();
		json_set(json_obj(patch, "status"), "allocated", alloc);
		body = cJSON_PrintUnformatted(patch);
		memset(&o, 0, sizeof o);
		o.subresource = "status";
		registry_patch(s->rg, r, "", q->name,
		    "application/merge-patch+json", body, strlen(body), &o, &rr);
		if (rr.code >= 300 && rr.code != 404)
			log_warn("scheduler: status of queue %s: code %d",
			    q->name, rr.code);
		cJSON_Delete(rr.body);
		cJSON_Delete(patch);
		free(body);
	}
	outcome_free(&out);
	/* Plugins that failed: a Warning on the root queue. */
	for (i = 0; i < ss->nevents; i++) {
		struct s_queue *root = hmap_get(ss->queue_index, "root");

		if (root != NULL && root->obj != NULL)
			record_event(s, root->obj, "Warning", "PluginFailed",
			    ss->events[i]);
	}
}

/* ------------------------------------------------------------------ */
/* Policy files.                                                       */

/* A fingerprint of the policy's files: mtimes (ns) and sizes. */
static uint64_t
newest_mtime(struct sched *s)
{
	const char *p = luahost_path(s->lua, "scheduler.yaml");
	struct stat sb;
	uint64_t t = 0;
	int i;

	if (p != NULL && stat(p, &sb) == 0)
		t = (uint64_t)sb.st_mtim.tv_sec * 1000000000u +
		    (uint64_t)sb.st_mtim.tv_nsec + (uint64_t)sb.st_size;
	for (i = 0; s->pol != NULL && i < s->pol->nplugins; i++)
		if (stat(s->pol->plugins[i].file, &sb) == 0)
			t = t * 31 + (uint64_t)sb.st_mtim.tv_sec * 1000000000u +
			    (uint64_t)sb.st_mtim.tv_nsec + (uint64_t)sb.st_size;
	return t;
}

int
sched_reload(sched *s, char **cause)
{
	struct policy *p = policy_load(s->lua, cause);

	if (p == NULL) {
		log_error("scheduler: policy refused, keeping the running one: "
		    "%s", *cause);
		return -1;
	}
	policy_free(s->pol);
	s->pol = p;
	s->pol_mtime = newest_mtime(s);
	log_info("scheduler: policy %s: %d actions, %d plugins",
	    p->conf.path, p->conf.nactions, p->nplugins);
	uv_timer_set_repeat(&s->timer, (uint64_t)p->conf.period_ms);
	/* A new policy may place what the old one left: a cycle soon. */
	if (uv_is_active((uv_handle_t *)&s->timer) && !s->pending_work) {
		s->pending_work = 1;
		uv_timer_start(&s->soon, on_soon, SOON_MS, 0);
	}
	return 0;
}

cJSON *
sched_policy_info(const sched *s)
{
	return policy_info(s->pol);
}

/* ------------------------------------------------------------------ */
/* Cycles.                                                             */

static void
cycle(struct sched *s)
{
	struct sched_source src = { store_source_list, s };
	struct session ss;
	uint64_t t0 = util_usec(), t1, t2, t3, t4;

	if (s->nbinds > 0) {
		/* The last session's binds are still being written. */
		s->pending_work = 1;
		return;
	}
	s->pending_work = 0;
	if (s->pol == NULL)
		return;
	session_open(&ss, s->pol, &src);
	t1 = util_usec();
	session_run(&ss);
	t2 = util_usec();
	dispatch(s, &ss);
	t3 = util_usec();
	tell_pending(s, &ss);
	apply_outcome(s, &ss);
	t4 = util_usec();
	if (ss.nbinds > 0 || t4 - t0 > 100000)
		log_info("scheduler: cycle: %d nodes, %d jobs, %d tasks: "
		    "snapshot %llu ms, actions %llu ms (Lua %llu ms), %d binds "
		    "%llu ms, status %llu ms", ss.nnodes, ss.njobs, ss.ntasks,
		    (unsigned long long)(t1 - t0) / 1000,
		    (unsigned long long)(t2 - t1) / 1000,
		    (unsigned long long)ss.lua_us / 1000, ss.nbinds,
		    (unsigned long long)(t3 - t2) / 1000,
		    (unsigned long long)(t4 - t3) / 1000);
	s->stats.plugin_failures += (uint64_t)ss.nevents;
	s->stats.lua_us += ss.lua_us;
	session_free(&ss);
	sweep(s);
	sweep_events(s);
	s->stats.cycles++;
	s->stats.last_cycle_us = util_usec() - t0;
	s->stats.cycle_us += s->stats.last_cycle_us;
}

static void
on_period(uv_timer_t *h)
{
	struct sched *s = h->data;

	/* A changed policy file reloads before the cycle. */
	if (s->pol != NULL && newest_mtime(s) != s->pol_mtime) {
		char *cause = NULL;

		if (sched_reload(s, &cause) != 0)
			s->pol_mtime = newest_mtime(s);
		free(cause);
	}
	cycle(s);
}

static void
on_soon(uv_timer_t *h)
{
	cycle(h->data);
}

static void
on_event(void *arg, const store_event *ev)
{
	struct sched *s = arg;
	const store_obj *o = ev->obj;

	if (s->pending_work)
		return;
	if ((strcmp(o->res, "pods") == 0 && ev->type == STORE_ADDED &&
	    o->node_name[0] == '\0') || strcmp(o->res, "nodes") == 0 ||
	    (strcmp(o->res, "pods") == 0 && ev->type == STORE_DELETED &&
	    o->node_name[0] != '\0') ||
	    (strcmp(o->res, "podgroups.scheduling.volcano.sh") == 0 &&
	    ev->type == STORE_ADDED)) {
		uint64_t wait = s->stats.last_cycle_us * 4 / 1000;
		uint64_t period = s->pol ? (uint64_t)s->pol->conf.period_ms :
		    1000;

		s->pending_work = 1;
		uv_timer_start(&s->soon, on_soon, wait > SOON_MS ? (wait <
		    period ? wait : period) : SOON_MS, 0);
	}
}

static void
print_metrics(FILE *f, void *arg)
{
	const struct sched *s = arg;

	fprintf(f, "# TYPE volray_scheduler_cycles_total counter\n"
	    "volray_scheduler_cycles_total %llu\n"
	    "# TYPE volray_scheduler_binds_total counter\n"
	    "volray_scheduler_binds_total %llu\n"
	    "# TYPE volray_scheduler_evictions_total counter\n"
	    "volray_scheduler_evictions_total %llu\n"
	    "# TYPE volray_scheduler_plugin_failures_total counter\n"
	    "volray_scheduler_plugin_failures_total %llu\n"
	    "# TYPE volray_scheduler_last_cycle_seconds gauge\n"
	    "volray_scheduler_last_cycle_seconds %.6f\n"
	    "# TYPE volray_scheduler_cycle_seconds_total counter\n"
	    "volray_scheduler_cycle_seconds_total %.6f\n"
	    "# TYPE volray_scheduler_lua_seconds_total counter\n"
	    "volray_scheduler_lua_seconds_total %.6f\n",
	    (unsigned long long)s->stats.cycles,
	    (unsigned long long)s->stats.binds,
	    (unsigned long long)s->stats.evictions,
	    (unsigned long long)s->stats.plugin_failures,
	    (double)s->stats.last_cycle_us / 1e6,
	    (double)s->stats.cycle_us / 1e6, (double)s->stats.lua_us / 1e6);
}

sched *
sched_new(uv_loop_t *loop, store *st, registry *rg, luahost *lua)
{
	struct sched *s = calloc(1, sizeof *s);

	if (s == NULL || (s->cache = hmap_new()) == NULL ||
	    (s->events = hmap_new()) == NULL)
		fatal("out of memory");
	s->loop = loop;
	s->st = st;
	s->rg = rg;
	s->lua = lua;
	uv_timer_init(loop, &s->timer);
	uv_timer_init(loop, &s->soon);
	uv_timer_init(loop, &s->bind_timer);
	s->timer.data = s->soon.data = s->bind_timer.data = s;
	store_subscribe(st, on_event, s);
	metrics_add_source(print_metrics, s);
	return s;
}

void
sched_start(sched *s)
{
	uint64_t period = s->pol ? (uint64_t)s->pol->conf.period_ms : 1000;

	uv_timer_start(&s->timer, on_period, period, period);
	uv_unref((uv_handle_t *)&s->timer);
	s->pending_work = 1;
	uv_timer_start(&s->soon, on_soon, SOON_MS, 0);
}

void
sched_stats_get(const sched *s, struct sched_stats *out)
{
	*out = s->stats;
}
