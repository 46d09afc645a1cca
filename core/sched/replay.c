/*
 * One scheduling session replayed offline on a recorded cluster, for
 * `volray session replay` and `volray policy dry-run`: the objects a
 * session reads (Nodes, Queues, PodGroups, PriorityClasses, Pods, as
 * `volray session record` saved them from the API), a policy directory
 * over the built-in plugins, the same framework and plugins the daemon
 * runs, no daemon and no clock: the same input gives the same decisions
 * every time (orders fall back to creation time and uid, never to
 * chance). The decisions:
 *
 *   {"binds":     {"ns/pod": "node", ...},
 *    "pipelined": {"ns/pod": "node", ...},
 *    "evicted":   {"ns/pod": "reason", ...},
 *    "waiting":   {"ns/job": {"reason": ..., "message": ...,
 *                               "victims": {"ns/pod": "verdict", ...}},
 *                  ...},
 *    "pluginFailures": ["plugin X failed in ...", ...]}
 *
 * with the reasons explain.c gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luahost.h"
#include "sched/policytest.h"
#include "sched/sched_int.h"

static char *
task_key(const struct s_task *t)
{
	return util_printf("%s/%s", t->ns, t->name);
}

static void
add_str(cJSON *o, char *key, const char *v)
{
	cJSON_AddStringToObject(o, key, v ? v : "");
	free(key);
}

/* "verdict" or "verdict (plugin X)", in a static buffer. */
static const char *
verdict_of(const cJSON *v, const char *plugin)
{
	static char buf[256];

	snprintf(buf, sizeof buf, "%s%s%s%s", json_str(v, "verdict") ?
	    json_str(v, "verdict") : "?", plugin ? " (plugin " : "",
	    plugin ? plugin : "", plugin ? ")" : "");
	return buf;
}

/* The verdicts on the victims a waiting job considered (its record's
   steps'), "evicted" or "refused (plugin X)". */
static void
add_victims(cJSON *w, const cJSON *record)
{
	const cJSON *st, *v;
	cJSON *out = NULL;

	cJSON_ArrayForEach(st, json_at(record, "steps"))
		cJSON_ArrayForEach(v, json_at(st, "victims")) {
			const char *plugin = json_str(v, "plugin");

			if (out == NULL)
				out = cJSON_AddObjectToObject(w, "victims");
			cJSON_DeleteItemFromObject(out, json_str(v, "pod"));
			add_str(out, xstrdup(json_str(v, "pod")),
			    verdict_of(v, plugin));
		}
}

cJSON *
replay_decisions(struct session *ss)
{
	cJSON *d = cJSON_CreateObject(), *binds, *pipe, *ev, *wait, *fails;
	explain *ex = explain_new(1);
	int i;

	binds = cJSON_AddObjectToObject(d, "binds");
	for (i = 0; i < ss->nbinds; i++)
		add_str(binds, task_key(ss->binds[i].t), ss->binds[i].n->name);
	pipe = cJSON_AddObjectToObject(d, "pipelined");
	for (i = 0; i < ss->ntasks; i++)
		if (ss->tasks[i]->status == TS_PIPELINED)
			add_str(pipe, task_key(ss->tasks[i]),
			    ss->tasks[i]->nominated);
	ev = cJSON_AddObjectToObject(d, "evicted");
	for (i = 0; i < ss->nevicts; i++)
		add_str(ev, task_key(ss->evicts[i].t), ss->evicts[i].reason);
	wait = cJSON_AddObjectToObject(d, "waiting");
	explain_record(ex, ss, 1);
	for (i = 0; i < ss->njobs; i++) {
		const struct s_job *j = ss->jobs[i];
		cJSON *r, *w;

		if (!explain_waits(j))
			continue;
		if ((r = explain_job(ex, j->key)) == NULL)
			continue;
		w = cJSON_AddObjectToObject(wait, j->key);
		cJSON_AddStringToObject(w, "reason", json_str(r, "reason") ?
		    json_str(r, "reason") : "");
		cJSON_AddStringToObject(w, "message", json_str(r, "message") ?
		    json_str(r, "message") : "");
		add_victims(w, r);
		cJSON_Delete(r);
	}
	explain_free(ex);
	fails = cJSON_AddArrayToObject(d, "pluginFailures");
	for (i = 0; i < ss->nevents; i++)
		cJSON_AddItemToArray(fails, cJSON_CreateString(ss->events[i]));
	return d;
}

cJSON *
replay_run(const char *share, const char *dir, const char *over,
    const cJSON *cluster, double now, char **cause)
{
	cJSON *objs = cJSON_Duplicate(cluster, 1), *d;
	struct policytest_cluster pc;
	struct sched_source src;
	struct session ss;
	struct policy *p;
	luahost *h;

	if (!cJSON_IsArray(objs) || policytest_complete(objs, cause) != 0) {
		if (*cause == NULL)
			*cause = xstrdup("cluster: want a list of objects");
		cJSON_Delete(objs);
		return NULL;
	}
	policytest_source(&pc, objs, &src);
	src.now = now;		/* the recording's time: waits as they were */
	h = policytest_host(share, dir, over);
	if ((p = policy_load(h, cause)) == NULL) {
		luahost_free(h);
		cJSON_Delete(objs);
		return NULL;
	}
	session_open(&ss, p, &src);
	session_run(&ss);
	d = replay_decisions(&ss);
	session_free(&ss);
	policy_free(p);
	luahost_free(h);
	cJSON_Delete(objs);
	return d;
}
