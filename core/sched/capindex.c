/*
 * The session's index of nodes by free capacity: a segment tree over the
 * node array whose every entry holds, per resource (cpu, memory, pods),
 * the most any node below it has free. A node's "free" is the larger of
 * its idle and its future idle (idle + releasing - pipelined), so one
 * index serves both allocation and pipelining; the exact fit is still
 * checked by the caller. Finding the next node at or after a position
 * that may fit a request skips every subtree that cannot: full nodes
 * cost nothing, where a scan paid a fit check for each of them.
 *
 * Extended resources are not indexed (the caller's fit check sees them).
 * Updates come from node_add_task / node_remove_task (node.c) once the
 * index is built: O(log n) each. The index reads the nodes' fields and
 * calls nothing back.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The larger of idle and future idle (node_future_idle's sum, for the
   three indexed resources alone). */
static void
leaf_of(const struct s_node *n, struct cap_free *out)
{
	out->cpu = max64(n->idle.cpu, n->idle.cpu + n->releasing.cpu -
	    n->pipelined.cpu);
	out->memory = max64(n->idle.memory, n->idle.memory +
	    n->releasing.memory - n->pipelined.memory);
	out->pods = max64(n->idle.pods, n->idle.pods + n->releasing.pods -
	    n->pipelined.pods);
}

static void
pull(struct capindex *cx, int i)
{
	const struct cap_free *l = &cx->max[2 * i], *r = &cx->max[2 * i + 1];

	cx->max[i].cpu = max64(l->cpu, r->cpu);
	cx->max[i].memory = max64(l->memory, r->memory);
	cx->max[i].pods = max64(l->pods, r->pods);
}

void
capindex_build(struct capindex *cx, struct s_node *nodes, int n)
{
	int i;

	cx->n = n;
	for (cx->size = 1; cx->size < n; cx->size *= 2)
		;
	cx->max = xmalloc(2 * (size_t)cx->size * sizeof *cx->max);
	for (i = 0; i < cx->size; i++) {
		struct cap_free *leaf = &cx->max[cx->size + i];

		if (i < n) {
			leaf_of(&nodes[i], leaf);
			nodes[i].cx = cx;
		} else
			leaf->cpu = leaf->memory = leaf->pods = INT64_MIN;
	}
	for (i = cx->size - 1; i >= 1; i--)
		pull(cx, i);
}

void
capindex_update(struct capindex *cx, const struct s_node *n)
{
	int i = cx->size + n->idx;

	leaf_of(n, &cx->max[i]);
	for (i /= 2; i >= 1; i /= 2)
		pull(cx, i);
}

static int
may_fit(const struct cap_free *f, const struct podspec_res *req)
{
	return req->cpu <= f->cpu && req->memory <= f->memory &&
	    req->pods <= f->pods;
}

/* The first node index under entry i. */
static int
first_leaf(const struct capindex *cx, int i)
{
	while (i < cx->size)
		i *= 2;
	return i - cx->size;
}

/*
 * The first node at or after from, before to, that may fit: a walk from
 * its leaf, not from the root, so a scan that calls this for each next
 * node pays little for each step. An entry that may fit is entered (its
 * maxima come from different nodes, so it may still hold none); one that
 * cannot gives way to the next entry to its right.
 */
int
capindex_next(const struct capindex *cx, int from, int to,
    const struct podspec_res *req)
{
	int i;

	if (from < 0)
		from = 0;
	if (cx->n == 0 || from >= to)
		return -1;
	i = cx->size + from;
	for (;;) {
		if (may_fit(&cx->max[i], req)) {
			if (i >= cx->size)
				return i - cx->size < to ? i - cx->size : -1;
			i *= 2;
			continue;
		}
		/* Up past every right child: its right neighbour is next. */
		while (i & 1)
			if ((i >>= 1) == 0)
				return -1;
		i++;
		if (first_leaf(cx, i) >= to)
			return -1;
	}
}

void
capindex_free(struct capindex *cx)
{
	free(cx->max);
	cx->max = NULL;
	cx->n = cx->size = 0;
}
