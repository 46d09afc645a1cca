/*
 * Conversion between cJSON trees and Lua values. Objects become tables with
 * string keys, arrays become sequences marked with a shared metatable (so
 * an empty array stays an array on the way back), JSON null becomes
 * volray.null (a light userdata) inside arrays and is dropped from objects.
 */
#ifndef VOLRAY_LUACONV_H
#define VOLRAY_LUACONV_H

#include <cjson/cJSON.h>
#include <lua.h>

/* Register the array metatable and the null sentinel in the registry. */
void luaconv_init(lua_State *);
/* Push the Lua form of a tree (NULL pushes nil). */
void luaconv_push(lua_State *, const cJSON *);
/* Push the Lua form of serialized JSON; pushes nil on a parse error. */
void luaconv_push_json(lua_State *, const char *json, size_t len);
/*
 * The same, keeping only the n paths given ("spec.queue": keys split at
 * dots), nested as in the object; an absent path is left out. For a
 * script that reads a few fields of many objects: the rest never becomes
 * Lua tables and strings.
 */
void luaconv_push_json_paths(lua_State *, const char *json, size_t len,
    char *const *paths, int n);
/* The value at idx as a tree; NULL with *cause for unconvertible values. */
cJSON *luaconv_to_json(lua_State *, int idx, char **cause);
/* Push the null sentinel. */
void luaconv_push_null(lua_State *);
/* Mark the table on top of the stack as an array. */
void luaconv_mark_array(lua_State *);

#endif
