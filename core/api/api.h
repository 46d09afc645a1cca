/*
 * The Kubernetes HTTP API: routes requests to discovery, OpenAPI, health,
 * metrics, and the object verbs (get, list, watch, create, update, patch,
 * delete, deletecollection) with their subresources (status, binding, log).
 */
#ifndef VOLRAY_API_H
#define VOLRAY_API_H

#include <uv.h>

#include "api/watch.h"
#include "auth/authn.h"
#include "net/http.h"
#include "registry/registry.h"
#include "store/store.h"

typedef struct api api;

api *api_new(uv_loop_t *, store *, registry *, watch_hub *,
    const char *data_dir);
void api_free(api *);
/* The http_handler to give http_server_listen (arg is the api). */
void api_handle(http_req *, void *arg);
void api_set_ready(api *, int ready);
/* Refuse writes with 503 (shutting down). */
void api_set_draining(api *, int draining);
void api_set_server(api *, http_server *);
/*
 * The client the API's own writes go through (borrowed): the status of
 * stored APIServices, which a timer set here starts checking.
 */
struct client;
void api_set_client(api *, struct client *);
/*
 * Authenticate every request except /healthz, /livez, /readyz and
 * /version with a (borrowed); without one every request is anonymous and
 * allowed (unit tests only: volrayd always sets one).
 */
void api_set_authn(api *, authn *);
/* Refuse requests over these limits with 429 (borrowed; NULL: none). */
typedef struct limits limits;
void api_set_limits(api *, limits *);
/* Authorize every authenticated request with RBAC (borrowed; NULL: none). */
typedef struct rbac rbac;
void api_set_authorizer(api *, rbac *);
/*
 * The targets of the service and pod proxies (/api/v1/namespaces/NS/
 * services/NAME:PORT/proxy/PATH): serves says whether pod ns/name serves
 * port here; fn answers the request for path (0) or declines (-1).
 */
typedef int (*api_proxy_fn)(void *arg, http_req *, const char *ns,
    const char *pod, int port, const char *path);
typedef int (*api_proxy_serves_fn)(void *arg, const char *ns,
    const char *pod, int port);
void api_set_proxy(api *, api_proxy_fn, api_proxy_serves_fn, void *arg);
/*
 * Where this process reaches a pod's ports itself (the local node's
 * pods): 0 with its address in host, -1 when it does not. The proxies
 * send what no in-process target serves there, in plain HTTP, on
 * sockets open_socket makes (NULL: socket(2); the pod network's
 * podnet_socket, which reaches pod IPs the host has no route to).
 */
typedef int (*api_pod_addr_fn)(void *arg, const char *ns, const char *pod,
    char *host, size_t size);
void api_set_pod_addr(api *, api_pod_addr_fn,
    int (*open_socket)(int, int, int), void *arg);
/*
 * GET /apis/volray.io/v1/rayhistory/...: fn answers (0) or declines
 * (-1: 404); authorized as a non-resource path.
 */
typedef int (*api_history_fn)(void *arg, http_req *);
void api_set_history(api *, api_history_fn, void *arg);
/*
 * The nodes whose pods this process runs (node_mgr_has_runtime): their
 * logs are read and their heads proxied here. The others' are asked of
 * their endpoints (an agent's, `--roles nodes`), showing cert_pem/key_pem
 * (copied; NULL: none) as the API server's client certificate.
 */
void api_set_nodes(api *, int (*local)(void *, const char *node), void *arg,
    const char *cert_pem, const char *key_pem);
/*
 * kubectl exec, attach and port-forward into a pod of this process's
 * nodes (node_exec_serve, node_attach_serve, node_portforward_serve): 0 when req is taken, else an
 * HTTP status and *msg.
 */
typedef int (*api_exec_fn)(void *arg, http_req *, const char *ns,
    const char *pod, const char *ctr, char **msg);
typedef int (*api_portforward_fn)(void *arg, http_req *, const char *ns,
    const char *pod, char **msg);
void api_set_streams(api *, api_exec_fn exec, api_exec_fn attach,
    api_portforward_fn, void *arg);
/*
 * What a container of this process's nodes used over the last window (1
 * with the CPU rate in nanocores and the memory in bytes, 0 when not
 * measured): metrics.k8s.io's figures (node_mgr_usage).
 */
typedef int (*api_usage_fn)(void *arg, const char *uid, const char *ctr,
    uint64_t *nanocores, uint64_t *mem_bytes);
void api_set_usage(api *, api_usage_fn, void *arg);
/* POST /apis/volray.io/v1/policy/reload calls fn (0, or -1 with cause). */
void api_set_reload(api *, int (*fn)(void *, char **), void *arg);
/* GET /apis/volray.io/v1/policy lists what these two run (either may be
 * NULL); see policyinfo.c. */
struct controller_rt;
struct sched;
void api_set_policy_sources(api *, struct controller_rt *, struct sched *);

#endif
