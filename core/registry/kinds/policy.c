/*
 * policy/v1: PodDisruptionBudgets, which eviction honours
 * (registry_evict.c).
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_poddisruptionbudget = {
	.group = "policy",
	.version = "v1",
	.plural = "poddisruptionbudgets",
	.singular = "poddisruptionbudget",
	.kind = "PodDisruptionBudget",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "pdb",
	.validate = admission_workload_pdb_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Min Available", "string", 0 },
		{ "Max Unavailable", "string", 0 },
		{ "Allowed Disruptions", "integer", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_pdb,
	.protobuf = &pb_pdb,
};
