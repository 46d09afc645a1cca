/*
 * Responses, and the end of a request.
 *
 * A fixed response is one write: the status line and headers, formatted
 * into a write request, then the body, copied there when small or sent
 * from the caller's rbuf (a reference held until the write completes).
 * A request that could not be parsed is answered here too (400, 408, 413,
 * 431), and the connection closed after it.
 *
 * Answering a request, or ending its stream (http_stream.c), finishes it:
 * the done callback runs, the buffers are reset, and the connection goes
 * on with the next pipelined request, waits idle, or shuts down if that
 * was its last response.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "net/http_int.h"

#define MAX_CTYPE	256

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
size_t
http_respond_head(struct conn *c, char *buf, size_t size, int status,
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
	if (c->upgrade != NULL && strlen(c->upgrade) <= MAX_CTYPE)
		n += snprintf(buf + n, size - n,
		    "Connection: Upgrade\r\nUpgrade: %s\r\n", c->upgrade);
	else if (c->close_after)
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
	static char newline[] = "\n";
	struct wreq *w;
	uv_buf_t bufs[3];
	size_t n;
	int nobody = bodyless(status), nb = 1, nl;

	if (rb != NULL) {
		data = rb->data;
		len = rb->len;
	}
	/* A JSON body ends with a newline, as kube-apiserver's encoder
	   writes it (stored objects have none of their own). */
	nl = !nobody && len > 0 && ctype != NULL &&
	    strncmp(ctype, "application/json", 16) == 0 && data[len - 1] != '\n';
	w = http_conn_wreq_get(c->srv);
	n = http_respond_head(c, w->head, WREQ_HEAD - 1, status,
	    nobody ? NULL : ctype, nobody ? -2 : (long long)(len + nl));
	if (nobody || c->head_only || len == 0)
		len = nl = 0;
	else if (rb == NULL && len + nl <= WREQ_HEAD - n) {
		memcpy(w->head + n, data, len);
		n += len;
		if (nl)
			w->head[n++] = '\n';
		len = nl = 0;
	} else if (rb == NULL) {
		rb = rbuf_new(data, len);
		w->rb = rb;
	} else
		w->rb = rbuf_ref(rb);
	bufs[0] = uv_buf_init(w->head, n);
	if (len != 0)
		bufs[nb++] = uv_buf_init(rb->data, len);
	if (nl)
		bufs[nb++] = uv_buf_init(newline, 1);
	return http_conn_write(c, w, bufs, nb);
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
void
http_respond_done(struct conn *c)
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
http_respond_json(http_req *req, int status, cJSON *body)
{
	char *s = json_print(body);

	cJSON_Delete(body);
	http_respond(req, status, "application/json", s, strlen(s));
	free(s);
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
	http_respond_done(c);
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
	http_respond_done(c);
}
