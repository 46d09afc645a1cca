/*
 * Parts of the volray Lua module that tell scripts how the daemon was
 * started and read the formats they find inside objects: volray.config
 * (read-only settings from volrayd's flags, such as batch_scheduler) and
 * volray.yaml_decode (YAML text such as a RayJob's runtimeEnvYAML, parsed
 * with the API server's own YAML reader). Documented in volray-lua(7).
 */
#include <stdlib.h>

#include <lauxlib.h>

#include "ctrl/luaconfig.h"
#include "lib/yamljson.h"
#include "luahost/luaconv.h"

/* yaml_decode(text): the first document's value, or nil and the reason. */
static int
l_yaml_decode(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	char *cause = NULL;
	cJSON *t = yamljson_parse(s, len, &cause);

	if (t == NULL) {
		lua_pushnil(L);
		lua_pushstring(L, cause ? cause : "not YAML");
		free(cause);
		return 2;
	}
	luaconv_push(L, t);
	cJSON_Delete(t);
	return 1;
}

/* Refuse writes to volray.config: it describes the daemon, not a script. */
static int
l_config_newindex(lua_State *L)
{
	return luaL_error(L, "volray.config is read-only");
}

void
luaconfig_open(lua_State *L, const char *batch_scheduler,
    const char *root_ca)
{
	lua_pushcfunction(L, l_yaml_decode);
	lua_setfield(L, -2, "yaml_decode");
	/* config: an empty proxy whose metatable holds the values. */
	lua_newtable(L);
	lua_newtable(L);
	lua_newtable(L);
	lua_pushstring(L, batch_scheduler ? batch_scheduler : "");
	lua_setfield(L, -2, "batch_scheduler");
	lua_pushstring(L, root_ca ? root_ca : "");
	lua_setfield(L, -2, "root_ca");
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, l_config_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_setfield(L, -2, "config");
}
