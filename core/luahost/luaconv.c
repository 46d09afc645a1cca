/*
 * JSON <-> Lua. Arrays carry a marker metatable so `{}` of an empty list
 * is not confused with an empty object when a script writes it back;
 * tables without the marker are arrays when their keys are exactly 1..n
 * (and non-empty), objects otherwise. Integers stay integers (lua_Integer)
 * when the JSON number is integral, so counts print without ".0".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"

#define ARRAY_MT "volray.array"
#define MAX_DEPTH 200

static char null_sentinel;

void
luaconv_init(lua_State *L)
{
	luaL_newmetatable(L, ARRAY_MT);
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "__array");
	lua_pop(L, 1);
}

void
luaconv_push_null(lua_State *L)
{
	lua_pushlightuserdata(L, &null_sentinel);
}

void
luaconv_mark_array(lua_State *L)
{
	luaL_setmetatable(L, ARRAY_MT);
}

static void
push_number(lua_State *L, double d)
{
	if (d == floor(d) && fabs(d) < 9.007199254740992e15)
		lua_pushinteger(L, (lua_Integer)d);
	else
		lua_pushnumber(L, d);
}

static void
push_depth(lua_State *L, const cJSON *v, int depth)
{
	const cJSON *c;
	int i;

	if (v == NULL || depth > MAX_DEPTH) {
		lua_pushnil(L);
		return;
	}
	luaL_checkstack(L, 4, "json too deep");
	switch (v->type & 0xff) {
	case cJSON_False:
		lua_pushboolean(L, 0);
		break;
	case cJSON_True:
		lua_pushboolean(L, 1);
		break;
	case cJSON_NULL:
		luaconv_push_null(L);
		break;
	case cJSON_Number:
		push_number(L, v->valuedouble);
		break;
	case cJSON_String:
		/* Not lua_pushstring: its pointer-keyed cache would strcmp
		   two cold strings for every fresh string of the tree. */
		lua_pushlstring(L, v->valuestring, strlen(v->valuestring));
		break;
	case cJSON_Array:
		lua_createtable(L, cJSON_GetArraySize(v), 0);
		i = 1;
		cJSON_ArrayForEach(c, v) {
			push_depth(L, c, depth + 1);
			lua_rawseti(L, -2, i++);
		}
		luaconv_mark_array(L);
		break;
	case cJSON_Object:
		lua_createtable(L, 0, cJSON_GetArraySize(v));
		cJSON_ArrayForEach(c, v) {
			if ((c->type & 0xff) == cJSON_NULL)
				continue;
			/* A new table has no metatable: rawset, the key pushed
			   with its length (as the string values above). */
			lua_pushlstring(L, c->string ? c->string : "",
			    c->string ? strlen(c->string) : 0);
			push_depth(L, c, depth + 1);
			lua_rawset(L, -3);
		}
		break;
	default:
		lua_pushnil(L);
	}
}

void
luaconv_push(lua_State *L, const cJSON *v)
{
	push_depth(L, v, 0);
}

void
luaconv_push_json(lua_State *L, const char *json, size_t len)
{
	cJSON *t = cJSON_ParseWithLength(json, len);

	push_depth(L, t, 0);
	cJSON_Delete(t);
}

/* Set path (from p on) of the table on top to v, making the tables on
   the way. */
static void
set_path(lua_State *L, const char *p, const cJSON *v)
{
	const char *dot;
	int depth = 0;

	while ((dot = strchr(p, '.')) != NULL) {
		/* A table a level stays on the stack: a script's path may
		   be deep. */
		luaL_checkstack(L, 4, "paths: too deep");
		lua_pushlstring(L, p, (size_t)(dot - p));
		lua_pushvalue(L, -1);
		if (lua_rawget(L, -3) != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushvalue(L, -2);
			lua_pushvalue(L, -2);
			lua_rawset(L, -5);
		}
		lua_remove(L, -2);
		depth++;
		p = dot + 1;
	}
	lua_pushstring(L, p);
	push_depth(L, v, depth + 1);
	lua_rawset(L, -3);
	lua_pop(L, depth);
}

void
luaconv_push_json_paths(lua_State *L, const char *json, size_t len,
    char *const *paths, int n)
{
	cJSON *t = cJSON_ParseWithLength(json, len);
	int i;

	if (t == NULL) {
		lua_pushnil(L);
		return;
	}
	luaL_checkstack(L, 4, "paths");
	lua_createtable(L, 0, n);
	for (i = 0; i < n; i++) {
		/* Found first: nothing is made for an absent path. */
		const cJSON *v = json_at(t, paths[i]);

		if (v != NULL && (v->type & 0xff) != cJSON_NULL)
			set_path(L, paths[i], v);
	}
	cJSON_Delete(t);
}

static int
is_marked_array(lua_State *L, int idx)
{
	int r = 0;

	if (lua_getmetatable(L, idx)) {
		lua_getfield(L, -1, "__array");
		r = lua_toboolean(L, -1);
		lua_pop(L, 2);
	}
	return r;
}

/* Is the table at idx a non-empty sequence 1..n with no other keys? */
static int
is_sequence(lua_State *L, int idx, lua_Integer *n)
{
	lua_Integer count = 0, max = 0;

	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TNUMBER || !lua_isinteger(L, -1)) {
			lua_pop(L, 1);
			return 0;
		}
		if (lua_tointeger(L, -1) > max)
			max = lua_tointeger(L, -1);
		count++;
	}
	*n = count;
	return count > 0 && count == max;
}

static cJSON *
to_json(lua_State *L, int idx, int depth, char **cause)
{
	cJSON *out, *item;
	lua_Integer n, i;
	double d;

	idx = lua_absindex(L, idx);
	if (depth > MAX_DEPTH) {
		*cause = xstrdup("value nested too deeply (or a cycle)");
		return NULL;
	}
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		return cJSON_CreateNull();
	case LUA_TBOOLEAN:
		return cJSON_CreateBool(lua_toboolean(L, idx));
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx))
			return cJSON_CreateNumber((double)lua_tointeger(L, idx));
		d = lua_tonumber(L, idx);
		if (isnan(d) || isinf(d)) {
			*cause = xstrdup("NaN and infinity cannot be encoded");
			return NULL;
		}
		return cJSON_CreateNumber(d);
	case LUA_TSTRING:
		return cJSON_CreateString(lua_tostring(L, idx));
	case LUA_TLIGHTUSERDATA:
		if (lua_touserdata(L, idx) == &null_sentinel)
			return cJSON_CreateNull();
		break;
	case LUA_TTABLE:
		luaL_checkstack(L, 6, "json too deep");
		if (is_marked_array(L, idx) || is_sequence(L, idx, &n)) {
			out = cJSON_CreateArray();
			n = (lua_Integer)lua_rawlen(L, idx);
			for (i = 1; i <= n; i++) {
				lua_rawgeti(L, idx, i);
				item = to_json(L, -1, depth + 1, cause);
				lua_pop(L, 1);
				if (item == NULL) {
					cJSON_Delete(out);
					return NULL;
				}
				cJSON_AddItemToArray(out, item);
			}
			return out;
		}
		out = cJSON_CreateObject();
		lua_pushnil(L);
		while (lua_next(L, idx) != 0) {
			char kbuf[64];
			const char *k;

			if (lua_type(L, -2) == LUA_TSTRING)
				k = lua_tostring(L, -2);
			else if (lua_type(L, -2) == LUA_TNUMBER) {
				snprintf(kbuf, sizeof kbuf, "%lld",
				    (long long)lua_tointeger(L, -2));
				k = kbuf;
			} else {
				lua_pop(L, 2);
				cJSON_Delete(out);
				*cause = xstrdup("table keys must be strings");
				return NULL;
			}
			item = to_json(L, -1, depth + 1, cause);
			if (item == NULL) {
				lua_pop(L, 2);
				cJSON_Delete(out);
				return NULL;
			}
			cJSON_AddItemToObject(out, k, item);
			lua_pop(L, 1);
		}
		return out;
	default:
		break;
	}
	*cause = util_printf("a %s cannot be encoded as JSON",
	    luaL_typename(L, idx));
	return NULL;
}

cJSON *
luaconv_to_json(lua_State *L, int idx, char **cause)
{
	*cause = NULL;
	return to_json(L, idx, 0, cause);
}
