/*
 * gangpreempt and gangreclaim (Volcano 1.15's gang-aware eviction): a
 * starving job takes room from whole gangs at a time, and nothing is
 * evicted unless the job can then be placed.
 *
 * For each starving job that is not Pending, in job order (gangreclaim:
 * of a queue that is not overused and may reclaim): its pending tasks and
 * their total need; the domains to look in (a hard-topology job: the
 * HyperNodes of its allowed tiers that can hold it, highest tier first,
 * at most maxDomains; else the cluster). In a domain, the running tasks
 * it may take: preemptable, of another job that may be preempted, of the
 * same queue and a lower priority (gangpreempt) or of another queue that
 * lets them be reclaimed (gangreclaim). They are bundled by job: a safe
 * bundle of the tasks the job can lose and keep its minMember (and each
 * role's minimum), a whole bundle of the rest, whose eviction breaks the
 * gang (only with allowWholeBundle). Bundles go safe first, then the
 * least important job's (gangreclaim: the queue last in queue order),
 * then the one freeing most of the need for the least it stops, and pass
 * the plugins' evictable rule (a whole bundle only if all its tasks do).
 * Bundles are taken one by one until the domain's idle and releasing
 * resources plus theirs cover the need; then, in one statement, they are
 * evicted and the job's tasks pipelined onto the domain's nodes: kept if
 * the job is then pipelined, else undone (Volcano #5011: no victim for a
 * preemptor that still cannot run), and the next bundle is added.
 *
 * Arguments (configurations: name gangpreempt or gangreclaim):
 * maxDomains (8), allowWholeBundle (true).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

struct bundle {
	struct s_job *job;
	struct s_task **tasks;
	int n, whole;
	double roi;
};

struct gang_args {
	int max_domains, allow_whole;
};

static void
read_args(struct session *ss, const char *action, struct gang_args *a)
{
	const cJSON *c;

	a->max_domains = 8;
	a->allow_whole = 1;
	cJSON_ArrayForEach(c, ss->pol->conf.configurations) {
		const cJSON *v;

		if (json_str(c, "name") == NULL ||
		    strcmp(json_str(c, "name"), action) != 0)
			continue;
		v = json_at(c, "arguments.maxDomains");
		if (cJSON_IsNumber(v) && v->valuedouble >= 1)
			a->max_domains = (int)v->valuedouble;
		v = json_at(c, "arguments.allowWholeBundle");
		if (cJSON_IsBool(v))
			a->allow_whole = cJSON_IsTrue(v);
		else if (cJSON_IsString(v))
			a->allow_whole = strcmp(v->valuestring, "false") != 0;
	}
}

static int
ready_count(const struct s_job *j)
{
	return j->n[TS_ALLOCATED] + j->n[TS_BINDING] + j->n[TS_BOUND] +
	    j->n[TS_RUNNING] + j->n[TS_SUCCEEDED];
}

static int
cmp_task_prio(const void *a, const void *b)
{
	const struct s_task *x = *(struct s_task *const *)a;
	const struct s_task *y = *(struct s_task *const *)b;

	int c;

	/* The least important first: lower priority, then the newer. */
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->created != NULL && y->created != NULL &&
	    (c = strcmp(y->created, x->created)) != 0)
		return c;
	return strcmp(x->name, y->name);
}

/* need covered by what b frees, capped at the need, over what the whole
   job holds (a safe bundle stops nothing: first among equals). */
static double
roi(const struct bundle *b, const struct podspec_res *need)
{
	double local = 0, global = 0, x;
	int64_t cpu = 0, mem = 0, gcpu = 0, gmem = 0;
	int i;

	for (i = 0; i < b->n; i++) {
		cpu += b->tasks[i]->req.cpu;
		mem += b->tasks[i]->req.memory;
	}
	if (!b->whole)
		return 1e300;
	for (i = 0; i < b->job->ntasks; i++) {
		gcpu += b->job->tasks[i]->req.cpu;
		gmem += b->job->tasks[i]->req.memory;
	}
	if (need->cpu > 0) {
		x = (double)(cpu < need->cpu ? cpu : need->cpu);
		local += x / (double)need->cpu;
		global += (double)gcpu / (double)need->cpu;
	}
	if (need->memory > 0) {
		x = (double)(mem < need->memory ? mem : need->memory);
		local += x / (double)need->memory;
		global += (double)gmem / (double)need->memory;
	}
	return global > 0 ? local / global : 1e300;
}

static int
cmp_by_job(const void *a, const void *b)
{
	const struct s_task *x = *(struct s_task *const *)a;
	const struct s_task *y = *(struct s_task *const *)b;

	return strcmp(x->job->key, y->job->key);
}

/* The safe and whole bundles of job j from its tasks here (sorted). */
static int
make_bundles(struct s_job *j, struct s_task **local, int n,
    struct bundle *out)
{
	int surplus = ready_count(j) - j->min_member, i, k, nb = 0;
	int min_total = 0, *role_left = NULL;
	struct bundle safe = { j, NULL, 0, 0, 0 }, whole = { j, NULL, 0, 1, 0 };

	qsort(local, (size_t)n, sizeof *local, cmp_task_prio);
	if (surplus < 0) {
		/* Broken already: all of it is safe to take. */
		safe.tasks = xmalloc((size_t)n * sizeof *safe.tasks);
		memcpy(safe.tasks, local, (size_t)n * sizeof *local);
		safe.n = n;
		out[0] = safe;
		return 1;
	}
	for (i = 0; i < j->nroles; i++)
		min_total += j->roles[i].min;
	if (j->nroles > 0 && j->min_member >= min_total) {
		role_left = xcalloc((size_t)j->nroles, sizeof *role_left);
		for (i = 0; i < j->nroles; i++)
			role_left[i] = j->roles[i].n[TS_ALLOCATED] +
			    j->roles[i].n[TS_BINDING] + j->roles[i].n[TS_BOUND] +
			    j->roles[i].n[TS_RUNNING] +
			    j->roles[i].n[TS_SUCCEEDED] - j->roles[i].min;
	}
	safe.tasks = xmalloc((size_t)n * sizeof *safe.tasks);
	whole.tasks = xmalloc((size_t)n * sizeof *whole.tasks);
	for (i = 0; i < n; i++) {
		int role = -1, ok;

		if (role_left != NULL)
			for (k = 0; k < j->nroles; k++)
				if (j->roles[k].min > 0 &&
				    strcmp(j->roles[k].role, local[i]->role) == 0)
					role = k;
		ok = surplus > 0 && (role < 0 || role_left[role] > 0);
		if (ok) {
			safe.tasks[safe.n++] = local[i];
			surplus--;
			if (role >= 0)
				role_left[role]--;
		} else
			whole.tasks[whole.n++] = local[i];
	}
	free(role_left);
	if (safe.n > 0)
		out[nb++] = safe;
	else
		free(safe.tasks);
	if (whole.n > 0)
		out[nb++] = whole;
	else
		free(whole.tasks);
	return nb;
}

static struct session *sort_ss;
static int sort_reclaim;
static struct s_queue *sort_pq;		/* the preemptor's queue */

static int
cmp_bundle(const void *a, const void *b)
{
	const struct bundle *x = a, *y = b;

	if (x->whole != y->whole)
		return x->whole ? 1 : -1;
	if (x->job != y->job) {
		if (sort_reclaim && x->job->queue != y->job->queue) {
			/* The plugins' victim queue order, then the queue
			   last in queue order gives first. */
			if (framework_victim_queue_first(sort_ss,
			    x->job->queue, y->job->queue, sort_pq))
				return -1;
			if (framework_victim_queue_first(sort_ss,
			    y->job->queue, x->job->queue, sort_pq))
				return 1;
		}
		if (!sort_reclaim) {
			/* The job last in job order gives first. */
			if (framework_job_less(sort_ss, y->job, x->job))
				return -1;
			if (framework_job_less(sort_ss, x->job, y->job))
				return 1;
		}
	}
	if (x->roi != y->roi)
		return x->roi > y->roi ? -1 : 1;
	return strcmp(x->job->key, y->job->key);
}

/* Whether j may take v: 1 yes, 0 no, -1 it could but v (or its job) is
   not preemptable. */
static int
takeable(struct s_job *j, struct s_task *v, int reclaim)
{
	struct s_job *vj = v->job;
	int rel;

	if ((v->status != TS_RUNNING && v->status != TS_BOUND) ||
	    vj == NULL || vj == j || vj->queue == NULL)
		return 0;
	if (reclaim)
		rel = vj->queue != j->queue && vj->queue->reclaimable;
	else
		rel = vj->queue == j->queue && vj->priority < j->priority;
	if (rel && (!v->preemptable || !vj->preemptable))
		return -1;
	return rel;
}

/* For explain: the verdict on every task of bundles [from, to). */
static void
note_bundles(struct s_job *j, const struct bundle *b, int from, int to,
    enum victim_verdict vv)
{
	int i, k;

	for (i = from; i < to; i++)
		for (k = 0; k < b[i].n; k++)
			victim_note(j, b[i].tasks[k], vv, NULL);
}

/*
 * Try the bundles on nodes[0..nn): 1 when the job was pipelined and the
 * evictions kept (into st, committed by the caller).
 */
static int
try_domain(struct session *ss, struct s_job *j, struct s_task **pending,
    int np, const struct podspec_res *need, struct s_node **nodes, int nn,
    int reclaim, const struct gang_args *args)
{
	struct s_task **cand = NULL, **sel;
	struct bundle *b;
	struct podspec_res avail;
	int ncand = 0, nb = 0, i, k, m, nsel = 0, done = 0;
	size_t cap = 0;

	/* The tasks it may take, job by job. */
	j->victim_acts |= reclaim ? VA_GANGRECLAIM : VA_GANGPREEMPT;
	for (i = 0; i < nn; i++)
		for (k = 0; k < nodes[i]->ntasks; k++) {
			struct s_task *v = nodes[i]->tasks[k];
			int can = takeable(j, v, reclaim);

			if (can != 0)
				j->victims_seen++;
			if (can < 0) {
				j->victims_protected++;
				victim_note(j, v, VV_PROTECTED, NULL);
			} else if (can > 0) {
				XGROW(cand, cap, (size_t)ncand + 1);
				cand[ncand++] = v;
			}
		}
	if (ncand == 0) {
		free(cand);
		return 0;
	}
	ncand = framework_evictable(ss, reclaim ? "gangreclaim" :
	    "gangpreempt", j, cand, ncand);
	/* A job's candidates side by side, then a run per job. */
	qsort(cand, (size_t)ncand, sizeof *cand, cmp_by_job);
	b = xcalloc((size_t)ncand * 2 + 1, sizeof *b);
	for (i = 0; i < ncand; i = k) {
		for (k = i; k < ncand && cand[k]->job == cand[i]->job; k++)
			;
		nb += make_bundles(cand[i]->job, cand + i, k - i, b + nb);
	}
	for (i = 0; i < nb; i++)
		b[i].roi = roi(&b[i], need);
	sort_ss = ss;
	sort_reclaim = reclaim;
	sort_pq = j->queue;
	qsort(b, (size_t)nb, sizeof *b, cmp_bundle);
	memset(&avail, 0, sizeof avail);
	for (i = 0; i < nn; i++) {
		struct podspec_res fi;

		node_future_idle(nodes[i], &fi);
		podspec_res_add(&avail, &fi, 1);
	}
	sel = xcalloc((size_t)ncand + 1, sizeof *sel);
	for (i = 0; i < nb && !done; i++) {
		struct statement st;
		int ok = 1;

		if (b[i].whole && !args->allow_whole) {
			note_bundles(j, b, i, i + 1, VV_WHOLE);
			continue;
		}
		for (k = 0; k < b[i].n; k++) {
			sel[nsel++] = b[i].tasks[k];
			podspec_res_add(&avail, &b[i].tasks[k]->req, 1);
		}
		if (!predicate_fits(need, &avail))
			continue;
		/* Evict them and place the job: all or nothing. */
		statement_init(&st, ss);
		for (k = 0; k < nsel; k++) {
			char *why = util_printf("%s for %s",
			    reclaim ? "gang-reclaimed" : "gang-preempted",
			    j->key);

			statement_evict(&st, sel[k], why);
			free(why);
		}
		ss->restrict_nodes = nodes;
		ss->nrestrict = nn;
		for (m = 0; m < np && ok; m++) {
			struct s_node *n;
			int pipe;

			if (pending[m]->status != TS_PENDING)
				continue;
			if ((n = allocate_pick(ss, pending[m], 1, &pipe)) ==
			    NULL) {
				ok = 0;
				break;
			}
			statement_pipeline(&st, pending[m], n);
			free(pending[m]->nominated);
			pending[m]->nominated = xstrdup(n->name);
			if (framework_job_pipelined(ss, j))
				break;
		}
		ss->restrict_nodes = NULL;
		ss->nrestrict = 0;
		if (ok && framework_job_pipelined(ss, j)) {
			statement_commit(&st);
			for (k = 0; k < nsel; k++)
				victim_note(j, sel[k], VV_EVICTED, NULL);
			note_bundles(j, b, i + 1, nb, VV_SPARED);
			done = 1;
		} else {
			statement_discard(&st);
			for (k = 0; k < nsel; k++)
				victim_note(j, sel[k], VV_UNDONE, NULL);
			for (m = 0; m < np; m++) {
				free(pending[m]->nominated);
				pending[m]->nominated = NULL;
			}
		}
	}
	if (!done)		/* all it took would not make room */
		for (k = 0; k < nsel; k++)
			victim_note(j, sel[k], VV_NO_ROOM, NULL);
	for (i = 0; i < nb; i++)
		free(b[i].tasks);
	free(b);
	free(sel);
	free(cand);
	return done;
}

void
gangevict_run(struct session *ss, int reclaim)
{
	struct gang_args args;
	struct pq jobs;
	struct s_job *j;
	int i;

	read_args(ss, reclaim ? "gangreclaim" : "gangpreempt", &args);
	pq_init(&jobs, ss, pq_less_job);
	for (i = 0; i < ss->njobs; i++) {
		j = ss->jobs[i];
		if (j->pg != NULL && strcmp(j->phase, "Pending") == 0)
			continue;
		if (!allocate_schedulable(ss, j) || !framework_job_starving(ss,
		    j))
			continue;
		if (reclaim && framework_overused(ss, j->queue))
			continue;
		pq_push(&jobs, j);
	}
	while ((j = pq_pop(&jobs)) != NULL) {
		struct s_task **pending;
		struct podspec_res need;
		struct s_hypernode **doms = NULL;
		int np = 0, nd = 0, k;

		if (!framework_job_valid(ss, j))
			continue;
		pending = xcalloc((size_t)j->ntasks + 1, sizeof *pending);
		memset(&need, 0, sizeof need);
		for (k = 0; k < j->ntasks; k++) {
			struct s_task *t = j->tasks[k];

			if (t->status != TS_PENDING || t->best_effort || t->gated)
				continue;
			if (reclaim && !framework_preemptive(ss, j->queue, t))
				continue;
			pending[np++] = t;
			podspec_res_add(&need, &t->req, 1);
		}
		if (np == 0) {
			free(pending);
			continue;
		}
		if (ss->topo_on && ss->nhns > 0 && j->topo_mode == TOPO_HARD) {
			doms = topology_domains(ss, j, &need, args.max_domains,
			    &nd);
			for (k = 0; k < nd; k++)
				if (try_domain(ss, j, pending, np, &need,
				    doms[k]->nodes, doms[k]->nnodes, reclaim,
				    &args))
					break;
			free(doms);
		} else {
			struct s_node **all = xcalloc((size_t)ss->nnodes + 1,
			    sizeof *all);

			for (k = 0; k < ss->nnodes; k++)
				all[k] = &ss->nodes[k];
			try_domain(ss, j, pending, np, &need, all, ss->nnodes,
			    reclaim, &args);
			free(all);
		}
		free(pending);
	}
	pq_free(&jobs);
}
