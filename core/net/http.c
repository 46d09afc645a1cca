/*
 * HTTP/1.1 server: libuv does the sockets, http-parser does all parsing.
 *
 * Each connection owns one parser, one timer and one set of request buffers
 * (URL, headers, body) that are reused from request to request, so a
 * keep-alive client costs no allocation per request in the steady state.
 * The parser is paused in on_message_complete: exactly one request is
 * outstanding per connection, and while it is, bytes that arrive are only
 * appended to a small input buffer (reading stops when it holds 64 KiB).
 * When the request is answered, parsing resumes over that buffer, so
 * pipelined requests are dispatched one at a time and answered in order.
 * Reading continues while a request is outstanding so that a peer hanging
 * up during a long stream is noticed at once.
 *
 * Ownership: a connection is reference-counted, one reference for each of
 * its two libuv handles and one while a request is outstanding. The handles
 * are closed when the peer goes away, but the memory lives on until the
 * owner of the request answers it (which then only frees). The server is
 * counted the same way: one reference for the listener and one for each
 * connection, so connections never outlive the server they point to.
 *
 * Writes go straight from the caller's rbuf to uv_write, holding a
 * reference until the write callback; the status line and headers (and
 * small copied bodies) live in a write request taken from a free list.
 *
 * With TLS (tls.c) the socket carries ciphertext: what arrives is fed to
 * the connection's session and the plaintext it yields takes the same path
 * as a plain connection's input; every write is encrypted first (small
 * buffers gathered into one record) and the ciphertext is what uv_write
 * sends. A plain HTTP request to a TLS listener gets Go's 400 answer.
 *
 * A connection that must close after its response (client asked, HTTP/1.0,
 * errors) is shut down for writing once the response is flushed and then
 * read and discarded for a short while before closing, so a peer still
 * sending a large body sees the response rather than a reset.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <http_parser.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"
#include "net/http.h"
#include "net/tls.h"

#define MAX_HEADER	(64 * 1024)
#define MAX_BODY	(3 * 1024 * 1024)
#define MAX_HELD	(64 * 1024)	/* buffered while a request is out */
#define READ_SIZE	(64 * 1024)
#define LINGER_MS	2000
#define BACKLOG		1024
#define MAX_FREE_WREQS	256
#define MAX_CTYPE	256
#define KEEP_BUFFER	(64 * 1024)	/* larger ones freed between requests */

#define WREQ_SIZE	4096

static unsigned request_ms = 30000;
static unsigned idle_ms = 300000;
static int max_connections = 8192;

static const char too_large[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Failure\",\"message\":\"the request body is too large\","
    "\"reason\":\"RequestEntityTooLarge\",\"code\":413}";

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

	http_close_cb	 close_cb;
	void		*close_arg;
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
	char		 rbuf[READ_SIZE];
	char		 pbuf[READ_SIZE];	/* decrypted input */
};

static int on_message_begin(http_parser *);
static int on_url(http_parser *, const char *, size_t);
static int on_header_field(http_parser *, const char *, size_t);
static int on_header_value(http_parser *, const char *, size_t);
static int on_headers_complete(http_parser *);
static int on_body(http_parser *, const char *, size_t);
static int on_message_complete(http_parser *);

static const http_parser_settings settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

static void conn_close(struct conn *);
static void conn_error(struct conn *, int);
static void conn_drain(struct conn *);

#define REQ_CONN(r) \
	((struct conn *)(void *)((char *)(r) - offsetof(struct conn, req)))

void
http_set_timeouts(unsigned req, unsigned idle)
{
	request_ms = req;
	idle_ms = idle;
}

void
http_set_max_connections(int n)
{
	max_connections = n;
}

static void
xalloc_fail(void)
{
	fatal("http: out of memory");
}

/* Grow *buf so it holds at least need bytes, doubling from a small start. */
static void
grow(char **buf, size_t *cap, size_t need)
{
	size_t n;
	char *p;

	if (need <= *cap)
		return;
	n = *cap != 0 ? *cap : 256;
	while (n < need)
		n *= 2;
	if ((p = realloc(*buf, n)) == NULL)
		xalloc_fail();
	*buf = p;
	*cap = n;
}

static void
set_cause(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (cause == NULL)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if ((s = malloc(n + 1)) == NULL)
		xalloc_fail();
	va_start(ap, fmt);
	vsnprintf(s, n + 1, fmt, ap);
	va_end(ap);
	*cause = s;
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * Decode the next byte of a percent-encoded string at *s (before end),
 * advancing *s; a '%' not followed by two hex digits stands for itself.
 */
static int
decode_next(const char **s, const char *end, int plus)
{
	const char *p = *s;
	int hi, lo;

	if (*p == '%' && end - p >= 3 && (hi = hexval(p[1])) >= 0 &&
	    (lo = hexval(p[2])) >= 0) {
		*s = p + 3;
		return hi << 4 | lo;
	}
	*s = p + 1;
	if (plus && *p == '+')
		return ' ';
	return (unsigned char)*p;
}

/* Percent-decode len bytes of src into dst (may be src); return the length. */
static size_t
decode(char *dst, const char *src, size_t len, int plus)
{
	const char *end = src + len;
	size_t n = 0;

	while (src < end)
		dst[n++] = decode_next(&src, end, plus);
	return n;
}

/* Whether the encoded query component s (len bytes) decodes to key. */
static int
decoded_equal(const char *s, size_t len, const char *key)
{
	const char *end = s + len;
	const unsigned char *k = (const unsigned char *)key;

	while (s < end) {
		if (*k == '\0' || decode_next(&s, end, 1) != *k)
			return 0;
		k++;
	}
	return *k == '\0';
}

char *
http_query_get(const char *query, const char *key)
{
	const char *p, *amp, *eq, *end;
	char *v;
	size_t n;

	if (query == NULL || key == NULL)
		return NULL;
	for (p = query; *p != '\0'; p = *amp != '\0' ? amp + 1 : amp) {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', amp - p);
		end = eq != NULL ? eq : amp;
		if (end == p && *key != '\0')
			continue;
		if (!decoded_equal(p, end - p, key))
			continue;
		if (eq == NULL)
			n = 0;
		else
			n = amp - (eq + 1);
		if ((v = malloc(n + 1)) == NULL)
			xalloc_fail();
		n = eq != NULL ? decode(v, eq + 1, n, 1) : 0;
		v[n] = '\0';
		return v;
	}
	return NULL;
}

/*
 * A boolean parameter as kube-apiserver decodes one into its options
 * (runtime.Convert_Slice_string_To_bool): "0" and "false" in any case are
 * false, every other value, the empty one included, is true. It never
 * refuses a value, so neither do we.
 */
int
http_query_bool(const char *query, const char *key, int def)
{
	char *v = http_query_get(query, key);
	int b;

	if (v == NULL)
		return def;
	b = !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
	free(v);
	return b;
}

/*
 * An integer parameter as strconv.ParseInt(v, 10, 64) reads it: an optional
 * sign and decimal digits, nothing else, within int64. The cause is worded
 * as Go's error, which kube-apiserver returns in its 400.
 */
int
http_query_int(const char *query, const char *key, long long *out,
    char **cause)
{
	char *v = http_query_get(query, key);
	const char *p, *why = NULL;
	unsigned long long acc = 0, max = 9223372036854775807ULL;
	int neg = 0;

	if (v == NULL)
		return 0;
	p = v;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (*p == '\0')
		why = "invalid syntax";
	for (; why == NULL && *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			why = "invalid syntax";
		else if (acc > (max + neg - (unsigned)(*p - '0')) / 10)
			why = "value out of range";
		else
			acc = acc * 10 + (unsigned)(*p - '0');
	}
	if (why != NULL) {
		if (cause != NULL && asprintf(cause, "strconv.ParseInt: "
		    "parsing \"%s\": %s", v, why) < 0)
			xalloc_fail();
		free(v);
		return -1;
	}
	*out = neg ? (long long)(0 - acc) : (long long)acc;
	free(v);
	return 1;
}

const char *
http_req_header(const http_req *req, const char *name)
{
	struct conn *c = REQ_CONN(req);
	size_t i;

	for (i = 0; i < c->nhdrs; i++) {
		if (strcasecmp(c->hbuf + c->hdrs[i].name, name) == 0)
			return c->hbuf + c->hdrs[i].value;
	}
	return NULL;
}

int
http_req_closed(const http_req *req)
{
	return REQ_CONN(req)->closing;
}

int
http_req_client_cert(const http_req *req, const char **cn,
    const char *const **orgs, int *norgs)
{
	struct conn *c = REQ_CONN(req);

	return c->tls != NULL ? tls_conn_peer(c->tls, cn, orgs, norgs) : -1;
}

void
http_server_use_tls(http_server *srv, tls_ctx *tls)
{
	srv->tls = tls;
}

static void
srv_unref(http_server *srv)
{
	struct wreq *w;

	if (--srv->refs > 0)
		return;
	while ((w = srv->free) != NULL) {
		srv->free = w->next;
		free(w);
	}
	free(srv);
}

static struct wreq *
wreq_get(http_server *srv)
{
	struct wreq *w;

	if ((w = srv->free) != NULL) {
		srv->free = w->next;
		srv->nfree--;
	} else if ((w = malloc(WREQ_SIZE)) == NULL)
		xalloc_fail();
	w->rb = NULL;
	w->len = 0;
	w->nrbs = 0;
	return w;
}

static void
wreq_put(http_server *srv, struct wreq *w)
{
	rbuf_unref(w->rb);
	w->rb = NULL;
	while (w->nrbs > 0)
		rbuf_unref(((rbuf **)(void *)w->head)[--w->nrbs]);
	if (srv->nfree >= MAX_FREE_WREQS) {
		free(w);
		return;
	}
	w->next = srv->free;
	srv->free = w;
	srv->nfree++;
}

/* Free a connection's memory once nothing refers to it any more. */
static void
conn_unref(struct conn *c)
{
	http_server *srv = c->srv;

	if (--c->refs > 0)
		return;
	free(c->in);
	free(c->url);
	free(c->hbuf);
	free(c->hdrs);
	free(c->body);
	tls_conn_free(c->tls);
	free(c);
	srv_unref(srv);
}

static void
on_handle_close(uv_handle_t *h)
{
	conn_unref(h->data);
}

static void on_timer(uv_timer_t *);

/* Arm the connection's timer unless it is going away. */
static void
timer_set(struct conn *c, enum tmode mode, uint64_t ms)
{
	if (c->closing || (c->failed && mode != T_FAIL))
		return;
	c->tmode = mode;
	uv_timer_start(&c->timer, on_timer, ms, 0);
}

/* The connection's one timer ran out: what that means depends on tmode. */
static void
on_timer(uv_timer_t *t)
{
	struct conn *c = t->data;

	switch (c->tmode) {
	case T_DRAIN:
		conn_drain(c);
		break;
	case T_REQUEST:
		if (!c->busy && c->in_message && !c->shutting) {
			log_debug("http: request not complete in time");
			conn_error(c, 408);
		} else if (!c->busy)
			conn_close(c);
		break;
	case T_FIRST:
	case T_IDLE:
	case T_LINGER:
	case T_FAIL:
		conn_close(c);
		break;
	}
}

/*
 * Close the connection's handles. A request still outstanding keeps the
 * memory alive; its owner hears about it through the on_close callback.
 */
static void
conn_close(struct conn *c)
{
	http_server *srv = c->srv;
	http_close_cb cb;

	if (c->closing)
		return;
	c->closing = 1;
	srv->nconns--;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;

	uv_close((uv_handle_t *)&c->tcp, on_handle_close);
	uv_close((uv_handle_t *)&c->timer, on_handle_close);

	if (c->busy && (cb = c->close_cb) != NULL) {
		c->close_cb = NULL;
		cb(&c->req, c->close_arg);
	}
}

/* Close later from the timer: the caller may be in the middle of a write. */
static void
conn_fail(struct conn *c)
{
	if (c->closing || c->failed)
		return;
	timer_set(c, T_FAIL, 0);
	c->failed = 1;
}

/* A write finished: release its buffers; a failure ends the connection. */
static void
on_write(uv_write_t *req, int status)
{
	struct wreq *w = req->data;
	struct conn *c = w->c;

	c->pending -= w->len;
	wreq_put(c->srv, w);
	if (status < 0 && status != UV_ECANCELED && !c->closing) {
		log_debug("http: write: %s", uv_strerror(status));
		conn_close(c);
	}
}

/*
 * Queue a write of bufs to the socket as they are, counted as pending until
 * it completes. On failure w is recycled, the connection is closed shortly
 * after, and -1 returned.
 */
static int
conn_send(struct conn *c, struct wreq *w, const uv_buf_t *bufs, unsigned n)
{
	size_t total = 0;
	unsigned i;
	int r;

	for (i = 0; i < n; i++)
		total += bufs[i].len;
	w->c = c;
	w->len = total;
	w->req.data = w;
	c->pending += total;
	r = uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, n, on_write);
	if (r != 0) {
		log_debug("http: write: %s", uv_strerror(r));
		c->pending -= total;
		wreq_put(c->srv, w);
		conn_fail(c);
		return -1;
	}
	return 0;
}

/* Send whatever ciphertext the TLS session has produced. */
static int
conn_flush_tls(struct conn *c)
{
	struct wreq *w;
	uv_buf_t buf;
	rbuf *b;

	if ((b = tls_conn_take(c->tls)) == NULL)
		return 0;
	w = wreq_get(c->srv);
	w->rb = b;
	buf = uv_buf_init(b->data, b->len);
	return conn_send(c, w, &buf, 1);
}

/*
 * Encrypt bufs and send the ciphertext. Buffers smaller than a record are
 * gathered first, so a response head and a small body, or a batch of
 * watch events, cost one record rather than one each.
 */
static int
conn_write_tls(struct conn *c, struct wreq *w, const uv_buf_t *bufs,
    unsigned n)
{
	char stage[16384];
	size_t used = 0;
	unsigned i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		if (bufs[i].len > sizeof stage - used && used > 0) {
			r = tls_conn_write(c->tls, stage, used);
			used = 0;
		}
		if (r != 0)
			break;
		if (bufs[i].len >= sizeof stage)
			r = tls_conn_write(c->tls, bufs[i].base, bufs[i].len);
		else {
			memcpy(stage + used, bufs[i].base, bufs[i].len);
			used += bufs[i].len;
		}
	}
	if (r == 0 && used > 0)
		r = tls_conn_write(c->tls, stage, used);
	wreq_put(c->srv, w);	/* the plaintext is copied: release it */
	if (r != 0) {
		log_debug("http: tls write: %s", tls_conn_error(c->tls));
		conn_fail(c);
		return -1;
	}
	return conn_flush_tls(c);
}

/* Queue bufs for the peer (encrypted on a TLS connection). */
static int
conn_write(struct conn *c, struct wreq *w, const uv_buf_t *bufs,
    unsigned n)
{
	if (c->tls != NULL)
		return conn_write_tls(c, w, bufs, n);
	return conn_send(c, w, bufs, n);
}

static void
on_shutdown(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;

	if (c->closing)
		return;
	if (status < 0 || c->peer_eof) {
		conn_close(c);
		return;
	}
	timer_set(c, T_LINGER, LINGER_MS);
}

static void on_read(uv_stream_t *, ssize_t, const uv_buf_t *);
static void on_alloc(uv_handle_t *, size_t, uv_buf_t *);

static void
read_start(struct conn *c)
{
	if (c->reading || c->closing)
		return;
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
		c->reading = 1;
	else
		conn_fail(c);
}

/*
 * The last response is queued: shut down the write side once it is
 * flushed, then discard input until the peer closes or LINGER_MS pass.
 */
static void
conn_shutdown(struct conn *c)
{
	int r;

	if (c->shutting || c->closing)
		return;
	c->shutting = 1;
	if (c->tls != NULL) {
		tls_conn_shutdown(c->tls);
		conn_flush_tls(c);
	}
	c->shut.data = c;
	r = uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, on_shutdown);
	if (r != 0) {
		conn_close(c);
		return;
	}
	if (!c->peer_eof)
		read_start(c);
	timer_set(c, T_LINGER, request_ms);
}

static const char *
reason(int status)
{
	const char *s = http_status_str((enum http_status)status);

	if (s == NULL || *s == '<')
		return "Unknown";
	return s;
}

/*
 * Format the status line and headers into buf. clen is the body length, -1
 * for a chunked body, or less for no length at all (a body ended by close,
 * or a status that has none). The content type is capped so it always fits.
 */
static size_t
format_head(struct conn *c, char *buf, size_t size, int status,
    const char *ctype, long long clen)
{
	size_t n;

	n = snprintf(buf, size, "HTTP/1.1 %d %s\r\n", status, reason(status));
	if (ctype != NULL && strlen(ctype) <= MAX_CTYPE)
		n += snprintf(buf + n, size - n, "Content-Type: %s\r\n", ctype);
	if (clen >= 0)
		n += snprintf(buf + n, size - n, "Content-Length: %lld\r\n",
		    clen);
	else if (clen == -1)
		n += snprintf(buf + n, size - n,
		    "Transfer-Encoding: chunked\r\n");
	if (c->xhdrlen > 0 && c->xhdrlen < size - n) {
		memcpy(buf + n, c->xhdr, c->xhdrlen);
		n += c->xhdrlen;
	}
	if (c->close_after)
		n += snprintf(buf + n, size - n, "Connection: close\r\n");
	else if (c->http10)
		n += snprintf(buf + n, size - n, "Connection: keep-alive\r\n");
	memcpy(buf + n, "\r\n", 2);
	return n + 2;
}

/* Whether a response with this status carries no body at all. */
static int
bodyless(int status)
{
	return (status >= 100 && status < 200) || status == 204 ||
	    status == 304;
}

/*
 * Queue a complete response: headers and either a copied body (data) or a
 * shared one (rb). Returns -1 if the write could not be queued.
 */
static int
send_response(struct conn *c, int status, const char *ctype,
    const char *data, size_t len, rbuf *rb)
{
	struct wreq *w;
	uv_buf_t bufs[2];
	size_t n;
	int nobody = bodyless(status);

	if (rb != NULL) {
		data = rb->data;
		len = rb->len;
	}
	w = wreq_get(c->srv);
	n = format_head(c, w->head, WREQ_HEAD - 1, status,
	    nobody ? NULL : ctype, nobody ? -2 : (long long)len);
	if (nobody || c->head_only || len == 0)
		len = 0;
	else if (rb == NULL && len <= WREQ_HEAD - n) {
		memcpy(w->head + n, data, len);
		n += len;
		len = 0;
	} else if (rb == NULL) {
		rb = rbuf_new(data, len);
		w->rb = rb;
	} else
		w->rb = rbuf_ref(rb);
	bufs[0] = uv_buf_init(w->head, n);
	if (len != 0)
		bufs[1] = uv_buf_init(rb->data, len);
	return conn_write(c, w, bufs, len != 0 ? 2 : 1);
}

/* Answer a request that could not be parsed, then close. */
static void
conn_error(struct conn *c, int status)
{
	const char *body = status == 413 ? too_large : reason(status);
	const char *ctype = status == 413 ? "application/json" :
	    "text/plain; charset=utf-8";

	if (c->shutting || c->closing)
		return;
	c->close_after = 1;
	c->head_only = 0;
	c->in_message = 0;
	if (send_response(c, status, ctype, body, strlen(body), NULL) == 0)
		conn_shutdown(c);
}

/* Reset buffers between requests, freeing any that grew large. */
static void
conn_reset(struct conn *c)
{
	if (c->bodycap > KEEP_BUFFER) {
		free(c->body);
		c->body = NULL;
		c->bodycap = 0;
	}
	if (c->hcap > KEEP_BUFFER) {
		free(c->hbuf);
		c->hbuf = NULL;
		c->hcap = 0;
		free(c->hdrs);
		c->hdrs = NULL;
		c->hdrcap = 0;
	}
	if (c->urlcap > KEEP_BUFFER) {
		free(c->url);
		c->url = NULL;
		c->urlcap = 0;
	}
	c->nhdrs = 0;
	c->hlen = 0;
	c->urllen = 0;
	c->bodylen = 0;
}

/*
 * The outstanding request is answered: release it and go on with the next
 * one, or shut the connection down if this was its last response.
 */
static void
request_done(struct conn *c)
{
	http_close_cb done = c->done_cb;

	c->busy = 0;
	c->streaming = 0;
	c->close_cb = NULL;
	c->close_arg = NULL;
	c->done_cb = NULL;
	c->xhdrlen = 0;
	if (done != NULL)
		done(&c->req, c->done_arg);
	if (!c->closing) {
		conn_reset(c);
		if (c->close_after)
			conn_shutdown(c);
		else {
			read_start(c);
			if (c->inlen > c->inoff && !c->running)
				timer_set(c, T_DRAIN, 0);
			else
				timer_set(c, T_IDLE, idle_ms);
		}
	}
	conn_unref(c);
}

/* Hand a complete request to the handler. */
static void
dispatch(struct conn *c)
{
	http_server *srv = c->srv;
	http_req *req = &c->req;

	c->busy = 1;
	c->refs++;
	c->close_cb = NULL;
	c->done_cb = NULL;
	c->xhdrlen = 0;
	c->head_only = c->parser.method == HTTP_HEAD;
	uv_timer_stop(&c->timer);

	req->method = http_method_str((enum http_method)c->parser.method);
	if (c->bodylen != 0) {
		c->body[c->bodylen] = '\0';
		req->body = c->body;
	} else
		req->body = "";
	req->body_len = c->bodylen;
	req->data = NULL;
	srv->handler(req, srv->arg);
}

/*
 * Run the parser over data, dispatching each complete request, until the
 * data is used up or a request is outstanding. Returns the bytes consumed.
 */
static size_t
conn_parse(struct conn *c, const char *data, size_t len)
{
	size_t off = 0, n;
	enum http_errno e;

	c->running = 1;
	while (off < len && !c->busy && !c->shutting && !c->closing) {
		n = http_parser_execute(&c->parser, &settings, data + off,
		    len - off);
		off += n;
		if (c->complete) {
			c->complete = 0;
			http_parser_pause(&c->parser, 0);
			dispatch(c);
			continue;
		}
		e = HTTP_PARSER_ERRNO(&c->parser);
		if (e != HPE_OK) {
			log_debug("http: parse error: %s",
			    http_errno_description(e));
			if (c->err_status == 0)
				c->err_status = e == HPE_HEADER_OVERFLOW ?
				    431 : 400;
			conn_error(c, c->err_status);
			off = len;
			break;
		}
		if (n == 0) {
			/* Stopped without an error: nothing sane can follow. */
			conn_error(c, 400);
			off = len;
			break;
		}
	}
	c->running = 0;
	return off;
}

/* Keep unparsed bytes for later, stopping reads when too much is held. */
static void
conn_keep(struct conn *c, const char *data, size_t len)
{
	if (c->inoff != 0) {
		memmove(c->in, c->in + c->inoff, c->inlen - c->inoff);
		c->inlen -= c->inoff;
		c->inoff = 0;
	}
	grow(&c->in, &c->incap, c->inlen + len);
	memcpy(c->in + c->inlen, data, len);
	c->inlen += len;
	if (c->busy && c->inlen >= MAX_HELD && c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	}
}

/* Parse input that was held while a request was outstanding. */
static void
conn_drain(struct conn *c)
{
	size_t n;

	if (c->busy || c->shutting || c->closing)
		return;
	n = conn_parse(c, c->in + c->inoff, c->inlen - c->inoff);
	if (c->closing)
		return;
	c->inoff += n;
	if (c->inoff >= c->inlen) {
		c->inoff = c->inlen = 0;
		if (c->incap > 4096) {
			free(c->in);
			c->in = NULL;
			c->incap = 0;
		}
	}
	if (!c->busy && !c->in_message && !c->shutting)
		timer_set(c, T_IDLE, idle_ms);
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = h->data;

	/* Input is parsed or copied before the next read: one buffer does. */
	*buf = uv_buf_init(c->srv->rbuf, sizeof c->srv->rbuf);
}

/*
 * Plaintext input: parse it at once when no request is outstanding
 * (copying only what is left over), otherwise hold it for later.
 */
static void
conn_input(struct conn *c, const char *data, size_t len)
{
	size_t n;

	if (c->busy || c->inlen > c->inoff) {
		conn_keep(c, data, len);
		if (!c->busy)
			conn_drain(c);
		return;
	}
	n = conn_parse(c, data, len);
	if (n < len && !c->shutting && !c->closing)
		conn_keep(c, data + n, len - n);
}

/*
 * The peer stopped sending (clean) or the connection broke. A peer that
 * only stopped sending still gets the responses already queued; one that
 * left with a request outstanding is gone, and the request's owner is told.
 */
static void
conn_peer_done(struct conn *c, int clean)
{
	if (clean && !c->busy && c->pending != 0 && !c->closing &&
	    !c->failed) {
		c->peer_eof = 1;
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
		conn_shutdown(c);
		return;
	}
	conn_close(c);
}

/* Answer plain HTTP on a TLS listener as Go's server does, then close. */
static void
conn_plain_on_tls(struct conn *c)
{
	static const char msg[] = "HTTP/1.0 400 Bad Request\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Connection: close\r\n\r\n"
	    "Client sent an HTTP request to an HTTPS server.\n";
	struct wreq *w = wreq_get(c->srv);
	uv_buf_t buf;

	tls_conn_free(c->tls);
	c->tls = NULL;
	memcpy(w->head, msg, sizeof msg - 1);
	buf = uv_buf_init(w->head, sizeof msg - 1);
	c->close_after = 1;
	if (conn_send(c, w, &buf, 1) == 0)
		conn_shutdown(c);
}

/* Ciphertext arrived: decrypt what it completes and take that as input. */
static void
conn_input_tls(struct conn *c, const char *data, size_t len)
{
	ssize_t n;

	if (!c->tls_seen && data[0] >= 'A' && data[0] <= 'Z') {
		conn_plain_on_tls(c);
		return;
	}
	c->tls_seen = 1;
	if (tls_conn_feed(c->tls, data, len) != 0) {
		conn_close(c);
		return;
	}
	while (!c->closing && !c->shutting) {
		n = tls_conn_read(c->tls, c->srv->pbuf, sizeof c->srv->pbuf);
		if (n == 0)
			break;
		if (n < 0) {
			if (n == -1)
				log_debug("http: tls: %s",
				    tls_conn_error(c->tls));
			conn_flush_tls(c);	/* the alert, if any */
			conn_peer_done(c, n == -2);
			return;
		}
		conn_input(c, c->srv->pbuf, (size_t)n);
	}
	if (!c->closing && c->tls != NULL)
		conn_flush_tls(c);	/* handshake messages */
}

static void
on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct conn *c = s->data;

	if (nread < 0) {
		if (nread != UV_EOF)
			log_debug("http: read: %s", uv_strerror(nread));
		conn_peer_done(c, nread == UV_EOF);
		return;
	}
	if (nread == 0 || c->shutting || c->closing)
		return;
	if (c->tls != NULL)
		conn_input_tls(c, buf->base, (size_t)nread);
	else
		conn_input(c, buf->base, (size_t)nread);
}

static void
free_handle(uv_handle_t *h)
{
	free(h);
}

/* Accept a connection, or accept and drop it when at the limit. */
static void
on_connection(uv_stream_t *ls, int status)
{
	http_server *srv = ls->data;
	struct conn *c;
	uv_tcp_t *t;

	if (status < 0) {
		log_warn("http: accept: %s", uv_strerror(status));
		return;
	}
	if (srv->nconns >= max_connections) {
		if ((t = malloc(sizeof *t)) == NULL)
			xalloc_fail();
		uv_tcp_init(srv->loop, t);
		if (uv_accept(ls, (uv_stream_t *)t) == 0)
			log_debug("http: too many connections");
		uv_close((uv_handle_t *)t, free_handle);
		return;
	}

	if ((c = calloc(1, sizeof *c)) == NULL)
		xalloc_fail();
	c->srv = srv;
	uv_tcp_init(srv->loop, &c->tcp);
	uv_timer_init(srv->loop, &c->timer);
	c->tcp.data = c;
	c->timer.data = c;
	c->refs = 2;
	srv->refs++;
	srv->nconns++;
	c->next = srv->conns;
	if (c->next != NULL)
		c->next->prev = c;
	srv->conns = c;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	if (srv->tls != NULL)
		c->tls = tls_conn_new(srv->tls);

	if (uv_accept(ls, (uv_stream_t *)&c->tcp) != 0) {
		conn_close(c);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	read_start(c);
	timer_set(c, T_FIRST, request_ms);
}

static int
count_header(struct conn *c, size_t len)
{
	c->hsize += len;
	if (c->hsize > MAX_HEADER) {
		c->err_status = 431;
		return -1;
	}
	return 0;
}

static void
hbuf_add(struct conn *c, const char *p, size_t len)
{
	grow(&c->hbuf, &c->hcap, c->hlen + len + 1);
	memcpy(c->hbuf + c->hlen, p, len);
	c->hlen += len;
}

/* Terminate the header being collected, trimming trailing white space. */
static void
header_end(struct conn *c)
{
	struct hdr *h;

	if (c->hstate == H_NONE)
		return;
	h = &c->hdrs[c->nhdrs - 1];
	if (c->hstate == H_FIELD) {
		hbuf_add(c, "", 1);
		h->value = c->hlen;
	}
	while (c->hlen > h->value && (c->hbuf[c->hlen - 1] == ' ' ||
	    c->hbuf[c->hlen - 1] == '\t'))
		c->hlen--;
	hbuf_add(c, "", 1);
	c->hstate = H_NONE;
}

/* The first byte of a request starts its deadline. */
static int
on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	c->in_message = 1;
	c->urllen = 0;
	c->hlen = 0;
	c->nhdrs = 0;
	c->hstate = H_NONE;
	c->hsize = 0;
	c->bodylen = 0;
	c->err_status = 0;
	timer_set(c, T_REQUEST, request_ms);
	return 0;
}

static int
on_url(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (count_header(c, len) != 0)
		return -1;
	grow(&c->url, &c->urlcap, c->urllen + len + 1);
	memcpy(c->url + c->urllen, at, len);
	c->urllen += len;
	return 0;
}

/* Header names and values may arrive in pieces; a new name ends a header. */
static int
on_header_field(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	struct hdr *h;
	size_t n;

	if (count_header(c, len + 4) != 0)
		return -1;
	if (c->hstate != H_FIELD) {
		header_end(c);
		if (c->nhdrs == c->hdrcap) {
			n = c->hdrcap != 0 ? c->hdrcap * 2 : 16;
			if ((h = realloc(c->hdrs, n * sizeof *h)) == NULL)
				xalloc_fail();
			c->hdrs = h;
			c->hdrcap = n;
		}
		c->hdrs[c->nhdrs].name = c->hlen;
		c->hdrs[c->nhdrs].value = c->hlen;
		c->nhdrs++;
		c->hstate = H_FIELD;
	}
	hbuf_add(c, at, len);
	return 0;
}

static int
on_header_value(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (count_header(c, len) != 0)
		return -1;
	if (c->hstate == H_NONE)
		return 0;
	if (c->hstate == H_FIELD) {
		hbuf_add(c, "", 1);
		c->hdrs[c->nhdrs - 1].value = c->hlen;
		c->hstate = H_VALUE;
	}
	hbuf_add(c, at, len);
	return 0;
}

/* Split the URL into a decoded path and a raw query, in place. */
static int
split_url(struct conn *c)
{
	struct http_parser_url u;
	char *path;
	size_t n;

	if (c->urllen == 0 || c->urllen > 65535)
		return -1;
	c->url[c->urllen] = '\0';
	http_parser_url_init(&u);
	if (http_parser_parse_url(c->url, c->urllen,
	    c->parser.method == HTTP_CONNECT, &u) != 0)
		return -1;
	if (u.field_set & (1 << UF_QUERY)) {
		c->req.query = c->url + u.field_data[UF_QUERY].off;
		c->url[u.field_data[UF_QUERY].off +
		    u.field_data[UF_QUERY].len] = '\0';
	} else
		c->req.query = "";
	if (u.field_set & (1 << UF_PATH)) {
		path = c->url + u.field_data[UF_PATH].off;
		n = decode(path, path, u.field_data[UF_PATH].len, 0);
		path[n] = '\0';
		c->req.path = path;
	} else
		c->req.path = "/";
	return 0;
}

/* Headers are in: split the URL and refuse bodies that cannot fit. */
static int
on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;
	const char *expect;
	struct wreq *w;
	uv_buf_t buf;
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	header_end(c);
	if (split_url(c) != 0) {
		c->err_status = 400;
		return -1;
	}
	if ((p->flags & F_CONTENTLENGTH) && p->content_length > MAX_BODY) {
		c->err_status = 413;
		return -1;
	}
	if ((p->flags & F_CONTENTLENGTH) && p->content_length != 0 &&
	    p->content_length >= c->bodycap)
		grow(&c->body, &c->bodycap, p->content_length + 1);

	/* The client waits for a go-ahead before sending a large body. */
	expect = http_req_header(&c->req, "Expect");
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 &&
	    p->http_major == 1 && p->http_minor >= 1 &&
	    ((p->flags & F_CHUNKED) || ((p->flags & F_CONTENTLENGTH) &&
	    p->content_length != 0))) {
		w = wreq_get(c->srv);
		memcpy(w->head, cont, sizeof cont - 1);
		buf = uv_buf_init(w->head, sizeof cont - 1);
		conn_write(c, w, &buf, 1);
	}
	return 0;
}

static int
on_body(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (c->bodylen + len > MAX_BODY) {
		c->err_status = 413;
		return -1;
	}
	grow(&c->body, &c->bodycap, c->bodylen + len + 1);
	memcpy(c->body + c->bodylen, at, len);
	c->bodylen += len;
	return 0;
}

/* Pause the parser: the request is dispatched once execute returns. */
static int
on_message_complete(http_parser *p)
{
	struct conn *c = p->data;

	c->in_message = 0;
	c->complete = 1;
	c->http10 = p->http_major < 1 ||
	    (p->http_major == 1 && p->http_minor == 0);
	c->close_after = !http_should_keep_alive(p) || p->upgrade;
	http_parser_pause(p, 1);
	return 0;
}

/* Resolve host into addr: IP literals, "localhost", else getaddrinfo. */
static int
resolve(uv_loop_t *loop, const char *host, int port,
    struct sockaddr_storage *addr)
{
	char buf[64];
	const char *h = host;
	size_t n;
	uv_getaddrinfo_t gai;
	struct addrinfo hints;
	char service[16];
	int r;

	if (h == NULL || *h == '\0')
		h = "0.0.0.0";
	else if (strcmp(h, "localhost") == 0)
		h = "127.0.0.1";
	n = strlen(h);
	if (h[0] == '[' && n > 2 && h[n - 1] == ']' && n - 2 < sizeof buf) {
		memcpy(buf, h + 1, n - 2);
		buf[n - 2] = '\0';
		h = buf;
	}
	if (uv_ip4_addr(h, port, (struct sockaddr_in *)addr) == 0)
		return 0;
	if (uv_ip6_addr(h, port, (struct sockaddr_in6 *)addr) == 0)
		return 0;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof service, "%d", port);
	r = uv_getaddrinfo(loop, &gai, NULL, host, service, &hints);
	if (r != 0)
		return r;
	memcpy(addr, gai.addrinfo->ai_addr, gai.addrinfo->ai_addrlen);
	uv_freeaddrinfo(gai.addrinfo);
	return 0;
}

static void
on_listener_close(uv_handle_t *h)
{
	srv_unref(h->data);
}

int
http_server_listen(uv_loop_t *loop, const char *host, int port,
    http_handler handler, void *arg, http_server **out, char **cause)
{
	http_server *srv;
	struct sockaddr_storage addr;
	int r;

	memset(&addr, 0, sizeof addr);
	if ((r = resolve(loop, host, port, &addr)) != 0) {
		set_cause(cause, "%s: %s", host != NULL ? host : "",
		    uv_strerror(r));
		return r;
	}
	if ((srv = calloc(1, sizeof *srv)) == NULL)
		xalloc_fail();
	srv->loop = loop;
	srv->handler = handler;
	srv->arg = arg;
	srv->refs = 1;
	uv_tcp_init(loop, &srv->listener);
	srv->listener.data = srv;

	r = uv_tcp_bind(&srv->listener, (struct sockaddr *)&addr, 0);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&srv->listener, BACKLOG,
		    on_connection);
	if (r != 0) {
		set_cause(cause, "listen on %s:%d: %s",
		    host != NULL ? host : "", port, uv_strerror(r));
		srv->closing = 1;
		uv_close((uv_handle_t *)&srv->listener, on_listener_close);
		return r;
	}
	*out = srv;
	return 0;
}

int
http_server_port(const http_server *srv)
{
	struct sockaddr_storage addr;
	int len = sizeof addr;

	if (uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&addr,
	    &len) != 0)
		return -1;
	if (addr.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

void
http_server_close(http_server *srv)
{
	if (srv->closing)
		return;
	srv->closing = 1;
	uv_close((uv_handle_t *)&srv->listener, on_listener_close);
	while (srv->conns != NULL)
		conn_close(srv->conns);
}

int
http_server_connections(const http_server *srv)
{
	return srv->nconns;
}

void
http_respond(http_req *req, int status, const char *content_type,
    const char *body, size_t len)
{
	struct conn *c = REQ_CONN(req);

	if (!c->busy || c->streaming) {
		log_warn("http: response to a request that is not waiting");
		return;
	}
	if (!c->closing && !c->failed)
		send_response(c, status, content_type, body, len, NULL);
	request_done(c);
}

void
http_respond_rbuf(http_req *req, int status, const char *content_type,
    rbuf *body)
{
	struct conn *c = REQ_CONN(req);

	if (!c->busy || c->streaming) {
		log_warn("http: response to a request that is not waiting");
		return;
	}
	if (!c->closing && !c->failed)
		send_response(c, status, content_type, NULL, 0, body);
	request_done(c);
}

void
http_stream_begin(http_req *req, int status, const char *content_type)
{
	struct conn *c = REQ_CONN(req);
	struct wreq *w;
	uv_buf_t buf;
	size_t n;

	if (!c->busy || c->streaming) {
		log_warn("http: stream on a request that is not waiting");
		return;
	}
	c->streaming = 1;
	/* HTTP/1.0 has no chunked encoding: the body ends at close. */
	c->chunked = !c->http10;
	if (c->http10)
		c->close_after = 1;
	if (c->closing || c->failed)
		return;
	w = wreq_get(c->srv);
	n = format_head(c, w->head, WREQ_HEAD, status, content_type,
	    c->chunked ? -1 : -2);
	buf = uv_buf_init(w->head, n);
	conn_write(c, w, &buf, 1);
}

/* Queue one chunk: data from rb if given, else a copy of data. */
static int
stream_chunk(http_req *req, rbuf *rb, const char *data, size_t len)
{
	struct conn *c = REQ_CONN(req);
	struct wreq *w;
	uv_buf_t bufs[3];
	size_t n = 0;
	unsigned nb = 0;

	if (c->closing || c->failed || !c->busy || !c->streaming)
		return -1;
	if (rb != NULL) {
		data = rb->data;
		len = rb->len;
	}
	if (c->head_only || len == 0)
		return 0;
	w = wreq_get(c->srv);
	if (c->chunked)
		n = snprintf(w->head, WREQ_HEAD, "%zx\r\n", len);
	if (rb == NULL && len + n + 2 <= WREQ_HEAD) {
		memcpy(w->head + n, data, len);
		n += len;
		if (c->chunked) {
			memcpy(w->head + n, "\r\n", 2);
			n += 2;
		}
		bufs[nb++] = uv_buf_init(w->head, n);
	} else {
		if (rb == NULL)
			w->rb = rbuf_new(data, len);
		else
			w->rb = rbuf_ref(rb);
		if (n != 0)
			bufs[nb++] = uv_buf_init(w->head, n);
		bufs[nb++] = uv_buf_init(w->rb->data, len);
		if (c->chunked)
			bufs[nb++] = uv_buf_init((char *)"\r\n", 2);
	}
	return conn_write(c, w, bufs, nb);
}

int
http_stream_write(http_req *req, rbuf *chunk)
{
	return stream_chunk(req, chunk, NULL, 0);
}

#define MANY_MAX 64
_Static_assert(MANY_MAX * (sizeof(rbuf *) + 20) < WREQ_SIZE - 512,
    "write_many's references and size lines must fit in a wreq");

/*
 * Several chunks in one write (one writev): the rbuf references and the
 * chunk-size lines live in the write request's head area.
 */
int
http_stream_write_many(http_req *req, rbuf **chunks, int n)
{
	struct conn *c = REQ_CONN(req);
	uv_buf_t bufs[3 * MANY_MAX];
	struct wreq *w;
	rbuf **held;
	char *line;
	unsigned nb;
	int i, k, done = 0;

	if (c->closing || c->failed || !c->busy || !c->streaming ||
	    c->head_only) {
		for (i = 0; i < n; i++)
			rbuf_unref(chunks[i]);
		return c->head_only && !c->closing && !c->failed ? 0 : -1;
	}
	while (done < n) {
		k = n - done < MANY_MAX ? n - done : MANY_MAX;
		w = wreq_get(c->srv);
		held = (rbuf **)(void *)w->head;
		line = w->head + MANY_MAX * sizeof *held;
		nb = 0;
		for (i = 0; i < k; i++) {
			rbuf *rb = chunks[done + i];

			held[w->nrbs++] = rb;
			if (rb->len == 0)
				continue;       /* an empty chunk would end it */
			if (c->chunked) {
				int l = sprintf(line, "%zx\r\n", rb->len);

				bufs[nb++] = uv_buf_init(line, l);
				line += l;
			}
			bufs[nb++] = uv_buf_init(rb->data, rb->len);
			if (c->chunked)
				bufs[nb++] = uv_buf_init((char *)"\r\n", 2);
		}
		done += k;
		if (nb == 0) {
			wreq_put(c->srv, w);
			continue;
		}
		if (conn_write(c, w, bufs, nb) != 0) {
			for (i = done; i < n; i++)
				rbuf_unref(chunks[i]);
			return -1;
		}
	}
	return 0;
}

int
http_stream_write_copy(http_req *req, const char *data, size_t len)
{
	return stream_chunk(req, NULL, data, len);
}

size_t
http_stream_pending(const http_req *req)
{
	return REQ_CONN(req)->pending;
}

void
http_stream_end(http_req *req)
{
	struct conn *c = REQ_CONN(req);
	struct wreq *w;
	uv_buf_t buf;
	static const char last[] = "0\r\n\r\n";

	if (!c->busy || !c->streaming) {
		log_warn("http: end of a stream that is not open");
		return;
	}
	if (!c->closing && !c->failed && c->chunked && !c->head_only) {
		w = wreq_get(c->srv);
		memcpy(w->head, last, sizeof last - 1);
		buf = uv_buf_init(w->head, sizeof last - 1);
		conn_write(c, w, &buf, 1);
	}
	request_done(c);
}

void
http_req_on_done(http_req *req, http_close_cb cb, void *arg)
{
	struct conn *c = REQ_CONN(req);

	c->done_cb = cb;
	c->done_arg = arg;
}

int
http_req_add_header(http_req *req, const char *name, const char *value)
{
	struct conn *c = REQ_CONN(req);
	size_t room = sizeof c->xhdr - c->xhdrlen;
	int n;

	if (strpbrk(name, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL)
		return -1;
	n = snprintf(c->xhdr + c->xhdrlen, room, "%s: %s\r\n", name, value);
	if (n < 0 || (size_t)n >= room)
		return -1;
	c->xhdrlen += (size_t)n;
	return 0;
}

void
http_req_on_close(http_req *req, http_close_cb cb, void *arg)
{
	struct conn *c = REQ_CONN(req);

	if (!c->busy)
		return;
	c->close_cb = cb;
	c->close_arg = arg;
}
