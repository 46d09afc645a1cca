/*
 * Internals shared by api.c (routing) and the handlers it dispatches to:
 * api_read.c (get, list, watch), api_write.c (create, update, patch,
 * delete, binding, scale, eviction), podlog.c (pods/log), proxy.c
 * (service, pod and node proxies), nodeproxy.c (the way to a node another
 * process runs) and policyinfo.c (the policy list). They answer through
 * reply.c, below them all, which needs only the request (route.h).
 */
#ifndef VOLRAY_API_INT_H
#define VOLRAY_API_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "api/api.h"
#include "api/limits.h"
#include "api/route.h"
#include "lib/user.h"
#include "registry/resource.h"

struct api {
	uv_loop_t *loop;
	store *st;
	registry *rg;
	watch_hub *hub;
	http_server *srv;
	char *data_dir;
	int ready;
	int draining;
	int (*reload)(void *, char **);
	void *reload_arg;
	authn *authn;
	limits *limits;
	struct rbac *authz;
	api_proxy_fn proxy;		/* the in-process proxy targets */
	api_proxy_serves_fn proxy_serves;
	void *proxy_arg;
	api_pod_addr_fn pod_addr;	/* pods reached directly, or NULL */
	void *pod_addr_arg;
	int (*pod_socket)(int, int, int);	/* the pods' sockets */
	struct hclient *pods_hc;	/* proxy.c's plain HTTP to them */
	int (*node_local)(void *, const char *node);	/* NULL: none */
	void *node_local_arg;
	char *node_cert, *node_key;	/* nodeproxy.c's credentials */
	struct hclient *nodes_hc;
	struct tls_ctx *nodes_tls;	/* streamrelay.c's, made once */
	api_exec_fn exec;		/* podstream.c: this process's pods */
	api_exec_fn attach;
	api_portforward_fn portforward;
	void *exec_arg;
	api_usage_fn usage;		/* metricsapi.c's measured figures */
	void *usage_arg;
	struct controller_rt *policy_ctrl;	/* policyinfo.c */
	struct sched *policy_sched;
	api_history_fn history;		/* the Ray job history, or NULL */
	void *history_arg;
	struct client *client;		/* apiservice_avail.c's writes */
	struct apiservice_avail *avail;
};

/*
 * The handlers api.c dispatches to, one file each; they answer through
 * reply.c and call nothing in api.c.
 */
/* api_etcd.c: a request on the etcd-backed store, handed to its verb's
   handler by dispatch (api.c's) when the store is ready for it. */
typedef void (*api_dispatch_fn)(api *, http_req *, struct route *, int);
void api_etcd_run(api *, http_req *, const struct route *, int watch,
    api_dispatch_fn dispatch);
/* api_read.c: get, list, watch. */
void api_read_get(api *, http_req *, struct route *);
void api_read_list(api *, http_req *, struct route *);
void api_read_watch(api *, http_req *, struct route *);
/* api_write.c: create, update, patch, delete, and the subresources. */
void api_write_create(api *, http_req *, struct route *);
void api_write_update(api *, http_req *, struct route *);
void api_write_patch(api *, http_req *, struct route *);
void api_write_delete(api *, http_req *, struct route *);
void api_write_delete_collection(api *, http_req *, struct route *);
void api_write_bind(api *, http_req *, struct route *);
void api_write_scale(api *, http_req *, struct route *);
void api_write_evict(api *, http_req *, struct route *);
/* podlog.c: GET pods/NAME/log. */
void podlog_get(api *, http_req *, struct route *);
/* podstream.c: pods/exec, pods/attach, pods/portforward. */
void podstream_serve(api *, http_req *, struct route *);
/*
 * streamrelay.c: relay an upgrade request to node's endpoint at path
 * (the query kept) and, once it switches protocols, the bytes both ways.
 */
void streamrelay_forward(api *, http_req *, struct route *,
    const char *node, const char *path);
/* proxy.c: 1 when the path is a service or pod proxy (answered). */
int proxy_serve(api *, http_req *, struct route *);
/*
 * nodeproxy.c: the address (into host) and port of node's endpoint; -1
 * with a Status in *st.
 */
int nodeproxy_addr(api *, const char *node, char *host, size_t size,
    int *port, cJSON **st);
/* nodeproxy.c: whether another process runs node (NULL or "": none). */
int nodeproxy_remote(const api *, const char *node);
/*
 * nodeproxy.c: answer req with what node's endpoint answers at path
 * (with its query), relayed as it comes.
 */
void nodeproxy_forward(api *, http_req *, struct route *, const char *node,
    const char *path);
/* nodeproxy.c: the same to another process's endpoint at base
   (https://HOST:PORT), with the same credentials: the scheduler's. */
void nodeproxy_forward_url(api *, http_req *, struct route *,
    const char *base, const char *path);
/* nodeproxy.c: the same through client hc (its credentials), with more
   request headers ("Name: value", NULL-terminated; may be NULL). */
void nodeproxy_forward_with(api *, http_req *, struct route *,
    struct hclient *hc, const char *base, const char *path,
    const char *const *headers);
/* nodeproxy.c: the same to a pod's port at host in plain HTTP (hc: no
   credentials); no connection is kube-apiserver's 503 "dial tcp". */
void nodeproxy_forward_pod(api *, http_req *, struct route *,
    struct hclient *hc, const char *host, int port, const char *path,
    const char *const *headers);
/* metricsapi.c: metrics.k8s.io NodeMetrics and PodMetrics. */
void metricsapi_get(api *, http_req *, struct route *);
void metricsapi_list(api *, http_req *, struct route *);
/*
 * apiservice.c: apiregistration.k8s.io APIServices. 1 when it answered
 * the request (a list, a Local one's get, a write to a Local one
 * refused); 0 leaves it to the stored path.
 */
int apiservice_serve(api *, http_req *, struct route *, int watch);
/*
 * apiservice.c: a request under /apis/GROUP/VERSION of a stored
 * service-backed APIService, proxied to its server (1), or 0.
 */
int apiservice_proxy(api *, http_req *, struct route *, const char *group,
    const char *version);
/*
 * apiservice.c: discovery with the stored service-backed APIServices'
 * groups: doc (the local document of path, or NULL) completed, or a new
 * one; NULL when path has none.
 */
cJSON *apiservice_discovery(api *, const char *path, cJSON *doc);
/* apiservice.c: the Local ones' creation time, and the checker. */
void apiservice_start(api *);
/* apiservice_avail.c: the checker of stored APIServices' status. */
void apiservice_avail_start(api *);
/*
 * apiservice_avail.c: the base URL ("https://IP:PORT") of a service-backed
 * APIService's server, 0; or -1 with kube-aggregator's reason and message
 * for the Available condition. sig (may be NULL) gets the revisions of the
 * objects it read.
 */
int apiservice_backend(api *, const cJSON *as, char *base, size_t n,
    const char **reason, char *msg, size_t msgn, char *sig, size_t sign);
/* apiservice_avail.c: the client of a stored service-backed APIService,
   trusting what it says (made again when its caBundle or
   insecureSkipTLSVerify changed); NULL when libcurl refuses. */
struct hclient *apiservice_client(api *, const cJSON *as);
/* policyinfo.c: GET /apis/volray.io/v1/policy. */
void policyinfo_get(api *, http_req *, struct route *);
/* explaininfo.c: GET /apis/volray.io/v1/explain/...: why a job waits. */
int explaininfo_path(const char *path);
void explaininfo_get(api *, http_req *, struct route *);

#endif
