/*
 * The preempt action (within a queue) and the eviction step it shares
 * with reclaim (across queues). For each starving job's pending tasks, in
 * JobOrder and TaskOrder: the nodes that pass the predicates (resources
 * aside), best score first; on each, the candidate victims (Bound or
 * Running, preemptable, of another job; the action's filter decides the
 * queue) are put least important first and go through the plugins'
 * Preemptable or Reclaimable rule; if what they free plus the node's
 * future idle covers the task, victims are evicted in that order until it
 * fits -- for preempt, until its queue may also take it (Allocatable: a
 * queue at its capability makes room from its own lower-priority jobs)
 * -- and the task is pipelined there with nominatedNodeName. The
 * evictions on a node where the task then still cannot go are undone
 * before the next node is tried. A job's statement is committed when the
 * job is then pipelined (gang: enough reserved), else undone. Preempt
 * then runs the same step within each starving job (its own
 * lower-priority tasks as victims).
 *
 * Least important first is Volcano's victim order: between queues the
 * one last in QueueOrder (lowest spec.priority, then largest share);
 * within a queue the job last in JobOrder; within a job the task last in
 * TaskOrder.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

struct scored {
	struct s_node *n;
	double score;
};

static int
by_score(const void *a, const void *b)
{
	double x = ((const struct scored *)a)->score;
	double y = ((const struct scored *)b)->score;

	return x > y ? -1 : x < y;
}

static struct session *sort_ss;
static struct s_queue *sort_pq;		/* the preemptor's queue */

static int
victim_cmp(const void *a, const void *b)
{
	struct s_task *x = *(struct s_task *const *)a;
	struct s_task *y = *(struct s_task *const *)b;
	struct s_job *jx = x->job, *jy = y->job;
	int r;

	if (jx != jy) {
		if (jx->queue != jy->queue && jx->queue != NULL &&
		    jy->queue != NULL) {
			/* The plugins' victim queue order (capacity: the
			   queue nearest the preemptor's in the tree), then
			   the queue last in QueueOrder gives first. */
			if (framework_victim_queue_first(sort_ss, jx->queue,
			    jy->queue, sort_pq))
				return -1;
			if (framework_victim_queue_first(sort_ss, jy->queue,
			    jx->queue, sort_pq))
				return 1;
		}
		/* Then the job last in JobOrder (no fallback: ties go to
		   the tasks' order). */
		if ((r = framework_job_order(sort_ss, jx, jy)) != 0)
			return r > 0 ? -1 : 1;
	}
	/* The last in TaskOrder goes first. */
	if (framework_task_less(sort_ss, y, x))
		return -1;
	if (framework_task_less(sort_ss, x, y))
		return 1;
	return 0;
}

static void
note_all(struct s_job *j, struct s_task **v, int from, int to,
    enum victim_verdict vv)
{
	for (; from < to; from++)
		victim_note(j, v[from], vv, NULL);
}

/* May t go on n now: it fits n's future idle and, for preempt, its
   queue may take it. */
static int
room_for(struct session *ss, struct s_task *t, struct s_node *n, int ep)
{
	struct podspec_res avail;

	node_future_idle(n, &avail);
	if (!predicate_fits(&t->req, &avail))
		return 0;
	return ep != EP_PREEMPTABLE || framework_allocatable(ss,
	    t->job->queue, t);
}

int
preempt_for(struct session *ss, struct statement *st, struct s_task *t,
    int ep, int (*filter)(struct s_task *, struct s_task *))
{
	struct scored *nodes = xcalloc((size_t)ss->nnodes + 1, sizeof *nodes);
	struct s_task **victims = NULL;
	int nn = 0, i, k, done = 0;

	for (i = 0; i < ss->nnodes; i++) {
		struct s_node *n = &ss->nodes[i];

		if (predicate_static(ss, t, n) != FIT_OK ||
		    !predicate_fits(&t->req, &n->alloc))
			continue;
		nodes[nn].n = n;
		nodes[nn++].score = predicate_score(ss, t, n);
	}
	qsort(nodes, (size_t)nn, sizeof *nodes, by_score);
	for (i = 0; i < nn && !done; i++) {
		struct s_node *n = nodes[i].n;
		struct podspec_res avail;
		struct statement nst;
		int nv = 0;

		free(victims);
		victims = xcalloc((size_t)n->ntasks + 1, sizeof *victims);
		for (k = 0; k < n->ntasks; k++) {
			struct s_task *v = n->tasks[k];

			if ((v->status != TS_RUNNING && v->status != TS_BOUND) ||
			    v->job == NULL || !filter(t, v))
				continue;
			/* For explain: what was considered, and kept. */
			t->job->victims_seen++;
			t->job->victim_acts |= ep == EP_PREEMPTABLE ?
			    VA_PREEMPT : VA_RECLAIM;
			if (v->preemptable)
				victims[nv++] = v;
			else {
				t->job->victims_protected++;
				victim_note(t->job, v, VV_PROTECTED, NULL);
			}
		}
		if (nv == 0)
			continue;
		/*
		 * Least important first, before the plugins choose: a rule
		 * that accepts victims in order (gang: while the job keeps its
		 * minimum) then spares the ones that matter more.
		 */
		sort_ss = ss;
		sort_pq = t->job->queue;
		qsort(victims, (size_t)nv, sizeof *victims, victim_cmp);
		if ((nv = framework_victims(ss, ep, t, victims, nv)) == 0)
			continue;
		node_future_idle(n, &avail);
		for (k = 0; k < nv; k++)
			podspec_res_add(&avail, &victims[k]->req, 1);
		if (!predicate_fits(&t->req, &avail)) {
			note_all(t->job, victims, 0, nv, VV_NO_ROOM);
			continue;
		}
		/* This node's evictions, undone if t cannot go there. */
		statement_init(&nst, ss);
		nst.quiet = st->quiet;
		for (k = 0; k < nv && !room_for(ss, t, n, ep); k++) {
			char *why = util_printf("%s for %s/%s",
			    ep == EP_PREEMPTABLE ? "preempted" : "reclaimed",
			    t->ns, t->name);

			statement_evict(&nst, victims[k], why);
			free(why);
		}
		if (k == nv && !room_for(ss, t, n, ep)) {
			statement_discard(&nst);
			note_all(t->job, victims, 0, nv, VV_NO_ROOM);
			continue;
		}
		note_all(t->job, victims, 0, k, VV_EVICTED);
		note_all(t->job, victims, k, nv, VV_SPARED);
		statement_pipeline(&nst, t, n);
		statement_merge(st, &nst);
		free(t->nominated);
		t->nominated = xstrdup(n->name);
		done = 1;
	}
	free(victims);
	free(nodes);
	return done;
}

static int
same_queue(struct s_task *preemptor, struct s_task *victim)
{
	return victim->job != preemptor->job &&
	    victim->job->queue == preemptor->job->queue;
}

static int
same_job(struct s_task *preemptor, struct s_task *victim)
{
	return victim->job == preemptor->job;
}

static int
starving_pending(struct session *ss, struct s_job *j)
{
	int i;

	if (!allocate_schedulable(ss, j) || !framework_job_starving(ss, j))
		return 0;
	for (i = 0; i < j->ntasks; i++)
		if (j->tasks[i]->status == TS_PENDING &&
		    !j->tasks[i]->best_effort && !j->tasks[i]->gated)
			return 1;
	return 0;
}

/* Shared by preempt and reclaim: one statement per preemptor job. */
void
preempt_jobs(struct session *ss, int ep,
    int (*filter)(struct s_task *, struct s_task *), int skip_overused)
{
	struct pq jobs;
	struct s_job *j;
	int i;

	pq_init(&jobs, ss, pq_less_job);
	for (i = 0; i < ss->njobs; i++)
		if (starving_pending(ss, ss->jobs[i]) &&
		    (!skip_overused || !framework_overused(ss,
		    ss->jobs[i]->queue)))
			pq_push(&jobs, ss->jobs[i]);
	while ((j = pq_pop(&jobs)) != NULL) {
		struct statement st;
		struct pq tasks;
		struct s_task *t;
		int k;

		if (!framework_job_valid(ss, j))
			continue;
		pq_init(&tasks, ss, pq_less_task);
		for (k = 0; k < j->ntasks; k++)
			if (j->tasks[k]->status == TS_PENDING &&
			    !j->tasks[k]->best_effort && !j->tasks[k]->gated)
				pq_push(&tasks, j->tasks[k]);
		statement_init(&st, ss);
		while ((t = pq_pop(&tasks)) != NULL) {
			/* Volcano's reclaim asks the reclaimer's queue
			   (capacity: within deserved); preempt does not. */
			if (ep == EP_RECLAIMABLE &&
			    !framework_preemptive(ss, j->queue, t))
				continue;
			if (!preempt_for(ss, &st, t, ep, filter))
				break;
			if (!framework_job_starving(ss, j))
				break;
		}
		pq_free(&tasks);
		if (framework_job_pipelined(ss, j))
			statement_commit(&st);
		else {
			statement_discard(&st);
			victim_settle(j);
		}
	}
	pq_free(&jobs);
}

/*
 * Then within each starving job, as Volcano's second phase: its pending
 * tasks in TaskOrder may take the place of its own running tasks that the
 * plugins let go (priority: of a lower task priority; gang: while the job
 * keeps its minimum). One statement per task, committed; the job's turn
 * ends at the first task that finds no room.
 */
static void
preempt_within_jobs(struct session *ss)
{
	struct pq jobs;
	struct s_job *j;
	int i;

	pq_init(&jobs, ss, pq_less_job);
	for (i = 0; i < ss->njobs; i++)
		if (starving_pending(ss, ss->jobs[i]))
			pq_push(&jobs, ss->jobs[i]);
	while ((j = pq_pop(&jobs)) != NULL) {
		struct pq tasks;
		struct s_task *t;
		int k;

		if (!framework_job_valid(ss, j))
			continue;
		pq_init(&tasks, ss, pq_less_task);
		for (k = 0; k < j->ntasks; k++)
			if (j->tasks[k]->status == TS_PENDING &&
			    !j->tasks[k]->best_effort && !j->tasks[k]->gated)
				pq_push(&tasks, j->tasks[k]);
		while ((t = pq_pop(&tasks)) != NULL) {
			struct statement st;
			int assigned;

			statement_init(&st, ss);
			assigned = preempt_for(ss, &st, t, EP_PREEMPTABLE,
			    same_job);
			statement_commit(&st);
			if (!assigned)
				break;
		}
		pq_free(&tasks);
	}
	pq_free(&jobs);
}

void
preempt_run(struct session *ss)
{
	preempt_jobs(ss, EP_PREEMPTABLE, same_queue, 0);
	preempt_within_jobs(ss);
}
