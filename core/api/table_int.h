/*
 * The rows table.c delegates: the storage.k8s.io and resource.k8s.io
 * kinds (table_storage.c), printed as kube-apiserver's printers do, and
 * the gang API's (table_gang.c).
 */
#ifndef VOLRAY_TABLE_INT_H
#define VOLRAY_TABLE_INT_H

#include <cjson/cJSON.h>

/*
 * Append the cells after Name of obj, a store_key kind of storage.k8s.io
 * or resource.k8s.io (a default StorageClass's Name gets " (default)"):
 * 1, or 0 when store_key is none of them.
 */
int table_storage_row(cJSON *cells, const char *store_key, const cJSON *obj);

/* obj's AGE cell, as kubectl prints it (<unknown> without a time). */
void table_age_cell(cJSON *cells, const cJSON *obj);

/*
 * The same for scheduling.k8s.io/v1alpha2 PodGroups and Workloads
 * (table_gang.c).
 */
int table_gang_row(cJSON *cells, const char *store_key, const cJSON *obj);

#endif
