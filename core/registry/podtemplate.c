/*
 * Pod specs inside and outside templates: the defaults kube-apiserver
 * fills into every PodSpec (restartPolicy, dnsPolicy, schedulerName,
 * each container's imagePullPolicy and termination message), and the
 * checks shared by the Pod and workload admission (containers named as
 * DNS labels with an image, a supported restartPolicy, a selector that
 * matches the template's labels, counts that are not negative).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
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

int
podtemplate_is_dns_label(const char *s, int max, int letter_first)
{
	size_t n = strlen(s), i;

	if (n == 0 || (int)n > max)
		return 0;
	if (letter_first ? !islower((unsigned char)s[0]) :
	    !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	if (!(islower((unsigned char)s[n - 1]) ||
	    isdigit((unsigned char)s[n - 1])))
		return 0;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) ||
		    isdigit((unsigned char)s[i]) || s[i] == '-'))
			return 0;
	return 1;
}

static void
container_defaults(cJSON *c)
{
	const char *image = json_str(c, "image");
	const char *slash, *colon;
	cJSON *p;

	if (json_at(c, "imagePullPolicy") == NULL && image != NULL) {
		slash = strrchr(image, '/');
		colon = strrchr(slash ? slash : image, ':');
		default_str(c, "imagePullPolicy", strchr(image, '@') ?
		    "IfNotPresent" : (colon == NULL ||
		    strcmp(colon, ":latest") == 0) ? "Always" : "IfNotPresent");
	}
	default_str(c, "terminationMessagePath", "/dev/termination-log");
	default_str(c, "terminationMessagePolicy", "File");
	if (cJSON_GetObjectItemCaseSensitive(c, "resources") == NULL)
		cJSON_AddObjectToObject(c, "resources");
	cJSON_ArrayForEach(p, json_at(c, "ports"))
		default_str(p, "protocol", "TCP");
}

/* A Job's (or a CronJob's job's) template: the PodSpec defaults but
   restartPolicy, which kube-apiserver requires rather than defaults. */
void
podtemplate_defaults_job(cJSON *spec)
{
	int had = json_at(spec, "restartPolicy") != NULL;

	podtemplate_defaults(spec);
	if (!had && cJSON_IsObject(spec))
		json_del(spec, "restartPolicy");
}

/* Defaults of a PodSpec (also inside templates). */
void
podtemplate_defaults(cJSON *spec)
{
	cJSON *c;

	if (!cJSON_IsObject(spec))
		return;
	default_str(spec, "restartPolicy", "Always");
	default_num(spec, "terminationGracePeriodSeconds", 30);
	default_str(spec, "dnsPolicy", "ClusterFirst");
	default_str(spec, "schedulerName", "default-scheduler");
	if (cJSON_GetObjectItemCaseSensitive(spec, "securityContext") == NULL)
		cJSON_AddObjectToObject(spec, "securityContext");
	cJSON_ArrayForEach(c, json_at(spec, "containers"))
		container_defaults(c);
	cJSON_ArrayForEach(c, json_at(spec, "initContainers"))
		container_defaults(c);
}

void
podtemplate_check(const cJSON *spec, const char *path, cJSON *causes,
    int job)
{
	const cJSON *cs = json_at(spec, "containers"), *c;
	const char *rp = json_str(spec, "restartPolicy");
	char f[256];
	int i = 0;

	if (!cJSON_IsArray(cs) || cJSON_GetArraySize(cs) == 0) {
		snprintf(f, sizeof f, "%s.containers", path);
		status_add_cause(causes, "FieldValueRequired", f,
		    "Required value");
		return;
	}
	cJSON_ArrayForEach(c, cs) {
		const char *name = json_str(c, "name");

		if (name == NULL || *name == '\0') {
			snprintf(f, sizeof f, "%s.containers[%d].name", path, i);
			status_add_cause(causes, "FieldValueRequired", f,
			    "Required value");
		} else if (!podtemplate_is_dns_label(name, 63, 0)) {
			snprintf(f, sizeof f, "%s.containers[%d].name", path, i);
			status_add_cause(causes, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": a lowercase RFC 1123 label "
			    "must consist of lower case alphanumeric "
			    "characters or '-', and must start and end with an "
			    "alphanumeric character (e.g. 'my-name',  or "
			    "'123-abc', regex used for validation is "
			    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')", name);
		} else {
			/* kube-apiserver's Duplicate, on the later one. */
			const cJSON *d;
			int j = 0;

			cJSON_ArrayForEach(d, cs) {
				if (j++ >= i)
					break;
				if (json_str(d, "name") != NULL &&
				    strcmp(json_str(d, "name"), name) == 0) {
					snprintf(f, sizeof f,
					    "%s.containers[%d].name", path, i);
					status_add_cause(causes,
					    "FieldValueDuplicate", f,
					    "Duplicate value: \"%s\"", name);
					break;
				}
			}
		}
		if (json_str(c, "image") == NULL ||
		    *json_str(c, "image") == '\0') {
			snprintf(f, sizeof f, "%s.containers[%d].image", path, i);
			status_add_cause(causes, "FieldValueRequired", f,
			    "Required value");
		}
		i++;
	}
	if (rp != NULL && strcmp(rp, "Always") != 0 &&
	    strcmp(rp, "OnFailure") != 0 && strcmp(rp, "Never") != 0) {
		snprintf(f, sizeof f, "%s.restartPolicy", path);
		status_add_cause(causes, "FieldValueNotSupported", f,
		    "Unsupported value: \"%s\": supported values: \"Always\", "
		    "\"OnFailure\", \"Never\"", rp);
	}
	if (job && rp == NULL) {
		/* A Job's template has no default restartPolicy. */
		snprintf(f, sizeof f, "%s.restartPolicy", path);
		status_add_cause(causes, "FieldValueRequired", f,
		    "Required value: valid values: \"OnFailure\", \"Never\"");
	}
	if (job && rp != NULL && strcmp(rp, "Always") == 0) {
		snprintf(f, sizeof f, "%s.restartPolicy", path);
		status_add_cause(causes, "FieldValueNotSupported", f,
		    "Unsupported value: \"Always\": supported values: "
		    "\"OnFailure\", \"Never\"");
	}
}

void
podtemplate_check_nonneg(const cJSON *obj, const char *path, cJSON *causes)
{
	const cJSON *v = json_at(obj, path);

	if (v != NULL && !cJSON_IsNumber(v) && !cJSON_IsNull(v))
		status_add_cause(causes, "FieldValueTypeInvalid", path,
		    "Invalid value: %s: must be an integer", cJSON_IsString(v) ?
		    "string" : cJSON_IsBool(v) ? "boolean" : cJSON_IsArray(v) ?
		    "array" : "object");
	else if (cJSON_IsNumber(v) && v->valuedouble < 0)
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: %g: must be greater than or equal to 0",
		    v->valuedouble);
}

/* The selector must match the template's labels (apps/v1 rule). */
void
podtemplate_check_selector(const cJSON *obj, cJSON *causes)
{
	const cJSON *ml = json_at(obj, "spec.selector.matchLabels"), *it;
	const cJSON *labels = json_at(obj, "spec.template.metadata.labels");
	const cJSON *sel = json_at(obj, "spec.selector");

	if (sel == NULL || (ml == NULL && json_at(sel,
	    "matchExpressions") == NULL)) {
		status_add_cause(causes, "FieldValueRequired", "spec.selector",
		    "Required value");
		return;
	}
	cJSON_ArrayForEach(it, ml) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels,
		    it->string);

		if (!cJSON_IsString(l) || !cJSON_IsString(it) ||
		    strcmp(l->valuestring, it->valuestring) != 0) {
			/* kube-apiserver 1.34 shows the value as JSON. */
			char *v = json_print_sorted(labels);

			status_add_cause(causes, "FieldValueInvalid",
			    "spec.template.metadata.labels", "Invalid value: "
			    "%s: `selector` does not match template `labels`",
			    v);
			free(v);
			return;
		}
	}
}
