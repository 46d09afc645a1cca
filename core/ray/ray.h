/*
 * Ray without Ray: every Ray head pod (label ray.io/node-type: head) on a
 * node this daemon runs serves the Ray dashboard's Jobs API and Serve REST
 * API from volrayd itself. Jobs run as real processes in the head pod's
 * directory on the local node and are simulated on virtual nodes (their
 * metadata's volray.io/sim-duration and volray.io/sim-exit-code); Serve
 * applications are simulated everywhere. The API reaches a head through
 * the API server's service and pod proxies (api/proxy.c calls
 * ray_dashboard); a head on the local node is also served on
 * 127.0.0.1:<dashboard port> in plain HTTP while it is Running there.
 * Job state is kept in the head pod's directory and survives a restart
 * of volrayd. Documented in volrayd(8), "RAY HEADS".
 */
#ifndef VOLRAY_RAY_H
#define VOLRAY_RAY_H

#include <uv.h>

#include "client/client.h"
#include "net/http.h"
#include "node/node.h"

typedef struct ray ray;

/* The heads, seen through c (borrowed), run on nodes' runtimes. */
/* The kinds (store keys) the heads read through their client;
   NULL-terminated. */
extern const char *const ray_kinds[];
ray *ray_new(uv_loop_t *, client *c, node_mgr *nodes);
/* Take charge of the head pods already stored; follow the store. */
void ray_start(ray *);
/* Stop listening; jobs are left as they are (the files keep them). */
void ray_shutdown(ray *);
/*
 * Answer a dashboard request (path "/api/jobs/...", query in req) for
 * port of pod ns/name. 0 when answered; -1 when that pod serves nothing
 * on that port here (the caller answers as for a refused connection).
 * proxied: it came through the API server's proxies, whose Authorization
 * header was the API's, not the head's (auth.c).
 */
int ray_dashboard(ray *, http_req *, const char *ns, const char *pod,
    int port, const char *path, int proxied);
/*
 * Give every process of the local node's pods `ray` first on PATH
 * (bin_dir) and the daemon's API (api_url, ca_file) with a token for its
 * namespace's identity, which mint makes (podenv.c; volrayd(8)).
 */
typedef char *(*ray_mint_fn)(void *arg, const char *user,
    const char *groups);
void ray_set_pod_env(ray *, const char *bin_dir,
    const char *api_url, const char *ca_file, ray_mint_fn mint, void *arg);
/* The API's URL for pods with a network of their own (the pod network's
   gateway), once it serves there; NULL: the one above for all. */
void ray_set_pods_api(ray *, const char *url);
/* Whether pod ns/name is a head that serves port right now. */
int ray_serves(ray *, const char *ns, const char *pod, int port);
/*
 * The port on 127.0.0.1 where head ns/name's dashboard port is served,
 * for port-forward: a local head's own listener, or for a simulated one
 * a listener on a port the kernel picks, made at the first call and
 * closed with the head. -1 when the pod serves nothing on port here.
 */
int ray_forward_port(ray *, const char *ns, const char *pod, int port);
/*
 * What Ray's command in container ctr of pod ns/pod on a simulated node
 * would do (simeffect.c): a handle when it is Ray's to play (a KubeRay
 * submitter, the Redis cleanup Job, a worker's raylet), done getting the
 * command's exit code; NULL otherwise. The node manager's hook
 * (node_mgr_set_sim_effect), with the ray as rp.
 */
void *ray_sim_effect(void *rp, const char *ns, const char *pod,
    const char *ctr, int init, void (*done)(void *, int), void *arg);
void ray_sim_effect_cancel(void *handle);
/*
 * Keep every Ray job that ends in dir, at most max_jobs of them and
 * max_bytes (the oldest go first), after its cluster is gone
 * (history.c); max_jobs 0 keeps none.
 */
/* Where the embedded GCS storage goes (DATA_DIR/gcs-storage/...). */
void ray_set_data_dir(ray *, const char *dir);
void ray_set_history(ray *, const char *dir, long max_jobs,
    long long max_bytes);
/*
 * GET /apis/volray.io/v1/rayhistory/namespaces/NS/...: 0 when answered,
 * -1 when req is not for that path.
 */
int ray_history_serve(ray *, http_req *);

#endif
