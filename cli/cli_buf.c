/*
 * Growing byte buffers for the client. Memory comes from lib/xmalloc.h,
 * which gives up on the whole command rather than return NULL: volray(1)
 * runs one command and has nothing to save. A cli_buf grows to twice what
 * it needs whenever it is too small and keeps a NUL after its bytes, so its
 * contents can be used as a string at any time.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_buf.h"
#include "lib/xmalloc.h"

/* Append len bytes, doubling the room when they do not fit. */
void
cli_buf_add(struct cli_buf *b, const char *p, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void
cli_buf_printf(struct cli_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	cli_buf_add(b, s, strlen(s));
	free(s);
}

void
cli_buf_free(struct cli_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}
