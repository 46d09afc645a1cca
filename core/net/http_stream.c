/*
 * Streamed responses: the head, then any number of chunks, then the end.
 * A chunk is an rbuf sent as it is (a reference held until the write
 * completes; small copied ones go in the write request itself), framed
 * in the chunked encoding, or for HTTP/1.0 a body ended by close.
 * http_stream_write_many queues a batch of chunks, a watch's events say,
 * in one writev. Ending the stream finishes the request as an answer does.
 */
#include <stdio.h>
#include <string.h>

#include "net/http_int.h"

#define MANY_MAX	64
_Static_assert(MANY_MAX * (sizeof(rbuf *) + 20) < WREQ_SIZE - 512,
    "write_many's references and size lines must fit in a wreq");

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
	w = http_conn_wreq_get(c->srv);
	n = http_respond_head(c, w->head, WREQ_HEAD, status, content_type,
	    c->chunked ? -1 : -2);
	buf = uv_buf_init(w->head, n);
	http_conn_write(c, w, &buf, 1);
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
	w = http_conn_wreq_get(c->srv);
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
	return http_conn_write(c, w, bufs, nb);
}

int
http_stream_write(http_req *req, rbuf *chunk)
{
	return stream_chunk(req, chunk, NULL, 0);
}

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
		w = http_conn_wreq_get(c->srv);
		held = (rbuf **)(void *)w->head;
		line = w->head + MANY_MAX * sizeof *held;
		nb = 0;
		for (i = 0; i < k; i++) {
			rbuf *rb = chunks[done + i];

			held[w->nrbs++] = rb;
			if (rb->len == 0)
				continue;	/* an empty chunk would end it */
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
			http_conn_wreq_put(c->srv, w);
			continue;
		}
		if (http_conn_write(c, w, bufs, nb) != 0) {
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
		w = http_conn_wreq_get(c->srv);
		memcpy(w->head, last, sizeof last - 1);
		buf = uv_buf_init(w->head, sizeof last - 1);
		http_conn_write(c, w, &buf, 1);
	}
	http_respond_done(c);
}

void
http_upgrade(http_req *req, const char *protocol, http_tunnel_cb on_data,
    void *arg)
{
	struct conn *c = REQ_CONN(req);

	if (!c->busy || c->streaming) {
		log_warn("http: upgrade of a request that is not waiting");
		return;
	}
	c->upgrade = protocol;
	c->close_after = 1;		/* nothing follows on this connection */
	http_stream_begin(req, 101, NULL);
	c->upgrade = NULL;
	c->chunked = 0;
	c->tunnel = 1;
	c->tunnel_cb = on_data;
	c->tunnel_arg = arg;
	/* Input that came with the head goes out from the loop, not from
	   inside the caller. */
	if (c->inlen > c->inoff)
		http_conn_timer(c, T_DRAIN, 0);
	else
		http_conn_read_start(c);
}

void
http_tunnel_pause(http_req *req, int paused)
{
	struct conn *c = REQ_CONN(req);

	if (!c->tunnel || c->closing)
		return;
	c->tunnel_paused = paused != 0;
	if (paused && c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	} else if (!paused)
		http_conn_read_start(c);
}
