/*
 * Internals shared by the node runtimes: the node manager (nodes.c), the
 * pod worker common to every runtime (podworker.c, its status writes in
 * podstatus.c, its probes in probe.c (grpc ones through grpcprobe.c),
 * its Events in podevent.c, what a restart takes back in
 * podrestore.c) and the runtimes themselves (runtime.h: sim.c, local.c
 * with ctrenv.c, orphans.c and cgroup.c). A runtime only starts and stops
 * container instances and reports how each one ended; the pod worker
 * decides everything a kubelet decides (admission, init order, restarts
 * and back-off, graceful termination, status). Calls go one way: the
 * manager to the pod worker, the pod worker to its status, probes and
 * the runtimes (through their tables), the runtimes back only by
 * podworker_ctr_exited.
 */
#ifndef VOLRAY_NODE_INT_H
#define VOLRAY_NODE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include <uv.h>

#include "client/client.h"
#include "client/recorder.h"
#include "lib/hmap.h"
#include "lib/podspec.h"
#include "node/grpcprobe.h"
#include "node/node.h"
#include "node/runtime.h"
#include "node/wheel.h"

struct node;
struct node_pod;
struct node_ctr;

enum { PROBE_STARTUP, PROBE_LIVENESS, PROBE_READINESS, PROBE_TYPES };
struct probe;

/* probe.c: a container's probes, from its spec; run while it runs. */
void probe_init(struct node_ctr *, const cJSON *spec);
void probe_start(struct node_ctr *);
void probe_stop(struct node_ctr *);
void probe_free(struct node_ctr *);

/* ctrenv.c: a local container's environment and volumes. */
struct ctrenv {
	char **kv;			/* "NAME=VALUE", NULL-terminated */
	int n;
	size_t cap;
};
/* mkdir -p, mode 0700 for what it makes. */
int ctrenv_mkdirs(const char *path);
void ctrenv_set(struct ctrenv *, const char *name, const char *value);
/* Kubernetes' $(VAR) expansion: defined names expand, $$ is a $. */
char *ctrenv_expand(const struct ctrenv *, const char *s);
/* The container's environment into e; -1 with *cause (a missing key). */
int ctrenv_build(struct node *, struct node_pod *, const cJSON *pod,
    const cJSON *spec, const char *root, struct ctrenv *e, char **cause);
/* Its volumes under root; -1 with *cause. */
int ctrenv_mount(struct node *, struct node_pod *, const cJSON *pod,
    const cJSON *spec, const char *root, char **cause);
/* Its service-account tokens written again (a container taken back). */
void ctrenv_renew_tokens(struct node *, struct node_pod *, const cJSON *pod,
    const cJSON *spec, const char *root);
void ctrenv_free(struct ctrenv *);

/*
 * mountplan.c: a local container's mounts, as root: whether they are
 * made (root, mount namespaces), and the plan for volray-shim -M written
 * to plan, with the pod's hosts and resolv.conf beside it. -1 with *cause.
 */
int mountplan_enabled(void);
int mountplan_write(struct node *, struct node_pod *, const cJSON *pod,
    const cJSON *spec, const char *root, const char *plan, char **cause);
/* Whether the container gets the default 64 MiB /dev/shm (no emptyDir
   of medium Memory mounted there). */
int mountplan_shm_default(const cJSON *pod, const cJSON *spec);

/*
 * podnet.c: the local node's pod network, the node manager's side
 * (podnet.h has what the rest of volrayd calls). podnet_start at the
 * node manager's start (-1 with *cause: pods share the host's network);
 * podnet_has: whether pod p has a namespace of its own; podnet_assign:
 * its address into p->ip (a restored one kept when free); podnet_pod_up:
 * its namespace made unless there, its file into path; podnet_pod_enter:
 * the thread into it (podnet_leave goes back); podnet_pod_down: both
 * gone; podnet_sweep: after a restart, the namespaces of pods not here
 * go; podnet_stop: everything goes (volrayd stops).
 */
int podnet_start(node_mgr *, int real_ray, char **cause);
int podnet_has(const struct node_pod *);
/* The pod's cluster DNS server, or NULL when it shares the host's. */
const char *podnet_nameserver(const struct node_pod *);
int podnet_assign(struct node_pod *, char **cause);
int podnet_pod_up(struct node_pod *, char *path, size_t size, char **cause);
int podnet_pod_enter(const struct node_pod *);
void podnet_pod_down(struct node_pod *);
void podnet_sweep(node_mgr *);
void podnet_stop(void);
/* A Service or Endpoints changed: the Service rules (svcproxy.c) and
   cluster DNS's records (clusterdns.c) again, soon. */
void podnet_services_changed(node_mgr *);
/* The kubernetes Service's variables for a container of p (KUBERNETES_
   SERVICE_HOST...), unless its env sets them. */
void podnet_env(const struct node_pod *, const cJSON *spec,
    struct ctrenv *);

/*
 * svcproxy.c: Services on the pod network as kube-proxy's nftables mode
 * makes them: the rules podnet.c puts in the node's namespace (malloc'd
 * nft text).
 */
char *svcproxy_rules(node_mgr *, const char *gw, const char *svc_range);

/*
 * clusterdns.c: cluster DNS for the pod network (dnsmasq in the node's
 * namespace on gw:53, fed a hosts file): started by podnet_start with
 * the node's and the host's network namespaces (-1 with *cause: no DNS),
 * refreshed with the Service rules, stopped first.
 */
int clusterdns_start(node_mgr *, const char *gw, int node_ns_fd,
    int host_ns_fd, char **cause);
void clusterdns_refresh(void);
void clusterdns_stop(void);

/* orphans.c: a container a previous volrayd left, from its pid file. */
struct orphan {
	char ns[256], name[256], ctr[256], uid[128];
	char dir[4096];			/* DATA_DIR/pods/NS/NAME */
	int cmd_pid, shim_pid;
	unsigned long long cmd_start, shim_start;
	int alive;			/* the shim runs; else it left a status */
	struct orphan *next;
};
void orphans_scan(const char *data_dir);
/* The orphan of this container of this pod (the caller frees it), or NULL. */
struct orphan *orphans_claim(const char *ns, const char *name,
    const char *ctr, const char *uid);
/* Kill what is left of a container about to start anew (any pod uid). */
void orphans_discard(const char *ns, const char *name, const char *ctr);
void orphans_kill_rest(void);
/* DIR/CTR.EXT of an orphan. */
void orphans_file(const struct orphan *, const char *ext, char *out,
    size_t size);

/* cgroup.c: resource limits of local containers (see there for modes). */
const char *cgroup_init(const char *data_dir);
const char *cgroup_mode(void);
/*
 * Make a container's groups with its limits (0: none); *paths is the
 * NULL-terminated list for the shim (NULL when cgroups are off). -1 with
 * *cause.
 */
int cgroup_create(const char *uid, const char *ctr, int64_t mem_bytes,
    int64_t cpu_milli, char ***paths, char **cause);
void cgroup_paths_free(char **);
/* The groups of a running container (for kubectl exec), or NULL. */
char **cgroup_paths(const char *uid, const char *ctr);
/* A container's CPU time so far and memory now, from its groups; -1 when
   cgroups are off or it has none. */
int cgroup_usage(const char *uid, const char *ctr, uint64_t *cpu_usec,
    uint64_t *mem_bytes);
void cgroup_kill(const char *uid, const char *ctr);
/* Remove them (wait: kill what is left and wait up to 100 ms for it). */
void cgroup_remove(const char *uid, const char *ctr, int wait);
/* volrayd stops: its part of volray/ goes if nothing is left in it. */
void cgroup_close(void);
/* Kill and remove every group keep() does not want. */
void cgroup_sweep(int (*keep)(void *arg, const char *uid, const char *ctr),
    void *arg);

enum ctr_state { CTR_WAITING, CTR_RUNNING, CTR_TERMINATED };

struct ctr_end {
	int exit_code;
	char reason[64];
	char message[256];
	char started[32];
	char finished[32];
};

struct node_ctr {
	struct node_pod *pod;
	char *name;
	char *image;
	int init;			/* an init container */
	enum ctr_state state;
	char reason[64];		/* waiting reason */
	char message[256];
	int no_command;			/* neither command nor args */
	char started[32];		/* running since */
	int resume;			/* it ran before volrayd restarted */
	char end_at[32];		/* the runtime knows when it ended */
	struct ctr_end end;		/* state terminated */
	struct ctr_end last;		/* lastState.terminated */
	int has_last;
	int restarts;
	uint64_t run_ms;		/* loop time the instance started */
	uint64_t backoff_ms;		/* delay before the next restart */
	wheel_timer timer;		/* back-off */
	void *rt;			/* the runtime's handle, when running */
	int instance;			/* how many times started */
	struct probe *probes[PROBE_TYPES];
	cJSON *ports;			/* the container's ports (probes) */
	int probe_ready;		/* readiness passed (or none) */
	int startup_ok;			/* startup passed (or none) */
	/* Usage (usage.c): the last sample, and the CPU rate between the
	   last two (known from the second sample on). */
	uint64_t cpu_usec, sampled_ms, nanocores, mem_bytes;
	int samples;
};

enum pod_phase { POD_PENDING, POD_RUNNING, POD_SUCCEEDED, POD_FAILED };

struct node_pod {
	struct node *node;
	char *key;			/* "ns/name" */
	char *ns, *name, *uid;
	int admitted;			/* by podworker_start: it runs */
	cJSON *ann;			/* metadata.annotations, kept */
	char qos[16];			/* status.qosClass */
	struct node_ctr *ctrs;		/* init containers first */
	int nctrs, ninit;
	int next_init;			/* init containers done so far */
	enum pod_phase phase;
	char reason[64];		/* pod-level: OutOfcpu, NodeAffinity */
	char message[512];
	char start_time[32];
	char ip[46];
	int host_net;			/* spec.hostNetwork */
	int pod_net;			/* ip is podnet's (podnet_assign) */
	int restart_policy;		/* 'A'lways, 'O'nFailure, 'N'ever */
	struct podspec_res req;
	int counted;			/* req is in node->used */
	int terminating;
	int removed;			/* gone from the store: no writes */
	int stopping;			/* inside a loop of runtime stops */
	wheel_timer kill_timer;
	int dirty;
	struct node_pod *dirty_next;
	int writing;			/* a status write in flight */
	int rewrite;			/* changed meanwhile: write again */
	int stale;			/* refused (409): write again once
					   the client has a newer version */
	uint64_t write_rev;		/* the version a write in flight
					   was made on */
	cJSON *conds;			/* condition -> lastTransitionTime */
};

struct node {
	node_mgr *m;
	char *name;
	const struct node_runtime *rt;
	struct podspec_res alloc;
	struct podspec_res used;
	char ip[46];
	hmap *pods;			/* uid -> node_pod */
	wheel_timer lease_timer;
	uint64_t lease_period_ms;
	int lease_created;
	int failing;			/* volray.io/sim-fail: no heartbeat */
	unsigned idx;
	int lease_writing;		/* a renewal in flight */
	int status_writing;		/* a status write in flight */
	int status_again;		/* a change came meanwhile */
};

/* usage.c: the local node's totals, a sample each USAGE_MS, the last
   USAGE_SLOTS (kept in the node manager, which outlives the writes that
   point at it). */
#define USAGE_MS	5000
#define USAGE_AVG_MS	600000		/* Volcano's NODE_METRICS_PERIOD */
#define USAGE_SLOTS	(USAGE_AVG_MS / USAGE_MS)
struct usage_ring {
	double cpu[USAGE_SLOTS], mem[USAGE_SLOTS];	/* cores, bytes */
	int n, next;
	double pub_cpu, pub_mem;	/* percent last written */
	uint64_t pub_ms;		/* when; 0: never */
	int writing;
};

struct node_mgr {
	uv_loop_t *loop;
	client *c;
	wheel *wheel;
	hmap *nodes;			/* name -> node */
	hmap *pods;			/* uid -> node_pod, every managed pod */
	uv_check_t flush;
	uv_idle_t flush_more;		/* keeps the loop turning while dirty
					   pods wait for the next slice */
	struct node_pod *dirty, **dirty_tail;	/* in the order they changed */
	/* Pods bound to a managed node, taken on in the flush slice. */
	struct adoption *adopt, **adopt_tail;
	hmap *adopting;			/* uid -> adoption */
	hmap *finishing;		/* uid -> its last writes on their
					   way (podworker.c) */
	unsigned next_node_idx;
	unsigned next_ip;
	int lease_seconds;		/* leaseDurationSeconds; renewed at 1/4 */
	struct node_stats stats;
	char *data_dir;			/* pod directories, logs */
	char *local_name;		/* the local node, or NULL */
	char *shim;			/* volray-shim, for local containers */
	int started;			/* node_mgr_start is done */
	int lease_ns_writing;		/* kube-node-lease being created: the
					   Leases wait for it */
	uv_timer_t usage_timer;		/* usage.c's sampler */
	struct usage_ring usage;	/* usage.c: the local node's load */
	int no_virtual;			/* simulate no virtual Node */
	struct selector *virtual_sel;	/* only these virtual Nodes, or NULL */
	char *ep_addr;			/* the nodes' endpoint: InternalIP */
	int ep_port;			/* and kubeletEndpoint.Port; 0: none */
	node_portmap_fn portmap;	/* port-forward to simulated pods */
	node_sim_effect_fn sim_effect;	/* Ray's commands, simulated */
	void (*sim_cancel)(void *);
	void *sim_effect_arg;
	void *portmap_arg;
	node_env_hook env_hook;		/* more env for local processes */
	node_token_fn token_hook;	/* service-account tokens */
	void *token_arg;
	void *env_arg;
	recorder *events;		/* as the kubelet: pods' Events */
	char *ray_dir;			/* rayimage.c: Ray installs, or NULL */
	int ray_emulated;		/* Ray images run as any other */
	int pod_network;		/* podnet.c: pods have namespaces */
	int own_mounts;			/* mountplan.c: containers have
					   mount namespaces (as root) */
	grpcprobe *grpc;		/* grpc probes' client, from the first */
};

/*
 * nodes.c: the running instance of container ctr of pod ns/name on a
 * node of m, or NULL with the HTTP status to answer and *msg (malloc'd).
 */
struct node_ctr *node_mgr_find_ctr(node_mgr *m, const char *ns,
    const char *name, const char *ctr, int *code, char **msg);

/*
 * rayimage.c (rayimage.h): the local node's real Ray. Whether container
 * ctr of image runs real Ray here: 0 no (run it as any image), 1 yes from the install
 * venv, -1 its Ray is not installed (why: the message of the pull that
 * failed).
 */
int rayimage_check(node_mgr *, const char *ctr, const char *image,
    char *venv, size_t vsize, char *why, size_t wsize);
/* The environment a Ray image gives, for the pod of that uid: set(env,
   NAME, VALUE) for each. */
void rayimage_env(const char *venv, const char *uid, int own_tmp,
    node_env_set_fn set, void *env);
/* The pod of that uid is gone: its Ray sessions (RAY_TMPDIR) go too. */
void rayimage_forget(const char *uid);
/* The pod's Ray temp dir (made): RAY_TMPDIR, or with mounts its /tmp. */
void rayimage_tmp(const char *uid, char *out, size_t size);
/* The local Node's status.images: its installs (new array; NULL: none). */
cJSON *rayimage_node_images(node_mgr *);

/* podrestore.c: take back what the stored status says (a restart). */
void podrestore_apply(struct node_pod *, const cJSON *status);

/* podworker.c (and podworker_ctr_exited, runtime.h) */
struct node_pod *podworker_new(struct node *, const store_obj *,
    const cJSON *obj);
/* Admit the new pod (obj: its stored version) and start it. */
void podworker_start(struct node_pod *, const cJSON *obj);
void podworker_terminate(struct node_pod *, uint64_t grace_ms);
/* The pod is gone from the store: stop everything, write nothing. */
void podworker_forget(struct node_pod *);
/* Delete a pod with no grace period (finalizers still hold it), without
   waiting. */
void podworker_remove(node_mgr *, const char *ns, const char *name);
/* Whether the pod of this uid has its last writes on their way: it is
   not to be taken on again meanwhile. */
int podworker_finishing(node_mgr *, const char *uid);
/* One of the pod's annotations, or NULL. */
const char *podworker_annotation(const struct node_pod *, const char *key);

/* podevent.c: an Event about the pod, as the kubelet records one. */
void podevent_record(struct node_pod *, const char *type, const char *reason,
    const char *message);

/* podstatus.c: the status a kubelet would write, and when. */
/* Guaranteed, Burstable or BestEffort. */
/* The pod's status changed: write it in the next flush slice. */
void podstatus_dirty(struct node_pod *);
/* The pod is about to be freed: off the list of dirty pods. */
void podstatus_forget(struct node_pod *);
/*
 * Write the last status of a pod going away now, if it is dirty (it stays
 * on the list), over any newer version, without waiting: done(arg) gets
 * the answer (its body to free). 0 if there was nothing to write (done
 * is not called).
 */
int podstatus_flush_last(struct node_pod *, client_done_fn done, void *arg);
/*
 * The pod was just made dirty, through *at (the list's tail before):
 * write its status now, from t, the tree of its stored version o (t is
 * taken; parsed again if o is no longer the stored version).
 */
void podstatus_flush_now(struct node_pod *, struct node_pod **at,
    const store_obj *o, cJSON *t);
/* Write the status of dirty pods, oldest first, until the slice that
   began at t0 (util_usec) is over. */
#define FLUSH_US	10000
void podstatus_flush_slice(node_mgr *, uint64_t t0);

/* usage.c: the local containers' usage, sampled on the loop. */
void usage_start(node_mgr *);
void usage_stop(node_mgr *);

#endif
