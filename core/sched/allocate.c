/*
 * The allocate action: jobs in order (higher priority first, then older,
 * then by key), each job's pending tasks in order (higher priority first,
 * then by name); each task goes to the node that fits it with the best
 * score, and the node's idle resources shrink at once so the next task
 * sees them. A job is placed all or nothing: unless its bound tasks plus
 * the ones just placed reach its minMember (the gang rule; an implicit
 * group's minMember is 1), every placement of the job is undone and its
 * tasks wait, told why. Placements that stand are returned for dispatch.
 *
 * Each task scores at most enough() feasible nodes, from where the last
 * scan stopped (kube-scheduler's percentageOfNodesToScore); the
 * free-capacity index and the plugins' extension points arrive with the
 * rest of the framework.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "sched/sched_int.h"

static int
job_cmp(const void *a, const void *b)
{
	const struct sched_job *x = *(struct sched_job *const *)a;
	const struct sched_job *y = *(struct sched_job *const *)b;
	int c;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->created != NULL && y->created != NULL &&
	    (c = strcmp(x->created, y->created)) != 0)
		return c;
	return strcmp(x->key, y->key);
}

static int
task_cmp(const void *a, const void *b)
{
	const struct sched_task *x = *(struct sched_task *const *)a;
	const struct sched_task *y = *(struct sched_task *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * How many feasible nodes to score before choosing, as kube-scheduler's
 * percentageOfNodesToScore: 50% of a small cluster down to 5% of a large
 * one, at least 100.
 */
static int
enough(int nnodes)
{
	int pct = 50 - nnodes / 125, want;

	if (pct < 5)
		pct = 5;
	want = nnodes * pct / 100;
	return want < 100 ? (nnodes < 100 ? nnodes : 100) : want;
}

/*
 * The best node for t, or NULL with *why set. The scan starts where the
 * last one stopped, so successive tasks spread over the cluster and each
 * scores only enough() feasible nodes.
 */
static struct sched_node *
place(struct sched_session *ss, struct sched_task *t)
{
	int counts[FIT_NREASONS] = { 0 }, i, seen, feasible = 0;
	int want = enough(ss->nnodes);
	struct sched_node *best = NULL;
	double best_score = 0;

	for (seen = 0; seen < ss->nnodes && feasible < want; seen++) {
		struct sched_node *n;
		enum fit_reason r;

		i = (ss->next_node + seen) % ss->nnodes;
		n = &ss->nodes[i];
		r = predicate_fit(t, n);
		double sc;

		if (r != FIT_OK) {
			counts[r]++;
			continue;
		}
		feasible++;
		sc = predicate_score(t, n);
		if (best == NULL || sc > best_score) {
			best = n;
			best_score = sc;
		}
	}
	if (ss->nnodes > 0)
		ss->next_node = (ss->next_node + seen) % ss->nnodes;
	if (best == NULL) {
		free(t->why);
		t->why = predicate_message(ss->nnodes, counts);
	}
	return best;
}

int
allocate_run(struct sched_session *ss, struct sched_task ***binds_out)
{
	struct sched_task **binds = calloc(ss->ntasks + 1, sizeof *binds);
	struct sched_task **placed = calloc(ss->ntasks + 1, sizeof *placed);
	int nbinds = 0, i, k;

	if (binds == NULL || placed == NULL)
		fatal("out of memory");
	qsort(ss->jobs, (size_t)ss->njobs, sizeof *ss->jobs, job_cmp);
	for (i = 0; i < ss->njobs; i++) {
		struct sched_job *j = ss->jobs[i];
		int nplaced = 0, pending = 0;

		if (j->ntasks == 0)
			continue;
		qsort(j->tasks, (size_t)j->ntasks, sizeof *j->tasks, task_cmp);
		for (k = 0; k < j->ntasks; k++) {
			struct sched_task *t = j->tasks[k];
			struct sched_node *n = place(ss, t);

			if (n == NULL) {
				pending++;
				continue;
			}
			t->state = TASK_ALLOCATED;
			t->node = n;
			predicate_account(n, &t->req, 1);
			placed[nplaced++] = t;
		}
		if (j->bound + nplaced >= j->min_member) {
			for (k = 0; k < nplaced; k++)
				binds[nbinds++] = placed[k];
			continue;
		}
		if (j->podgroup == NULL)
			continue;	/* a bare pod: its own reason says it */
		/* Not enough for the gang: give everything back. */
		for (k = 0; k < nplaced; k++) {
			struct sched_task *t = placed[k];

			predicate_account(t->node, &t->req, -1);
			t->state = TASK_PENDING;
			t->node = NULL;
		}
		for (k = 0; k < j->ntasks; k++) {
			struct sched_task *t = j->tasks[k];
			char *gang = util_printf("%d/%d tasks in gang "
			    "unschedulable: pod group is not ready, %d Pending, "
			    "%d minAvailable%s%s", j->ntasks, j->ntasks,
			    j->ntasks, j->min_member, t->why ? "; " : "",
			    t->why ? t->why : "");

			free(t->why);
			t->why = gang;
		}
		(void)pending;
	}
	free(placed);
	*binds_out = binds;
	return nbinds;
}
