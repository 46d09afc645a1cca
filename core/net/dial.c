/*
 * An outgoing connection (dial.h). The name is looked up with
 * uv_getaddrinfo (an address literal is used as it is), then connected;
 * with TLS the handshake runs over memory BIOs (tls.c) as the server's
 * connections do. Writes made before the connection is up (and the
 * handshake done) wait in a buffer.
 * Every libuv request holds a reference, so the struct outlives a
 * dial_free that comes while one is out.
 */
#include <sys/socket.h>

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/dial.h"

struct dial {
	uv_loop_t *loop;
	uv_tcp_t tcp;
	uv_getaddrinfo_t gai;
	uv_connect_t conn;
	uv_shutdown_t shut;
	tls_conn *tls;
	struct dial_cb cb;
	void *arg;
	char where[300];		/* "host:port", for the messages */
	int port;
	size_t pending;
	char *early;			/* plaintext written before the
					   handshake was done */
	size_t early_len;
	int refs;
	unsigned up:1, ended:1, freed:1, shut_asked:1, reading:1, paused:1,
	    told:1, tcp_init:1;
};

struct wr {
	uv_write_t req;
	dial *d;
	rbuf *rb;			/* TLS records, or NULL */
	size_t len;
	char data[];
};

static void
unref(dial *d)
{
	if (--d->refs == 0) {
		tls_conn_free(d->tls);
		free(d->early);
		free(d);
	}
}

static void
on_closed(uv_handle_t *h)
{
	unref(h->data);
}

/* Say once how it went: connected or not, then ended. */
static void
tell_connected(dial *d, const char *error)
{
	if (d->told || d->freed)
		return;
	d->told = 1;
	d->cb.connected(d->arg, error);
}

static void
end(dial *d)
{
	if (d->ended)
		return;
	d->ended = 1;
	if (!d->told) {
		tell_connected(d, "connection closed during the handshake");
		return;
	}
	if (!d->freed && d->cb.ended != NULL)
		d->cb.ended(d->arg);
}

static void
on_written(uv_write_t *req, int status)
{
	struct wr *w = (struct wr *)req;
	dial *d = w->d;

	(void)status;
	d->pending -= w->len;
	rbuf_unref(w->rb);
	free(w);
	unref(d);
}

/* Put bytes on the socket as they are (copied, or the rbuf taken). */
static int
raw_write(dial *d, const char *data, size_t len, rbuf *rb)
{
	struct wr *w = xmalloc(sizeof *w + (rb != NULL ? 0 : len));
	uv_buf_t buf;

	w->d = d;
	w->rb = rb;
	w->len = rb != NULL ? rb->len : len;
	if (rb == NULL)
		memcpy(w->data, data, len);
	buf = uv_buf_init(rb != NULL ? rb->data : w->data, (unsigned)w->len);
	if (uv_write(&w->req, (uv_stream_t *)&d->tcp, &buf, 1,
	    on_written) != 0) {
		rbuf_unref(rb);
		free(w);
		return -1;
	}
	d->refs++;
	d->pending += w->len;
	return 0;
}

/* Send the ciphertext the session has produced. */
static int
flush_tls(dial *d)
{
	rbuf *rb;

	while ((rb = tls_conn_take(d->tls)) != NULL)
		if (raw_write(d, NULL, 0, rb) != 0)
			return -1;
	return 0;
}

static void
connected(dial *d)
{
	d->up = 1;
	tell_connected(d, NULL);
	if (d->early_len > 0 && !d->freed) {
		if (d->tls == NULL)
			raw_write(d, d->early, d->early_len, NULL);
		else if (tls_conn_write(d->tls, d->early, d->early_len) == 0)
			flush_tls(d);
	}
	free(d->early);
	d->early = NULL;
	d->early_len = 0;
}

static void
on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[64 * 1024];

	(void)h;
	(void)hint;
	*buf = uv_buf_init(space, sizeof space);
}

/* Ciphertext arrived: the handshake's next step, or plaintext. */
static void
tls_input(dial *d, const char *data, size_t len)
{
	static char plain[64 * 1024];
	ssize_t n;
	int h;

	if (tls_conn_feed(d->tls, data, len) != 0) {
		end(d);
		return;
	}
	if (!d->up) {
		h = tls_conn_handshake(d->tls);
		flush_tls(d);
		if (h < 0) {
			char why[400];

			util_strf(why, sizeof why, "tls handshake with %s: %s",
			    d->where, tls_conn_error(d->tls));
			d->ended = 1;
			tell_connected(d, why);
			return;
		}
		if (h == 0)
			return;
		connected(d);
	}
	while (!d->freed && !d->ended) {
		n = tls_conn_read(d->tls, plain, sizeof plain);
		if (n == 0)
			break;
		if (n < 0) {
			end(d);
			break;
		}
		d->cb.data(d->arg, plain, (size_t)n);
	}
	if (!d->freed)
		flush_tls(d);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	dial *d = s->data;

	if (n < 0) {
		uv_read_stop(s);
		d->reading = 0;
		end(d);
		return;
	}
	if (n == 0 || d->freed)
		return;
	if (d->tls != NULL)
		tls_input(d, buf->base, (size_t)n);
	else
		d->cb.data(d->arg, buf->base, (size_t)n);
}

static void
start_reading(dial *d)
{
	if (!d->reading && !d->paused && !d->ended && !d->freed &&
	    uv_read_start((uv_stream_t *)&d->tcp, on_alloc, on_read) == 0)
		d->reading = 1;
}

static void
fail_with(dial *d, const char *what, int status)
{
	char why[400];

	util_strf(why, sizeof why, "dial tcp %s: %s%s%s", d->where,
	    what != NULL ? what : "", what != NULL ? ": " : "",
	    uv_strerror(status));
	d->ended = 1;
	tell_connected(d, why);
}

static void
on_connect(uv_connect_t *req, int status)
{
	dial *d = req->data;

	if (!d->freed) {
		if (status != 0)
			fail_with(d, NULL, status);
		else if (d->tls != NULL) {
			/* The ClientHello; connected once the server answers. */
			start_reading(d);
			tls_conn_handshake(d->tls);
			flush_tls(d);
		} else {
			start_reading(d);
			connected(d);
		}
	}
	unref(d);
}

/* Start connecting; a libuv error code when it cannot even start. */
static int
connect_to(dial *d, const struct sockaddr *sa)
{
	int r;

	uv_tcp_init(d->loop, &d->tcp);
	d->tcp.data = d;
	d->tcp_init = 1;
	d->refs++;			/* the handle */
	uv_tcp_nodelay(&d->tcp, 1);
	d->conn.data = d;
	if ((r = uv_tcp_connect(&d->conn, &d->tcp, sa, on_connect)) != 0)
		return r;
	d->refs++;
	return 0;
}

static void
on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *ai)
{
	dial *d = req->data;

	if (!d->freed) {
		if (status != 0 || ai == NULL)
			fail_with(d, "lookup", status != 0 ? status :
			    UV_EAI_NONAME);
		else if ((status = connect_to(d, ai->ai_addr)) != 0)
			fail_with(d, NULL, status);
	}
	uv_freeaddrinfo(ai);
	unref(d);
}

dial *
dial_open(uv_loop_t *loop, const char *host, int port, tls_ctx *tls,
    const struct dial_cb *cb, void *arg, char **cause)
{
	dial *d = xcalloc(1, sizeof *d);
	struct sockaddr_storage sa;
	struct addrinfo hints;
	char service[16];
	int r;

	d->loop = loop;
	d->cb = *cb;
	d->arg = arg;
	d->port = port;
	d->refs = 1;			/* the owner's, until dial_free */
	util_strf(d->where, sizeof d->where, strchr(host, ':') ?
	    "[%s]:%d" : "%s:%d", host, port);
	if (tls != NULL)
		d->tls = tls_conn_new(tls);
	memset(&sa, 0, sizeof sa);
	if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) == 0 ||
	    uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa) == 0)
		r = connect_to(d, (struct sockaddr *)&sa);
	else {
		memset(&hints, 0, sizeof hints);
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		snprintf(service, sizeof service, "%d", port);
		d->gai.data = d;
		if ((r = uv_getaddrinfo(loop, &d->gai, on_resolved, host,
		    service, &hints)) == 0)
			d->refs++;
	}
	if (r != 0) {
		*cause = util_printf("dial tcp %s: %s", d->where,
		    uv_strerror(r));
		d->told = 1;
		dial_free(d);
		return NULL;
	}
	return d;
}

int
dial_write(dial *d, const char *data, size_t len)
{
	if (d->ended || d->shut_asked || d->freed)
		return -1;
	if (len == 0)
		return 0;
	if (!d->up) {
		d->early = xrealloc(d->early, d->early_len + len);
		memcpy(d->early + d->early_len, data, len);
		d->early_len += len;
		return 0;
	}
	if (d->tls == NULL)
		return raw_write(d, data, len, NULL);
	if (tls_conn_write(d->tls, data, len) != 0)
		return -1;
	return flush_tls(d);
}

size_t
dial_pending(const dial *d)
{
	return d->pending + d->early_len;
}

static void
on_shut(uv_shutdown_t *req, int status)
{
	(void)status;
	unref(req->data);
}

void
dial_shutdown(dial *d)
{
	if (d->shut_asked || d->freed || !d->tcp_init)
		return;
	d->shut_asked = 1;
	if (d->tls != NULL && d->up) {
		tls_conn_shutdown(d->tls);
		flush_tls(d);
	}
	d->shut.data = d;
	if (uv_shutdown(&d->shut, (uv_stream_t *)&d->tcp, on_shut) == 0)
		d->refs++;
}

void
dial_pause(dial *d, int paused)
{
	d->paused = paused != 0;
	if (paused && d->reading) {
		uv_read_stop((uv_stream_t *)&d->tcp);
		d->reading = 0;
	} else if (!paused && d->up)
		start_reading(d);
}

void
dial_free(dial *d)
{
	if (d == NULL || d->freed)
		return;
	d->freed = 1;
	if (d->tcp_init)
		uv_close((uv_handle_t *)&d->tcp, on_closed);
	unref(d);
}
