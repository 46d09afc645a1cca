/*
 * Admission for apiregistration.k8s.io/v1 APIServices, as kube-aggregator's
 * strategy and validation admit them: the name is spec.version + "." +
 * spec.group; the group a DNS subdomain (empty only for v1), the version a
 * DNS label; groupPriorityMinimum in 1..20000, versionPriority in 1..1000;
 * a service-backed one names its Service's namespace and name, a port
 * (443 by default) and at most one of caBundle and insecureSkipTLSVerify;
 * a Local one (no service) neither. On create the status is emptied, and a
 * Local one is Available at once; the availability checker
 * (api/apiservice_avail.c) writes a service-backed one's.
 *
 * The group-versions this server serves itself have Local APIServices
 * that are made when asked, never stored (api/apiservice.c): their names
 * cannot be created here. kube-apiserver would let one be written and its
 * autoregistration would put the Local one back; volray refuses instead,
 * which leaves the same object in place and says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/podtemplate.h"
#include "registry/status.h"

const resource *
admission_apiservice_local(const char *name)
{
	char gv[512];
	int i;

	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);

		snprintf(gv, sizeof gv, "%s.%s", r->version, r->group);
		if (strcmp(gv, name) == 0)
			return r;
	}
	return NULL;
}

void
admission_apiservice_mutate(store *st, const resource *r, cJSON *obj,
    const cJSON *old)
{
	cJSON *svc = json_at(obj, "spec.service"), *status;
	char now[32];

	if (cJSON_IsObject(svc) &&
	    cJSON_GetObjectItemCaseSensitive(svc, "port") == NULL)
		cJSON_AddNumberToObject(svc, "port", 443);
	if (old != NULL)
		return;
	/* PrepareForCreate: a Local one is available from the start. */
	status = cJSON_CreateObject();
	json_set(obj, "status", status);
	if (cJSON_IsObject(svc))
		return;
	util_now(now);
	admission_apiservice_local_status(status, now);
}

void
admission_apiservice_local_status(cJSON *status, const char *since)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "type", "Available");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "lastTransitionTime", since);
	cJSON_AddStringToObject(c, "reason", "Local");
	cJSON_AddStringToObject(c, "message",
	    "Local APIServices are always available");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(status, "conditions"), c);
}

/* Whether s is a DNS-1123 subdomain: labels joined by dots, <= 253. */
static int
is_subdomain(const char *s)
{
	char label[254];
	const char *dot;
	size_t n;

	if (strlen(s) > 253)
		return 0;
	for (;;) {
		dot = strchr(s, '.');
		n = dot ? (size_t)(dot - s) : strlen(s);
		if (n == 0 || n >= sizeof label)
			return 0;
		memcpy(label, s, n);
		label[n] = '\0';
		if (!podtemplate_is_dns_label(label, 63, 0))
			return 0;
		if (dot == NULL)
			return 1;
		s = dot + 1;
	}
}

static void
check_range(const cJSON *spec, const char *field, int max, cJSON *causes)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, field);
	double d = cJSON_IsNumber(v) ? v->valuedouble : 0;

	if (d <= 0 || d > max)
		status_add_cause(causes, "FieldValueInvalid", field[0] == 'g' ?
		    "spec.groupPriorityMinimum" : "spec.versionPriority",
		    "Invalid value: %g: must be positive and less than %d", d,
		    max);
}

void
admission_apiservice_validate(store *st, const resource *r,
    const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *spec = json_at(obj, "spec"), *svc, *port;
	const char *name = json_str(obj, "metadata.name");
	const char *group = json_str(spec, "group");
	const char *version = json_str(spec, "version");
	const char *ca = json_str(spec, "caBundle");
	int insecure = cJSON_IsTrue(json_at(spec, "insecureSkipTLSVerify"));
	char want[512];

	if (group == NULL)
		group = "";
	if (version == NULL)
		version = "";
	if (old == NULL && name != NULL &&
	    admission_apiservice_local(name) != NULL)
		status_add_cause(causes, "FieldValueForbidden",
		    "metadata.name", "Forbidden: %s is served by this server "
		    "itself (a Local APIService, not stored): it cannot be "
		    "created, replaced or deleted", name);
	snprintf(want, sizeof want, "%s.%s", version, group);
	if (name != NULL && strcmp(name, want) != 0)
		status_add_cause(causes, "FieldValueInvalid", "metadata.name",
		    "Invalid value: \"%s\": must be `spec.version+\".\"+"
		    "spec.group`", name);
	if (*group == '\0' && strcmp(version, "v1") != 0)
		status_add_cause(causes, "FieldValueRequired", "spec.group",
		    "Required value: only v1 may have an empty group and it "
		    "better be legacy kube");
	if (*group != '\0' && !is_subdomain(group))
		status_add_cause(causes, "FieldValueInvalid", "spec.group",
		    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain "
		    "must consist of lower case alphanumeric characters, '-' "
		    "or '.', and must start and end with an alphanumeric "
		    "character", group);
	if (!podtemplate_is_dns_label(version, 63, 1))
		status_add_cause(causes, "FieldValueInvalid", "spec.version",
		    "Invalid value: \"%s\": a DNS-1035 label must consist of "
		    "lower case alphanumeric characters or '-', start with an "
		    "alphabetic character, and end with an alphanumeric "
		    "character", version);
	check_range(spec, "groupPriorityMinimum", 20000, causes);
	check_range(spec, "versionPriority", 1000, causes);
	svc = json_at(spec, "service");
	if (!cJSON_IsObject(svc)) {
		if (ca != NULL && *ca != '\0')
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.caBundle", "Invalid value: \"%zu bytes\": "
			    "local APIServices may not have a caBundle",
			    strlen(ca));
		if (insecure)
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.insecureSkipTLSVerify", "Invalid value: "
			    "true: local APIServices may not have "
			    "insecureSkipTLSVerify");
		return;
	}
	if (json_str(svc, "namespace") == NULL ||
	    *json_str(svc, "namespace") == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.service.namespace", "Required value");
	if (json_str(svc, "name") == NULL || *json_str(svc, "name") == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.service.name", "Required value");
	port = cJSON_GetObjectItemCaseSensitive(svc, "port");
	if (!cJSON_IsNumber(port) || port->valuedouble < 1 ||
	    port->valuedouble > 65535 ||
	    port->valuedouble != (double)port->valueint)
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.service.port", "Invalid value: %g: must be between "
		    "1 and 65535, inclusive", cJSON_IsNumber(port) ?
		    port->valuedouble : 0);
	if (insecure && ca != NULL && *ca != '\0')
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.insecureSkipTLSVerify", "Invalid value: true: may "
		    "not be true if caBundle is present");
}
