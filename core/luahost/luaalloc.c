/*
 * Lua states' allocator (see luaalloc.h). Lua tells the allocator the old
 * size of every block it frees or resizes, so a small block needs no
 * header: its size class is (size + 15) / 16. Free blocks of a class are
 * kept on a list threaded through themselves; new ones are cut from 64 KiB
 * chunks, which go back to malloc only when the state is closed (the
 * lists hold what a state's peak needed). A state is used by one thread
 * at a time, so nothing here locks. glibc's malloc and free of the same
 * blocks were 9% of a 50,000-task scheduling session's thread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "luahost/luaalloc.h"

/* Under AddressSanitizer every block is malloc's, so that it still sees
   each use after free (a pool would hide them). */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_OFF 1
#endif
#endif
#ifndef POOL_OFF
#define POOL_OFF 0
#endif

#define STEP	16
#define SMALL	256			/* larger blocks: malloc */
#define NCLASS	(SMALL / STEP + 1)
#define CHUNK	(64 * 1024)

struct chunk {
	struct chunk *next;
	_Alignas(16) char data[];
};

struct luaalloc {
	size_t used, limit;
	void *free[NCLASS];		/* by class: a list of free blocks */
	struct chunk *chunks;
	char *cur;			/* the newest chunk's uncut part */
	size_t left;
};

struct luaalloc *
luaalloc_new(size_t limit)
{
	struct luaalloc *a = xcalloc(1, sizeof *a);

	a->limit = limit;
	return a;
}

void
luaalloc_free(struct luaalloc *a)
{
	struct chunk *c, *next;

	if (a == NULL)
		return;
	for (c = a->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

size_t
luaalloc_used(const struct luaalloc *a)
{
	return a->used;
}

static inline size_t
class_of(size_t n)
{
	return (n + STEP - 1) / STEP;
}

static void *
small_get(struct luaalloc *a, size_t n)
{
	size_t k = class_of(n), size = k * STEP;
	void *b = a->free[k];
	struct chunk *c;

	if (b != NULL) {
		memcpy(&a->free[k], b, sizeof(void *));
		return b;
	}
	if (a->left < size) {
		if ((c = malloc(sizeof *c + CHUNK)) == NULL)
			return NULL;
		c->next = a->chunks;
		a->chunks = c;
		a->cur = c->data;
		a->left = CHUNK;
	}
	b = a->cur;
	a->cur += size;
	a->left -= size;
	return b;
}

static void
small_put(struct luaalloc *a, void *b, size_t n)
{
	size_t k = class_of(n);

	memcpy(b, &a->free[k], sizeof(void *));
	a->free[k] = b;
}

static void
release(struct luaalloc *a, void *b, size_t n)
{
	if (n <= SMALL)
		small_put(a, b, n);
	else
		free(b);
}

void *
luaalloc_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct luaalloc *a = ud;
	void *nb;

	if (ptr == NULL)
		osize = 0;	/* Lua passes the new object's type there */
	if (nsize == 0) {
		if (POOL_OFF)
			free(ptr);
		else if (ptr != NULL)
			release(a, ptr, osize);
		a->used -= osize;
		return NULL;
	}
	if (nsize > osize && a->used + (nsize - osize) > a->limit)
		return NULL;
	if (POOL_OFF) {
		if ((nb = realloc(ptr, nsize)) == NULL)
			return NULL;
	} else if (ptr != NULL && osize <= SMALL && nsize <= SMALL &&
	    class_of(osize) == class_of(nsize))
		nb = ptr;			/* the same block fits */
	else if (nsize <= SMALL) {
		if ((nb = small_get(a, nsize)) == NULL)
			return NULL;
		if (ptr != NULL) {
			memcpy(nb, ptr, osize < nsize ? osize : nsize);
			release(a, ptr, osize);
		}
	} else if (ptr == NULL || osize > SMALL) {
		if ((nb = realloc(ptr, nsize)) == NULL)
			return NULL;
	} else {
		if ((nb = malloc(nsize)) == NULL)
			return NULL;
		memcpy(nb, ptr, osize);
		small_put(a, ptr, osize);
	}
	a->used += nsize - osize;
	return nb;
}
