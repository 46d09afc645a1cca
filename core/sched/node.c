/*
 * A node's accounting in a session, Volcano's NodeInfo: what its tasks
 * take from its allocatable. A task Allocated, Binding, Bound or Running
 * takes its requests from idle into used; one Releasing (being deleted)
 * too, and counts in releasing, which future idle (idle + releasing -
 * pipelined) gives back; one Pipelined holds its requests in pipelined
 * until releasing pods are gone. A task that changes state on its node
 * is removed, changed (task_set_status) and added again. The node keeps
 * its tasks (for victims) and, once the session's free-capacity index is
 * built (capindex.c), moves its entry there with each change.
 */
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

/* idle + releasing - pipelined: what n has once releasing pods are gone. */
void
node_future_idle(const struct s_node *n, struct podspec_res *out)
{
	*out = n->idle;
	podspec_res_add(out, &n->releasing, 1);
	podspec_res_add(out, &n->pipelined, -1);
}

/* kube-scheduler scores a pod without requests as 100m cpu, 200 MiB. */
#define NONZERO_CPU	100
#define NONZERO_MEMORY	(200LL << 20)

static int64_t
nz(int64_t v, int64_t def)
{
	return v > 0 ? v : def;
}

/* t, in its current status, starts taking from n. */
void
node_add_task(struct s_node *n, struct s_task *t)
{
	if (t->status == TS_PIPELINED)
		podspec_res_add(&n->pipelined, &t->req, 1);
	else {
		if (t->status == TS_RELEASING)
			podspec_res_add(&n->releasing, &t->req, 1);
		podspec_res_add(&n->idle, &t->req, -1);
		podspec_res_add(&n->used, &t->req, 1);
		n->nz_cpu += nz(t->req.cpu, NONZERO_CPU);
		n->nz_memory += nz(t->req.memory, NONZERO_MEMORY);
	}
	XGROW(n->tasks, n->captasks, n->ntasks + 1);
	n->tasks[n->ntasks++] = t;
	n->naffine += t->has_pod_affinity;
	n->ver++;
	if (n->cx != NULL)
		capindex_update(n->cx, n);
}

/* t, in the status it was added in, stops taking from n. */
void
node_remove_task(struct s_node *n, struct s_task *t)
{
	int i;

	if (t->status == TS_PIPELINED)
		podspec_res_add(&n->pipelined, &t->req, -1);
	else {
		if (t->status == TS_RELEASING)
			podspec_res_add(&n->releasing, &t->req, -1);
		podspec_res_add(&n->idle, &t->req, 1);
		podspec_res_add(&n->used, &t->req, -1);
		n->nz_cpu -= nz(t->req.cpu, NONZERO_CPU);
		n->nz_memory -= nz(t->req.memory, NONZERO_MEMORY);
	}
	for (i = n->ntasks - 1; i >= 0; i--)
		if (n->tasks[i] == t) {
			n->tasks[i] = n->tasks[--n->ntasks];
			n->naffine -= t->has_pod_affinity;
			break;
		}
	n->ver++;
	if (n->cx != NULL)
		capindex_update(n->cx, n);
}
