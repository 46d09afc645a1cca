/*
 * The core group's kinds ("" group, v1): Pods, Services, Namespaces,
 * Nodes and the rest; ReplicationControllers beside them, run by the Lua
 * workload controllers as apps/v1 ReplicaSets are.
 */
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds_int.h"

const struct kind_desc kind_namespace = {
	.group = "",
	.version = "v1",
	.plural = "namespaces",
	.singular = "namespace",
	.kind = "Namespace",
	.has_status = 1,
	.shorts = "ns",
	.names = KIND_NAMES_LABEL,
	.mutate = admission_namespace_mutate,
};

const struct kind_desc kind_node = {
	.group = "",
	.version = "v1",
	.plural = "nodes",
	.singular = "node",
	.kind = "Node",
	.has_status = 1,
	.shorts = "no",
};

const struct kind_desc kind_pod = {
	.group = "",
	.version = "v1",
	.plural = "pods",
	.singular = "pod",
	.kind = "Pod",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "po",
	.categories = "all",
	.mutate = admission_pod_mutate,
	.validate = admission_pod_validate,
};

const struct kind_desc kind_service = {
	.group = "",
	.version = "v1",
	.plural = "services",
	.singular = "service",
	.kind = "Service",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "svc",
	.categories = "all",
	.names = KIND_NAMES_LABEL_ALPHA,
	.mutate = admission_service_mutate,
	.validate = admission_service_validate,
};

const struct kind_desc kind_event = {
	.group = "",
	.version = "v1",
	.plural = "events",
	.singular = "event",
	.kind = "Event",
	.namespaced = 1,
	.shorts = "ev",
	.mutate = admission_event_mutate,
};

const struct kind_desc kind_endpoints = {
	.group = "",
	.version = "v1",
	.plural = "endpoints",
	.singular = "endpoints",
	.kind = "Endpoints",
	.namespaced = 1,
	.shorts = "ep",
};

const struct kind_desc kind_configmap = {
	.group = "",
	.version = "v1",
	.plural = "configmaps",
	.singular = "configmap",
	.kind = "ConfigMap",
	.namespaced = 1,
	.shorts = "cm",
	.validate = admission_configmap_validate,
};

const struct kind_desc kind_secret = {
	.group = "",
	.version = "v1",
	.plural = "secrets",
	.singular = "secret",
	.kind = "Secret",
	.namespaced = 1,
	.mutate = admission_secret_mutate,
	.validate = admission_secret_validate,
};

const struct kind_desc kind_serviceaccount = {
	.group = "",
	.version = "v1",
	.plural = "serviceaccounts",
	.singular = "serviceaccount",
	.kind = "ServiceAccount",
	.namespaced = 1,
	.shorts = "sa",
};

const struct kind_desc kind_limitrange = {
	.group = "",
	.version = "v1",
	.plural = "limitranges",
	.singular = "limitrange",
	.kind = "LimitRange",
	.namespaced = 1,
	.shorts = "limits",
	.mutate = admission_limitrange_mutate,
};

const struct kind_desc kind_resourcequota = {
	.group = "",
	.version = "v1",
	.plural = "resourcequotas",
	.singular = "resourcequota",
	.kind = "ResourceQuota",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "quota",
};

/* Stored and served; nothing provisions or binds them (no storage). */
const struct kind_desc kind_persistentvolumeclaim = {
	.group = "",
	.version = "v1",
	.plural = "persistentvolumeclaims",
	.singular = "persistentvolumeclaim",
	.kind = "PersistentVolumeClaim",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "pvc",
	.mutate = admission_pvc_mutate,
};

const struct kind_desc kind_persistentvolume = {
	.group = "",
	.version = "v1",
	.plural = "persistentvolumes",
	.singular = "persistentvolume",
	.kind = "PersistentVolume",
	.has_status = 1,
	.shorts = "pv",
	.mutate = admission_pv_mutate,
};

const struct kind_desc kind_replicationcontroller = {
	.group = "",
	.version = "v1",
	.plural = "replicationcontrollers",
	.singular = "replicationcontroller",
	.kind = "ReplicationController",
	.namespaced = 1,
	.has_status = 1,
	.has_scale = 1,
	.shorts = "rc",
	.categories = "all",
	.mutate = admission_workload_rc_mutate,
	.validate = admission_workload_rc_validate,
};
