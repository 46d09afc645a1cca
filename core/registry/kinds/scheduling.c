/*
 * scheduling.k8s.io: PriorityClasses (v1, and v1beta1 still in users'
 * manifests), and Kubernetes' own gang API (v1alpha2, the
 * GenericWorkload gate).
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_priorityclass = {
	.group = "scheduling.k8s.io",
	.version = "v1",
	.plural = "priorityclasses",
	.singular = "priorityclass",
	.kind = "PriorityClass",
	.shorts = "pc",
	.mutate = admission_priorityclass_mutate,
	.validate = admission_priorityclass_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Value", "integer", 0 },
		{ "Global-Default", "boolean", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_priorityclass,
	.protobuf = &pb_priority_class,
};

/* Removed upstream in 1.22, still in users' manifests. */
const struct kind_desc kind_priorityclass_v1beta1 = {
	.group = "scheduling.k8s.io",
	.version = "v1beta1",
	.plural = "priorityclasses",
	.singular = "priorityclass",
	.kind = "PriorityClass",
	.shorts = "pc",
	.old_version = 1,
	.mutate = admission_priorityclass_mutate,
	.validate = admission_priorityclass_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Value", "integer", 0 },
		{ "Global-Default", "boolean", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_priorityclass,
};

/* Kubernetes' own gang API (1.36, alpha: GenericWorkload), after
   v1 and v1beta1 as kube-apiserver lists them: the scheduler places
   pods by their spec.schedulingGroup's PodGroup. */
const struct kind_desc kind_workload_v1alpha2 = {
	.group = "scheduling.k8s.io",
	.version = "v1alpha2",
	.plural = "workloads",
	.singular = "workload",
	.kind = "Workload",
	.namespaced = 1,
	.gate = "GenericWorkload",
	.validate = admission_gang_workload_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Templates", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_gang_workload,
};

const struct kind_desc kind_podgroup_v1alpha2 = {
	.group = "scheduling.k8s.io",
	.version = "v1alpha2",
	.plural = "podgroups",
	.singular = "podgroup",
	.kind = "PodGroup",
	.namespaced = 1,
	.has_status = 1,
	.gate = "GenericWorkload",
	.validate = admission_gang_podgroup_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Policy", "string", 0 },
		{ "Min-Count", "integer", 0 },
		{ "Scheduled", "string", 0 },
		{ "Reason", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_gang_podgroup,
};
