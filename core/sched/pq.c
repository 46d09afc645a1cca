/*
 * A binary heap of jobs, queues or tasks, ordered by the session's order
 * functions (the plugins' job_order, queue_order and task_order under the
 * tier rules), as Volcano's PriorityQueue: an element is compared when it
 * is pushed or sifted, so an order that changes during the session (a
 * queue's share, a job's readiness) takes effect at the next push.
 */
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

void
pq_init(struct pq *q, struct session *ss,
    int (*less)(struct session *, void *, void *))
{
	q->a = NULL;
	q->n = q->cap = 0;
	q->ss = ss;
	q->less = less;
}

void
pq_push(struct pq *q, void *x)
{
	int i;

	XGROW(q->a, q->cap, q->n + 1);
	i = q->n++;
	while (i > 0) {
		int parent = (i - 1) / 2;

		if (!q->less(q->ss, x, q->a[parent]))
			break;
		q->a[i] = q->a[parent];
		i = parent;
	}
	q->a[i] = x;
}

void *
pq_pop(struct pq *q)
{
	void *top, *last;
	int i = 0;

	if (q->n == 0)
		return NULL;
	top = q->a[0];
	last = q->a[--q->n];
	for (;;) {
		int c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && q->less(q->ss, q->a[c + 1], q->a[c]))
			c++;
		if (!q->less(q->ss, q->a[c], last))
			break;
		q->a[i] = q->a[c];
		i = c;
	}
	if (q->n > 0)
		q->a[i] = last;
	return top;
}

void
pq_free(struct pq *q)
{
	free(q->a);
	q->a = NULL;
	q->n = q->cap = 0;
}

int
pq_less_job(struct session *ss, void *a, void *b)
{
	return framework_job_less(ss, a, b);
}

int
pq_less_queue(struct session *ss, void *a, void *b)
{
	return framework_queue_less(ss, a, b);
}

int
pq_less_task(struct session *ss, void *a, void *b)
{
	return framework_task_less(ss, a, b);
}
