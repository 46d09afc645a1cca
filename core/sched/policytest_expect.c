/*
 * What a `policy test` case may assert besides binds, pipelines and
 * evictions: what the session would write and record, as volrayd's
 * scheduler writes it (outcome.c gives both the same words).
 *
 *   expect:
 *     podgroups:           # the PodGroup's status after the session
 *       pg1: {phase: Inqueue, condition: Unschedulable,
 *             reason: TeamQuota, message: "over its quota"}
 *     pods:                # the pod's PodScheduled condition
 *       p1: {status: "False", reason: Unschedulable, message: "Insufficient cpu"}
 *     events:              # each must be among the session's events
 *     - {object: podgroup/pg1, reason: TeamQuota, message: "quota"}
 *     queues:              # allocated (the session's), or a figure a
 *       q1:                #   plugin gave with ssn:queue_info
 *         allocated: {cpu: "2", memory: 4Gi}
 *         deserved: {cpu: "4"}
 *     victims:             # per preemptor job (PodGroup or pod name),
 *       pg1:               #   each victim's verdict as explain gives it,
 *         p2: evicted      #   "refused (plugin NAME)" naming the plugin
 *         p3: refused (plugin priority)
 *
 * A message matches when it contains the expected text; every other
 * field must be equal; a key not listed here fails the case (a misspelt
 * one would otherwise pass unchecked). Resources compare as quantities, on the names
 * given.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/policytest.h"
#include "sched/sched_int.h"

struct verdict {
	FILE *out;
	const char *file, *name;
	int failed;
};

static void
miss(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (!v->failed)
		fprintf(v->out, "FAIL %s: %s\n", v->file, v->name);
	v->failed = 1;
	fprintf(v->out, "     ");
	va_start(ap, fmt);
	vfprintf(v->out, fmt, ap);
	va_end(ap);
	fprintf(v->out, "\n");
}

/* The first key of o not in known, with the known ones, as a reason. */
char *
policytest_expect_keys(const cJSON *o, const char *const *known)
{
	const cJSON *it;
	char *s, *next;
	int i;

	cJSON_ArrayForEach(it, o) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(it->string, known[i]) == 0)
				break;
		if (known[i] != NULL)
			continue;
		s = util_printf("unknown key \"%s\" (want ", it->string);
		for (i = 0; known[i] != NULL; i++) {
			next = util_printf("%s%s%s", s, i == 0 ? "" :
			    known[i + 1] == NULL ? " or " : ", ", known[i]);
			free(s);
			s = next;
		}
		next = util_printf("%s)", s);
		free(s);
		return next;
	}
	return NULL;
}

/* An entry's keys, each known (else a miss naming the other): 0 or -1. */
static int
keys_ok(struct verdict *v, const char *what, const cJSON *w,
    const char *const *known)
{
	char *why;

	if (!cJSON_IsObject(w)) {
		miss(v, "%s: want a mapping", what);
		return -1;
	}
	if ((why = policytest_expect_keys(w, known)) == NULL)
		return 0;
	miss(v, "%s: %s", what, why);
	free(why);
	return -1;
}

/* want's field k against got: equal, or contained for a message. */
static void
field(struct verdict *v, const char *what, const cJSON *want, const char *k,
    const char *got)
{
	const char *w = json_str(want, k);

	if (cJSON_GetObjectItemCaseSensitive(want, k) == NULL)
		return;
	if (w == NULL) {
		miss(v, "%s: %s: want a string", what, k);
		return;
	}
	if (got == NULL)
		got = "";
	if (strcmp(k, "message") == 0 ? strstr(got, w) == NULL :
	    strcmp(got, w) != 0)
		miss(v, "%s: %s: want %s\"%s\", got \"%s\"", what, k,
		    strcmp(k, "message") == 0 ? "one containing " : "", w, got);
}

static struct s_task *
task_named(struct session *ss, const char *name)
{
	int i;

	for (i = 0; i < ss->ntasks; i++)
		if (strcmp(ss->tasks[i]->name, name) == 0)
			return ss->tasks[i];
	return NULL;
}

static void
podgroups(struct verdict *v, struct session *ss, const cJSON *want)
{
	static const char *const keys[] = { "phase", "condition", "reason",
	    "message", NULL };
	struct sched_outcome out;
	const cJSON *w;
	int i;

	outcome_build(ss, &out);
	cJSON_ArrayForEach(w, want) {
		const cJSON *st = NULL, *c, *cond = NULL;
		const char *type = json_str(w, "condition");
		char what[300];

		snprintf(what, sizeof what, "podgroup %s", w->string);
		if (keys_ok(v, what, w, keys) != 0)
			continue;
		for (i = 0; i < out.npgs; i++)
			if (strcmp(out.pgs[i].job->name, w->string) == 0)
				st = out.pgs[i].status;
		if (st == NULL) {
			miss(v, "%s: not in the cluster (or no queue)", what);
			continue;
		}
		field(v, what, w, "phase", json_str(st, "phase"));
		/* The condition of that type, else the session's one. */
		cJSON_ArrayForEach(c, json_at(st, "conditions")) {
			const char *t = json_str(c, "type");

			if (t == NULL)
				continue;
			if (type != NULL ? strcmp(t, type) == 0 :
			    strcmp(t, "Unschedulable") == 0 ||
			    strcmp(t, "Scheduled") == 0)
				cond = c;
		}
		if (type != NULL && cond == NULL) {
			miss(v, "%s: no %s condition", what, type);
			continue;
		}
		field(v, what, w, "condition", json_str(cond, "type"));
		field(v, what, w, "reason", json_str(cond, "reason"));
		field(v, what, w, "message", json_str(cond, "message"));
	}
	outcome_free(&out);
}

static void
pods(struct verdict *v, struct session *ss, const cJSON *want)
{
	static const char *const keys[] = { "status", "reason", "message",
	    NULL };
	const cJSON *w;

	cJSON_ArrayForEach(w, want) {
		struct s_task *t = task_named(ss, w->string);
		const char *status = "True", *reason = "";
		char what[300], *msg = NULL;

		snprintf(what, sizeof what, "pod %s", w->string);
		if (keys_ok(v, what, w, keys) != 0)
			continue;
		if (t == NULL) {
			miss(v, "%s: not in the cluster", what);
			continue;
		}
		if (t->status == TS_PIPELINED) {
			status = "False";
			reason = "Unschedulable";
			msg = xstrdup("waiting for preempted or reclaimed pods "
			    "to release their resources");
		} else if (t->status == TS_PENDING) {
			status = "False";
			reason = "Unschedulable";
			msg = outcome_pending_msg(t);
		}
		field(v, what, w, "status", status);
		field(v, what, w, "reason", reason);
		field(v, what, w, "message", msg);
		free(msg);
	}
}

/* The session's events, one "object|reason|message" string each. */
struct events {
	char **v;
	int n;
	size_t cap;
};

static void
add_event(struct events *e, const char *obj, const char *reason,
    const char *msg)
{
	XGROW(e->v, e->cap, (size_t)e->n + 1);
	e->v[e->n++] = util_printf("%s|%s|%s", obj, reason, msg ? msg : "");
}

static void
pg_event(void *arg, const struct s_job *j, const char *reason,
    const char *msg)
{
	char *obj = util_printf("podgroup/%s", j->name);

	add_event(arg, obj, reason, msg);
	free(obj);
}

static void
session_events(struct session *ss, struct events *e)
{
	char *obj, *msg;
	int i;

	for (i = 0; i < ss->njobs; i++)
		if (ss->jobs[i]->pg != NULL && ss->jobs[i]->queue != NULL)
			outcome_pg_events(ss->jobs[i], pg_event, e);
	for (i = 0; i < ss->ntasks; i++)
		if ((msg = outcome_pending_msg(ss->tasks[i])) != NULL) {
			obj = util_printf("pod/%s", ss->tasks[i]->name);
			add_event(e, obj, "FailedScheduling", msg);
			free(obj);
			free(msg);
		}
	for (i = 0; i < ss->nevicts; i++) {
		obj = util_printf("pod/%s", ss->evicts[i].t->name);
		add_event(e, obj, "Preempted", ss->evicts[i].reason);
		free(obj);
	}
	for (i = 0; i < ss->nevents; i++)
		add_event(e, "queue/root", "PluginFailed", ss->events[i]);
}

static void
events(struct verdict *v, struct session *ss, const cJSON *want)
{
	static const char *const keys[] = { "object", "reason", "message",
	    NULL };
	struct events e = { NULL, 0, 0 };
	const cJSON *w;
	int i;

	session_events(ss, &e);
	cJSON_ArrayForEach(w, want) {
		const char *obj = json_str(w, "object"), *r = json_str(w, "reason");
		const char *m = json_str(w, "message");
		size_t ol = obj ? strlen(obj) : 0, rl = r ? strlen(r) : 0;
		int found = 0;

		if (keys_ok(v, "events", w, keys) != 0)
			continue;
		if (obj == NULL || r == NULL) {
			miss(v, "events: each wants an object (kind/name) and "
			    "a reason");
			continue;
		}
		for (i = 0; i < e.n && !found; i++)
			found = strncmp(e.v[i], obj, ol) == 0 &&
			    e.v[i][ol] == '|' &&
			    strncmp(e.v[i] + ol + 1, r, rl) == 0 &&
			    e.v[i][ol + 1 + rl] == '|' &&
			    (m == NULL || strstr(e.v[i] + ol + rl + 2, m));
		if (!found) {
			miss(v, "events: none for %s with reason %s%s%s%s; the "
			    "session's:", obj, r, m ? " and a message "
			    "containing \"" : "", m ? m : "", m ? "\"" : "");
			for (i = 0; i < e.n; i++)
				fprintf(v->out, "       %s\n", e.v[i]);
		}
	}
	for (i = 0; i < e.n; i++)
		free(e.v[i]);
	free(e.v);
}

/* A resource figure in base units: cpu in millicores, as plugins see it. */
static int
res_value(const char *name, const cJSON *q, double *out)
{
	if (quantity_json(q, out) != 0)
		return -1;
	if (strcmp(name, "cpu") == 0)
		*out *= 1000;
	return 0;
}

static void
resources(struct verdict *v, const char *what, const cJSON *want,
    const cJSON *got)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, want) {
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, w->string);
		double x, y = cJSON_IsNumber(g) ? g->valuedouble : 0;

		if (res_value(w->string, w, &x) != 0) {
			miss(v, "%s: %s: want a quantity", what, w->string);
			continue;
		}
		if (x - y > 1e-6 * (x > 0 ? x : 1) ||
		    y - x > 1e-6 * (x > 0 ? x : 1))
			miss(v, "%s: %s: want %g, got %g%s", what, w->string,
			    x, y, strcmp(w->string, "cpu") == 0 ?
			    " (millicores)" : "");
	}
}

static cJSON *
res_json(const struct podspec_res *r)
{
	cJSON *o = cJSON_CreateObject();
	int i;

	cJSON_AddNumberToObject(o, "cpu", (double)r->cpu);
	cJSON_AddNumberToObject(o, "memory", (double)r->memory);
	cJSON_AddNumberToObject(o, "pods", (double)r->pods);
	for (i = 0; i < r->next; i++)
		cJSON_AddNumberToObject(o, r->ext[i].name,
		    (double)r->ext[i].value);
	return o;
}

static void
queues(struct verdict *v, struct session *ss, const cJSON *want)
{
	const cJSON *w, *k;

	cJSON_ArrayForEach(w, want) {
		struct s_queue *q = hmap_get(ss->queue_index, w->string);
		char what[300];

		if (q == NULL) {
			miss(v, "queue %s: not in the session", w->string);
			continue;
		}
		cJSON_ArrayForEach(k, w) {
			const cJSON *got = json_at(cJSON_GetObjectItemCaseSensitive(
			    ss->qinfo, q->name), k->string);
			cJSON *mine = NULL;

			snprintf(what, sizeof what, "queue %s: %s", q->name,
			    k->string);
			if (strcmp(k->string, "allocated") == 0)
				got = mine = res_json(&q->allocated);
			if (got == NULL)
				miss(v, "%s: no plugin gave it "
				    "(ssn:queue_info)", what);
			else
				resources(v, what, k, got);
			cJSON_Delete(mine);
		}
	}
}

static void
victims(struct verdict *v, struct session *ss, const cJSON *want)
{
	const cJSON *w, *p;
	int i;

	cJSON_ArrayForEach(w, want) {
		struct s_job *j = NULL;
		struct s_task *t;

		for (i = 0; i < ss->njobs && j == NULL; i++)
			if (strcmp(ss->jobs[i]->name, w->string) == 0)
				j = ss->jobs[i];
		if (j == NULL && (t = task_named(ss, w->string)) != NULL &&
		    t->job != NULL && t->job->pg == NULL)
			j = t->job;	/* a bare pod's implicit group */
		if (j == NULL) {
			miss(v, "victims of %s: no such job", w->string);
			continue;
		}
		cJSON_ArrayForEach(p, w) {
			const struct victim_note *vn = NULL;
			char what[300], *got;

			for (i = 0; i < j->nvnotes && vn == NULL; i++)
				if (strcmp(j->vnotes[i].t->name, p->string) == 0)
					vn = &j->vnotes[i];
			snprintf(what, sizeof what, "victims of %s", w->string);
			if (!cJSON_IsString(p)) {
				miss(v, "%s: %s: want a verdict", what,
				    p->string);
				continue;
			}
			got = vn == NULL ? xstrdup("not considered") :
			    util_printf("%s%s%s%s", victim_verdict_name(vn->v),
			    vn->plugin ? " (plugin " : "", vn->plugin ?
			    vn->plugin : "", vn->plugin ? ")" : "");
			if (strcmp(got, p->valuestring) != 0)
				miss(v, "%s: %s: want %s, got %s", what,
				    p->string, p->valuestring, got);
			free(got);
		}
	}
}

int
policytest_expect(struct session *ss, const cJSON *expect, FILE *out,
    const char *file, const char *name, int failed)
{
	struct verdict v = { out, file, name, failed };

	podgroups(&v, ss, json_at(expect, "podgroups"));
	pods(&v, ss, json_at(expect, "pods"));
	events(&v, ss, json_at(expect, "events"));
	queues(&v, ss, json_at(expect, "queues"));
	victims(&v, ss, json_at(expect, "victims"));
	return v.failed && !failed;
}
