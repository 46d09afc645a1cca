/*
 * HTTP/1.1 server: libuv does the sockets, http-parser does all parsing.
 * This file listens, accepts, reads, runs the parser and hands each
 * request to the handler; the rest of the server is split by what it
 * does (http_int.h draws the order): a connection's lifetime and write
 * path in http_conn.c, the parser's callbacks in http_parse.c, responses
 * in http_respond.c and streams in http_stream.c, and what a handler
 * reads from a request in http_req.c and http_query.c.
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
 * With TLS (tls.c) the socket carries ciphertext: what arrives is fed to
 * the connection's session and the plaintext it yields takes the same path
 * as a plain connection's input. A plain HTTP request to a TLS listener
 * gets Go's 400 answer.
 *
 * The connection's one timer means what its mode says (on_timer): the
 * first byte or the rest of a request is late (close, or 408), a
 * keep-alive connection sat idle, pipelined input is waiting, a closing
 * connection lingered long enough, or a write failed.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "net/http_int.h"

#define MAX_HELD	(64 * 1024)	/* buffered while a request is out */
#define BACKLOG		1024

static int max_connections = 8192;

static void conn_drain(struct conn *);

void
http_set_timeouts(unsigned req, unsigned idle)
{
	http_conn_request_ms = req;
	http_conn_idle_ms = idle;
}

void
http_set_max_connections(int n)
{
	max_connections = n;
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
	s = xmalloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(s, n + 1, fmt, ap);
	va_end(ap);
	*cause = s;
}

void
http_server_use_tls(http_server *srv, tls_ctx *tls)
{
	srv->tls = tls;
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
			http_respond_error(c, 408);
		} else if (!c->busy)
			http_conn_close(c);
		break;
	case T_FIRST:
	case T_IDLE:
	case T_LINGER:
	case T_FAIL:
		http_conn_close(c);
		break;
	}
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
		n = http_parser_execute(&c->parser, &http_parse_settings,
		    data + off, len - off);
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
			http_respond_error(c, c->err_status);
			off = len;
			break;
		}
		if (n == 0) {
			/* Stopped without an error: nothing sane can follow. */
			http_respond_error(c, 400);
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
	http_buf_grow(&c->in, &c->incap, c->inlen + len);
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

	if (c->tunnel && !c->closing && c->inlen > c->inoff) {
		/* An upgraded connection: what arrived before, as it is. The
		   buffer is detached first, since the callback may end it. */
		char *in = c->in;
		size_t off = c->inoff;

		n = c->inlen - off;
		c->in = NULL;
		c->incap = c->inoff = c->inlen = 0;
		c->tunnel_cb(&c->req, in + off, n, c->tunnel_arg);
		free(in);
		if (!c->tunnel_paused)
			http_conn_read_start(c);
		return;
	}
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
		http_conn_timer(c, T_IDLE, http_conn_idle_ms);
}

/*
 * Plaintext input: parse it at once when no request is outstanding
 * (copying only what is left over), otherwise hold it for later.
 */
static void
conn_input(struct conn *c, const char *data, size_t len)
{
	size_t n;

	if (c->tunnel) {
		if (c->inlen > c->inoff) {	/* held input goes first */
			conn_keep(c, data, len);
			conn_drain(c);
		} else
			c->tunnel_cb(&c->req, data, len, c->tunnel_arg);
		return;
	}
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
		http_conn_shutdown(c);
		return;
	}
	http_conn_close(c);
}

/* Answer plain HTTP on a TLS listener as Go's server does, then close. */
static void
conn_plain_on_tls(struct conn *c)
{
	static const char msg[] = "HTTP/1.0 400 Bad Request\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Connection: close\r\n\r\n"
	    "Client sent an HTTP request to an HTTPS server.\n";
	struct wreq *w = http_conn_wreq_get(c->srv);
	uv_buf_t buf;

	tls_conn_free(c->tls);
	c->tls = NULL;
	memcpy(w->head, msg, sizeof msg - 1);
	buf = uv_buf_init(w->head, sizeof msg - 1);
	c->close_after = 1;
	if (http_conn_send(c, w, &buf, 1) == 0)
		http_conn_shutdown(c);
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
		http_conn_close(c);
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
			http_conn_flush_tls(c);	/* the alert, if any */
			conn_peer_done(c, n == -2);
			return;
		}
		conn_input(c, c->srv->pbuf, (size_t)n);
	}
	if (!c->closing && c->tls != NULL)
		http_conn_flush_tls(c);	/* handshake messages */
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
		t = xmalloc(sizeof *t);
		uv_tcp_init(srv->loop, t);
		if (uv_accept(ls, (uv_stream_t *)t) == 0)
			log_debug("http: too many connections");
		uv_close((uv_handle_t *)t, free_handle);
		return;
	}

	c = xcalloc(1, sizeof *c);
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
		http_conn_close(c);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	http_conn_read_start(c);
	http_conn_timer(c, T_FIRST, http_conn_request_ms);
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
	http_conn_server_unref(h->data);
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
	srv = xcalloc(1, sizeof *srv);
	srv->loop = loop;
	srv->handler = handler;
	srv->arg = arg;
	srv->refs = 1;
	srv->on_timer = on_timer;
	srv->on_read = on_read;
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
		http_conn_close(srv->conns);
}

int
http_server_connections(const http_server *srv)
{
	return srv->nconns;
}
