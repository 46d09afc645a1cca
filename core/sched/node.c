/*
 * A node's accounting in a session, Volcano's NodeInfo: what its tasks
 * take from its allocatable. A task Allocated, Binding, Bound or Running
 * takes its requests from idle into used; one Releasing (being deleted)
 * too, and counts in releasing, which future idle (idle + releasing -
 * pipelined) gives back; one Pipelined holds its requests in pipelined
 * until releasing pods are gone. A task that changes state on its node
 * is removed, changed (task_set_status) and added again. The node keeps
 * its tasks (for victims) and, once the session's free-capacity index is
 * built (capindex.c), moves its entry there with each change; once the
 * topology is built, its HyperNodes' sums move with it.
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

/*
 * n's HyperNodes follow it: their sums of future idle and used move by
 * what n's moved since fi0 and used0 (nothing to do before the topology
 * is built).
 */
static void
shift_hypernodes(struct s_node *n, const struct podspec_res *fi0,
    const struct podspec_res *used0)
{
	struct podspec_res fi, dfi, dused;
	int i;

	node_future_idle(n, &fi);
	dfi = fi;
	podspec_res_add(&dfi, fi0, -1);
	dused = n->used;
	podspec_res_add(&dused, used0, -1);
	for (i = 0; i < n->nhns; i++) {
		podspec_res_add(&n->hns[i]->fidle, &dfi, 1);
		podspec_res_add(&n->hns[i]->used, &dused, 1);
	}
}

/* t, in its current status, starts taking from n. */
void
node_add_task(struct s_node *n, struct s_task *t)
{
	struct podspec_res fi0, used0 = n->used;

	if (n->nhns > 0)
		node_future_idle(n, &fi0);
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
	if (n->nhns > 0)
		shift_hypernodes(n, &fi0, &used0);
}

/* t, in the status it was added in, stops taking from n. */
void
node_remove_task(struct s_node *n, struct s_task *t)
{
	struct podspec_res fi0, used0 = n->used;
	int i;

	if (n->nhns > 0)
		node_future_idle(n, &fi0);
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
	if (n->nhns > 0)
		shift_hypernodes(n, &fi0, &used0);
}
