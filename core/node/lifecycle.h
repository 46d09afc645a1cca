/*
 * The node lifecycle controller, the control-plane half of a node's
 * health (Kubernetes' node lifecycle controller and its taint manager):
 * a Node whose Lease in kube-node-lease has not been renewed for the
 * grace period is marked Unknown ("Kubelet stopped posting node
 * status."), conditions become taints (unreachable, not-ready, pressure,
 * unschedulable), and pods on a node with a NoExecute taint they do not
 * tolerate are evicted: at once, after their tolerationSeconds, or never.
 * It watches every Node, whether a runtime serves it or not.
 */
#ifndef VOLRAY_LIFECYCLE_H
#define VOLRAY_LIFECYCLE_H

#include <stdint.h>
#include <uv.h>

#include "client/client.h"

typedef struct lifecycle lifecycle;

#define LIFECYCLE_GRACE_MS	40000	/* --node-monitor-grace-period */

/*
 * grace_ms: how long a Lease may go unrenewed before the node is Unknown.
 * Timeouts run on w, the node manager's wheel (borrowed).
 */
struct wheel;
lifecycle *lifecycle_new(uv_loop_t *, client *, struct wheel *w,
    uint64_t grace_ms);
/* Take in the Nodes, Leases and pods already stored; the grace starts now. */
void lifecycle_start(lifecycle *);
void lifecycle_free(lifecycle *);

#endif
