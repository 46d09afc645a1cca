/*
 * The enqueue action: admit Pending PodGroups (phase Inqueue) so that
 * allocate considers them. Queues in QueueOrder, each queue's Pending
 * jobs in JobOrder, one job per queue turn; a job is admitted when its
 * queue is Open and it has no minResources or JobEnqueueable passes
 * (proportion: the queue's capability; overcommit: the cluster's room).
 * A group of one (minMember 1, as the implicit group of a bare pod) is
 * asked about like any other, but reserves nothing once admitted: the
 * JobEnqueued handlers, which count an admitted job's minResources
 * against the budgets, hear only of gangs. Counting a one-pod group's
 * minimum while its queue is at its deserved share is how Volcano's
 * one-pod groups hold a budget they cannot use (jobs stuck Inqueue with
 * free capacity, volcano#3910); overcommit abstains on them for the same
 * reason, while a queue's capability holds them as it holds gangs.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

void
enqueue_run(struct session *ss)
{
	struct pq queues, *jobs = xcalloc((size_t)ss->nqueues + 1,
	    sizeof *jobs);
	char *in_pq = xcalloc((size_t)ss->nqueues + 1, 1);
	int i;

	pq_init(&queues, ss, pq_less_queue);
	for (i = 0; i < ss->nqueues; i++)
		pq_init(&jobs[i], ss, pq_less_job);
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		if (j->queue == NULL || j->pg == NULL ||
		    strcmp(j->phase, "Pending") != 0)
			continue;
		pq_push(&jobs[j->queue->idx], j);
		if (!in_pq[j->queue->idx]) {
			in_pq[j->queue->idx] = 1;
			pq_push(&queues, j->queue);
		}
	}
	while (queues.n > 0) {
		struct s_queue *q = pq_pop(&queues);
		struct s_job *j = pq_pop(&jobs[q->idx]);

		if (j == NULL)
			continue;
		free(j->enqueue_msg);
		j->enqueue_msg = NULL;
		if (strcmp(q->state, "Open") != 0)
			j->enqueue_msg = util_printf("queue %s is %s", q->name,
			    q->state);
		else if (!j->has_min_res ||
		    framework_job_enqueueable(ss, j, &j->enqueue_msg)) {
			j->enqueued = 1;
			j->phase = "Inqueue";
			j->ver++;
			if (j->min_member > 1)
				framework_job_enqueued(ss, j);
		} else if (j->enqueue_msg == NULL)
			j->enqueue_msg = util_printf("queue resource quota "
			    "insufficient");
		pq_push(&queues, q);
	}
	pq_free(&queues);
	for (i = 0; i < ss->nqueues; i++)
		pq_free(&jobs[i]);
	free(jobs);
	free(in_pq);
}
