/*
 * The status of a Kubernetes PodGroup (scheduling.k8s.io/v1alpha2) once
 * a session has run: its PodGroupScheduled condition, a metav1.Condition,
 * as the API defines it. True (reason Scheduled) once minCount of its
 * pods are placed (allocated, bound, running or finished: one for the
 * basic policy); False with reason Unschedulable while they are not and
 * the session said why (gang's condition: the gang does not fit; or a
 * plugin's job_valid: fewer pods than minCount exist), or SchedulerError
 * when a plugin failed on it (failurePolicy Fail). lastTransitionTime
 * moves only when the status does; the other conditions
 * (DisruptionTarget, anyone's) are kept. The caller writes it only when
 * it differs from the stored status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "sched/sched_int.h"

#define SCHEDULED	"PodGroupScheduled"

static cJSON *
find_condition(cJSON *conds, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, conds)
		if (json_str(c, "type") && strcmp(json_str(c, "type"), type) ==
		    0)
			return c;
	return NULL;
}

static void
put_condition(cJSON *st, const cJSON *pg, const char *status,
    const char *reason, const char *msg)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	const cJSON *gen = json_at(pg, "metadata.generation");
	cJSON *c;
	char now[32];

	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	if ((c = find_condition(conds, SCHEDULED)) == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(conds, c);
		json_set_str(c, "type", SCHEDULED);
	}
	if (json_str(c, "status") == NULL || strcmp(json_str(c, "status"),
	    status) != 0 || json_str(c, "lastTransitionTime") == NULL) {
		util_now(now);
		json_set_str(c, "lastTransitionTime", now);
	}
	json_set_str(c, "status", status);
	json_set_str(c, "reason", reason);
	json_set_str(c, "message", msg);
	if (cJSON_IsNumber(gen))
		json_set_num(c, "observedGeneration", gen->valuedouble);
}

cJSON *
outcome_k8s_pg_status(const struct s_job *j, const char *invalid_msg)
{
	const cJSON *old = json_at(j->pg, "status");
	int placed = j->n[TS_ALLOCATED] + j->n[TS_BINDING] + j->n[TS_BOUND] +
	    j->n[TS_RUNNING] + j->n[TS_SUCCEEDED] + j->n[TS_FAILED];
	cJSON *st;
	char *msg;

	if (j->ntasks == 0)
		return NULL;
	st = cJSON_IsObject(old) ? cJSON_Duplicate(old, 1) :
	    cJSON_CreateObject();
	if (placed >= j->min_member) {
		msg = json_at(j->pg, "spec.schedulingPolicy.gang") != NULL ?
		    util_printf("the gang's minCount of %d pods is scheduled",
		    j->min_member) : util_printf("a pod is scheduled");
		put_condition(st, j->pg, "True", "Scheduled", msg);
		free(msg);
	} else if (j->invalid)
		put_condition(st, j->pg, "False", j->invalid_reason != NULL &&
		    strcmp(j->invalid_reason, "PluginFailed") == 0 ?
		    "SchedulerError" : "Unschedulable", invalid_msg != NULL ?
		    invalid_msg : "");
	else if (j->cond_type != NULL &&
	    strcmp(j->cond_type, "Unschedulable") == 0)
		put_condition(st, j->pg, "False", "Unschedulable", j->cond_msg);
	else if (find_condition(json_at(st, "conditions"), SCHEDULED) ==
	    NULL) {
		/* Nothing said yet, nothing placed: leave it unset. */
		cJSON_Delete(st);
		return NULL;
	}
	return st;
}
