/*
 * Growing byte buffers for the client, volray(1): URL paths and reply
 * bodies. Other allocation is lib/xmalloc.h's, which gives up on the whole
 * command when memory runs out (a short-lived client has nothing to save).
 */
#ifndef VOLRAY_CLI_BUF_H
#define VOLRAY_CLI_BUF_H

#include <stddef.h>

/* Bytes kept NUL-terminated once anything was added; { 0 } is empty. */
struct cli_buf {
	char	*p;
	size_t	 len, cap;
};

void cli_buf_add(struct cli_buf *, const char *p, size_t len);
void cli_buf_printf(struct cli_buf *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Free the bytes and leave the buffer empty, ready for reuse. */
void cli_buf_free(struct cli_buf *);

#endif
