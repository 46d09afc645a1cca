/*
 * storage.k8s.io and resource.k8s.io: stored and served for
 * schedulers' informers (kube-scheduler's and Volcano's list them all);
 * nothing provisions, attaches or allocates (no CSI, no DRA drivers).
 */
#include "registry/admission_kinds.h"
#include "registry/kinds/kinds_int.h"

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
};

const struct kind_desc kind_csinode = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csinodes",
	.singular = "csinode",
	.kind = "CSINode",
	.validate = admission_storage_csinode_validate,
};

const struct kind_desc kind_csidriver = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csidrivers",
	.singular = "csidriver",
	.kind = "CSIDriver",
	.mutate = admission_storage_csidriver_mutate,
	.validate = admission_storage_csidriver_validate,
};

const struct kind_desc kind_csistoragecapacity = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "csistoragecapacities",
	.singular = "csistoragecapacity",
	.kind = "CSIStorageCapacity",
	.namespaced = 1,
	.validate = admission_storage_capacity_validate,
};

const struct kind_desc kind_volumeattachment = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "volumeattachments",
	.singular = "volumeattachment",
	.kind = "VolumeAttachment",
	.has_status = 1,
	.validate = admission_storage_volumeattachment_validate,
};

const struct kind_desc kind_volumeattributesclass = {
	.group = "storage.k8s.io",
	.version = "v1",
	.plural = "volumeattributesclasses",
	.singular = "volumeattributesclass",
	.kind = "VolumeAttributesClass",
	.shorts = "vac",
	.validate = admission_storage_attributesclass_validate,
};

const struct kind_desc kind_deviceclass = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "deviceclasses",
	.singular = "deviceclass",
	.kind = "DeviceClass",
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
};

const struct kind_desc kind_resourceslice = {
	.group = "resource.k8s.io",
	.version = "v1",
	.plural = "resourceslices",
	.singular = "resourceslice",
	.kind = "ResourceSlice",
	.validate = admission_storage_slice_validate,
};
