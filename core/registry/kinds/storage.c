/*
 * storage.k8s.io and resource.k8s.io: stored and served for
 * schedulers' informers (kube-scheduler's and Volcano's list them all);
 * nothing provisions, attaches or allocates (no CSI, no DRA drivers).
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

/* Stored and served, for schedulers' informers (kube-scheduler's
   and Volcano's list them all); nothing provisions, attaches or
   allocates (no CSI drivers, no DRA drivers). */
const struct kind_desc kind_storageclass = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "storageclasses",
	.singular = "storageclass",
	.kind = "StorageClass",
	.shorts = "sc",
	.mutate = admission_storage_storageclass_mutate,
	.validate = admission_storage_storageclass_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Provisioner", "string", 0 },
		{ "ReclaimPolicy", "string", 0 },
		{ "VolumeBindingMode", "string", 0 },
		{ "AllowVolumeExpansion", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_class,
};

const struct kind_desc kind_csinode = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csinodes",
	.singular = "csinode",
	.kind = "CSINode",
	.validate = admission_storage_csinode_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Drivers", "integer", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_csinode,
};

const struct kind_desc kind_csidriver = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csidrivers",
	.singular = "csidriver",
	.kind = "CSIDriver",
	.mutate = admission_storage_csidriver_mutate,
	.validate = admission_storage_csidriver_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "AttachRequired", "boolean", 0 },
		{ "PodInfoOnMount", "boolean", 0 },
		{ "StorageCapacity", "boolean", 0 },
		{ "TokenRequests", "string", 0 },
		{ "RequiresRepublish", "boolean", 0 },
		{ "Modes", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_csidriver,
};

const struct kind_desc kind_csistoragecapacity = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csistoragecapacities",
	.singular = "csistoragecapacity",
	.kind = "CSIStorageCapacity",
	.namespaced = 1,
	.validate = admission_storage_capacity_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "StorageClassName", "string", 0 },
		{ "Capacity", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_capacity,
};

const struct kind_desc kind_volumeattachment = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "volumeattachments",
	.singular = "volumeattachment",
	.kind = "VolumeAttachment",
	.has_status = 1,
	.validate = admission_storage_volumeattachment_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Attacher", "string", 0 },
		{ "PV", "string", 0 },
		{ "Node", "string", 0 },
		{ "Attached", "boolean", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_attachment,
};

const struct kind_desc kind_volumeattributesclass = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "volumeattributesclasses",
	.singular = "volumeattributesclass",
	.kind = "VolumeAttributesClass",
	.shorts = "vac",
	.validate = admission_storage_attributesclass_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "DriverName", "string", 0, ".driverName" },
		{ "Age", "string", 0 },
		{ NULL }
	},
};

const struct kind_desc kind_deviceclass = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "deviceclasses",
	.singular = "deviceclass",
	.kind = "DeviceClass",
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
};

const struct kind_desc kind_resourceclaim = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "resourceclaims",
	.singular = "resourceclaim",
	.kind = "ResourceClaim",
	.namespaced = 1,
	.has_status = 1,
	.mutate = admission_storage_claim_mutate,
	.validate = admission_storage_claim_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "State", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_storage_claim,
	.protobuf = &pb_resource_claim_object,
};

const struct kind_desc kind_resourceclaimtemplate = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "resourceclaimtemplates",
	.singular = "resourceclaimtemplate",
	.kind = "ResourceClaimTemplate",
	.namespaced = 1,
	.mutate = admission_storage_claimtemplate_mutate,
	.validate = admission_storage_claimtemplate_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
};

const struct kind_desc kind_resourceslice = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "resourceslices",
	.singular = "resourceslice",
	.kind = "ResourceSlice",
	.validate = admission_storage_slice_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Node", "string", 0, ".spec.nodeName" },
		{ "Driver", "string", 0, ".spec.driver" },
		{ "Pool", "string", 0, ".spec.pool.name" },
		{ "Age", "string", 0 },
		{ NULL }
	},
};
