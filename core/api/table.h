/*
 * Server-side Table rendering (meta.k8s.io/v1 Table), the output of
 * `kubectl get`: columns per built-in kind as the API server prints them,
 * CRD additionalPrinterColumns evaluated by JSONPath, Name and Age otherwise.
 */
#ifndef VOLRAY_TABLE_H
#define VOLRAY_TABLE_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "registry/resource.h"

enum table_include { TABLE_NONE, TABLE_METADATA, TABLE_OBJECT };

/* An empty Table with the resource's column definitions. */
cJSON *table_new(const resource *, const char *rv);
/* Append one row for obj. */
void table_add_row(cJSON *table, const resource *, const cJSON *obj,
    enum table_include);
/* Parse the includeObject parameter (default Metadata). */
enum table_include table_include_parse(const char *);

#endif
