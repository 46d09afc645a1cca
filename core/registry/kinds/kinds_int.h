/*
 * The built-in kinds' descriptors, one per kind and version, defined in
 * kinds/<group>.c and listed in discovery's order by kinds/builtin.c.
 */
#ifndef VOLRAY_KINDS_INT_H
#define VOLRAY_KINDS_INT_H

#include "registry/kinds/kinds.h"

extern const struct kind_desc kind_namespace;
extern const struct kind_desc kind_node;
extern const struct kind_desc kind_pod;
extern const struct kind_desc kind_service;
extern const struct kind_desc kind_event;
extern const struct kind_desc kind_endpoints;
extern const struct kind_desc kind_configmap;
extern const struct kind_desc kind_secret;
extern const struct kind_desc kind_serviceaccount;
extern const struct kind_desc kind_limitrange;
extern const struct kind_desc kind_resourcequota;
extern const struct kind_desc kind_persistentvolumeclaim;
extern const struct kind_desc kind_persistentvolume;
extern const struct kind_desc kind_replicationcontroller;
extern const struct kind_desc kind_deployment;
extern const struct kind_desc kind_replicaset;
extern const struct kind_desc kind_daemonset;
extern const struct kind_desc kind_statefulset;
extern const struct kind_desc kind_controllerrevision;
extern const struct kind_desc kind_job;
extern const struct kind_desc kind_cronjob;
extern const struct kind_desc kind_poddisruptionbudget;
extern const struct kind_desc kind_endpointslice;
extern const struct kind_desc kind_networkpolicy;
extern const struct kind_desc kind_ingress;
extern const struct kind_desc kind_ingressclass;
extern const struct kind_desc kind_storageclass;
extern const struct kind_desc kind_csinode;
extern const struct kind_desc kind_csidriver;
extern const struct kind_desc kind_csistoragecapacity;
extern const struct kind_desc kind_volumeattachment;
extern const struct kind_desc kind_volumeattributesclass;
extern const struct kind_desc kind_deviceclass;
extern const struct kind_desc kind_resourceclaim;
extern const struct kind_desc kind_resourceclaimtemplate;
extern const struct kind_desc kind_resourceslice;
extern const struct kind_desc kind_lease;
extern const struct kind_desc kind_priorityclass;
extern const struct kind_desc kind_priorityclass_v1beta1;
extern const struct kind_desc kind_workload_v1alpha2;
extern const struct kind_desc kind_podgroup_v1alpha2;
extern const struct kind_desc kind_customresourcedefinition;
extern const struct kind_desc kind_role;
extern const struct kind_desc kind_clusterrole;
extern const struct kind_desc kind_rolebinding;
extern const struct kind_desc kind_clusterrolebinding;
extern const struct kind_desc kind_selfsubjectaccessreview;
extern const struct kind_desc kind_selfsubjectrulesreview;
extern const struct kind_desc kind_selfsubjectreview;
extern const struct kind_desc kind_apiservice;
extern const struct kind_desc kind_nodemetrics;
extern const struct kind_desc kind_podmetrics;

#endif
