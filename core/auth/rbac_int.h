/*
 * Internals shared by the RBAC files: compiled PolicyRules (rbac_rule.c),
 * the bootstrap policy and ClusterRole aggregation (rbac_policy.c) and the
 * authorizer (rbac.c).
 */
#ifndef VOLRAY_RBAC_INT_H
#define VOLRAY_RBAC_INT_H

#include <cjson/cJSON.h>

#include "auth/rbac.h"

#define RBAC_GROUP	"rbac.authorization.k8s.io"

/* A list of a rule; star: it holds "*". */
struct rbac_strs {
	char **v;
	int n;
	int star;
};

/* A PolicyRule compiled once, so requests never parse JSON. */
struct rbac_rule {
	struct rbac_strs verbs, groups, resources, names, urls;
};

/* Compile a "rules" array (members that are not objects are skipped). */
struct rbac_rule *rbac_rule_compile(const cJSON *rules, int *n);
void rbac_rule_free(struct rbac_rule *, int n);
/* Kubernetes' RuleAllows: does this rule allow the request? */
int rbac_rule_allows(const struct rbac_rule *, const rbac_attrs *);
/*
 * Kubernetes' Covers: 1 if the owner rules hold every permission of the
 * servant rules. Otherwise 0 and, when missing is not NULL, the compacted
 * missing rules described as kube-apiserver lists them (sorted, one per
 * line, "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"create\"]}").
 */
int rbac_rule_covers(const struct rbac_rule *const *owner, int nowner,
    const struct rbac_rule *servant, int nservant, char **missing);
/* The rule as JSON (PolicyRule, or with urls only a NonResourceRule). */
cJSON *rbac_rule_json(const struct rbac_rule *);

/*
 * The bootstrap policy (rbac_policy.c): an array of ClusterRoles and
 * ClusterRoleBindings, each labelled and annotated for reconciliation.
 */
cJSON *rbac_policy_objects(char **cause);
/*
 * Create each object that is missing; add to those whose autoupdate
 * annotation is not "false" the rules, subjects, labels and annotations
 * they lack (Kubernetes' reconcile: nothing is removed). -1 with *cause if
 * something could not be written.
 */
int rbac_policy_reconcile(registry *, store *, char **cause);
/*
 * Fill every ClusterRole that has an aggregationRule with the union of the
 * rules of the ClusterRoles its selectors match, writing through the
 * registry as user (the clusterrole-aggregation controller). Repeats until
 * nothing changes, so chains (view -> edit -> admin) settle in one call.
 * Returns the number of roles written. Without wait, on the etcd-backed
 * store, the writes are committed without waiting (registry_commit) and
 * the call stops after the first round that wrote: the writes' events
 * bring the next (rbac.c); with wait (start-up) each write commits
 * before the next round reads it.
 */
int rbac_policy_aggregate(registry *, store *, const user_info *user,
    int wait);

#endif
