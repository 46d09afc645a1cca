/*
 * What a pod asks of a node, read from the objects as Kubernetes defines
 * it: resource quantities ("500m", "2Gi"), a pod's effective requests
 * (the larger of its containers' sum and its largest init container, a
 * missing request taken from the limit), a node's allocatable resources,
 * and whether a node's labels satisfy a pod's nodeSelector and required
 * node affinity. The node runtimes admit pods with these; the scheduler's
 * predicates use the same functions.
 */
#ifndef VOLRAY_PODSPEC_H
#define VOLRAY_PODSPEC_H

#include <stdint.h>
#include <cjson/cJSON.h>

#define PODSPEC_MAX_EXT 8

/* cpu in millicores, memory in bytes, pods as a count, extended by name. */
struct podspec_res {
	int64_t cpu;
	int64_t memory;
	int64_t pods;
	int next;
	struct {
		const char *name;	/* interned: lives as long as the
					   process, the same pointer for the
					   same name */
		int64_t value;
	} ext[PODSPEC_MAX_EXT];
};

/* Parse a quantity into *out (in base units: "500m" -> 0.5). -1 if bad. */
int quantity_parse(const char *, double *out);
/* A quantity given as a JSON string or number; -1 if absent or bad. */
int quantity_json(const cJSON *, double *out);
/*
 * A quantity as Kubernetes prints one: whole numbers plainly (in Ki, Mi,
 * Gi or Ti when binary and they divide), fractions in milli ("500m").
 */
void quantity_format(double v, int binary, char out[32]);

/* Add a ResourceList ({"cpu": "500m", "memory": "1Gi", ...}) into r
   (cpu in millicores, others in base units). */
void podspec_read_list(const cJSON *list, struct podspec_res *r);
/* The pod's effective requests (pods = 1). */
void podspec_requests(const cJSON *pod, struct podspec_res *out);
/*
 * The pod's QoS class, "Guaranteed", "Burstable" or "BestEffort", as
 * Kubernetes computes it (kube-apiserver on create, the kubelet after).
 */
const char *podspec_qos(const cJSON *pod);
/*
 * The node's allocatable resources: status.allocatable, else
 * status.capacity, else the annotations volray.io/cpu, volray.io/memory,
 * volray.io/pods (pods default 110).
 */
void podspec_allocatable(const cJSON *node, struct podspec_res *out);
/* a += b (sign 1) or a -= b (sign -1), extended resources by name. */
void podspec_res_add(struct podspec_res *a, const struct podspec_res *b,
    int sign);
/*
 * The first resource of want that does not fit in free: "cpu", "memory",
 * "pods" or an extended resource name; NULL when everything fits.
 */
const char *podspec_res_exceeds(const struct podspec_res *want,
    const struct podspec_res *free);
/* The amount of a resource by name (0 when absent). */
int64_t podspec_res_get(const struct podspec_res *, const char *name);
/*
 * Whether a node with these labels (and metadata.name) satisfies the pod's
 * nodeSelector and requiredDuringSchedulingIgnoredDuringExecution node
 * affinity.
 */
int podspec_node_matches(const cJSON *pod, const cJSON *node);
/*
 * The first taint of the node with effect NoSchedule or NoExecute that
 * the pod does not tolerate, or NULL (PreferNoSchedule never blocks).
 */
const cJSON *podspec_untolerated(const cJSON *pod, const cJSON *node);
/*
 * Whether the pod tolerates node.kubernetes.io/unschedulable:NoSchedule,
 * the taint of a cordoned node, as kube-scheduler's NodeUnschedulable
 * asks (DaemonSet pods do).
 */
int podspec_tolerates_unschedulable(const cJSON *pod);

#endif
