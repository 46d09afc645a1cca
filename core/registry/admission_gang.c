/*
 * Admission for Kubernetes' own gang API, scheduling.k8s.io/v1alpha2
 * (1.36, alpha behind GenericWorkload): Workloads and PodGroups, and the
 * pod's spec.schedulingGroup that joins one. kube-apiserver's checks
 * (pkg/apis/scheduling/validation and the types' declarative tags), in
 * its words and with the field's path: a scheduling policy is exactly
 * one of basic and gang, a gang's minCount is at least 1, a Workload
 * has 1 to 8 pod group templates with distinct DNS-label names, and
 * what 1.36 makes immutable stays so (a PodGroup's scheduling policy and
 * template reference, a Workload's templates and its controllerRef once
 * set, a pod's scheduling group). A PodGroup naming a Workload that
 * does not exist, or is being deleted, is refused as the PodGroup
 * lifecycle page says.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/status.h"

#define PODGROUPS	"podgroups.scheduling.k8s.io"
#define WORKLOADS	"workloads.scheduling.k8s.io"
#define MAX_TEMPLATES	8

#define LABEL_MSG	"a lowercase RFC 1123 label must consist of lower " \
	"case alphanumeric characters or '-', and must start and end with " \
	"an alphanumeric character (e.g. 'my-name',  or '123-abc', regex " \
	"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define SUBDOMAIN_MSG	"a lowercase RFC 1123 subdomain must consist of " \
	"lower case alphanumeric characters, '-' or '.', and must start and " \
	"end with an alphanumeric character (e.g. 'example.com', regex used " \
	"for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]" \
	"([-a-z0-9]*[a-z0-9])?)*')"

/* Go's IsDNS1123Label (dots refused) or IsDNS1123Subdomain. */
static int
dns_name_ok(const char *s, int subdomain)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > (subdomain ? 253u : 63u))
		return 0;
	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (islower(c) || isdigit(c))
			continue;
		if ((c != '-' && (c != '.' || !subdomain)) || i == 0 ||
		    i == n - 1)
			return 0;
		if (c == '.' && (s[i - 1] == '.' || s[i - 1] == '-' ||
		    s[i + 1] == '-'))
			return 0;
	}
	return 1;
}

/* A required name: Required when missing or empty, else its format. */
static void
check_name(const cJSON *o, const char *key, const char *path, int subdomain,
    cJSON *causes)
{
	const char *s = json_str(o, key);

	if (s == NULL || *s == '\0')
		status_add_cause(causes, "FieldValueRequired", path,
		    "Required value");
	else if (!dns_name_ok(s, subdomain))
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": %s", s, subdomain ? SUBDOMAIN_MSG :
		    LABEL_MSG);
}

/* spec.schedulingPolicy or a template's: exactly one of basic and gang,
   a gang's minCount positive. */
static void
check_policy(const cJSON *pol, const char *path, cJSON *causes)
{
	const cJSON *basic = cJSON_GetObjectItemCaseSensitive(pol, "basic");
	const cJSON *gang = cJSON_GetObjectItemCaseSensitive(pol, "gang");
	const cJSON *min;
	char sub[256];

	if (cJSON_IsNull(basic))
		basic = NULL;
	if (cJSON_IsNull(gang))
		gang = NULL;
	if (basic == NULL && gang == NULL) {
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"\": must specify one of: `basic`, "
		    "`gang`");
		return;
	}
	if (basic != NULL && gang != NULL) {
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"{`basic`, `gang`}\": exactly one of "
		    "`basic`, `gang` is required, but multiple fields are set");
		return;
	}
	if (gang == NULL)
		return;
	snprintf(sub, sizeof sub, "%s.gang.minCount", path);
	min = cJSON_GetObjectItemCaseSensitive(gang, "minCount");
	if (!cJSON_IsNumber(min) || min->valuedouble == 0)
		status_add_cause(causes, "FieldValueRequired", sub,
		    "Required value");
	else if (min->valuedouble < 0)
		status_add_cause(causes, "FieldValueInvalid", sub,
		    "Invalid value: %lld: must be greater than zero",
		    (long long)min->valuedouble);
}

/* An update's change of path, refused as ValidateImmutableField says. */
static void
immutable(const cJSON *obj, const cJSON *old, const char *path,
    cJSON *causes)
{
	char *v;

	if (old == NULL || json_equal(json_at(obj, path), json_at(old, path)))
		return;
	v = json_print_sorted(json_at(obj, path));
	status_add_cause(causes, "FieldValueInvalid", path,
	    "Invalid value: %s: field is immutable", v != NULL ? v : "null");
	free(v);
}

/* The Workload a PodGroup's template reference names must exist and not
   be going. */
static void
check_workload_exists(store *st, const cJSON *obj, cJSON *causes)
{
	const char *ns = json_str(obj, "metadata.namespace");
	const char *name = json_str(obj,
	    "spec.podGroupTemplateRef.workload.workloadName");
	const store_obj *o;
	cJSON *t;
	int going;

	if (st == NULL || ns == NULL || name == NULL || *name == '\0')
		return;
	if ((o = store_get(st, WORKLOADS, ns, name)) == NULL) {
		status_add_cause(causes, "FieldValueNotFound",
		    "spec.podGroupTemplateRef.workload.workloadName",
		    "Not found: \"%s\"", name);
		return;
	}
	t = store_obj_tree(o);
	going = json_at(t, "metadata.deletionTimestamp") != NULL;
	cJSON_Delete(t);
	if (going)
		status_add_cause(causes, "FieldValueForbidden",
		    "spec.podGroupTemplateRef.workload.workloadName",
		    "Forbidden: workload %s is being deleted", name);
}

static void
podgroup_validate(store *st, const cJSON *obj, const cJSON *old,
    cJSON *causes)
{
	const cJSON *ref = json_at(obj, "spec.podGroupTemplateRef");
	const cJSON *w;

	if (cJSON_IsObject(ref) && !cJSON_IsNull(ref)) {
		w = cJSON_GetObjectItemCaseSensitive(ref, "workload");
		if (w == NULL || cJSON_IsNull(w))
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.podGroupTemplateRef", "Invalid value: \"\": "
			    "must specify one of: `workload`");
		else {
			check_name(w, "workloadName",
			    "spec.podGroupTemplateRef.workload.workloadName", 1,
			    causes);
			check_name(w, "podGroupTemplateName",
			    "spec.podGroupTemplateRef.workload."
			    "podGroupTemplateName", 0, causes);
		}
	}
	check_policy(json_at(obj, "spec.schedulingPolicy"),
	    "spec.schedulingPolicy", causes);
	if (old == NULL) {
		if (cJSON_GetArraySize(causes) == 0)
			check_workload_exists(st, obj, causes);
		return;
	}
	immutable(obj, old, "spec.podGroupTemplateRef", causes);
	immutable(obj, old, "spec.schedulingPolicy", causes);
}

static void
check_controller_ref(const cJSON *ref, cJSON *causes)
{
	const char *g = json_str(ref, "apiGroup");

	if (g != NULL && *g != '\0' && !dns_name_ok(g, 1))
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.controllerRef.apiGroup", "Invalid value: \"%s\": %s",
		    g, SUBDOMAIN_MSG);
	if (json_str(ref, "kind") == NULL || *json_str(ref, "kind") == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.controllerRef.kind", "Required value");
	if (json_str(ref, "name") == NULL || *json_str(ref, "name") == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.controllerRef.name", "Required value");
}

static void
templates_validate(const cJSON *list, cJSON *causes)
{
	const cJSON *t, *u;
	char path[128];
	int i = 0, j, n = cJSON_GetArraySize(list);

	if (n == 0) {
		status_add_cause(causes, "FieldValueRequired",
		    "spec.podGroupTemplates",
		    "Required value: must have at least one item");
		return;
	}
	if (n > MAX_TEMPLATES) {
		status_add_cause(causes, "FieldValueTooMany",
		    "spec.podGroupTemplates", "Too many: %d: must have at most "
		    "%d items", n, MAX_TEMPLATES);
		return;
	}
	cJSON_ArrayForEach(t, list) {
		const char *name = json_str(t, "name");

		snprintf(path, sizeof path, "spec.podGroupTemplates[%d].name",
		    i);
		check_name(t, "name", path, 0, causes);
		j = 0;
		cJSON_ArrayForEach(u, list) {
			if (j++ >= i)
				break;
			if (name != NULL && json_str(u, "name") != NULL &&
			    strcmp(name, json_str(u, "name")) == 0) {
				snprintf(path, sizeof path,
				    "spec.podGroupTemplates[%d]", i);
				status_add_cause(causes, "FieldValueDuplicate",
				    path, "Duplicate value: \"%s\"", name);
				break;
			}
		}
		snprintf(path, sizeof path,
		    "spec.podGroupTemplates[%d].schedulingPolicy", i);
		check_policy(cJSON_GetObjectItemCaseSensitive(t,
		    "schedulingPolicy"), path, causes);
		i++;
	}
}

static void
workload_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *ref = json_at(obj, "spec.controllerRef");

	if (old != NULL && json_at(old, "spec.controllerRef") != NULL)
		immutable(obj, old, "spec.controllerRef", causes);
	else if (cJSON_IsObject(ref))
		check_controller_ref(ref, causes);
	if (old != NULL) {
		immutable(obj, old, "spec.podGroupTemplates", causes);
		return;
	}
	templates_validate(json_at(obj, "spec.podGroupTemplates"), causes);
}

void
admission_gang_podgroup_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	podgroup_validate(st, obj, old, causes);
}

void
admission_gang_workload_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	workload_validate(obj, old, causes);
}

int
admission_gang_pod_validate(const cJSON *obj, const cJSON *old,
    cJSON *causes)
{
	const cJSON *sg = json_at(obj, "spec.schedulingGroup");

	if (old != NULL && !json_equal(sg, json_at(old,
	    "spec.schedulingGroup"))) {
		immutable(obj, old, "spec.schedulingGroup", causes);
		return 1;
	}
	if (sg == NULL || cJSON_IsNull(sg) || old != NULL)
		return 0;
	if (json_at(sg, "podGroupName") == NULL)
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.schedulingGroup", "Invalid value: \"\": must specify "
		    "one of: `podGroupName`");
	else
		check_name(sg, "podGroupName",
		    "spec.schedulingGroup.podGroupName", 1, causes);
	return 0;
}
