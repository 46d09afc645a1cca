/*
 * A job trace played on simulated nodes in virtual time (`volray sim`):
 * the same session code and plugins the daemon runs, sessions every
 * virtual schedulePeriod while anything can change, pods ending after
 * their durations, no clock. Between events (an arrival, a pod's end)
 * where no session could decide anything new, time jumps to the next
 * event (on the period's grid). Deterministic: objects are made in trace
 * order with creation times and uids from it, and the framework breaks
 * ties by those.
 *
 * The model a session reads is kept here as objects: the Nodes, one
 * Queue per trace queue (weights from the caller), a PriorityClass per
 * priority, and per job a PodGroup (minMember, minResources) and its
 * pods (requests). A bind sets the pod's nodeName and phase Running; an
 * eviction puts it back to Pending (it starts over, as a restarted pod
 * would); a pod that ran its duration leaves, and its job completes with
 * its last pod. The PodGroups' phases come from the session's outcome.
 * When nothing more can be placed, the jobs still waiting are listed
 * with the reason explain.c gives them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luahost.h"
#include "sched/policytest.h"
#include "sched/sched_int.h"
#include "sched/sim.h"

struct pod {
	int job;
	cJSON *obj;
	void *memo;			/* the snapshot's derived data */
	int state;			/* 0 pending, 1 running, 2 gone */
	double end;
};

struct model {
	const struct sim_trace *tr;
	int *active, nactive;		/* pods arrived and not gone */
	int npending;
	const struct sim_nodes *nodes;
	cJSON *node_objs, *queue_objs, *prio_objs;
	void **node_memo;		/* the snapshot's, kept across sessions */
	cJSON **pg;			/* per job, NULL until it arrives */
	void **pg_memo;
	struct pod *pods;		/* every job's, in trace order */
	int *first_pod;			/* per job: its first pod's index */
	int *left;			/* per job: pods not gone */
	hmap *by_name;			/* pod name -> struct pod */
	double now;
	double *deserved;		/* per queue, the last session's */
};

static void
stamp(char out[32], double t)
{
	long s = (long)t;

	snprintf(out, 32, "2026-01-01T%02ld:%02ld:%02ldZ", s / 3600 % 24,
	    s / 60 % 60, s % 60);
	if (s >= 86400)		/* days: later dates keep the order */
		snprintf(out, 32, "2026-%02ld-%02ldT%02ld:%02ld:%02ldZ",
		    1 + s / 86400 / 28 % 12, 1 + s / 86400 % 28,
		    s / 3600 % 24, s / 60 % 60, s % 60);
}

static cJSON *
meta(const char *name, const char *ns, double t, long serial)
{
	cJSON *m = cJSON_CreateObject();
	char ts[32], uid[40];

	stamp(ts, t);
	snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012ld", serial);
	cJSON_AddStringToObject(m, "name", name);
	if (ns != NULL)
		cJSON_AddStringToObject(m, "namespace", ns);
	cJSON_AddStringToObject(m, "uid", uid);
	cJSON_AddStringToObject(m, "creationTimestamp", ts);
	return m;
}

static cJSON *
res(double cpu_m, double mem)
{
	cJSON *r = cJSON_CreateObject();
	char b[64];

	snprintf(b, sizeof b, "%.0fm", cpu_m);
	cJSON_AddStringToObject(r, "cpu", b);
	snprintf(b, sizeof b, "%.0f", mem);
	cJSON_AddStringToObject(r, "memory", b);
	return r;
}

static cJSON *
object(const char *api, const char *kind, cJSON *md)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "apiVersion", api);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddItemToObject(o, "metadata", md);
	return o;
}

static void
model_init(struct model *m, const struct sim_trace *tr,
    const struct sim_nodes *nodes)
{
	long serial = 1;
	int i, k, n = 0;
	char name[64];
	cJSON *nd;

	memset(m, 0, sizeof *m);
	m->tr = tr;
	m->nodes = nodes;
	/* The caller's nodes, with uids and creation times of ours. */
	m->node_objs = cJSON_Duplicate(nodes->objs, 1);
	cJSON_ArrayForEach(nd, m->node_objs) {
		cJSON *md = meta(json_str(nd, "metadata.name"), NULL, 0,
		    serial++), *old = json_obj(nd, "metadata"), *kv;

		cJSON_ArrayForEach(kv, old)
			if (cJSON_GetObjectItemCaseSensitive(md, kv->string) ==
			    NULL)
				cJSON_AddItemToObject(md, kv->string,
				    cJSON_Duplicate(kv, 1));
		json_set(nd, "metadata", md);
	}
	m->queue_objs = cJSON_CreateArray();
	for (i = 0; i < tr->nqueues; i++) {
		cJSON *o = object("scheduling.volcano.sh/v1beta1", "Queue",
		    meta(tr->queues[i].name, NULL, 0, serial++));
		cJSON *spec = cJSON_AddObjectToObject(o, "spec");

		cJSON_AddNumberToObject(spec, "weight", tr->queues[i].weight);
		cJSON_AddBoolToObject(spec, "reclaimable", 1);
		cJSON_AddItemToArray(m->queue_objs, o);
	}
	m->prio_objs = cJSON_CreateArray();
	for (i = 0; i < tr->njobs; i++) {
		const cJSON *p;
		int seen = 0;

		snprintf(name, sizeof name, "prio-%lld", tr->jobs[i].priority);
		cJSON_ArrayForEach(p, m->prio_objs)
			seen |= strcmp(json_str(p, "metadata.name"), name) == 0;
		if (!seen && tr->jobs[i].priority != 0) {
			cJSON *o = object("scheduling.k8s.io/v1",
			    "PriorityClass", meta(name, NULL, 0, serial++));

			cJSON_AddNumberToObject(o, "value",
			    (double)tr->jobs[i].priority);
			cJSON_AddItemToArray(m->prio_objs, o);
		}
		n += tr->jobs[i].tasks;
	}
	m->pg = xcalloc((size_t)tr->njobs + 1, sizeof *m->pg);
	m->pg_memo = xcalloc((size_t)tr->njobs + 1, sizeof *m->pg_memo);
	m->node_memo = xcalloc((size_t)nodes->count + 1, sizeof *m->node_memo);
	m->pods = xcalloc((size_t)n + 1, sizeof *m->pods);
	m->first_pod = xcalloc((size_t)tr->njobs + 1, sizeof *m->first_pod);
	m->left = xcalloc((size_t)tr->njobs + 1, sizeof *m->left);
	m->by_name = hmap_new();
	m->active = xcalloc((size_t)n + 1, sizeof *m->active);
	for (i = 0, n = 0; i < tr->njobs; i++) {
		m->first_pod[i] = n;
		m->left[i] = tr->jobs[i].tasks;
		for (k = 0; k < tr->jobs[i].tasks; k++)
			m->pods[n++].job = i;
	}
}

/* Job i arrives: its PodGroup and pods. */
static void
arrive(struct model *m, int i)
{
	const struct sim_job *j = &m->tr->jobs[i];
	long serial = 1000000 + (long)i * 10000;
	char name[64], pname[80], prio[64];
	cJSON *spec, *o;
	int k;

	snprintf(name, sizeof name, "job-%05d", i);
	snprintf(prio, sizeof prio, "prio-%lld", j->priority);
	o = object("scheduling.volcano.sh/v1beta1", "PodGroup",
	    meta(name, "default", j->arrival, serial++));
	spec = cJSON_AddObjectToObject(o, "spec");
	cJSON_AddNumberToObject(spec, "minMember", j->min_member);
	cJSON_AddStringToObject(spec, "queue", j->queue);
	if (j->priority != 0)
		cJSON_AddStringToObject(spec, "priorityClassName", prio);
	cJSON_AddItemToObject(spec, "minResources", res(j->cpu_m *
	    j->min_member, j->memory * j->min_member));
	cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "status"), "phase",
	    "Pending");
	m->pg[i] = o;
	for (k = 0; k < j->tasks; k++) {
		struct pod *p = &m->pods[m->first_pod[i] + k];
		cJSON *md, *c, *cs;

		snprintf(pname, sizeof pname, "%s-%d", name, k);
		md = meta(pname, "default", j->arrival, serial++);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(md,
		    "annotations"), "scheduling.k8s.io/group-name", name);
		p->obj = object("v1", "Pod", md);
		spec = cJSON_AddObjectToObject(p->obj, "spec");
		cJSON_AddStringToObject(spec, "schedulerName", "volcano");
		if (j->priority != 0)
			cJSON_AddStringToObject(spec, "priorityClassName", prio);
		cs = cJSON_AddArrayToObject(spec, "containers");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", "c");
		cJSON_AddItemToObject(cJSON_AddObjectToObject(c, "resources"),
		    "requests", res(j->cpu_m, j->memory));
		cJSON_AddItemToArray(cs, c);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(p->obj,
		    "status"), "phase", "Pending");
		hmap_put(m->by_name, json_str(p->obj, "metadata.name"), p);
		m->active[m->nactive++] = (int)(p - m->pods);
		m->npending++;
	}
}

static void
model_list(void *arg, const char *r,
    void (*fn)(void *, cJSON *, void **, const struct sched_meta *),
    void *fnarg)
{
	struct model *m = arg;
	cJSON *o;
	int i;

	i = 0;
	if (strcmp(r, "nodes") == 0)
		cJSON_ArrayForEach(o, m->node_objs)
			fn(fnarg, o, &m->node_memo[i++], NULL);
	else if (strcmp(r, "queues") == 0)
		cJSON_ArrayForEach(o, m->queue_objs)
			fn(fnarg, o, NULL, NULL);
	else if (strcmp(r, "priorityclasses") == 0)
		cJSON_ArrayForEach(o, m->prio_objs)
			fn(fnarg, o, NULL, NULL);
	else if (strcmp(r, "podgroups") == 0) {
		for (i = 0; i < m->tr->njobs; i++)
			if (m->pg[i] != NULL && m->left[i] > 0)
				fn(fnarg, m->pg[i], &m->pg_memo[i], NULL);
	} else if (strcmp(r, "pods") == 0)
		for (i = 0; i < m->nactive; i++)
			fn(fnarg, m->pods[m->active[i]].obj,
			    &m->pods[m->active[i]].memo, NULL);
}

static void
set_running(struct model *m, struct pod *p, const char *node, double now,
    double duration)
{
	if (p->state == 0)
		m->npending--;
	free(p->memo);		/* derived from the version that changes */
	p->memo = NULL;
	json_set_str(json_obj(p->obj, "spec"), "nodeName", node);
	json_set_str(json_obj(p->obj, "status"), "phase", "Running");
	p->state = 1;
	p->end = now + duration;
}

static void
set_pending(struct model *m, struct pod *p)
{
	if (p->state != 0)
		m->npending++;
	free(p->memo);
	p->memo = NULL;
	cJSON_DeleteItemFromObject(json_at(p->obj, "spec"), "nodeName");
	json_set_str(json_obj(p->obj, "status"), "phase", "Pending");
	p->state = 0;
}

static int
queue_index(const struct sim_trace *tr, const char *name)
{
	int i;

	for (i = 0; i < tr->nqueues; i++)
		if (strcmp(tr->queues[i].name, name) == 0)
			return i;
	return -1;
}

/* proportion's deserved cpu per queue, as the session computed it. */
static void
keep_deserved(struct model *m, struct session *ss, struct sim_result *r)
{
	const cJSON *q;

	(void)r;
	cJSON_ArrayForEach(q, ss->qinfo) {
		int i = queue_index(m->tr, q->string);
		const cJSON *c = json_at(q, "deserved.cpu");

		if (i >= 0 && cJSON_IsNumber(c))
			m->deserved[i] = c->valuedouble;
	}
}

/* The cluster at m->now: a row of the result. */
static void
sample(struct model *m, struct sim_result *r)
{
	struct sim_row *row;
	double used = 0;
	int i;

	XGROW(r->rows, r->caprows, (size_t)r->nrows + 1);
	row = &r->rows[r->nrows++];
	row->t = m->now;
	row->share = xcalloc((size_t)m->tr->nqueues + 1, sizeof *row->share);
	row->deserved = xcalloc((size_t)m->tr->nqueues + 1,
	    sizeof *row->deserved);
	for (i = 0; i < m->nactive; i++) {
		const struct pod *p = &m->pods[m->active[i]];
		const struct sim_job *j = &m->tr->jobs[p->job];

		if (p->state != 1)
			continue;
		used += j->cpu_m;
		row->share[queue_index(m->tr, j->queue)] += j->cpu_m;
	}
	row->util = r->total_cpu > 0 ? used / r->total_cpu : 0;
	for (i = 0; i < m->tr->nqueues; i++) {
		row->share[i] = r->total_cpu > 0 ? row->share[i] /
		    r->total_cpu : 0;
		row->deserved[i] = r->total_cpu > 0 ? m->deserved[i] /
		    r->total_cpu : 0;
	}
}

static void
result_init(struct sim_result *r, const struct sim_trace *tr,
    const struct sim_nodes *nodes)
{
	int i;

	memset(r, 0, sizeof *r);
	r->njobs = tr->njobs;
	r->nqueues = tr->nqueues;
	r->jobs = xcalloc((size_t)tr->njobs + 1, sizeof *r->jobs);
	for (i = 0; i < tr->njobs; i++)
		r->jobs[i].start = r->jobs[i].end = -1;
	r->total_cpu = nodes->cpu_m;
}

void
sim_result_free(struct sim_result *r)
{
	int i;

	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].share);
		free(r->rows[i].deserved);
	}
	free(r->rows);
	free(r->jobs);
	for (i = 0; i < r->nunplaced; i++) {
		free(r->unplaced[i].reason);
		free(r->unplaced[i].message);
	}
	free(r->unplaced);
	memset(r, 0, sizeof *r);
}

/* A session's source at m->now: virtual time, on the clock the jobs'
   creation stamps use. */
static void
source_at(struct model *m, struct sched_source *src)
{
	struct sched_source s = { model_list, m, NULL, 0, 1 };
	char ts[32];

	stamp(ts, m->now);
	s.now = (double)util_time_parse(ts) + (m->now - (double)(long)m->now);
	*src = s;
}

/* One session at m->now; what it changed: binds + evictions. */
static int
session(struct model *m, struct policy *pol, struct sim_result *r)
{
	struct sched_source src;
	struct sched_outcome out;
	struct session ss;
	struct { struct pod *p; const char *node; } *dec;
	int i, n = 0, changed;

	source_at(m, &src);
	session_open(&ss, pol, &src);
	session_run(&ss);
	dec = xcalloc((size_t)(ss.nbinds + ss.nevicts) + 1, sizeof *dec);
	for (i = 0; i < ss.nbinds; i++) {
		dec[n].p = hmap_get(m->by_name, ss.binds[i].t->name);
		dec[n++].node = ss.binds[i].n->name;
	}
	for (i = 0; i < ss.nevicts; i++) {
		dec[n].p = hmap_get(m->by_name, ss.evicts[i].t->name);
		dec[n++].node = NULL;
	}
	/* The PodGroups' phases, and the figures of this moment. */
	outcome_build(&ss, &out);
	for (i = 0; i < out.npgs; i++) {
		const char *ph = json_str(out.pgs[i].status, "phase");
		int j = atoi(out.pgs[i].job->name + 4);

		if (ph != NULL && j >= 0 && j < m->tr->njobs && m->pg[j] &&
		    strcmp(ph, json_str(m->pg[j], "status.phase")) != 0) {
			json_set_str(json_obj(m->pg[j], "status"), "phase", ph);
			free(m->pg_memo[j]);
			m->pg_memo[j] = NULL;
		}
	}
	outcome_free(&out);
	keep_deserved(m, &ss, r);
	session_free(&ss);
	changed = n;
	for (i = 0; i < n; i++) {
		struct pod *p = dec[i].p;
		const struct sim_job *j;

		if (p == NULL)
			continue;
		j = &m->tr->jobs[p->job];
		if (dec[i].node != NULL) {
			set_running(m, p, dec[i].node, m->now, j->duration);
			if (r->jobs[p->job].start < 0)
				r->jobs[p->job].start = m->now;
		} else {
			set_pending(m, p);
			r->preemptions++;
		}
	}
	free(dec);
	sample(m, r);
	r->sessions++;
	return changed;
}

static int
cmp_unplaced(const void *a, const void *b)
{
	return ((const struct sim_unplaced *)a)->job -
	    ((const struct sim_unplaced *)b)->job;
}

/*
 * The jobs still waiting when the run ends, each with the reason and
 * message explain gives: one more session at that moment (the last one
 * changed nothing, so this one decides the same), recorded as the
 * daemon's explain records a session.
 */
static void
left_unplaced(struct model *m, struct policy *pol, struct sim_result *r)
{
	struct sched_source src;
	struct session ss;
	explain *ex = explain_new(1);
	int i;

	source_at(m, &src);
	session_open(&ss, pol, &src);
	session_run(&ss);
	explain_record(ex, &ss, (uint64_t)r->sessions + 1);
	r->unplaced = xcalloc((size_t)ss.njobs + 1, sizeof *r->unplaced);
	for (i = 0; i < ss.njobs; i++) {
		const struct s_job *j = ss.jobs[i];
		struct sim_unplaced *u;
		cJSON *rec;
		int k;

		if (j->n[TS_PENDING] == 0 && j->n[TS_PIPELINED] == 0)
			continue;
		k = strncmp(j->name, "job-", 4) == 0 ? atoi(j->name + 4) : -1;
		if (k < 0 || k >= m->tr->njobs)
			continue;
		u = &r->unplaced[r->nunplaced++];
		u->job = k;
		u->pending = j->n[TS_PENDING] + j->n[TS_PIPELINED];
		rec = explain_job(ex, j->key);
		u->reason = xstrdup(json_str(rec, "reason") != NULL ?
		    json_str(rec, "reason") : "Unknown");
		u->message = xstrdup(json_str(rec, "message") != NULL ?
		    json_str(rec, "message") : "");
		cJSON_Delete(rec);
	}
	qsort(r->unplaced, (size_t)r->nunplaced, sizeof *r->unplaced,
	    cmp_unplaced);
	session_free(&ss);
	explain_free(ex);
}

/* Pods that ran their time leave; their jobs may complete. */
static void
finish(struct model *m, struct sim_result *r)
{
	int i, k = 0;

	for (i = 0; i < m->nactive; i++) {
		struct pod *p = &m->pods[m->active[i]];

		if (p->state != 1 || p->end > m->now + 1e-9) {
			m->active[k++] = m->active[i];
			continue;
		}
		p->state = 2;
		hmap_del(m->by_name, json_str(p->obj, "metadata.name"));
		cJSON_Delete(p->obj);
		p->obj = NULL;
		free(p->memo);
		p->memo = NULL;
		if (--m->left[p->job] == 0) {
			r->jobs[p->job].end = m->now;
			cJSON_Delete(m->pg[p->job]);
			m->pg[p->job] = NULL;
			free(m->pg_memo[p->job]);
			m->pg_memo[p->job] = NULL;
		}
	}
	m->nactive = k;
}

/* The next event after now: an arrival or a pod's end; INFINITY if none. */
static double
next_event(const struct model *m, int arrived)
{
	double t = INFINITY;
	int i;

	if (arrived < m->tr->njobs)
		t = m->tr->jobs[arrived].arrival;
	for (i = 0; i < m->nactive; i++)
		if (m->pods[m->active[i]].state == 1 &&
		    m->pods[m->active[i]].end < t)
			t = m->pods[m->active[i]].end;
	return t;
}

static void
model_free(struct model *m)
{
	int i;

	for (i = 0; i < m->tr->njobs; i++) {
		cJSON_Delete(m->pg[i]);
		free(m->pg_memo[i]);
	}
	for (i = 0; i < m->tr->npods; i++) {
		cJSON_Delete(m->pods[i].obj);
		free(m->pods[i].memo);
	}
	for (i = 0; i < m->nodes->count; i++)
		free(m->node_memo[i]);
	free(m->node_memo);
	free(m->pg_memo);
	cJSON_Delete(m->node_objs);
	cJSON_Delete(m->queue_objs);
	cJSON_Delete(m->prio_objs);
	hmap_free(m->by_name);
	free(m->pg);
	free(m->pods);
	free(m->first_pod);
	free(m->left);
	free(m->active);
	free(m->deserved);
}

int
sim_run(const char *share, const char *dir, const struct sim_trace *tr,
    const struct sim_nodes *nodes, struct sim_result *r, char **cause)
{
	struct model m;
	struct policy *pol;
	luahost *h;
	double period, t;
	int arrived = 0, pending;

	h = policytest_host(share, dir, NULL);
	if ((pol = policy_load(h, cause)) == NULL) {
		luahost_free(h);
		return -1;
	}
	period = pol->conf.period_ms > 0 ? pol->conf.period_ms / 1000.0 : 1;
	model_init(&m, tr, nodes);
	result_init(r, tr, nodes);
	m.deserved = xcalloc((size_t)tr->nqueues + 1, sizeof *m.deserved);
	for (t = 0;;) {
		m.now = t;
		finish(&m, r);
		while (arrived < tr->njobs && tr->jobs[arrived].arrival <= t +
		    1e-9)
			arrive(&m, arrived++);
		pending = m.npending > 0;
		if (arrived == tr->njobs && !pending && next_event(&m,
		    arrived) == INFINITY) {
			sample(&m, r);	/* the end: the last span closes */
			break;
		}
		if (pending && session(&m, pol, r) > 0) {
			t += period;
			continue;
		}
		if (!pending)
			sample(&m, r);
		/* Nothing new until the next event: go there (on the grid). */
		{
			double e = next_event(&m, arrived);

			if (e == INFINITY) {
				r->stuck = 1;
				break;
			}
			t = e <= t + period ? t + period :
			    ceil(e / period - 1e-9) * period;
		}
		if (r->sessions > 10000000) {
			r->stuck = 1;
			break;
		}
	}
	r->makespan = t;
	if (m.npending > 0)
		left_unplaced(&m, pol, r);
	model_free(&m);
	policy_free(pol);
	luahost_free(h);
	return 0;
}
