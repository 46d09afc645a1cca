/*
 * node add --virtual: each Node gets the label volray.io/runtime=virtual,
 * kubernetes.io/hostname, the --labels given, the --taints as spec.taints,
 * and its capacity as the annotations volray.io/cpu, volray.io/memory and
 * volray.io/pods that volrayd's node manager turns into status. Names are
 * PREFIX-0, PREFIX-1, ...; a name already taken is skipped, so running
 * the command again adds nodes rather than failing. --topology N,M,...
 * labels them into a network topology (volray.io/hypernode-tier1 =
 * PREFIX-tier1-<i/N>, volray.io/hypernode-tier2 = PREFIX-tier2-<i/(N*M)>,
 * ...), from which volrayd's hypernode controller makes HyperNodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_node.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/xmalloc.h"

static int
usage(const char *why)
{
	cli_color_errorf("%s\nusage: volray node add --virtual --count N "
	    "--cpu C --memory M [--pods P]\n"
	    "       [--labels k=v,...] [--taints k=v:Effect,...] "
	    "[--name-prefix P] [--topology N[,M,...]]\n", why);
	return 2;
}

/* "k=v,k2=v2" into obj; -1 on a malformed pair. */
static int
parse_labels(const char *s, cJSON *obj)
{
	char *copy = xstrdup(s), *save, *tok;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || eq == tok) {
			rc = -1;
			break;
		}
		*eq = '\0';
		json_set_str(obj, tok, eq + 1);
	}
	free(copy);
	return rc;
}

/* "k=v:Effect,k:Effect" into a taints array; -1 when malformed. */
static int
parse_taints(const char *s, cJSON *arr)
{
	char *copy = xstrdup(s), *save, *tok;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':'), *eq;
		cJSON *t;

		if (colon == NULL || colon == tok || (strcmp(colon + 1,
		    "NoSchedule") != 0 && strcmp(colon + 1, "PreferNoSchedule")
		    != 0 && strcmp(colon + 1, "NoExecute") != 0)) {
			rc = -1;
			break;
		}
		*colon = '\0';
		t = cJSON_CreateObject();
		if ((eq = strchr(tok, '=')) != NULL) {
			*eq = '\0';
			cJSON_AddStringToObject(t, "value", eq + 1);
		}
		cJSON_AddStringToObject(t, "key", tok);
		cJSON_AddStringToObject(t, "effect", colon + 1);
		cJSON_AddItemToArray(arr, t);
	}
	free(copy);
	return rc;
}

#define MAX_TIERS 9

/* "16,8" into sizes[]; the number of tiers, or -1 when malformed. */
static int
parse_topology(const char *s, long sizes[MAX_TIERS])
{
	char *copy = xstrdup(s), *save, *tok, *end;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_TIERS || (sizes[n] = strtol(tok, &end, 10)) < 1 ||
		    *end != '\0') {
			n = -1;
			break;
		}
		n++;
	}
	free(copy);
	return n;
}

/* The node of index i's HyperNode labels. */
static void
topology_labels(cJSON *labels, const char *prefix, const long *sizes,
    int ntiers, long i)
{
	long group = 1;
	int t;

	for (t = 0; t < ntiers; t++) {
		char key[64], val[300];

		group *= sizes[t];
		snprintf(key, sizeof key, "volray.io/hypernode-tier%d", t + 1);
		snprintf(val, sizeof val, "%s-tier%d-%ld", prefix, t + 1,
		    i / group);
		json_set_str(labels, key, val);
	}
}

static cJSON *
node_doc(const struct cli_node_opts *n, const char *name)
{
	cJSON *d = cJSON_CreateObject(), *md, *labels, *ann;

	cJSON_AddStringToObject(d, "apiVersion", "v1");
	cJSON_AddStringToObject(d, "kind", "Node");
	md = json_obj(d, "metadata");
	json_set_str(md, "name", name);
	labels = json_obj(md, "labels");
	if (n->labels != NULL)
		parse_labels(n->labels, labels);
	json_set_str(labels, "volray.io/runtime", "virtual");
	json_set_str(labels, "kubernetes.io/hostname", name);
	ann = json_obj(md, "annotations");
	json_set_str(ann, "volray.io/cpu", n->cpu);
	json_set_str(ann, "volray.io/memory", n->memory);
	json_set_str(ann, "volray.io/pods", n->pods ? n->pods : "110");
	if (n->taints != NULL)
		parse_taints(n->taints, cJSON_AddArrayToObject(json_obj(d,
		    "spec"), "taints"));
	return d;
}

static int
node_add(const struct cli_node_opts *n)
{
	const char *prefix = n->prefix ? n->prefix : "vnode";
	long made = 0, i, sizes[MAX_TIERS];
	char name[256], first[256] = "", last[256] = "";
	int ntiers = 0;
	double q;
	cJSON *probe;

	if (!n->is_virtual)
		return usage("only --virtual nodes can be added");
	if (n->count < 1)
		return usage("--count wants a number of nodes, at least 1");
	if (n->cpu == NULL || quantity_parse(n->cpu, &q) != 0 || q <= 0)
		return usage("--cpu wants a quantity such as 4 or 500m");
	if (n->memory == NULL || quantity_parse(n->memory, &q) != 0 || q <= 0)
		return usage("--memory wants a quantity such as 8Gi");
	if (n->pods != NULL && (quantity_parse(n->pods, &q) != 0 || q < 1))
		return usage("--pods wants a number");
	probe = cJSON_CreateObject();
	if (n->labels != NULL && parse_labels(n->labels, probe) != 0) {
		cJSON_Delete(probe);
		return usage("--labels wants k=v,...");
	}
	if (n->taints != NULL && parse_taints(n->taints, probe) != 0) {
		cJSON_Delete(probe);
		return usage("--taints wants key[=value]:NoSchedule|"
		    "PreferNoSchedule|NoExecute,...");
	}
	cJSON_Delete(probe);
	if (n->topology != NULL &&
	    (ntiers = parse_topology(n->topology, sizes)) <= 0)
		return usage("--topology wants group sizes per tier, such as "
		    "16,8 (16 nodes a tier-1 HyperNode, 8 of those a tier-2)");
	for (i = 0; made < n->count; i++) {
		struct cli_http_resp rsp;
		cJSON *d;
		char *body;

		snprintf(name, sizeof name, "%s-%ld", prefix, i);
		d = node_doc(n, name);
		if (ntiers > 0)
			topology_labels(json_obj(json_obj(d, "metadata"),
			    "labels"), prefix, sizes, ntiers, i);
		body = cJSON_PrintUnformatted(d);
		cJSON_Delete(d);
		cli_http_request("POST", "/api/v1/nodes", "application/json",
		    body, NULL, &rsp);
		free(body);
		if (rsp.code == 409) {
			cli_buf_free(&rsp.body);
			continue;	/* taken: try the next name */
		}
		if (rsp.code != 201) {
			cli_http_report(&rsp);
			cli_buf_free(&rsp.body);
			if (made > 0)
				fprintf(stderr, "volray: %ld of %ld nodes were "
				    "created (%s .. %s)\n", made, n->count, first,
				    last);
			return 1;
		}
		cli_buf_free(&rsp.body);
		if (made++ == 0)
			snprintf(first, sizeof first, "%s", name);
		snprintf(last, sizeof last, "%s", name);
		if (n->count <= 10)
			printf("node/%s created\n", name);
	}
	if (n->count > 10)
		printf("%ld virtual nodes created (%s .. %s)\n", made, first,
		    last);
	return 0;
}

int
cli_node(int argc, char **argv, const struct cli_node_opts *n)
{
	if (argc == 1 && strcmp(argv[0], "add") == 0)
		return node_add(n);
	return usage("volray node add ... (the only node verb)");
}
