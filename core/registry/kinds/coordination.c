/*
 * coordination.k8s.io: Leases (leader election, node heartbeats).
 */
#include "registry/kinds/kinds_int.h"

const struct kind_desc kind_lease = {
	.group = "coordination.k8s.io",
	.version = "v1",
	.plural = "leases",
	.singular = "lease",
	.kind = "Lease",
	.namespaced = 1,
};
