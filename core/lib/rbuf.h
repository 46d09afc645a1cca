/*
 * Reference-counted immutable byte buffers. A stored object's JSON and a
 * watch event's encoded line are rbufs, so one buffer can be queued to
 * thousands of connections without a copy. Single-threaded (loop thread)
 * except where a caller hands a reference to a worker and back.
 */
#ifndef VOLRAY_RBUF_H
#define VOLRAY_RBUF_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"

typedef struct rbuf {
	int refs;
	size_t len;
	char data[]; /* NUL-terminated for convenience; len excludes the NUL */
} rbuf;

static inline rbuf *
rbuf_new(const void *data, size_t len)
{
	rbuf *b = xmalloc(sizeof *b + len + 1);

	b->refs = 1;
	b->len = len;
	if (data != NULL)
		memcpy(b->data, data, len);
	b->data[len] = '\0';
	return b;
}

/* Takes ownership of a malloc'd NUL-terminated string (copies it once). */
static inline rbuf *
rbuf_from_str(char *s)
{
	rbuf *b = rbuf_new(s, strlen(s));

	free(s);
	return b;
}

static inline rbuf *
rbuf_ref(rbuf *b)
{
	if (b != NULL)
		b->refs++;
	return b;
}

static inline void
rbuf_unref(rbuf *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

#endif
