/*
 * The allocator of every Lua state: bytes counted against the state's cap
 * (growth past it fails, which Lua turns into a "not enough memory" error
 * in the script that asked), and blocks of up to 256 bytes -- most of what
 * Lua allocates: strings, tables, closures -- taken from the state's own
 * free lists instead of malloc.
 */
#ifndef VOLRAY_LUAALLOC_H
#define VOLRAY_LUAALLOC_H

#include <stddef.h>

struct luaalloc;

struct luaalloc *luaalloc_new(size_t limit);
/* After lua_close: every chunk goes back to malloc. */
void luaalloc_free(struct luaalloc *);
/* A lua_Alloc; ud is the struct luaalloc. */
void *luaalloc_fn(void *ud, void *ptr, size_t osize, size_t nsize);
size_t luaalloc_used(const struct luaalloc *);

#endif
