/*
 * The kubelet's side of volray: a node manager that takes charge of the
 * Nodes a runtime serves (every Node labelled volray.io/runtime=virtual,
 * simulated, and this machine's own, which runs containers' commands as
 * processes), keeps them Ready with a Lease
 * heartbeat in kube-node-lease, and runs the pods bound to them through
 * the real pod lifecycle (admission, init containers, restarts with the
 * kubelet's back-off, graceful termination, status).
 */
#ifndef VOLRAY_NODE_H
#define VOLRAY_NODE_H

#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "client/client.h"
#include "net/http.h"

typedef struct node_mgr node_mgr;

struct node_stats {
	uint64_t nodes;			/* managed now */
	uint64_t pods;			/* managed now */
	uint64_t waiting;		/* bound here, not yet taken on */
	uint64_t status_writes;
	uint64_t lease_writes;
	uint64_t starts;		/* container instances started */
};

/*
 * The kinds (store keys) a node manager reads through its client: what a
 * process of the nodes role mirrors of a remote API. NULL-terminated.
 */
extern const char *const node_mgr_kinds[];

/* A node manager that sees and writes objects through c (borrowed). */
node_mgr *node_mgr_new(uv_loop_t *, client *c);
/*
 * Whether pods on this node have a runtime here to stop them: the API
 * server's hook for graceful pod deletion (registry_set_pod_runtime),
 * with the node manager as arg.
 */
int node_mgr_has_runtime(void *mgr, const char *node);
/*
 * Where pods' directories and logs go (DATA_DIR), and the name this
 * machine registers as the local node (NULL: none). Before start.
 */
void node_mgr_set_local(node_mgr *, const char *data_dir, const char *name);
/*
 * The nodes' endpoint (endpoint.h) the API server reaches them on: every
 * Node of this manager reports addr as its InternalIP and port as its
 * status.daemonEndpoints.kubeletEndpoint.Port. Before start.
 */
void node_mgr_set_endpoint(node_mgr *, const char *addr, int port);
/*
 * Which Nodes labelled volray.io/runtime=virtual this manager simulates:
 * none (enabled 0), or those sel matches too (a label selector, taken;
 * NULL: all of them, the default). Several agents of one cluster share
 * its virtual Nodes out this way, as kwok's label selector does. Before
 * start.
 */
struct selector;
void node_mgr_set_virtual(node_mgr *, int enabled, struct selector *sel);
/* The volray-shim program the local node runs each container under. */
void node_mgr_set_shim(node_mgr *, const char *path);
/* The timer wheel that drives the runtimes (others may share it). */
struct wheel *node_mgr_wheel(node_mgr *);
/* volrayd is stopping: kill every process of the local node's pods. */
void node_mgr_shutdown(node_mgr *);
void node_mgr_free(node_mgr *);
/* The Leases' duration (default 40 s), renewed every quarter of it. */
void node_mgr_set_lease_duration(node_mgr *, int seconds);
/* Take charge of the managed Nodes and their pods already stored. */
void node_mgr_start(node_mgr *);
void node_mgr_stats(const node_mgr *, struct node_stats *);
/* "local" or "virtual" for a Node this manager serves, else NULL. */
const char *node_mgr_runtime(node_mgr *, const char *node_name);
/*
 * kubectl exec into container ctr of pod ns/name, which a node of the
 * manager mgr runs (api_set_exec's hook) (exec.c): the WebSocket channel protocol on req, the
 * command and streams from its query. 0 when req is taken (answered by
 * the session), else the HTTP status to refuse it with and *msg
 * (malloc'd), as a kubelet refuses: 400 not a WebSocket or a container
 * not running, 404 no such pod or container here, 500 no process.
 */
int node_exec_serve(void *mgr, http_req *, const char *ns,
    const char *pod, const char *ctr, char **msg);
/*
 * Where port-forward reaches port of a pod of a simulated node: a port
 * on 127.0.0.1, or -1 (ray_forward_port: a Ray head's dashboard). Local
 * pods are reached on their own port.
 */
typedef int (*node_portmap_fn)(void *arg, const char *ns, const char *pod,
    int port);
void node_mgr_set_portmap(node_mgr *, node_portmap_fn, void *arg);
/*
 * A container's command given an effect on a simulated node: start is
 * asked for each container started (init: an init container); it
 * returns a handle when it takes the container, and calls done with the
 * command's exit code when it ends; NULL: the container runs as any
 * simulated one. cancel (the container stopped, or after done) releases
 * the handle. ray_sim_effect is the Ray heads' (KubeRay's submitters,
 * Redis cleanup Jobs, workers' raylets).
 */
typedef void *(*node_sim_effect_fn)(void *arg, const char *ns,
    const char *pod, const char *ctr, int init,
    void (*done)(void *, int code), void *done_arg);
void node_mgr_set_sim_effect(node_mgr *, node_sim_effect_fn start,
    void (*cancel)(void *handle), void *arg);
/* kubectl attach to container ctr (exec.c, attach.c): as exec. */
int node_attach_serve(void *mgr, http_req *, const char *ns,
    const char *pod, const char *ctr, char **msg);
/*
 * Port-forward into pod ns/name (portfwd.c): SPDY/3.1 (an upgrade, or in
 * a WebSocket) or the WebSocket channel protocol on req, to the ports of
 * this machine the pod listens on. Returns as node_exec_serve.
 */
int node_portforward_serve(void *mgr, http_req *, const char *ns,
    const char *pod, char **msg);
/*
 * The address at which this process reaches the ports of pod ns/name
 * (into host): 0 for a pod the local node runs, -1 otherwise. With
 * mgr, for api_set_pod_addr.
 */
int node_mgr_pod_addr(node_mgr *mgr, const char *ns, const char *name,
    char *host, size_t size);
/* DATA_DIR/pods/NS/NAME (malloc'd): a pod's directory on the local node. */
char *node_mgr_pod_dir(node_mgr *, const char *ns, const char *name);

/*
 * More environment for every process the local node starts (containers,
 * exec probes, node_proc_start): hook calls set(env, NAME, VALUE) for
 * each; the pod's own env still wins. One hook; NULL removes it.
 */
typedef void (*node_env_set_fn)(void *env, const char *name,
    const char *value);
typedef void (*node_env_hook)(void *arg, const char *ns, const char *pod,
    node_env_set_fn set, void *env);
void node_mgr_set_env_hook(node_mgr *, node_env_hook, void *arg);
/*
 * Where the local node's pods get service-account tokens (projected
 * serviceAccountToken volumes, the kube-api-access-XXXXX volume): a token
 * for account ns/sa, kept by the hook (NULL: none). Without a hook the
 * volumes get no token file.
 */
typedef const char *(*node_token_fn)(void *arg, const char *ns,
    const char *sa);
void node_mgr_set_token_hook(node_mgr *, node_token_fn, void *arg);

/*
 * A process run on behalf of a pod on the local node, beside its
 * containers: argv with the environment of the pod's container ctr (NULL:
 * the first) plus env ("NAME=VALUE", NULL-terminated, may be NULL), in cwd
 * (NULL: the pod's root directory), in a process group of its own, output appended to
 * log_path, with a pid file (DATA_DIR/pods/NS/NAME/ID.pid) so a restarted
 * daemon kills what the last one left. When it ends, done(arg, code)
 * follows (code 128+N for signal N) and the handle is freed.
 */
typedef struct node_proc node_proc;
typedef void (*node_proc_done)(void *arg, int code);
node_proc *node_proc_start(node_mgr *, const char *ns, const char *pod,
    const char *ctr, const char *id, char *const *argv, char *const *env,
    const char *cwd, const char *log_path, node_proc_done done, void *arg, char **cause);
/* SIGTERM to its process group, SIGKILL after grace_ms (0: at once). */
void node_proc_stop(node_proc *, uint64_t grace_ms);

/*
 * What a local container used over the last window (usage.c): 1 with the
 * CPU rate and the memory, 0 when not known (a simulated container, no
 * cgroups, not two samples yet). With the node manager as mgr, for
 * api_set_usage.
 */
int node_mgr_usage(void *mgr, const char *uid, const char *ctr,
    uint64_t *nanocores, uint64_t *mem_bytes);
/* The local containers' usage in the metrics text format. */
void node_mgr_print_usage(FILE *, const node_mgr *);

#endif
