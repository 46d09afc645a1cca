/*
 * Admission for the rbac.authorization.k8s.io kinds: the defaults and the
 * validation kube-apiserver applies to Roles, ClusterRoles, RoleBindings
 * and ClusterRoleBindings, with its field paths and wording (kubectl shows
 * them verbatim). Rules need verbs, and either resources with API groups or
 * non-resource URLs (never in a Role); a binding needs a roleRef in the
 * rbac group naming a Role or ClusterRole, which can never change; each
 * subject is a User, Group or ServiceAccount. Whether the requester may
 * grant what a role or binding holds is not checked here but in the RBAC
 * authorizer's escalation hook (auth/rbac.c), which needs to know who asks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/selector.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/status.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

/* A []string as kube-apiserver 1.34's field.Invalid prints it: JSON. */
static void
go_strings(const cJSON *a, char *out, size_t n)
{
	char *s = json_print_sorted(a);

	snprintf(out, n, "%s", s);
	free(s);
}

static int
count(const cJSON *rule, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(rule, key);

	return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
}

/* Every member of the lists of a rule must be a string. */
static void
check_lists(const cJSON *rule, const char *path, cJSON *causes)
{
	static const char *keys[] = { "verbs", "apiGroups", "resources",
	    "resourceNames", "nonResourceURLs", NULL };
	const cJSON *a, *it;
	char field[300];
	int i;

	for (i = 0; keys[i] != NULL; i++) {
		a = cJSON_GetObjectItemCaseSensitive(rule, keys[i]);
		if (a == NULL || cJSON_IsNull(a))
			continue;
		snprintf(field, sizeof field, "%s.%s", path, keys[i]);
		if (!cJSON_IsArray(a)) {
			status_add_cause(causes, "FieldValueTypeInvalid", field,
			    "Invalid value: must be a list of strings");
			continue;
		}
		cJSON_ArrayForEach(it, a)
			if (!cJSON_IsString(it)) {
				status_add_cause(causes,
				    "FieldValueTypeInvalid", field,
				    "Invalid value: must be a list of strings");
				break;
			}
	}
}

/* kube-apiserver's ValidatePolicyRule. */
static void
check_rule(const cJSON *rule, int namespaced, const char *path,
    cJSON *causes)
{
	char field[300], val[1024];

	if (!cJSON_IsObject(rule)) {
		status_add_cause(causes, "FieldValueTypeInvalid", path,
		    "Invalid value: must be an object");
		return;
	}
	check_lists(rule, path, causes);
	if (count(rule, "verbs") == 0) {
		snprintf(field, sizeof field, "%s.verbs", path);
		status_add_cause(causes, "FieldValueRequired", field,
		    "Required value: verbs must contain at least one value");
	}
	if (count(rule, "nonResourceURLs") > 0) {
		snprintf(field, sizeof field, "%s.nonResourceURLs", path);
		go_strings(json_at(rule, "nonResourceURLs"), val, sizeof val);
		if (namespaced)
			status_add_cause(causes, "FieldValueInvalid", field,
			    "Invalid value: %s: namespaced rules cannot apply "
			    "to non-resource URLs", val);
		if (count(rule, "apiGroups") > 0 || count(rule, "resources") >
		    0 || count(rule, "resourceNames") > 0)
			status_add_cause(causes, "FieldValueInvalid", field,
			    "Invalid value: %s: rules cannot apply to both "
			    "regular resources and non-resource URLs", val);
		return;
	}
	if (count(rule, "apiGroups") == 0) {
		snprintf(field, sizeof field, "%s.apiGroups", path);
		status_add_cause(causes, "FieldValueRequired", field,
		    "Required value: resource rules must supply at least one "
		    "api group");
	}
	if (count(rule, "resources") == 0) {
		snprintf(field, sizeof field, "%s.resources", path);
		status_add_cause(causes, "FieldValueRequired", field,
		    "Required value: resource rules must supply at least one "
		    "resource");
	}
}

static void
check_role(const cJSON *obj, int namespaced, cJSON *causes)
{
	const cJSON *rules = json_at(obj, "rules"), *agg, *sels, *it;
	char path[64], *cause = NULL;
	int i = 0;

	if (rules != NULL && !cJSON_IsNull(rules) && !cJSON_IsArray(rules))
		status_add_cause(causes, "FieldValueTypeInvalid", "rules",
		    "Invalid value: must be a list of rules");
	if (!cJSON_IsArray(rules))
		rules = NULL;
	cJSON_ArrayForEach(it, rules) {
		snprintf(path, sizeof path, "rules[%d]", i++);
		check_rule(it, namespaced, path, causes);
	}
	agg = json_at(obj, "aggregationRule");
	if (namespaced || agg == NULL || cJSON_IsNull(agg))
		return;
	sels = json_at(agg, "clusterRoleSelectors");
	if (cJSON_GetArraySize(sels) == 0 || !cJSON_IsArray(sels)) {
		status_add_cause(causes, "FieldValueRequired",
		    "aggregationRule.clusterRoleSelectors", "Required value: at "
		    "least one clusterRoleSelector required if aggregationRule "
		    "is non-nil");
		return;
	}
	i = 0;
	cJSON_ArrayForEach(it, sels) {
		selector *s = cJSON_IsObject(it) ? selector_from_json(it,
		    &cause) : NULL;

		if (s == NULL) {
			snprintf(path, sizeof path,
			    "aggregationRule.clusterRoleSelectors[%d]", i);
			status_add_cause(causes, "FieldValueInvalid", path,
			    "Invalid value: %s", cause ? cause :
			    "must be a label selector");
		}
		free(cause);
		cause = NULL;
		selector_free(s);
		i++;
	}
}

static void
check_subject(const cJSON *s, int namespaced, const char *path, cJSON *causes)
{
	const char *kind = json_str(s, "kind"), *name = json_str(s, "name");
	const char *group = json_str(s, "apiGroup");
	const char *ns = json_str(s, "namespace");
	char field[300];

	if (name == NULL || *name == '\0') {
		snprintf(field, sizeof field, "%s.name", path);
		status_add_cause(causes, "FieldValueRequired", field,
		    "Required value");
	}
	if (group == NULL)
		group = "";
	snprintf(field, sizeof field, "%s.apiGroup", path);
	if (kind != NULL && strcmp(kind, "ServiceAccount") == 0) {
		if (*group)
			status_add_cause(causes, "FieldValueNotSupported",
			    field, "Unsupported value: \"%s\": supported "
			    "values: \"\"", group);
		if (!namespaced && (ns == NULL || *ns == '\0')) {
			snprintf(field, sizeof field, "%s.namespace", path);
			status_add_cause(causes, "FieldValueRequired", field,
			    "Required value");
		}
	} else if (kind != NULL && (strcmp(kind, "User") == 0 ||
	    strcmp(kind, "Group") == 0)) {
		if (strcmp(group, RBAC_GROUP) != 0)
			status_add_cause(causes, "FieldValueNotSupported",
			    field, "Unsupported value: \"%s\": supported "
			    "values: \"" RBAC_GROUP "\"", group);
	} else {
		snprintf(field, sizeof field, "%s.kind", path);
		status_add_cause(causes, "FieldValueNotSupported", field,
		    "Unsupported value: \"%s\": supported values: "
		    "\"ServiceAccount\", \"User\", \"Group\"", kind ? kind : "");
	}
}

static void
check_binding(const cJSON *obj, const cJSON *old, int namespaced,
    cJSON *causes)
{
	const char *group = json_str(obj, "roleRef.apiGroup");
	const char *kind = json_str(obj, "roleRef.kind");
	const char *name = json_str(obj, "roleRef.name");
	const cJSON *it, *subjects;
	char path[64];
	int i = 0;

	if (group == NULL || strcmp(group, RBAC_GROUP) != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "roleRef.apiGroup", "Unsupported value: \"%s\": supported "
		    "values: \"" RBAC_GROUP "\"", group ? group : "");
	if (kind == NULL || (strcmp(kind, "ClusterRole") != 0 &&
	    (!namespaced || strcmp(kind, "Role") != 0)))
		status_add_cause(causes, "FieldValueNotSupported",
		    "roleRef.kind", "Unsupported value: \"%s\": supported "
		    "values: %s", kind ? kind : "", namespaced ?
		    "\"Role\", \"ClusterRole\"" : "\"ClusterRole\"");
	if (name == NULL || *name == '\0')
		status_add_cause(causes, "FieldValueRequired", "roleRef.name",
		    "Required value");
	else if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strchr(name, '/') != NULL || strchr(name, '%') != NULL)
		status_add_cause(causes, "FieldValueInvalid", "roleRef.name",
		    "Invalid value: \"%s\": may not be '.' or '..' and may not "
		    "contain '/' or '%%'", name);
	it = json_at(obj, "subjects");
	if (it != NULL && !cJSON_IsNull(it) && !cJSON_IsArray(it))
		status_add_cause(causes, "FieldValueTypeInvalid", "subjects",
		    "Invalid value: must be a list of subjects");
	subjects = cJSON_IsArray(it) ? it : NULL;
	cJSON_ArrayForEach(it, subjects) {
		snprintf(path, sizeof path, "subjects[%d]", i++);
		check_subject(it, namespaced, path, causes);
	}
	if (old != NULL && !json_equal(json_at(obj, "roleRef"),
	    json_at(old, "roleRef")))
		status_add_cause(causes, "FieldValueInvalid", "roleRef",
		    "Invalid value: {\"APIGroup\":\"%s\",\"Kind\":\"%s\","
		    "\"Name\":\"%s\"}: cannot change roleRef", group ? group : "",
		    kind ? kind : "", name ? name : "");
}

void
admission_rbac_binding_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	cJSON *ref, *it, *subjects;

	/*
	 * The API's defaults: the rbac group for roleRef (a struct, so
	 * there even when not sent), Users and Groups.
	 */
	ref = cJSON_GetObjectItemCaseSensitive(obj, "roleRef");
	if (ref == NULL || cJSON_IsNull(ref))
		ref = json_obj(obj, "roleRef");
	if (cJSON_IsObject(ref) && json_str(ref, "apiGroup") == NULL)
		json_set_str(ref, "apiGroup", RBAC_GROUP);
	subjects = json_at(obj, "subjects");
	if (!cJSON_IsArray(subjects))
		subjects = NULL;
	cJSON_ArrayForEach(it, subjects) {
		const char *kind = json_str(it, "kind");

		if (cJSON_IsObject(it) && kind != NULL &&
		    json_str(it, "apiGroup") == NULL &&
		    (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0))
			json_set_str(it, "apiGroup", RBAC_GROUP);
	}
}

void
admission_rbac_role_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	check_role(obj, 1, causes);
}

void
admission_rbac_clusterrole_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	check_role(obj, 0, causes);
}

void
admission_rbac_rolebinding_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	check_binding(obj, old, 1, causes);
}

void
admission_rbac_clusterrolebinding_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	check_binding(obj, old, 0, causes);
}
