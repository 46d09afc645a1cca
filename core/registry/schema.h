/*
 * OpenAPI v3 structural schema validation for custom resources, as the
 * Kubernetes API server applies a CRD's openAPIV3Schema: type, properties,
 * required, items, additionalProperties, enum, minimum/maximum (and
 * exclusive), minLength/maxLength, minItems/maxItems, pattern (POSIX ERE),
 * format int32/int64, nullable, default (applied while validating),
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
 * x-kubernetes-embedded-resource, anyOf/oneOf/allOf/not (structural checks).
 * Unknown fields are pruned, as the API server does, unless preserved.
 */
#ifndef VOLRAY_SCHEMA_H
#define VOLRAY_SCHEMA_H

#include <cjson/cJSON.h>

typedef struct schema schema;

schema *schema_compile(const cJSON *openapi_v3_schema, char **cause);
/*
 * Validate obj in place: apply defaults, prune unknown fields, and append one
 * {"reason","message","field"} object per violation to causes (a cJSON array).
 * The field is the path as Kubernetes writes it: "spec.replicas",
 * "spec.workerGroupSpecs[0].groupName". Returns the number of violations.
 * apiVersion, kind and metadata at the root are left to the caller.
 */
int schema_validate(const schema *, cJSON *obj, cJSON *causes);
/* The same, and *pruned gets the paths of the fields pruned, one a line
   (malloc'd), or NULL: what fieldValidation=Strict refuses. */
int schema_validate_pruned(const schema *, cJSON *obj, cJSON *causes,
    char **pruned);
void schema_free(schema *);

#endif
