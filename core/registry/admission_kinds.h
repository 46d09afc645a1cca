/*
 * The admission hooks of the built-in kinds, named by their descriptors
 * (registry/kinds/): each file of registry/admission_*.c exports its kinds'
 * defaults (mutate) and rules (validate), of the types of
 * registry/kinds/kinds.h, and admission_mutate and admission_validate call
 * the resource's.
 */
#ifndef VOLRAY_ADMISSION_KINDS_H
#define VOLRAY_ADMISSION_KINDS_H

#include "registry/kinds/kinds.h"

/* The core group, apps, batch and the rest (admission.c). */
kind_mutate_fn admission_pod_mutate;
kind_validate_fn admission_pod_validate;
kind_mutate_fn admission_deployment_mutate;
kind_mutate_fn admission_replicaset_mutate;
kind_validate_fn admission_replicas_validate;	/* Deployment, ReplicaSet */
kind_mutate_fn admission_job_mutate;
kind_validate_fn admission_job_validate;
kind_mutate_fn admission_service_mutate;
kind_validate_fn admission_service_validate;
kind_mutate_fn admission_namespace_mutate;
kind_mutate_fn admission_priorityclass_mutate;
kind_validate_fn admission_priorityclass_validate;
kind_mutate_fn admission_secret_mutate;
kind_validate_fn admission_secret_validate;
kind_validate_fn admission_configmap_validate;
kind_mutate_fn admission_pvc_mutate;
kind_mutate_fn admission_pv_mutate;
kind_mutate_fn admission_event_mutate;
kind_mutate_fn admission_limitrange_mutate;
kind_mutate_fn admission_crd_mutate;
kind_validate_fn admission_crd_validate;

/* The Lua controllers' workload kinds and PodDisruptionBudgets
   (admission_workload.c). */
kind_mutate_fn admission_workload_daemonset_mutate;
kind_validate_fn admission_workload_daemonset_validate;
kind_mutate_fn admission_workload_statefulset_mutate;
kind_validate_fn admission_workload_statefulset_validate;
kind_mutate_fn admission_workload_rc_mutate;
kind_validate_fn admission_workload_rc_validate;
kind_mutate_fn admission_workload_cronjob_mutate;
kind_validate_fn admission_workload_cronjob_validate;
kind_validate_fn admission_workload_pdb_validate;

/* storage.k8s.io and resource.k8s.io (admission_storage.c). */
kind_mutate_fn admission_storage_storageclass_mutate;
kind_validate_fn admission_storage_storageclass_validate;
kind_mutate_fn admission_storage_csidriver_mutate;
kind_validate_fn admission_storage_csidriver_validate;
kind_validate_fn admission_storage_attributesclass_validate;
kind_validate_fn admission_storage_csinode_validate;
kind_validate_fn admission_storage_volumeattachment_validate;
kind_validate_fn admission_storage_capacity_validate;
kind_mutate_fn admission_storage_claim_mutate;
kind_validate_fn admission_storage_claim_validate;
kind_mutate_fn admission_storage_claimtemplate_mutate;
kind_validate_fn admission_storage_claimtemplate_validate;
kind_validate_fn admission_storage_slice_validate;

/* scheduling.k8s.io/v1alpha2 PodGroups and Workloads (admission_gang.c). */
kind_validate_fn admission_gang_podgroup_validate;
kind_validate_fn admission_gang_workload_validate;

/* rbac.authorization.k8s.io (admission_rbac.c). */
kind_mutate_fn admission_rbac_binding_mutate;	/* both bindings */
kind_validate_fn admission_rbac_role_validate;
kind_validate_fn admission_rbac_clusterrole_validate;
kind_validate_fn admission_rbac_rolebinding_validate;
kind_validate_fn admission_rbac_clusterrolebinding_validate;

/* apiregistration.k8s.io (admission_apiservice.c). */
kind_mutate_fn admission_apiservice_mutate;
kind_validate_fn admission_apiservice_validate;

#endif
