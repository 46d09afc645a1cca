/*
 * The Table row functions of the built-in kinds (kind_row_fn, named by
 * their descriptors): kinds/rows.c, kinds/rows_storage.c (storage.k8s.io
 * and resource.k8s.io), kinds/rows_gang.c (scheduling.k8s.io/v1alpha2).
 */
#ifndef VOLRAY_ROWS_H
#define VOLRAY_ROWS_H

#include "registry/kinds/kinds.h"

kind_row_fn rows_pod;
kind_row_fn rows_node;
kind_row_fn rows_service;
kind_row_fn rows_job;
kind_row_fn rows_cronjob;
kind_row_fn rows_deployment;
kind_row_fn rows_replicaset;	/* and ReplicationControllers */
kind_row_fn rows_daemonset;
kind_row_fn rows_statefulset;
kind_row_fn rows_revision;
kind_row_fn rows_endpointslice;
kind_row_fn rows_quota;
kind_row_fn rows_ingress;
kind_row_fn rows_event;	/* every cell, NAME last */
kind_row_fn rows_binding;	/* RoleBindings, ClusterRoleBindings */
kind_row_fn rows_pvc;
kind_row_fn rows_pv;
kind_row_fn rows_apiservice;
kind_row_fn rows_networkpolicy;
kind_row_fn rows_ingressclass;
kind_row_fn rows_pdb;
kind_row_fn rows_namespace;
kind_row_fn rows_configmap;
kind_row_fn rows_secret;
kind_row_fn rows_serviceaccount;
kind_row_fn rows_priorityclass;
kind_row_fn rows_lease;
kind_row_fn rows_created_at;

kind_row_fn rows_storage_class;
kind_row_fn rows_storage_csinode;
kind_row_fn rows_storage_csidriver;
kind_row_fn rows_storage_capacity;
kind_row_fn rows_storage_attachment;
kind_row_fn rows_storage_claim;

kind_row_fn rows_gang_podgroup;
kind_row_fn rows_gang_workload;

#endif
