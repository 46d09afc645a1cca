/*
 * The Eviction subresource of pods (POST pods/NAME/eviction, what kubectl
 * drain sends), as kube-apiserver's eviction REST handles it. A pod that
 * is not running (Pending, Succeeded, Failed) or already being deleted
 * is deleted outright. Otherwise the PodDisruptionBudgets of its
 * namespace whose selector matches it decide: none, and it is deleted;
 * more than one is an error; one whose status has not seen its latest
 * spec, or allows no disruption, refuses with 429 TooManyRequests and
 * kube-apiserver's message and cause; one that allows a disruption has
 * its disruptionsAllowed taken down by one and the pod recorded in
 * status.disruptedPods (so the disruption controller does not count it
 * healthy while it goes), then the pod is deleted. A pod that is not
 * Ready may go without using the budget when the budget's
 * unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget, the
 * default) when the application has all the healthy pods it needs. A
 * dry run (kubectl drain --dry-run=server) is judged the same way and
 * changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "registry/registry_int.h"

#define PDB_KEY "poddisruptionbudgets.policy"

static int
pod_ready(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_at(pod, "status.conditions"))
		if (json_str(c, "type") && strcmp(json_str(c, "type"),
		    "Ready") == 0)
			return json_str(c, "status") && strcmp(json_str(c,
			    "status"), "True") == 0;
	return 0;
}

/* canIgnorePDB: the pod is not running, or already going. */
static int
can_ignore(const cJSON *pod)
{
	const char *phase = json_str(pod, "status.phase");

	return json_at(pod, "metadata.deletionTimestamp") != NULL ||
	    phase == NULL || strcmp(phase, "Pending") == 0 ||
	    strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0;
}

/* The budgets (trees, in a new array) whose selector picks the pod. */
static cJSON *
budgets_of(registry *rg, const char *ns, const cJSON *pod)
{
	store_obj *const *objs;
	cJSON *out = cJSON_CreateArray();
	size_t n = store_list(rg->st, PDB_KEY, ns, &objs), i;

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);
		const cJSON *js = json_at(t, "spec.selector");
		char *cause = NULL;
		selector *sel;

		/* policy/v1: a null selector picks no pod, {} every one. */
		sel = js != NULL ? selector_from_json(js, &cause) : NULL;
		free(cause);
		if (sel != NULL && selector_match_labels(sel, json_at(pod,
		    "metadata.labels")))
			cJSON_AddItemToArray(out, t);
		else
			cJSON_Delete(t);
		selector_free(sel);
	}
	return out;
}

static cJSON *
too_many(const char *cause_msg)
{
	cJSON *s = status_error(429, "TooManyRequests", "Cannot evict pod as "
	    "it would violate the pod's disruption budget.");
	cJSON *causes = cJSON_AddArrayToObject(json_obj(s, "details"),
	    "causes"), *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "reason", "DisruptionBudget");
	cJSON_AddStringToObject(c, "message", cause_msg);
	cJSON_AddItemToArray(causes, c);
	return s;
}

static int
num(const cJSON *o, const char *path)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsNumber(v) ? v->valueint : 0;
}

/*
 * checkAndDecrement: 0 when the pod may go (the budget's status written
 * if a disruption was used), else res is filled with the refusal.
 */
static int
use_budget(registry *rg, const char *ns, const cJSON *pod, cJSON *pdb,
    int dry_run, struct reg_result *res)
{
	const resource *r = resource_find("policy", "v1",
	    "poddisruptionbudgets");
	const char *pname = json_str(pdb, "metadata.name");
	const char *policy = json_str(pdb, "spec.unhealthyPodEvictionPolicy");
	int allowed = num(pdb, "status.disruptionsAllowed");
	cJSON *st;
	struct reg_result w;
	char buf[512], now[32];

	if (!pod_ready(pod) && ((policy != NULL &&
	    strcmp(policy, "AlwaysAllow") == 0) ||
	    num(pdb, "status.currentHealthy") >=
	    num(pdb, "status.desiredHealthy")))
		return 0;
	if (num(pdb, "status.observedGeneration") <
	    num(pdb, "metadata.generation")) {
		snprintf(buf, sizeof buf, "The disruption budget %s is still "
		    "being processed by the server.", pname);
		reg_fail(res, too_many(buf));
		return -1;
	}
	if (allowed < 0) {
		reg_fail(res, status_error(403, "Forbidden", "pdb disruptions "
		    "allowed is negative"));
		return -1;
	}
	if (allowed == 0) {
		snprintf(buf, sizeof buf, "The disruption budget %s needs %d "
		    "healthy pods and has %d currently", pname,
		    num(pdb, "status.desiredHealthy"),
		    num(pdb, "status.currentHealthy"));
		reg_fail(res, too_many(buf));
		return -1;
	}
	if (dry_run)
		return 0;
	st = cJSON_Duplicate(json_at(pdb, "status"), 1);
	json_set_num(st, "disruptionsAllowed", allowed - 1);
	util_now(now);
	json_set_str(json_obj(st, "disruptedPods"), json_str(pod,
	    "metadata.name"), now);
	registry_update_status(rg, r, ns, pname, cJSON_Duplicate(pdb, 1), st,
	    NULL, &w);
	if (w.code >= 300) {
		*res = w;
		return -1;
	}
	cJSON_Delete(w.body);
	return 0;
}

void
registry_evict(registry *rg, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	const resource *pods = resource_find("", "v1", "pods");
	cJSON *pod = registry_get(rg, pods, ns, name), *pdbs;
	int n;

	memset(res, 0, sizeof *res);
	if (pod == NULL) {
		reg_fail(res, status_not_found(pods, name));
		return;
	}
	if (!can_ignore(pod)) {
		pdbs = budgets_of(rg, ns, pod);
		n = cJSON_GetArraySize(pdbs);
		if (n > 1) {
			reg_fail(res, status_error(500, "InternalError",
			    "This pod has more than one PodDisruptionBudget, "
			    "which the eviction subresource does not "
			    "support."));
			cJSON_Delete(pdbs);
			cJSON_Delete(pod);
			return;
		}
		if (n == 1 && use_budget(rg, ns, pod,
		    cJSON_GetArrayItem(pdbs, 0), o != NULL && o->dry_run,
		    res) != 0) {
			cJSON_Delete(pdbs);
			cJSON_Delete(pod);
			return;
		}
		cJSON_Delete(pdbs);
	}
	cJSON_Delete(pod);
	registry_delete(rg, pods, ns, name, o, res);
}
