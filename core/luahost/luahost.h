/*
 * The Lua host: sandboxed Lua states for controllers and scheduler
 * policies. Scripts come from a stack of roots (the built-in lua/ and
 * policies/ directories, then each --policy-dir); a file at the same
 * relative path in a later root replaces the earlier one.
 *
 * Each state loads only base, table, string, math and utf8; every script
 * runs with its own _ENV whose reads of unknown globals are errors; a
 * counting allocator caps the state's memory and a count hook caps the
 * instructions of one call. Every call from C goes through luahost_call,
 * which returns the error with a traceback instead of raising it, or
 * luahost_resume for a coroutine that may wait. A state's extra space
 * (lua_getextraspace) is NULL in the main thread; whoever makes a
 * coroutine may put a pointer of its own there.
 */
#ifndef VOLRAY_LUAHOST_H
#define VOLRAY_LUAHOST_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>

typedef struct luahost luahost;

struct luahost_limits {
	size_t memory;          /* bytes per state */
	uint64_t instructions;  /* per call */
};

/* roots: directories in override order (later wins). */
luahost *luahost_new(const char *const *roots, int nroots,
    const struct luahost_limits *);
void luahost_free(luahost *);

/* Relative paths of every file under prefix ("controllers/") ending in
 * suffix (".lua"), sorted; the array and strings are malloc'd. */
char **luahost_files(luahost *, const char *prefix, const char *suffix,
    int *n);
/* Absolute path of a relative path after overrides, or NULL. */
const char *luahost_path(luahost *, const char *rel);
/* Re-scan the roots (before a reload). */
void luahost_rescan(luahost *);

/* A new sandboxed state; the API module is installed by open_api. */
lua_State *luahost_state_new(luahost *, void (*open_api)(lua_State *, void *),
    void *api_arg);
void luahost_state_close(lua_State *);
/*
 * Load and run the script at relative path rel in its own environment;
 * leaves its single return value on the stack. -1 with *cause
 * ("file:line: message") on error, nothing pushed.
 */
int luahost_dofile(lua_State *, const char *rel, char **cause);
/*
 * Call the function below nargs arguments with the time budget; like
 * lua_pcall but returns -1 with *cause (malloc'd, with a traceback).
 */
int luahost_call(lua_State *, int nargs, int nresults, char **cause);
/*
 * Start or go on with co, a coroutine (lua_newthread) of a host state,
 * under the instruction budget: *ticks carries what co has spent across
 * its resumes (0 before the first), so one budget covers a whole run
 * however often it waits. At the start the function to run and its nargs
 * arguments are on co's stack. LUA_YIELD: co is suspended; 0: it
 * returned, *nres values on its stack; -1 with *cause (malloc'd, with a
 * traceback): it failed and is dead.
 */
int luahost_resume(lua_State *co, int nargs, int *nres, uint64_t *ticks,
    char **cause);
/* Bytes in use and the limit, for metrics and tests. */
size_t luahost_memory(lua_State *);
/* The host of a state. */
luahost *luahost_of(lua_State *);

#endif
