/*
 * The node lifecycle controller. Every Node is watched, served by a
 * runtime or not. A sign of life is a change of the node's Lease in
 * kube-node-lease (spec.renewTime) or of its Ready condition's
 * lastHeartbeatTime; each one re-arms the node's timer on a timer wheel
 * for the grace period, measured on this process's clock as Kubernetes'
 * controller does (no comparison of timestamps written by others). When
 * the timer fires, Ready, MemoryPressure, DiskPressure and PIDPressure
 * become Unknown ("Kubelet stopped posting node status.", or "never
 * posted" for a condition that was not there), and the check repeats
 * every monitor period until the node is heard from again. A node first
 * seen (at start, or when created) gets the whole grace period.
 *
 * Each Node event reconciles the taints the controller owns: NoSchedule
 * for a condition (Ready False or Unknown, memory, disk or PID pressure,
 * network unavailable) and for spec.unschedulable; NoExecute not-ready or
 * unreachable following Ready (the two swap, and both go when it is
 * True). Taints it adds carry timeAdded; taints of other keys are left
 * alone.
 *
 * The taint manager's half: pods are indexed by node name from the pod
 * events. When a node's NoExecute taints change, each of its pods is
 * looked at: a taint no toleration matches evicts it at once; otherwise
 * it is evicted after the smallest tolerationSeconds of the tolerations
 * used, counted from when the controller first saw it must go; a
 * toleration without tolerationSeconds keeps it forever. An eviction is
 * the client's (graceful on a node a runtime serves), with an Event, as
 * the taint manager does. Events go through two recorders
 * (client/recorder.h), one per component the controller writes as:
 * node-controller (NodeNotReady) and taint-eviction-controller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "client/recorder.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/lifecycle.h"
#include "node/wheel.h"

#define LEASE_NS	"kube-node-lease"
#define LEASE_RES	"leases.coordination.k8s.io"
#define MONITOR_MS	5000		/* re-check of a node still silent */
#define T_NOT_READY	"node.kubernetes.io/not-ready"
#define T_UNREACHABLE	"node.kubernetes.io/unreachable"
#define T_UNSCHEDULABLE	"node.kubernetes.io/unschedulable"
#define MAX_WANT	16

struct lifecycle;

/* A watched Node. */
struct lc_node {
	struct lifecycle *lc;
	char *name;
	char renew[48];			/* the Lease's renewTime last seen */
	char heartbeat[48];		/* Ready's lastHeartbeatTime last seen */
	wheel_timer stale;		/* due when the grace runs out */
	cJSON *noexec;			/* its NoExecute taints, or NULL */
};

/* The pods bound to one node name (whether that Node exists or not). */
struct lc_bucket {
	char *node;
	hmap *pods;			/* uid -> lc_pod */
};

/* A pod bound to a node; its timer is armed while an eviction waits. */
struct lc_pod {
	struct lifecycle *lc;
	struct lc_bucket *b;
	wheel_timer evict;
	uint64_t since;			/* loop ms it was first due to go */
	int scheduled;
	int evicting;			/* its eviction is on its way */
	char *ns, *name;		/* inside the same allocation */
	char uid[];
};

struct lifecycle {
	uv_loop_t *loop;
	client *c;
	recorder *node_events;		/* as node-controller */
	recorder *evict_events;		/* as taint-eviction-controller */
	wheel *wheel;
	uint64_t grace_ms;
	hmap *nodes;			/* name -> lc_node */
	hmap *buckets;			/* node name -> lc_bucket */
	int writing;			/* Node writes on their way */
	int dying;			/* freed: the last answer frees it */
};

/*
 * A Node write on its way (the loop does not wait for a remote API's
 * answer): what it is, for the log, and for a status write whether the
 * node was Ready, for the NodeNotReady Event once it went through.
 */
struct lc_write {
	struct lifecycle *lc;
	const char *what;		/* "status" or "taints" */
	int was_ready;
	char *uid;
	char name[];
};

/* The condition taints: which status of which condition means which key. */
static const struct {
	const char *type, *status, *key;
} cond_taints[] = {
	{ "Ready", "False", T_NOT_READY },
	{ "Ready", "Unknown", T_UNREACHABLE },
	{ "MemoryPressure", "True", "node.kubernetes.io/memory-pressure" },
	{ "DiskPressure", "True", "node.kubernetes.io/disk-pressure" },
	{ "PIDPressure", "True", "node.kubernetes.io/pid-pressure" },
	{ "NetworkUnavailable", "True",
	    "node.kubernetes.io/network-unavailable" },
};

#define NCOND_TAINTS (sizeof cond_taints / sizeof cond_taints[0])

static int
streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static cJSON *
find_condition(const cJSON *conds, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, conds)
		if (streq(json_str(c, "type"), type))
			return c;
	return NULL;
}

static void
log_result(const char *what, const char *name, struct reg_result *res)
{
	if (res->code >= 300 && res->code != 404 && res->code != 409)
		log_warn("node lifecycle: %s %s: code %d", what, name,
		    res->code);
	cJSON_Delete(res->body);
}

static void record_event(recorder *, const char *, const char *,
    const char *, const char *, const char *, const char *);

/* A Node write's answer. */
static void
node_written(void *arg, struct reg_result *res)
{
	struct lc_write *w = arg;
	struct lifecycle *lc = w->lc;
	char *msg;

	if (!lc->dying && res->code < 300 && strcmp(w->what, "status") == 0) {
		log_info("node %s: no Lease renewal for %llu ms: Unknown",
		    w->name, (unsigned long long)lc->grace_ms);
		if (w->was_ready) {
			msg = util_printf("Node %s status is now: "
			    "NodeNotReady", w->name);
			record_event(lc->node_events, "Node", NULL, w->name,
			    w->uid, "NodeNotReady", msg);
			free(msg);
		}
	} else if (res->code < 300)
		log_debug("node %s: controller taints reconciled", w->name);
	log_result(w->what, w->name, res);
	free(w->uid);
	free(w);
	if (--lc->writing == 0 && lc->dying)
		free(lc);
}

/* Update Node name to t (taken) without waiting; uid is taken. */
static void
write_node(struct lifecycle *lc, const char *what, const char *name,
    cJSON *t, const struct reg_opts *opts, int was_ready, char *uid)
{
	const resource *r = resource_find("", "v1", "nodes");
	size_t len = strlen(name) + 1;
	struct lc_write *w = xmalloc(sizeof *w + len);

	w->lc = lc;
	w->what = what;
	w->was_ready = was_ready;
	w->uid = uid;
	memcpy(w->name, name, len);
	lc->writing++;
	client_update_async(lc->c, r, "", w->name, t, opts, node_written, w);
}

/* An Event (Normal) about a v1 object, through one of the recorders. */
static void
record_event(recorder *rec, const char *kind, const char *ns,
    const char *name, const char *uid, const char *reason,
    const char *message)
{
	struct recorder_obj o = { "v1", kind, ns, name, uid, NULL };

	recorder_event(rec, &o, "Normal", reason, message, NULL);
}

static void on_stale(wheel_timer *);

/* The node was heard from: it has the whole grace period again. */
static void
probe(struct lc_node *n)
{
	wheel_add(n->lc->wheel, &n->stale, n->lc->grace_ms, on_stale, n);
}

/*
 * The grace period ran out: the kubelet's conditions become Unknown (a
 * write only when one is not Unknown yet), and the check comes back
 * every monitor period while the node stays silent.
 */
static void
mark_unknown(struct lifecycle *lc, struct lc_node *n)
{
	static const char *const types[] = { "Ready", "MemoryPressure",
	    "DiskPressure", "PIDPressure" };
	const store_obj *o = client_get(lc->c, "nodes", "", n->name);
	struct reg_opts opts;
	cJSON *t, *st, *conds, *c;
	const char *created;
	char now[32], *uid;
	int changed = 0, was_ready;
	size_t i;

	if (o == NULL)
		return;
	t = store_obj_tree(o);
	uid = xstrdup(o->uid);
	util_now(now);
	created = json_str(t, "metadata.creationTimestamp");
	st = json_obj(t, "status");
	conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	if (!cJSON_IsArray(conds)) {
		json_del(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	was_ready = streq(json_str(find_condition(conds, "Ready"), "status"),
	    "True");
	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		if ((c = find_condition(conds, types[i])) == NULL) {
			c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "type", types[i]);
			cJSON_AddStringToObject(c, "status", "Unknown");
			cJSON_AddStringToObject(c, "lastHeartbeatTime",
			    created ? created : now);
			cJSON_AddStringToObject(c, "lastTransitionTime", now);
			cJSON_AddStringToObject(c, "reason",
			    "NodeStatusNeverUpdated");
			cJSON_AddStringToObject(c, "message",
			    "Kubelet never posted node status.");
			cJSON_AddItemToArray(conds, c);
			changed = 1;
		} else if (!streq(json_str(c, "status"), "Unknown")) {
			json_set_str(c, "status", "Unknown");
			json_set_str(c, "reason", "NodeStatusUnknown");
			json_set_str(c, "message",
			    "Kubelet stopped posting node status.");
			json_set_str(c, "lastTransitionTime", now);
			changed = 1;
		}
	}
	if (!changed) {
		cJSON_Delete(t);
		free(uid);
		return;
	}
	memset(&opts, 0, sizeof opts);
	opts.subresource = "status";
	write_node(lc, "status", n->name, t, &opts, was_ready, uid);
}

static void
on_stale(wheel_timer *tm)
{
	struct lc_node *n = tm->data;
	struct lifecycle *lc = n->lc;

	mark_unknown(lc, n);
	if (hmap_get(lc->nodes, n->name) == n)
		wheel_add(lc->wheel, &n->stale, lc->grace_ms < MONITOR_MS ?
		    lc->grace_ms : MONITOR_MS, on_stale, n);
}

/* Whether the controller owns a taint of this key and effect. */
static int
owned_taint(const char *key, const char *effect, int ready_known)
{
	size_t i;

	if (key == NULL || effect == NULL)
		return 0;
	if (strcmp(effect, "NoExecute") == 0)
		return ready_known && (strcmp(key, T_NOT_READY) == 0 ||
		    strcmp(key, T_UNREACHABLE) == 0);
	if (strcmp(effect, "NoSchedule") != 0)
		return 0;
	if (strcmp(key, T_UNSCHEDULABLE) == 0)
		return 1;
	for (i = 0; i < NCOND_TAINTS; i++)
		if (strcmp(key, cond_taints[i].key) == 0)
			return 1;
	return 0;
}

struct want {
	const char *key, *effect;
	int have;
};

static void
want_add(struct want *w, int *nw, const char *key, const char *effect)
{
	if (*nw < MAX_WANT) {
		w[*nw].key = key;
		w[*nw].effect = effect;
		w[(*nw)++].have = 0;
	}
}

/*
 * The taints the node's conditions and spec.unschedulable call for, in
 * place of the owned ones it has; other taints are kept as they are.
 * Writes the Node when something changed. Takes t (the stored Node).
 */
static void
reconcile_taints(struct lifecycle *lc, const char *name, cJSON *t)
{
	const cJSON *conds = json_at(t, "status.conditions"), *c, *it;
	struct want w[MAX_WANT];
	cJSON *nt, *spec, *u, *add;
	const char *ready;
	char now[32];
	int nw = 0, changed = 0, ready_known, i;
	size_t k;

	ready = json_str(find_condition(conds, "Ready"), "status");
	ready_known = ready != NULL;
	cJSON_ArrayForEach(c, conds)
		for (k = 0; k < NCOND_TAINTS; k++)
			if (streq(json_str(c, "type"), cond_taints[k].type) &&
			    streq(json_str(c, "status"), cond_taints[k].status))
				want_add(w, &nw, cond_taints[k].key,
				    "NoSchedule");
	if (streq(ready, "False"))
		want_add(w, &nw, T_NOT_READY, "NoExecute");
	else if (streq(ready, "Unknown"))
		want_add(w, &nw, T_UNREACHABLE, "NoExecute");
	spec = json_obj(t, "spec");
	u = cJSON_GetObjectItemCaseSensitive(spec, "unschedulable");
	if (cJSON_IsTrue(u))
		want_add(w, &nw, T_UNSCHEDULABLE, "NoSchedule");
	nt = cJSON_CreateArray();
	cJSON_ArrayForEach(it, json_at(spec, "taints")) {
		const char *key = json_str(it, "key");
		const char *eff = json_str(it, "effect");

		if (owned_taint(key, eff, ready_known)) {
			for (i = 0; i < nw; i++)
				if (strcmp(w[i].key, key) == 0 &&
				    strcmp(w[i].effect, eff) == 0)
					break;
			if (i == nw || w[i].have) {
				changed = 1;	/* not wanted, or twice */
				continue;
			}
			w[i].have = 1;
		}
		cJSON_AddItemToArray(nt, cJSON_Duplicate(it, 1));
	}
	util_now(now);
	for (i = 0; i < nw; i++) {
		if (w[i].have)
			continue;
		add = cJSON_CreateObject();
		cJSON_AddStringToObject(add, "key", w[i].key);
		cJSON_AddStringToObject(add, "effect", w[i].effect);
		cJSON_AddStringToObject(add, "timeAdded", now);
		cJSON_AddItemToArray(nt, add);
		changed = 1;
	}
	if (!changed) {
		cJSON_Delete(nt);
		cJSON_Delete(t);
		return;
	}
	if (cJSON_GetArraySize(nt) == 0) {
		cJSON_Delete(nt);
		json_del(spec, "taints");
	} else
		json_set(spec, "taints", nt);
	write_node(lc, "taints", name, t, NULL, 0, NULL);
}

/* Whether a toleration matches a taint (Equal by default, or Exists). */
static int
tolerates(const cJSON *tol, const cJSON *taint)
{
	const char *eff = json_str(tol, "effect"), *key = json_str(tol, "key");
	const char *op = json_str(tol, "operator");
	const char *v = json_str(tol, "value"), *tv = json_str(taint, "value");

	if (eff != NULL && *eff != '\0' && !streq(eff, json_str(taint,
	    "effect")))
		return 0;
	if (key != NULL && *key != '\0' && !streq(key, json_str(taint, "key")))
		return 0;
	if (op == NULL || *op == '\0' || strcmp(op, "Equal") == 0)
		return strcmp(v ? v : "", tv ? tv : "") == 0;
	return strcmp(op, "Exists") == 0;
}

/*
 * How long a pod with these tolerations may stay under these NoExecute
 * taints: 0 when one is not tolerated, -1 forever, else the smallest
 * tolerationSeconds among the first toleration matching each taint.
 */
static int64_t
tolerated_ms(const cJSON *tols, const cJSON *taints)
{
	const cJSON *taint, *tol, *s;
	int64_t min = -1, ms;

	cJSON_ArrayForEach(taint, taints) {
		cJSON_ArrayForEach(tol, tols)
			if (tolerates(tol, taint))
				break;
		if (tol == NULL)
			return 0;
		s = cJSON_GetObjectItemCaseSensitive(tol, "tolerationSeconds");
		if (!cJSON_IsNumber(s))
			continue;
		if (s->valuedouble <= 0)
			return 0;
		ms = (int64_t)s->valuedouble * 1000;
		if (min < 0 || ms < min)
			min = ms;
	}
	return min;
}

static void
pod_cancel(struct lc_pod *p)
{
	wheel_cancel(p->lc->wheel, &p->evict);
	p->scheduled = 0;
}

/*
 * An eviction on its way (the loop does not wait for a remote API's
 * answer): the pod's names, since the pod may be forgotten before the
 * answer comes; its Event is recorded once the eviction went through.
 */
struct lc_evict {
	struct lifecycle *lc;
	char *node, *ns, *name;		/* inside the same allocation */
	char uid[];
};

static void
pod_evicted(void *arg, struct reg_result *res)
{
	struct lc_evict *e = arg;
	struct lifecycle *lc = e->lc;
	struct lc_bucket *b;
	struct lc_pod *p;
	char *msg;

	if (!lc->dying && (b = hmap_get(lc->buckets, e->node)) != NULL &&
	    (p = hmap_get(b->pods, e->uid)) != NULL)
		p->evicting = 0;
	if (!lc->dying && res->code < 300) {
		log_info("node %s: evicting pod %s/%s (NoExecute taint)",
		    e->node, e->ns, e->name);
		msg = util_printf("Marking for deletion Pod %s/%s", e->ns,
		    e->name);
		record_event(lc->evict_events, "Pod", e->ns, e->name, e->uid,
		    "TaintManagerEviction", msg);
		free(msg);
	}
	log_result("evicting pod", e->name, res);
	free(e);
	if (--lc->writing == 0 && lc->dying)
		free(lc);
}

/* Evict the pod as the taint manager does, with an Event; one eviction
   of a pod on its way at a time. */
static void
pod_evict(struct lc_pod *p)
{
	struct lifecycle *lc = p->lc;
	size_t lu = strlen(p->uid) + 1, lnode = strlen(p->b->node) + 1;
	size_t lns = strlen(p->ns) + 1, lname = strlen(p->name) + 1;
	struct lc_evict *e;
	struct reg_opts o;

	if (p->evicting)
		return;
	e = xmalloc(sizeof *e + lu + lnode + lns + lname);
	e->lc = lc;
	memcpy(e->uid, p->uid, lu);
	e->node = memcpy(e->uid + lu, p->b->node, lnode);
	e->ns = memcpy(e->node + lnode, p->ns, lns);
	e->name = memcpy(e->ns + lns, p->name, lname);
	memset(&o, 0, sizeof o);
	o.precond_uid = e->uid;
	p->evicting = 1;
	lc->writing++;
	client_evict_async(lc->c, e->ns, e->name, &o, pod_evicted, e);
}

static void
on_evict(wheel_timer *tm)
{
	struct lc_pod *p = tm->data;

	p->scheduled = 0;
	pod_evict(p);
}

/* Evict the pod now, later, or never, per the node's NoExecute taints. */
static void
pod_process(struct lc_node *n, struct lc_pod *p)
{
	struct lifecycle *lc = p->lc;
	const store_obj *o = client_get(lc->c, "pods", p->ns, p->name);
	uint64_t now = uv_now(lc->loop), due;
	int64_t ms;
	cJSON *t;

	if (n == NULL || n->noexec == NULL || o == NULL ||
	    strcmp(o->uid, p->uid) != 0 || o->deleting) {
		pod_cancel(p);
		return;
	}
	t = store_obj_tree(o);
	ms = tolerated_ms(json_at(t, "spec.tolerations"), n->noexec);
	cJSON_Delete(t);
	if (ms < 0) {
		pod_cancel(p);
		return;
	}
	if (!p->scheduled) {
		p->since = now;
		p->scheduled = 1;
	}
	due = p->since + (uint64_t)ms;
	if (due <= now) {
		pod_cancel(p);
		pod_evict(p);
		return;
	}
	wheel_add(lc->wheel, &p->evict, due - now, on_evict, p);
}

static struct lc_pod *
pod_new(struct lifecycle *lc, const store_obj *o)
{
	struct lc_bucket *b = hmap_get(lc->buckets, o->node_name);
	size_t lu = strlen(o->uid) + 1, ln = strlen(o->ns) + 1;
	struct lc_pod *p = xcalloc(1, sizeof *p + lu + ln +
	    strlen(o->name) + 1);

	if (b == NULL) {
		b = xcalloc(1, sizeof *b);
		b->pods = hmap_new();
		b->node = xstrdup(o->node_name);
		hmap_put(lc->buckets, b->node, b);
	}
	p->lc = lc;
	p->b = b;
	memcpy(p->uid, o->uid, lu);
	p->ns = p->uid + lu;
	memcpy(p->ns, o->ns, ln);
	p->name = p->ns + ln;
	strcpy(p->name, o->name);
	hmap_put(b->pods, p->uid, p);
	return p;
}

static void
pod_free(struct lc_pod *p)
{
	struct lc_bucket *b = p->b;
	struct lifecycle *lc = p->lc;

	pod_cancel(p);
	hmap_del(b->pods, p->uid);
	free(p);
	if (hmap_count(b->pods) == 0) {
		hmap_del(lc->buckets, b->node);
		hmap_free(b->pods);
		free(b->node);
		free(b);
	}
}

static int
collect(const char *key, void *value, void *arg)
{
	void ***end = arg;

	(void)key;
	*(*end)++ = value;
	return 0;
}

/* The node's NoExecute taints changed: look at each of its pods again. */
static void
noexec_sync(struct lifecycle *lc, struct lc_node *n)
{
	const store_obj *o = client_get(lc->c, "nodes", "", n->name);
	struct lc_bucket *b;
	const cJSON *it;
	cJSON *t, *nx = NULL, *one;
	void **pods, **end;
	size_t count, i;

	if (o == NULL)
		return;
	t = store_obj_tree(o);
	cJSON_ArrayForEach(it, json_at(t, "spec.taints")) {
		if (!streq(json_str(it, "effect"), "NoExecute"))
			continue;
		if (nx == NULL)
			nx = cJSON_CreateArray();
		one = cJSON_CreateObject();
		cJSON_AddStringToObject(one, "key", json_str(it, "key") ?
		    json_str(it, "key") : "");
		if (json_str(it, "value") != NULL)
			cJSON_AddStringToObject(one, "value",
			    json_str(it, "value"));
		cJSON_AddStringToObject(one, "effect", "NoExecute");
		cJSON_AddItemToArray(nx, one);
	}
	cJSON_Delete(t);
	if (json_equal(nx, n->noexec)) {
		cJSON_Delete(nx);
		return;
	}
	cJSON_Delete(n->noexec);
	n->noexec = nx;
	if ((b = hmap_get(lc->buckets, n->name)) == NULL)
		return;
	/* Evictions write; walk a copy of the bucket. */
	count = hmap_count(b->pods);
	pods = xcalloc(count + 1, sizeof *pods);
	end = pods;
	hmap_each(b->pods, collect, &end);
	for (i = 0; i < count; i++)
		pod_process(n, pods[i]);
	free(pods);
}

static struct lc_node *
node_new(struct lifecycle *lc, const char *name)
{
	struct lc_node *n = xcalloc(1, sizeof *n);

	n->name = xstrdup(name);
	n->lc = lc;
	hmap_put(lc->nodes, n->name, n);
	probe(n);
	return n;
}

static void
node_free(struct lifecycle *lc, struct lc_node *n)
{
	struct lc_bucket *b = hmap_get(lc->buckets, n->name);

	wheel_cancel(lc->wheel, &n->stale);
	hmap_del(lc->nodes, n->name);
	cJSON_Delete(n->noexec);
	n->noexec = NULL;
	if (b != NULL) {
		/* Its pods stay indexed until they are deleted. */
		size_t count = hmap_count(b->pods), i;
		void **pods = xcalloc(count + 1, sizeof *pods), **end = pods;

		hmap_each(b->pods, collect, &end);
		for (i = 0; i < count; i++)
			pod_cancel(pods[i]);
		free(pods);
	}
	free(n->name);
	free(n);
}

/* A Node changed (or was first seen): heartbeat, taints, evictions. */
static void
node_sync(struct lifecycle *lc, struct lc_node *n)
{
	const store_obj *o = client_get(lc->c, "nodes", "", n->name);
	const char *hb;
	cJSON *t;

	if (o == NULL)
		return;
	t = store_obj_tree(o);
	hb = json_str(find_condition(json_at(t, "status.conditions"),
	    "Ready"), "lastHeartbeatTime");
	if (hb != NULL && strcmp(hb, n->heartbeat) != 0) {
		snprintf(n->heartbeat, sizeof n->heartbeat, "%s", hb);
		probe(n);
	}
	reconcile_taints(lc, n->name, t);
	noexec_sync(lc, n);
}

static void
lease_event(struct lifecycle *lc, const store_event *ev)
{
	struct lc_node *n = hmap_get(lc->nodes, ev->obj->name);
	const char *renew;
	cJSON *t;

	if (n == NULL || ev->type == STORE_DELETED)
		return;
	t = store_obj_tree(ev->obj);
	renew = json_str(t, "spec.renewTime");
	if (renew != NULL && strcmp(renew, n->renew) != 0) {
		snprintf(n->renew, sizeof n->renew, "%s", renew);
		probe(n);
	}
	cJSON_Delete(t);
}

static void
pod_event(struct lifecycle *lc, const store_event *ev)
{
	const store_obj *o = ev->obj;
	struct lc_bucket *b;
	struct lc_pod *p;
	struct lc_node *n;

	if (o->node_name[0] == '\0')
		return;
	b = hmap_get(lc->buckets, o->node_name);
	p = b != NULL ? hmap_get(b->pods, o->uid) : NULL;
	if (ev->type == STORE_DELETED) {
		if (p != NULL)
			pod_free(p);
		return;
	}
	if (p == NULL)
		p = pod_new(lc, o);
	n = hmap_get(lc->nodes, o->node_name);
	if (n != NULL && n->noexec != NULL)
		pod_process(n, p);
}

static void
on_event(void *arg, const store_event *ev)
{
	struct lifecycle *lc = arg;
	const char *res = ev->obj->res;
	struct lc_node *n;

	if (strcmp(res, "pods") == 0)
		pod_event(lc, ev);
	else if (strcmp(res, "nodes") == 0) {
		n = hmap_get(lc->nodes, ev->obj->name);
		if (ev->type == STORE_DELETED) {
			if (n != NULL)
				node_free(lc, n);
			return;
		}
		if (n == NULL)
			n = node_new(lc, ev->obj->name);
		node_sync(lc, n);
	} else if (strcmp(res, LEASE_RES) == 0 &&
	    strcmp(ev->obj->ns, LEASE_NS) == 0)
		lease_event(lc, ev);
}

lifecycle *
lifecycle_new(uv_loop_t *loop, client *c, struct wheel *w,
    uint64_t grace_ms)
{
	struct lifecycle *lc = xcalloc(1, sizeof *lc);

	lc->nodes = hmap_new();
	lc->buckets = hmap_new();
	lc->loop = loop;
	lc->c = c;
	lc->node_events = recorder_new(c, "node-controller");
	lc->evict_events = recorder_new(c, "taint-eviction-controller");
	lc->grace_ms = grace_ms > 0 ? grace_ms : LIFECYCLE_GRACE_MS;
	lc->wheel = w;
	client_subscribe(c, on_event, lc);
	return lc;
}

void
lifecycle_start(lifecycle *lc)
{
	store_obj *const *objs;
	size_t n, i;
	char **names;

	n = client_list(lc->c, "nodes", NULL, &objs);
	names = xcalloc(n + 1, sizeof *names);
	for (i = 0; i < n; i++) {
		names[i] = xstrdup(objs[i]->name);
		if (hmap_get(lc->nodes, names[i]) == NULL)
			node_new(lc, names[i]);
	}
	/* The renewals seen so far; the grace runs from now for every node. */
	n = client_list(lc->c, LEASE_RES, LEASE_NS, &objs);
	for (i = 0; i < n; i++) {
		struct lc_node *ln = hmap_get(lc->nodes, objs[i]->name);
		cJSON *t;

		if (ln == NULL)
			continue;
		t = store_obj_tree(objs[i]);
		if (json_str(t, "spec.renewTime") != NULL)
			snprintf(ln->renew, sizeof ln->renew, "%s",
			    json_str(t, "spec.renewTime"));
		cJSON_Delete(t);
	}
	n = client_list(lc->c, "pods", NULL, &objs);
	for (i = 0; i < n; i++)
		if (objs[i]->node_name[0] != '\0')
			pod_new(lc, objs[i]);
	n = hmap_count(lc->nodes);
	for (i = 0; names[i] != NULL; i++) {
		struct lc_node *ln = hmap_get(lc->nodes, names[i]);

		if (ln != NULL)
			node_sync(lc, ln);
		free(names[i]);
	}
	free(names);
	log_info("node lifecycle: %zu nodes watched, grace period %llu ms", n,
	    (unsigned long long)lc->grace_ms);
}

static int
free_node(const char *key, void *value, void *arg)
{
	struct lc_node *n = value;

	(void)key;
	(void)arg;
	cJSON_Delete(n->noexec);
	free(n->name);
	free(n);
	return 0;
}

static int
free_bucket(const char *key, void *value, void *arg)
{
	struct lc_bucket *b = value;
	void **pods, **end;
	size_t count = hmap_count(b->pods), i;

	(void)key;
	(void)arg;
	pods = xcalloc(count + 1, sizeof *pods);
	end = pods;
	hmap_each(b->pods, collect, &end);
	for (i = 0; i < count; i++)
		free(pods[i]);
	free(pods);
	hmap_free(b->pods);
	free(b->node);
	free(b);
	return 0;
}

void
lifecycle_free(lifecycle *lc)
{
	if (lc == NULL)
		return;
	hmap_each(lc->nodes, free_node, NULL);
	hmap_each(lc->buckets, free_bucket, NULL);
	hmap_free(lc->nodes);
	hmap_free(lc->buckets);
	recorder_free(lc->node_events);
	recorder_free(lc->evict_events);
	if (lc->writing > 0)
		lc->dying = 1;
	else
		free(lc);
}
