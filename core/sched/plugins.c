/*
 * Scheduler plugins in Lua. A policy is scheduler.yaml plus the plugins
 * it names, each loaded from NAME.lua in the Lua host's roots (the
 * built-in policies/ directory, then each --policy-dir) into one sandboxed
 * state made for this policy; reload builds a new one beside the running
 * one. A plugin file returns a table of extension-point functions (the
 * names in config_ep_names), and may declare `arguments`, a schema:
 *
 *   arguments = { weight = { type = "number", default = 1, min = 0 } }
 *
 * Arguments in scheduler.yaml are checked against it at load (unknown
 * names, wrong types and out-of-range numbers are refused with the file
 * and line) and given to open(ssn, args) with the defaults filled in.
 *
 * Views: plugins see jobs, tasks, nodes and queues as tables built once
 * per session and cached; fields that change during the session (task
 * status, job counts, node accounting) are refreshed when pushed after a
 * change; labels, annotations and the whole object (`obj`) are converted
 * only when read. A call that fails (error, instruction budget, memory)
 * skips that plugin for the rest of the session and is reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "luahost/luaconv.h"
#include "luahost/luahost.h"
#include "sched/sched_int.h"

/* ------------------------------------------------------------------ */
/* Loading.                                                            */

static void
warn(struct policy *p, char *msg)
{
	log_warn("scheduler: %s", msg);
	p->warnings = realloc(p->warnings, (p->nwarnings + 1) *
	    sizeof *p->warnings);
	p->warnings[p->nwarnings++] = msg;
}

static char *
read_file(const char *path, size_t *len, char **cause)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL) {
		*cause = util_printf("%s: %s", path, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		*cause = util_printf("%s: read error", path);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Coerce one argument value (on the stack top) to the schema's type. */
static int
coerce(lua_State *L, const char *type, const cJSON *v, char **why)
{
	if (strcmp(type, "number") == 0) {
		char *end;
		double x;

		if (cJSON_IsNumber(v))
			x = v->valuedouble;
		else if (cJSON_IsString(v) && *v->valuestring &&
		    (x = strtod(v->valuestring, &end), *end == '\0'))
			;
		else {
			*why = strdup("want a number");
			return -1;
		}
		lua_pushnumber(L, x);
		return 0;
	}
	if (strcmp(type, "boolean") == 0) {
		if (cJSON_IsBool(v))
			lua_pushboolean(L, cJSON_IsTrue(v));
		else if (cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0)
			lua_pushboolean(L, 1);
		else if (cJSON_IsString(v) && strcmp(v->valuestring, "false") == 0)
			lua_pushboolean(L, 0);
		else {
			*why = strdup("want true or false");
			return -1;
		}
		return 0;
	}
	if (strcmp(type, "string") == 0) {
		if (cJSON_IsString(v))
			lua_pushstring(L, v->valuestring);
		else if (cJSON_IsNumber(v)) {
			lua_pushnumber(L, v->valuedouble);
			lua_tostring(L, -1);
		}
		else {
			*why = strdup("want a string");
			return -1;
		}
		return 0;
	}
	/* "table": anything, converted as is. */
	luaconv_push(L, v);
	return 0;
}

/*
 * Resolve the plugin's arguments (table on the stack top) against its
 * schema; pushes the resolved table. -1 with *cause.
 */
static int
resolve_args(lua_State *L, struct plugin *pl, const char *cpath,
    char **cause)
{
	int tbl = lua_gettop(L), schema, out;
	const cJSON *a;

	lua_getfield(L, tbl, "arguments");
	schema = lua_gettop(L);
	if (!lua_isnil(L, schema) && !lua_istable(L, schema)) {
		*cause = util_printf("%s: arguments must be a table", pl->file);
		lua_settop(L, tbl);
		return -1;
	}
	lua_newtable(L);
	out = lua_gettop(L);
	cJSON_ArrayForEach(a, pl->conf->arguments) {
		const char *type = "table";
		char *why = NULL;

		if (lua_isnil(L, schema)) {
			*cause = util_printf("%s:%d: plugin %s takes no arguments "
			    "(got %s)", cpath, pl->conf->line, pl->name,
			    a->string);
			lua_settop(L, tbl);
			return -1;
		}
		lua_getfield(L, schema, a->string);
		if (!lua_istable(L, -1)) {
			*cause = util_printf("%s:%d: plugin %s: unknown argument "
			    "%s", cpath, pl->conf->line, pl->name, a->string);
			lua_settop(L, tbl);
			return -1;
		}
		lua_getfield(L, -1, "type");
		if (lua_type(L, -1) == LUA_TSTRING)
			type = lua_tostring(L, -1);
		if (coerce(L, type, a, &why) != 0) {
			*cause = util_printf("%s:%d: plugin %s: argument %s: %s",
			    cpath, pl->conf->line, pl->name, a->string, why);
			free(why);
			lua_settop(L, tbl);
			return -1;
		}
		if (lua_type(L, -1) == LUA_TNUMBER) {
			double x = lua_tonumber(L, -1);

			lua_getfield(L, -3, "min");
			lua_getfield(L, -4, "max");
			if ((lua_isnumber(L, -2) && x < lua_tonumber(L, -2)) ||
			    (lua_isnumber(L, -1) && x > lua_tonumber(L, -1))) {
				*cause = util_printf("%s:%d: plugin %s: argument "
				    "%s: %g is out of range", cpath,
				    pl->conf->line, pl->name, a->string, x);
				lua_settop(L, tbl);
				return -1;
			}
			lua_pop(L, 2);
		}
		lua_setfield(L, out, a->string);
		lua_pop(L, 2);
	}
	/* Defaults. */
	if (lua_istable(L, schema)) {
		lua_pushnil(L);
		while (lua_next(L, schema) != 0) {
			if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
				lua_pushvalue(L, -2);
				lua_rawget(L, out);
				if (lua_isnil(L, -1)) {
					lua_getfield(L, -2, "default");
					lua_pushvalue(L, -4);
					lua_insert(L, -2);
					lua_rawset(L, out);
				}
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
		}
	}
	lua_replace(L, schema);
	lua_settop(L, schema);
	return 0;
}

static int
load_plugin(struct policy *p, luahost *h, struct plugin *pl, char **cause)
{
	lua_State *L = p->L;
	char rel[300];
	int i;

	snprintf(rel, sizeof rel, "%s.lua", pl->name);
	if (luahost_dofile(L, rel, cause) != 0)
		return -1;
	if (!lua_istable(L, -1)) {
		*cause = util_printf("%s: a plugin must return a table",
		    luahost_path(h, rel));
		lua_pop(L, 1);
		return -1;
	}
	pl->file = strdup(luahost_path(h, rel));
	for (i = 0; i < EP_N; i++) {
		lua_getfield(L, -1, config_ep_names[i]);
		if (!lua_isnil(L, -1) && !lua_isfunction(L, -1)) {
			*cause = util_printf("%s: %s must be a function",
			    pl->file, config_ep_names[i]);
			lua_pop(L, 2);
			return -1;
		}
		pl->has[i] = lua_isfunction(L, -1) &&
		    (pl->conf->enabled & (1u << i)) != 0;
		lua_pop(L, 1);
	}
	/* open and close have no flag; event handlers neither. */
	if (resolve_args(L, pl, p->conf.path, cause) != 0) {
		lua_pop(L, 1);
		return -1;
	}
	{
		char *why = NULL;

		pl->args_json = luaconv_to_json(L, -1, &why);
		free(why);
		if (!cJSON_IsObject(pl->args_json)) {
			cJSON_Delete(pl->args_json);
			pl->args_json = cJSON_CreateObject();
		}
	}
	pl->args_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	pl->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

/* volray.* for plugins: log. */
static int
l_log(lua_State *L)
{
	const char *msg = luaL_checkstring(L, 1);

	log_info("scheduler: %s", msg);
	return 0;
}

static void
open_sched_api(lua_State *L, void *arg)
{
	(void)arg;
	lua_newtable(L);
	lua_pushcfunction(L, l_log);
	lua_setfield(L, -2, "log");
	luaconv_push_null(L);
	lua_setfield(L, -2, "null");
}

struct policy *
policy_load(luahost *h, char **cause)
{
	struct policy *p = calloc(1, sizeof *p);
	const char *path;
	char *buf, now[32];
	size_t len;
	int i, j, n = 0;

	if (p == NULL)
		fatal("out of memory");
	*cause = NULL;
	luahost_rescan(h);
	if ((path = luahost_path(h, "scheduler.yaml")) == NULL) {
		*cause = strdup("scheduler.yaml: not found in the policy roots");
		free(p);
		return NULL;
	}
	if ((buf = read_file(path, &len, cause)) == NULL) {
		free(p);
		return NULL;
	}
	if (config_parse(path, buf, len, &p->conf, cause) != 0) {
		free(buf);
		free(p);
		return NULL;
	}
	free(buf);
	if ((p->L = luahost_state_new(h, open_sched_api, NULL)) == NULL) {
		*cause = strdup("cannot create a Lua state");
		policy_free(p);
		return NULL;
	}
	for (i = 0; i < p->conf.ntiers; i++)
		n += p->conf.tiers[i].nplugins;
	p->plugins = calloc((size_t)n + 1, sizeof *p->plugins);
	for (i = 0; i < p->conf.ntiers; i++)
		for (j = 0; j < p->conf.tiers[i].nplugins; j++) {
			struct plugin_conf *pc = &p->conf.tiers[i].plugins[j];
			struct plugin *pl = &p->plugins[p->nplugins];
			char rel[300];

			snprintf(rel, sizeof rel, "%s.lua", pc->name);
			if (strchr(pc->name, '/') != NULL ||
			    luahost_path(h, rel) == NULL) {
				/* Volcano skips a plugin it does not know. */
				warn(p, util_printf("%s:%d: plugin %s: no %s in "
				    "the policy directories; skipped",
				    p->conf.path, pc->line, pc->name, rel));
				continue;
			}
			pl->name = pc->name;
			pl->tier = i;
			pl->conf = pc;
			if (load_plugin(p, h, pl, cause) != 0) {
				policy_free(p);
				return NULL;
			}
			p->nplugins++;
		}
	/* Per-node functions are called in batches through this. */
	if (luaL_loadstring(p->L, "local fn, ssn, task, nodes = ...\n"
	    "local out = {}\n"
	    "for i = 1, #nodes do out[i] = fn(ssn, task, nodes[i]) end\n"
	    "return out") != LUA_OK) {
		*cause = strdup("cannot build the batch trampoline");
		policy_free(p);
		return NULL;
	}
	p->tramp_ref = luaL_ref(p->L, LUA_REGISTRYINDEX);
	util_now(now);
	p->loaded_at = strdup(now);
	return p;
}

void
policy_free(struct policy *p)
{
	int i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nplugins; i++) {
		free(p->plugins[i].file);
		cJSON_Delete(p->plugins[i].args_json);
	}
	free(p->plugins);
	for (i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->loaded_at);
	luahost_state_close(p->L);
	config_free(&p->conf);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Views.                                                              */

enum { VIEW_JOB = 1, VIEW_TASK, VIEW_NODE, VIEW_QUEUE };

static void
push_res(lua_State *L, const struct podspec_res *r)
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
static struct s_job *
check_job(lua_State *L, int idx, const char *fn)
{
	struct s_job *j;
	int kind;

	luaL_checktype(L, idx, LUA_TTABLE);
	if ((j = view_ptr(L, idx, &kind)) == NULL || kind != VIEW_JOB)
		luaL_error(L, "%s: want a job of this session", fn);
	return j;
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
	push_res(L, &req);
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
			push_res(L, &t->req);
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
			push_res(L, &j->allocated);
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
		set_str(L, "phase", j->phase);
		set_int(L, "priority", j->priority);
		set_int(L, "min_available", j->min_member);
		lua_pushboolean(L, j->pg != NULL);
		lua_setfield(L, -2, "podgroup");
		lua_pushboolean(L, j->preemptable);
		lua_setfield(L, -2, "preemptable");
		if (j->has_min_res) {
			push_res(L, &j->min_res);
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
		push_res(L, &n->alloc);
		lua_setfield(L, -2, "allocatable");
		set_int(L, "max_pods", n->alloc.pods);
		n->view_ver = n->ver - 1;
	} else
		get_view(ss, L, n->view);
	if (n->view_ver == n->ver)
		return;
	push_res(L, &n->idle);
	lua_setfield(L, -2, "idle");
	push_res(L, &n->used);
	lua_setfield(L, -2, "used");
	push_res(L, &n->releasing);
	lua_setfield(L, -2, "releasing");
	push_res(L, &n->pipelined);
	lua_setfield(L, -2, "pipelined");
	node_future_idle(n, &fi);
	push_res(L, &fi);
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
	push_res(L, &r);
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
	push_res(L, &q->allocated);
	lua_setfield(L, -2, "allocated");
	push_res(L, &q->request);
	lua_setfield(L, -2, "request");
	push_res(L, &q->inqueue);
	lua_setfield(L, -2, "inqueue");
	push_res(L, &q->elastic);
	lua_setfield(L, -2, "elastic");
}

/* ------------------------------------------------------------------ */
/* The ssn table.                                                      */

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

/* ssn:tasks(job) -> the job's task views */
static int
l_ssn_tasks(lua_State *L)
{
	struct session *ss = ssn_of(L);
	struct s_job *j = check_job(L, 2, "ssn:tasks");
	int i;

	lua_createtable(L, j->ntasks, 0);
	for (i = 0; i < j->ntasks; i++) {
		view_push_task(ss, j->tasks[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
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
	j = check_job(L, 2, "ssn:job_condition");
	free(j->cond_type);
	free(j->cond_reason);
	free(j->cond_msg);
	j->cond_type = strdup(luaL_checkstring(L, 3));
	j->cond_reason = strdup(luaL_optstring(L, 4, ""));
	j->cond_msg = strdup(luaL_optstring(L, 5, ""));
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

void
ssn_open(struct session *ss)
{
	lua_State *L = ss->pol->L;
	int i;

	ss->L = L;
	ss->failed = calloc((size_t)ss->pol->nplugins + 1, sizeof *ss->failed);
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
	/* ssn */
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
	push_res(L, &ss->total);
	lua_setfield(L, -2, "total");
	set_int(L, "node_count", ss->nnodes);
	lua_pushcfunction(L, l_ssn_nodes);
	lua_setfield(L, -2, "nodes");
	lua_pushcfunction(L, l_ssn_tasks);
	lua_setfield(L, -2, "tasks");
	lua_pushcfunction(L, l_ssn_node);
	lua_setfield(L, -2, "node");
	lua_pushcfunction(L, l_ssn_active_jobs);
	lua_setfield(L, -2, "active_jobs");
	lua_pushcfunction(L, l_ssn_job_condition);
	lua_setfield(L, -2, "job_condition");
	lua_pushcfunction(L, l_ssn_use_predicates);
	lua_setfield(L, -2, "use_predicates");
	lua_pushcfunction(L, l_ssn_use_scores);
	lua_setfield(L, -2, "use_scores");
	ss->ssn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	for (i = 0; i < ss->pol->nplugins; i++) {
		struct plugin *pl = &ss->pol->plugins[i];

		lua_rawgeti(L, LUA_REGISTRYINDEX, pl->args_ref);
		framework_call(ss, pl, EP_OPEN, 1, 0);
	}
}

void
ssn_close(struct session *ss)
{
	lua_State *L = ss->L;
	int i;

	/* Views as the session left them. */
	for (i = 0; i < ss->njobs; i++)
		if (ss->jobs[i]->view != 0 &&
		    ss->jobs[i]->view_ver != ss->jobs[i]->ver) {
			view_push_job(ss, ss->jobs[i]);
			lua_pop(L, 1);
		}
	for (i = 0; i < ss->pol->nplugins; i++)
		framework_call(ss, &ss->pol->plugins[i], EP_CLOSE, 0, 0);
	/* Views point into the session: make them inert. */
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->views_ref);
	for (i = 1; i <= ss->nviews; i++) {
		lua_rawgeti(L, -1, i);
		lua_pushnil(L);
		lua_setfield(L, -2, "_ptr");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_pushnil(L);
	lua_setfield(L, -2, "_session");
	lua_pop(L, 1);
	luaL_unref(L, LUA_REGISTRYINDEX, ss->views_ref);
	luaL_unref(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_gc(L, LUA_GCCOLLECT);
}

int
framework_call(struct session *ss, struct plugin *pl, int ep, int nargs,
    int nres)
{
	lua_State *L = ss->L;
	int k = (int)(pl - ss->pol->plugins), base = lua_gettop(L) - nargs;
	char *err = NULL;

	if (ss->failed[k] || (!pl->has[ep] && ep != EP_OPEN && ep != EP_CLOSE)) {
		lua_settop(L, base);
		return -1;
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, pl->ref);
	lua_getfield(L, -1, config_ep_names[ep]);
	lua_remove(L, -2);
	if (!lua_isfunction(L, -1)) {
		lua_settop(L, base);
		return -1;
	}
	lua_insert(L, base + 1);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_insert(L, base + 2);
	if (ep == EP_PREDICATE || ep == EP_NODE_ORDER) {
		/* (task, nodes): one call for all the nodes. */
		lua_rawgeti(L, LUA_REGISTRYINDEX, ss->pol->tramp_ref);
		lua_insert(L, base + 1);
		nargs++;
	}
	{
		uint64_t t0 = util_usec();
		int rc = luahost_call(L, nargs + 1, nres, &err);

		ss->lua_us += util_usec() - t0;
		if (rc == 0)
			return 0;
	}
	{
		char *m = util_printf("plugin %s failed in %s (%s): %s; skipped "
		    "for the rest of this session", pl->name,
		    config_ep_names[ep], pl->file, err);

		log_warn("scheduler: %s", m);
		ss->failed[k] = 1;
		ss->events = realloc(ss->events, (ss->nevents + 1) *
		    sizeof *ss->events);
		ss->events[ss->nevents++] = m;
		free(err);
		lua_settop(L, base);
		return -1;
	}
}

/* The loaded set as GET /apis/volray.io/v1/policy shows it: each plugin
 * with its file, tier and arguments after defaults, and the config. */
cJSON *
policy_info(const struct policy *p)
{
	cJSON *o = cJSON_CreateObject(), *list, *pl, *args, *c;
	int i;

	list = cJSON_AddArrayToObject(o, "plugins");
	for (i = 0; p != NULL && i < p->nplugins; i++) {
		pl = cJSON_CreateObject();
		cJSON_AddStringToObject(pl, "name", p->plugins[i].name);
		cJSON_AddStringToObject(pl, "file", p->plugins[i].file);
		cJSON_AddStringToObject(pl, "loadedAt", p->loaded_at);
		cJSON_AddNumberToObject(pl, "tier", p->plugins[i].tier + 1);
		args = p->plugins[i].args_json != NULL ?
		    cJSON_Duplicate(p->plugins[i].args_json, 1) :
		    cJSON_CreateObject();
		cJSON_AddItemToObject(pl, "arguments", args);
		cJSON_AddItemToArray(list, pl);
	}
	c = cJSON_AddObjectToObject(o, "config");
	cJSON_AddStringToObject(c, "file", p != NULL ? p->conf.path : "");
	cJSON_AddStringToObject(c, "loadedAt", p != NULL ? p->loaded_at : "");
	return o;
}
