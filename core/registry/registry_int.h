/*
 * Internals shared by the registry's files: the registry itself, the
 * common tail of every update (registry.c), managedFields
 * (registry_managed.c), and the two ways a request's result is filled.
 * The files call downwards only: registry_patch.c, registry_bind.c,
 * registry_scale.c and registry_bootstrap.c call registry.c, which calls
 * registry_managed.c.
 */
#ifndef VOLRAY_REGISTRY_INT_H
#define VOLRAY_REGISTRY_INT_H

#include <cjson/cJSON.h>

#include "registry/registry.h"
#include "registry/status.h"

struct registry {
	store *st;
	registry_admit_fn admit;
	void *admit_arg;
	int admit_status;		/* the hook reviews status writes too */
	registry_review_fn review;
	void *review_arg;
	int (*pod_runtime)(void *, const char *node);
	void *pod_runtime_arg;
};

/* A refused request: status (a Status, owned by res) is its answer. */
static inline void
reg_fail(struct reg_result *res, cJSON *status)
{
	res->code = status_code(status);
	res->body = status;
	res->rev = 0;
}

/* A request answered with code and obj, durable once rev is (0: now). */
static inline void
reg_ok(struct reg_result *res, int code, cJSON *obj, uint64_t rev)
{
	res->code = code;
	res->body = obj;
	res->rev = rev;
}

/* Reviews are answered on POST and never stored: 1 (and res filled) for
   any other verb on them. */
static inline int
reg_review_only(const resource *r, struct reg_result *res)
{
	if (!r->create_only)
		return 0;
	reg_fail(res, status_error(405, "MethodNotAllowed", "the server does "
	    "not allow this method on the requested resource"));
	return 1;
}

/*
 * The common tail of update and patch (registry.c): obj (owned) is the
 * complete new object for the stored version cur, old its tree (owned;
 * NULL: made from cur).
 */
void registry_update_merged(registry *, const resource *, const char *ns,
    const char *name, cJSON *obj, const store_obj *cur, cJSON *old,
    const struct reg_opts *, struct reg_result *);

/*
 * Record (replace) manager's entry in obj's metadata.managedFields for an
 * operation ("Update" or "Apply") on subresource (NULL: the object), with
 * the fields of applied (NULL: none listed); 1 when that changed them.
 */
int registry_managed_set(cJSON *obj, const char *manager,
    const char *operation, const char *subresource, const resource *,
    const cJSON *applied);
/* Stamp manager's entries with the time of a real change. */
void registry_managed_touch(cJSON *obj, const char *manager);

#endif
