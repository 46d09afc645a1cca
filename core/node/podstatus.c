/*
 * The pod status a kubelet writes, built from the pod worker's state:
 * phase, the conditions Initialized, Ready, ContainersReady and
 * PodScheduled (each keeping its lastTransitionTime while its status
 * holds), host and pod IPs, startTime, qosClass, and a status per init and
 * main container: state waiting (reason, message), running (startedAt) or
 * terminated (exitCode, reason, startedAt, finishedAt), lastState, ready,
 * started, restartCount, image and a containerID. A pod refused at
 * admission has only phase Failed, reason and message.
 *
 * Status is not written as things happen: a change marks the pod dirty
 * (a list in the order they changed), and the node manager's flush slice
 * writes each dirty pod once per loop turn, and only when its status
 * differs from the stored one, without waiting for the answer (one write
 * of a pod in flight at a time; see flush_one). The last status of a pod
 * going away does not wait either: the pod's delete follows its answer
 * (podworker.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

static const char *
phase_name(enum pod_phase ph)
{
	switch (ph) {
	case POD_PENDING:
		return "Pending";
	case POD_RUNNING:
		return "Running";
	case POD_SUCCEEDED:
		return "Succeeded";
	default:
		return "Failed";
	}
}

static int
ctr_ready(const struct node_ctr *c)
{
	return c->state == CTR_RUNNING && c->probe_ready && c->startup_ok;
}

/* The lastTransitionTime of a condition: kept while its status holds. */
static const char *
transition(struct node_pod *p, const cJSON *old, const char *type,
    const char *status)
{
	const cJSON *it, *mine = cJSON_GetObjectItemCaseSensitive(p->conds, type);
	char now[32];

	if (mine != NULL && strcmp(json_str(mine, "status"), status) == 0)
		return json_str(mine, "time");
	/* First sight after a restart: the stored status still holds. */
	util_now(now);
	cJSON_ArrayForEach(it, json_at(old, "conditions")) {
		const char *t = json_str(it, "type"), *s = json_str(it, "status");

		if (t != NULL && s != NULL && strcmp(t, type) == 0 &&
		    strcmp(s, status) == 0 && json_str(it, "lastTransitionTime"))
			snprintf(now, sizeof now, "%s",
			    json_str(it, "lastTransitionTime"));
	}
	cJSON_DeleteItemFromObjectCaseSensitive(p->conds, type);
	mine = cJSON_AddObjectToObject(p->conds, type);
	cJSON_AddStringToObject((cJSON *)mine, "status", status);
	cJSON_AddStringToObject((cJSON *)mine, "time", now);
	return json_str(mine, "time");
}

static void
add_cond(cJSON *conds, struct node_pod *p, const cJSON *old, const char *type,
    int ok, const char *reason, const char *message)
{
	cJSON *c = cJSON_CreateObject();
	const char *status = ok ? "True" : "False";

	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddNullToObject(c, "lastProbeTime");
	cJSON_AddStringToObject(c, "lastTransitionTime",
	    transition(p, old, type, status));
	if (!ok && reason != NULL) {
		cJSON_AddStringToObject(c, "reason", reason);
		if (message != NULL && *message)
			cJSON_AddStringToObject(c, "message", message);
	}
	cJSON_AddItemToArray(conds, c);
}

/* "containers with unready status: [a b]" and the like. */
static void
names_of(const struct node_pod *p, int from, int to, int want_ready,
    char *out, size_t size, const char *what)
{
	size_t n;
	int i, first = 1;

	n = (size_t)snprintf(out, size, "containers with %s status: [", what);
	for (i = from; i < to && n < size; i++) {
		const struct node_ctr *c = &p->ctrs[i];
		int done = want_ready ? ctr_ready(c) : (c->state ==
		    CTR_TERMINATED && c->end.exit_code == 0);

		if (done)
			continue;
		n += (size_t)snprintf(out + n, size - n, "%s%s", first ? "" : " ",
		    c->name);
		first = 0;
	}
	if (n < size)
		snprintf(out + n, size - n, "]");
}

static cJSON *
end_state(const struct ctr_end *e, const char *cid)
{
	cJSON *t = cJSON_CreateObject();

	cJSON_AddNumberToObject(t, "exitCode", e->exit_code);
	cJSON_AddStringToObject(t, "reason", e->reason);
	if (e->message[0])
		cJSON_AddStringToObject(t, "message", e->message);
	cJSON_AddStringToObject(t, "startedAt", e->started);
	cJSON_AddStringToObject(t, "finishedAt", e->finished);
	if (cid != NULL)
		cJSON_AddStringToObject(t, "containerID", cid);
	return t;
}

static cJSON *
ctr_status(const struct node_pod *p, const struct node_ctr *c)
{
	cJSON *s = cJSON_CreateObject(), *state = cJSON_CreateObject(), *w;
	char cid[256], lastcid[256];

	snprintf(cid, sizeof cid, "volray://%s/%s/%d", p->uid, c->name,
	    c->instance);
	snprintf(lastcid, sizeof lastcid, "volray://%s/%s/%d", p->uid, c->name,
	    c->instance - 1);
	cJSON_AddStringToObject(s, "name", c->name);
	cJSON_AddStringToObject(s, "image", c->image);
	cJSON_AddStringToObject(s, "imageID", "");
	if (c->instance > 0 && !(c->state == CTR_WAITING && !c->has_last))
		cJSON_AddStringToObject(s, "containerID", c->state ==
		    CTR_WAITING ? lastcid : cid);
	cJSON_AddBoolToObject(s, "ready", !c->init && ctr_ready(c));
	cJSON_AddNumberToObject(s, "restartCount", c->restarts);
	cJSON_AddBoolToObject(s, "started", c->state == CTR_RUNNING &&
	    c->startup_ok);
	switch (c->state) {
	case CTR_WAITING:
		w = cJSON_AddObjectToObject(state, "waiting");
		cJSON_AddStringToObject(w, "reason", c->reason);
		if (c->message[0])
			cJSON_AddStringToObject(w, "message", c->message);
		break;
	case CTR_RUNNING:
		w = cJSON_AddObjectToObject(state, "running");
		cJSON_AddStringToObject(w, "startedAt", c->started);
		break;
	case CTR_TERMINATED:
		cJSON_AddItemToObject(state, "terminated", end_state(&c->end,
		    cid));
		break;
	}
	cJSON_AddItemToObject(s, "state", state);
	w = cJSON_AddObjectToObject(s, "lastState");
	if (c->has_last)
		cJSON_AddItemToObject(w, "terminated", end_state(&c->last,
		    lastcid));
	return s;
}

static cJSON *
pod_status(struct node_pod *p, const cJSON *old)
{
	cJSON *st = cJSON_CreateObject(), *conds, *ips, *arr;
	const cJSON *sched = NULL, *it;
	char msg[1024];
	int i, inited = p->next_init >= p->ninit, ready = 1;

	cJSON_AddStringToObject(st, "phase", phase_name(p->phase));
	if (p->start_time[0] == '\0') {
		/* Refused at admission: no containers ever ran. */
		if (p->reason[0])
			cJSON_AddStringToObject(st, "reason", p->reason);
		if (p->message[0])
			cJSON_AddStringToObject(st, "message", p->message);
		return st;
	}
	for (i = p->ninit; i < p->nctrs; i++)
		if (!ctr_ready(&p->ctrs[i]))
			ready = 0;
	if (p->phase != POD_RUNNING)
		ready = 0;
	conds = cJSON_AddArrayToObject(st, "conditions");
	names_of(p, 0, p->ninit, 0, msg, sizeof msg, "incomplete");
	add_cond(conds, p, old, "Initialized", inited,
	    "ContainersNotInitialized", msg);
	names_of(p, p->ninit, p->nctrs, 1, msg, sizeof msg, "unready");
	add_cond(conds, p, old, "Ready", ready, p->phase >= POD_SUCCEEDED ?
	    "PodCompleted" : "ContainersNotReady", p->phase >= POD_SUCCEEDED ?
	    "" : msg);
	add_cond(conds, p, old, "ContainersReady", ready, p->phase >=
	    POD_SUCCEEDED ? "PodCompleted" : "ContainersNotReady", p->phase >=
	    POD_SUCCEEDED ? "" : msg);
	/* PodScheduled is the scheduler's (or binding's): keep it as it is. */
	cJSON_ArrayForEach(it, json_at(old, "conditions"))
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    "PodScheduled") == 0)
			sched = it;
	if (sched != NULL)
		cJSON_AddItemToArray(conds, cJSON_Duplicate(sched, 1));
	else
		add_cond(conds, p, old, "PodScheduled", 1, NULL, NULL);
	cJSON_AddStringToObject(st, "hostIP", p->node->ip);
	ips = cJSON_AddArrayToObject(st, "hostIPs");
	cJSON_AddItemToArray(ips, cJSON_CreateObject());
	cJSON_AddStringToObject(cJSON_GetArrayItem(ips, 0), "ip", p->node->ip);
	cJSON_AddStringToObject(st, "podIP", p->ip);
	ips = cJSON_AddArrayToObject(st, "podIPs");
	cJSON_AddItemToArray(ips, cJSON_CreateObject());
	cJSON_AddStringToObject(cJSON_GetArrayItem(ips, 0), "ip", p->ip);
	cJSON_AddStringToObject(st, "startTime", p->start_time);
	if (p->ninit > 0) {
		arr = cJSON_AddArrayToObject(st, "initContainerStatuses");
		for (i = 0; i < p->ninit; i++)
			cJSON_AddItemToArray(arr, ctr_status(p, &p->ctrs[i]));
	}
	arr = cJSON_AddArrayToObject(st, "containerStatuses");
	for (i = p->ninit; i < p->nctrs; i++)
		cJSON_AddItemToArray(arr, ctr_status(p, &p->ctrs[i]));
	cJSON_AddStringToObject(st, "qosClass", p->qos);
	return st;
}

void
podstatus_dirty(struct node_pod *p)
{
	node_mgr *m = p->node->m;

	if (p->dirty || p->removed)
		return;
	p->dirty = 1;
	p->dirty_next = NULL;
	*m->dirty_tail = p;
	m->dirty_tail = &p->dirty_next;
}

/* A pod about to be freed leaves the list of dirty pods. */
void
podstatus_forget(struct node_pod *p)
{
	node_mgr *m = p->node->m;
	struct node_pod **pp;

	if (!p->dirty)
		return;
	for (pp = &m->dirty; *pp != NULL; pp = &(*pp)->dirty_next)
		if (*pp == p) {
			*pp = p->dirty_next;
			if (m->dirty_tail == &p->dirty_next)
				m->dirty_tail = pp;
			break;
		}
}

/* An asynchronous status write's answer: the pod, by uid, may be gone. */
struct status_wait {
	node_mgr *m;
	char uid[];
};

static void
on_written(void *arg, struct reg_result *res)
{
	struct status_wait *w = arg;
	struct node_pod *p = hmap_get(w->m->pods, w->uid);

	if (res->code < 300)
		w->m->stats.status_writes++;
	else if (res->code != 404 && res->code != 409)
		log_warn("node: status of pod %s: code %d", p != NULL ? p->key :
		    w->uid, res->code);
	if (p != NULL) {
		const store_obj *o;

		p->writing = 0;
		if (res->code == 409 && (o = client_get(w->m->c, "pods", p->ns,
		    p->name)) != NULL && o->rev == p->write_rev)
			p->stale = 1;	/* again on the next version */
		else if (res->code == 409)
			/* The version that beat it came before this answer:
			   no event is left to wait for. */
			podstatus_dirty(p);
		else if (p->rewrite)
			podstatus_dirty(p);
		p->rewrite = 0;
	}
	cJSON_Delete(res->body);
	free(w);
}

/* The last status's answer (flush_last): logged, then given to done. */
struct last_wait {
	node_mgr *m;
	client_done_fn done;
	void *arg;
	char key[];			/* the pod's, for the log */
};

static void
on_last_written(void *arg, struct reg_result *res)
{
	struct last_wait *w = arg;

	if (res->code >= 300)
		log_warn("node: last status of %s: code %d", w->key, res->code);
	else
		w->m->stats.status_writes++;
	w->done(w->arg, res);
	free(w);
}

/*
 * Write one pod's status if it changed; t, when given, is the tree of
 * version at (taken). Nothing waits for the answer. The slices write one
 * write of a pod at a time (a change meanwhile is written after it, a
 * refused one on top of the next version the client sees); the last
 * status of a pod that is going away (last: its answer's callback) goes
 * at once, over any newer version (reg_opts.own_status: the client
 * writes it again over the server's version on a conflict). 1 if a
 * write went.
 */
static int
flush_one(node_mgr *m, struct node_pod *p, const store_obj *at, cJSON *t,
    client_done_fn last, void *arg)
{
	const resource *r = resource_find("", "v1", "pods");
	const store_obj *o = client_get(m->c, "pods", p->ns, p->name);
	/* The status is this node's to write (reg_opts.own_status). */
	static const struct reg_opts own = { .own_status = 1 };
	struct status_wait *w;
	struct last_wait *lw;
	size_t len;
	cJSON *st;

	if (p->writing && last == NULL) {
		p->rewrite = 1;
		cJSON_Delete(t);
		return 0;
	}
	if (o == NULL || strcmp(o->uid, p->uid) != 0) {
		cJSON_Delete(t);
		return 0;
	}
	if (t != NULL && o != at) {
		cJSON_Delete(t);
		t = NULL;
	}
	if (t == NULL)
		t = store_obj_tree(o);
	st = pod_status(p, json_at(t, "status"));
	if (json_equal(st, json_at(t, "status"))) {
		cJSON_Delete(st);
		cJSON_Delete(t);
		return 0;
	}
	/* t is the stored version: the registry need not parse it again. */
	if (last == NULL) {
		len = strlen(p->uid) + 1;
		w = xmalloc(sizeof *w + len);
		w->m = m;
		memcpy(w->uid, p->uid, len);
		p->writing = 1;
		p->stale = 0;
		p->write_rev = o->rev;
		client_update_status_async(m->c, r, p->ns, p->name, t, st, NULL,
		    on_written, w);
		return 1;
	}
	len = strlen(p->key) + 1;
	lw = xmalloc(sizeof *lw + len);
	lw->m = m;
	lw->done = last;
	lw->arg = arg;
	memcpy(lw->key, p->key, len);
	client_update_status_async(m->c, r, p->ns, p->name, t, st, &own,
	    on_last_written, lw);
	return 1;
}

int
podstatus_flush_last(struct node_pod *p, client_done_fn done, void *arg)
{
	return p->dirty && flush_one(p->node->m, p, NULL, NULL, done, arg);
}

void
podstatus_flush_now(struct node_pod *p, struct node_pod **at,
    const store_obj *o, cJSON *t)
{
	node_mgr *m = p->node->m;

	if (!p->dirty || *at != p) {
		cJSON_Delete(t);
		return;
	}
	*at = p->dirty_next;
	if (m->dirty_tail == &p->dirty_next)
		m->dirty_tail = at;
	p->dirty = 0;
	p->dirty_next = NULL;
	flush_one(m, p, o, t, NULL, NULL);
}

/*
 * At most FLUSH_US of status writes a loop turn (each turn is one group
 * commit): thousands of pods started at once are written over a few
 * turns and the API answers between them.
 */
void
podstatus_flush_slice(node_mgr *m, uint64_t t0)
{
	struct node_pod *p;
	int n = 0;

	while ((p = m->dirty) != NULL) {
		if ((++n & 31) == 0 && util_usec() - t0 > FLUSH_US)
			return;
		if ((m->dirty = p->dirty_next) == NULL)
			m->dirty_tail = &m->dirty;
		p->dirty = 0;
		p->dirty_next = NULL;
		flush_one(m, p, NULL, NULL, NULL, NULL);
	}
}
