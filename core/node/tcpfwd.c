/*
 * A port-forward's TCP connection to this machine (tcpfwd.h). Writes that
 * arrive before the connection is up wait in libuv's queue (uv_write on a
 * connecting handle queues them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/tcpfwd.h"

struct tcpfwd {
	uv_tcp_t tcp;
	uv_connect_t conn;
	uv_shutdown_t shut;
	struct tcpfwd_cb cb;
	void *arg;
	size_t pending;
	int refs;			/* the handle, and pending requests */
	unsigned up:1, ended:1, freed:1, shut_asked:1, reading:1, paused:1;
};

struct wr {
	uv_write_t req;
	tcpfwd *t;
	size_t len;
	char data[];
};

static void
unref(tcpfwd *t)
{
	if (--t->refs == 0)
		free(t);
}

static void
on_closed(uv_handle_t *h)
{
	unref(h->data);
}

static void
end(tcpfwd *t)
{
	if (t->ended)
		return;
	t->ended = 1;
	if (!t->freed && t->cb.ended != NULL)
		t->cb.ended(t->arg);
}

static void
on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[64 * 1024];

	(void)h;
	(void)hint;
	*buf = uv_buf_init(space, sizeof space);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	tcpfwd *t = s->data;

	if (n < 0) {
		uv_read_stop(s);
		t->reading = 0;
		end(t);
		return;
	}
	if (n > 0 && !t->freed)
		t->cb.data(t->arg, buf->base, (size_t)n);
}

static void
start_reading(tcpfwd *t)
{
	if (!t->reading && !t->paused && t->up && !t->ended &&
	    uv_read_start((uv_stream_t *)&t->tcp, on_alloc, on_read) == 0)
		t->reading = 1;
}

static void
on_connect(uv_connect_t *req, int status)
{
	tcpfwd *t = req->data;
	char why[256];

	if (t->freed) {
		unref(t);
		return;
	}
	if (status != 0) {
		util_strf(why, sizeof why, "dial tcp: %s", uv_strerror(status));
		t->ended = 1;
		t->cb.connected(t->arg, why);
		unref(t);
		return;
	}
	t->up = 1;
	t->cb.connected(t->arg, NULL);
	start_reading(t);
	unref(t);
}

tcpfwd *
tcpfwd_dial(uv_loop_t *loop, int port, const struct tcpfwd_cb *cb, void *arg)
{
	tcpfwd *t = xcalloc(1, sizeof *t);
	struct sockaddr_in sa;

	t->cb = *cb;
	t->arg = arg;
	uv_tcp_init(loop, &t->tcp);
	t->tcp.data = t;
	t->refs = 1;
	uv_ip4_addr("127.0.0.1", port, &sa);
	t->conn.data = t;
	if (port <= 0 || port > 65535 || uv_tcp_connect(&t->conn, &t->tcp,
	    (struct sockaddr *)&sa, on_connect) != 0) {
		t->freed = 1;
		uv_close((uv_handle_t *)&t->tcp, on_closed);
		return NULL;
	}
	t->refs++;
	uv_tcp_nodelay(&t->tcp, 1);
	return t;
}

static void
on_written(uv_write_t *req, int status)
{
	struct wr *w = (struct wr *)req;
	tcpfwd *t = w->t;

	(void)status;
	t->pending -= w->len;
	free(w);
	unref(t);
}

int
tcpfwd_write(tcpfwd *t, const char *data, size_t len)
{
	struct wr *w;
	uv_buf_t buf;

	if (t->ended || t->shut_asked || t->freed)
		return -1;
	if (len == 0)
		return 0;
	w = xmalloc(sizeof *w + len);
	w->t = t;
	w->len = len;
	memcpy(w->data, data, len);
	buf = uv_buf_init(w->data, (unsigned)len);
	if (uv_write(&w->req, (uv_stream_t *)&t->tcp, &buf, 1,
	    on_written) != 0) {
		free(w);
		return -1;
	}
	t->refs++;
	t->pending += len;
	return 0;
}

size_t
tcpfwd_pending(const tcpfwd *t)
{
	return t->pending;
}

static void
on_shut(uv_shutdown_t *req, int status)
{
	(void)status;
	unref(req->data);
}

void
tcpfwd_shutdown(tcpfwd *t)
{
	if (t->shut_asked || t->freed)
		return;
	t->shut_asked = 1;
	t->shut.data = t;
	if (uv_shutdown(&t->shut, (uv_stream_t *)&t->tcp, on_shut) == 0)
		t->refs++;
}

void
tcpfwd_pause(tcpfwd *t, int paused)
{
	t->paused = paused != 0;
	if (paused && t->reading) {
		uv_read_stop((uv_stream_t *)&t->tcp);
		t->reading = 0;
	} else if (!paused)
		start_reading(t);
}

void
tcpfwd_free(tcpfwd *t)
{
	if (t == NULL || t->freed)
		return;
	t->freed = 1;
	uv_close((uv_handle_t *)&t->tcp, on_closed);
}
