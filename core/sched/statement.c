/*
 * Statements: the session changes of one job's turn, kept so that they
 * can be undone. Allocate and Pipeline put a task on a node (idle, or the
 * future idle of a pipelined reservation) and Evict marks a running task
 * Releasing; each changes only the session (task status, node accounting,
 * the plugins' allocate/deallocate handlers). Discard undoes them in
 * reverse. Commit makes them decisions: an allocation becomes a bind to
 * dispatch, an eviction a pod to delete; a pipeline is not persisted (a
 * reservation for this session).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

void
statement_init(struct statement *st, struct session *ss)
{
	memset(st, 0, sizeof *st);
	st->ss = ss;
}

static struct stmt_op *
push(struct statement *st, int kind, struct s_task *t, struct s_node *n)
{
	struct stmt_op *op;

	XGROW(st->ops, st->capops, st->nops + 1);
	op = &st->ops[st->nops++];
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->t = t;
	op->n = n;
	op->prev = t->status;
	return op;
}

void
statement_allocate(struct statement *st, struct s_task *t, struct s_node *n)
{
	push(st, STMT_ALLOCATE, t, n);
	task_set_status(t, TS_ALLOCATED);
	t->node = n;
	node_add_task(n, t);
	if (!st->quiet)
		framework_on_allocate(st->ss, t);
}

void
statement_pipeline(struct statement *st, struct s_task *t, struct s_node *n)
{
	push(st, STMT_PIPELINE, t, n);
	task_set_status(t, TS_PIPELINED);
	t->node = n;
	node_add_task(n, t);
	if (!st->quiet)
		framework_on_allocate(st->ss, t);
}

void
statement_evict(struct statement *st, struct s_task *t, const char *reason)
{
	struct stmt_op *op = push(st, STMT_EVICT, t, t->node);

	op->reason = xstrdup(reason);
	if (t->node != NULL)
		node_remove_task(t->node, t);
	task_set_status(t, TS_RELEASING);
	if (t->node != NULL)
		node_add_task(t->node, t);
	if (!st->quiet)
		framework_on_deallocate(st->ss, t);
}

static void
undo(struct statement *st, struct stmt_op *op)
{
	struct s_task *t = op->t;

	switch (op->kind) {
	case STMT_ALLOCATE:
	case STMT_PIPELINE:
		node_remove_task(op->n, t);
		t->node = NULL;
		task_set_status(t, op->prev);
		if (!st->quiet)
			framework_on_deallocate(st->ss, t);
		break;
	case STMT_EVICT:
		if (op->n != NULL)
			node_remove_task(op->n, t);
		task_set_status(t, op->prev);
		if (op->n != NULL)
			node_add_task(op->n, t);
		if (!st->quiet)
			framework_on_allocate(st->ss, t);
		break;
	}
}

void
statement_discard(struct statement *st)
{
	int i;

	for (i = st->nops - 1; i >= 0; i--) {
		undo(st, &st->ops[i]);
		free(st->ops[i].reason);
	}
	free(st->ops);
	st->ops = NULL;
	st->nops = st->capops = 0;
}

void
statement_commit(struct statement *st)
{
	struct session *ss = st->ss;
	int i, bound = 0;

	for (i = 0; i < st->nops; i++) {
		struct stmt_op *op = &st->ops[i];

		switch (op->kind) {
		case STMT_ALLOCATE:
			bound = 1;
			/* session_open made room for every task, and a
			   task is bound once: the array never moves while
			   the loop reads it. */
			if (ss->nbinds == ss->capbinds)
				fatal("statement_commit: more binds than tasks");
			ss->binds[ss->nbinds].t = op->t;
			ss->binds[ss->nbinds++].n = op->n;
			task_set_status(op->t, TS_BINDING);
			break;
		case STMT_EVICT:
			XGROW(ss->evicts, ss->capevicts, ss->nevicts + 1);
			ss->evicts[ss->nevicts].t = op->t;
			ss->evicts[ss->nevicts++].reason = op->reason;
			op->reason = NULL;
			break;
		case STMT_PIPELINE:
			break;
		}
		free(op->reason);
	}
	free(st->ops);
	st->ops = NULL;
	st->nops = st->capops = 0;
	if (bound && ss->on_commit != NULL) {
		__atomic_store_n(&ss->nbinds_pub, ss->nbinds, __ATOMIC_RELEASE);
		ss->on_commit(ss->commit_arg);
	}
}

void
statement_keep(struct statement *st)
{
	int i;

	for (i = 0; i < st->nops; i++)
		free(st->ops[i].reason);
	free(st->ops);
	st->ops = NULL;
	st->nops = st->capops = 0;
}

/*
 * A statement tried within another (preempt's per node) joins it: its
 * operations move to the end of dst's, to be committed or undone with
 * them.
 */
void
statement_merge(struct statement *dst, struct statement *src)
{
	if (src->nops > 0) {
		XGROW(dst->ops, dst->capops, (size_t)dst->nops +
		    (size_t)src->nops);
		memcpy(dst->ops + dst->nops, src->ops, (size_t)src->nops *
		    sizeof *src->ops);
		dst->nops += src->nops;
	}
	free(src->ops);
	src->ops = NULL;
	src->nops = 0;
	src->capops = 0;
}
