/*
 * Lua host. A state's allocator (luaalloc.c) counts bytes against a cap
 * (allocation past it fails, which Lua turns into a "not enough memory"
 * error in the script that asked); a count hook every 1000 instructions
 * aborts a call past its budget. Scripts get a private _ENV whose __index
 * looks names up in a shared read-only base (the safe libraries, `volray`,
 * `require`) and raises "unknown global" otherwise. `require` loads
 * lib/NAME.lua from the roots, each module in its own environment, once
 * per state.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaalloc.h"
#include "luahost/luaconv.h"
#include "luahost/luahost.h"

#define HOOK_EVERY 1000

struct vfile {
	char *rel;
	char *path;
};

struct luahost {
	char **roots;
	int nroots;
	struct vfile *files;
	int nfiles;
	struct luahost_limits limits;
};

/* Per-state accounting, the allocator's userdata. */
struct lstate {
	luahost *h;
	struct luaalloc *mem;	/* the cap and the small blocks */
	uint64_t budget;        /* hook ticks allowed in the current call */
	uint64_t ticks;
	int in_call;
};

static int
cmp_vfile(const void *a, const void *b)
{
	return strcmp(((const struct vfile *)a)->rel,
	    ((const struct vfile *)b)->rel);
}

/* Add every regular file under dir (recursively) as root-relative. */
static void
scan(luahost *h, const char *root, const char *sub, int depth)
{
	char path[4096], rel[4096];
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int i;

	snprintf(path, sizeof path, "%s%s%s", root, *sub ? "/" : "", sub);
	if (depth > 8 || (d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "",
		    de->d_name) >= (int)sizeof rel ||
		    snprintf(path, sizeof path, "%s/%s", root, rel) >=
		    (int)sizeof path || stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			scan(h, root, rel, depth + 1);
			continue;
		}
		if (!S_ISREG(sb.st_mode))
			continue;
		for (i = 0; i < h->nfiles; i++) {
			if (strcmp(h->files[i].rel, rel) == 0) {
				free(h->files[i].path);
				h->files[i].path = xstrdup(path);
				break;
			}
		}
		if (i < h->nfiles)
			continue;
		h->files = xreallocarray(h->files, h->nfiles + 1,
		    sizeof *h->files);
		h->files[h->nfiles].rel = xstrdup(rel);
		h->files[h->nfiles].path = xstrdup(path);
		h->nfiles++;
	}
	closedir(d);
}

static void
clear_files(luahost *h)
{
	int i;

	for (i = 0; i < h->nfiles; i++) {
		free(h->files[i].rel);
		free(h->files[i].path);
	}
	free(h->files);
	h->files = NULL;
	h->nfiles = 0;
}

void
luahost_rescan(luahost *h)
{
	int i;

	clear_files(h);
	for (i = 0; i < h->nroots; i++)
		scan(h, h->roots[i], "", 0);
	qsort(h->files, h->nfiles, sizeof *h->files, cmp_vfile);
}

luahost *
luahost_new(const char *const *roots, int nroots,
    const struct luahost_limits *limits)
{
	luahost *h = xcalloc(1, sizeof *h);
	int i;

	h->roots = xcalloc(nroots + 1, sizeof *h->roots);
	for (i = 0; i < nroots; i++)
		h->roots[i] = xstrdup(roots[i]);
	h->nroots = nroots;
	h->limits = *limits;
	luahost_rescan(h);
	return h;
}

void
luahost_free(luahost *h)
{
	int i;

	if (h == NULL)
		return;
	clear_files(h);
	for (i = 0; i < h->nroots; i++)
		free(h->roots[i]);
	free(h->roots);
	free(h);
}

char **
luahost_files(luahost *h, const char *prefix, const char *suffix, int *n)
{
	char **out = xcalloc(h->nfiles + 1, sizeof *out);
	size_t lp = strlen(prefix), ls = strlen(suffix), lr;
	int i;

	*n = 0;
	for (i = 0; i < h->nfiles; i++) {
		const char *rel = h->files[i].rel;

		lr = strlen(rel);
		if (strncmp(rel, prefix, lp) != 0 || lr < lp + ls ||
		    strcmp(rel + lr - ls, suffix) != 0)
			continue;
		/* Only direct children of prefix. */
		if (strchr(rel + lp, '/') != NULL)
			continue;
		out[(*n)++] = xstrdup(rel);
	}
	return out;
}

const char *
luahost_path(luahost *h, const char *rel)
{
	struct vfile key = { (char *)rel, NULL }, *f;

	f = bsearch(&key, h->files, h->nfiles, sizeof *h->files, cmp_vfile);
	return f ? f->path : NULL;
}

/* The state's allocator (luahost/luaalloc.c): refuses growth past the cap. */
static void *
lalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	return luaalloc_fn(((struct lstate *)ud)->mem, ptr, osize, nsize);
}

static struct lstate *
lstate_of(lua_State *L)
{
	void *ud;

	lua_getallocf(L, &ud);
	return ud;
}

luahost *
luahost_of(lua_State *L)
{
	return lstate_of(L)->h;
}

size_t
luahost_memory(lua_State *L)
{
	return luaalloc_used(lstate_of(L)->mem);
}

static void
count_hook(lua_State *L, lua_Debug *ar)
{
	struct lstate *s = lstate_of(L);

	(void)ar;
	if (s->in_call && ++s->ticks > s->budget)
		luaL_error(L, "script exceeded its instruction budget "
		    "(%I instructions)", (lua_Integer)(s->budget * HOOK_EVERY));
}

/* __index of a script environment: the base, or an error. */
static int
env_index(lua_State *L)
{
	lua_pushvalue(L, 2);
	lua_rawget(L, lua_upvalueindex(1));
	if (lua_isnil(L, -1) && lua_type(L, 2) == LUA_TSTRING)
		return luaL_error(L, "unknown global '%s'", lua_tostring(L, 2));
	return 1;
}

/* Push a new environment table for one script. */
static void
push_env(lua_State *L)
{
	lua_newtable(L);
	lua_newtable(L);
	lua_getfield(L, LUA_REGISTRYINDEX, "volray.base");
	lua_pushcclosure(L, env_index, 1);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/* Load rel into a function with a fresh environment; -1 with cause. */
static int
load_rel(lua_State *L, const char *rel, char **cause)
{
	luahost *h = luahost_of(L);
	const char *path = luahost_path(h, rel);
	char chunk[4200];
	FILE *f;
	char *buf;
	long len;
	int rc;

	if (path == NULL) {
		*cause = util_printf("%s: no such script", rel);
		return -1;
	}
	if ((f = fopen(path, "rb")) == NULL) {
		*cause = util_printf("%s: %s", path, strerror(errno));
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc(len + 1);
	if (fread(buf, 1, len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		*cause = util_printf("%s: read error", path);
		return -1;
	}
	fclose(f);
	snprintf(chunk, sizeof chunk, "@%s", path);
	/* Text only: precompiled chunks could break the sandbox. */
	rc = luaL_loadbufferx(L, buf, len, chunk, "t");
	free(buf);
	if (rc != LUA_OK) {
		*cause = xstrdup(lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	push_env(L);
	lua_setupvalue(L, -2, 1);
	return 0;
}

static int
l_require(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	char rel[512], *p, *cause = NULL;

	lua_getfield(L, LUA_REGISTRYINDEX, "volray.loaded");
	lua_getfield(L, -1, name);
	if (!lua_isnil(L, -1))
		return 1;
	lua_pop(L, 1);
	snprintf(rel, sizeof rel, "lib/%s.lua", name);
	for (p = rel + 4; *p; p++)
		if (*p == '.' && strcmp(p, ".lua") != 0)
			*p = '/';
	if (load_rel(L, rel, &cause) != 0) {
		lua_pushfstring(L, "module '%s' not found: %s", name,
		    cause ? cause : "");
		free(cause);
		return lua_error(L);
	}
	lua_call(L, 0, 1);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, name);
	return 1;
}

static int
l_print(lua_State *L)
{
	luaL_Buffer b;
	int i, n = lua_gettop(L);

	luaL_buffinit(L, &b);
	for (i = 1; i <= n; i++) {
		if (i > 1)
			luaL_addchar(&b, '\t');
		luaL_tolstring(L, i, NULL);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	log_info("lua: %s", lua_tostring(L, -1));
	return 0;
}

/*
 * Lua patterns backtrack: a pattern with many quantifiers against a long
 * enough subject runs for hours inside C, where the instruction hook never
 * fires. Before a pattern function runs, bound the work: with q
 * quantifiers and a subject of n bytes the matcher can try about n^q
 * positions, so refuse when that passes 10^9.
 */
static int
pattern_guard(lua_State *L)
{
	size_t n, plen, i;
	const char *p;
	int q = 0, in_set = 0;

	luaL_checklstring(L, 1, &n);
	p = luaL_checklstring(L, 2, &plen);
	for (i = 0; i < plen; i++) {
		if (p[i] == '%') {
			i++;
			continue;
		}
		if (in_set) {
			if (p[i] == ']')
				in_set = 0;
			continue;
		}
		if (p[i] == '[') {
			in_set = 1;
			if (i + 1 < plen && p[i + 1] == ']')
				i++;
			continue;
		}
		if (p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?')
			q++;
	}
	if (q > 2 && q * log10((double)n + 1) > 9)
		return luaL_error(L, "pattern with %d quantifiers is too costly "
		    "for a subject of %d bytes", q, (int)n);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

static void
guard_patterns(lua_State *L)
{
	static const char *const fns[] = { "find", "match", "gmatch", "gsub",
	    NULL };
	int i;

	lua_getglobal(L, "string");
	for (i = 0; fns[i] != NULL; i++) {
		lua_getfield(L, -1, fns[i]);
		lua_pushcclosure(L, pattern_guard, 1);
		lua_setfield(L, -2, fns[i]);
	}
	lua_pop(L, 1);
}

static int
readonly_newindex(lua_State *L)
{
	return luaL_error(L, "the standard libraries are read-only");
}

/* Build the shared base table of safe globals. */
static void
open_base(lua_State *L)
{
	static const char *const keep[] = { "assert", "error", "ipairs",
	    "next", "pairs", "pcall", "rawequal", "rawget", "rawlen", "rawset",
	    "select", "setmetatable", "getmetatable", "tonumber", "tostring",
	    "type", "xpcall", "_VERSION", NULL };
	static const char *const libs[] = { "table", "string", "math",
	    "utf8", NULL };
	int i;

	luaL_requiref(L, "_G", luaopen_base, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
	lua_pop(L, 1);
	/* string.dump would expose bytecode; drop it. */
	lua_getglobal(L, "string");
	lua_pushnil(L);
	lua_setfield(L, -2, "dump");
	lua_pop(L, 1);
	guard_patterns(L);

	lua_newtable(L);    /* base */
	for (i = 0; keep[i] != NULL; i++) {
		lua_getglobal(L, keep[i]);
		lua_setfield(L, -2, keep[i]);
	}
	/* Libraries are shared by every script: give each a read-only view
	 * so one script cannot change string.find under another. */
	for (i = 0; libs[i] != NULL; i++) {
		lua_newtable(L);                 /* proxy */
		lua_newtable(L);                 /* its metatable */
		lua_getglobal(L, libs[i]);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, readonly_newindex);
		lua_setfield(L, -2, "__newindex");
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "__metatable");
		lua_setmetatable(L, -2);
		lua_setfield(L, -2, libs[i]);
	}
	/* Nor through the string metatable ("":find is still fine). */
	lua_pushliteral(L, "");
	if (lua_getmetatable(L, -1)) {
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "__metatable");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushcfunction(L, l_print);
	lua_setfield(L, -2, "print");
	lua_pushcfunction(L, l_require);
	lua_setfield(L, -2, "require");
	lua_setfield(L, LUA_REGISTRYINDEX, "volray.base");
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "volray.loaded");
	/* Nothing reaches the real globals from scripts. */
	lua_pushglobaltable(L);
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushnil(L);
		lua_rawset(L, -4);
	}
	lua_pop(L, 1);
}

lua_State *
luahost_state_new(luahost *h, void (*open_api)(lua_State *, void *),
    void *api_arg)
{
	struct lstate *s = xcalloc(1, sizeof *s);
	lua_State *L;

	s->h = h;
	s->mem = luaalloc_new(h->limits.memory);
	s->budget = h->limits.instructions / HOOK_EVERY;
	/* Set-up itself gets a generous allowance. */
	L = lua_newstate(lalloc, s);
	if (L == NULL) {
		luaalloc_free(s->mem);
		free(s);
		return NULL;
	}
	/* Coroutines copy the hook and the extra space from here. */
	*(void **)lua_getextraspace(L) = NULL;
	lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
	luaconv_init(L);
	open_base(L);
	if (open_api != NULL) {
		/* The API module becomes base.volray. */
		lua_getfield(L, LUA_REGISTRYINDEX, "volray.base");
		open_api(L, api_arg);
		lua_pushvalue(L, -1);
		lua_setfield(L, -3, "volray");
		lua_getfield(L, LUA_REGISTRYINDEX, "volray.loaded");
		lua_insert(L, -2);
		lua_setfield(L, -2, "volray");
		lua_pop(L, 2);
	}
	return L;
}

void
luahost_state_close(lua_State *L)
{
	struct lstate *s;

	if (L == NULL)
		return;
	s = lstate_of(L);
	lua_close(L);
	luaalloc_free(s->mem);
	free(s);
}

static int
msgh(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL)
		msg = lua_pushfstring(L, "(error object is a %s value)",
		    luaL_typename(L, 1));
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int
luahost_call(lua_State *L, int nargs, int nresults, char **cause)
{
	struct lstate *s = lstate_of(L);
	int base = lua_gettop(L) - nargs, rc, outer = !s->in_call;

	lua_pushcfunction(L, msgh);
	lua_insert(L, base);
	if (outer) {
		s->ticks = 0;
		s->in_call = 1;
	}
	rc = lua_pcall(L, nargs, nresults, base);
	if (outer)
		s->in_call = 0;
	lua_remove(L, base);
	if (rc != LUA_OK) {
		*cause = xstrdup(lua_tostring(L, -1) ? lua_tostring(L, -1) :
		    "unknown error");
		lua_pop(L, 1);
		/* Give back what a runaway call left behind. */
		lua_gc(L, LUA_GCCOLLECT);
		return -1;
	}
	*cause = NULL;
	return 0;
}

/* The traceback of the failed coroutine (light userdata 1), whose
   error is on top of its stack. */
static int
co_traceback(lua_State *L)
{
	lua_State *co = lua_touserdata(L, 1);

	luaL_traceback(L, co, lua_type(co, -1) == LUA_TSTRING ?
	    lua_tostring(co, -1) : "(error object is not a string)", 0);
	return 1;
}

/* co's error, with a traceback made on the main thread under protection:
   a coroutine that ran out of memory may leave none to make one. */
static char *
co_error(lua_State *co)
{
	lua_State *main;
	char *err;

	lua_rawgeti(co, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	main = lua_tothread(co, -1);
	lua_pop(co, 1);
	lua_pushcfunction(main, co_traceback);
	lua_pushlightuserdata(main, co);
	if (lua_pcall(main, 1, 1, 0) == LUA_OK && lua_isstring(main, -1))
		err = xstrdup(lua_tostring(main, -1));
	else
		err = xstrdup(lua_type(co, -1) == LUA_TSTRING ?
		    lua_tostring(co, -1) : "unknown error");
	lua_pop(main, 1);
	return err;
}

int
luahost_resume(lua_State *co, int nargs, int *nres, uint64_t *ticks,
    char **cause)
{
	struct lstate *s = lstate_of(co);
	uint64_t outer_ticks = s->ticks;
	int outer_in_call = s->in_call, rc;

	s->ticks = *ticks;
	s->in_call = 1;
	rc = lua_resume(co, NULL, nargs, nres);
	*ticks = s->ticks;
	s->ticks = outer_ticks;
	s->in_call = outer_in_call;
	*cause = NULL;
	if (rc == LUA_YIELD || rc == LUA_OK)
		return rc == LUA_YIELD ? LUA_YIELD : 0;
	*cause = co_error(co);
	return -1;
}

int
luahost_dofile(lua_State *L, const char *rel, char **cause)
{
	if (load_rel(L, rel, cause) != 0)
		return -1;
	if (luahost_call(L, 0, 1, cause) != 0)
		return -1;
	return 0;
}
