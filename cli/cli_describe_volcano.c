/*
 * What volray describe adds to kubectl's generic description of Volcano's
 * PodGroups and Queues (whose spec and status, conditions and counts
 * included, the generic part already shows): a PodGroup's member pods
 * with their phase and node, and a Queue's PodGroups by phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_describe.h"
#include "cli_http.h"
#include "lib/json.h"

#define GROUP_NAME	"scheduling.k8s.io/group-name"

static const char *
or(const char *s, const char *dflt)
{
	return s != NULL && *s != '\0' ? s : dflt;
}

/* Pods: the pods whose group-name annotation names this PodGroup. */
static void
podgroup_pods(struct cli_buf *b, const cJSON *pg)
{
	const char *ns = json_str(pg, "metadata.namespace");
	const char *name = json_str(pg, "metadata.name");
	struct cli_buf path = { 0 };
	const cJSON *p, *ann;
	cJSON *list;
	int n = 0;

	cli_buf_printf(&path, "/api/v1/namespaces/%s/pods", ns);
	list = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	cJSON_ArrayForEach(p, json_at(list, "items")) {
		/* The key has dots: no json_str path for it. */
		ann = cJSON_GetObjectItemCaseSensitive(json_at(p,
		    "metadata.annotations"), GROUP_NAME);
		if (!cJSON_IsString(ann) || strcmp(ann->valuestring, name) != 0)
			continue;
		if (n++ == 0) {
			cli_describe_w(b, 0, "Pods:\n");
			cli_describe_w(b, 1, "Name\tPhase\tNode\n");
			cli_describe_w(b, 1, "----\t-----\t----\n");
		}
		cli_describe_w(b, 1, "%s\t%s\t%s\n",
		    json_str(p, "metadata.name"),
		    or(json_str(p, "status.phase"), "Pending"),
		    or(json_str(p, "spec.nodeName"), "<none>"));
	}
	if (n == 0)
		cli_describe_w(b, 0, "Pods:\t<none>\n");
	cJSON_Delete(list);
}

/* PodGroups: the PodGroups in this queue, by phase. */
static void
queue_podgroups(struct cli_buf *b, const cJSON *q)
{
	static const char *const phases[] = { "Pending", "Inqueue",
	    "Running", "Unknown", "Completed" };
	const char *name = json_str(q, "metadata.name");
	const cJSON *pg;
	cJSON *list;
	size_t i;
	int n = 0;

	list = cli_http_list("/apis/scheduling.volcano.sh/v1beta1/podgroups",
	    NULL);
	for (i = 0; i < sizeof phases / sizeof phases[0]; i++)
		cJSON_ArrayForEach(pg, json_at(list, "items")) {
			if (strcmp(or(json_str(pg, "spec.queue"), "default"),
			    name) != 0 || strcmp(or(json_str(pg,
			    "status.phase"), "Pending"), phases[i]) != 0)
				continue;
			if (n++ == 0) {
				cli_describe_w(b, 0, "PodGroups:\n");
				cli_describe_w(b, 1, "Namespace\tName\tPhase\n");
				cli_describe_w(b, 1, "---------\t----\t-----\n");
			}
			cli_describe_w(b, 1, "%s\t%s\t%s\n",
			    json_str(pg, "metadata.namespace"),
			    json_str(pg, "metadata.name"), phases[i]);
		}
	if (n == 0)
		cli_describe_w(b, 0, "PodGroups:\t<none>\n");
	cJSON_Delete(list);
}

void
cli_describe_volcano(struct cli_buf *b, const char *kind, const cJSON *obj)
{
	if (strcmp(kind, "PodGroup") == 0)
		podgroup_pods(b, obj);
	else if (strcmp(kind, "Queue") == 0)
		queue_podgroups(b, obj);
}
