/*
 * A session: one scheduling cycle's model of the cluster, Volcano's
 * Session. It opens on a source of objects (the daemon's captured
 * versions, or a scripted cluster for `volray policy test`), from which
 * snapshot.c builds its nodes, queues, jobs and tasks, indexes the nodes
 * by free capacity (capindex.c) and makes room for a bind per task. It
 * runs by opening the plugins on it (the ssn table, ssn.c), running the
 * actions scheduler.yaml names in their order and closing the plugins
 * (gang writes its conditions then). What the actions change goes
 * through statements (statement.c), whose task and node accounting is
 * task.c's and node.c's; what the session decided is read from it
 * afterwards (binds, evictions, outcome.c's status) and freed with it.
 *
 * Nothing in a session touches the daemon: it may run on a worker thread
 * while the loop serves the API.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

void
session_open(struct session *ss, struct policy *pol,
    const struct sched_source *src)
{
	memset(ss, 0, sizeof *ss);
	ss->src = *src;
	if (ss->src.now <= 0)
		ss->src.now = (double)time(NULL);
	ss->pol = pol;
	ss->node_index = hmap_new();
	ss->queue_index = hmap_new();
	ss->job_index = hmap_new();
	snapshot_build(ss);
	capindex_build(&ss->cap, ss->nodes, ss->nnodes);
	ss->capbinds = ss->ntasks + 1;
	ss->binds = xmalloc((size_t)ss->capbinds * sizeof *ss->binds);
}

void
session_run(struct session *ss)
{
	int i;

	ssn_open(ss);
	for (i = 0; i < ss->pol->conf.nactions; i++)
		switch (ss->pol->conf.actions[i]) {
		case ACT_ENQUEUE: enqueue_run(ss); break;
		case ACT_ALLOCATE: allocate_run(ss); break;
		case ACT_BACKFILL: allocate_backfill(ss); break;
		case ACT_PREEMPT: preempt_run(ss); break;
		case ACT_RECLAIM: reclaim_run(ss); break;
		case ACT_FIRSTFIT: allocate_firstfit(ss); break;
		case ACT_GANGPREEMPT: gangevict_run(ss, 0); break;
		case ACT_GANGRECLAIM: gangevict_run(ss, 1); break;
		case ACT_SHUFFLE: shuffle_run(ss); break;
		}
	ssn_close(ss);
}

void
session_free(struct session *ss)
{
	int i, k;

	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		free(j->tasks);
		free(j->roles);
		free(j->invalid_reason);
		free(j->invalid_msg);
		for (k = 0; k < j->nnotes; k++)
			free(j->notes[k]);
		free(j->notes);
		free(j->vnotes);
		free(j->enqueue_msg);
		free(j->cond_type);
		free(j->cond_reason);
		free(j->cond_msg);
		free(j->keys);
	}
	for (i = 0; i < ss->ntasks; i++) {
		free(ss->tasks[i]->why);
		free(ss->tasks[i]->nominated);
		free(ss->tasks[i]->keys);
	}
	for (i = 0; i < ss->nnodes; i++)
		free(ss->nodes[i].tasks);
	for (i = 0; i < ss->nevicts; i++)
		free(ss->evicts[i].reason);
	free(ss->quotas);
	free(ss->pdbs);
	topology_free(ss);
	for (i = 0; i < ss->nown; i++)
		free(ss->own[i]);
	for (i = 0; i < ss->ntrees; i++)
		cJSON_Delete(ss->trees[i]);
	free(ss->trees);
	for (i = 0; i < ss->nqueues; i++)
		free(ss->queues[i].keys);
	for (i = 0; i < ss->nevents; i++)
		free(ss->events[i]);
	free(ss->events);
	free(ss->own);
	free(ss->jobs);
	free(ss->tasks);
	free(ss->nodes);
	free(ss->queues);
	free(ss->binds);
	free(ss->evicts);
	for (i = 0; i < ss->nfail_err; i++)
		free(ss->fail_err[i]);
	free(ss->fail_err);
	cJSON_Delete(ss->qinfo);
	free(ss->failed);
	capindex_free(&ss->cap);
	free(ss->why);
	free(ss->cand);
	free(ss->vscratch);
	free(ss->scores);
	hmap_free(ss->node_index);
	hmap_free(ss->queue_index);
	hmap_free(ss->job_index);
	memset(ss, 0, sizeof *ss);
}
