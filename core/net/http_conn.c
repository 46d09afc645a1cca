/*
 * An HTTP connection's lifetime and its write path.
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
 * small copied bodies) live in a write request taken from the server's
 * free list. With TLS (tls.c) every write is encrypted first (small
 * buffers gathered into one record) and the ciphertext is what uv_write
 * sends.
 *
 * A connection that must close after its response (client asked, HTTP/1.0,
 * errors) is shut down for writing once the response is flushed and then
 * read and discarded for a short while before closing, so a peer still
 * sending a large body sees the response rather than a reset.
 *
 * Each connection has one timer; this file arms it and starts reads with
 * the callbacks http.c keeps in the server, which decide what a timeout or
 * new input means.
 */
#include <string.h>

#include "net/http_int.h"

#define LINGER_MS	2000
#define MAX_FREE_WREQS	256

unsigned http_conn_request_ms = 30000;
unsigned http_conn_idle_ms = 300000;

void
http_conn_server_unref(http_server *srv)
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

struct wreq *
http_conn_wreq_get(http_server *srv)
{
	struct wreq *w;

	if ((w = srv->free) != NULL) {
		srv->free = w->next;
		srv->nfree--;
	} else
		w = xmalloc(WREQ_SIZE);
	w->rb = NULL;
	w->len = 0;
	w->nrbs = 0;
	return w;
}

void
http_conn_wreq_put(http_server *srv, struct wreq *w)
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
void
http_conn_unref(struct conn *c)
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
	http_conn_server_unref(srv);
}

static void
on_handle_close(uv_handle_t *h)
{
	http_conn_unref(h->data);
}

/* Arm the connection's timer unless it is going away. */
void
http_conn_timer(struct conn *c, enum tmode mode, uint64_t ms)
{
	if (c->closing || (c->failed && mode != T_FAIL))
		return;
	c->tmode = mode;
	uv_timer_start(&c->timer, c->srv->on_timer, ms, 0);
}

/*
 * Close the connection's handles. A request still outstanding keeps the
 * memory alive; its owner hears about it through the on_close callback.
 */
void
http_conn_close(struct conn *c)
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
	http_conn_timer(c, T_FAIL, 0);
	c->failed = 1;
}

/* A write finished: release its buffers; a failure ends the connection. */
static void
on_write(uv_write_t *req, int status)
{
	struct wreq *w = req->data;
	struct conn *c = w->c;

	c->pending -= w->len;
	http_conn_wreq_put(c->srv, w);
	if (status < 0 && status != UV_ECANCELED && !c->closing) {
		log_debug("http: write: %s", uv_strerror(status));
		http_conn_close(c);
	}
}

/*
 * Queue a write of bufs to the socket as they are, counted as pending until
 * it completes. On failure w is recycled, the connection is closed shortly
 * after, and -1 returned.
 */
int
http_conn_send(struct conn *c, struct wreq *w, const uv_buf_t *bufs, unsigned n)
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
		http_conn_wreq_put(c->srv, w);
		conn_fail(c);
		return -1;
	}
	return 0;
}

/* Send whatever ciphertext the TLS session has produced. */
int
http_conn_flush_tls(struct conn *c)
{
	struct wreq *w;
	uv_buf_t buf;
	rbuf *b;

	if ((b = tls_conn_take(c->tls)) == NULL)
		return 0;
	w = http_conn_wreq_get(c->srv);
	w->rb = b;
	buf = uv_buf_init(b->data, b->len);
	return http_conn_send(c, w, &buf, 1);
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
	/* The plaintext is copied: release it. */
	http_conn_wreq_put(c->srv, w);
	if (r != 0) {
		log_debug("http: tls write: %s", tls_conn_error(c->tls));
		conn_fail(c);
		return -1;
	}
	return http_conn_flush_tls(c);
}

/* Queue bufs for the peer (encrypted on a TLS connection). */
int
http_conn_write(struct conn *c, struct wreq *w, const uv_buf_t *bufs,
    unsigned n)
{
	if (c->tls != NULL)
		return conn_write_tls(c, w, bufs, n);
	return http_conn_send(c, w, bufs, n);
}

static void
on_shutdown(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;

	if (c->closing)
		return;
	if (status < 0 || c->peer_eof) {
		http_conn_close(c);
		return;
	}
	http_conn_timer(c, T_LINGER, LINGER_MS);
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = h->data;

	/* Input is parsed or copied before the next read: one buffer does. */
	*buf = uv_buf_init(c->srv->rbuf, sizeof c->srv->rbuf);
}

void
http_conn_read_start(struct conn *c)
{
	if (c->reading || c->closing)
		return;
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc,
	    c->srv->on_read) == 0)
		c->reading = 1;
	else
		conn_fail(c);
}

/*
 * The last response is queued: shut down the write side once it is
 * flushed, then discard input until the peer closes or LINGER_MS pass.
 */
void
http_conn_shutdown(struct conn *c)
{
	int r;

	if (c->shutting || c->closing)
		return;
	c->shutting = 1;
	if (c->tls != NULL) {
		tls_conn_shutdown(c->tls);
		http_conn_flush_tls(c);
	}
	c->shut.data = c;
	r = uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, on_shutdown);
	if (r != 0) {
		http_conn_close(c);
		return;
	}
	if (!c->peer_eof)
		http_conn_read_start(c);
	http_conn_timer(c, T_LINGER, http_conn_request_ms);
}
