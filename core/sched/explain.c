/*
 * Why a job waits, kept for `volray explain` and `volray queue pending`:
 * at the end of each session (on its thread) every job that still has a
 * pending task (or, a PodGroup not running yet, lacks its pods: a Volcano
 * Job's before its controller creates them, with the reason
 * NotEnoughTasks), or lost one to an eviction, gets a record of what each
 * action did with it, and every queue with such jobs the line they wait
 * in. The last N sessions' records are kept in a ring; a record equal to
 * the one the previous session made for the same job is shared, so a
 * cluster whose backlog does not change costs one session's worth.
 *
 * A job's record (JSON; the session that made it beside it):
 *   job, podGroup, queue, phase, minMember, tasks {pending, pipelined,
 *   allocated, running, total}, minResources,
 *   reason, message       what holds it back, in one line
 *   steps                 per action: enqueue (admitted, refused with
 *                         the plugin whose vote said no, or skipped),
 *                         allocate (its turn in its queue, what came of
 *                         it: committed, pipelined, discarded with the
 *                         plugin that found it not ready; or why it was
 *                         not taken up: not valid, Pending, its queue
 *                         overused by a plugin), preempt/reclaim as a
 *                         preemptor (victims considered and allowed)
 *   pods                  the pending pods grouped by their message
 *                         (kube-scheduler's FitError: "0/5 nodes are
 *                         available: 3 Insufficient cpu, ..."), with a
 *                         count and an example
 *   evicted               its pods evicted in that session, and why
 *   queueState            its queue's figures: state, weight, allocated,
 *                         request, inqueue, capability, the plugins'
 *                         (ssn:queue_info: proportion's deserved),
 *                         overusedBy
 *   cluster               nodes, allocatable and idle
 *   notes                 what plugins said with ssn:explain
 * A queue's record: its figures and "pending", its waiting jobs in the
 * order allocate takes them up, each with its minResources (or its
 * pending pods' requests), phase and reason.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

struct ex_rec {
	char *json;
	char *reason;			/* a job's "reason", for its queue's
					   line; NULL for a queue's record */
	uint64_t sig;			/* of what it was made from */
	int refs;
};

struct ex_slot {
	uint64_t no;
	char at[32];
	char *meta;			/* the session's JSON */
	hmap *jobs;			/* "ns/name" -> struct ex_rec */
	hmap *queues;			/* name -> struct ex_rec */
};

/* A waiting job's entry in its queue's line, as JSON text without its
   position and opening brace: kept from session to session while what it
   is made from (sig) stays, so a standing backlog's line is not rebuilt. */
struct ex_entry {
	char *key;			/* the map's key */
	uint64_t sig;
	char *text;
};

struct explain {
	pthread_mutex_t mu;
	int n;				/* slots (sessions kept) */
	int next;			/* the slot the next session takes */
	struct ex_slot *slots;
	uint64_t record_us;		/* time spent recording, in total */
	hmap *entries;			/* "ns/name" -> struct ex_entry, the
					   last session's; the session thread's
					   alone */
};

explain *
explain_new(int nsessions)
{
	explain *ex;

	if (nsessions <= 0)
		return NULL;
	ex = xcalloc(1, sizeof *ex);
	pthread_mutex_init(&ex->mu, NULL);
	ex->n = nsessions;
	ex->slots = xcalloc((size_t)nsessions, sizeof *ex->slots);
	return ex;
}

static void
rec_release(struct ex_rec *r)
{
	if (r != NULL && --r->refs == 0) {
		free(r->json);
		free(r->reason);
		free(r);
	}
}

/* hmap_each: the record's reference and the key (ours) go. */
static int
release_one(const char *key, void *value, void *arg)
{
	(void)arg;
	rec_release(value);
	free((char *)key);
	return 0;
}

/* hmap_each: an entry (with its key) goes. */
static int
entry_free(const char *key, void *value, void *arg)
{
	struct ex_entry *e = value;

	(void)key;
	(void)arg;
	free(e->key);
	free(e->text);
	free(e);
	return 0;
}

static void
slot_clear(struct ex_slot *s)
{
	if (s->jobs != NULL) {
		hmap_each(s->jobs, release_one, NULL);
		hmap_free(s->jobs);
	}
	if (s->queues != NULL) {
		hmap_each(s->queues, release_one, NULL);
		hmap_free(s->queues);
	}
	free(s->meta);
	memset(s, 0, sizeof *s);
}

void
explain_free(explain *ex)
{
	int i;

	if (ex == NULL)
		return;
	for (i = 0; i < ex->n; i++)
		slot_clear(&ex->slots[i]);
	free(ex->slots);
	if (ex->entries != NULL) {
		hmap_each(ex->entries, entry_free, NULL);
		hmap_free(ex->entries);
	}
	pthread_mutex_destroy(&ex->mu);
	free(ex);
}

/* ------------------------------------------------------------------ */
/* Building one session's records.                                     */

static void
add_res(cJSON *o, const char *k, const struct podspec_res *r)
{
	cJSON_AddItemToObject(o, k, outcome_res_list(r));
}

/* The queue's figures, as its jobs' records and its own show them. */
static cJSON *
queue_state(struct session *ss, const struct s_queue *q)
{
	cJSON *o = cJSON_CreateObject(), *cap, *info, *it;

	cJSON_AddStringToObject(o, "name", q->name);
	cJSON_AddStringToObject(o, "state", q->state);
	cJSON_AddNumberToObject(o, "weight", q->weight);
	cJSON_AddNumberToObject(o, "priority", (double)q->priority);
	add_res(o, "allocated", &q->allocated);
	add_res(o, "request", &q->request);
	add_res(o, "inqueue", &q->inqueue);
	if ((cap = json_at(q->obj, "spec.capability")) != NULL)
		cJSON_AddItemToObject(o, "capability", cJSON_Duplicate(cap, 1));
	if ((cap = json_at(q->obj, "spec.guarantee.resource")) != NULL)
		cJSON_AddItemToObject(o, "guarantee", cJSON_Duplicate(cap, 1));
	/* The plugins' figures (resources in base units, cpu in millicores:
	   shown as quantities when they look like resources). */
	info = cJSON_GetObjectItemCaseSensitive(ss->qinfo, q->name);
	cJSON_ArrayForEach(it, info) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "cpu");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "memory");

		if (cJSON_IsNumber(c) && cJSON_IsNumber(m)) {
			struct podspec_res r;

			memset(&r, 0, sizeof r);
			r.cpu = (int64_t)c->valuedouble;
			r.memory = (int64_t)m->valuedouble;
			add_res(o, it->string, &r);
		} else
			cJSON_AddItemToObject(o, it->string,
			    cJSON_Duplicate(it, 1));
	}
	if (q->overused_by != NULL)
		cJSON_AddStringToObject(o, "overusedBy", q->overused_by);
	return o;
}

/* The pending pods grouped by their message, first seen first (at most
   8 groups). */
static cJSON *
pods_by_message(const struct s_job *j, char **first)
{
	cJSON *out = cJSON_CreateArray(), *g, *lastg = NULL;
	const struct s_task *last = NULL;
	int i;

	*first = NULL;
	for (i = 0; i < j->ntasks; i++) {
		const struct s_task *t = j->tasks[i];
		char *msg;

		if (t->status != TS_PENDING && t->status != TS_PIPELINED)
			continue;
		/* A task with the reason of the one before (most of a gang's
		   tasks) has its message: made once. */
		if (lastg != NULL && t->status == last->status &&
		    (last->why == t->why || (last->why && t->why &&
		    strcmp(last->why, t->why) == 0))) {
			g = lastg;
			goto count;
		}
		msg = t->status == TS_PIPELINED ? xstrdup("pipelined: waiting "
		    "for preempted or reclaimed pods to release their "
		    "resources") : outcome_pending_msg(t);
		if (msg == NULL)
			msg = xstrdup("not tried this session");
		cJSON_ArrayForEach(g, out)
			if (strcmp(json_str(g, "message"), msg) == 0)
				break;
		if (g == NULL && cJSON_GetArraySize(out) < 8) {
			g = cJSON_CreateObject();
			cJSON_AddStringToObject(g, "message", msg);
			cJSON_AddNumberToObject(g, "count", 0);
			cJSON_AddStringToObject(g, "example", t->name);
			cJSON_AddItemToArray(out, g);
			if (*first == NULL)
				*first = xstrdup(msg);
		}
		free(msg);
		last = t;
		if ((lastg = g) == NULL)
			continue;
count:
		cJSON_SetNumberValue(cJSON_GetObjectItem(g, "count"),
		    cJSON_GetObjectItem(g, "count")->valuedouble + 1);
	}
	return out;
}

/* Append the step {action, result} to steps; the step, for more fields.
   (Not step(): a libc name, regexp.h's.) */
static cJSON *
add_step(cJSON *steps, const char *action, const char *result)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "action", action);
	cJSON_AddStringToObject(s, "result", result);
	cJSON_AddItemToArray(steps, s);
	return s;
}

static void
set_str(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
}

/* Why the first of j's pending tasks that did not fit did not
   (kube-scheduler's FitError), or NULL. */
static const char *
fit_error(const struct s_job *j)
{
	int i;

	for (i = 0; i < j->ntasks; i++)
		if (j->tasks[i]->status == TS_PENDING && j->tasks[i]->why)
			return j->tasks[i]->why;
	return NULL;
}

/* What each action did with j; *reason and *msg summarise (allocated). */
/* "preempt", "reclaim+gangreclaim", ...: the actions of acts (VA_*). */
static char *
victim_actions(int acts)
{
	static const char *const names[] = { "preempt", "reclaim",
	    "gangpreempt", "gangreclaim" };
	char buf[64] = "";
	size_t i;

	for (i = 0; i < sizeof names / sizeof *names; i++)
		if (acts & (1 << i))
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
			    "%s%s", buf[0] ? "+" : "", names[i]);
	return xstrdup(buf[0] ? buf : "preempt");
}

/*
 * Each victim the job considered, with what became of it, and the count
 * of each verdict: {"victims": [{pod, node, verdict, message, plugin}],
 * "verdicts": {evicted: n, ...}, "victimsNotListed": n}.
 */
static void
add_victims(cJSON *s, const struct s_job *j)
{
	cJSON *list, *counts, *v;
	char *pod;
	int i, n[VV_N] = { 0 };

	if (j->nvnotes == 0)
		return;
	list = cJSON_AddArrayToObject(s, "victims");
	for (i = 0; i < j->nvnotes; i++) {
		const struct victim_note *vn = &j->vnotes[i];

		v = cJSON_CreateObject();
		cJSON_AddItemToArray(list, v);
		pod = util_printf("%s/%s", vn->t->ns, vn->t->name);
		cJSON_AddStringToObject(v, "pod", pod);
		free(pod);
		if (vn->n != NULL)
			cJSON_AddStringToObject(v, "node", vn->n->name);
		cJSON_AddStringToObject(v, "verdict",
		    victim_verdict_name(vn->v));
		if (vn->v == VV_REFUSED) {
			set_str(v, "plugin", vn->plugin);
			cJSON_AddStringToObject(v, "message", vn->plugin !=
			    NULL ? "kept by the plugin's rule" :
			    "no plugin's rule allowed it");
		} else
			cJSON_AddStringToObject(v, "message",
			    victim_verdict_text(vn->v));
		n[vn->v]++;
	}
	counts = cJSON_AddObjectToObject(s, "verdicts");
	for (i = 0; i < VV_N; i++)
		if (n[i] > 0)
			cJSON_AddNumberToObject(counts,
			    victim_verdict_name((enum victim_verdict)i), n[i]);
	if (j->vnotes_more > 0)
		cJSON_AddNumberToObject(s, "victimsNotListed", j->vnotes_more);
}

/* A PodGroup that waits for its pods to be created. */
static int
lacks_pods(const struct s_job *j)
{
	return j->pg != NULL && j->n[TS_PENDING] == 0 &&
	    j->n[TS_PIPELINED] == 0 && (j->ntasks == 0 ||
	    j->ntasks < j->min_member) && j->phase != NULL &&
	    (strcmp(j->phase, "Pending") == 0 ||
	    strcmp(j->phase, "Inqueue") == 0);
}

int
explain_waits(const struct s_job *j)
{
	return j->n[TS_PENDING] > 0 || j->n[TS_PIPELINED] > 0 ||
	    lacks_pods(j);
}

static cJSON *
steps_of(struct session *ss, const struct s_job *j, const char *pending_msg,
    char **reason, char **msg)
{
	const struct sched_conf *c = &ss->pol->conf;
	cJSON *steps = cJSON_CreateArray(), *s;
	const struct s_queue *q = j->queue;

	*reason = *msg = NULL;
	if (q == NULL) {
		*reason = xstrdup("QueueNotFound");
		*msg = util_printf("queue %s does not exist", j->queue_name);
		return steps;
	}
	/* enqueue */
	if (j->pg != NULL && config_has_action(c, ACT_ENQUEUE)) {
		if (j->enqueued)
			add_step(steps, "enqueue", "admitted");
		else if (strcmp(j->phase, "Pending") == 0) {
			s = add_step(steps, "enqueue", "refused");
			set_str(s, "plugin", j->enq_veto);
			set_str(s, "message", j->enqueue_msg);
			*reason = xstrdup(outcome_enqueue_reason(j));
			*msg = outcome_enqueue_msg(j);
		} else
			add_step(steps, "enqueue", "admitted earlier");
	}
	/* allocate */
	if (!config_has_action(c, ACT_ALLOCATE))
		;
	else if (j->invalid) {
		s = add_step(steps, "allocate", "not valid");
		set_str(s, "plugin", j->invalid_plugin);
		set_str(s, "reason", j->invalid_reason);
		set_str(s, "message", j->invalid_msg);
		if (*reason == NULL) {
			*reason = xstrdup(j->invalid_reason);
			*msg = outcome_invalid_msg(j);
		}
	} else if (j->alloc_turn < 0) {
		s = add_step(steps, "allocate", "not taken up: queue overused");
		cJSON_AddNumberToObject(s, "position", -j->alloc_turn);
		set_str(s, "plugin", q->overused_by);
		if (*reason == NULL) {
			*reason = xstrdup("QueueOverused");
			*msg = util_printf("queue %s is at or over its share%s%s%s; "
			    "%d%s in line", q->name, q->overused_by ?
			    " (plugin " : "", q->overused_by ? q->overused_by :
			    "", q->overused_by ? ")" : "", -j->alloc_turn,
			    -j->alloc_turn == 1 ? "st" : -j->alloc_turn == 2 ?
			    "nd" : -j->alloc_turn == 3 ? "rd" : "th");
		}
	} else if (j->alloc_turn > 0) {
		static const char *const res[] = { "tried", "committed",
		    "pipelined", "discarded: not ready" };

		s = add_step(steps, "allocate", res[j->alloc_result]);
		cJSON_AddNumberToObject(s, "turn", j->alloc_turn);
		if (j->alloc_result == ALLOC_DISCARDED) {
			set_str(s, "plugin", j->ready_veto);
			set_str(s, "message", j->cond_msg);
		}
		if (*reason == NULL && j->alloc_result == ALLOC_DISCARDED &&
		    j->min_member <= 1 && fit_error(j) != NULL) {
			/* A group of one: the pod's own reason, as its
			   PodScheduled says it. */
			*reason = xstrdup("Unschedulable");
			*msg = xstrdup(fit_error(j));
		} else if (*reason == NULL &&
		    j->alloc_result == ALLOC_DISCARDED) {
			const char *fit = fit_error(j);

			*reason = xstrdup(j->cond_reason && *j->cond_reason ?
			    j->cond_reason : "NotReady");
			*msg = util_printf("%s%s%s%s%s%s", j->cond_msg &&
			    *j->cond_msg ? j->cond_msg : "the job is not ready",
			    j->ready_veto ? " (plugin " : "", j->ready_veto ?
			    j->ready_veto : "", j->ready_veto ? ")" : "",
			    fit ? "; " : "", fit ? fit : "");
		} else if (*reason == NULL && j->alloc_result ==
		    ALLOC_PIPELINED) {
			*reason = xstrdup("Pipelined");
			*msg = xstrdup("placed on resources being released");
		}
	} else if (j->pg != NULL && strcmp(j->phase, "Pending") == 0)
		add_step(steps, "allocate",
		    "not taken up: pod group is Pending");
	else if (lacks_pods(j))
		add_step(steps, "allocate", "not taken up: no pods to place");
	if (j->victims_seen > 0) {
		char *acts = victim_actions(j->victim_acts);

		s = add_step(steps, acts, j->victims_allowed > 0 ?
		    "victims allowed" : "no victim allowed");
		free(acts);
		cJSON_AddNumberToObject(s, "candidates", j->victims_seen);
		cJSON_AddNumberToObject(s, "notPreemptable",
		    j->victims_protected);
		cJSON_AddNumberToObject(s, "allowed", j->victims_allowed);
		add_victims(s, j);
	}
	if (*reason == NULL && pending_msg != NULL) {
		*reason = xstrdup("Unschedulable");
		*msg = xstrdup(pending_msg);
	}
	if (*reason == NULL && lacks_pods(j)) {
		/* Volcano's word for fewer pods than the gang needs. */
		*reason = xstrdup("NotEnoughTasks");
		*msg = util_printf("pod group %s is %s with %d of its %d pods "
		    "(minMember): waiting for them to be created", j->name,
		    j->phase, j->ntasks, j->min_member > 0 ? j->min_member :
		    1);
	}
	if (*reason == NULL) {
		*reason = xstrdup("Waiting");
		*msg = xstrdup("no action placed its pending pods this session");
	}
	return steps;
}

static cJSON *
cluster_state(struct session *ss)
{
	cJSON *o = cJSON_CreateObject();
	struct podspec_res idle;
	int i;

	memset(&idle, 0, sizeof idle);
	for (i = 0; i < ss->nnodes; i++)
		podspec_res_add(&idle, &ss->nodes[i].idle, 1);
	cJSON_AddNumberToObject(o, "nodes", ss->nnodes);
	add_res(o, "allocatable", &ss->total);
	add_res(o, "idle", &idle);
	return o;
}


static cJSON *
job_record(struct session *ss, const struct s_job *j, char **reason_out)
{
	cJSON *o = cJSON_CreateObject(), *t, *pods, *ev = NULL;
	char *first, *reason, *msg;
	int i;

	cJSON_AddStringToObject(o, "job", j->key);
	if (j->pg != NULL)
		cJSON_AddStringToObject(o, "podGroup", j->name);
	cJSON_AddStringToObject(o, "queue", j->queue_name ? j->queue_name :
	    "");
	cJSON_AddStringToObject(o, "phase", j->phase ? j->phase : "");
	cJSON_AddNumberToObject(o, "minMember", j->min_member);
	t = cJSON_AddObjectToObject(o, "tasks");
	cJSON_AddNumberToObject(t, "total", j->ntasks);
	cJSON_AddNumberToObject(t, "pending", j->n[TS_PENDING]);
	cJSON_AddNumberToObject(t, "pipelined", j->n[TS_PIPELINED]);
	cJSON_AddNumberToObject(t, "allocated", j->n[TS_ALLOCATED] +
	    j->n[TS_BINDING] + j->n[TS_BOUND]);
	cJSON_AddNumberToObject(t, "running", j->n[TS_RUNNING]);
	if (j->has_min_res)
		add_res(o, "minResources", &j->min_res);
	pods = pods_by_message(j, &first);
	cJSON_AddItemToObject(o, "steps", steps_of(ss, j, first, &reason,
	    &msg));
	cJSON_AddStringToObject(o, "reason", reason);
	cJSON_AddStringToObject(o, "message", msg);
	cJSON_AddItemToObject(o, "pods", pods);
	for (i = 0; i < ss->nevicts; i++) {
		if (ss->evicts[i].t->job != j)
			continue;
		if (ev == NULL)
			ev = cJSON_AddArrayToObject(o, "evicted");
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "pod", ss->evicts[i].t->name);
		set_str(t, "reason", ss->evicts[i].reason);
		cJSON_AddItemToArray(ev, t);
	}
	if (j->nnotes > 0) {
		cJSON *notes = cJSON_AddArrayToObject(o, "notes");

		for (i = 0; i < j->nnotes; i++)
			cJSON_AddItemToArray(notes,
			    cJSON_CreateString(j->notes[i]));
	}
	free(first);
	free(msg);
	*reason_out = reason;
	return o;
}

static uint64_t
mix_str(uint64_t h, const char *s)
{
	return s != NULL ? util_fnv1a(h, s, strlen(s) + 1) :
	    util_fnv1a(h, "\377", 1);
}

static uint64_t
mix_int(uint64_t h, long long x)
{
	return util_fnv1a(h, &x, sizeof x);
}

/*
 * The signature of j's record: equal signatures make equal records, so
 * a job whose state did not change since the previous session shares
 * that session's record without building it again.
 */
static uint64_t
signature(const struct s_job *j, int evicted)
{
	uint64_t h = UTIL_FNV_SEED;
	const char *why = NULL;
	int i;

	h = mix_str(h, j->phase);
	h = mix_str(h, j->queue_name);
	h = util_fnv1a(h, j->n, sizeof j->n);
	h = mix_int(h, j->min_member);
	h = mix_int(h, j->alloc_turn);
	h = mix_int(h, j->alloc_result);
	h = mix_int(h, j->enqueued);
	h = mix_int(h, j->invalid);
	h = mix_int(h, evicted);
	h = mix_int(h, j->victims_seen);
	h = mix_int(h, j->victims_protected);
	h = mix_int(h, j->victims_allowed);
	h = mix_int(h, j->victim_acts);
	h = mix_int(h, j->vnotes_more);
	for (i = 0; i < j->nvnotes; i++) {
		h = mix_str(h, j->vnotes[i].t->uid);
		h = mix_int(h, j->vnotes[i].v);
		h = mix_str(h, j->vnotes[i].plugin);
		h = mix_str(h, j->vnotes[i].n ? j->vnotes[i].n->name : NULL);
	}
	h = mix_str(h, j->enqueue_msg);
	h = mix_str(h, j->enq_veto);
	h = mix_str(h, j->ready_veto);
	h = mix_str(h, j->pipe_veto);
	h = mix_str(h, j->invalid_plugin);
	h = mix_str(h, j->invalid_reason);
	h = mix_str(h, j->invalid_msg);
	h = mix_str(h, j->cond_reason);
	h = mix_str(h, j->cond_msg);
	for (i = 0; i < j->nnotes; i++)
		h = mix_str(h, j->notes[i]);
	for (i = 0; i < j->ntasks; i++) {
		const struct s_task *t = j->tasks[i];

		if (t->status != TS_PENDING && t->status != TS_PIPELINED)
			continue;
		h = mix_int(h, t->status);
		if (t->why != why || i == 0)
			h = mix_str(h, t->why);
		why = t->why;
	}
	return h;
}

/* A new record of o (printed), with its reason. */
static struct ex_rec *
rec_new(cJSON *o, uint64_t sig)
{
	struct ex_rec *r = xcalloc(1, sizeof *r);

	r->json = json_print(o);
	r->reason = xstrdup(json_str(o, "reason") ? json_str(o, "reason") :
	    "");
	r->sig = sig;
	r->refs = 1;
	return r;
}

/* What a waiting job asks for: its minResources, else its pending
   pods' requests. */
static void
line_request(const struct s_job *j, struct podspec_res *r)
{
	int t;

	if (j->has_min_res) {
		*r = j->min_res;
		return;
	}
	memset(r, 0, sizeof *r);
	for (t = 0; t < j->ntasks; t++)
		if (j->tasks[t]->status == TS_PENDING)
			podspec_res_add(r, &j->tasks[t]->req, 1);
}

/* What a line entry of j is made from. */
static uint64_t
entry_sig(const struct s_job *j, const char *reason,
    const struct podspec_res *req)
{
	uint64_t h = mix_str(UTIL_FNV_SEED, j->phase);

	h = mix_int(h, j->priority);
	h = mix_int(h, j->n[TS_PENDING]);
	h = mix_int(h, j->has_min_res);
	h = util_fnv1a(h, req, sizeof *req);
	return mix_str(h, reason);
}

/* j's line entry: the previous session's text when made from the same,
   else a new one; moved into the session's map (next). */
static const struct ex_entry *
line_entry(explain *ex, hmap *next, const struct s_job *j,
    const char *reason)
{
	struct podspec_res req;
	struct ex_entry *e;
	uint64_t sig;
	cJSON *o;
	char *text;

	line_request(j, &req);
	sig = entry_sig(j, reason, &req);
	e = ex->entries != NULL ? hmap_del(ex->entries, j->key) : NULL;
	if (e == NULL) {
		e = xcalloc(1, sizeof *e);
		e->key = xstrdup(j->key);
	}
	hmap_put(next, e->key, e);
	if (e->text != NULL && e->sig == sig)
		return e;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "job", j->key);
	cJSON_AddStringToObject(o, "phase", j->phase ? j->phase : "");
	cJSON_AddNumberToObject(o, "priority", (double)j->priority);
	cJSON_AddNumberToObject(o, "pending", j->n[TS_PENDING]);
	add_res(o, j->has_min_res ? "minResources" : "request", &req);
	set_str(o, "reason", reason);
	text = json_print(o);
	cJSON_Delete(o);
	free(e->text);
	e->sig = sig;
	e->text = xstrdup(text + 1);	/* without its "{" */
	free(text);
	return e;
}

struct text {
	char *p;
	size_t n, cap;
};

static void
append(struct text *t, const char *s, size_t n)
{
	XGROW(t->p, t->cap, t->n + n + 1);
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

/*
 * A queue's record: its figures and its waiting jobs in line (line[]
 * sorted, reasons[] by job index), written as text from each job's kept
 * entry (a standing backlog of thousands of jobs costs a lookup per job,
 * not a JSON document); the previous session's record is shared when the
 * signature of the whole is the same.
 */
static void
record_queue(explain *ex, hmap *next, struct session *ss, struct s_queue *q,
    struct s_job **line, int nline, const char **reasons,
    const struct ex_slot *prev, struct ex_slot *fresh)
{
	struct text t = { NULL, 0, 0 };
	struct ex_rec *r;
	cJSON *o;
	char *state, num[32];
	uint64_t sig;
	int k, pos = 0, any = 0;

	for (k = 0; k < nline && !any; k++)
		any = line[k]->queue == q;
	if (!any)
		return;
	o = queue_state(ss, q);
	state = json_print(o);
	cJSON_Delete(o);
	sig = mix_str(UTIL_FNV_SEED, state);
	/* "{...figures" then ,"pending":[{"position":N,<entry>},...]} */
	append(&t, state, strlen(state) - 1);
	append(&t, ",\"pending\":[", 12);
	for (k = 0; k < nline; k++) {
		const struct s_job *j = line[k];
		const struct ex_entry *e;

		if (j->queue != q)
			continue;
		e = line_entry(ex, next, j, reasons[j->idx]);
		sig = mix_str(sig, j->key);
		sig = mix_int(sig, (long long)e->sig);
		snprintf(num, sizeof num, "%s{\"position\":%d,", pos > 0 ? "," :
		    "", pos + 1);
		pos++;
		append(&t, num, strlen(num));
		append(&t, e->text, strlen(e->text));
	}
	append(&t, "]}", 2);
	free(state);
	r = prev->queues != NULL ? hmap_get(prev->queues, q->name) : NULL;
	if (r != NULL && r->sig == sig) {
		r->refs++;
		free(t.p);
	} else {
		r = xcalloc(1, sizeof *r);
		r->json = t.p;		/* reason: a job's only */
		r->sig = sig;
		r->refs = 1;
	}
	hmap_put(fresh->queues, xstrdup(q->name), r);
}

/* A queue's waiting jobs in allocate's order (taken up first, then
   those an overused queue kept, then the rest). */
static int
line_rank(const struct s_job *j)
{
	if (j->alloc_turn > 0)
		return j->alloc_turn;
	if (j->alloc_turn < 0)
		return 1000000 - j->alloc_turn;
	return 2000000;
}

static int
cmp_line(const void *a, const void *b)
{
	const struct s_job *x = *(struct s_job *const *)a;
	const struct s_job *y = *(struct s_job *const *)b;
	int rx = line_rank(x), ry = line_rank(y);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->created ? x->created : "", y->created ? y->created :
	    "");
}

void
explain_record(explain *ex, struct session *ss, uint64_t no)
{
	struct ex_slot fresh, *prev;
	struct s_job **line;
	hmap *next;
	const char **reasons;		/* the records': borrowed */
	char *evicted;
	cJSON *meta;
	uint64_t t0;
	int i, nline = 0;

	if (ex == NULL)
		return;
	t0 = util_usec();
	memset(&fresh, 0, sizeof fresh);
	fresh.no = no;
	util_now(fresh.at);
	fresh.jobs = hmap_new();
	fresh.queues = hmap_new();
	meta = cJSON_CreateObject();
	cJSON_AddNumberToObject(meta, "number", (double)no);
	cJSON_AddStringToObject(meta, "time", fresh.at);
	cJSON_AddNumberToObject(meta, "nodes", ss->nnodes);
	cJSON_AddNumberToObject(meta, "jobs", ss->njobs);
	set_str(meta, "policy", ss->pol->conf.path);
	cJSON_AddItemToObject(meta, "cluster", cluster_state(ss));
	fresh.meta = json_print(meta);
	cJSON_Delete(meta);
	line = xcalloc((size_t)ss->njobs + 1, sizeof *line);
	reasons = xcalloc((size_t)ss->njobs + 1, sizeof *reasons);
	/* The previous session's records, read without the lock: only
	   this thread writes slots (sessions run one at a time). */
	prev = &ex->slots[(ex->next + ex->n - 1) % ex->n];
	evicted = xcalloc((size_t)ss->njobs + 1, 1);
	for (i = 0; i < ss->nevicts; i++)
		if (ss->evicts[i].t->job != NULL)
			evicted[ss->evicts[i].t->job->idx] = 1;
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];
		struct ex_rec *r;
		uint64_t sig;
		cJSON *o;

		if (!explain_waits(j) && !evicted[j->idx])
			continue;
		sig = signature(j, evicted[j->idx]);
		r = prev->jobs != NULL ? hmap_get(prev->jobs, j->key) : NULL;
		if (r != NULL && r->sig == sig)
			r->refs++;
		else {
			char *why;

			o = job_record(ss, j, &why);
			free(why);
			r = rec_new(o, sig);
			cJSON_Delete(o);
		}
		reasons[j->idx] = r->reason;
		hmap_put(fresh.jobs, xstrdup(j->key), r);
		if (explain_waits(j) && j->queue != NULL)
			line[nline++] = j;
	}
	free(evicted);
	qsort(line, (size_t)nline, sizeof *line, cmp_line);
	next = hmap_new();
	for (i = 0; i < ss->nqueues; i++)
		record_queue(ex, next, ss, &ss->queues[i], line, nline,
		    reasons, prev, &fresh);
	/* Entries of jobs that no longer wait go. */
	if (ex->entries != NULL) {
		hmap_each(ex->entries, entry_free, NULL);
		hmap_free(ex->entries);
	}
	ex->entries = next;
	free(reasons);
	free(line);
	pthread_mutex_lock(&ex->mu);
	slot_clear(&ex->slots[ex->next]);
	ex->slots[ex->next] = fresh;
	ex->next = (ex->next + 1) % ex->n;
	ex->record_us += util_usec() - t0;
	pthread_mutex_unlock(&ex->mu);
}

/* ------------------------------------------------------------------ */
/* Reading.                                                            */

/* The newest record of key in the map of each slot (kind 0 jobs, 1
   queues), with its session: a new tree, or NULL. */
static cJSON *
lookup(explain *ex, int kind, const char *key)
{
	cJSON *out = NULL, *session, *cluster;
	int i;

	if (ex == NULL)
		return NULL;
	pthread_mutex_lock(&ex->mu);
	for (i = 1; i <= ex->n && out == NULL; i++) {
		struct ex_slot *s = &ex->slots[(ex->next + ex->n - i) % ex->n];
		hmap *m = kind == 0 ? s->jobs : s->queues;
		struct ex_rec *r = m != NULL ? hmap_get(m, key) : NULL;

		if (r == NULL)
			continue;
		if ((out = cJSON_Parse(r->json)) == NULL)
			continue;
		session = cJSON_Parse(s->meta);
		cluster = cJSON_DetachItemFromObject(session, "cluster");
		if (kind == 0) {
			/* The queue's figures and the cluster's are kept once
			   a session, beside the jobs. */
			const char *qn = json_str(out, "queue");
			struct ex_rec *q = qn != NULL ? hmap_get(s->queues, qn) :
			    NULL;
			cJSON *qs = q != NULL ? cJSON_Parse(q->json) : NULL;

			cJSON_DeleteItemFromObject(qs, "pending");
			if (qs != NULL)
				cJSON_AddItemToObject(out, "queueState", qs);
			if (cluster != NULL)
				cJSON_AddItemToObject(out, "cluster", cluster);
		} else
			cJSON_Delete(cluster);
		cJSON_AddItemToObject(out, "session", session);
	}
	pthread_mutex_unlock(&ex->mu);
	return out;
}

cJSON *
explain_job(explain *ex, const char *key)
{
	return lookup(ex, 0, key);
}

cJSON *
explain_queue(explain *ex, const char *name)
{
	return lookup(ex, 1, name);
}

int
explain_sessions(explain *ex)
{
	int i, n = 0;

	if (ex == NULL)
		return 0;
	pthread_mutex_lock(&ex->mu);
	for (i = 0; i < ex->n; i++)
		n += ex->slots[i].jobs != NULL;
	pthread_mutex_unlock(&ex->mu);
	return n;
}

uint64_t
explain_record_us(explain *ex)
{
	uint64_t us;

	if (ex == NULL)
		return 0;
	pthread_mutex_lock(&ex->mu);
	us = ex->record_us;
	pthread_mutex_unlock(&ex->mu);
	return us;
}
