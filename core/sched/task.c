/*
 * Tasks and their states. A task is in one of the reference's states
 * (Pending, Allocated, Pipelined, Binding, Bound, Running, Releasing,
 * Succeeded, Failed, Unknown); its job counts its tasks per state, and
 * per role (volcano.sh/task-spec) for minTaskMember, and adds up the
 * requests of its allocated-set (Allocated, Binding, Bound, Running),
 * which its queue adds up too. task_set_status is the one way a task
 * changes state during a session and keeps all of those right; the
 * node's side of the accounting is node.c's.
 *
 * A task listed lazily (a bound pod: the snapshot needs only its
 * summary) has its pod parsed when something first reads it (task_obj).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

const char *const task_status_names[TS_N] = {
	"Pending", "Allocated", "Pipelined", "Binding", "Bound", "Running",
	"Releasing", "Succeeded", "Failed", "Unknown",
};

int
task_allocated(enum task_status s)
{
	return s == TS_ALLOCATED || s == TS_BINDING || s == TS_BOUND ||
	    s == TS_RUNNING;
}

/* A task's pod as a tree, parsed on first use when it was listed lazily
   (a bound pod: the snapshot needs only its summary). */
cJSON *
task_obj(struct session *ss, struct s_task *t)
{
	if (t->obj != NULL || t->lazy == NULL || ss->src.tree == NULL)
		return t->obj;
	if ((t->obj = ss->src.tree(ss->src.arg, t->lazy)) == NULL)
		return NULL;
	XGROW(ss->trees, ss->captrees, ss->ntrees + 1);
	ss->trees[ss->ntrees++] = t->obj;
	return t->obj;
}

/* The job's counts of the tasks of a role, added when new. */
struct role_count *
task_role(struct s_job *j, const char *role)
{
	int i;

	for (i = 0; i < j->nroles; i++)
		if (strcmp(j->roles[i].role, role) == 0)
			return &j->roles[i];
	j->roles = xreallocarray(j->roles, (size_t)j->nroles + 1,
	    sizeof *j->roles);
	memset(&j->roles[j->nroles], 0, sizeof *j->roles);
	j->roles[j->nroles].role = role;
	return &j->roles[j->nroles++];
}

/* Move t to status s, keeping the job's counts and allocated right. */
void
task_set_status(struct s_task *t, enum task_status s)
{
	struct s_job *j = t->job;

	if (j != NULL) {
		struct role_count *rc = task_role(j, t->role);

		j->n[t->status]--;
		rc->n[t->status]--;
		if (task_allocated(t->status)) {
			podspec_res_add(&j->allocated, &t->req, -1);
			if (j->queue) {
				podspec_res_add(&j->queue->allocated, &t->req, -1);
				j->queue->ver++;
			}
		}
		j->n[s]++;
		rc->n[s]++;
		if (task_allocated(s)) {
			podspec_res_add(&j->allocated, &t->req, 1);
			if (j->queue) {
				podspec_res_add(&j->queue->allocated, &t->req, 1);
				j->queue->ver++;
			}
		}
		j->ver++;
		j->active = 1;
	}
	t->status = s;
	t->ver++;
}

/* A job's counts from its tasks' states, from scratch (at open). */
void
task_recount(struct s_job *j)
{
	int i;

	memset(j->n, 0, sizeof j->n);
	memset(&j->allocated, 0, sizeof j->allocated);
	for (i = 0; i < j->nroles; i++)
		memset(j->roles[i].n, 0, sizeof j->roles[i].n);
	for (i = 0; i < j->ntasks; i++) {
		struct s_task *t = j->tasks[i];

		j->n[t->status]++;
		task_role(j, t->role)->n[t->status]++;
		if (task_allocated(t->status))
			podspec_res_add(&j->allocated, &t->req, 1);
	}
	j->ver++;
}
