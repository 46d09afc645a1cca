/*
 * What a node runtime is (the part of Kubernetes' CRI volray needs): a
 * table of operations that the pod worker calls to start, stop, probe
 * and take back container instances, and that the node manager calls
 * at start and exit for what the runtime keeps across pods. A runtime
 * calls back one function, podworker_ctr_exited, when an instance ends;
 * the pod worker decides everything else. Two runtimes: sim.c (simulated
 * nodes, every end a timer) and local.c (this machine, processes).
 */
#ifndef VOLRAY_NODE_RUNTIME_H
#define VOLRAY_NODE_RUNTIME_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "node/execproc.h"

struct node;
struct node_mgr;
struct node_pod;
struct node_ctr;

struct node_runtime {
	const char *name;		/* "virtual", "local" */
	/* The Node's status.nodeInfo: osImage, containerRuntimeVersion. */
	const char *os_image;
	const char *version;
	/* A Node's address when it has none (NULL: one from its index). */
	const char *ip;
	int host_network;		/* pods share the node's address */
	/*
	 * The pod's address (p->ip; one restored from its status is kept
	 * when it can be) before its first container starts: 0, or -1 with
	 * *cause. NULL: one made up (the node's own with host_network).
	 */
	int (*pod_ip)(struct node *, struct node_pod *, char **cause);
	/* The pod is gone from this node: what the runtime kept for it
	   (its network namespace, its address) goes. NULL: nothing. */
	void (*pod_gone)(struct node *, struct node_pod *);
	/*
	 * Start one instance of the container. When it ends, the runtime
	 * calls podworker_ctr_exited. -1 with *cause ("RunContainerError:
	 * ...") when it cannot start.
	 */
	int (*start)(struct node *, struct node_pod *, struct node_ctr *,
	    char **cause);
	/*
	 * Stop a running instance: a polite request (SIGTERM), a hard stop
	 * after grace_ms. podworker_ctr_exited follows, at once or later.
	 */
	void (*stop)(struct node *, struct node_pod *, struct node_ctr *,
	    uint64_t grace_ms);
	/*
	 * Run an exec probe's command in the container's environment; done
	 * (ok 1 for exit 0) follows once, within timeout_ms. NULL: probes
	 * always pass (the simulated runtime).
	 */
	void (*exec)(struct node *, struct node_pod *, struct node_ctr *,
	    const cJSON *command, uint64_t timeout_ms,
	    void (*done)(void *arg, int ok), void *arg);
	/*
	 * A process in the running instance for kubectl exec (execproc.h),
	 * or NULL with *cause. NULL: the runtime runs no processes.
	 */
	execproc *(*exec_stream)(struct node *, struct node_pod *,
	    struct node_ctr *, char **argv, int tty, int in,
	    const struct execproc_cb *, void *arg, char **cause);
	/*
	 * Take back an instance that was running when the last volrayd
	 * stopped (c->started says since when): 0 when it runs on (its end
	 * is reported as for one started here), -1 when there is nothing to
	 * take back and it must be started again.
	 */
	int (*resume)(struct node *, struct node_pod *, struct node_ctr *);
	/*
	 * The node manager's steps, each NULL when the runtime has nothing
	 * to do: restore before the stored pods are taken on (find what a
	 * previous volrayd left, which their resume may claim), restored
	 * once they are (what none claimed goes), kill_all when volrayd
	 * stops (no process stays behind).
	 */
	void (*restore)(struct node_mgr *);
	void (*restored)(void);
	void (*kill_all)(void);
};

extern const struct node_runtime sim_runtime;
extern const struct node_runtime local_runtime;

/*
 * An instance of c ended with exit_code (128+N: killed by signal N);
 * reason NULL: by the code (Completed, Error). The pod worker's; every
 * runtime calls it.
 */
void podworker_ctr_exited(struct node_ctr *c, int exit_code,
    const char *reason);

#endif
