/*
 * Internals of the scheduler: the session a cycle works on (a snapshot of
 * schedulable nodes, jobs and their tasks as plain C structs), built by
 * session.c from a cache of parsed objects that only re-reads what
 * changed since the last cycle; the C predicates and scores (predicate.c);
 * the allocate action (allocate.c); and the driver that runs cycles and
 * dispatches their binds (sched.c).
 */
#ifndef VOLRAY_SCHED_INT_H
#define VOLRAY_SCHED_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include <uv.h>

#include "lib/hmap.h"
#include "lib/podspec.h"
#include "registry/registry.h"
#include "sched/sched.h"
#include "store/store.h"

/* A schedulable node: Ready, with what is free on it. */
struct sched_node {
	const char *name;
	cJSON *obj;			/* the cached Node (labels, taints) */
	struct podspec_res alloc;
	struct podspec_res idle;	/* alloc - used by bound pods */
	int64_t nz_cpu, nz_memory;	/* used, counting zero requests as
					   kube-scheduler's defaults (scores) */
	int unschedulable;
	int ready;
	int has_taints;
};

enum task_state { TASK_PENDING, TASK_ALLOCATED, TASK_BOUND };

struct sched_job;

struct sched_task {
	const char *ns, *name, *uid;
	cJSON *obj;			/* the cached Pod */
	struct podspec_res req;
	long long priority;
	int has_selector;		/* nodeSelector or node affinity */
	enum task_state state;
	struct sched_node *node;	/* allocated or bound to */
	struct sched_job *job;
	char *why;			/* why it stays pending (malloc'd) */
};

/* A job: a PodGroup's pods, or one bare pod as an implicit group. */
struct sched_job {
	char *key;			/* "ns/podgroup" or "ns/pod:uid" */
	char *podgroup;			/* NULL for an implicit group */
	const char *ns;
	int min_member;
	long long priority;
	const char *created;
	struct sched_task **tasks;
	int ntasks, captasks;
	int bound;			/* tasks already running or bound */
};

struct sched_session {
	struct sched_node *nodes;
	int nnodes;
	struct sched_job **jobs;
	int njobs;
	hmap *job_index;		/* key -> job */
	struct sched_task *tasks;
	int ntasks;
	hmap *node_index;		/* name -> node */
	int next_node;			/* where the next scan starts */
};

/* A parsed object kept across cycles until its revision changes. */
struct sched_cached {
	char *key;
	uint64_t rev;
	cJSON *obj;
	struct podspec_res res;		/* node: allocatable; pod: requests */
	int seen;			/* in this cycle's list */
};

struct sched {
	uv_loop_t *loop;
	store *st;
	registry *rg;
	uv_timer_t timer;
	uv_timer_t soon;
	hmap *nodes_cache;		/* name -> sched_cached */
	hmap *pods_cache;		/* uid -> sched_cached */
	struct sched_stats stats;
	int pending_work;
	int running;
};

/* session.c */
void session_open(struct sched *, struct sched_session *);
void session_close(struct sched_session *);

/* predicate.c: 0 when the task fits the node, else a reason key. */
enum fit_reason {
	FIT_OK, FIT_CPU, FIT_MEMORY, FIT_PODS, FIT_EXT, FIT_SELECTOR,
	FIT_TAINT, FIT_UNSCHEDULABLE, FIT_NREASONS
};
enum fit_reason predicate_fit(const struct sched_task *,
    const struct sched_node *);
/* Higher is better: least-requested and balanced allocation, 0..200. */
double predicate_score(const struct sched_task *, const struct sched_node *);
/* Count t on n (sign 1) or take it back (-1), idle and score usage. */
void predicate_account(struct sched_node *, const struct podspec_res *,
    int sign);
/* kube-scheduler's "0/5 nodes are available: ..." (malloc'd). */
char *predicate_message(int nnodes, const int counts[FIT_NREASONS]);

/* allocate.c: place pending tasks; fills binds (tasks to dispatch). */
int allocate_run(struct sched_session *, struct sched_task ***binds);

#endif
