/*
 * WebSocket on an upgraded HTTP connection (websocket.h). libwslay's
 * event API does the framing: what arrives on the connection is handed to
 * wslay_event_recv through the recv callback (a window on the bytes of one
 * read; "would block" once they are used), and what wslay sends is queued
 * on the connection as it is. wslay answers pings and closes itself; once
 * it wants neither to read nor to write, the socket is done.
 *
 * Callbacks may free the socket (ws_free) from inside a delivery: the
 * nesting depth defers the release to the end of the outermost call.
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <strings.h>
#include <wslay/wslay.h>

#include "lib/xmalloc.h"
#include "net/websocket.h"

#define WS_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

struct ws {
	http_req		*req;
	wslay_event_context_ptr	 ctx;
	struct ws_callbacks	 cb;
	void			*arg;
	const char		*in;		/* the bytes of this read */
	size_t			 inlen;
	int			 depth;		/* inside a callback chain */
	unsigned		 ended:1;	/* the request is finished */
	unsigned		 told:1;	/* on_close has run */
	unsigned		 freed:1;	/* ws_free waits for depth 0 */
	unsigned		 quiet:1;	/* ws_close: no more callbacks */
};

int
ws_is_upgrade(const http_req *req)
{
	const char *up = http_req_header(req, "Upgrade");
	const char *key = http_req_header(req, "Sec-WebSocket-Key");

	if (up == NULL || strcasecmp(up, "websocket") != 0)
		return 0;
	if (strcmp(req->method, "GET") != 0 || key == NULL ||
	    strlen(key) != 24)
		return -1;
	return 1;
}

const char *
ws_pick_protocol(const http_req *req, const char *const *ours)
{
	const char *list = http_req_header(req, "Sec-WebSocket-Protocol");
	const char *p, *e;
	size_t n;
	int i;

	for (p = list; p != NULL && *p != '\0'; p = *e ? e + 1 : e) {
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strcspn(p, ",");
		n = (size_t)(e - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		for (i = 0; ours[i] != NULL; i++)
			if (strlen(ours[i]) == n && strncmp(ours[i], p, n) == 0)
				return ours[i];
	}
	return NULL;
}

/* The request is finished: the connection closes once its bytes are out. */
static void
ws_end(ws *w)
{
	if (w->ended)
		return;
	w->ended = 1;
	http_stream_end(w->req);
}

/* Tell the owner once that the socket is done. */
static void
ws_tell(ws *w)
{
	if (w->told || w->quiet)
		return;
	w->told = 1;
	if (w->cb.on_close != NULL)
		w->cb.on_close(w->arg);
}

static void
ws_release(ws *w)
{
	ws_end(w);
	wslay_event_context_free(w->ctx);
	free(w);
}

/* Leave a callback chain; the last one out does a deferred release. */
static void
ws_leave(ws *w)
{
	if (--w->depth == 0 && w->freed)
		ws_release(w);
}

static ssize_t
on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *user)
{
	ws *w = user;

	(void)flags;
	if (w->inlen == 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (len > w->inlen)
		len = w->inlen;
	memcpy(buf, w->in, len);
	w->in += len;
	w->inlen -= len;
	return (ssize_t)len;
}

static ssize_t
on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *user)
{
	ws *w = user;

	(void)flags;
	if (w->ended || http_stream_write_copy(w->req, (const char *)data,
	    len) != 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)len;
}

static void
on_msg(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *user)
{
	ws *w = user;

	(void)ctx;
	if (w->freed || w->quiet || w->cb.on_message == NULL)
		return;
	if (m->opcode == WSLAY_TEXT_FRAME || m->opcode == WSLAY_BINARY_FRAME)
		w->cb.on_message(w->arg, m->opcode == WSLAY_BINARY_FRAME,
		    (const char *)m->msg, m->msg_length);
}

static const struct wslay_event_callbacks wslay_cbs = {
	.recv_callback = on_recv,
	.send_callback = on_send,
	.on_msg_recv_callback = on_msg,
};

/* Send what wslay has queued; end the socket once it has nothing to do. */
static void
ws_pump(ws *w)
{
	if (w->freed || w->ended)
		return;
	if (wslay_event_send(w->ctx) != 0 ||
	    (!wslay_event_want_read(w->ctx) &&
	    !wslay_event_want_write(w->ctx))) {
		ws_end(w);
		ws_tell(w);
	}
}

static void
on_data(http_req *req, const char *data, size_t len, void *arg)
{
	ws *w = arg;

	(void)req;
	if (w->ended || w->freed)
		return;
	w->depth++;
	w->in = data;
	w->inlen = len;
	if (wslay_event_recv(w->ctx) != 0) {
		ws_end(w);
		ws_tell(w);
	} else
		ws_pump(w);
	w->in = NULL;
	w->inlen = 0;
	ws_leave(w);
}

static void
on_gone(http_req *req, void *arg)
{
	ws *w = arg;

	(void)req;
	w->depth++;
	ws_end(w);
	ws_tell(w);
	ws_leave(w);
}

/* base64(SHA-1(key GUID)): the handshake's proof. */
static void
accept_key(const char *key, char out[32])
{
	unsigned char md[SHA_DIGEST_LENGTH];
	char buf[128];
	size_t n = (size_t)snprintf(buf, sizeof buf, "%s%s", key, WS_GUID);

	SHA1((const unsigned char *)buf, n, md);
	EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
}

ws *
ws_accept(http_req *req, const char *protocol, size_t max_msg,
    const struct ws_callbacks *cb, void *arg)
{
	ws *w = xcalloc(1, sizeof *w);
	char acc[32];

	w->req = req;
	w->cb = *cb;
	w->arg = arg;
	if (wslay_event_context_server_init(&w->ctx, &wslay_cbs, w) != 0)
		xoom("wslay_event_context_server_init");
	wslay_event_config_set_max_recv_msg_length(w->ctx, max_msg);
	accept_key(http_req_header(req, "Sec-WebSocket-Key"), acc);
	http_req_add_header(req, "Sec-WebSocket-Accept", acc);
	if (protocol != NULL)
		http_req_add_header(req, "Sec-WebSocket-Protocol", protocol);
	http_req_on_close(req, on_gone, w);
	http_upgrade(req, "websocket", on_data, w);
	return w;
}

int
ws_send(ws *w, int binary, const char *data, size_t len)
{
	struct wslay_event_msg m;

	if (w->ended || w->freed)
		return -1;
	m.opcode = binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME;
	m.msg = (const uint8_t *)data;
	m.msg_length = len;
	if (wslay_event_queue_msg(w->ctx, &m) != 0)
		return -1;
	w->depth++;
	ws_pump(w);
	ws_leave(w);
	return 0;
}

size_t
ws_pending(const ws *w)
{
	return w->ended ? 0 : http_stream_pending(w->req);
}

void
ws_pause(ws *w, int paused)
{
	if (!w->ended)
		http_tunnel_pause(w->req, paused);
}

void
ws_close(ws *w, uint16_t code, const char *reason)
{
	if (w->ended || w->freed)
		return;
	w->quiet = 1;
	wslay_event_queue_close(w->ctx, code, (const uint8_t *)reason,
	    reason != NULL ? strlen(reason) : 0);
	w->depth++;
	wslay_event_send(w->ctx);
	/* No need to wait for the peer's answer: what we sent is queued
	   before the connection's shutdown. */
	ws_end(w);
	ws_leave(w);
}

void
ws_free(ws *w)
{
	if (w == NULL || w->freed)
		return;
	w->freed = 1;
	w->quiet = 1;
	if (w->depth == 0)
		ws_release(w);
}
