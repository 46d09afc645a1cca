/*
 * The API server's relay of an upgraded connection to a node's endpoint,
 * as kube-apiserver's UpgradeAwareHandler relays exec and port-forward to
 * a kubelet: the client's request goes to the node (its protocol headers
 * kept: the WebSocket key, so the node's Sec-WebSocket-Accept is the one
 * the client checks, and the subprotocols), over TLS with the API server's
 * client certificate; a 101 from the node is passed on to the client with
 * the node's protocol headers, and from then on the bytes flow both ways
 * untouched. Any other answer is passed on as it is (status, type, body).
 * Either side queueing more than 4 MiB for the other stops reading until
 * that falls below 2 MiB (looked at every 20 ms).
 */
#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/dial.h"
#include "registry/status.h"

#define HIGH_WATER	(4 * 1024 * 1024)
#define MAX_BODY	(1024 * 1024)
#define POLL_MS		20

/* The node's response headers the client needs, by name. */
static const char *const passed[] = { "Sec-WebSocket-Accept",
    "Sec-WebSocket-Protocol", "X-Stream-Protocol-Version", "Upgrade",
    "Content-Type" };
#define NPASSED (sizeof passed / sizeof *passed)

struct relay {
	api *a;
	http_req *req;
	struct route rt;		/* r and verb, for the reply */
	dial *d;
	http_parser parser;
	uv_timer_t poll;
	char where[300];		/* "node NAME at HOST:PORT" */
	char field[64], value[256];	/* the header being read */
	int in_value;
	char hv[NPASSED][256];		/* the passed headers' values */
	int head_done;			/* the node's head is read */
	int upgraded;
	int finished;			/* the client's request is finished */
	char *body;
	size_t body_len;
};

static void
on_poll_closed(uv_handle_t *h)
{
	struct relay *r = h->data;

	free(r->body);
	free(r);
}

/* Both sides are done with: release everything. */
static void
relay_free(struct relay *r)
{
	dial_free(r->d);
	r->d = NULL;
	uv_timer_stop(&r->poll);
	uv_close((uv_handle_t *)&r->poll, on_poll_closed);
}

/* Finish the client's request: a stream's end, or a reply. */
static void
finish(struct relay *r, int status, const char *msg)
{
	if (r->finished)
		return;
	r->finished = 1;
	if (r->upgraded)
		http_stream_end(r->req);
	else if (msg != NULL)
		reply_status(r->req, &r->rt, status_error(status,
		    "InternalError", "%s", msg));
	else
		http_respond(r->req, status, r->hv[4][0] ? r->hv[4] :
		    "text/plain", r->body != NULL ? r->body : "", r->body_len);
	relay_free(r);
}

static void
take_header(struct relay *r)
{
	size_t i;

	for (i = 0; i < NPASSED; i++)
		if (strcasecmp(r->field, passed[i]) == 0)
			util_strf(r->hv[i], sizeof r->hv[i], "%s", r->value);
	r->field[0] = r->value[0] = '\0';
	r->in_value = 0;
}

static void
append(char *buf, size_t size, const char *at, size_t len)
{
	size_t n = strlen(buf);

	if (len > size - 1 - n)
		len = size - 1 - n;
	memcpy(buf + n, at, len);
	buf[n + len] = '\0';
}

static int
on_field(http_parser *p, const char *at, size_t len)
{
	struct relay *r = p->data;

	if (r->in_value)
		take_header(r);
	append(r->field, sizeof r->field, at, len);
	return 0;
}

static int
on_value(http_parser *p, const char *at, size_t len)
{
	struct relay *r = p->data;

	r->in_value = 1;
	append(r->value, sizeof r->value, at, len);
	return 0;
}

static int
on_headers_complete(http_parser *p)
{
	struct relay *r = p->data;

	if (r->in_value)
		take_header(r);
	r->head_done = 1;
	return 0;
}

static int
on_body(http_parser *p, const char *at, size_t len)
{
	struct relay *r = p->data;

	if (r->body_len + len > MAX_BODY)
		return 0;
	r->body = xrealloc(r->body, r->body_len + len + 1);
	memcpy(r->body + r->body_len, at, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

static int
on_message_complete(http_parser *p)
{
	struct relay *r = p->data;

	if (p->status_code != 101)
		finish(r, (int)p->status_code, NULL);
	return 1;	/* stop: nothing else is read as HTTP */
}

static const http_parser_settings settings = {
	.on_header_field = on_field,
	.on_header_value = on_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

static void
on_poll(uv_timer_t *t)
{
	struct relay *r = t->data;

	if (r->d == NULL || r->finished)
		return;
	if (http_stream_pending(r->req) < HIGH_WATER / 2 &&
	    dial_pending(r->d) < HIGH_WATER / 2) {
		uv_timer_stop(t);
		dial_pause(r->d, 0);
		http_tunnel_pause(r->req, 0);
	}
}

static void
watch_queues(struct relay *r)
{
	int full = 0;

	if (http_stream_pending(r->req) > HIGH_WATER) {
		dial_pause(r->d, 1);
		full = 1;
	}
	if (dial_pending(r->d) > HIGH_WATER) {
		http_tunnel_pause(r->req, 1);
		full = 1;
	}
	if (full && !uv_is_active((uv_handle_t *)&r->poll))
		uv_timer_start(&r->poll, on_poll, POLL_MS, POLL_MS);
}

/* The client's bytes, once upgraded: to the node as they are. */
static void
on_client_data(http_req *req, const char *data, size_t len, void *arg)
{
	struct relay *r = arg;

	(void)req;
	if (r->d == NULL || dial_write(r->d, data, len) != 0)
		return;
	watch_queues(r);
}

/* The node switched protocols: so does the client's connection. */
static void
upgrade(struct relay *r, const char *rest, size_t len)
{
	size_t i;

	for (i = 0; i < 3; i++)
		if (r->hv[i][0] != '\0')
			http_req_add_header(r->req, passed[i], r->hv[i]);
	r->upgraded = 1;
	http_upgrade(r->req, r->hv[3][0] ? r->hv[3] : "websocket",
	    on_client_data, r);
	if (len > 0)
		http_stream_write_copy(r->req, rest, len);
}

static void
on_node_data(void *arg, const char *data, size_t len)
{
	struct relay *r = arg;
	size_t n;

	if (r->finished)
		return;
	if (r->upgraded) {
		http_stream_write_copy(r->req, data, len);
		watch_queues(r);
		return;
	}
	n = http_parser_execute(&r->parser, &settings, data, len);
	if (r->finished)
		return;
	if (r->head_done && r->parser.status_code == 101) {
		upgrade(r, data + n, len - n);
		return;
	}
	if (HTTP_PARSER_ERRNO(&r->parser) != HPE_OK)
		finish(r, 502, "the node's endpoint answered no HTTP");
}

static void
on_node_connected(void *arg, const char *error)
{
	struct relay *r = arg;
	char *m;

	if (error == NULL)
		return;
	m = util_printf("error dialing backend: %s", error);
	finish(r, 500, m);
	free(m);
}

static void
on_node_ended(void *arg)
{
	struct relay *r = arg;

	if (!r->upgraded && !r->finished) {
		/* A body that ends with the connection. */
		http_parser_execute(&r->parser, &settings, NULL, 0);
		if (!r->finished)
			finish(r, 502, "the node's endpoint closed the "
			    "connection");
		return;
	}
	finish(r, 0, NULL);
}

static const struct dial_cb dial_cbs = { on_node_connected, on_node_data,
    on_node_ended };

/* The client went away: so does the node's connection. */
static void
on_client_close(http_req *req, void *arg)
{
	struct relay *r = arg;

	(void)req;
	if (r->finished)
		return;
	r->finished = 1;
	if (r->upgraded)
		http_stream_end(req);
	else
		http_respond(req, 499, "text/plain", "", 0);
	relay_free(r);
}

/* The request line and the protocol headers, for the node. */
static char *
request_head(http_req *req, const char *path, const char *host, int port)
{
	static const char *const fwd[] = { "Upgrade", "Connection",
	    "Sec-WebSocket-Key", "Sec-WebSocket-Version",
	    "Sec-WebSocket-Protocol", "X-Stream-Protocol-Version" };
	char *s = util_printf("%s %s%s%s HTTP/1.1\r\nHost: %s:%d\r\n"
	    "User-Agent: volrayd/apiserver\r\nContent-Length: 0\r\n",
	    req->method, path, *req->query ? "?" : "", req->query, host, port);
	const char *v;
	char *t;
	size_t i;

	for (i = 0; i < sizeof fwd / sizeof *fwd; i++)
		if ((v = http_req_header(req, fwd[i])) != NULL &&
		    strpbrk(v, "\r\n") == NULL) {
			t = util_printf("%s%s: %s\r\n", s, fwd[i], v);
			free(s);
			s = t;
		}
	t = util_printf("%s\r\n", s);
	free(s);
	return t;
}

void
streamrelay_forward(api *a, http_req *req, struct route *rt, const char *node,
    const char *path)
{
	char host[256], *cause = NULL, *head;
	struct relay *r;
	cJSON *st = NULL;
	int port;

	if (nodeproxy_addr(a, node, host, sizeof host, &port, &st) != 0) {
		reply_status(req, rt, st);
		return;
	}
	if (a->nodes_tls == NULL && (a->nodes_tls = tls_ctx_new_client(
	    a->node_cert, a->node_key, &cause)) == NULL) {
		reply_status(req, rt, status_error(500, "InternalError",
		    "the nodes' TLS client: %s", cause));
		free(cause);
		return;
	}
	r = xcalloc(1, sizeof *r);
	r->a = a;
	r->req = req;
	r->rt.r = rt->r;
	r->rt.verb = rt->verb;
	http_parser_init(&r->parser, HTTP_RESPONSE);
	r->parser.data = r;
	uv_timer_init(a->loop, &r->poll);
	r->poll.data = r;
	http_req_on_close(req, on_client_close, r);
	if ((r->d = dial_open(a->loop, host, port, a->nodes_tls, &dial_cbs, r,
	    &cause)) == NULL) {
		head = util_printf("error dialing backend: %s", cause);
		finish(r, 500, head);
		free(head);
		free(cause);
		return;
	}
	head = request_head(req, path, host, port);
	dial_write(r->d, head, strlen(head));
	free(head);
}
