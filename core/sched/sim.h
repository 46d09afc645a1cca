/*
 * A job trace played in virtual time on simulated nodes (sim.c), for
 * `volray sim`; the trace's file format in sim_trace.c, the nodes' in
 * sim_nodes.c.
 */
#ifndef VOLRAY_SIM_H
#define VOLRAY_SIM_H

#include <stddef.h>

struct cJSON;

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

/* The simulated nodes (sim_nodes.c): Node objects, and their count and
   cpu (millicores) and memory (bytes) in all. */
#define SIM_NODES_MAX	100000

struct sim_nodes {
	int count;
	double cpu_m, memory;
	struct cJSON *objs;
};

/* What happened: per job its first pod's start and its end (-1: never),
   and a sample of the cluster at each session and event. */
struct sim_row {
	double t, util;			/* cpu allocated / allocatable */
	double *share, *deserved;	/* per queue, of the cluster's cpu */
};

/* A job some of whose pods were still waiting when the run ended, with
   the reason and message `volray explain` would give. */
struct sim_unplaced {
	int job, pending;		/* the trace's job; its waiting pods */
	char *reason, *message;
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
	struct sim_unplaced *unplaced;	/* those jobs, in trace order */
	int nunplaced;
};

/* Load a CSV (header arrival,queue,tasks,cpu,memory,duration,priority,
   min_member) or YAML (a list of mappings with those keys) trace;
   queue weights from "name=weight,..." (default 1). 0, or -1 with
   *cause. */
int sim_trace_load(const char *path, const char *weights,
    struct sim_trace *, char **cause);
void sim_trace_free(struct sim_trace *);
/* The nodes of file (NULL: count nodes sim-0, sim-1, ...; a file's
   groups default to cpu_m and memory), each labelled with labels
   ("k=v,...", may be NULL) under its own; 0, or -1 with *cause (-2
   when it is the labels that are bad). */
int sim_nodes_make(struct sim_nodes *, const char *file, int count,
    double cpu_m, double memory, const char *labels, char **cause);
void sim_nodes_free(struct sim_nodes *);
/* Play the trace with dir's policy over share's built-in one. */
int sim_run(const char *share, const char *dir, const struct sim_trace *,
    const struct sim_nodes *, struct sim_result *, char **cause);
void sim_result_free(struct sim_result *);

#endif
