/*
 * The endpoint of the nodes this process runs, as a kubelet serves its
 * port (10250) to the API server: an agent (`volrayd --roles nodes
 * --kubeconfig`) is reached there by the API server of another machine
 * for what lives only on the agent, a pod's container log (kubectl logs)
 * and the Ray heads it runs (the service proxy to <cluster>-head-svc:8265).
 *   GET  /healthz
 *   GET  /containerLogs/NS/POD/CONTAINER?sinceSeconds&sinceTime&tailLines
 *        &limitBytes&timestamps&follow&previous     (the kubelet's)
 *   GET  /exec/NS/POD/CONTAINER?command&stdin&...  (the kubelet's: kubectl
 *        exec, a WebSocket, relayed by the API server)
 *   GET  /attach/NS/POD/CONTAINER?stdin&stdout&...  (the kubelet's: attach)
 *   ANY  /portForward/NS/POD?ports                  (the kubelet's: kubectl
 *        port-forward, SPDY or a WebSocket)
 *   ANY  /volray/proxy/NS/POD/PORT/PATH?QUERY       (volray's: the pod's
 *        in-process server on PORT, an emulated Ray head's dashboard,
 *        else a local pod's own, at its address: podproxy.c)
 *   ANY  PREFIX...                                  (a handler the
 *        process adds: the scheduler's /volray/explain/)
 * A process with the scheduler role and no nodes serves the same endpoint
 * for its handler alone.
 * HTTPS only, and only for a client certificate the cluster's CA issued to
 * the API server (CN kube-apiserver-kubelet-client, or in the group
 * system:masters): none is 401, another identity 403, as a kubelet with
 * x509 authentication answers.
 */
#ifndef VOLRAY_NODE_ENDPOINT_H
#define VOLRAY_NODE_ENDPOINT_H

#include <uv.h>

#include "client/client.h"
#include "net/http.h"
#include "node/node.h"

typedef struct node_endpoint node_endpoint;

/* The in-process servers of pods (the Ray heads): as api_set_proxy's. */
typedef int (*node_endpoint_proxy_fn)(void *arg, http_req *, const char *ns,
    const char *pod, int port, const char *path);
typedef int (*node_endpoint_serves_fn)(void *arg, const char *ns,
    const char *pod, int port);

/*
 * Pods read through c (borrowed); logs under data_dir/pods/; served with
 * tls (owned: freed with the endpoint).
 */
node_endpoint *node_endpoint_new(uv_loop_t *, client *c,
    const char *data_dir, tls_ctx *tls);
/* The node manager whose pods exec and portForward reach (borrowed). */
void node_endpoint_set_mgr(node_endpoint *, node_mgr *);
void node_endpoint_set_proxy(node_endpoint *, node_endpoint_proxy_fn,
    node_endpoint_serves_fn, void *arg);
/* Requests whose path starts with prefix (copied) go to fn with the rest
   of the path, once the API server's credentials are checked. One. */
typedef void (*node_endpoint_handler_fn)(void *arg, http_req *,
    const char *rest);
void node_endpoint_set_handler(node_endpoint *, const char *prefix,
    node_endpoint_handler_fn, void *arg);
/* Serve on host:port (0: the kernel picks). 0, or -1 with *cause. */
int node_endpoint_listen(node_endpoint *, const char *host, int port,
    char **cause);
/* The port bound, or -1. */
int node_endpoint_port(const node_endpoint *);
void node_endpoint_free(node_endpoint *);

#endif
