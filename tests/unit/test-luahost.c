/*
 * Unit tests for the Lua host and the JSON <-> Lua conversion: root
 * overrides, the sandbox (no io/os/load/string.dump, unknown globals are
 * errors, per-script environments), memory and instruction caps, require,
 * and lossless round trips of objects, arrays, empty arrays and nulls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>

#include "check.h"
#include "lib/json.h"
#include "luahost/luaconv.h"
#include "luahost/luahost.h"

static char root1[] = "/tmp/volray-test-lua1.XXXXXX";
static char root2[] = "/tmp/volray-test-lua2.XXXXXX";

static void
put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(dir, sizeof dir, "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		mkdir(dir, 0700);
	}
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Run a script file and return its error (malloc'd) or NULL. */
static char *
run(lua_State *L, const char *rel)
{
	char *cause = NULL;

	if (luahost_dofile(L, rel, &cause) != 0)
		return cause;
	lua_pop(L, 1);
	return NULL;
}

static int
dummy(lua_State *L)
{
	(void)L;
	return 0;
}

static int
has(const char *s, const char *needle)
{
	return s != NULL && strstr(s, needle) != NULL;
}

int
main(void)
{
	const char *roots[2];
	struct luahost_limits lim = { 16 << 20, 5000000 };
	luahost *h;
	lua_State *L;
	char *err, **files;
	int n, i;
	cJSON *in, *out;

	CHECK(mkdtemp(root1) != NULL);
	CHECK(mkdtemp(root2) != NULL);
	roots[0] = root1;
	roots[1] = root2;
	put(root1, "controllers/a.lua", "return 'from root1'");
	put(root1, "controllers/b.lua", "return 'b'");
	put(root2, "controllers/a.lua", "return 'from root2'");
	put(root1, "lib/util.lua", "local M = {} function M.twice(x) return 2 * x end return M");
	put(root1, "t/sandbox.lua",
	    "local function absent(n) return not pcall(function() return _ENV[n] end) end\n"
	    "for _, n in ipairs({'io', 'os', 'load', 'dofile', 'loadfile', 'collectgarbage', 'debug', 'package'}) do\n"
	    "  assert(absent(n), n .. ' reachable')\n"
	    "end\n"
	    "assert(string.dump == nil)\n"
	    "assert(not pcall(function() string.find = nil end))\n"
	    "assert(getmetatable('') == false)\n"
	    "assert(('abc'):upper() == 'ABC')\n"
	    "assert(type(table.insert) == 'function' and math.pi and utf8.char)\n"
	    "return true");
	put(root1, "t/unknown.lua", "return no_such_thing");
	put(root1, "t/setglobal.lua", "x_private = 1 return x_private");
	put(root1, "t/isolated.lua", "local ok = pcall(function() return x_private end) return ok");
	put(root1, "t/require.lua", "return require('util').twice(21)");
	put(root1, "t/loop.lua", "while true do end");
	put(root1, "t/memory.lua", "local t = {} for i = 1, 1e8 do t[i] = string.rep('y', 4096) .. i end");
	put(root1, "t/syntax.lua", "return (");
	/* The allocator's small blocks: sizes either side of 256 bytes, grown
	   and shrunk, freed and reused, their contents intact. */
	put(root1, "t/churn.lua",
	    "local t = {}\n"
	    "for round = 1, 3 do\n"
	    "  for i = 1, 3000 do t[i] = string.rep(string.char(65 + i % 26), i % 600) end\n"
	    "  for i = 1, 3000 do\n"
	    "    local s = t[i]\n"
	    "    assert(#s == i % 600)\n"
	    "    assert(#s == 0 or (s:byte(1) == 65 + i % 26 and s:byte(#s) == 65 + i % 26))\n"
	    "  end\n"
	    "  local g = {}\n"
	    "  for i = 1, 400 do g[i] = {i, tostring(i)} end\n"
	    "  for i = 400, 1, -1 do assert(g[i][2] == tostring(i)) g[i] = nil end\n"
	    "  for i = 1, 3000, 2 do t[i] = nil end\n"
	    "end\n"
	    "local n = 0\n"
	    "for i = 1, 3000 do if t[i] ~= nil then n = n + 1 end end\n"
	    "return n\n");
	put(root1, "t/pattern.lua",
	    "assert(('key=value'):match('^(%w+)=(%w+)$') == 'key')\n"
	    "assert(select(2, ('a.b.c'):gsub('%.', '/')) == 2)\n"
	    "return string.find(string.rep('a', 5000), string.rep('a*', 12) .. 'b')");
	put(root1, "t/bytecode.lua", "\x1bLua");

	h = luahost_new(roots, 2, &lim);
	files = luahost_files(h, "controllers/", ".lua", &n);
	CHECK(n == 2);
	CHECK(n == 2 && strcmp(files[0], "controllers/a.lua") == 0);
	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
	CHECK(has(luahost_path(h, "controllers/a.lua"), root2));
	CHECK(has(luahost_path(h, "controllers/b.lua"), root1));

	L = luahost_state_new(h, NULL, NULL);
	CHECK(L != NULL);
	CHECK(luahost_dofile(L, "controllers/a.lua", &err) == 0);
	CHECK_STR(lua_tostring(L, -1), "from root2");
	lua_pop(L, 1);

	CHECK((err = run(L, "t/sandbox.lua")) == NULL);
	free(err);
	err = run(L, "t/unknown.lua");
	CHECK(has(err, "unknown global 'no_such_thing'"));
	CHECK(has(err, "unknown.lua:1"));
	free(err);
	CHECK((err = run(L, "t/setglobal.lua")) == NULL);
	free(err);
	CHECK(luahost_dofile(L, "t/isolated.lua", &err) == 0);
	CHECK(lua_toboolean(L, -1) == 0);
	lua_pop(L, 1);
	CHECK(luahost_dofile(L, "t/require.lua", &err) == 0);
	CHECK(lua_tointeger(L, -1) == 42);
	lua_pop(L, 1);
	err = run(L, "t/loop.lua");
	CHECK(has(err, "instruction budget"));
	free(err);
	err = run(L, "t/memory.lua");
	CHECK(has(err, "memory"));
	free(err);
	CHECK(luahost_memory(L) < (16u << 20));
	err = run(L, "t/pattern.lua");
	CHECK(has(err, "too costly"));
	free(err);
	{
		size_t before = luahost_memory(L);

		int rc = luahost_dofile(L, "t/churn.lua", &err);

		CHECK(rc == 0);
		if (rc != 0)
			fprintf(stderr, "churn.lua: %s\n", err);
		CHECK(rc == 0 && lua_tointeger(L, -1) == 1500);
		if (rc == 0)
			lua_pop(L, 1);
		free(err);
		err = NULL;
		lua_gc(L, LUA_GCCOLLECT);
		/* What the script made is counted as freed again. */
		CHECK(luahost_memory(L) < before + (256u << 10));
	}
	err = run(L, "t/syntax.lua");
	CHECK(has(err, "syntax.lua:1"));
	free(err);
	err = run(L, "t/bytecode.lua");
	CHECK(err != NULL);
	free(err);
	/* The state still works after every failure. */
	CHECK(luahost_dofile(L, "t/require.lua", &err) == 0);
	lua_pop(L, 1);

	/* JSON round trips. */
	in = cJSON_Parse("{\"a\":1,\"b\":[],\"c\":{},\"d\":[1,null,\"x\"],"
	    "\"e\":1.5,\"f\":true,\"g\":{\"h\":[{\"i\":\"j\"}]}}");
	luaconv_push(L, in);
	out = luaconv_to_json(L, -1, &err);
	lua_pop(L, 1);
	/* Lua tables are unordered: compare trees, not text. */
	CHECK(json_equal(in, out));
	cJSON_Delete(in);
	cJSON_Delete(out);
	lua_newtable(L);
	lua_pushcfunction(L, dummy);
	lua_setfield(L, -2, "fn");
	out = luaconv_to_json(L, -1, &err);
	CHECK(out == NULL && has(err, "function"));
	free(err);
	lua_pop(L, 1);
	{
		/* paths: only those, nested; absent and null ones left out;
		   a path 150 levels deep (a table each on the stack). */
		const char *json = "{\"a\":1,\"g\":{\"h\":[1],\"k\":\"v\","
		    "\"n\":null},\"z\":2}";
		char *paths[] = { "g.h", "g.k", "g.n", "x.y", "a" };
		char *deep = calloc(1, 150 * 4 + 64), *dj = calloc(1, 150 * 8 + 64);
		char *dp[1];
		int i, top = lua_gettop(L);

		luaconv_push_json_paths(L, json, strlen(json), paths, 5);
		out = luaconv_to_json(L, -1, &err);
		in = cJSON_Parse("{\"a\":1,\"g\":{\"h\":[1],\"k\":\"v\"}}");
		CHECK(out != NULL && json_equal(in, out));
		cJSON_Delete(in);
		cJSON_Delete(out);
		lua_pop(L, 1);
		for (i = 0; i < 150; i++) {
			strcat(deep, i ? ".a" : "a");
			strcat(dj, "{\"a\":");
		}
		strcat(dj, "7");
		for (i = 0; i < 150; i++)
			strcat(dj, "}");
		dp[0] = deep;
		luaconv_push_json_paths(L, dj, strlen(dj), dp, 1);
		out = luaconv_to_json(L, -1, &err);
		in = cJSON_Parse(dj);
		CHECK(out != NULL && json_equal(in, out));
		CHECK(lua_gettop(L) == top + 1);
		cJSON_Delete(in);
		cJSON_Delete(out);
		lua_pop(L, 1);
		free(deep);
		free(dj);
	}

	luahost_state_close(L);
	luahost_free(h);
	{
		char cmd[256];

		snprintf(cmd, sizeof cmd, "rm -rf %s %s", root1, root2);
		CHECK(system(cmd) == 0);
	}
	return check_result("test-luahost");
}
