/*
 * Responses and streams on an HTTP connection, and the end of a request.
 *
 * A fixed response is one write: the status line and headers, formatted
 * into a write request, then the body, copied there when small or sent
 * from the caller's rbuf (a reference held until the write completes). A
 * stream is the head, then chunks in the chunked encoding (HTTP/1.0: a body
 * ended by close), each an rbuf sent as it is; http_stream_write_many
 * queues a batch of them, a watch's events say, in one writev.
 *
 * Answering a request, or ending its stream, finishes it: the done
 * callback runs, the buffers are reset, and the connection goes on with
 * the next pipelined request, waits idle, or shuts down if that was its
 * last response.
 */
#include <stdio.h>
#include <string.h>

#include "net/http_int.h"

#define MAX_CTYPE	256
#define MANY_MAX	64

static const char too_large[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Failure\",\"message\":\"the request body is too large\","
    "\"reason\":\"RequestEntityTooLarge\",\"code\":413}";

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
	w = http_conn_wreq_get(c->srv);
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
	return http_conn_write(c, w, bufs, len != 0 ? 2 : 1);
}

/* Answer a request that could not be parsed, then close. */
void
http_respond_error(struct conn *c, int status)
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
		http_conn_shutdown(c);
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
		http_parse_reset(c);
		if (c->close_after)
			http_conn_shutdown(c);
		else {
			http_conn_read_start(c);
			if (c->inlen > c->inoff && !c->running)
				http_conn_timer(c, T_DRAIN, 0);
			else
				http_conn_timer(c, T_IDLE, http_conn_idle_ms);
		}
	}
	http_conn_unref(c);
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
	w = http_conn_wreq_get(c->srv);
	n = format_head(c, w->head, WREQ_HEAD, status, content_type,
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
		w = http_conn_wreq_get(c->srv);
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

int
http_req_closed(const http_req *req)
{
	return REQ_CONN(req)->closing;
}
