/*
 * The core group's kinds ("" group, v1): Pods, Services, Namespaces,
 * Nodes and the rest; ReplicationControllers beside them, run by the Lua
 * workload controllers as apps/v1 ReplicaSets are.
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_namespace = {
	.group = "",
	.version = "v1",
	.plural = "namespaces",
	.singular = "namespace",
	.kind = "Namespace",
	.has_status = 1,
	.shorts = "ns",
	.names = KIND_NAMES_LABEL,
	.subs = (const struct kind_sub[]){
		{ "finalize" },
		{ NULL }
	},
	.delete_returns = 1,
	.mutate = admission_namespace_mutate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Status", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_namespace,
	.protobuf = &pb_namespace,
};

const struct kind_desc kind_node = {
	.group = "",
	.version = "v1",
	.plural = "nodes",
	.singular = "node",
	.kind = "Node",
	.has_status = 1,
	.shorts = "no",
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Status", "string", 0 },
		{ "Roles", "string", 0 },
		{ "Age", "string", 0 },
		{ "Version", "string", 0 },
		{ "Internal-IP", "string", 1 },
		{ "External-IP", "string", 1 },
		{ "OS-Image", "string", 1 },
		{ "Kernel-Version", "string", 1 },
		{ "Container-Runtime", "string", 1 },
		{ NULL }
	},
	.row = rows_node,
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
	.subs = (const struct kind_sub[]){
		{ "binding", "Binding", "create",
		    .protobuf = &pb_binding },
		{ "eviction", "Eviction", "create", "policy", "v1" },
		{ "log", "Pod", "get" },
		{ "exec", .stream = 1 },
		{ "attach", .stream = 1 },
		{ "portforward", .stream = 1 },
		{ NULL }
	},
	.delete_returns = 1,
	.mutate = admission_pod_mutate,
	.validate = admission_pod_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Ready", "string", 0 },
		{ "Status", "string", 0 },
		{ "Restarts", "string", 0 },
		{ "Age", "string", 0 },
		{ "IP", "string", 1 },
		{ "Node", "string", 1 },
		{ "Nominated Node", "string", 1 },
		{ "Readiness Gates", "string", 1 },
		{ NULL }
	},
	.row = rows_pod,
	.protobuf = &pb_pod,
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
	.delete_returns = 1,
	.mutate = admission_service_mutate,
	.validate = admission_service_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Type", "string", 0 },
		{ "Cluster-IP", "string", 0 },
		{ "External-IP", "string", 0 },
		{ "Port(s)", "string", 0 },
		{ "Age", "string", 0 },
		{ "Selector", "string", 1 },
		{ NULL }
	},
	.row = rows_service,
	.protobuf = &pb_service,
};

const struct kind_desc kind_event = {
	.group = "",
	.version = "v1",
	.plural = "events",
	.singular = "event",
	.kind = "Event",
	.namespaced = 1,
	.shorts = "ev",
	.client = KIND_CLIENT_EVENTS,
	.mutate = admission_event_mutate,
	.cols = (const struct kind_col[]){
		{ "Last Seen", "string", 0 },
		{ "Type", "string", 0 },
		{ "Reason", "string", 0 },
		{ "Object", "string", 0 },
		{ "Subobject", "string", 1 },
		{ "Source", "string", 1 },
		{ "Message", "string", 0 },
		{ "First Seen", "string", 1 },
		{ "Count", "string", 1 },
		{ "Name", "string", 1 },
		{ NULL }
	},
	.row = rows_event,
	.protobuf = &pb_event,
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
	.bytes_map = "binaryData",
	.validate = admission_configmap_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Data", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_configmap,
	.protobuf = &pb_config_map,
};

const struct kind_desc kind_secret = {
	.group = "",
	.version = "v1",
	.plural = "secrets",
	.singular = "secret",
	.kind = "Secret",
	.namespaced = 1,
	.bytes_map = "data",
	.mutate = admission_secret_mutate,
	.validate = admission_secret_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Type", "string", 0 },
		{ "Data", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_secret,
	.protobuf = &pb_secret,
};

const struct kind_desc kind_serviceaccount = {
	.group = "",
	.version = "v1",
	.plural = "serviceaccounts",
	.singular = "serviceaccount",
	.kind = "ServiceAccount",
	.namespaced = 1,
	.shorts = "sa",
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Secrets", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_serviceaccount,
	.protobuf = &pb_service_account,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Created At", "date", 0 },
		{ NULL }
	},
	.row = rows_created_at,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Age", "string", 0 },
		{ "Request", "string", 0 },
		{ "Limit", "string", 0 },
		{ NULL }
	},
	.row = rows_quota,
	.protobuf = &pb_resource_quota,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Status", "string", 0 },
		{ "Volume", "string", 0 },
		{ "Capacity", "string", 0 },
		{ "Access Modes", "string", 0 },
		{ "StorageClass", "string", 0 },
		{ "VolumeAttributesClass", "string", 0 },
		{ "Age", "string", 0 },
		{ "VolumeMode", "string", 1 },
		{ NULL }
	},
	.row = rows_pvc,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Capacity", "string", 0 },
		{ "Access Modes", "string", 0 },
		{ "Reclaim Policy", "string", 0 },
		{ "Status", "string", 0 },
		{ "Claim", "string", 0 },
		{ "StorageClass", "string", 0 },
		{ "VolumeAttributesClass", "string", 0 },
		{ "Reason", "string", 0 },
		{ "Age", "string", 0 },
		{ "VolumeMode", "string", 1 },
		{ NULL }
	},
	.row = rows_pv,
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
