/*
 * The simulated runtime: a container "runs" for the pod's
 * volray.io/sim-duration (a Go duration: 500ms, 30s, 2m, 1h30m; absent:
 * until stopped) and then exits with volray.io/sim-exit-code (default 0).
 * A container may have its own, as volray.io/sim-duration.NAME and
 * volray.io/sim-exit-code.NAME; init containers without one exit 0 at
 * once. Stopping a simulated container ends it at once with 143, as a
 * process that dies of SIGTERM. Nothing runs: every end is a timer on the
 * node manager's wheel. After a volrayd restart a container that was
 * running goes on from its stored startedAt (sim_resume). Ray's commands
 * are the exception: a KubeRay submitter, a Redis cleanup Job, a worker's
 * raylet do what the command would, through the node manager's effect
 * hook (the Ray heads' simeffect.c), and exit as the command would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

struct sim_ctr {
	wheel_timer timer;
	struct node_ctr *c;
	int exit_code;
	void *sub;			/* the effect hook's, or NULL */
	node_mgr *m;
};

/* The container's own annotation, else the pod's. */
static const char *
setting(const struct node_pod *p, const struct node_ctr *c, const char *key)
{
	char k[320];
	const char *v;

	snprintf(k, sizeof k, "%s.%s", key, c->name);
	if ((v = podworker_annotation(p, k)) != NULL)
		return v;
	return podworker_annotation(p, key);
}

static void
on_end(wheel_timer *t)
{
	struct sim_ctr *s = t->data;
	struct node_ctr *c = s->c;
	int code = s->exit_code;

	free(s);
	c->rt = NULL;
	podworker_ctr_exited(c, code, NULL);
}

/* How long the container runs: its duration in ms, -1 until stopped. */
static int64_t
sim_duration(struct node *n, struct node_pod *p, struct node_ctr *c)
{
	const char *d = setting(p, c, "volray.io/sim-duration");
	int64_t ms;

	if (c->init) {
		/* Init containers end at once unless told otherwise by name. */
		char k[320];

		snprintf(k, sizeof k, "volray.io/sim-duration.%s", c->name);
		d = podworker_annotation(p, k);
		if (d == NULL)
			d = "0";
	}
	ms = d != NULL ? util_duration_ms(d) : -1;
	if (d != NULL && ms < 0)
		log_info("node %s: pod %s: bad volray.io/sim-duration %s; the "
		    "container runs until stopped", n->name, p->key, d);
	return ms;
}

/* A simulated instance that ends after ms (-1: when stopped). */
static void
run_instance(struct node *n, struct node_pod *p, struct node_ctr *c, int64_t ms)
{
	const char *e = setting(p, c, "volray.io/sim-exit-code");
	struct sim_ctr *s;

	s = xcalloc(1, sizeof *s);
	s->c = c;
	s->exit_code = e != NULL ? atoi(e) : 0;
	c->rt = s;
	if (ms >= 0)
		wheel_add(n->m->wheel, &s->timer, (uint64_t)ms, on_end, s);
}

/* A command given an effect ended (the node manager's hook). */
static void
effect_done(void *arg, int code)
{
	struct sim_ctr *s = arg;
	struct node_ctr *c = s->c;

	s->m->sim_cancel(s->sub);
	free(s);
	c->rt = NULL;
	podworker_ctr_exited(c, code, NULL);
}

/*
 * A container whose command the node manager's effect hook plays (the
 * Ray heads': KubeRay's submitters, Redis cleanup Jobs, workers'
 * raylets). 0 when it took the container.
 */
static int
sim_effect(struct node *n, struct node_pod *p, struct node_ctr *c)
{
	struct sim_ctr *s;

	if (n->m->sim_effect == NULL)
		return -1;
	s = xcalloc(1, sizeof *s);
	s->c = c;
	s->m = n->m;
	s->sub = n->m->sim_effect(n->m->sim_effect_arg, p->ns, p->name,
	    c->name, c->init, effect_done, s);
	if (s->sub == NULL) {
		free(s);
		return -1;
	}
	c->rt = s;
	return 0;
}

static int
sim_start(struct node *n, struct node_pod *p, struct node_ctr *c, char **cause)
{
	(void)cause;
	if (sim_effect(n, p, c) == 0)
		return 0;
	run_instance(n, p, c, sim_duration(n, p, c));
	return 0;
}

/*
 * After a volrayd restart a simulated container runs on from its
 * startedAt: it ends at startedAt + duration (at once when that has
 * passed), and says so in finishedAt.
 */
static int
sim_resume(struct node *n, struct node_pod *p, struct node_ctr *c)
{
	int64_t ms, left;
	time_t since = util_time_parse(c->started);
	struct timespec now;

	/* A submitter follows its job again (it never submits twice). */
	if (sim_effect(n, p, c) == 0)
		return 0;
	ms = sim_duration(n, p, c);
	if (ms < 0 || since < 0) {
		run_instance(n, p, c, ms);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	left = (int64_t)since * 1000 + ms - ((int64_t)now.tv_sec * 1000 +
	    now.tv_nsec / 1000000);
	/* The wheel's ticks may fire a few ms before the second turns. */
	util_time_format(since + (time_t)(ms / 1000), c->end_at);
	if (left < 0)
		left = 0;
	run_instance(n, p, c, left);
	return 0;
}

static void
sim_stop(struct node *n, struct node_pod *p, struct node_ctr *c,
    uint64_t grace_ms)
{
	struct sim_ctr *s = c->rt;

	(void)p;
	(void)grace_ms;
	if (s == NULL)
		return;
	if (s->sub != NULL)
		n->m->sim_cancel(s->sub);
	else
		wheel_cancel(n->m->wheel, &s->timer);
	free(s);
	c->rt = NULL;
	c->end_at[0] = '\0';
	podworker_ctr_exited(c, 143, "Error");
}

const struct node_runtime sim_runtime = {
	.name = "virtual",
	.os_image = "volray simulated node",
	.version = "volray-sim://" VERSION,
	.start = sim_start,
	.stop = sim_stop,
	.resume = sim_resume,
};
