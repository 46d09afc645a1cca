/*
 * What a restarted volrayd takes back from a pod's stored status before
 * the pod worker runs it, so that a restart of the daemon is not a
 * restart of the pod: startTime and podIP; per container restartCount
 * and lastState; a container that was running is marked to be resumed
 * (the runtime takes the instance back: the local node's shim, the
 * simulated node's clock) with its startedAt; an init container that had
 * completed, or a main container that had ended for good under its
 * restartPolicy, stays terminated as it was. Anything else starts again,
 * counted as a restart when an instance had run.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "node/node_int.h"

static void
read_end(const cJSON *t, struct ctr_end *e)
{
	const char *v;

	memset(e, 0, sizeof *e);
	e->exit_code = (int)cJSON_GetNumberValue(json_at(t, "exitCode"));
	if ((v = json_str(t, "reason")) != NULL)
		snprintf(e->reason, sizeof e->reason, "%s", v);
	if ((v = json_str(t, "message")) != NULL)
		snprintf(e->message, sizeof e->message, "%s", v);
	if ((v = json_str(t, "startedAt")) != NULL)
		snprintf(e->started, sizeof e->started, "%s", v);
	if ((v = json_str(t, "finishedAt")) != NULL)
		snprintf(e->finished, sizeof e->finished, "%s", v);
}

/* Whether an ended main container stays ended under the pod's policy. */
static int
stays_ended(const struct node_pod *p, int code)
{
	return p->restart_policy == 'N' || (p->restart_policy == 'O' &&
	    code == 0);
}

static void
restore_ctr(struct node_pod *p, struct node_ctr *c, const cJSON *cs)
{
	const cJSON *run = json_at(cs, "state.running");
	const cJSON *term = json_at(cs, "state.terminated");
	const cJSON *last = json_at(cs, "lastState.terminated");
	const char *since = json_str(run, "startedAt");

	c->restarts = (int)cJSON_GetNumberValue(json_at(cs, "restartCount"));
	if (c->restarts < 0)
		c->restarts = 0;
	if (last != NULL) {
		read_end(last, &c->last);
		c->has_last = 1;
	}
	if (run != NULL && since != NULL) {
		c->resume = 1;
		c->instance = c->restarts + 1;
		snprintf(c->started, sizeof c->started, "%s", since);
	} else if (term != NULL) {
		c->instance = c->restarts + 1;
		read_end(term, &c->end);
		if ((c->init && c->end.exit_code == 0) ||
		    (!c->init && stays_ended(p, c->end.exit_code)))
			c->state = CTR_TERMINATED;
		else {
			/* It was about to restart: that ending is lastState. */
			c->last = c->end;
			c->has_last = 1;
		}
	} else if (c->restarts > 0 || c->has_last)
		c->instance = c->restarts + 1;
}

static void
restore_list(struct node_pod *p, const cJSON *list, int init)
{
	const cJSON *cs;
	int i;

	cJSON_ArrayForEach(cs, list) {
		const char *name = json_str(cs, "name");

		for (i = 0; name != NULL && i < p->nctrs; i++)
			if (p->ctrs[i].init == init &&
			    strcmp(p->ctrs[i].name, name) == 0)
				restore_ctr(p, &p->ctrs[i], cs);
	}
}

void
podrestore_apply(struct node_pod *p, const cJSON *status)
{
	const char *v;

	if (status == NULL || json_at(status, "containerStatuses") == NULL)
		return;
	if ((v = json_str(status, "startTime")) != NULL)
		snprintf(p->start_time, sizeof p->start_time, "%s", v);
	if ((v = json_str(status, "podIP")) != NULL) {
		unsigned a, b, c;

		snprintf(p->ip, sizeof p->ip, "%s", v);
		/* New pods' addresses (admit: 10.64.0.0/10) go past this one. */
		if (sscanf(v, "10.%u.%u.%u", &a, &b, &c) == 3 && a >= 64 &&
		    a < 128 && b < 256 && c < 256 &&
		    (((a - 64) << 16) | (b << 8) | c) > p->node->m->next_ip)
			p->node->m->next_ip = ((a - 64) << 16) | (b << 8) | c;
	}
	restore_list(p, json_at(status, "initContainerStatuses"), 1);
	restore_list(p, json_at(status, "containerStatuses"), 0);
	while (p->next_init < p->ninit &&
	    p->ctrs[p->next_init].state == CTR_TERMINATED)
		p->next_init++;
}
