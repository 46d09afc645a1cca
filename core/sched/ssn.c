/*
 * The session as Lua plugins see it: `ssn`, the first argument of every
 * extension-point function. It holds the queues' views, the cluster's
 * total and node count, `jobs` (every job's view, built when first read)
 * and the calls a plugin may make:
 *
 *   ssn:nodes()            every node's view
 *   ssn:node(name)         one node's view, or nil
 *   ssn:tasks(job)         the job's task views
 *   ssn:node_tasks(node)   the task views of the tasks on a node
 *   ssn:active_jobs()      the jobs that had work or changed this session
 *   ssn:job_condition(job, type, reason, message)
 *                          the PodGroup's condition this session
 *   ssn:wake_after(s)      a session again within s seconds, even if
 *                          nothing it reads changes (time-based rules)
 *   ssn:use_predicates()   the C predicates (predicate.c) on
 *   ssn:use_scores{...}    the C scores, with these weights
 *
 * ssn_open makes it and calls each plugin's open(ssn, args); ssn_close
 * calls their close and cuts ssn and the views from the session, so what
 * a plugin kept reads as empty afterwards.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"
#include "sched/sched_int.h"

static struct session *
ssn_of(lua_State *L)
{
	struct session *ss;

	lua_getfield(L, 1, "_session");
	ss = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (ss == NULL)
		luaL_error(L, "not a session");
	return ss;
}

/* ssn:nodes() -> every node's view */
static int
l_ssn_nodes(lua_State *L)
{
	struct session *ss = ssn_of(L);
	int i;

	lua_createtable(L, ss->nnodes, 0);
	for (i = 0; i < ss->nnodes; i++) {
		view_push_node(ss, &ss->nodes[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* A ResourceQuota's hard or used list as resources: cpu-like names
   (cpu, requests.cpu, limits.cpu) in millicores, the rest in units. */
static void
push_quota_res(lua_State *L, const cJSON *list)
{
	const cJSON *it;

	lua_newtable(L);
	cJSON_ArrayForEach(it, list) {
		double v;
		size_t n = strlen(it->string);

		if (quantity_json(it, &v) != 0)
			continue;
		if (n >= 3 && strcmp(it->string + n - 3, "cpu") == 0)
			v *= 1000;
		lua_pushnumber(L, v);
		lua_setfield(L, -2, it->string);
	}
}

/* Objects of a namespace (or all, when ns is nil) as tables. */
static int
push_namespaced(lua_State *L, const cJSON **objs, int n,
    void (*push)(lua_State *, const cJSON *))
{
	const char *ns = luaL_optstring(L, 2, NULL);
	int i, k = 0;

	lua_newtable(L);
	for (i = 0; i < n; i++) {
		const char *ons = json_str(objs[i], "metadata.namespace");

		if (ns != NULL && (ons == NULL || strcmp(ons, ns) != 0))
			continue;
		push(L, objs[i]);
		lua_rawseti(L, -2, ++k);
	}
	return 1;
}

static void
push_quota(lua_State *L, const cJSON *q)
{
	lua_newtable(L);
	lua_pushstring(L, json_str(q, "metadata.name"));
	lua_setfield(L, -2, "name");
	lua_pushstring(L, json_str(q, "metadata.namespace"));
	lua_setfield(L, -2, "namespace");
	push_quota_res(L, json_at(q, "spec.hard"));
	lua_setfield(L, -2, "hard");
	push_quota_res(L, json_at(q, "status.used"));
	lua_setfield(L, -2, "used");
}

/* ssn:quotas([namespace]) -> the ResourceQuotas: name, namespace,
   hard, used */
static int
l_ssn_quotas(lua_State *L)
{
	struct session *ss = ssn_of(L);

	return push_namespaced(L, ss->quotas, ss->nquotas, push_quota);
}

static void
push_pdb(lua_State *L, const cJSON *p)
{
	const cJSON *x;

	lua_newtable(L);
	lua_pushstring(L, json_str(p, "metadata.name"));
	lua_setfield(L, -2, "name");
	lua_pushstring(L, json_str(p, "metadata.namespace"));
	lua_setfield(L, -2, "namespace");
	luaconv_push(L, json_at(p, "spec.selector"));
	lua_setfield(L, -2, "selector");
	if ((x = json_at(p, "spec.minAvailable")) != NULL) {
		luaconv_push(L, x);
		lua_setfield(L, -2, "min_available");
	}
	if ((x = json_at(p, "spec.maxUnavailable")) != NULL) {
		luaconv_push(L, x);
		lua_setfield(L, -2, "max_unavailable");
	}
	if ((x = json_at(p, "status.disruptionsAllowed")) != NULL &&
	    cJSON_IsNumber(x)) {
		lua_pushinteger(L, (lua_Integer)x->valuedouble);
		lua_setfield(L, -2, "disruptions_allowed");
	}
	if ((x = json_at(p, "status.disruptedPods")) != NULL &&
	    cJSON_IsObject(x)) {
		luaconv_push(L, x);
		lua_setfield(L, -2, "disrupted_pods");
	}
}

/* ssn:pdbs([namespace]) -> the PodDisruptionBudgets: name, namespace,
   selector, min_available, max_unavailable, disruptions_allowed,
   disrupted_pods */
static int
l_ssn_pdbs(lua_State *L)
{
	struct session *ss = ssn_of(L);

	return push_namespaced(L, ss->pdbs, ss->npdbs, push_pdb);
}

/* ssn:tasks(job) -> the job's task views */
static int
l_ssn_tasks(lua_State *L)
{
	struct session *ss = ssn_of(L);
	struct s_job *j = view_check_job(L, 2, "ssn:tasks");
	int i;

	lua_createtable(L, j->ntasks, 0);
	for (i = 0; i < j->ntasks; i++) {
		view_push_task(ss, j->tasks[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* ssn:node_tasks(node) -> the task views of the tasks on the node (a
   view or a name) */
static int
l_ssn_node_tasks(lua_State *L)
{
	struct session *ss = ssn_of(L);
	struct s_node *n;
	int i;

	if (lua_type(L, 2) == LUA_TSTRING) {
		if ((n = hmap_get(ss->node_index, lua_tostring(L, 2))) == NULL)
			return luaL_error(L, "ssn:node_tasks: no node %s",
			    lua_tostring(L, 2));
	} else
		n = view_check_node(L, 2, "ssn:node_tasks");
	lua_createtable(L, n->ntasks, 0);
	for (i = 0; i < n->ntasks; i++) {
		view_push_task(ss, n->tasks[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/*
 * ssn:wake_after(seconds): the scheduler skips a session whose input did
 * not change since the last one (it would decide the same), except at
 * least once a minute; a plugin whose decision moves with the clock (an
 * eviction period, a window, a deadline) asks for the next session
 * here. The soonest request of a session counts.
 */
static int
l_ssn_wake_after(lua_State *L)
{
	struct session *ss = ssn_of(L);
	double s = luaL_checknumber(L, 2);

	if (!(s > 0) || s > 86400 * 366)
		return luaL_error(L, "ssn:wake_after: seconds must be above 0 "
		    "and within a year, not %f", s);
	if (ss->wake_after == 0 || s < ss->wake_after)
		ss->wake_after = s;
	return 0;
}

/* Seconds east of UTC of the local time zone at t. */
static long
utc_offset(double t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (localtime_r(&tt, &tm) == NULL)
		return 0;
	return tm.tm_gmtoff;
}

/* ssn:active_jobs() -> the jobs that had work or changed this session */
static int
l_ssn_active_jobs(lua_State *L)
{
	struct session *ss = ssn_of(L);
	int i, n = 0;

	lua_newtable(L);
	for (i = 0; i < ss->njobs; i++)
		if (ss->jobs[i]->active) {
			view_push_job(ss, ss->jobs[i]);
			lua_rawseti(L, -2, ++n);
		}
	return 1;
}

/* ssn.jobs, built when first read: every job's view. */
static int
l_ssn_index(lua_State *L)
{
	struct session *ss;
	int i;

	if (lua_type(L, 2) != LUA_TSTRING || strcmp(lua_tostring(L, 2),
	    "jobs") != 0)
		return 0;
	ss = ssn_of(L);
	lua_createtable(L, ss->njobs, 0);
	for (i = 0; i < ss->njobs; i++) {
		view_push_job(ss, ss->jobs[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, 1, "jobs");
	return 1;
}

/* ssn:node(name) -> view or nil */
static int
l_ssn_node(lua_State *L)
{
	struct session *ss = ssn_of(L);
	struct s_node *n = hmap_get(ss->node_index, luaL_checkstring(L, 2));

	if (n == NULL)
		return 0;
	view_push_node(ss, n);
	return 1;
}

/* ssn:job_condition(job, type, reason, message): the PodGroup's
   condition this session (Unschedulable or Scheduled). */
static int
l_ssn_job_condition(lua_State *L)
{
	struct s_job *j;

	ssn_of(L);
	j = view_check_job(L, 2, "ssn:job_condition");
	free(j->cond_type);
	free(j->cond_reason);
	free(j->cond_msg);
	j->cond_type = xstrdup(luaL_checkstring(L, 3));
	j->cond_reason = xstrdup(luaL_optstring(L, 4, ""));
	j->cond_msg = xstrdup(luaL_optstring(L, 5, ""));
	return 0;
}

/* ssn:queue_info(queue, key, value): a figure a plugin computed about a
   queue (proportion's deserved share), for `policy test` and explain. */
static int
l_ssn_queue_info(lua_State *L)
{
	struct session *ss = ssn_of(L);
	struct s_queue *q = view_check_queue(L, 2, "ssn:queue_info");
	const char *key = luaL_checkstring(L, 3);
	char *cause = NULL;
	cJSON *v = luaconv_to_json(L, 4, &cause), *per;

	if (v == NULL) {
		lua_pushfstring(L, "ssn:queue_info: %s", cause);
		free(cause);
		return lua_error(L);
	}
	if (ss->qinfo == NULL)
		ss->qinfo = cJSON_CreateObject();
	if ((per = cJSON_GetObjectItemCaseSensitive(ss->qinfo, q->name)) ==
	    NULL)
		per = cJSON_AddObjectToObject(ss->qinfo, q->name);
	cJSON_DeleteItemFromObjectCaseSensitive(per, key);
	cJSON_AddItemToObject(per, key, v);
	return 0;
}

/* ssn:explain(job, message): a plugin's own words about a job, shown by
   volray explain (the plugin is named by the caller's file). */
static int
l_ssn_explain(lua_State *L)
{
	struct s_job *j;
	lua_Debug ar;
	const char *who = "?";

	ssn_of(L);
	j = view_check_job(L, 2, "ssn:explain");
	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar))
		who = ar.short_src;
	if (j->nnotes >= 16)	/* a plugin in a loop says enough */
		return 0;
	j->notes = xreallocarray(j->notes, (size_t)j->nnotes + 1,
	    sizeof *j->notes);
	j->notes[j->nnotes++] = util_printf("%s: %s", who,
	    luaL_checkstring(L, 3));
	return 0;
}

/* ssn:use_predicates() / ssn:use_scores{...}: the C fast paths. */
static int
l_ssn_use_predicates(lua_State *L)
{
	ssn_of(L)->c_predicates = 1;
	return 0;
}

static double
num_field(lua_State *L, int idx, const char *k, double def)
{
	double x;

	lua_getfield(L, idx, k);
	x = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : def;
	lua_pop(L, 1);
	return x;
}

static int
l_ssn_use_scores(lua_State *L)
{
	struct session *ss = ssn_of(L);

	luaL_checktype(L, 2, LUA_TTABLE);
	ss->w.least += num_field(L, 2, "leastrequested", 0);
	ss->w.balanced += num_field(L, 2, "balancedresource", 0);
	ss->w.affinity += num_field(L, 2, "nodeaffinity", 0);
	ss->w.taint += num_field(L, 2, "tainttoleration", 0);
	if (num_field(L, 2, "binpack", 0) > 0) {
		ss->w.binpack = num_field(L, 2, "binpack", 0);
		ss->w.bp_cpu = num_field(L, 2, "binpack_cpu", 1);
		ss->w.bp_memory = num_field(L, 2, "binpack_memory", 1);
	}
	return 0;
}

/* ssn:use_topology{weight=, cpu=, memory=}: HyperNodes for the jobs'
   networkTopology (topology.c); returns the tiers found, lowest and
   highest (0, 0 without HyperNodes). */
static int
l_ssn_use_topology(lua_State *L)
{
	struct session *ss = ssn_of(L);

	if (lua_istable(L, 2)) {
		ss->topo_weight = num_field(L, 2, "weight", 1);
		ss->topo_w_cpu = num_field(L, 2, "cpu", 1);
		ss->topo_w_memory = num_field(L, 2, "memory", 1);
	} else {
		ss->topo_weight = ss->topo_w_cpu = ss->topo_w_memory = 1;
	}
	topology_build(ss);
	ss->topo_on = 1;
	lua_pushinteger(L, ss->min_tier);
	lua_pushinteger(L, ss->max_tier);
	return 2;
}

/*
 * Open the plugins on the session: views, the ssn table, then each
 * plugin's open(ssn, args) in tier order.
 */
void
ssn_open(struct session *ss)
{
	lua_State *L = ss->pol->L;
	int i;

	ss->L = L;
	ss->failed = xcalloc((size_t)ss->pol->nplugins + 1,
	    sizeof *ss->failed);
	ss->fail_err = xcalloc((size_t)ss->pol->nplugins + 1,
	    sizeof *ss->fail_err);
	ss->nfail_err = ss->pol->nplugins;
	view_open(ss);
	lua_newtable(L);
	lua_pushlightuserdata(L, ss);
	lua_setfield(L, -2, "_session");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, l_ssn_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	lua_createtable(L, 0, ss->nqueues);
	for (i = 0; i < ss->nqueues; i++) {
		view_push_queue(ss, &ss->queues[i]);
		lua_setfield(L, -2, ss->queues[i].name);
	}
	lua_setfield(L, -2, "queues");
	view_push_res(L, &ss->total);
	lua_setfield(L, -2, "total");
	lua_pushnumber(L, ss->src.now);
	lua_setfield(L, -2, "now");
	lua_pushinteger(L, ss->src.local_time ? utc_offset(ss->src.now) : 0);
	lua_setfield(L, -2, "utc_offset");
	lua_pushinteger(L, ss->nnodes);
	lua_setfield(L, -2, "node_count");
	lua_pushcfunction(L, l_ssn_nodes);
	lua_setfield(L, -2, "nodes");
	lua_pushcfunction(L, l_ssn_tasks);
	lua_setfield(L, -2, "tasks");
	lua_pushcfunction(L, l_ssn_node);
	lua_setfield(L, -2, "node");
	lua_pushcfunction(L, l_ssn_node_tasks);
	lua_setfield(L, -2, "node_tasks");
	lua_pushcfunction(L, l_ssn_wake_after);
	lua_setfield(L, -2, "wake_after");
	lua_pushcfunction(L, l_ssn_active_jobs);
	lua_setfield(L, -2, "active_jobs");
	lua_pushcfunction(L, l_ssn_quotas);
	lua_setfield(L, -2, "quotas");
	lua_pushcfunction(L, l_ssn_pdbs);
	lua_setfield(L, -2, "pdbs");
	lua_pushcfunction(L, l_ssn_job_condition);
	lua_setfield(L, -2, "job_condition");
	lua_pushcfunction(L, l_ssn_explain);
	lua_setfield(L, -2, "explain");
	lua_pushcfunction(L, l_ssn_queue_info);
	lua_setfield(L, -2, "queue_info");
	lua_pushcfunction(L, l_ssn_use_predicates);
	lua_setfield(L, -2, "use_predicates");
	lua_pushcfunction(L, l_ssn_use_scores);
	lua_setfield(L, -2, "use_scores");
	lua_pushcfunction(L, l_ssn_use_topology);
	lua_setfield(L, -2, "use_topology");
	ss->ssn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	for (i = 0; i < ss->pol->nplugins; i++) {
		struct plugin *pl = &ss->pol->plugins[i];

		lua_rawgeti(L, LUA_REGISTRYINDEX, pl->args_ref);
		framework_call(ss, pl, EP_OPEN, 1, 0);
	}
}

/* The plugins' close, with the views as the session left them; then
   views and ssn are cut from the session they point into. */
void
ssn_close(struct session *ss)
{
	lua_State *L = ss->L;
	int i;

	view_flush(ss);
	for (i = 0; i < ss->pol->nplugins; i++)
		framework_call(ss, &ss->pol->plugins[i], EP_CLOSE, 0, 0);
	view_close(ss);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_pushnil(L);
	lua_setfield(L, -2, "_session");
	lua_pop(L, 1);
	luaL_unref(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_gc(L, LUA_GCCOLLECT);
}
