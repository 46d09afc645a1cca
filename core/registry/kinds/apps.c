/*
 * apps/v1: the Lua workload controllers' kinds.
 */
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds_int.h"

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
};

const struct kind_desc kind_controllerrevision = {
	.group = "apps",
	.version = "v1",
	.plural = "controllerrevisions",
	.singular = "controllerrevision",
	.kind = "ControllerRevision",
	.namespaced = 1,
};
