/*
 * The pods/binding subresource: the scheduler's answer for a pod. A
 * binding sets spec.nodeName and the PodScheduled condition of a pod that
 * has no node yet, is not being deleted and has no scheduling gates; any
 * other pod gets 409, as kube-apiserver's BindingREST answers. A bind is
 * one store_put of the pod: no validation or admission runs, since nothing
 * else of the pod changes.
 */
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/registry_int.h"

/* Set or replace a condition in status.conditions. */
static void
set_condition(cJSON *obj, const char *type, const char *status)
{
	cJSON *st = json_obj(obj, "status"), *conds, *c, *it;
	char now[32];

	conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	if (!cJSON_IsArray(conds)) {
		conds = cJSON_CreateArray();
		json_set(st, "conditions", conds);
	}
	util_now(now);
	cJSON_ArrayForEach(it, conds) {
		if (json_str(it, "type") && strcmp(json_str(it, "type"), type) ==
		    0) {
			json_set_str(it, "status", status);
			json_set_str(it, "lastTransitionTime", now);
			/* The reason and message were the old status's. */
			json_del(it, "reason");
			json_del(it, "message");
			return;
		}
	}
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddNullToObject(c, "lastProbeTime");
	cJSON_AddStringToObject(c, "lastTransitionTime", now);
	cJSON_AddItemToArray(conds, c);
}

void
registry_bind(registry *rg, const char *ns, const char *name,
    const char *node, struct reg_result *res)
{
	const resource *r = resource_find("", "v1", "pods");
	const store_obj *cur = store_get(rg->st, "pods", ns, name);
	cJSON *obj, *gates;
	uint64_t rev;

	memset(res, 0, sizeof *res);
	if (cur == NULL) {
		reg_fail(res, status_not_found(r, name));
		return;
	}
	if (cur->deleting) {
		reg_fail(res, status_error(409, "Conflict", "Operation cannot "
		    "be fulfilled on pods/binding \"%s\": pod %s is being "
		    "deleted, cannot be assigned to a host", name, name));
		return;
	}
	if (*cur->node_name) {
		reg_fail(res, status_error(409, "Conflict", "Operation cannot "
		    "be fulfilled on pods/binding \"%s\": pod %s is already "
		    "assigned to node \"%s\"", name, name, cur->node_name));
		return;
	}
	obj = store_obj_tree(cur);
	gates = json_at(obj, "spec.schedulingGates");
	if (cJSON_GetArraySize(gates) > 0) {
		cJSON_Delete(obj);
		reg_fail(res, status_error(409, "Conflict", "Operation cannot "
		    "be fulfilled on pods/binding \"%s\": pod %s has non-empty "
		    ".spec.schedulingGates", name, name));
		return;
	}
	json_set_str(json_obj(obj, "spec"), "nodeName", node);
	set_condition(obj, "PodScheduled", "True");
	rev = store_put(rg->st, "pods", ns, name, obj);
	cJSON_Delete(obj);
	reg_ok(res, 201, status_success(), rev);
}
