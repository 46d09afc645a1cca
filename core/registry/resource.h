/*
 * Resource descriptors: what the API knows about each kind it serves. The
 * built-in kinds have one each in registry/kinds/ (desc); each
 * CustomResourceDefinition adds one per served version when it is
 * created, so the router, discovery, OpenAPI, tables and validation treat
 * built-ins and custom resources alike.
 */
#ifndef VOLRAY_RESOURCE_H
#define VOLRAY_RESOURCE_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "registry/schema.h"

struct kind_desc;

struct printer_col {
	char *name;
	char *type;        /* string, integer, number, boolean, date */
	char *format;
	char *description;
	char *jsonpath;    /* ".status.phase" */
	int priority;
};

typedef struct resource {
	char *group;       /* "" for the core group */
	char *version;
	char *plural;
	char *singular;
	char *kind;
	char *list_kind;
	char *store_key;   /* "pods", "deployments.apps" */
	char *gv;          /* "v1", "apps/v1" */
	int namespaced;
	int has_status;
	int builtin;
	int storage;       /* the storage version among a CRD's versions */
	int create_only;   /* POST-only reviews (SelfSubjectAccessReview, ...):
	                      registry_create answers them through the review
	                      handler and never stores them; no other verb */
	int computed;      /* read-only, made when asked and never stored
	                      (metrics.k8s.io): get and list */
	char **short_names;
	int nshort;
	char **categories;
	int ncat;
	struct printer_col *cols;
	int ncols;
	schema *schema;    /* custom resources only */
	char *crd_name;    /* custom resources only */
	const struct kind_desc *desc;   /* built-in kinds only */
	const cJSON *openapi;   /* the CRD version's openAPIV3Schema, or a
	                           built-in kind's from openapi/, if any */
	cJSON *own_openapi;     /* a built-in kind's, owned */
	cJSON *crd;        /* owned copy of the CRD for custom resources */
} resource;

/*
 * Turn a feature gate of built-in kinds on or off before resource_init
 * (kube-apiserver's --feature-gates): GenericWorkload serves
 * scheduling.k8s.io/v1alpha2 Workloads and PodGroups. -1 for a gate
 * volray does not know.
 */
int resource_set_gate(const char *gate, int on);
int resource_gate(const char *gate);
/*
 * Register the built-in kinds (those of the gates that are on), in
 * discovery's order (registry/kinds/builtin.c).
 */
void resource_init(void);
/* Register one built-in kind's descriptor. */
void resource_add_builtin(const struct kind_desc *);
void resource_shutdown(void);
const resource *resource_find(const char *group, const char *version,
    const char *plural);
/* Any served version of a stored resource ("deployments.apps"). */
const resource *resource_by_store_key(const char *store_key);
/* "apps/v1" + "Deployment" -> descriptor. */
const resource *resource_by_gvk(const char *api_version, const char *kind);
/* Register (or replace) the versions of a CRD; -1 with *cause if invalid. */
int resource_register_crd(const cJSON *crd, char **cause);
void resource_unregister_crd(const char *crd_name);
/*
 * The CustomResourceDefinition kind's hooks (registry/kinds/): a CRD
 * stored registers its versions (an error is logged), a CRD removed
 * unregisters them.
 */
void resource_crd_stored(const resource *, const cJSON *crd,
    const cJSON *old);
void resource_crd_removed(const resource *, const char *name);
/*
 * Load the descriptive schemas of built-in kinds from the YAML files of
 * dir (each: apiVersion, and kinds: Kind -> OpenAPI v3 schema), served
 * for kubectl explain; they do not validate. -1 with *cause when dir
 * cannot be read; a file or kind that does not fit is skipped and named
 * in *cause (the caller frees it).
 */
int resource_load_schemas(const char *dir, char **cause);
/* Validate a CRD object before it is stored; -1 with *cause. */
int resource_check_crd(const cJSON *crd, char **cause);
/* All descriptors, in registration order. */
int resource_count(void);
const resource *resource_at(int i);
/* Bumped on every registration change (for discovery and OpenAPI hashes). */
uint64_t resource_generation(void);
/* Whether the kind has a scale subresource (Deployment, ReplicaSet, ...). */
int resource_has_scale(const resource *);
/*
 * Whether a write to the object itself keeps the status it carries,
 * though /status is served too: Volcano's PodGroup, whose upstream CRD
 * has no status subresource, so Volcano's scheduler writes a group's
 * phase and conditions with a plain update.
 */
int resource_status_in_main(const resource *);
/* "pods" or "deployments.apps": the name used in error messages. */
const char *resource_qualified(const resource *);

#endif
