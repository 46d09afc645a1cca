/*
 * The registry: the write and read semantics of every resource, independent
 * of HTTP. create, update, patch and delete take and return cJSON trees and
 * apply the API server's rules (names, namespaces, uids, generations, the
 * status subresource, optimistic concurrency, finalizers, admission and
 * schema validation) before anything reaches the store. The HTTP API and
 * in-process writers (garbage collector, controllers, node runtimes) use the
 * same entry points, so nothing can write an object the API would refuse.
 */
#ifndef VOLRAY_REGISTRY_H
#define VOLRAY_REGISTRY_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "lib/user.h"
#include "registry/resource.h"
#include "store/store.h"

typedef struct registry registry;

struct reg_opts {
	const char *subresource;   /* NULL or "status" */
	const char *field_manager;
	const char *propagation;   /* delete: Background, Foreground, Orphan */
	const char *precond_uid;   /* delete preconditions */
	const char *precond_rv;
	int dry_run;
	int force;                 /* server-side apply */
	int validate_strict;       /* fieldValidation=Strict */
	/* fieldValidation=Warn (the API's default): the unknown fields a
	   custom resource's schema prunes are reported here (what: "unknown
	   field", paths: one a line) for the API's Warning headers. NULL:
	   nobody asks. */
	void (*warn)(void *arg, const char *what, const char *paths);
	void *warn_arg;
	int want_json;             /* fill reg_result.json (the caller unrefs) */
	int grace_set;             /* delete: grace_period was given */
	long grace_period;         /* delete: seconds (pods), 0: at once */
	const user_info *user;     /* who asks; NULL: an unchecked in-process
	                              write (bootstrap, garbage collector) */
	int own_status;            /* status writes: the writer owns the
	                              status (a kubelet's of its pods and
	                              node), so a client whose cache may lag
	                              re-makes a conflicting write over the
	                              newer version; others get the 409 */
};

struct reg_result {
	int code;       /* HTTP status: 200, 201 or the error's code */
	cJSON *body;    /* the object, or a Status; the caller frees it */
	uint64_t rev;   /* revision to wait on before answering (0: none) */
	rbuf *json;     /* with want_json: the stored bytes of body, or NULL */
};

registry *registry_new(store *);
void registry_free(registry *);
/* The store it writes to. */
store *registry_store(registry *);
/*
 * A write of the process's own workers without waiting for it: stage,
 * then make the write (registry_create, _update, _delete...), then
 * commit. registry_commit returns 1 when the write is on its way to etcd
 * (done gets STORE_COMMIT_OK, _CONFLICT or _ERROR on the loop, once the
 * store holds the write or the version that beat it) and 0 when there is
 * nothing to wait for: the log-backed store wrote it already, or the
 * write was refused or changed nothing (res->code says which); done is
 * not called then.
 */
typedef void (*registry_written_fn)(void *arg, int outcome);
void registry_stage(registry *);
int registry_commit(registry *, const struct reg_result *,
    registry_written_fn done, void *arg);

/*
 * The admission hook: called by create, update and patch (server-side apply
 * included) after validation and before the store write, dry runs too, with
 * the object as it would be stored, the stored one (NULL on create) and the
 * requesting user (NULL for unchecked in-process writes). It returns NULL
 * to let the write go on, or a Status (owned by the registry) to refuse
 * it. RBAC's escalation check is one; a node or scheduler check can chain
 * behind it (the hook that is set calls the one it replaced).
 */
typedef cJSON *(*registry_admit_fn)(void *arg, const resource *,
    const char *ns, const cJSON *old, const cJSON *obj, const user_info *);
/*
 * Set the hook; returns the previous one (and its arg) for chaining.
 * statuses: the hook also reviews writes of the status subresource (they
 * then cost a copy of the stored object, for old and new side by side).
 */
registry_admit_fn registry_set_admit(registry *, registry_admit_fn,
    void *arg, void **prev_arg, int statuses);
/*
 * The handler of create-only kinds (resource->create_only: the
 * SelfSubjectAccessReview family): registry_create hands it the decoded
 * body and the user and answers 201 with what it returns, storing nothing.
 * A Status it returns is the error answer; NULL with *cause (malloc'd)
 * answers 400.
 */
typedef cJSON *(*registry_review_fn)(void *arg, const resource *,
    const user_info *, const cJSON *body, char **cause);
void registry_set_review(registry *, registry_review_fn, void *arg);

void registry_create(registry *, const resource *, const char *ns,
    cJSON *obj, const struct reg_opts *, struct reg_result *);
void registry_update(registry *, const resource *, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *,
    struct reg_result *);
/*
 * A status-subresource update from an in-process writer that has just
 * parsed the stored object (current, with its resourceVersion; owned):
 * status replaces its status, as registry_update with subresource
 * "status" would, without parsing the stored version again. A current
 * that is not the stored version gets 409, as an update with its
 * resourceVersion would.
 */
void registry_update_status(registry *, const resource *, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *, struct reg_result *);
/* content_type selects merge, JSON, strategic or apply (server-side). */
void registry_patch(registry *, const resource *, const char *ns,
    const char *name, const char *content_type, const char *body, size_t len,
    const struct reg_opts *, struct reg_result *);
void registry_delete(registry *, const resource *, const char *ns,
    const char *name, const struct reg_opts *, struct reg_result *);
/*
 * Evict a pod (pods/eviction): delete it as registry_delete would, unless
 * its PodDisruptionBudget allows no disruption (429), using one of the
 * budget's disruptions when it does (registry_evict.c).
 */
void registry_evict(registry *, const char *ns, const char *name,
    const struct reg_opts *, struct reg_result *);
/*
 * Bind a pod to a node (pods/binding): 409 if it is terminating, already
 * bound, or has scheduling gates. Answers 201 with a Success Status.
 */
void registry_bind(registry *, const char *ns, const char *name,
    const char *node, struct reg_result *);
/*
 * The scale subresource (autoscaling/v1 Scale) of Deployments and
 * ReplicaSets: read it, or write spec.replicas from a Scale (PUT body, or
 * a patch applied to the current Scale).
 */
void registry_get_scale(registry *, const resource *, const char *ns,
    const char *name, struct reg_result *);
void registry_put_scale(registry *, const resource *, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, int is_patch, struct reg_result *);
/* Remove an object outright (the garbage collector finishing a deletion). */
void registry_remove(registry *, const resource *, const char *ns,
    const char *name, struct reg_result *);
/* GET as a tree (for in-process readers); NULL if absent. */
cJSON *registry_get(registry *, const resource *, const char *ns,
    const char *name);

/*
 * Pods on a node whose runtime answers 1 here are deleted gracefully:
 * marked with deletionTimestamp and deletionGracePeriodSeconds, and
 * removed by the runtime once their containers have stopped. Other pods
 * (on no node, or a node nothing runs) are removed at once.
 */
void registry_set_pod_runtime(registry *, int (*has_runtime)(void *arg,
    const char *node), void *arg);

/* Create the objects every cluster starts with, and install CRD files. */
int registry_bootstrap(registry *, const char *crd_dir, char **cause);
/*
 * The kubernetes Service in default (10.96.0.1:443) to the API's port,
 * made or brought up to date once the API listens.
 */
void registry_ensure_api_service(registry *, int port);

#endif
