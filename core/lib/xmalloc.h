/*
 * Allocation that cannot fail (tmux's xmalloc.c): out of memory is a
 * broken invariant for volrayd, so these exit with a message instead of
 * returning NULL, and callers need no check of their own. Sizes are
 * checked for overflow. xgrow is the one growable-array idiom: it makes
 * room for need elements, doubling the capacity (from 16).
 *
 * This is the one way out when memory runs out: cJSON allocates through
 * xmalloc too (cJSON_InitHooks, before main in every program linked with
 * this file), so a cJSON call never returns NULL for want of memory, and
 * a library that reports its own allocation failed ends here (xoom).
 */
#ifndef VOLRAY_XMALLOC_H
#define VOLRAY_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

void *xmalloc(size_t);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *, size_t);
void *xreallocarray(void *, size_t n, size_t size);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
/* printf into a new string (vasprintf). */
char *xvasprintf(const char *fmt, va_list)
    __attribute__((format(printf, 1, 0)));
/* A stream that writes into a new string (open_memstream). */
FILE *xopen_memstream(char **s, size_t *len);
/* A library's own allocation failed (what names it): end as the rest do. */
void xoom(const char *what) __attribute__((noreturn));
/*
 * The array p of *cap elements of size, grown if need exceeds *cap to
 * the next doubling (at least 16) that holds need; *cap is updated. The
 * elements past the old capacity are not initialised.
 */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
/* p = xgrow(p, &cap, need, sizeof *p), for p an array and cap a size_t. */
#define XGROW(p, cap, need) ((p) = xgrow((p), &(cap), (need), sizeof *(p)))

#endif
