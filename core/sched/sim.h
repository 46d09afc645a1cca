/*
 * A job trace played in virtual time on simulated nodes (sim.c), for
 * `volray sim`; the trace's file format in sim_trace.c.
 */
#ifndef VOLRAY_SIM_H
#define VOLRAY_SIM_H

#include <stddef.h>

struct sim_job {
	double arrival;			/* seconds from the start */
	double duration;		/* each pod's, seconds */
	double cpu_m, memory;		/* per pod: millicores, bytes */
	int tasks, min_member;
	long long priority;
	const char *queue;		/* one of the trace's queues */
};

struct sim_queue {
	char *name;
	int weight;
};

struct sim_trace {
	struct sim_job *jobs;		/* by arrival (stable) */
	int njobs, npods;
	struct sim_queue *queues;	/* in order of first use */
	int nqueues;
};

struct sim_nodes {
	int count;
	double cpu_m, memory;
};

/* What happened: per job its first pod's start and its end (-1: never),
   and a sample of the cluster at each session and event. */
struct sim_row {
	double t, util;			/* cpu allocated / allocatable */
	double *share, *deserved;	/* per queue, of the cluster's cpu */
};

struct sim_result {
	struct { double start, end; } *jobs;
	int njobs, nqueues;
	struct sim_row *rows;
	int nrows;
	size_t caprows;
	double makespan, total_cpu;
	long sessions, preemptions;
	int stuck;			/* jobs left that nothing could place */
};

/* Load a CSV (header arrival,queue,tasks,cpu,memory,duration,priority,
   min_member) or YAML (a list of mappings with those keys) trace;
   queue weights from "name=weight,..." (default 1). 0, or -1 with
   *cause. */
int sim_trace_load(const char *path, const char *weights,
    struct sim_trace *, char **cause);
void sim_trace_free(struct sim_trace *);
/* Play the trace with dir's policy over share's built-in one. */
int sim_run(const char *share, const char *dir, const struct sim_trace *,
    const struct sim_nodes *, struct sim_result *, char **cause);
void sim_result_free(struct sim_result *);

#endif
