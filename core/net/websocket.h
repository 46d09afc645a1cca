/*
 * WebSocket (RFC 6455) on an upgraded HTTP connection, server side: the
 * handshake (Sec-WebSocket-Key/Accept, the subprotocol chosen from the
 * client's list) on http_upgrade, the framing by libwslay. A message is
 * delivered whole (wslay joins fragments) up to a maximum length; a
 * longer one, a protocol error or a close from the peer ends the socket
 * with the close code RFC 6455 gives, and on_close says so once.
 */
#ifndef VOLRAY_WEBSOCKET_H
#define VOLRAY_WEBSOCKET_H

#include <stddef.h>
#include <stdint.h>

#include "net/http.h"

typedef struct ws ws;

struct ws_callbacks {
	/* A whole message: binary (1) or text (0). */
	void (*on_message)(void *arg, int binary, const char *data,
	    size_t len);
	/* The socket is done (the peer closed, went away, or broke the
	   protocol); nothing is delivered afterwards. Owner calls ws_free. */
	void (*on_close)(void *arg);
};

/*
 * Whether req asks for a WebSocket (GET, Upgrade: websocket, a key):
 * 1 yes, 0 it is no WebSocket request at all, -1 a malformed one.
 */
int ws_is_upgrade(const http_req *);
/*
 * The first subprotocol of the client's Sec-WebSocket-Protocol list that
 * is among ours (NULL-terminated), or NULL.
 */
const char *ws_pick_protocol(const http_req *, const char *const *ours);
/*
 * Answer the handshake (101, with the protocol when not NULL) and run the
 * socket on req's connection; max_msg bounds a received message.
 */
ws *ws_accept(http_req *, const char *protocol, size_t max_msg,
    const struct ws_callbacks *, void *arg);
/* Queue a message; -1 when the socket is closing or gone. */
int ws_send(ws *, int binary, const char *data, size_t len);
/* Bytes queued but not yet written to the socket. */
size_t ws_pending(const ws *);
/* Stop (1) or resume (0) reading: backpressure on the peer. */
void ws_pause(ws *, int paused);
/*
 * Close: a close frame with code (1000 normal) after what is queued, then
 * the connection. on_close follows when the peer answers or goes.
 */
void ws_close(ws *, uint16_t code, const char *reason);
/* Release it (the request is finished; no callback afterwards). */
void ws_free(ws *);

#endif
