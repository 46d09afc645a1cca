/*
 * Loading a policy: scheduler.yaml plus the plugins it names, each loaded
 * from NAME.lua in the Lua host's roots (the built-in policies/
 * directory, then each --policy-dir) into one sandboxed state made for
 * this policy; reload builds a new one beside the running one, and a
 * policy that does not load is refused whole. A plugin file returns a
 * table of extension-point functions (the names in config_ep_names), and
 * may declare `arguments`, a schema:
 *
 *   arguments = { weight = { type = "number", default = 1, min = 0 } }
 *
 * Arguments in scheduler.yaml are checked against it at load (unknown
 * names, wrong types and out-of-range numbers are refused with the file
 * and line) and given to open(ssn, args) with the defaults filled in
 * (ssn.c). A plugin scheduler.yaml names but no root holds is skipped
 * with a warning, as Volcano skips a plugin it does not know.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"
#include "luahost/luahost.h"
#include "sched/sched_int.h"

static void
add_warning(struct policy *p, char *msg)
{
	log_warn("scheduler: %s", msg);
	p->warnings = xreallocarray(p->warnings, (size_t)p->nwarnings + 1,
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
coerce(lua_State *L, const char *type, const cJSON *v, char **cause)
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
			*cause = xstrdup("want a number");
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
			*cause = xstrdup("want true or false");
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
			*cause = xstrdup("want a string");
			return -1;
		}
		return 0;
	}
	/* "table": anything, converted as is. */
	luaconv_push(L, v);
	return 0;
}

/*
 * Push the schema entry whose key ends in "*" and whose rest begins
 * name ("tdm.revocable-zone.*": a family of arguments), or nil.
 */
static void
prefixed_entry(lua_State *L, int schema, const char *name)
{
	lua_pushnil(L);
	while (lua_next(L, schema) != 0) {
		size_t n;
		const char *k = lua_type(L, -2) == LUA_TSTRING ?
		    lua_tolstring(L, -2, &n) : NULL;

		if (k != NULL && n > 1 && k[n - 1] == '*' &&
		    strncmp(k, name, n - 1) == 0 && lua_istable(L, -1)) {
			lua_remove(L, -2);
			return;
		}
		lua_pop(L, 1);
	}
	lua_pushnil(L);
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
			*cause = util_printf(
			    "%s:%d: plugin %s takes no arguments "
			    "(got %s)", cpath, pl->conf->line, pl->name,
			    a->string);
			lua_settop(L, tbl);
			return -1;
		}
		lua_getfield(L, schema, a->string);
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			prefixed_entry(L, schema, a->string);
		}
		if (!lua_istable(L, -1)) {
			*cause = util_printf(
			    "%s:%d: plugin %s: unknown argument "
			    "%s", cpath, pl->conf->line, pl->name, a->string);
			lua_settop(L, tbl);
			return -1;
		}
		lua_getfield(L, -1, "type");
		if (lua_type(L, -1) == LUA_TSTRING)
			type = lua_tostring(L, -1);
		if (coerce(L, type, a, &why) != 0) {
			*cause = util_printf(
			    "%s:%d: plugin %s: argument %s: %s",
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
				*cause = util_printf(
				    "%s:%d: plugin %s: argument "
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
	/* The plugin entry's enableHierarchy (Volcano's key, beside the
	   enable flags) reaches the plugin as an argument. */
	if (pl->conf->hierarchy) {
		lua_pushboolean(L, 1);
		lua_setfield(L, out, "enableHierarchy");
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
	pl->file = xstrdup(luahost_path(h, rel));
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
	const char *level, *msg;

	/* volray.log(level, message) as in controllers, or (message). */
	if (lua_gettop(L) >= 2) {
		level = luaL_checkstring(L, 1);
		msg = luaL_checkstring(L, 2);
	} else {
		level = "info";
		msg = luaL_checkstring(L, 1);
	}
	if (strcmp(level, "error") == 0)
		log_error("scheduler: %s", msg);
	else if (strcmp(level, "warn") == 0)
		log_warn("scheduler: %s", msg);
	else if (strcmp(level, "debug") == 0)
		log_debug("scheduler: %s", msg);
	else
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

/* The policy's files as `volray session record` keeps them: the
   config and each loaded plugin's file, by name. */
static char *
files_json(const struct policy *p)
{
	cJSON *o = cJSON_CreateObject();
	char *text, *out;
	size_t len;
	int i;

	if ((text = util_read_file(p->conf.path, &len)) != NULL)
		cJSON_AddStringToObject(o, "scheduler.yaml", text);
	free(text);
	for (i = 0; i < p->nplugins; i++) {
		char *name = util_printf("%s.lua", p->plugins[i].name);

		if ((text = util_read_file(p->plugins[i].file, &len)) != NULL)
			cJSON_AddStringToObject(o, name, text);
		free(text);
		free(name);
	}
	out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

struct policy *
policy_load(luahost *h, char **cause)
{
	struct policy *p = xcalloc(1, sizeof *p);
	const char *path;
	char *buf, now[32];
	size_t len;
	int i, j, n = 0;

	*cause = NULL;
	luahost_rescan(h);
	if ((path = luahost_path(h, "scheduler.yaml")) == NULL) {
		*cause = xstrdup(
		    "scheduler.yaml: not found in the policy roots");
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
		*cause = xstrdup("cannot create a Lua state");
		policy_free(p);
		return NULL;
	}
	for (i = 0; i < p->conf.ntiers; i++)
		n += p->conf.tiers[i].nplugins;
	p->plugins = xcalloc((size_t)n + 1, sizeof *p->plugins);
	for (i = 0; i < p->conf.ntiers; i++)
		for (j = 0; j < p->conf.tiers[i].nplugins; j++) {
			struct plugin_conf *pc = &p->conf.tiers[i].plugins[j];
			struct plugin *pl = &p->plugins[p->nplugins];
			char rel[300];

			snprintf(rel, sizeof rel, "%s.lua", pc->name);
			if (strchr(pc->name, '/') != NULL ||
			    luahost_path(h, rel) == NULL) {
				/* Volcano skips a plugin it does not know. */
				add_warning(p, util_printf("%s:%d: plugin %s: "
				    "no %s in the policy directories; skipped",
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
	/* Its chunk name is what framework.c cuts from a traceback. */
	if (luaL_loadbuffer(p->L, TRAMPOLINE, strlen(TRAMPOLINE),
	    "=" TRAMPOLINE_NAME) != LUA_OK) {
		*cause = xstrdup("cannot build the batch trampoline");
		policy_free(p);
		return NULL;
	}
	p->tramp_ref = luaL_ref(p->L, LUA_REGISTRYINDEX);
	util_now(now);
	p->loaded_at = xstrdup(now);
	p->files_json = files_json(p);
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
	free(p->files_json);
	luahost_state_close(p->L);
	config_free(&p->conf);
	free(p);
}

/* The loaded set as GET /apis/volray.io/v1/policy shows it: each plugin
 * with its file, tier, failurePolicy and arguments after defaults, and
 * the config. */
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
		cJSON_AddStringToObject(pl, "failurePolicy",
		    p->plugins[i].conf->fail_closed ? "Fail" : "Ignore");
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

