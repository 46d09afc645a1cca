/*
 * Views: plugins see jobs, tasks, nodes and queues as tables built once
 * per session and cached (in the table views_ref holds, indexed by the
 * view number each struct keeps); fields that change during the session
 * (task status, job counts, node accounting) are refreshed when pushed
 * after a change; labels, annotations and the whole object (`obj`) are
 * converted only when read, and so are a few fields of tasks and jobs
 * that most calls never read (lazy_task, lazy_job). A view holds a
 * pointer to its struct in `_ptr`, cleared when the session closes, so a
 * view a plugin kept reads as empty afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "luahost/luaconv.h"
#include "sched/sched_int.h"

enum { VIEW_JOB = 1, VIEW_TASK, VIEW_NODE, VIEW_QUEUE };

/* Integers: quantities are exact in them (cpu in millicores, memory in
   bytes). */
void
view_push_res(lua_State *L, const struct podspec_res *r)
{
	int i;

	lua_createtable(L, 0, 2 + r->next);
	lua_pushinteger(L, r->cpu);
	lua_setfield(L, -2, "cpu");
	lua_pushinteger(L, r->memory);
	lua_setfield(L, -2, "memory");
	for (i = 0; i < r->next; i++) {
		lua_pushinteger(L, r->ext[i].value);
		lua_setfield(L, -2, r->ext[i].name);
	}
}

/* The struct behind a view (NULL once its session closed) and its kind. */
static void *
view_ptr(lua_State *L, int idx, int *kind)
{
	void *p;

	lua_getfield(L, idx, "_ptr");
	p = lua_touserdata(L, -1);
	lua_getfield(L, idx, "_kind");
	*kind = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return p;
}

/* The job behind the view argument at idx, or a Lua error. */
struct s_job *
view_check_job(lua_State *L, int idx, const char *fn)
{
	struct s_job *j;
	int kind;

	luaL_checktype(L, idx, LUA_TTABLE);
	if ((j = view_ptr(L, idx, &kind)) == NULL || kind != VIEW_JOB)
		luaL_error(L, "%s: want a job of this session", fn);
	return j;
}

/* The queue behind the view argument at idx, or a Lua error. */
struct s_queue *
view_check_queue(lua_State *L, int idx, const char *fn)
{
	struct s_queue *q;
	int kind;

	luaL_checktype(L, idx, LUA_TTABLE);
	if ((q = view_ptr(L, idx, &kind)) == NULL || kind != VIEW_QUEUE)
		luaL_error(L, "%s: want a queue of this session", fn);
	return q;
}

/* The node behind the view argument at idx, or a Lua error. */
struct s_node *
view_check_node(lua_State *L, int idx, const char *fn)
{
	struct s_node *n;
	int kind;

	luaL_checktype(L, idx, LUA_TTABLE);
	if ((n = view_ptr(L, idx, &kind)) == NULL || kind != VIEW_NODE)
		luaL_error(L, "%s: want a node of this session", fn);
	return n;
}

/* The task behind the value at idx, or NULL when it is not a task view
   of this session. */
struct s_task *
view_task_at(lua_State *L, int idx)
{
	struct s_task *t;
	int kind;

	if (!lua_istable(L, idx))
		return NULL;
	t = view_ptr(L, lua_absindex(L, idx), &kind);
	return kind == VIEW_TASK ? t : NULL;
}

static void push_str(lua_State *, const char *);
static void set_int(lua_State *, const char *, lua_Integer);
static void push_job_view(struct session *, lua_State *, struct s_job *);

/* The session whose views these are (the metatable says). */
static struct session *
view_session(lua_State *L)
{
	struct session *ss;

	luaL_getmetatable(L, "volray.sched.view");
	lua_getfield(L, -1, "session");
	ss = lua_touserdata(L, -1);
	lua_pop(L, 2);
	return ss;
}

/* The object behind a view, for its lazily converted fields. */
static const cJSON *
view_obj(struct session *ss, int kind, void *p)
{
	switch (kind) {
	case VIEW_JOB: {
		struct s_job *j = p;

		return j->pg ? j->pg : (j->ntasks > 0 ?
		    task_obj(ss, j->tasks[0]) : NULL);
	}
	case VIEW_TASK: return task_obj(ss, p);
	case VIEW_NODE: return ((struct s_node *)p)->obj;
	case VIEW_QUEUE: return ((struct s_queue *)p)->obj;
	}
	return NULL;
}

/* Volcano's request of a job: its allocated-set and pending tasks. */
static void
push_job_request(lua_State *L, const struct s_job *j)
{
	struct podspec_res req;
	int i;

	memset(&req, 0, sizeof req);
	for (i = 0; i < j->ntasks; i++)
		if (task_allocated(j->tasks[i]->status) ||
		    j->tasks[i]->status == TS_PENDING)
			podspec_res_add(&req, &j->tasks[i]->req, 1);
	view_push_res(L, &req);
}

static void
push_job_roles(lua_State *L, const struct s_job *j)
{
	int i;

	lua_createtable(L, 0, j->nroles);
	for (i = 0; i < j->nroles; i++) {
		const struct role_count *rc = &j->roles[i];
		int rr = rc->n[TS_ALLOCATED] + rc->n[TS_BINDING] +
		    rc->n[TS_BOUND] + rc->n[TS_RUNNING] + rc->n[TS_SUCCEEDED];

		lua_createtable(L, 0, 5);
		set_int(L, "min", rc->min);
		set_int(L, "ready", rr);
		set_int(L, "pipelined", rc->n[TS_PIPELINED]);
		set_int(L, "pending", rc->n[TS_PENDING]);
		set_int(L, "valid", rr + rc->n[TS_PIPELINED] + rc->n[TS_PENDING]);
		lua_setfield(L, -2, rc->role);
	}
}

/*
 * Fields of a view computed when first read, then kept in it: most
 * plugin calls read a field or two of a view built for them (a task
 * order key reads the priority), so building every field of 50,000 task
 * views was most of what ordering them cost. The job's tables that
 * follow its counts are dropped at each refresh and computed again.
 * __pairs fills them all in first, so iteration sees what it always did.
 */
static const char *const lazy_task[] = { "name", "namespace", "uid",
    "role", "creation", "resreq", "job", NULL };
static const char *const lazy_job[] = { "allocated", "request", "roles",
    NULL };

/* Push the lazy field k of a view: 1, or 0 with nothing pushed. */
static int
push_lazy(lua_State *L, struct session *ss, int kind, void *p, const char *k)
{
	const char *str = NULL;

	if (kind == VIEW_TASK) {
		struct s_task *t = p;

		if (strcmp(k, "resreq") == 0) {
			view_push_res(L, &t->req);
			return 1;
		}
		if (strcmp(k, "job") == 0) {
			if (t->job == NULL)
				return 0;
			push_job_view(ss, L, t->job);
			return 1;
		}
		if (strcmp(k, "name") == 0)
			str = t->name;
		else if (strcmp(k, "namespace") == 0)
			str = t->ns;
		else if (strcmp(k, "uid") == 0)
			str = t->uid;
		else if (strcmp(k, "role") == 0)
			str = t->role;
		else if (strcmp(k, "creation") == 0)
			str = t->created;
		if (str == NULL)
			return 0;
		push_str(L, str);
		return 1;
	}
	if (kind == VIEW_JOB) {
		struct s_job *j = p;

		if (strcmp(k, "allocated") == 0)
			view_push_res(L, &j->allocated);
		else if (strcmp(k, "request") == 0)
			push_job_request(L, j);
		else if (strcmp(k, "roles") == 0)
			push_job_roles(L, j);
		else
			return 0;
		return 1;
	}
	return 0;
}

static int
view_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	struct session *ss;
	void *p;
	int kind;

	if (k == NULL || (p = view_ptr(L, 1, &kind)) == NULL)
		return 0;
	ss = view_session(L);
	if (strcmp(k, "labels") == 0 || strcmp(k, "annotations") == 0) {
		const cJSON *m = json_at(view_obj(ss, kind, p), k[0] == 'l' ?
		    "metadata.labels" : "metadata.annotations");

		if (m != NULL)
			luaconv_push(L, m);
		else
			lua_newtable(L);
	} else if (strcmp(k, "obj") == 0)
		luaconv_push(L, view_obj(ss, kind, p));
	else if (!push_lazy(L, ss, kind, p, k))
		return 0;
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -2);
	lua_rawset(L, 1);
	return 1;
}

static int
view_next(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_next(L, 1))
		return 2;
	lua_pushnil(L);
	return 1;
}

static int
view_pairs(lua_State *L)
{
	const char *const *k = NULL;
	void *p;
	int kind;

	luaL_checktype(L, 1, LUA_TTABLE);
	if ((p = view_ptr(L, 1, &kind)) != NULL)
		k = kind == VIEW_TASK ? lazy_task : kind == VIEW_JOB ?
		    lazy_job : NULL;
	/* A read of a missing lazy field computes it (view_index). */
	for (; k != NULL && *k != NULL; k++) {
		lua_getfield(L, 1, *k);
		lua_pop(L, 1);
	}
	lua_pushcfunction(L, view_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

/* On L: the session's state, as the C function that reads a lazy field
   was given it. */
static int
new_view(struct session *ss, lua_State *L, int kind, void *p)
{
	lua_createtable(L, 0, 16);
	lua_pushlightuserdata(L, p);
	lua_setfield(L, -2, "_ptr");
	lua_pushinteger(L, kind);
	lua_setfield(L, -2, "_kind");
	luaL_getmetatable(L, "volray.sched.view");
	lua_setmetatable(L, -2);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->views_ref);
	lua_pushvalue(L, -2);
	lua_rawseti(L, -2, ++ss->nviews);
	lua_pop(L, 1);
	return ss->nviews;
}

static void
get_view(struct session *ss, lua_State *L, int idx)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->views_ref);
	lua_rawgeti(L, -1, idx);
	lua_remove(L, -2);
}

static void
set_int(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

/*
 * lua_pushlstring, not lua_pushstring: the latter first looks the pointer
 * up in Lua's string cache and strcmp's two cold strings there, a cache
 * miss each for the names and uids of 50,000 task views (11% of a
 * session's thread).
 */
static void
push_str(lua_State *L, const char *v)
{
	lua_pushlstring(L, v, strlen(v));
}

static void
set_str(lua_State *L, const char *k, const char *v)
{
	if (v == NULL)
		return;
	push_str(L, v);
	lua_setfield(L, -2, k);
}

static void
job_refresh(lua_State *L, struct s_job *j)
{
	int ready = j->n[TS_ALLOCATED] + j->n[TS_BINDING] + j->n[TS_BOUND] +
	    j->n[TS_RUNNING] + j->n[TS_SUCCEEDED];
	const char *const *k;

	set_int(L, "pending", j->n[TS_PENDING]);
	set_int(L, "pipelined", j->n[TS_PIPELINED]);
	set_int(L, "waiting", j->n[TS_PIPELINED]);
	set_int(L, "allocated_num", j->n[TS_ALLOCATED] + j->n[TS_BINDING]);
	set_int(L, "bound", j->n[TS_BOUND]);
	set_int(L, "running", j->n[TS_RUNNING]);
	set_int(L, "releasing", j->n[TS_RELEASING]);
	set_int(L, "succeeded", j->n[TS_SUCCEEDED]);
	set_int(L, "failed", j->n[TS_FAILED]);
	set_int(L, "ready", ready);
	set_int(L, "valid", ready + j->n[TS_PIPELINED] + j->n[TS_PENDING]);
	set_int(L, "task_num", j->ntasks);
	/* Enqueue admits a job (Inqueue) after its view may have been made
	   (the job order): gang's close must see it admitted. */
	set_str(L, "phase", j->phase);
	/* allocated, request, roles: computed again when next read. */
	for (k = lazy_job; *k != NULL; k++) {
		lua_pushnil(L);
		lua_setfield(L, -2, *k);
	}
	j->view_ver = j->ver;
}

static void
push_job_view(struct session *ss, lua_State *L, struct s_job *j)
{
	if (j->view == 0) {
		int i;

		j->view = new_view(ss, L, VIEW_JOB, j);
		set_str(L, "key", j->key);
		set_str(L, "name", j->name);
		set_str(L, "namespace", j->ns);
		set_str(L, "uid", j->uid);
		set_str(L, "queue", j->queue_name);
		set_str(L, "creation", j->created);
		if (j->created != NULL && util_time_parse(j->created) >= 0) {
			lua_pushnumber(L, (double)util_time_parse(j->created));
			lua_setfield(L, -2, "created_at");
		}
		set_int(L, "priority", j->priority);
		set_int(L, "min_available", j->min_member);
		lua_pushboolean(L, j->pg != NULL);
		lua_setfield(L, -2, "podgroup");
		if (j->pg != NULL)
			set_str(L, "podgroup_api", j->group_api == GROUP_K8S ?
			    "scheduling.k8s.io" : "scheduling.volcano.sh");
		lua_pushboolean(L, j->preemptable);
		lua_setfield(L, -2, "preemptable");
		if (j->has_min_res) {
			view_push_res(L, &j->min_res);
			lua_setfield(L, -2, "min_resources");
		}
		lua_createtable(L, 0, j->nroles);
		for (i = 0; i < j->nroles; i++)
			if (j->roles[i].min > 0) {
				lua_pushinteger(L, j->roles[i].min);
				lua_setfield(L, -2, j->roles[i].role);
			}
		lua_setfield(L, -2, "min_task_member");
		job_refresh(L, j);
		return;
	}
	get_view(ss, L, j->view);
	if (j->view_ver != j->ver)
		job_refresh(L, j);
}

void
view_push_job(struct session *ss, struct s_job *j)
{
	push_job_view(ss, ss->L, j);
}

void
view_push_task(struct session *ss, struct s_task *t)
{
	lua_State *L = ss->L;

	if (t->view == 0) {
		/* name, namespace, uid, role, creation, resreq and job
		   when first read (lazy_task). */
		t->view = new_view(ss, L, VIEW_TASK, t);
		set_int(L, "priority", t->priority);
		lua_pushboolean(L, t->best_effort);
		lua_setfield(L, -2, "best_effort");
		lua_pushboolean(L, t->critical);
		lua_setfield(L, -2, "critical");
		lua_pushboolean(L, t->preemptable);
		lua_setfield(L, -2, "preemptable");
		lua_pushboolean(L, t->gated);
		lua_setfield(L, -2, "gated");
		lua_pushboolean(L, t->gate_opt);
		lua_setfield(L, -2, "queue_gate");
	} else
		get_view(ss, L, t->view);
	push_str(L, task_status_names[t->status]);
	lua_setfield(L, -2, "status");
	if (t->node != NULL)
		push_str(L, t->node->name);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, "node");
}

void
view_push_node(struct session *ss, struct s_node *n)
{
	lua_State *L = ss->L;
	struct podspec_res fi;

	if (n->view == 0) {
		n->view = new_view(ss, L, VIEW_NODE, n);
		set_str(L, "name", n->name);
		view_push_res(L, &n->alloc);
		lua_setfield(L, -2, "allocatable");
		set_int(L, "max_pods", n->alloc.pods);
		lua_pushboolean(L, n->unschedulable);
		lua_setfield(L, -2, "unschedulable");
		n->view_ver = n->ver - 1;
	} else
		get_view(ss, L, n->view);
	if (n->view_ver == n->ver)
		return;
	view_push_res(L, &n->idle);
	lua_setfield(L, -2, "idle");
	view_push_res(L, &n->used);
	lua_setfield(L, -2, "used");
	view_push_res(L, &n->releasing);
	lua_setfield(L, -2, "releasing");
	view_push_res(L, &n->pipelined);
	lua_setfield(L, -2, "pipelined");
	node_future_idle(n, &fi);
	view_push_res(L, &fi);
	lua_setfield(L, -2, "future_idle");
	set_int(L, "pods", n->ntasks);
	n->view_ver = n->ver;
}

static void
push_res_field(lua_State *L, const cJSON *obj, const char *path,
    const char *key)
{
	const cJSON *list = json_at(obj, path);
	struct podspec_res r;

	if (!cJSON_IsObject(list) || cJSON_GetArraySize(list) == 0)
		return;
	memset(&r, 0, sizeof r);
	podspec_read_list(list, &r);
	view_push_res(L, &r);
	lua_setfield(L, -2, key);
}

void
view_push_queue(struct session *ss, struct s_queue *q)
{
	lua_State *L = ss->L;

	if (q->view != 0) {
		get_view(ss, L, q->view);
		return;
	}
	q->view = new_view(ss, L, VIEW_QUEUE, q);
	set_str(L, "name", q->name);
	set_int(L, "weight", q->weight);
	set_int(L, "priority", q->priority);
	set_str(L, "parent", q->parent);
	set_str(L, "state", q->state);
	lua_pushboolean(L, q->reclaimable);
	lua_setfield(L, -2, "reclaimable");
	push_res_field(L, q->obj, "spec.capability", "capability");
	push_res_field(L, q->obj, "spec.guarantee.resource", "guarantee");
	push_res_field(L, q->obj, "spec.deserved", "deserved");
	view_push_res(L, &q->allocated);
	lua_setfield(L, -2, "allocated");
	view_push_res(L, &q->request);
	lua_setfield(L, -2, "request");
	view_push_res(L, &q->inqueue);
	lua_setfield(L, -2, "inqueue");
	view_push_res(L, &q->elastic);
	lua_setfield(L, -2, "elastic");
	view_push_res(L, &q->reserved);
	lua_setfield(L, -2, "reserved");
}


/* The views' metatable and cache, for the session ss opens on its state. */
void
view_open(struct session *ss)
{
	lua_State *L = ss->L;

	if (luaL_newmetatable(L, "volray.sched.view")) {
		lua_pushcfunction(L, view_index);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, view_pairs);
		lua_setfield(L, -2, "__pairs");
	}
	/* The views' session, for the pods they parse on first use. */
	lua_pushlightuserdata(L, ss);
	lua_setfield(L, -2, "session");
	lua_pop(L, 1);
	lua_newtable(L);
	ss->views_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* The job views as the session left them, for the plugins' close. */
void
view_flush(struct session *ss)
{
	int i;

	for (i = 0; i < ss->njobs; i++)
		if (ss->jobs[i]->view != 0 &&
		    ss->jobs[i]->view_ver != ss->jobs[i]->ver) {
			view_push_job(ss, ss->jobs[i]);
			lua_pop(ss->L, 1);
		}
}

/* Views point into the session: make them inert and drop the cache. */
void
view_close(struct session *ss)
{
	lua_State *L = ss->L;
	int i;

	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->views_ref);
	for (i = 1; i <= ss->nviews; i++) {
		lua_rawgeti(L, -1, i);
		lua_pushnil(L);
		lua_setfield(L, -2, "_ptr");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	luaL_unref(L, LUA_REGISTRYINDEX, ss->views_ref);
}
