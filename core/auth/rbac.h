/*
 * RBAC: rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings decide what a user may do, with kube-apiserver's
 * semantics (verbs, apiGroups, resources and subresources, resourceNames,
 * nonResourceURLs, "*" wildcards; members of system:masters may do
 * anything). The API asks before it serves a request, the controllers and
 * the scheduler ask before they act.
 */
#ifndef VOLRAY_RBAC_H
#define VOLRAY_RBAC_H

#include <cjson/cJSON.h>

#include "lib/user.h"
#include "registry/registry.h"
#include "store/store.h"

typedef struct rbac rbac;

/* What a request wants to do (Kubernetes' authorizer.Attributes). */
typedef struct rbac_attrs {
	const char *verb;         /* get list watch create update patch delete
	                             deletecollection (or bind, escalate, ...);
	                             for non-resource requests the lowercase
	                             HTTP method: get, post, put, ... */
	const char *api_group;    /* "" for the core group */
	const char *resource;     /* plural, "" for non-resource requests */
	const char *subresource;  /* "" when none */
	const char *ns;           /* "" for cluster-scoped or all namespaces */
	const char *name;         /* "" when none */
	const char *path;         /* non-resource requests: the URL path;
	                             NULL for resource requests */
} rbac_attrs;

rbac *rbac_new(store *, registry *);
void rbac_free(rbac *);
/*
 * Create the bootstrap policy (cluster-admin, admin/edit/view and their
 * aggregation, system:* roles and bindings, the in-process components'
 * roles) where missing, and keep it up to date.
 */
int rbac_bootstrap(rbac *, char **cause);
/*
 * 1 allowed, 0 denied. *reason (malloc'd, may be NULL) says why: "RBAC:
 * allowed by ClusterRoleBinding ...", or on denial the bindings whose role
 * is missing. A NULL user is an unchecked in-process caller: allowed.
 */
int rbac_authorize(rbac *, const user_info *, const rbac_attrs *,
    char **reason);
/*
 * The same with a reason only on denial (*reason NULL when allowed): what
 * a request's check needs, without writing out the allowing binding each
 * time (the answer to an access review says it; a request does not).
 */
int rbac_check(rbac *, const user_info *, const rbac_attrs *,
    char **reason);
/* The 403 Status kube-apiserver answers for a denied request. */
cJSON *rbac_forbidden(const user_info *, const rbac_attrs *);
/* The same with rbac_authorize's reason appended (": RBAC: ..."). */
cJSON *rbac_forbidden_reason(const user_info *, const rbac_attrs *,
    const char *reason);
/*
 * The answers to POST selfsubjectaccessreviews and selfsubjectrulesreviews
 * (body: the decoded request): a SelfSubjectAccessReview with
 * status.allowed and status.reason, or a SelfSubjectRulesReview with
 * status.resourceRules, nonResourceRules, incomplete (and evaluationError
 * when a binding names a missing role). NULL with *cause (malloc'd) when
 * the body is invalid. Nothing is stored. rbac_new also registers them as
 * the registry's review handler, so registry_create answers these kinds
 * when reg_opts.user is set.
 */
cJSON *rbac_self_access_review(rbac *, const user_info *, const cJSON *body,
    char **cause);
cJSON *rbac_self_rules_review(rbac *, const user_info *, const cJSON *body,
    char **cause);
/*
 * --authorization-mode=AlwaysAllow: rbac_authorize allows everything (so do
 * the reviews, the escalation checks and the controllers' calls, as with
 * kube-apiserver's AlwaysAllow authorizer); the objects are still served
 * and the bootstrap policy still kept. Off by default.
 */
void rbac_set_always_allow(rbac *, int on);
/* How many times the index has been rebuilt (tests, metrics). */
uint64_t rbac_rebuilds(const rbac *);

#endif
