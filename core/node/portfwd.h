/*
 * Port-forward's files: portfwd.c (the entry, the channel protocol)
 * hands SPDY to portfwd_spdy.c once the pod is checked; both dial through
 * portfwd_dial.c.
 */
#ifndef VOLRAY_PORTFWD_H
#define VOLRAY_PORTFWD_H

#include <uv.h>

#include "net/http.h"
#include "node/node.h"

/* The WebSocket subprotocol that carries SPDY (kubectl 1.31+). */
#define PORTFWD_SPDY_WS	"SPDY/3.1+portforward.k8s.io"

/*
 * SPDY/3.1 after an HTTP upgrade (Upgrade: SPDY/3.1,
 * X-Stream-Protocol-Version: portforward.k8s.io), or inside the binary
 * messages of a WebSocket (protocol PORTFWD_SPDY_WS). 0 when req is
 * taken, else an HTTP status and *msg.
 */
int portfwd_spdy_upgrade(node_mgr *, http_req *, const char *ns,
    const char *pod, char **msg);
int portfwd_spdy_ws(node_mgr *, http_req *, const char *proto,
    const char *ns, const char *pod, char **msg);
/*
 * Dial what serves port of pod ns/name on this machine (portfwd_dial.c): its
 * own port for a local pod, the mapped one for a simulated pod (a Ray
 * head's dashboard). NULL with *cause when nothing can.
 */
struct dial_cb;
struct dial *portfwd_dial(node_mgr *, const char *ns, const char *pod,
    int port, const struct dial_cb *, void *arg, char **cause);

#endif
