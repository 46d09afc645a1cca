/*
 * The scheduler in the daemon: runs a session every schedulePeriod (1 s)
 * and soon after new pending work arrives (20 ms later, or four times
 * the last cycle when that is longer, so a burst of creates is a few
 * cycles and the API keeps most of the loop), and applies what the
 * session decided through its client (client/client.h), as any API
 * client would: binds
 * through pods/binding (10 ms of writes a loop turn, each slice one group
 * commit, so the API answers between slices), evictions
 * as a DisruptionTarget condition then a graceful delete, nominated
 * nodes, PodScheduled=False with the reason for pods left pending,
 * PodGroup and Queue status, and Warning events (a recorder's, written
 * at most once a minute per object, reason and message -- PluginFailed
 * once a second -- with the repeats in between added to the Event's
 * count). Only what changed is written.
 *
 * A session leaves the loop: the loop takes a referenced copy of the
 * versions it will read (nodes, queues, priority classes, PodGroups,
 * pods: the versions are immutable, a copy costs a pointer each), a
 * worker thread builds the snapshot from them through a cache of parsed
 * objects (re-parsed only when the revision changed; only that thread
 * touches it while a session is in flight) and runs the actions, and
 * the loop applies the outcome when it comes back -- but for the binds,
 * which it starts writing as the session's statements commit them (as
 * Volcano dispatches a statement's binds at commit). The API is served
 * meanwhile; what changed meanwhile is seen by the next session, and a
 * bind for a pod deleted meanwhile fails like any stale bind. A pod is
 * assumed on its node from the moment its bind is sent until the cache
 * has it bound (assume.c): the sessions that run while a remote API takes
 * thousands of binds do not decide it again. The policy
 * (scheduler.yaml and the plugins) is reloaded on SIGHUP and `volray
 * policy reload` (with the controllers), and when one of its files
 * changes; a policy that does not load is refused and the running one
 * stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "client/recorder.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luahost.h"
#include "registry/status.h"
#include "sched/assume.h"
#include "sched/sched.h"
#include "sched/sched_int.h"
#include "sched/sessionlog.h"

#define SOON_MS		20
#define DRAIN_US	10000		/* writes a loop turn, in time */
#define BIND_WAKE	256		/* binds published before the loop is
				   woken to write them, mid-session */
#define EVENT_EVERY_S	60
#define FAIL_EVENT_EVERY_S 1		/* PluginFailed: one object, few
					   messages */
/* FailedScheduling events a session records at most (one per pod whose
   reason to wait changed). */
#define POD_EVENTS	100
#define IDLE_CYCLE_S	60

#define NSTORAGE	9
static const char *const storage[NSTORAGE][2] = {
	{ "nodes", "nodes" },
	{ "pods", "pods" },
	{ "podgroups", "podgroups.scheduling.volcano.sh" },
	{ "k8spodgroups", "podgroups.scheduling.k8s.io" },
	{ "queues", "queues.scheduling.volcano.sh" },
	{ "priorityclasses", "priorityclasses.scheduling.k8s.io" },
	{ "resourcequotas", "resourcequotas" },
	{ "poddisruptionbudgets", "poddisruptionbudgets.policy" },
	{ "hypernodes", "hypernodes.topology.volcano.sh" },
};

const char *const sched_kinds[] = {
	"nodes", "pods", "podgroups.scheduling.volcano.sh",
	"podgroups.scheduling.k8s.io",
	"queues.scheduling.volcano.sh", "priorityclasses.scheduling.k8s.io",
	"resourcequotas", "poddisruptionbudgets.policy",
	"hypernodes.topology.volcano.sh",
	"events",			/* the recorder folds repeats */
	NULL
};

struct cached {
	char *key;
	uint64_t rev;
	cJSON *obj;
	void *memo;			/* the snapshot's derived data */
	int seen;
};

struct sched {
	uv_loop_t *loop;
	client *c;
	recorder *rec;
	luahost *lua;
	struct policy *pol;
	uint64_t pol_mtime;		/* fingerprint of its files */
	uv_timer_t timer;
	uv_timer_t soon;
	hmap *cache;			/* "res|key" -> struct cached */
	hmap *events;			/* object|reason -> struct event_seen */
	time_t events_swept;
	/* Writing the outcome of the session back: binds, then pending
	   pods' reasons, PodGroup and Queue status, DRAIN_US of writes a
	   loop turn so the API is served between slices (and each slice is
	   one group commit); no cycle runs until all is written. */
	uv_idle_t drain_idle;		/* a slice each loop turn; a 0 ms
					   timer re-armed in its callback
					   would run again in the same turn */
	int drain_step, drain_at;
	/* Status writes are asynchronous: the session is finished (and the
	   next may start) once every one has its answer in the cache. */
	int writes_inflight;
	int finish_waiting;
	/* Binds start while the session still runs: each statement that
	   commits binds wakes the loop (bind_async), which writes those
	   published so far; the rest follows when the session is back. */
	uv_async_t bind_async;
	int session_back, streamed;
	int woken_at;			/* the thread's: binds when it last
					   woke the loop (every BIND_WAKE) */
	uint64_t t_done, t_binds;
	/* The session in flight: opened on the loop (the snapshot reads
	   the client's cache and ours), run on a worker thread (it touches
	   nothing but its own structures and the policy's Lua states),
	   applied on the loop when it comes back. Until then no cycle
	   starts, the cache is not swept, and a policy replaced by a
	   reload waits in `retired` to be freed. */
	struct session *running;
	struct policy *run_pol, *retired;
	struct captured {
		store_obj **objs;
		size_t n;
		const char **assumed;	/* pods: the node each unbound one
					   is assumed on, or NULL (none) */
	} captured[NSTORAGE];
	/* The pods whose bind is on its way (kube-scheduler's assumed
	   pods): a session reads them as bound to their node, so the
	   sessions that run while thousands of binds wait for the rate
	   limiter or their answers do not decide them again. */
	assume *assumed;
	sessionlog *slog;		/* --record-sessions, or NULL */
	uint64_t slog_us;		/* time spent writing it */
	uv_work_t work;
	uint64_t t_open, t_capture, t_snap, t_run;
	/* Decided on the thread, written on the loop: the status updates
	   that differ from the stored ones, and the pods to tell why. */
	struct sched_outcome out;
	struct tell { struct s_task *t; char *msg; } *tells;
	int ntells, npending;
	int pod_events;			/* FailedScheduling, this session */
	size_t captells;
	struct session *to_free;	/* the last session, freed off the loop */
	/* A cycle whose inputs did not change since the last one would
	   decide the same: skipped, but one runs at least every
	   IDLE_CYCLE_S, and when a plugin's ssn:wake_after is due (for
	   what plugins base on time). */
	int inputs_changed;
	time_t last_cycle;
	uint64_t wake_at_ms;		/* a plugin's ssn:wake_after, or 0 */
	struct sched_stats stats;
	int pending_work;
	explain *explain;		/* the last sessions' reasons, or NULL */
};


/* ------------------------------------------------------------------ */
/* The client's cache as a snapshot source.                            */

/* The stored object now, for a write (the cache may lag for bound pods). */
static cJSON *
fresh(struct sched *s, const char *res, const cJSON *cached)
{
	const store_obj *o = client_get(s->c, res, json_str(cached,
	    "metadata.namespace") ? json_str(cached, "metadata.namespace") : "",
	    json_str(cached, "metadata.name"));

	return o != NULL ? store_obj_tree(o) : NULL;
}

/*
 * Runs on the session's thread: reads only the captured versions, through
 * the cache of their trees (re-parsed when the revision changed) and what
 * the snapshot derived from them (memo).
 *
 * Pods are most of it. A pending pod's tree is kept (its spec and
 * annotations are read every session). A bound pod is listed from its
 * summary alone -- the cache's, for a version loaded after a restart, or
 * the one made while it was pending -- with its node, phase and deletion
 * from the version's fields, and parsed only if a predicate or plugin reads
 * it (source_tree): after binding, the kubelet's status writes do
 * not change what the scheduler reads (so a bound pod's later edits to
 * its annotations or requests are not seen; a new uid is).
 */
static void
source_list(void *arg, const char *res,
    void (*fn)(void *, cJSON *, void **, const struct sched_meta *),
    void *fnarg)
{
	struct sched *s = arg;
	const struct captured *cap = NULL;
	size_t i;
	int pods;

	for (i = 0; i < NSTORAGE; i++)
		if (strcmp(storage[i][0], res) == 0)
			cap = &s->captured[i];
	if (cap == NULL)
		return;
	pods = strcmp(res, "pods") == 0;
	for (i = 0; i < cap->n; i++) {
		const store_obj *o = cap->objs[i];
		const char *node = cap->assumed != NULL &&
		    cap->assumed[i] != NULL ? cap->assumed[i] : o->node_name;
		struct sched_meta meta = { node, o->phase, o->deleting, NULL };
		int bound = pods && node[0] != '\0';
		void *summary = pods ? o->derived : NULL;
		struct cached *c;

		if (summary != NULL && bound) {
			meta.lazy = o;
			fn(fnarg, NULL, &summary, &meta);
			continue;
		}
		if ((c = hmap_get(s->cache, o->key)) == NULL) {
			c = xcalloc(1, sizeof *c);
			c->key = xstrdup(o->key);
			hmap_put(s->cache, c->key, c);
		}
		c->seen = 1;
		if (bound) {
			/* The summary only; no tree kept. */
			if (c->memo == NULL ||
			    strcmp(snapshot_pod_uid(c->memo), o->uid) != 0) {
				cJSON *t = store_obj_tree(o);

				free(c->memo);
				c->memo = t != NULL ? snapshot_pod_summary(t) :
				    NULL;
				cJSON_Delete(t);
			}
			cJSON_Delete(c->obj);
			c->obj = NULL;
			if (c->memo == NULL)
				continue;	/* no name or uid: not ours */
			meta.lazy = o;
			fn(fnarg, NULL, &c->memo, &meta);
			continue;
		}
		if (c->obj == NULL || c->rev != o->rev) {
			cJSON_Delete(c->obj);
			free(c->memo);
			c->memo = NULL;
			c->obj = store_obj_tree(o);
			c->rev = o->rev;
		}
		if (summary != NULL)
			fn(fnarg, c->obj, &summary, &meta);
		else
			fn(fnarg, c->obj, &c->memo, pods ? &meta : NULL);
	}
}

static cJSON *
source_tree(void *arg, const void *lazy)
{
	(void)arg;
	return store_obj_tree(lazy);
}

void
sched_set_names(const char *const *names, int n, int also_default)
{
	snapshot_set_names(names, n, also_default);
}

void
sched_derive(void)
{
	client_derive("pods", snapshot_pod_summary, free);
}

/* On the loop: a referenced copy of what the snapshot will read. */
static void
capture(struct sched *s)
{
	int i;

	for (i = 0; i < NSTORAGE; i++) {
		s->captured[i].n = client_list_refs(s->c, storage[i][1],
		    &s->captured[i].objs);
		if (strcmp(storage[i][0], "pods") == 0)
			s->captured[i].assumed = assume_nodes(s->assumed,
			    s->captured[i].objs, s->captured[i].n);
	}
}

static void
release(struct sched *s)
{
	size_t i, k;

	for (i = 0; i < NSTORAGE; i++) {
		for (k = 0; k < s->captured[i].n; k++)
			store_obj_unref(s->captured[i].objs[k]);
		free(s->captured[i].objs);
		free(s->captured[i].assumed);
		s->captured[i].objs = NULL;
		s->captured[i].assumed = NULL;
		s->captured[i].n = 0;
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
	struct cached **drop = xcalloc(n + 1, sizeof *drop), **end = drop;

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

/*
 * When an object last got an event of a reason and message from the
 * scheduler. The recorder folds a repeat into its Event's count, but a
 * repeat is still a write: a PodGroup left Unschedulable would be written
 * every cycle (up to fifty a second). At most one write per object,
 * reason and message a minute (PluginFailed, on the root queue alone, a
 * second); the repeats in between are counted and the next write adds
 * them to the Event's count, so that it says how often it happened. A
 * new message (a changed reason to wait, the policy reloaded) is written
 * at once.
 */
struct event_seen {
	char *key;			/* "ns/name|reason|hash of message" */
	time_t last;
	int missed;			/* repeats not written since */
};

static void
record_event(struct sched *s, const cJSON *obj, const char *type,
    const char *reason, const char *msg)
{
	struct recorder_obj ro;
	char *key = util_printf("%s/%s|%s|%016llx",
	    json_str(obj, "metadata.namespace") ?
	    json_str(obj, "metadata.namespace") : "",
	    json_str(obj, "metadata.name"), reason, (unsigned long long)
	    util_fnv1a(UTIL_FNV_SEED, msg, strlen(msg)));
	struct event_seen *e = hmap_get(s->events, key);
	time_t now = time(NULL);
	int every = strcmp(reason, "PluginFailed") == 0 ? FAIL_EVENT_EVERY_S :
	    EVENT_EVERY_S, n;

	if (e != NULL) {
		free(key);
		if (now - e->last < every) {
			e->missed++;
			return;
		}
	} else {
		e = xcalloc(1, sizeof *e);
		e->key = key;
		hmap_put(s->events, e->key, e);
	}
	e->last = now;
	n = 1 + e->missed;
	e->missed = 0;
	recorder_obj_of(obj, &ro);
	recorder_event_n(s->rec, &ro, type, reason, msg, n, NULL);
}

/* Forgotten: what was written a minute ago and not repeated since, and
   after the recorder's window whatever repeats it had. */
static int
stale_event(const char *key, void *value, void *arg)
{
	struct event_seen *e = value;
	struct event_seen ***drop = arg;

	(void)key;
	if (time(NULL) - e->last >= (e->missed > 0 ?
	    RECORDER_SIMILAR_WINDOW : EVENT_EVERY_S))
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
	drop = xcalloc(hmap_count(s->events) + 1, sizeof *drop);
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

static void session_finish(struct sched *);

/* A status write on its way: its object, for the log. */
struct status_wait {
	struct sched *s;
	int ok_conflict;		/* a 409 is no news (decided again) */
	char what[];
};

static struct status_wait *
status_wait_new(struct sched *s, int ok_conflict, const char *kind,
    const char *ns, const char *name)
{
	char *what = util_printf("%s %s%s%s", kind, ns != NULL ? ns : "",
	    ns != NULL ? "/" : "", name);
	size_t len = strlen(what) + 1;
	struct status_wait *w = xmalloc(sizeof *w + len);

	w->s = s;
	w->ok_conflict = ok_conflict;
	memcpy(w->what, what, len);
	free(what);
	s->writes_inflight++;
	return w;
}

/* A status write's answer; the last one of a drained session ends it. */
static void
on_status_written(void *arg, struct reg_result *res)
{
	struct status_wait *w = arg;
	struct sched *s = w->s;

	if (res->code >= 300 && res->code != 404 && (res->code != 409 ||
	    !w->ok_conflict))
		log_warn("scheduler: status of %s: code %d", w->what,
		    res->code);
	cJSON_Delete(res->body);
	free(w);
	if (--s->writes_inflight == 0 && s->finish_waiting) {
		s->finish_waiting = 0;
		session_finish(s);
	}
}

/*
 * Set a pod condition (and, if given, nominatedNodeName) in its status;
 * done(arg) gets the answer. 0 if the pod says so already: nothing is
 * written and done is not called.
 */
static int
pod_condition_then(struct sched *s, const cJSON *cur, const char *type,
    const char *status, const char *reason, const char *msg,
    const char *nominated, client_done_fn done, void *arg)
{
	const resource *r = resource_find("", "v1", "pods");
	const char *ns = json_str(cur, "metadata.namespace");
	const char *name = json_str(cur, "metadata.name");
	cJSON *t, *st, *conds, *c = NULL, *it;
	char now[32];

	if (cond_is(cur, type, status, reason, msg) && (nominated == NULL ||
	    (json_str(cur, "status.nominatedNodeName") != NULL &&
	    strcmp(json_str(cur, "status.nominatedNodeName"), nominated) == 0)))
		return 0;	/* already says so */
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
	/* The session's tree is a stored version: the client takes it
	   for the current one (409 if a later version replaced it). */
	cJSON_DetachItemViaPointer(t, st);
	client_update_status_async(s->c, r, ns, name, t, st, NULL, done, arg);
	return 1;
}

/* Set a pod condition, the session waiting for the answer. */
static void
pod_condition(struct sched *s, const cJSON *cur, const char *type,
    const char *status, const char *reason, const char *msg,
    const char *nominated)
{
	struct status_wait *w = status_wait_new(s, 1, "pod",
	    json_str(cur, "metadata.namespace"),
	    json_str(cur, "metadata.name"));

	if (!pod_condition_then(s, cur, type, status, reason, msg, nominated,
	    on_status_written, w)) {
		s->writes_inflight--;
		free(w);
	}
}

static void on_soon(uv_timer_t *);

/* A bind on its way: what its answer needs, apart from the session. */
struct bind_wait {
	struct sched *s;
	const char *ns, *name, *node, *uid;	/* in buf */
	char buf[];
};

/* A bind's answer; a refused one is told to its pod. */
static void
on_bound(void *arg, struct reg_result *res)
{
	struct bind_wait *w = arg;
	struct sched *s = w->s;

	if (res->code >= 300) {
		const char *msg = json_str(res->body, "message");
		char *why = util_printf("Binding rejected: %s", msg ? msg :
		    "error");
		const store_obj *o = client_get(s->c, "pods", w->ns, w->name);
		/* A pod bound meanwhile (the refusal says so) is no error. */
		cJSON *cur = o != NULL && *o->node_name == '\0' ?
		    store_obj_tree(o) : NULL;

		log_info("scheduler: binding %s/%s to %s: %s", w->ns, w->name,
		    w->node, why);
		/* Pending again, for the next session, unless the cache
		   has it bound (by another, or by this bind after all). */
		assume_forget(s->assumed, w->uid);
		s->inputs_changed = 1;
		if (cur != NULL)
			pod_condition(s, cur, "PodScheduled", "False",
			    "SchedulerError", why, NULL);
		cJSON_Delete(cur);
		free(why);
	} else
		s->stats.binds++;
	cJSON_Delete(res->body);
	free(w);
}

/*
 * One bind of the session. The answer comes through on_bound: at once
 * from the embedded client, later from a remote one (whose rate limiter
 * then never holds the loop).
 */
static void
write_bind(struct sched *s, const struct decision_bind *b)
{
	size_t lns = strlen(b->t->ns) + 1, lname = strlen(b->t->name) + 1;
	size_t lnode = strlen(b->n->name) + 1, luid = strlen(b->t->uid) + 1;
	struct bind_wait *w = xmalloc(sizeof *w + lns + lname + lnode + luid);

	/* One block: the answer may come after the session is gone. */
	w->s = s;
	w->ns = memcpy(w->buf, b->t->ns, lns);
	w->name = memcpy(w->buf + lns, b->t->name, lname);
	w->node = memcpy(w->buf + lns + lname, b->n->name, lnode);
	w->uid = memcpy(w->buf + lns + lname + lnode, b->t->uid, luid);
	/* Bound, for the sessions to come, from now on (before the call:
	   an embedded client's answer and event come within it). */
	assume_add(s->assumed, w->uid, w->node);
	client_bind_async(s->c, w->ns, w->name, w->node, on_bound, w);
}

/*
 * An eviction on its way. The session is finished only once its answer
 * is in, as with the status writes (writes_inflight): the next session
 * starts from a cache where the victim is on its way out (or the
 * eviction failed), never while the delete still travels.
 */
struct evict_wait {
	struct sched *s;
	const char *ns, *name;		/* in buf */
	char buf[];
};

static void
on_evicted(void *arg, struct reg_result *res)
{
	struct evict_wait *w = arg;
	struct sched *s = w->s;

	if (res->code < 300)
		s->stats.evictions++;
	else if (res->code != 404)
		log_info("scheduler: evicting %s/%s: code %d", w->ns, w->name,
		    res->code);
	cJSON_Delete(res->body);
	free(w);
	if (--s->writes_inflight == 0 && s->finish_waiting) {
		s->finish_waiting = 0;
		session_finish(s);
	}
}

static void
evict_now(struct evict_wait *w)
{
	struct reg_opts o;

	memset(&o, 0, sizeof o);
	client_evict_async(w->s->c, w->ns, w->name, &o, on_evicted, w);
}

/* The DisruptionTarget condition's answer: then the eviction, as
   kube-scheduler writes the condition before it deletes. */
static void
on_disruption_written(void *arg, struct reg_result *res)
{
	struct evict_wait *w = arg;

	if (res->code >= 300 && res->code != 404 && res->code != 409)
		log_warn("scheduler: status of pod %s/%s: code %d", w->ns,
		    w->name, res->code);
	cJSON_Delete(res->body);
	evict_now(w);
}

/* Evictions: few, at once, before the binds; none waits on the loop. */
static void
write_evictions(struct sched *s, struct session *ss)
{
	int i;

	for (i = 0; i < ss->nevicts; i++) {
		struct s_task *t = ss->evicts[i].t;
		size_t lns = strlen(t->ns) + 1, lname = strlen(t->name) + 1;
		struct evict_wait *w = xmalloc(sizeof *w + lns + lname);
		cJSON *obj = task_obj(ss, t);
		cJSON *cur = obj != NULL ? fresh(s, "pods", obj) : NULL;
		int later;

		w->s = s;
		w->ns = memcpy(w->buf, t->ns, lns);
		w->name = memcpy(w->buf + lns, t->name, lname);
		s->writes_inflight++;
		if (obj != NULL)
			record_event(s, obj, "Normal", "Preempted",
			    ss->evicts[i].reason);
		later = cur != NULL && pod_condition_then(s, cur,
		    "DisruptionTarget", "True", "PreemptionByScheduler",
		    ss->evicts[i].reason, NULL, on_disruption_written, w);
		cJSON_Delete(cur);
		if (!later)
			evict_now(w);
	}
}

/*
 * Admission gates the session let go: removed by a JSON patch that first
 * tests the gate is still where the session saw it (a changed pod is
 * decided again next session).
 */
static void
write_ungates(struct sched *s, struct session *ss)
{
	const resource *r = resource_find("", "v1", "pods");
	int i;

	if (ss->nungates == 0)
		return;
	for (i = 0; i < ss->ntasks; i++) {
		struct s_task *t = ss->tasks[i];
		cJSON *obj;
		char *body, path[16];
		int last;

		if (!t->ungate)
			continue;
		/* The last gate takes the list with it, as an API server
		   that drops empty lists shows it. */
		obj = task_obj(ss, t);
		last = obj != NULL && cJSON_GetArraySize(json_at(obj,
		    "spec.schedulingGates")) == 1;
		snprintf(path, sizeof path, last ? "" : "/%d", t->queue_gate);
		body = util_printf("[{\"op\":\"test\",\"path\":"
		    "\"/spec/schedulingGates/%d/name\",\"value\":\"%s\"},"
		    "{\"op\":\"remove\",\"path\":"
		    "\"/spec/schedulingGates%s\"}]", t->queue_gate,
		    QUEUE_GATE, path);
		client_patch_async(s->c, r, t->ns, t->name,
		    "application/json-patch+json", body, strlen(body), NULL,
		    on_status_written, status_wait_new(s, 1, "pod gate",
		    t->ns, t->name));
		free(body);
		s->stats.ungates++;
	}
}

static void
add_tell(struct sched *s, struct s_task *t, char *msg)
{
	XGROW(s->tells, s->captells, s->ntells + 1);
	s->tells[s->ntells].t = t;
	s->tells[s->ntells++].msg = msg;
}

/*
 * On the thread: why each pending pod waits, kept only where its cached
 * version does not say so already (a pipelined pod: msg NULL, told about
 * its nominated node).
 */
static void
decide_pending(struct sched *s, struct session *ss)
{
	int i;

	s->npending = 0;
	for (i = 0; i < ss->ntasks; i++) {
		struct s_task *t = ss->tasks[i];
		struct s_job *j = t->job;
		char *msg;

		if (j == NULL || (t->status != TS_PENDING &&
		    t->status != TS_PIPELINED) || t->gated)
			continue;	/* a gated pod says SchedulingGated */
		if (t->status == TS_PIPELINED) {
			if (t->nominated != NULL)
				add_tell(s, t, NULL);
			continue;
		}
		if ((msg = outcome_pending_msg(t)) == NULL)
			continue;
		s->npending++;
		if (t->unsched_msg != NULL && strcmp(t->unsched_msg, msg) == 0) {
			/* Says so already. */
			free(msg);
			continue;
		}
		add_tell(s, t, msg);
	}
}

/* On the loop: write one of what decide_pending found. */
static void
write_tell(struct sched *s, struct tell *tl)
{
	if (tl->msg == NULL)
		pod_condition(s, tl->t->obj, "PodScheduled", "False",
		    "Unschedulable", "waiting for preempted or reclaimed pods "
		    "to release their resources", tl->t->nominated);
	else {
		pod_condition(s, tl->t->obj, "PodScheduled", "False",
		    "Unschedulable", tl->msg, NULL);
		/* kube-scheduler's event for a pod that did not fit, for
		   the first POD_EVENTS pods of a session whose reason
		   changed (the rest say it in their condition). */
		if (s->pod_events < POD_EVENTS) {
			s->pod_events++;
			record_event(s, tl->t->obj, "Warning",
			    "FailedScheduling", tl->msg);
		}
	}
	free(tl->msg);
	tl->msg = NULL;
}

/* On the thread: PodGroup and Queue status, dropped where unchanged. */
static void
decide_outcome(struct sched *s, struct session *ss)
{
	int i;

	outcome_build(ss, &s->out);
	for (i = 0; i < s->out.npgs; i++)
		if (json_equal(json_at(s->out.pgs[i].job->pg, "status"),
		    s->out.pgs[i].status)) {
			cJSON_Delete(s->out.pgs[i].status);
			s->out.pgs[i].status = NULL;
		}
	for (i = 0; i < s->out.nqueues; i++)
		if (json_equal(json_at(s->out.queues[i].q->obj,
		    "status.allocated"), s->out.queues[i].allocated)) {
			cJSON_Delete(s->out.queues[i].allocated);
			s->out.queues[i].allocated = NULL;
		}
}

static void
write_status(struct sched *s, const char *res, const char *group,
    const char *version, const cJSON *cur, cJSON *status)
{
	const resource *r = resource_find(group, version, res);
	cJSON *t;

	if (r == NULL || status == NULL) {
		cJSON_Delete(status);
		return;
	}
	/* As in pod_condition: the session's tree is the current one. */
	t = cJSON_Duplicate(cur, 1);
	client_update_status_async(s->c, r, json_str(cur, "metadata.namespace"),
	    json_str(cur, "metadata.name"), t, status, NULL, on_status_written,
	    status_wait_new(s, 1, res, json_str(cur, "metadata.namespace"),
	    json_str(cur, "metadata.name")));
}

static void
pg_event(void *arg, const struct s_job *j, const char *reason,
    const char *msg)
{
	record_event(arg, j->pg, "Warning", reason, msg);
}

static void
write_pg(struct sched *s, struct pg_update *u)
{
	struct s_job *j = u->job;

	if (j->group_api == GROUP_K8S)
		write_status(s, "podgroups", "scheduling.k8s.io", "v1alpha2",
		    j->pg, u->status);
	else
		write_status(s, "podgroups", "scheduling.volcano.sh",
		    "v1beta1", j->pg, u->status);
	u->status = NULL;
	outcome_pg_events(j, pg_event, s);
}

/* A merge patch of status.allocated alone: the Queue controller writes
   the state and the counts. */
static void
write_queue(struct sched *s, struct queue_update *u)
{
	const resource *r = resource_find("scheduling.volcano.sh", "v1beta1",
	    "queues");
	cJSON *patch, *alloc = u->allocated;
	struct reg_opts o;
	char *body;

	u->allocated = NULL;
	if (r == NULL || alloc == NULL) {
		cJSON_Delete(alloc);
		return;
	}
	patch = cJSON_CreateObject();
	json_set(json_obj(patch, "status"), "allocated", alloc);
	body = cJSON_PrintUnformatted(patch);
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	client_patch_async(s->c, r, "", u->q->name,
	    "application/merge-patch+json", body, strlen(body), &o,
	    on_status_written, status_wait_new(s, 0, "queue", NULL,
	    u->q->name));
	cJSON_Delete(patch);
	free(body);
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
	if (s->running != NULL && s->run_pol == s->pol)
		s->retired = s->pol;
	else
		policy_free(s->pol);
	s->pol = p;
	s->inputs_changed = 1;
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

static void on_bind_commit(void *);

/* On the session's thread: its input to --record-sessions' files. */
static void
log_session(struct sched *s)
{
	store_obj *const *objs[NSTORAGE];
	const char *const *nodes[NSTORAGE];
	size_t n[NSTORAGE];
	uint64_t t0 = util_usec();
	char now[32];
	int i;

	for (i = 0; i < NSTORAGE; i++) {
		objs[i] = s->captured[i].objs;
		nodes[i] = s->captured[i].assumed;
		n[i] = s->captured[i].n;
	}
	util_now(now);
	sessionlog_write(s->slog, objs, n, nodes, NSTORAGE,
	    s->run_pol->files_json,
	    s->stats.cycles + 1, now);
	s->slog_us += util_usec() - t0;
}

/*
 * On a worker thread: the snapshot (from the captured versions, through
 * the cache, which only this thread touches while a session is in
 * flight), the cache sweep, the actions and the close.
 */
static void
run_session(uv_work_t *w)
{
	struct sched *s = w->data;
	struct sched_source src = { source_list, s, source_tree, 0, 1 };
	uint64_t t0 = util_usec(), t1;
	int i;

	if (s->to_free != NULL) {
		session_free(s->to_free);
		free(s->to_free);
		s->to_free = NULL;
	}
	/* In name order, as the cache lists them, but pods: the order of
	   tasks comes from TaskOrder and its fallbacks (creation, name),
	   and sorting 100,000 keys a cycle is not free. */
	for (i = 0; i < NSTORAGE; i++)
		if (strcmp(storage[i][0], "pods") != 0)
			client_sort(s->captured[i].objs, s->captured[i].n);
	session_open(s->running, s->run_pol, &src);
	s->running->on_commit = on_bind_commit;
	s->running->commit_arg = s;
	s->woken_at = 0;
	sweep(s);
	t1 = util_usec();
	s->t_snap = t1 - t0;
	session_run(s->running);
	decide_outcome(s, s->running);
	decide_pending(s, s->running);
	explain_record(s->explain, s->running, s->stats.cycles + 1);
	if (s->slog != NULL)
		log_session(s);
	s->t_run = util_usec() - t1;
}

/*
 * One slice of the outcome: binds, then the pending pods' reasons, then
 * PodGroup and Queue status, until DRAIN_US have passed; the next slice
 * in the next loop turn.
 */
static void
drain(uv_idle_t *h)
{
	struct sched *s = h->data;
	struct session *ss = s->running;
	uint64_t t0 = util_usec();
	int n = 0;

	for (;;) {
		int *at = &s->drain_at, count = 0;

		/* While the session runs, only its published binds (the
		   rest is the thread's until it is back). */
		switch (s->drain_step) {
		case 0: count = s->session_back ? ss->nbinds :
		    __atomic_load_n(&ss->nbinds_pub, __ATOMIC_ACQUIRE); break;
		case 1: count = s->ntells; break;
		case 2: count = s->out.npgs; break;
		case 3: count = s->out.nqueues; break;
		}
		if (s->drain_step == 4)
			break;
		if (*at == count && s->drain_step == 0 && !s->session_back) {
			/* Written all published: wait for more. */
			uv_idle_stop(&s->drain_idle);
			return;
		}
		if (*at == count) {
			if (s->drain_step == 0)
				s->t_binds = util_usec() - s->t_done;
			s->drain_step++;
			*at = 0;
			continue;
		}
		if ((++n & 31) == 0 && util_usec() - t0 > DRAIN_US) {
			uv_idle_start(&s->drain_idle, drain);
			return;
		}
		switch (s->drain_step) {
		case 0: write_bind(s, &ss->binds[*at]); break;
		case 1: write_tell(s, &s->tells[*at]); break;
		case 2: write_pg(s, &s->out.pgs[*at]); break;
		case 3: write_queue(s, &s->out.queues[*at]); break;
		}
		(*at)++;
	}
	uv_idle_stop(&s->drain_idle);
	/* The last answers finish it (on_status_written). */
	if (s->writes_inflight > 0) {
		s->finish_waiting = 1;
		return;
	}
	session_finish(s);
}

/* Back on the loop: write what the session decided, slice by slice. */
static void
session_done(uv_work_t *w, int status)
{
	struct sched *s = w->data;

	(void)status;
	s->t_done = util_usec();
	s->session_back = 1;
	s->streamed = s->drain_at;	/* binds stay at step 0 until now */
	write_evictions(s, s->running);
	write_ungates(s, s->running);
	drain(&s->drain_idle);
}

/* A statement committed binds on the session's thread. */
static void
on_bind_commit(void *arg)
{
	struct sched *s = arg;

	if (s->running->nbinds - s->woken_at < BIND_WAKE)
		return;
	s->woken_at = s->running->nbinds;
	uv_async_send(&s->bind_async);
}

static void
on_bind_async(uv_async_t *h)
{
	struct sched *s = h->data;

	if (s->running != NULL && !s->session_back)
		uv_idle_start(&s->drain_idle, drain);
}

static void
session_finish(struct sched *s)
{
	struct session *ss = s->running;
	uint64_t took = util_usec() - s->t_done;
	int i;

	/* Plugins that failed: a Warning on the root queue. */
	for (i = 0; i < ss->nevents; i++) {
		struct s_queue *root = hmap_get(ss->queue_index, "root");

		if (root != NULL && root->obj != NULL)
			record_event(s, root->obj, "Warning", "PluginFailed",
			    ss->events[i]);
	}
	if (ss->nbinds > 0 || util_usec() - s->t_open > 100000)
		log_info("scheduler: cycle: %d nodes, %d jobs, %d tasks: "
		    "capture %llu ms, snapshot %llu ms, actions %llu ms (Lua "
		    "%llu ms), %d binds (%d during it) %llu ms after it, "
		    "status %llu ms", ss->nnodes,
		    ss->njobs, ss->ntasks,
		    (unsigned long long)s->t_capture / 1000,
		    (unsigned long long)s->t_snap / 1000,
		    (unsigned long long)s->t_run / 1000,
		    (unsigned long long)ss->lua_us / 1000, ss->nbinds,
		    s->streamed, (unsigned long long)s->t_binds / 1000,
		    (unsigned long long)(took - s->t_binds) / 1000);
	s->wake_at_ms = ss->wake_after > 0 ? util_usec() / 1000 +
	    (uint64_t)(ss->wake_after * 1000) : 0;
	s->stats.plugin_failures += (uint64_t)ss->nevents;
	s->stats.lua_us += ss->lua_us;
	s->stats.unschedulable += (uint64_t)s->npending;
	/* What did not fit may fit now; what failed is taken again. */
	if (ss->nbinds > 0)
		s->pending_work = 1;
	outcome_free(&s->out);
	memset(&s->out, 0, sizeof s->out);
	/* The versions lazily listed tasks parse from (task_obj) stay
	   referenced until the outcome is written. */
	release(s);
	s->ntells = 0;
	s->pod_events = 0;
	/* Freeing 100,000 tasks takes a while: the next session's thread
	   does it. */
	if (s->to_free != NULL) {
		session_free(s->to_free);
		free(s->to_free);
	}
	s->to_free = ss;
	s->running = NULL;
	s->run_pol = NULL;
	policy_free(s->retired);
	s->retired = NULL;
	sweep_events(s);
	s->stats.cycles++;
	s->stats.last_cycle_us = s->t_capture + s->t_snap + s->t_run;
	s->stats.cycle_us += s->stats.last_cycle_us;
	if (ss->nbinds > 0)
		s->stats.last_bind_cycle_us = s->stats.last_cycle_us;
	if (s->pending_work)
		uv_timer_start(&s->soon, on_soon, SOON_MS, 0);
}

static void
cycle(struct sched *s)
{
	if (s->running != NULL) {
		/* The last session is still running or being written. */
		s->pending_work = 1;
		return;
	}
	s->pending_work = 0;
	if (s->pol == NULL)
		return;
	if (!s->inputs_changed && time(NULL) - s->last_cycle < IDLE_CYCLE_S &&
	    (s->wake_at_ms == 0 || util_usec() / 1000 < s->wake_at_ms)) {
		/* Nothing changed since the last session: the same outcome. */
		s->stats.cycles++;
		s->stats.skipped++;
		return;
	}
	s->inputs_changed = 0;
	s->last_cycle = time(NULL);
	s->running = xcalloc(1, sizeof *s->running);
	s->run_pol = s->pol;
	s->t_open = util_usec();
	s->drain_step = s->drain_at = 0;
	s->session_back = 0;
	capture(s);
	s->t_capture = util_usec() - s->t_open;
	s->work.data = s;
	if (uv_queue_work(s->loop, &s->work, run_session, session_done) != 0) {
		run_session(&s->work);
		session_done(&s->work, 0);
	}
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
	int i;

	assume_event(s->assumed, ev);
	for (i = 0; i < NSTORAGE && !s->inputs_changed; i++)
		if (strcmp(o->res, storage[i][1]) == 0)
			s->inputs_changed = 1;
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
	    "# TYPE volray_scheduler_cycles_skipped_total counter\n"
	    "volray_scheduler_cycles_skipped_total %llu\n"
	    "# TYPE volray_scheduler_binds_total counter\n"
	    "volray_scheduler_binds_total %llu\n"
	    "# TYPE volray_scheduler_evictions_total counter\n"
	    "volray_scheduler_evictions_total %llu\n"
	    "# TYPE volray_scheduler_gates_removed_total counter\n"
	    "volray_scheduler_gates_removed_total %llu\n"
	    "# TYPE volray_scheduler_plugin_failures_total counter\n"
	    "volray_scheduler_plugin_failures_total %llu\n"
	    "# TYPE volray_scheduler_last_cycle_seconds gauge\n"
	    "volray_scheduler_last_cycle_seconds %.6f\n"
	    "# TYPE volray_scheduler_last_binding_cycle_seconds gauge\n"
	    "volray_scheduler_last_binding_cycle_seconds %.6f\n"
	    "# TYPE volray_scheduler_cycle_seconds_total counter\n"
	    "volray_scheduler_cycle_seconds_total %.6f\n"
	    "# TYPE volray_scheduler_lua_seconds_total counter\n"
	    "volray_scheduler_lua_seconds_total %.6f\n"
	    "# TYPE volray_scheduler_explain_seconds_total counter\n"
	    "volray_scheduler_explain_seconds_total %.6f\n",
	    (unsigned long long)s->stats.cycles,
	    (unsigned long long)s->stats.skipped,
	    (unsigned long long)s->stats.binds,
	    (unsigned long long)s->stats.evictions,
	    (unsigned long long)s->stats.ungates,
	    (unsigned long long)s->stats.plugin_failures,
	    (double)s->stats.last_cycle_us / 1e6,
	    (double)s->stats.last_bind_cycle_us / 1e6,
	    (double)s->stats.cycle_us / 1e6, (double)s->stats.lua_us / 1e6,
	    (double)explain_record_us(s->explain) / 1e6);
	if (s->slog != NULL)
		fprintf(f, "# TYPE volray_scheduler_sessions_recorded_total "
		    "counter\nvolray_scheduler_sessions_recorded_total %llu\n"
		    "# TYPE volray_scheduler_record_seconds_total counter\n"
		    "volray_scheduler_record_seconds_total %.6f\n",
		    (unsigned long long)sessionlog_written(s->slog),
		    (double)s->slog_us / 1e6);
}

int
sched_set_record_sessions(sched *s, const char *dir, int keep, char **cause)
{
	if (s->running != NULL)
		return 0;	/* at start only */
	sessionlog_free(s->slog);
	s->slog = NULL;
	if (dir == NULL)
		return 0;
	return (s->slog = sessionlog_new(dir, keep, cause)) != NULL ? 0 : -1;
}

void
sched_set_explain_sessions(sched *s, int n)
{
	if (s->running != NULL)
		return;	/* at start only: the thread may be recording */
	explain_free(s->explain);
	s->explain = explain_new(n);
}

cJSON *
sched_explain(sched *s, const char *kind, const char *key)
{
	if (s == NULL || s->explain == NULL)
		return NULL;
	return strcmp(kind, "queues") == 0 ? explain_queue(s->explain, key) :
	    explain_job(s->explain, key);
}

int
sched_explain_on(const sched *s)
{
	return s != NULL && s->explain != NULL;
}

cJSON *
sched_explain_answer(sched *s, const char *kind, const char *key)
{
	int queue = strcmp(kind, "queues") == 0;
	cJSON *o;

	if (s == NULL)
		return status_error(503, "ServiceUnavailable", "this scheduler "
		    "does not lead (it stands by)");
	if (!sched_explain_on(s))
		return status_error(503, "ServiceUnavailable", "the scheduler "
		    "keeps no sessions (--explain-sessions=0)");
	if ((o = sched_explain(s, kind, key)) == NULL)
		return status_error(404, "NotFound", "%s %s: no record in the "
		    "scheduler's last sessions: %s", queue ? "queue" : "job",
		    key, queue ? "no job waits in it" : "it does not wait "
		    "(bound, running or finished) or has not been scheduled "
		    "yet");
	cJSON_AddStringToObject(o, "kind", queue ? "QueueExplanation" :
	    "JobExplanation");
	cJSON_AddStringToObject(o, "apiVersion", "volray.io/v1");
	return o;
}

sched *
sched_new(uv_loop_t *loop, client *c, luahost *lua)
{
	struct sched *s = xcalloc(1, sizeof *s);

	s->cache = hmap_new();
	s->assumed = assume_new();
	s->events = hmap_new();
	s->explain = explain_new(SCHED_EXPLAIN_SESSIONS);
	s->loop = loop;
	s->c = c;
	s->rec = recorder_new(c, "volcano");
	s->lua = lua;
	uv_timer_init(loop, &s->timer);
	uv_timer_init(loop, &s->soon);
	uv_idle_init(loop, &s->drain_idle);
	uv_async_init(loop, &s->bind_async, on_bind_async);
	uv_unref((uv_handle_t *)&s->bind_async);
	s->timer.data = s->soon.data = s->drain_idle.data = s->bind_async.data =
	    s;
	client_subscribe(c, on_event, s);
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
