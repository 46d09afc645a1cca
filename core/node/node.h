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
#include <uv.h>

#include "registry/registry.h"
#include "store/store.h"

typedef struct node_mgr node_mgr;

struct node_stats {
	uint64_t nodes;			/* managed now */
	uint64_t pods;			/* managed now */
	uint64_t status_writes;
	uint64_t lease_writes;
	uint64_t starts;		/* container instances started */
};

node_mgr *node_mgr_new(uv_loop_t *, store *, registry *);
/*
 * Where pods' directories and logs go (DATA_DIR), and the name this
 * machine registers as the local node (NULL: none). Before start.
 */
void node_mgr_set_local(node_mgr *, const char *data_dir, const char *name);
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

#endif
