/*
 * Admission for the workload kinds whose controllers are Lua scripts in
 * lua/controllers/: the defaults kube-apiserver fills in (a DaemonSet's
 * RollingUpdate with maxUnavailable 1, a StatefulSet's OrderedReady
 * policy, a CronJob's concurrency policy and history limits, ...) and
 * the checks a kubectl user meets (a selector that matches the template,
 * the restartPolicy a controller can keep, immutable selectors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "lib/tz.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/podtemplate.h"
#include "registry/status.h"

static void
default_str(cJSON *o, const char *key, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddStringToObject(o, key, v);
}

static void
default_num(cJSON *o, const char *key, double v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddNumberToObject(o, key, v);
}

static void
daemonset_mutate(cJSON *obj)
{
	cJSON *spec = json_obj(obj, "spec"), *strat, *ru;

	default_num(spec, "revisionHistoryLimit", 10);
	strat = json_obj(spec, "updateStrategy");
	default_str(strat, "type", "RollingUpdate");
	if (strcmp(json_str(strat, "type"), "RollingUpdate") == 0) {
		ru = json_obj(strat, "rollingUpdate");
		default_num(ru, "maxUnavailable", 1);
		default_num(ru, "maxSurge", 0);
	}
	podtemplate_defaults(json_at(spec, "template.spec"));
}

/* An int-or-percent that is zero: 0, "0" or "0%". */
static int
is_zero(const cJSON *v)
{
	if (v == NULL)
		return 1;
	if (cJSON_IsNumber(v))
		return v->valuedouble == 0;
	return cJSON_IsString(v) && (strcmp(v->valuestring, "0") == 0 ||
	    strcmp(v->valuestring, "0%") == 0);
}

/* The template of a controller that restarts its pods: Always only. */
static void
check_template(const cJSON *obj, cJSON *causes)
{
	const char *rp = json_str(obj, "spec.template.spec.restartPolicy");

	if (json_at(obj, "spec.template.spec") == NULL) {
		status_add_cause(causes, "FieldValueRequired",
		    "spec.template.spec.containers", "Required value");
		return;
	}
	podtemplate_check(json_at(obj, "spec.template.spec"),
	    "spec.template.spec", causes, 0);
	if (rp != NULL && strcmp(rp, "Always") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.template.spec.restartPolicy", "Unsupported value: "
		    "\"%s\": supported values: \"Always\"", rp);
}

static void
check_immutable(const cJSON *obj, const cJSON *old, const char *path,
    cJSON *causes)
{
	if (old != NULL && !json_equal(json_at(obj, path),
	    json_at(old, path))) {
		/* kube-apiserver 1.34 shows the new value as JSON. */
		char *v = json_print_sorted(json_at(obj, path));

		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: %s: field is immutable", v);
		free(v);
	}
}

static void
daemonset_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *ru = json_at(obj, "spec.updateStrategy.rollingUpdate");
	const char *t = json_str(obj, "spec.updateStrategy.type");

	podtemplate_check_selector(obj, causes);
	check_immutable(obj, old, "spec.selector", causes);
	check_template(obj, causes);
	if (t != NULL && strcmp(t, "RollingUpdate") != 0 &&
	    strcmp(t, "OnDelete") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.updateStrategy.type", "Unsupported value: \"%s\": "
		    "supported values: \"OnDelete\", \"RollingUpdate\"", t);
	if (ru != NULL && is_zero(json_at(ru, "maxUnavailable")) &&
	    is_zero(json_at(ru, "maxSurge")))
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.updateStrategy.rollingUpdate.maxUnavailable",
		    "Invalid value: 0: may not be 0 when `maxSurge` is 0");
}

static void
statefulset_mutate(cJSON *obj)
{
	cJSON *spec = json_obj(obj, "spec"), *strat, *pol;

	default_num(spec, "replicas", 1);
	default_num(spec, "revisionHistoryLimit", 10);
	default_str(spec, "podManagementPolicy", "OrderedReady");
	strat = json_obj(spec, "updateStrategy");
	default_str(strat, "type", "RollingUpdate");
	if (strcmp(json_str(strat, "type"), "RollingUpdate") == 0)
		default_num(json_obj(strat, "rollingUpdate"), "partition", 0);
	pol = json_obj(spec, "persistentVolumeClaimRetentionPolicy");
	default_str(pol, "whenDeleted", "Retain");
	default_str(pol, "whenScaled", "Retain");
	podtemplate_defaults(json_at(spec, "template.spec"));
}

/*
 * Only these StatefulSet spec fields may change, as kube-apiserver
 * words it when another one does.
 */
static void
check_statefulset_update(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	static const char *const mutable[] = { "replicas", "ordinals",
	    "template", "updateStrategy",
	    "persistentVolumeClaimRetentionPolicy", "minReadySeconds", NULL };
	cJSON *a, *b;
	int i, same;

	if (old == NULL)
		return;
	a = cJSON_Duplicate(json_at(obj, "spec"), 1);
	b = cJSON_Duplicate(json_at(old, "spec"), 1);
	for (i = 0; mutable[i] != NULL; i++) {
		json_del(a, mutable[i]);
		json_del(b, mutable[i]);
	}
	same = json_equal(a, b);
	cJSON_Delete(a);
	cJSON_Delete(b);
	if (!same)
		status_add_cause(causes, "FieldValueForbidden", "spec",
		    "Forbidden: updates to statefulset spec for fields other "
		    "than 'replicas', 'ordinals', 'template', "
		    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
		    "and 'minReadySeconds' are forbidden");
}

static void
statefulset_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const char *pmp = json_str(obj, "spec.podManagementPolicy");
	const char *t = json_str(obj, "spec.updateStrategy.type");

	podtemplate_check_nonneg(obj, "spec.replicas", causes);
	podtemplate_check_nonneg(obj,
	    "spec.updateStrategy.rollingUpdate.partition", causes);
	podtemplate_check_selector(obj, causes);
	check_template(obj, causes);
	if (pmp != NULL && strcmp(pmp, "OrderedReady") != 0 &&
	    strcmp(pmp, "Parallel") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.podManagementPolicy", "Unsupported value: \"%s\": "
		    "supported values: \"OrderedReady\", \"Parallel\"", pmp);
	if (t != NULL && strcmp(t, "RollingUpdate") != 0 &&
	    strcmp(t, "OnDelete") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.updateStrategy.type", "Unsupported value: \"%s\": "
		    "supported values: \"OnDelete\", \"RollingUpdate\"", t);
	check_statefulset_update(obj, old, causes);
}

/* Selector and labels from the template's labels, when not given. */
static void
rc_mutate(cJSON *obj)
{
	cJSON *spec = json_obj(obj, "spec"), *md = json_obj(obj, "metadata");
	const cJSON *labels = json_at(spec, "template.metadata.labels");

	if (cJSON_IsObject(labels) && labels->child != NULL) {
		if (cJSON_GetArraySize(json_at(spec, "selector")) == 0)
			json_set(spec, "selector", cJSON_Duplicate(labels, 1));
		if (cJSON_GetArraySize(json_at(md, "labels")) == 0)
			json_set(md, "labels", cJSON_Duplicate(labels, 1));
	}
	default_num(spec, "replicas", 1);
	podtemplate_defaults(json_at(spec, "template.spec"));
}

/* An equality selector, not empty, that the template's labels satisfy. */
static void
rc_validate(const cJSON *obj, cJSON *causes)
{
	const cJSON *sel = json_at(obj, "spec.selector"), *it;
	const cJSON *labels = json_at(obj, "spec.template.metadata.labels");

	podtemplate_check_nonneg(obj, "spec.replicas", causes);
	if (cJSON_GetArraySize(sel) == 0)
		status_add_cause(causes, "FieldValueRequired",
		    "spec.selector", "Required value");
	cJSON_ArrayForEach(it, sel) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels,
		    it->string);

		if (!cJSON_IsString(l) || !cJSON_IsString(it) ||
		    strcmp(l->valuestring, it->valuestring) != 0) {
			char *v = json_print_sorted(labels);

			status_add_cause(causes, "FieldValueInvalid",
			    "spec.template.metadata.labels", "Invalid value: "
			    "%s: `selector` does not match template `labels`",
			    v);
			free(v);
			break;
		}
	}
	if (json_at(obj, "spec.template") != NULL)
		check_template(obj, causes);
}

static void
cronjob_mutate(cJSON *obj)
{
	cJSON *spec = json_obj(obj, "spec"), *jspec;

	default_str(spec, "concurrencyPolicy", "Allow");
	if (cJSON_GetObjectItemCaseSensitive(spec, "suspend") == NULL)
		cJSON_AddFalseToObject(spec, "suspend");
	default_num(spec, "successfulJobsHistoryLimit", 3);
	default_num(spec, "failedJobsHistoryLimit", 1);
	jspec = json_obj(json_obj(spec, "jobTemplate"), "spec");
	podtemplate_defaults_job(json_at(jspec, "template.spec"));
}

/*
 * The checks kube-apiserver makes of a CronJob that can be made without
 * reading the schedule as the controller does: a name short enough for
 * its Jobs, five fields or a descriptor, no TZ in the schedule, a time
 * zone that exists, a known concurrency policy, a Job's pod template.
 */
static void
cronjob_validate(const cJSON *obj, cJSON *causes)
{
	const char *name = json_str(obj, "metadata.name");
	const char *sch = json_str(obj, "spec.schedule");
	const char *tz = json_str(obj, "spec.timeZone");
	const char *cp = json_str(obj, "spec.concurrencyPolicy");
	const char *p;
	int fields = 0, in = 0, off;

	if (name != NULL && strlen(name) > 52)
		status_add_cause(causes, "FieldValueInvalid", "metadata.name",
		    "Invalid value: \"%s\": must be no more than 52 characters",
		    name);
	if (sch == NULL || *sch == '\0')
		status_add_cause(causes, "FieldValueRequired", "spec.schedule",
		    "Required value");
	else if (strstr(sch, "TZ") != NULL)
		status_add_cause(causes, "FieldValueInvalid", "spec.schedule",
		    "Invalid value: \"%s\": cannot use TZ or CRON_TZ in "
		    "schedule, use timeZone field instead", sch);
	else {
		for (p = sch; *p; p++) {
			if (*p != ' ' && *p != '\t' && !in)
				fields++;
			in = *p != ' ' && *p != '\t';
		}
		if (*sch != '@' && fields != 5)
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.schedule", "Invalid value: \"%s\": expected "
			    "exactly 5 fields, found %d: %s", sch, fields, sch);
	}
	if (tz != NULL && strcasecmp(tz, "Local") == 0)
		status_add_cause(causes, "FieldValueInvalid", "spec.timeZone",
		    "Invalid value: \"%s\": timeZone must be an explicit time "
		    "zone as defined in https://www.iana.org/time-zones", tz);
	else if (tz != NULL && tz_offset(tz, 0, &off) != 0)
		status_add_cause(causes, "FieldValueInvalid", "spec.timeZone",
		    "Invalid value: \"%s\": unknown time zone %s", tz, tz);
	if (cp != NULL && strcmp(cp, "Allow") != 0 &&
	    strcmp(cp, "Forbid") != 0 && strcmp(cp, "Replace") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.concurrencyPolicy", "Unsupported value: \"%s\": "
		    "supported values: \"Allow\", \"Forbid\", \"Replace\"", cp);
	podtemplate_check_nonneg(obj, "spec.startingDeadlineSeconds", causes);
	podtemplate_check_nonneg(obj, "spec.successfulJobsHistoryLimit",
	    causes);
	podtemplate_check_nonneg(obj, "spec.failedJobsHistoryLimit", causes);
	if (json_at(obj, "spec.jobTemplate.spec.template.spec") == NULL)
		status_add_cause(causes, "FieldValueRequired",
		    "spec.jobTemplate.spec.template.spec.containers",
		    "Required value");
	else
		podtemplate_check(json_at(obj,
		    "spec.jobTemplate.spec.template.spec"),
		    "spec.jobTemplate.spec.template.spec", causes, 1);
}

/* An int-or-percent that is not negative, as kube-apiserver checks it. */
static void
check_intstr(const cJSON *obj, const char *path, cJSON *causes)
{
	const cJSON *v = json_at(obj, path);
	const char *s;
	char *end;
	long n;

	if (v == NULL)
		return;
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0)
			status_add_cause(causes, "FieldValueInvalid", path,
			    "Invalid value: %d: must be greater than or equal "
			    "to 0", v->valueint);
		return;
	}
	s = cJSON_IsString(v) ? v->valuestring : "";
	n = strtol(s, &end, 10);
	if (end == s || strcmp(end, "%") != 0)
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": a valid percent string must be a "
		    "numeric string followed by an ending '%%' (e.g. '1%%',  "
		    "or '93%%', regex used for validation is '[0-9]+%%')", s);
	else if (n < 0 || n > 100)
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": must be no greater than 100%%", s);
}

static void
pdb_validate(const cJSON *obj, cJSON *causes)
{
	const char *p = json_str(obj, "spec.unhealthyPodEvictionPolicy");

	if (json_at(obj, "spec.minAvailable") != NULL &&
	    json_at(obj, "spec.maxUnavailable") != NULL)
		status_add_cause(causes, "FieldValueInvalid", "spec",
		    "Invalid value: policy.PodDisruptionBudgetSpec{...}: "
		    "minAvailable and maxUnavailable cannot be both set");
	check_intstr(obj, "spec.minAvailable", causes);
	check_intstr(obj, "spec.maxUnavailable", causes);
	if (p != NULL && strcmp(p, "IfHealthyBudget") != 0 &&
	    strcmp(p, "AlwaysAllow") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "spec.unhealthyPodEvictionPolicy", "Unsupported value: "
		    "\"%s\": supported values: \"AlwaysAllow\", "
		    "\"IfHealthyBudget\"", p);
}

void
admission_workload_daemonset_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	daemonset_mutate(obj);
}

void
admission_workload_daemonset_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	daemonset_validate(obj, old, causes);
}

void
admission_workload_statefulset_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	statefulset_mutate(obj);
}

void
admission_workload_statefulset_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	statefulset_validate(obj, old, causes);
}

void
admission_workload_rc_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	rc_mutate(obj);
}

void
admission_workload_rc_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	rc_validate(obj, causes);
}

void
admission_workload_cronjob_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	cronjob_mutate(obj);
}

void
admission_workload_cronjob_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	cronjob_validate(obj, causes);
}

void
admission_workload_pdb_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	pdb_validate(obj, causes);
}
