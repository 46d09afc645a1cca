/*
 * An outgoing byte stream on libuv, plain TCP or TLS (a client context of
 * tls.h): what port-forward dials to a pod's port on this machine, and
 * what the API server relays an upgraded connection (exec, port-forward)
 * over to a node's endpoint. Connect (an address literal or a name, looked
 * up), then hand over what arrives, write what the owner brings (queued
 * while connecting), half-close, and say once how it ended.
 */
#ifndef VOLRAY_DIAL_H
#define VOLRAY_DIAL_H

#include <stddef.h>
#include <uv.h>

#include "net/tls.h"

typedef struct dial dial;

struct dial_cb {
	/* Connected (and the TLS handshake done): error NULL; else why
	   not ("dial tcp 127.0.0.1:1: connection refused"). */
	void (*connected)(void *arg, const char *error);
	/* Bytes from the peer (decrypted). */
	void (*data)(void *arg, const char *data, size_t len);
	/* The peer's side is done (EOF or an error); nothing follows. */
	void (*ended)(void *arg);
};

/*
 * Dial host:port, with TLS when tls is not NULL (borrowed). The callbacks
 * come from the loop, never from inside this call: NULL with *cause
 * (malloc'd) when the dial cannot even start (a port out of range).
 */
dial *dial_open(uv_loop_t *, const char *host, int port, tls_ctx *tls,
    const struct dial_cb *, void *arg, char **cause);
/* Write (copied); -1 once the connection is gone or shut down. */
int dial_write(dial *, const char *data, size_t len);
/* Bytes written but not yet taken by the kernel. */
size_t dial_pending(const dial *);
/* Our side is done: shut down writing after what is queued. */
void dial_shutdown(dial *);
/* Stop (1) or resume (0) reading: backpressure. */
void dial_pause(dial *, int paused);
/* Close and release; no callback afterwards. */
void dial_free(dial *);

#endif
