/*
 * Predicates and scores in C, the fast path every placement takes: a node
 * fits a task when it is schedulable, matches the pod's nodeSelector and
 * required node affinity, carries no NoSchedule/NoExecute taint the pod
 * does not tolerate, and has the task's requests idle (cpu, memory, pod
 * count, extended resources). The score favours the least requested
 * node, balanced between cpu and memory, as kube-scheduler's defaults do.
 * The reasons of the nodes that did not fit are counted into
 * kube-scheduler's message for the pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "sched/sched_int.h"

enum fit_reason
predicate_fit(const struct sched_task *t, const struct sched_node *n)
{
	const char *short_of;

	if (n->unschedulable)
		return FIT_UNSCHEDULABLE;
	/* Resources first: the cheap check that fails most often. */
	if ((short_of = podspec_res_exceeds(&t->req, &n->idle)) != NULL)
		goto short_of;
	if (n->has_taints && podspec_untolerated(t->obj, n->obj) != NULL)
		return FIT_TAINT;
	if (t->has_selector && !podspec_node_matches(t->obj, n->obj))
		return FIT_SELECTOR;
	return FIT_OK;
short_of:
	/* Report as kube-scheduler's filter order does: taints, affinity. */
	if (n->has_taints && podspec_untolerated(t->obj, n->obj) != NULL)
		return FIT_TAINT;
	if (t->has_selector && !podspec_node_matches(t->obj, n->obj))
		return FIT_SELECTOR;
	if (strcmp(short_of, "cpu") == 0)
		return FIT_CPU;
	if (strcmp(short_of, "memory") == 0)
		return FIT_MEMORY;
	if (strcmp(short_of, "pods") == 0)
		return FIT_PODS;
	return FIT_EXT;
}

static double
ratio(int64_t free_after, int64_t alloc)
{
	return alloc > 0 ? (double)free_after / (double)alloc : 0;
}

/* kube-scheduler scores a pod without requests as 100m cpu, 200 MiB. */
#define NONZERO_CPU	100
#define NONZERO_MEMORY	(200LL << 20)

static int64_t
nz(int64_t v, int64_t def)
{
	return v > 0 ? v : def;
}

void
predicate_account(struct sched_node *n, const struct podspec_res *req,
    int sign)
{
	podspec_res_add(&n->idle, req, -sign);
	n->nz_cpu += sign * nz(req->cpu, NONZERO_CPU);
	n->nz_memory += sign * nz(req->memory, NONZERO_MEMORY);
}

double
predicate_score(const struct sched_task *t, const struct sched_node *n)
{
	double cpu = ratio(n->alloc.cpu - n->nz_cpu - nz(t->req.cpu,
	    NONZERO_CPU), n->alloc.cpu);
	double mem = ratio(n->alloc.memory - n->nz_memory - nz(t->req.memory,
	    NONZERO_MEMORY), n->alloc.memory);
	double least = (cpu + mem) * 50;		/* 0..100 */
	double balanced = 100 - (cpu > mem ? cpu - mem : mem - cpu) * 100;

	return least + balanced;
}

struct reason_count {
	const char *word;
	int n;
};

static int
by_word(const void *a, const void *b)
{
	return strcmp(((const struct reason_count *)a)->word,
	    ((const struct reason_count *)b)->word);
}

char *
predicate_message(int nnodes, const int counts[FIT_NREASONS])
{
	static const char *const words[FIT_NREASONS] = {
		"", "Insufficient cpu", "Insufficient memory", "Too many pods",
		"Insufficient extended resources",
		"node(s) didn't match Pod's node affinity/selector",
		"node(s) had untolerated taint",
		"node(s) were unschedulable",
	};
	struct reason_count rc[FIT_NREASONS];
	char *msg = util_printf("0/%d nodes are available", nnodes), *next;
	int i, n = 0;

	/* kube-scheduler lists the reasons sorted by their text. */
	for (i = 1; i < FIT_NREASONS; i++)
		if (counts[i] > 0) {
			rc[n].word = words[i];
			rc[n++].n = counts[i];
		}
	qsort(rc, (size_t)n, sizeof rc[0], by_word);
	for (i = 0; i < n; i++) {
		next = util_printf("%s%s %d %s", msg, i == 0 ? ":" : ",",
		    rc[i].n, rc[i].word);
		free(msg);
		msg = next;
	}
	next = util_printf("%s.", msg);
	free(msg);
	return next;
}
