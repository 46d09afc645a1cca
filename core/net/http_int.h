/*
 * Internals of the HTTP server, shared by its files and by nothing outside
 * core/net/: a connection (struct conn), a write request (struct wreq) and
 * the server (struct http_server), which http.h keeps opaque. Each file
 * calls only those below it in this list:
 *   http.c          the server: listen, accept, read, run the parser and
 *                   dispatch, and what the connection's timer means
 *   http_stream.c   streamed responses (chunks, batches of them)
 *   http_respond.c  responses, and the end of a request
 *   http_parse.c    http-parser's callbacks: a request into the buffers
 *   http_req.c      what a handler reads from and sets on its request
 *   http_query.c    query parameters and percent-decoding
 *   http_conn.c     a connection's lifetime and its write path (plain or
 *                   TLS), its timer and its reads
 * http_conn.c arms the timer and starts reads with the callbacks http.c
 * keeps in the server (on_timer, on_read), so nothing calls back up.
 */
#ifndef VOLRAY_HTTP_INT_H
#define VOLRAY_HTTP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <http_parser.h>
#include <uv.h>

#include "lib/log.h"
#include "lib/rbuf.h"
#include "lib/xmalloc.h"
#include "net/http.h"
#include "net/tls.h"

#define READ_SIZE	(64 * 1024)
#define WREQ_SIZE	4096

enum tmode {
	T_FIRST,	/* nothing received yet: close silently */
	T_REQUEST,	/* request incomplete: 408 */
	T_IDLE,		/* keep-alive idle: close silently */
	T_DRAIN,	/* parse buffered pipelined input */
	T_LINGER,	/* closing: stop waiting */
	T_FAIL		/* a write failed: close */
};

enum hstate { H_NONE, H_FIELD, H_VALUE };

struct hdr {
	unsigned	 name;
	unsigned	 value;
};

struct conn;

struct wreq {
	uv_write_t	 req;
	struct conn	*c;
	rbuf		*rb;
	size_t		 len;
	struct wreq	*next;
	int		 nrbs;		/* rbufs held at the start of head */
	/* Aligned for the rbuf pointers http_stream_write_many keeps there. */
	_Alignas(void *) char head[];
};

#define WREQ_HEAD (WREQ_SIZE - offsetof(struct wreq, head))

struct conn {
	http_req	 req;		/* first: the handler's view */

	uv_tcp_t	 tcp;
	uv_timer_t	 timer;
	tls_conn	*tls;		/* NULL for plain HTTP */
	uv_shutdown_t	 shut;
	http_parser	 parser;
	http_server	*srv;
	struct conn	*prev;
	struct conn	*next;
	int		 refs;
	enum tmode	 tmode;

	unsigned	 reading:1;
	unsigned	 running:1;	/* inside parse loop */
	unsigned	 busy:1;	/* request dispatched, not answered */
	unsigned	 complete:1;	/* parser finished a message */
	unsigned	 in_message:1;	/* parser inside a message */
	unsigned	 streaming:1;
	unsigned	 chunked:1;
	unsigned	 head_only:1;
	unsigned	 close_after:1;
	unsigned	 http10:1;
	unsigned	 shutting:1;	/* last response out; discard input */
	unsigned	 closing:1;	/* handles closed or closing */
	unsigned	 failed:1;
	unsigned	 peer_eof:1;	/* peer done sending: flush, close */
	unsigned	 tls_seen:1;	/* the first TLS bytes have arrived */
	unsigned	 tunnel:1;	/* upgraded: raw bytes to tunnel_cb */
	unsigned	 tunnel_paused:1;

	http_close_cb	 close_cb;
	void		*close_arg;
	http_tunnel_cb	 tunnel_cb;	/* an upgraded connection's input */
	void		*tunnel_arg;
	const char	*upgrade;	/* the protocol a 101 switches to */
	http_close_cb	 done_cb;	/* the request is finished */
	void		*done_arg;
	char		 xhdr[1024];	/* extra response headers, CRLF-ended
					   (Retry-After, Warning) */
	size_t		 xhdrlen;
	size_t		 pending;
	int		 err_status;

	char		*in;		/* unparsed input */
	size_t		 inoff;
	size_t		 inlen;
	size_t		 incap;

	char		*url;
	size_t		 urllen;
	size_t		 urlcap;

	char		*hbuf;		/* "name\0value\0" ... */
	size_t		 hlen;
	size_t		 hcap;
	struct hdr	*hdrs;
	size_t		 nhdrs;
	size_t		 hdrcap;
	enum hstate	 hstate;
	size_t		 hsize;		/* header section bytes seen */

	char		*body;
	size_t		 bodylen;
	size_t		 bodycap;
};

struct http_server {
	uv_loop_t	*loop;
	uv_tcp_t	 listener;
	http_handler	 handler;
	void		*arg;
	int		 refs;
	int		 closing;
	int		 nconns;
	struct conn	*conns;
	struct wreq	*free;
	int		 nfree;
	tls_ctx		*tls;		/* NULL for plain HTTP */
	uv_timer_cb	 on_timer;	/* http.c's, armed by http_conn_timer */
	uv_read_cb	 on_read;	/* http.c's, started by
					   http_conn_read_start */
	char		 rbuf[READ_SIZE];
	char		 pbuf[READ_SIZE];	/* decrypted input */
};

#define REQ_CONN(r) \
	((struct conn *)(void *)((char *)(r) - offsetof(struct conn, req)))

/* Grow *buf so it holds at least need bytes, doubling from a small start. */
static inline void
http_buf_grow(char **buf, size_t *cap, size_t need)
{
	size_t n;

	if (need <= *cap)
		return;
	n = *cap != 0 ? *cap : 256;
	while (n < need)
		n *= 2;
	*buf = xrealloc(*buf, n);
	*cap = n;
}

/* http_conn.c: a connection's lifetime, timer, reads and writes. */
/* The request deadline and keep-alive idle time (http_set_timeouts). */
extern unsigned http_conn_request_ms;
extern unsigned http_conn_idle_ms;
/* Drop a reference to the server; the last one frees it. */
void http_conn_server_unref(http_server *);
/* A write request from the server's free list (or a new one). */
struct wreq *http_conn_wreq_get(http_server *);
/* Release a write request's buffers and return it to the free list. */
void http_conn_wreq_put(http_server *, struct wreq *);
/* Drop a reference to the connection; the last one frees it. */
void http_conn_unref(struct conn *);
/* Arm the connection's timer in mode unless it is going away. */
void http_conn_timer(struct conn *, enum tmode, uint64_t ms);
/* Close the handles; an outstanding request's owner hears of it. */
void http_conn_close(struct conn *);
/* Queue bufs to the socket as they are (-1: w recycled, closing). */
int http_conn_send(struct conn *, struct wreq *, const uv_buf_t *,
    unsigned n);
/* Send whatever ciphertext the TLS session has produced. */
int http_conn_flush_tls(struct conn *);
/* Queue bufs for the peer, encrypted on a TLS connection. */
int http_conn_write(struct conn *, struct wreq *, const uv_buf_t *,
    unsigned n);
/* Start reading unless reading already or closing. */
void http_conn_read_start(struct conn *);
/* The last response is queued: shut down writing, linger, close. */
void http_conn_shutdown(struct conn *);

/* http_parse.c: the parser's callbacks and the request's buffers. */
extern const http_parser_settings http_parse_settings;
/* Reset the request buffers between requests, freeing large ones. */
void http_parse_reset(struct conn *);

/* http_query.c: percent-decode len bytes of src into dst (may be src). */
size_t http_query_decode(char *dst, const char *src, size_t len, int plus);

/* http_respond.c */
/*
 * Format the status line and headers into buf: clen is the body length,
 * -1 for a chunked body, less for none.
 */
size_t http_respond_head(struct conn *, char *buf, size_t size, int status,
    const char *ctype, long long clen);
/* The request is answered: go on with the next one, or shut down. */
void http_respond_done(struct conn *);
/* Answer a request that could not be parsed, then close. */
void http_respond_error(struct conn *, int status);

#endif
