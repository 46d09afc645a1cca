/*
 * The scale subresource of Deployments, ReplicaSets, StatefulSets and
 * ReplicationControllers: their
 * spec.replicas seen as an autoscaling/v1 Scale (with status.replicas and
 * the selector as a string, as kubectl scale and autoscalers read it). A
 * write of a Scale, whole (PUT) or as a merge or JSON patch of the current
 * one, becomes an update of spec.replicas (and a resourceVersion
 * precondition, when it has one) through registry_update.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "registry/patch.h"
#include "registry/registry_int.h"

/* The Scale view of an object with spec.replicas and a selector. */
static cJSON *
scale_of(const cJSON *obj)
{
	cJSON *sc = cJSON_CreateObject(), *md, *st;
	const char *keys[] = { "name", "namespace", "uid", "resourceVersion",
	    "creationTimestamp", NULL };
	const cJSON *sel, *map;
	char buf[1024] = "";
	size_t len = 0;
	int i;

	cJSON_AddStringToObject(sc, "kind", "Scale");
	cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1");
	md = cJSON_AddObjectToObject(sc, "metadata");
	for (i = 0; keys[i] != NULL; i++)
		if (json_at(json_at(obj, "metadata"), keys[i]) != NULL)
			cJSON_AddItemToObject(md, keys[i], cJSON_Duplicate(
			    json_at(json_at(obj, "metadata"), keys[i]), 1));
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(sc, "spec"),
	    "replicas", cJSON_GetNumberValue(json_at(obj, "spec.replicas")));
	st = cJSON_AddObjectToObject(sc, "status");
	cJSON_AddNumberToObject(st, "replicas",
	    cJSON_IsNumber(json_at(obj, "status.replicas")) ?
	    json_at(obj, "status.replicas")->valuedouble : 0);
	/* A LabelSelector's matchLabels, or a ReplicationController's map. */
	map = json_at(obj, "spec.selector.matchLabels");
	if (map == NULL && json_at(obj, "spec.selector.matchExpressions") ==
	    NULL)
		map = json_at(obj, "spec.selector");
	cJSON_ArrayForEach(sel, map)
		if (cJSON_IsString(sel))
			len += snprintf(buf + len, len < sizeof buf ?
			    sizeof buf - len : 0, "%s%s=%s", len ? "," : "",
			    sel->string, sel->valuestring);
	cJSON_AddStringToObject(st, "selector", buf);
	return sc;
}

void
registry_get_scale(registry *rg, const resource *r, const char *ns,
    const char *name, struct reg_result *res)
{
	cJSON *obj = registry_get(rg, r, ns, name);

	memset(res, 0, sizeof *res);
	if (obj == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	reg_ok(res, 200, scale_of(obj), 0);
	cJSON_Delete(obj);
}

void
registry_put_scale(registry *rg, const resource *r, const char *ns,
    const char *name, const char *ctype, const char *body, size_t len,
    int is_patch, struct reg_result *res)
{
	cJSON *obj = registry_get(rg, r, ns, name), *sc, *in, *out = NULL;
	const cJSON *rep;
	char *cause = NULL;
	const char *rv;

	memset(res, 0, sizeof *res);
	if (obj == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	sc = scale_of(obj);
	in = cJSON_ParseWithLength(body, len);
	if (in == NULL) {
		cJSON_Delete(obj);
		cJSON_Delete(sc);
		reg_fail(res, status_bad_request("invalid JSON in Scale"));
		return;
	}
	if (!is_patch)
		out = in;
	else {
		if (ctype != NULL && strncmp(ctype,
		    "application/json-patch+json", 27) == 0)
			out = patch_json(sc, in, &cause);
		else
			out = patch_merge(sc, in, &cause);
		cJSON_Delete(in);
	}
	cJSON_Delete(sc);
	rep = json_at(out, "spec.replicas");
	if (out == NULL || !cJSON_IsNumber(rep) || rep->valuedouble < 0) {
		/* autoscaling/v1 Scale, as kube-apiserver names it. */
		static const resource scale = { .group = "autoscaling",
		    .plural = "" };
		cJSON *causes = cJSON_CreateArray(), *st;

		if (cJSON_IsNumber(rep))
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.replicas", "Invalid value: %.0f: must be "
			    "greater than or equal to 0", rep->valuedouble);
		else
			status_add_cause(causes, "FieldValueInvalid",
			    "spec.replicas", "Invalid value: must be greater "
			    "than or equal to 0%s%s", cause ? ": " : "",
			    cause ? cause : "");
		free(cause);
		cJSON_Delete(out);
		cJSON_Delete(obj);
		st = status_invalid(&scale, "Scale", name, causes);
		json_set_str(json_obj(st, "details"), "kind", "Scale");
		reg_fail(res, st);
		return;
	}
	json_set_num(json_obj(obj, "spec"), "replicas", rep->valuedouble);
	rv = json_str(out, "metadata.resourceVersion");
	if (rv != NULL && *rv)
		json_set_str(json_obj(obj, "metadata"), "resourceVersion", rv);
	cJSON_Delete(out);
	registry_update(rg, r, ns, name, obj, NULL, res);
	if (res->code < 300) {
		sc = scale_of(res->body);
		cJSON_Delete(res->body);
		res->body = sc;
	}
}
