/*
 * The scheduling cycle. A timer runs one every second, and a store event
 * that brings new pending work (a pod to schedule, a node that changed)
 * starts one 20 ms later (or four times the last cycle's length, when that
 * is longer), so a burst of creates is placed in a few cycles and the API
 * keeps most of the loop.
 * A cycle opens the session, runs allocate, binds the placements through
 * the registry's pods/binding path (all in this loop turn: one group
 * commit), and writes PodScheduled=False with the reason to each pod that
 * stays pending, only when that reason changed. A bind that fails marks
 * its pod PodScheduled=False reason SchedulerError; the next cycle takes
 * it again from the store.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "sched/sched_int.h"

#define PERIOD_MS	1000
#define SOON_MS		20

/* Set the pod's PodScheduled condition to False with reason and message. */
static void
mark_pending(struct sched *s, const char *ns, const char *name,
    const cJSON *cur, const char *reason, const char *msg)
{
	const resource *r = resource_find("", "v1", "pods");
	cJSON *t, *conds, *c = NULL, *it;
	struct reg_opts o;
	struct reg_result res;
	char now[32];

	cJSON_ArrayForEach(it, json_at(cur, "status.conditions"))
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    "PodScheduled") == 0 && json_str(it, "status") &&
		    strcmp(json_str(it, "status"), "False") == 0 &&
		    json_str(it, "reason") && strcmp(json_str(it, "reason"),
		    reason) == 0 && json_str(it, "message") &&
		    strcmp(json_str(it, "message"), msg) == 0)
			return;		/* already says so */
	t = cJSON_Duplicate(cur, 1);
	conds = cJSON_GetObjectItemCaseSensitive(json_obj(t, "status"),
	    "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(json_obj(t, "status"),
		    "conditions");
		conds = cJSON_AddArrayToObject(json_obj(t, "status"),
		    "conditions");
	}
	cJSON_ArrayForEach(it, conds)
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    "PodScheduled") == 0)
			c = it;
	util_now(now);
	if (c == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "PodScheduled");
		cJSON_AddItemToArray(conds, c);
	}
	if (json_str(c, "status") == NULL || strcmp(json_str(c, "status"),
	    "False") != 0)
		json_set_str(c, "lastTransitionTime", now);
	json_set_str(c, "status", "False");
	json_set_str(c, "reason", reason);
	json_set_str(c, "message", msg);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "lastProbeTime");
	cJSON_AddNullToObject(c, "lastProbeTime");
	if (json_str(t, "status.phase") == NULL)
		json_set_str(json_obj(t, "status"), "phase", "Pending");
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	registry_update(s->rg, r, ns, name, t, &o, &res);
	if (res.code >= 300 && res.code != 404 && res.code != 409)
		log_warn("sched: status of %s/%s: code %d", ns, name, res.code);
	cJSON_Delete(res.body);
	s->stats.unschedulable++;
}

static void
cycle(struct sched *s)
{
	struct sched_session ss;
	struct sched_task **binds;
	uint64_t t0 = util_usec();
	int n, i;

	s->pending_work = 0;
	session_open(s, &ss);
	n = allocate_run(&ss, &binds);
	for (i = 0; i < n; i++) {
		struct sched_task *t = binds[i];
		struct reg_result res;

		registry_bind(s->rg, t->ns, t->name, t->node->name, &res);
		if (res.code >= 300) {
			const char *msg = json_str(res.body, "message");
			char *why = util_printf("Binding rejected: %s", msg ?
			    msg : "error");

			log_info("sched: binding %s/%s to %s: %s", t->ns,
			    t->name, t->node->name, why);
			mark_pending(s, t->ns, t->name, t->obj, "SchedulerError",
			    why);
			free(why);
		} else
			s->stats.binds++;
		cJSON_Delete(res.body);
	}
	for (i = 0; i < ss.ntasks; i++) {
		struct sched_task *t = &ss.tasks[i];

		if (t->state == TASK_PENDING && t->why != NULL)
			mark_pending(s, t->ns, t->name, t->obj, "Unschedulable",
			    t->why);
	}
	free(binds);
	session_close(&ss);
	s->stats.cycles++;
	s->stats.last_cycle_us = util_usec() - t0;
	if (n > 0)
		log_debug("sched: cycle bound %d pods in %llu us", n,
		    (unsigned long long)s->stats.last_cycle_us);
}

static void
on_period(uv_timer_t *h)
{
	cycle(h->data);
}

static void
on_soon(uv_timer_t *h)
{
	cycle(h->data);
}

/* New pending work: a cycle soon, one for the whole burst. */
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
	    o->node_name[0] != '\0')) {
		/*
		 * Wait at least four times what the last cycle took, so that
		 * cycles take at most a fifth of the loop while writes pour in.
		 */
		uint64_t wait = s->stats.last_cycle_us * 4 / 1000;

		s->pending_work = 1;
		uv_timer_start(&s->soon, on_soon, wait > SOON_MS ? (wait < PERIOD_MS ?
		    wait : PERIOD_MS) : SOON_MS, 0);
	}
}

sched *
sched_new(uv_loop_t *loop, store *st, registry *rg)
{
	struct sched *s = calloc(1, sizeof *s);

	if (s == NULL || (s->nodes_cache = hmap_new()) == NULL ||
	    (s->pods_cache = hmap_new()) == NULL)
		fatal("out of memory");
	s->loop = loop;
	s->st = st;
	s->rg = rg;
	uv_timer_init(loop, &s->timer);
	uv_timer_init(loop, &s->soon);
	s->timer.data = s->soon.data = s;
	store_subscribe(st, on_event, s);
	return s;
}

void
sched_start(sched *s)
{
	uv_timer_start(&s->timer, on_period, PERIOD_MS, PERIOD_MS);
	uv_unref((uv_handle_t *)&s->timer);
	s->pending_work = 1;
	uv_timer_start(&s->soon, on_soon, SOON_MS, 0);
}

void
sched_stats_get(const sched *s, struct sched_stats *out)
{
	*out = s->stats;
}
