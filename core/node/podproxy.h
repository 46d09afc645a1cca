/*
 * The node endpoint's way to a local pod's port (podproxy.c): a request
 * for /volray/proxy/NS/POD/PORT/PATH that no in-process server takes
 * goes to the pod's address (node_mgr_pod_addr) in plain HTTP, and the
 * answer comes back as it arrives, as the API server's proxies reach
 * this process's own pods.
 */
#ifndef VOLRAY_NODE_PODPROXY_H
#define VOLRAY_NODE_PODPROXY_H

#include <uv.h>

#include "net/http.h"
#include "node/node.h"

/*
 * Send req to port of pod ns/name at path (the query is req's): 0 when
 * taken (answered by the pod, or 503 when it does not answer), -1 when
 * m runs no such pod here.
 */
int podproxy_forward(node_mgr *m, uv_loop_t *loop, http_req *req,
    const char *ns, const char *name, int port, const char *path);

/* The endpoint closes: the client goes (no request may be in flight). */
void podproxy_close(void);

#endif
