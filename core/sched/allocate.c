/*
 * The allocate action, as Volcano's: queues in QueueOrder, each queue's
 * jobs in JobOrder, each job's pending tasks (not BestEffort) in
 * TaskOrder. Pop a queue (dropped while Overused), pop its best job and
 * run its tasks in a fresh statement: a task the queue may not take
 * (Allocatable) is skipped; the others go through the predicates (C, then
 * Lua on the survivors) against future idle, prefer a node where the
 * request fits idle, take the best score and are allocated (fits idle) or
 * pipelined (fits only once releasing pods are gone). A task that fits
 * nowhere marks its role (volcano.sh/task-spec) as failed for the
 * session, and the job's other tasks of that role are not tried; the
 * turn goes on only while the gang can still be made without that role's
 * remaining tasks (Volcano's NeedContinueAllocating: never when every
 * task is needed). Once the job is ready with tasks left, it goes back to
 * its queue's heap for another turn. After the turn: ready -> commit;
 * pipelined -> keep the reservation; else discard. The queue goes back to
 * be re-ranked by its new share.
 *
 * Without an enqueue action in the configuration, allocate admits the
 * Pending PodGroups itself first (phase Inqueue), as Volcano's does.
 *
 * The node scan walks the free-capacity index (capindex.c: full nodes
 * are skipped, not checked), starts where the last one stopped and
 * stops after enough() feasible nodes (kube-scheduler's
 * percentageOfNodesToScore).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

static int
enough(int nnodes)
{
	int pct = 50 - nnodes / 125, want;

	if (pct < 5)
		pct = 5;
	want = nnodes * pct / 100;
	return want < 100 ? (nnodes < 100 ? nnodes : 100) : want;
}

/*
 * Why a task fits nowhere, in kube-scheduler's counts: every node is
 * checked (static predicates, then resources). Only on failure, and
 * once per task shape in a session (failures of one shape repeat for
 * every pending job like it).
 */
static int same_shape(struct s_task *, struct s_task *);

static void
count_reasons(struct session *ss, struct s_task *t, int allow_pipeline,
    int counts[FIT_NREASONS])
{
	struct why_memo *m;
	int i;

	memset(counts, 0, FIT_NREASONS * sizeof counts[0]);
	for (i = 0; i < ss->nwhy; i++)
		if (ss->why[i].allow_pipeline == allow_pipeline &&
		    same_shape(ss->why[i].like, t)) {
			memcpy(counts, ss->why[i].counts, sizeof ss->why[i].counts);
			return;
		}
	for (i = 0; i < ss->nnodes; i++) {
		struct s_node *n = &ss->nodes[i];
		enum fit_reason r = predicate_static(ss, t, n);
		struct podspec_res fi;

		if (r == FIT_OK) {
			node_future_idle(n, &fi);
			r = predicate_resources(t, allow_pipeline &&
			    !predicate_fits(&t->req, &n->idle) ? &fi :
			    &n->idle);
		}
		counts[r]++;
	}
	counts[FIT_OK] = 0;
	XGROW(ss->why, ss->capwhy, ss->nwhy + 1);
	m = &ss->why[ss->nwhy++];
	m->like = t;
	m->allow_pipeline = allow_pipeline;
	memcpy(m->counts, counts, sizeof m->counts);
}

struct s_node *
allocate_pick(struct session *ss, struct s_task *t, int allow_pipeline,
    int *pipeline)
{
	int counts[FIT_NREASONS] = { 0 }, i, nc = 0, nidle = 0;
	int want = enough(ss->nnodes), lua_rejects = 0;
	int start = ss->next_node, from = start, to = ss->nnodes, last = -1;
	struct s_node *best = NULL;
	char *lua_reason = NULL;
	double best_score = 0;

	*pipeline = 0;
	if (ss->cand == NULL) {
		ss->cand = xcalloc((size_t)ss->nnodes + 1, sizeof *ss->cand);
		ss->scores = xcalloc((size_t)ss->nnodes + 1,
		    sizeof *ss->scores);
	}
	/* The nodes whose free capacity may hold it, from where the last
	   scan stopped, round the ring once; or the nodes allocate is
	   restricted to (a HyperNode's). */
	for (i = 0; nc < want; ) {
		int k;
		struct s_node *n;
		enum fit_reason r;
		struct podspec_res fi;

		if (ss->restrict_nodes != NULL) {
			if (i == ss->nrestrict)
				break;
			n = ss->restrict_nodes[i++];
		} else {
			k = capindex_next(&ss->cap, from, to, &t->req);
			if (k < 0) {
				if (to != ss->nnodes || start == 0)
					break;
				from = 0;
				to = start;
				continue;
			}
			from = k + 1;
			last = k;
			n = &ss->nodes[k];
		}
		if (predicate_static(ss, t, n) != FIT_OK)
			continue;
		if (predicate_fits(&t->req, &n->idle)) {
			/* Idle fits first in the list. */
			ss->cand[nc] = ss->cand[nidle];
			ss->cand[nidle++] = n;
			nc++;
			continue;
		}
		node_future_idle(n, &fi);
		r = predicate_resources(t, allow_pipeline ? &fi : &n->idle);
		if (r == FIT_OK)
			ss->cand[nc++] = n;
	}
	if (last >= 0)
		ss->next_node = (last + 1) % ss->nnodes;
	if (nc > 0 && (framework_defines(ss, EP_PREDICATE) ||
	    framework_defines(ss, EP_BATCH_PREDICATE))) {
		int before = nc, k;

		nc = framework_predicate(ss, t, ss->cand, nc, &lua_rejects,
		    &lua_reason);
		counts[FIT_LUA] += before - nc;
		/* Recount the idle ones among the survivors. */
		for (i = k = 0; i < nc; i++)
			if (predicate_fits(&t->req, &ss->cand[i]->idle)) {
				struct s_node *x = ss->cand[k];

				ss->cand[k++] = ss->cand[i];
				ss->cand[i] = x;
			}
		nidle = k;
	}
	if (nc == 0) {
		int lua = counts[FIT_LUA];

		count_reasons(ss, t, allow_pipeline, counts);
		/* The nodes Lua refused passed C's checks: they are its. */
		counts[FIT_LUA] = lua;
		free(t->why);
		t->why = predicate_message(ss->nnodes, counts, lua_reason);
		free(lua_reason);
		return NULL;
	}
	free(lua_reason);
	/* Prefer nodes where it fits now; else a pipelined reservation. */
	if (nidle > 0)
		nc = nidle;
	else
		*pipeline = 1;
	for (i = 0; i < nc; i++)
		ss->scores[i] = predicate_score(ss, t, ss->cand[i]);
	if (ss->topo_on && t->job != NULL && t->job->topo_mode == TOPO_SOFT)
		for (i = 0; i < nc; i++)
			ss->scores[i] += topology_score(ss, t->job, ss->cand[i]);
	if (framework_defines(ss, EP_NODE_ORDER) ||
	    framework_defines(ss, EP_BATCH_NODE_ORDER))
		framework_node_order(ss, t, ss->cand, nc, ss->scores);
	for (i = 0; i < nc; i++)
		if (best == NULL || ss->scores[i] > best_score) {
			best = ss->cand[i];
			best_score = ss->scores[i];
		}
	ss->ncand = *pipeline ? 0 : nc;
	free(t->why);
	t->why = NULL;
	return best;
}

/*
 * The tasks of one job are usually alike (one template). Within a job's
 * turn, the nodes scored for the first task serve the next ones of the
 * same shape: only the node just used is scored again, and a node that no
 * longer has room leaves the list. With Lua predicates or scores, or pod
 * affinity, every task is placed on its own.
 */
struct cand_cache {
	struct s_task *like;
	struct s_node **n;
	double *score;
	int nc, cap;
};

static int
same_res(const struct podspec_res *a, const struct podspec_res *b)
{
	int i;

	if (a->cpu != b->cpu || a->memory != b->memory || a->pods != b->pods ||
	    a->next != b->next)
		return 0;
	for (i = 0; i < a->next; i++)
		if (strcmp(a->ext[i].name, b->ext[i].name) != 0 ||
		    a->ext[i].value != b->ext[i].value)
			return 0;
	return 1;
}

static int
same_shape(struct s_task *a, struct s_task *b)
{
	return same_res(&a->req, &b->req) && !a->has_pod_affinity &&
	    !b->has_pod_affinity && a->shape != NULL && b->shape != NULL &&
	    (a->shape == b->shape || strcmp(a->shape, b->shape) == 0);
}

static struct s_node *
pick(struct session *ss, struct cand_cache *cc, struct s_task *t, int *pipe)
{
	struct s_node *n;
	int i, best = -1;

	*pipe = 0;
	if (cc->like != NULL && cc->nc > 0 && same_shape(cc->like, t)) {
		for (i = 0; i < cc->nc; i++) {
			if (!predicate_fits(&t->req, &cc->n[i]->idle)) {
				cc->n[i] = cc->n[--cc->nc];
				cc->score[i--] = cc->score[cc->nc];
				continue;
			}
			if (best < 0 || cc->score[i] > cc->score[best])
				best = i;
		}
		if (best >= 0) {
			free(t->why);
			t->why = NULL;
			return cc->n[best];
		}
	}
	cc->like = NULL;
	/* Soft topology scores move with every placement: no cache. */
	if ((n = allocate_pick(ss, t, 1, pipe)) == NULL || *pipe ||
	    (ss->topo_on && t->job != NULL &&
	    t->job->topo_mode == TOPO_SOFT) ||
	    framework_defines(ss, EP_PREDICATE) ||
	    framework_defines(ss, EP_BATCH_PREDICATE) ||
	    framework_defines(ss, EP_NODE_ORDER) ||
	    framework_defines(ss, EP_BATCH_NODE_ORDER))
		return n;
	if (ss->ncand > cc->cap) {
		cc->cap = ss->ncand;
		cc->n = xreallocarray(cc->n, (size_t)cc->cap, sizeof *cc->n);
		cc->score = xreallocarray(cc->score, (size_t)cc->cap,
		    sizeof *cc->score);
	}
	memcpy(cc->n, ss->cand, (size_t)ss->ncand * sizeof *cc->n);
	memcpy(cc->score, ss->scores, (size_t)ss->ncand * sizeof *cc->score);
	cc->nc = ss->ncand;
	cc->like = t;
	return n;
}

/* The node n just took a task like cc->like: score it again. */
static void
rescore(struct session *ss, struct cand_cache *cc, struct s_node *n)
{
	int i;

	if (cc->like == NULL)
		return;
	for (i = 0; i < cc->nc; i++)
		if (cc->n[i] == n)
			cc->score[i] = predicate_score(ss, cc->like, n);
}

int
allocate_schedulable(struct session *ss, struct s_job *j)
{
	if (j->queue == NULL || j->invalid)
		return 0;
	if (config_has_action(&ss->pol->conf, ACT_ENQUEUE) && j->pg != NULL &&
	    strcmp(j->phase, "Pending") == 0 && !j->enqueued)
		return 0;
	return 1;
}

/*
 * After a task of j fit nowhere: may the turn go on with the job's other
 * tasks (Volcano's NeedContinueAllocating)? Not when every task is
 * needed. When the roles' minimums add up to more than minMember, only
 * the total counts: what is ready plus the pending tasks of roles that
 * have not failed must still reach it. Otherwise every failed role with a
 * minimum must already have it placed (allocated, succeeded, or pending
 * best-effort).
 */
static int
may_go_on(const struct s_job *j)
{
	int i, k, min_total = 0, left = 0;

	if (j->min_member >= j->ntasks)
		return 0;
	for (i = 0; i < j->nroles; i++)
		min_total += j->roles[i].min;
	if (j->min_member < min_total) {
		for (i = 0; i < j->nroles; i++)
			if (j->roles[i].fit_failed == NULL)
				left += j->roles[i].n[TS_PENDING];
		return j->n[TS_ALLOCATED] + j->n[TS_BINDING] + j->n[TS_BOUND] +
		    j->n[TS_RUNNING] + j->n[TS_SUCCEEDED] + left >=
		    j->min_member;
	}
	for (i = 0; i < j->nroles; i++) {
		const struct role_count *rc = &j->roles[i];
		int have;

		if (rc->fit_failed == NULL || rc->min == 0)
			continue;
		have = rc->n[TS_ALLOCATED] + rc->n[TS_BINDING] +
		    rc->n[TS_BOUND] + rc->n[TS_RUNNING] + rc->n[TS_SUCCEEDED];
		for (k = 0; k < j->ntasks && have < rc->min; k++)
			if (j->tasks[k]->status == TS_PENDING &&
			    j->tasks[k]->best_effort &&
			    strcmp(j->tasks[k]->role, rc->role) == 0)
				have++;
		if (have < rc->min)
			return 0;
	}
	return 1;
}

/* A job's pending tasks (best-effort ones aside), in task order. */
static void
fill_tasks(struct session *ss, struct s_job *j, struct pq *tq)
{
	int k;

	pq_init(tq, ss, pq_less_task);
	for (k = 0; k < j->ntasks; k++)
		if (j->tasks[k]->status == TS_PENDING &&
		    !j->tasks[k]->best_effort)
			pq_push(tq, j->tasks[k]);
}

/*
 * One turn of job j of queue q: its tasks in order onto the nodes, into
 * st, until one fits nowhere and the gang cannot be made without its
 * role, or the job is ready with tasks left (1: it goes back to its
 * queue's heap for another turn).
 */
static int
job_turn(struct session *ss, struct s_job *j, struct s_queue *q,
    struct pq *tq, struct statement *st, struct cand_cache *cc)
{
	while (tq->n > 0) {
		struct s_task *t = pq_pop(tq);
		struct role_count *rc;
		struct s_node *n;
		int pipe;

		if (!framework_allocatable(ss, q, t)) {
			/* Say the node's reason when there is one. */
			if (t->gated)
				continue;
			if (allocate_pick(ss, t, 1, &pipe) != NULL) {
				free(t->why);
				t->why = util_printf("queue %s: the task would "
				    "exceed the queue's deserved share (%s)",
				    q->name, q->state);
			}
			continue;
		}
		if (t->gated) {
			/* Not placed while gated; the queue has room for
			   it: its admission gate may go (Volcano 1.15's
			   SchedulingGatesQueueAdmission). */
			if (t->queue_gate >= 0 && !t->ungate) {
				t->ungate = 1;
				ss->nungates++;
			}
			continue;
		}
		rc = task_role(j, t->role);
		if (*t->role != '\0' && rc->fit_failed != NULL) {
			/* Its role fit nowhere: neither does it. */
			free(t->why);
			t->why = rc->fit_failed->why != NULL ?
			    xstrdup(rc->fit_failed->why) : NULL;
			continue;
		}
		if ((n = pick(ss, cc, t, &pipe)) == NULL) {
			rc->fit_failed = t;
			if (may_go_on(j))
				continue;
			break;	/* the rest cannot make a gang now */
		}
		if (pipe)
			statement_pipeline(st, t, n);
		else
			statement_allocate(st, t, n);
		rescore(ss, cc, n);
		if (tq->n > 0 && framework_job_ready(ss, j))
			return 1;
	}
	return 0;
}

/*
 * What a hard-topology job still needs at once: its remaining minimum
 * (minResources less what it holds), else its pending tasks' requests
 * up to minMember; *want gets how many tasks that is and min the least
 * any of them asks for cpu, memory and pods (what topology_may_hold
 * packs).
 */
static void
job_need(const struct s_job *j, struct podspec_res *need,
    struct podspec_res *min, int *want)
{
	int k, ready = j->n[TS_ALLOCATED] + j->n[TS_BINDING] +
	    j->n[TS_BOUND] + j->n[TS_RUNNING] + j->n[TS_SUCCEEDED];
	int left = j->min_member - ready;

	memset(need, 0, sizeof *need);
	memset(min, 0, sizeof *min);
	*want = 0;
	for (k = 0; k < j->ntasks && left > 0; k++) {
		const struct s_task *t = j->tasks[k];

		if (t->status != TS_PENDING || t->best_effort || t->gated)
			continue;
		podspec_res_add(need, &t->req, 1);
		if (*want == 0 || t->req.cpu < min->cpu)
			min->cpu = t->req.cpu;
		if (*want == 0 || t->req.memory < min->memory)
			min->memory = t->req.memory;
		if (*want == 0 || t->req.pods < min->pods)
			min->pods = t->req.pods;
		(*want)++;
		left--;
	}
}

/*
 * A turn of a job with a hard networkTopology: within one HyperNode of at
 * most its highest allowed tier, tried lowest tier first and, within a
 * tier, the fullest that holds its need first (Volcano's gradients and
 * hypernode binpack order); the first where the job becomes ready or
 * pipelined keeps its placements, the others are undone.
 */
static int
hard_turn(struct session *ss, struct s_job *j, struct s_queue *q,
    struct pq *tq, struct statement *st, struct cand_cache *cc)
{
	struct s_hypernode **cands;
	struct podspec_res need, min;
	int i, k, nc, want, back = 0, found = 0, tried = 0;

	job_need(j, &need, &min, &want);
	cands = topology_candidates(ss, j, &need, &nc);
	statement_init(st, ss);
	for (i = 0; i < nc && !found; i++) {
		/* A HyperNode whose free room adds up to the need but is
		   too fragmented to hold it is passed over without a dry
		   run (a packing bound, exact for gangs of equal pods). */
		if (!topology_may_hold(cands[i], &min, want))
			continue;
		ss->restrict_nodes = cands[i]->nodes;
		ss->nrestrict = cands[i]->nnodes;
		if (tried++ > 0) {
			pq_free(tq);
			fill_tasks(ss, j, tq);
			for (k = 0; k < j->nroles; k++)
				j->roles[k].fit_failed = NULL;
			statement_init(st, ss);
		}
		cc->like = NULL;
		back = job_turn(ss, j, q, tq, st, cc);
		if (framework_job_ready(ss, j) || framework_job_pipelined(ss, j))
			found = 1;
		else
			statement_discard(st);
	}
	ss->restrict_nodes = NULL;
	ss->nrestrict = 0;
	cc->like = NULL;
	if (!found) {
		for (k = 0; k < j->ntasks; k++) {
			struct s_task *t = j->tasks[k];

			if (t->status != TS_PENDING || t->gated)
				continue;
			free(t->why);
			t->why = util_printf("no HyperNode of tier <= %d can "
			    "hold the job (networkTopology hard, %d "
			    "candidates tried)", j->topo_tier, nc);
		}
		back = 0;
		if (tried > 0) {
			pq_free(tq);
			fill_tasks(ss, j, tq);
		}
	}
	free(cands);
	return back;
}

/* Without an enqueue action, allocate admits the Pending PodGroups. */
static void
admit_pending(struct session *ss)
{
	int i;

	if (config_has_action(&ss->pol->conf, ACT_ENQUEUE))
		return;
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		if (j->pg == NULL || j->queue == NULL ||
		    strcmp(j->phase, "Pending") != 0)
			continue;
		j->phase = "Inqueue";
		j->enqueued = 1;
		j->ver++;
	}
}

static int
has_pending(const struct s_job *j, int best_effort)
{
	int i;

	for (i = 0; i < j->ntasks; i++)
		if (j->tasks[i]->status == TS_PENDING &&
		    j->tasks[i]->best_effort == best_effort)
			return 1;
	return 0;
}

void
allocate_run(struct session *ss)
{
	struct pq queues, *jobs = xcalloc((size_t)ss->nqueues + 1,
	    sizeof *jobs);
	struct pq *tasks = xcalloc((size_t)ss->njobs + 1, sizeof *tasks);
	char *in_pq = xcalloc((size_t)ss->nqueues + 1, 1);
	struct cand_cache cc;
	int i;

	memset(&cc, 0, sizeof cc);
	admit_pending(ss);
	pq_init(&queues, ss, pq_less_queue);
	for (i = 0; i < ss->nqueues; i++)
		pq_init(&jobs[i], ss, pq_less_job);
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		if (!allocate_schedulable(ss, j) || !has_pending(j, 0))
			continue;
		if (!framework_job_valid(ss, j))
			continue;
		pq_push(&jobs[j->queue->idx], j);
		if (!in_pq[j->queue->idx]) {
			in_pq[j->queue->idx] = 1;
			pq_push(&queues, j->queue);
		}
	}
	while (queues.n > 0) {
		struct s_queue *q = pq_pop(&queues);
		struct pq *tq;
		struct statement st;
		struct s_job *j;
		int back;

		if (framework_overused(ss, q))
			continue;
		if ((j = pq_pop(&jobs[q->idx])) == NULL)
			continue;
		if (j->alloc_turn == 0)
			j->alloc_turn = ++q->turns;
		tq = &tasks[j->idx];
		if (tq->ss == NULL)
			fill_tasks(ss, j, tq);
		if (ss->topo_on && ss->nhns > 0 && j->topo_mode == TOPO_HARD)
			back = hard_turn(ss, j, q, tq, &st, &cc);
		else {
			statement_init(&st, ss);
			cc.like = NULL;
			back = job_turn(ss, j, q, tq, &st, &cc);
		}
		if (back)
			pq_push(&jobs[q->idx], j);
		if (framework_job_ready(ss, j)) {
			statement_commit(&st);
			j->alloc_result = ALLOC_COMMITTED;
		} else if (framework_job_pipelined(ss, j)) {
			statement_keep(&st);
			j->alloc_result = ALLOC_PIPELINED;
		} else {
			statement_discard(&st);
			j->alloc_result = ALLOC_DISCARDED;
		}
		pq_push(&queues, q);
	}
	/* The jobs an overused queue kept, in the order they would have
	   come: their turn, negative (explain.c). */
	for (i = 0; i < ss->nqueues; i++) {
		struct s_job *j;

		while ((j = pq_pop(&jobs[i])) != NULL)
			if (j->alloc_turn == 0)
				j->alloc_turn = -++ss->queues[i].turns;
	}
	pq_free(&queues);
	for (i = 0; i < ss->nqueues; i++)
		pq_free(&jobs[i]);
	for (i = 0; i < ss->njobs; i++)
		pq_free(&tasks[i]);
	free(jobs);
	free(tasks);
	free(in_pq);
	free(cc.n);
	free(cc.score);
}

/*
 * Backfill: BestEffort tasks (no requests) of admitted jobs go to the
 * first node the predicates accept, allocated at once.
 */
void
allocate_backfill(struct session *ss)
{
	int i, k;

	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		if (!allocate_schedulable(ss, j) || !has_pending(j, 1))
			continue;
		if (!framework_job_valid(ss, j))
			continue;
		for (k = 0; k < j->ntasks; k++) {
			struct s_task *t = j->tasks[k];
			struct statement st;
			struct s_node *n;
			int pipe;

			if (t->status != TS_PENDING || !t->best_effort ||
			    t->gated)
				continue;
			if ((n = allocate_pick(ss, t, 0, &pipe)) == NULL)
				continue;
			statement_init(&st, ss);
			statement_allocate(&st, t, n);
			statement_commit(&st);
		}
	}
}

/*
 * firstfit: the floor the benchmark compares allocate with. Every job in
 * snapshot order, every pending task on the first node (from the first,
 * through the same free-capacity index) whose idle resources and C
 * predicates fit it, a job kept only if it
 * reaches its minMember. No plugin is called (not even the event
 * handlers of allocations).
 */
void
allocate_firstfit(struct session *ss)
{
	int i, k, n;

	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];
		struct statement st;

		if (j->queue == NULL || j->n[TS_PENDING] == 0)
			continue;
		statement_init(&st, ss);
		st.quiet = 1;
		for (k = 0; k < j->ntasks; k++) {
			struct s_task *t = j->tasks[k];

			if (t->status != TS_PENDING || t->gated)
				continue;
			for (n = capindex_next(&ss->cap, 0, ss->nnodes, &t->req);
			    n >= 0; n = capindex_next(&ss->cap, n + 1,
			    ss->nnodes, &t->req))
				if (predicate_fits(&t->req,
				    &ss->nodes[n].idle) && predicate_static(ss,
				    t, &ss->nodes[n]) == FIT_OK)
					break;
			if (n < 0)
				break;
			statement_allocate(&st, t, &ss->nodes[n]);
		}
		if (j->n[TS_ALLOCATED] + j->n[TS_BOUND] + j->n[TS_RUNNING] +
		    j->n[TS_SUCCEEDED] >= j->min_member)
			statement_commit(&st);
		else
			statement_discard(&st);
	}
}
