/*
 * The scheduler: binds every pod whose schedulerName is volcano or the
 * default to a node, in cycles. Each cycle opens a session on a snapshot
 * (Ready nodes, jobs = PodGroups or bare pods, their tasks), runs the
 * allocate action (C predicates and scores; a job's tasks bound all or
 * nothing against its PodGroup's minMember), writes the binds of the
 * cycle together (one group commit), and tells every pod left pending why,
 * in kube-scheduler's words. Cycles run every second and start early when
 * new pending pods arrive.
 *
 * This is the framework's first part: queues, the other actions
 * (enqueue, backfill, preempt, reclaim) and the Lua plugins come next.
 */
#ifndef VOLRAY_SCHED_H
#define VOLRAY_SCHED_H

#include <stdint.h>
#include <uv.h>

#include "registry/registry.h"
#include "store/store.h"

typedef struct sched sched;

struct sched_stats {
	uint64_t cycles;
	uint64_t binds;
	uint64_t unschedulable;		/* pods told why they wait */
	uint64_t last_cycle_us;
};

sched *sched_new(uv_loop_t *, store *, registry *);
void sched_start(sched *);
void sched_stats_get(const sched *, struct sched_stats *);

#endif
