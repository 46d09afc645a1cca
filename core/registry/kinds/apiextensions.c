/*
 * apiextensions.k8s.io and apiregistration.k8s.io: the kinds that
 * extend the API, CustomResourceDefinitions and APIServices.
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/resource.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_customresourcedefinition = {
	.group = "apiextensions.k8s.io",
	.version = "v1",
	.plural = "customresourcedefinitions",
	.singular = "customresourcedefinition",
	.kind = "CustomResourceDefinition",
	.has_status = 1,
	.shorts = "crd,crds",
	.categories = "api-extensions",
	.mutate = admission_crd_mutate,
	.validate = admission_crd_validate,
	.stored = resource_crd_stored,
	.removed = resource_crd_removed,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Created At", "date", 0 },
		{ NULL }
	},
	.row = rows_created_at,
};

/* Stored, beside the served groups' Local ones that api/apiservice.c
   makes when asked. */
const struct kind_desc kind_apiservice = {
	.group = "apiregistration.k8s.io",
	.version = "v1",
	.plural = "apiservices",
	.singular = "apiservice",
	.kind = "APIService",
	.has_status = 1,
	.categories = "api-extensions",
	.mutate = admission_apiservice_mutate,
	.validate = admission_apiservice_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Service", "string", 0 },
		{ "Available", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_apiservice,
};
