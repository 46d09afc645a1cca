/*
 * The reclaim action: a starving job of a queue that is not Overused
 * takes back resources from Running tasks of other queues that let them
 * go (reclaimable not false), as the plugins' Reclaimable rule allows
 * (proportion: while the victim's queue is above its deserved share;
 * gang: while the victim's job keeps its minAvailable). The eviction
 * step is preempt.c's.
 */
#include "sched/sched_int.h"


static int
other_reclaimable_queue(struct s_task *preemptor, struct s_task *victim)
{
	return victim->job->queue != preemptor->job->queue &&
	    victim->job->queue != NULL && victim->job->queue->reclaimable &&
	    victim->status == TS_RUNNING;
}

void
reclaim_run(struct session *ss)
{
	preempt_jobs(ss, EP_RECLAIMABLE, other_reclaimable_queue, 1);
}
