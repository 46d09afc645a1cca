/*
 * coordination.k8s.io: Leases (leader election, node heartbeats).
 */
#include <stddef.h>

#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_lease = {
	.group = "coordination.k8s.io",
	.version = "v1",
	.plural = "leases",
	.singular = "lease",
	.kind = "Lease",
	.namespaced = 1,
	.client = KIND_CLIENT_LEASES,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Holder", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_lease,
	.protobuf = &pb_lease,
};
