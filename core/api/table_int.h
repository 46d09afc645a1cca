/*
 * The rows table.c delegates: the storage.k8s.io and resource.k8s.io
 * kinds (table_storage.c), printed as kube-apiserver's printers do.
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

#endif
