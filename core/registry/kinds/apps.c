/*
 * apps/v1: the Lua workload controllers' kinds.
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_deployment = {
	.group = "apps",
	.version = "v1",
	.plural = "deployments",
	.singular = "deployment",
	.kind = "Deployment",
	.namespaced = 1,
	.has_status = 1,
	.has_scale = 1,
	.shorts = "deploy",
	.categories = "all",
	.mutate = admission_deployment_mutate,
	.validate = admission_replicas_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Ready", "string", 0 },
		{ "Up-to-date", "string", 0 },
		{ "Available", "string", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_deployment,
	.protobuf = &pb_deployment,
};

const struct kind_desc kind_replicaset = {
	.group = "apps",
	.version = "v1",
	.plural = "replicasets",
	.singular = "replicaset",
	.kind = "ReplicaSet",
	.namespaced = 1,
	.has_status = 1,
	.has_scale = 1,
	.shorts = "rs",
	.categories = "all",
	.mutate = admission_replicaset_mutate,
	.validate = admission_replicas_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Desired", "integer", 0 },
		{ "Current", "integer", 0 },
		{ "Ready", "integer", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_replicaset,
};

const struct kind_desc kind_daemonset = {
	.group = "apps",
	.version = "v1",
	.plural = "daemonsets",
	.singular = "daemonset",
	.kind = "DaemonSet",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "ds",
	.categories = "all",
	.mutate = admission_workload_daemonset_mutate,
	.validate = admission_workload_daemonset_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Desired", "integer", 0 },
		{ "Current", "integer", 0 },
		{ "Ready", "integer", 0 },
		{ "Up-to-date", "integer", 0 },
		{ "Available", "integer", 0 },
		{ "Node Selector", "string", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_daemonset,
};

const struct kind_desc kind_statefulset = {
	.group = "apps",
	.version = "v1",
	.plural = "statefulsets",
	.singular = "statefulset",
	.kind = "StatefulSet",
	.namespaced = 1,
	.has_status = 1,
	.has_scale = 1,
	.shorts = "sts",
	.categories = "all",
	.mutate = admission_workload_statefulset_mutate,
	.validate = admission_workload_statefulset_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Ready", "string", 0 },
		{ "Age", "string", 0 },
		{ "Containers", "string", 1 },
		{ "Images", "string", 1 },
		{ NULL }
	},
	.row = rows_statefulset,
};

const struct kind_desc kind_controllerrevision = {
	.group = "apps",
	.version = "v1",
	.plural = "controllerrevisions",
	.singular = "controllerrevision",
	.kind = "ControllerRevision",
	.namespaced = 1,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Controller", "string", 0 },
		{ "Revision", "integer", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_revision,
};
