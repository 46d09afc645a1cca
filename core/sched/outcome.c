/*
 * What a session decided about PodGroups and queues, once it has run
 * (and gang has written its conditions through ssn:job_condition):
 * outcome_build turns the session into the status the PodGroups and
 * queues should have, as Volcano's session close does:
 *
 *   scheduled = tasks Allocated, Binding, Bound, Running, Succeeded or
 *               Failed
 *   scheduled >= minMember -> Completed when every task finished, else
 *                             Running
 *   otherwise              -> Unknown if it was Running, else Inqueue
 *                             when admitted, else Pending
 *
 * with the counts running/succeeded/failed and the gang's condition (or
 * what held the job back, not what followed from it: for a job enqueue
 * refused, Unschedulable with the reason NotEnqueued, or PluginFailed
 * when a plugin's failure under failurePolicy Fail was the refusal; for
 * a job a plugin's job_valid refused, that plugin's reason and message),
 * and each queue's allocated resources. The caller compares with what is
 * stored and writes only what changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

/* A ResourceList in Kubernetes' quantities. */
cJSON *
outcome_res_list(const struct podspec_res *r)
{
	cJSON *o = cJSON_CreateObject();
	char buf[64];
	int i;

	if (r->cpu % 1000 == 0)
		snprintf(buf, sizeof buf, "%lld", (long long)(r->cpu / 1000));
	else
		snprintf(buf, sizeof buf, "%lldm", (long long)r->cpu);
	cJSON_AddStringToObject(o, "cpu", buf);
	if (r->memory % (1LL << 30) == 0 && r->memory != 0)
		snprintf(buf, sizeof buf, "%lldGi",
		    (long long)(r->memory >> 30));
	else if (r->memory % (1LL << 20) == 0 && r->memory != 0)
		snprintf(buf, sizeof buf, "%lldMi",
		    (long long)(r->memory >> 20));
	else
		snprintf(buf, sizeof buf, "%lld", (long long)r->memory);
	cJSON_AddStringToObject(o, "memory", buf);
	for (i = 0; i < r->next; i++) {
		snprintf(buf, sizeof buf, "%lld", (long long)r->ext[i].value);
		cJSON_AddStringToObject(o, r->ext[i].name, buf);
	}
	if (r->pods > 0) {
		snprintf(buf, sizeof buf, "%lld", (long long)r->pods);
		cJSON_AddStringToObject(o, "pods", buf);
	}
	return o;
}

/*
 * Set the condition of that type to True (keeping lastTransitionTime
 * when it already was) and drop its opposite (Scheduled <->
 * Unschedulable).
 */
static void
set_condition(cJSON *st, const char *type, const char *reason,
    const char *msg)
{
	const char *other = strcmp(type, "Scheduled") == 0 ? "Unschedulable" :
	    "Scheduled";
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	cJSON *it, *c = NULL;
	char now[32];
	int i;

	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	for (i = cJSON_GetArraySize(conds) - 1; i >= 0; i--) {
		it = cJSON_GetArrayItem(conds, i);
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    other) == 0)
			cJSON_DeleteItemFromArray(conds, i);
	}
	cJSON_ArrayForEach(it, conds)
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    type) == 0)
			c = it;
	if (c != NULL && json_str(c, "reason") && json_str(c, "message") &&
	    strcmp(json_str(c, "reason"), reason) == 0 &&
	    strcmp(json_str(c, "message"), msg) == 0)
		return;
	util_now(now);
	if (c == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(conds, c);
		json_set_str(c, "lastTransitionTime", now);
	}
	json_set_str(c, "type", type);
	json_set_str(c, "status", "True");
	json_set_str(c, "reason", reason);
	json_set_str(c, "message", msg);
}

/* A job admitted now: enqueue's refusal of it is past. */
static void
drop_refusal(cJSON *st)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	int i;

	for (i = cJSON_GetArraySize(conds) - 1; i >= 0; i--) {
		const cJSON *c = cJSON_GetArrayItem(conds, i);
		const char *type = json_str(c, "type");
		const char *reason = json_str(c, "reason");

		if (type != NULL && reason != NULL &&
		    strcmp(type, "Unschedulable") == 0 &&
		    (strcmp(reason, "NotEnqueued") == 0 ||
		    strcmp(reason, "PluginFailed") == 0))
			cJSON_DeleteItemFromArray(conds, i);
	}
}

char *
outcome_invalid_msg(const struct s_job *j)
{
	/* A failed plugin's error names it already ("plugin x failed in
	   job_valid: ..."); any other message gets its name, whatever
	   words it has. */
	if (j->invalid_plugin == NULL ||
	    strcmp(j->invalid_reason, "PluginFailed") == 0)
		return xstrdup(j->invalid_msg);
	return util_printf("%s%s(plugin %s)", j->invalid_msg,
	    *j->invalid_msg ? " " : "", j->invalid_plugin);
}

const char *
outcome_enqueue_reason(const struct s_job *j)
{
	return j->enq_failed ? "PluginFailed" : "NotEnqueued";
}

char *
outcome_enqueue_msg(const struct s_job *j)
{
	const char *m = j->enqueue_msg != NULL ? j->enqueue_msg :
	    "not admitted";

	if (j->enq_veto == NULL || j->enq_failed)
		return xstrdup(m);
	return util_printf("%s (plugin %s)", m, j->enq_veto);
}

char *
outcome_pending_msg(const struct s_task *t)
{
	const struct s_job *j = t->job;
	char *why, *msg;

	if (j == NULL || t->status != TS_PENDING)
		return NULL;
	if (j->group_missing)
		return util_printf("pod group %s (scheduling.k8s.io/v1alpha2) "
		    "does not exist", j->name);
	if (j->invalid) {
		why = outcome_invalid_msg(j);
		msg = util_printf("%s: %s", j->invalid_reason, why);
		free(why);
		return msg;
	}
	if (j->queue == NULL)
		return util_printf("queue %s does not exist", j->queue_name);
	if (j->pg != NULL && strcmp(j->phase, "Pending") == 0 &&
	    j->enqueue_msg != NULL) {
		why = outcome_enqueue_msg(j);
		msg = util_printf("pod group %s is Pending: %s%s%s", j->name,
		    j->enq_failed ? outcome_enqueue_reason(j) : "",
		    j->enq_failed ? ": " : "", why);
		free(why);
		return msg;
	}
	if (j->pg != NULL && strcmp(j->phase, "Pending") == 0)
		return util_printf("pod group %s is Pending", j->name);
	if (j->cond_type != NULL && strcmp(j->cond_type, "Unschedulable") == 0 &&
	    j->min_member > 1)
		return util_printf("%s%s%s", j->cond_msg, t->why ? "; " : "",
		    t->why ? t->why : "");
	return t->why != NULL ? xstrdup(t->why) : NULL;
}

void
outcome_pg_events(const struct s_job *j, outcome_event_fn fn, void *arg)
{
	if (j->invalid) {
		/* The plugin's reason, as the condition has it. */
		char *msg = outcome_invalid_msg(j);

		fn(arg, j, j->invalid_reason, msg);
		free(msg);
	} else if (j->cond_type != NULL &&
	    strcmp(j->cond_type, "Unschedulable") == 0)
		fn(arg, j, "Unschedulable", j->cond_msg);
	if (j->enqueue_msg != NULL) {
		char *msg = outcome_enqueue_msg(j);

		fn(arg, j, outcome_enqueue_reason(j), msg);
		free(msg);
	}
}

static cJSON *
pg_status(struct s_job *j)
{
	const cJSON *old = json_at(j->pg, "status");
	cJSON *st = old ? cJSON_Duplicate(old, 1) : cJSON_CreateObject();
	int scheduled = j->n[TS_BINDING] + j->n[TS_BOUND] + j->n[TS_RUNNING] +
	    j->n[TS_SUCCEEDED] + j->n[TS_FAILED] + j->n[TS_ALLOCATED];
	int finished = j->n[TS_SUCCEEDED] + j->n[TS_FAILED];
	const char *was = json_str(old, "phase"), *phase;

	if (scheduled >= j->min_member && j->ntasks > 0)
		phase = finished == j->ntasks ? "Completed" : "Running";
	else if (was != NULL && strcmp(was, "Running") == 0 &&
	    j->min_member > 0)
		phase = "Unknown";
	else if (j->enqueued || (was != NULL && strcmp(was, "Pending") != 0 &&
	    strcmp(was, "Completed") != 0 && strcmp(was, "Unknown") != 0))
		phase = "Inqueue";
	else if (was != NULL && strcmp(was, "Pending") != 0)
		phase = was;
	else
		phase = "Pending";
	json_set_str(st, "phase", phase);
	json_set_num(st, "running", j->n[TS_RUNNING] + j->n[TS_BOUND] +
	    j->n[TS_BINDING] + j->n[TS_ALLOCATED]);
	json_set_num(st, "succeeded", j->n[TS_SUCCEEDED]);
	json_set_num(st, "failed", j->n[TS_FAILED]);
	if (j->enqueue_msg != NULL && strcmp(phase, "Pending") == 0) {
		/* Refused at enqueue: that is what holds it back. */
		char *msg = outcome_enqueue_msg(j);

		set_condition(st, "Unschedulable", outcome_enqueue_reason(j),
		    msg);
		free(msg);
	} else if (j->invalid) {
		char *msg = outcome_invalid_msg(j);

		set_condition(st, "Unschedulable", j->invalid_reason, msg);
		free(msg);
	} else if (j->cond_type != NULL)
		set_condition(st, j->cond_type, j->cond_reason, j->cond_msg);
	else if (j->enqueued)
		drop_refusal(st);
	return st;
}

/* Every PodGroup's status and every stored queue's allocated. */
void
outcome_build(struct session *ss, struct sched_outcome *out)
{
	int i;

	struct podspec_res *tree;

	memset(out, 0, sizeof *out);
	out->pgs = xcalloc((size_t)ss->njobs + 1, sizeof *out->pgs);
	out->queues = xcalloc((size_t)ss->nqueues + 1,
	    sizeof *out->queues);
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		cJSON *st;

		if (j->pg == NULL || j->queue == NULL)
			continue;
		if (j->group_api == GROUP_K8S) {
			char *why = j->invalid ? outcome_invalid_msg(j) : NULL;

			st = outcome_k8s_pg_status(j, why);
			free(why);
		} else
			st = pg_status(j);
		if (st == NULL)
			continue;
		out->pgs[out->npgs].job = j;
		out->pgs[out->npgs++].status = st;
	}
	/* A queue's allocated rolls up into its ancestors' (spec.parent,
	   root for every queue but root), as Volcano's hierarchy shows it. */
	tree = xcalloc((size_t)ss->nqueues + 1, sizeof *tree);
	for (i = 0; i < ss->nqueues; i++) {
		struct s_queue *q = &ss->queues[i];
		int depth;

		podspec_res_add(&tree[i], &q->allocated, 1);
		for (depth = 0; depth < 64 && strcmp(q->name, "root") != 0;
		    depth++) {
			const char *p = q->parent != NULL && *q->parent != '\0' ?
			    q->parent : "root";

			if ((q = hmap_get(ss->queue_index, p)) == NULL ||
			    q == &ss->queues[i])
				break;
			podspec_res_add(&tree[q->idx], &ss->queues[i].allocated,
			    1);
		}
	}
	for (i = 0; i < ss->nqueues; i++) {
		struct s_queue *q = &ss->queues[i];

		if (q->obj == NULL)
			continue;
		out->queues[out->nqueues].q = q;
		out->queues[out->nqueues++].allocated = outcome_res_list(
		    &tree[i]);
	}
	free(tree);
}

void
outcome_free(struct sched_outcome *out)
{
	int i;

	for (i = 0; i < out->npgs; i++)
		cJSON_Delete(out->pgs[i].status);
	for (i = 0; i < out->nqueues; i++)
		cJSON_Delete(out->queues[i].allocated);
	free(out->pgs);
	free(out->queues);
	memset(out, 0, sizeof *out);
}
