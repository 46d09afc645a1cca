/*
 * policy/v1: PodDisruptionBudgets, which eviction honours
 * (registry_evict.c).
 */
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds_int.h"

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
};
