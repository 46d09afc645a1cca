/*
 * Table rows of Kubernetes' gang API, scheduling.k8s.io/v1alpha2 (1.36
 * registers no printer for them, so kube-apiserver shows NAME and AGE):
 * a PodGroup's POLICY (Gang or Basic), MIN-COUNT, the status of its
 * PodGroupScheduled condition (SCHEDULED, empty before the scheduler
 * has looked) and its reason; a Workload's TEMPLATES by name. The
 * columns are the kinds' descriptors' (kinds/scheduling.c).
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/kinds/cell.h"
#include "registry/kinds/rows.h"

static void
str(cJSON *cells, const char *s)
{
	cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

static const cJSON *
condition(const cJSON *o, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_at(o, "status.conditions"))
		if (json_str(c, "type") && strcmp(json_str(c, "type"), type) ==
		    0)
			return c;
	return NULL;
}

void
rows_gang_podgroup(cJSON *cells, const cJSON *o)
{
	const cJSON *gang = json_at(o, "spec.schedulingPolicy.gang");
	const cJSON *min = json_at(gang, "minCount");
	const cJSON *c = condition(o, "PodGroupScheduled");

	str(cells, gang != NULL ? "Gang" : json_at(o,
	    "spec.schedulingPolicy.basic") != NULL ? "Basic" : "");
	if (cJSON_IsNumber(min))
		cJSON_AddItemToArray(cells,
		    cJSON_CreateNumber(min->valuedouble));
	else
		cJSON_AddItemToArray(cells, cJSON_CreateNull());
	str(cells, json_str(c, "status"));
	str(cells, json_str(c, "reason"));
	cell_age(cells, o);
}

void
rows_gang_workload(cJSON *cells, const cJSON *o)
{
	const cJSON *t;
	char buf[512];
	size_t n = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(t, json_at(o, "spec.podGroupTemplates")) {
		const char *name = json_str(t, "name");

		if (name == NULL || n >= sizeof buf)
			continue;
		n += snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "",
		    name);
	}
	str(cells, buf);
	cell_age(cells, o);
}
