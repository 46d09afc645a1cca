/*
 * Allocation that cannot fail (xmalloc.h). Each allocator is the C
 * library's of the same name, with a fatal() where it would return NULL.
 * cJSON is given xmalloc and free before main (a constructor, so that no
 * program, test or fuzz target linked with this file can forget it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/xmalloc.h"

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		fatal("out of memory (malloc of %zu bytes)", size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		fatal("out of memory (calloc of %zu x %zu bytes)", n, size);
	return p;
}

void *
xrealloc(void *old, size_t size)
{
	void *p = realloc(old, size ? size : 1);

	if (p == NULL)
		fatal("out of memory (realloc to %zu bytes)", size);
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		fatal("xreallocarray: %zu x %zu bytes overflow", n, size);
	return xrealloc(old, n * size);
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatal("out of memory (strdup)");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		fatal("out of memory (strndup)");
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		fatal("out of memory (vasprintf)");
	return s;
}

FILE *
xopen_memstream(char **s, size_t *len)
{
	FILE *f = open_memstream(s, len);

	if (f == NULL)
		fatal("out of memory (open_memstream)");
	return f;
}

void
xoom(const char *what)
{
	fatal("out of memory (%s)", what);
}

/* cJSON's allocations go through xmalloc (its frees stay free). */
static void __attribute__((constructor))
cjson_hooks(void)
{
	cJSON_Hooks hooks = { .malloc_fn = xmalloc, .free_fn = free };

	cJSON_InitHooks(&hooks);
}

void *
xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			fatal("xgrow: %zu elements overflow", need);
		n *= 2;
	}
	p = xreallocarray(p, n, size);
	*cap = n;
	return p;
}
