/*
 * volray ray get cluster|workergroup|node|token (cli_ray.c): the kubectl
 * ray plugin's tables, from the RayClusters and their pods.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "cli_ray.h"

/* --- get ------------------------------------------------------------- */

static char *
qstr(double v, int binary)
{
	char b[32];

	quantity_format(v, binary, b);
	return xstrdup(b);
}

static char *
sdup(const char *s)
{
	return xstrdup(s != NULL ? s : "");
}

static char *
ldup(long n)
{
	char b[32];

	snprintf(b, sizeof b, "%ld", n);
	return xstrdup(b);
}

/* A container's request of res, in base units. */
static double
request(const cJSON *c, const char *res)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_at(c,
	    "resources.requests"), res);
	double d;

	if (v == NULL)
		v = cJSON_GetObjectItemCaseSensitive(json_at(c,
		    "resources.limits"), res);
	return quantity_json(v, &d) == 0 ? d : 0;
}

/* A table whose header is head[skip..n-1] (skip: no NAMESPACE). */
static void
table_head(struct cli_table *t, const char *const *head, int n, int skip)
{
	char **row = xcalloc((size_t)n, sizeof *row);
	int i;

	t->ncol = n - skip;
	for (i = skip; i < n; i++)
		row[i - skip] = xstrdup(head[i]);
	cli_table_add(t, row);
}

/* The status condition a person looks at first, as the plugin picks it. */
static const char *
relevant_condition(const cJSON *rc)
{
	static const char *const order[] = { "RayClusterSuspended",
	    "RayClusterSuspending", "RayClusterProvisioned", "HeadPodReady",
	    "RayClusterReplicaFailure", NULL };
	int i;

	for (i = 0; order[i] != NULL; i++)
		if (json_condition_true(rc, order[i]))
			return order[i];
	return "";
}

static int
get_clusters(const char *name, const char *ns)
{
	struct cli_table t = { 0 };
	const char *head[] = { "NAME", "NAMESPACE", "DESIRED WORKERS",
	    "AVAILABLE WORKERS", "CPUS", "GPUS", "TPUS", "MEMORY", "CONDITION",
	    "STATUS", "AGE" };
	cJSON *l = cli_ray_list("rayclusters", ns, NULL);
	const cJSON *rc;
	char **row;
	int n = 0;

	if (l == NULL)
		return CLI_FAIL;
	table_head(&t, head, 11, 0);
	cJSON_ArrayForEach(rc, json_at(l, "items")) {
		double v;

		if (name != NULL && strcmp(json_str(rc, "metadata.name"),
		    name) != 0)
			continue;
		n++;
		row = xcalloc(11, sizeof *row);
		row[0] = sdup(json_str(rc, "metadata.name"));
		row[1] = sdup(json_str(rc, "metadata.namespace"));
		row[2] = ldup(cli_ray_num(rc, "status.desiredWorkerReplicas", 0));
		row[3] = ldup(cli_ray_num(rc, "status.availableWorkerReplicas", 0));
		row[4] = qstr(quantity_json(json_at(rc, "status.desiredCPU"),
		    &v) == 0 ? v : 0, 0);
		row[5] = qstr(quantity_json(json_at(rc, "status.desiredGPU"),
		    &v) == 0 ? v : 0, 0);
		row[6] = qstr(quantity_json(json_at(rc, "status.desiredTPU"),
		    &v) == 0 ? v : 0, 0);
		row[7] = qstr(quantity_json(json_at(rc,
		    "status.desiredMemory"), &v) == 0 ? v : 0, 1);
		row[8] = sdup(relevant_condition(rc));
		row[9] = sdup(json_str(rc, "status.state"));
		row[10] = cli_obj_age(json_str(rc,
		    "metadata.creationTimestamp"));
		cli_table_add(&t, row);
	}
	cJSON_Delete(l);
	if (name != NULL && n == 0) {
		cli_color_errorf("Ray cluster %s not found\n", name);
		cli_table_flush(&t);
		return CLI_FAIL;
	}
	cli_table_flush(&t);
	return CLI_OK;
}

/* Ready pods of a group (all hosts of a replica count each). */
static long
ready_pods(const cJSON *pods, const char *cluster, const char *group)
{
	const cJSON *p, *c;
	long n = 0;

	cJSON_ArrayForEach(p, json_at(pods, "items")) {
		const cJSON *l = json_at(p, "metadata.labels");

		if (cli_ray_member(l, "ray.io/cluster") == NULL ||
		    strcmp(cli_ray_member(l, "ray.io/cluster"), cluster) != 0 ||
		    cli_ray_member(l, "ray.io/group") == NULL ||
		    strcmp(cli_ray_member(l, "ray.io/group"), group) != 0)
			continue;
		cJSON_ArrayForEach(c, json_at(p, "status.conditions"))
			if (json_str(c, "type") && strcmp(json_str(c, "type"),
			    "Ready") == 0 && json_str(c, "status") &&
			    strcmp(json_str(c, "status"), "True") == 0)
				n++;
	}
	return n;
}

static int
get_workergroups(const char *name, const char *ns)
{
	struct cli_table t = { 0 };
	const char *head[] = { "NAMESPACE", "NAME", "MIN", "MAX", "REPLICAS",
	    "CPUS", "GPUS", "TPUS", "MEMORY", "CLUSTER" };
	cJSON *l = cli_ray_list("rayclusters", ns, NULL), *pods;
	const cJSON *rc, *g;
	int skip = ns != NULL, n = 0;
	char **row;

	if (l == NULL)
		return CLI_FAIL;
	if ((pods = cli_ray_list("pods", ns, "ray.io/node-type=worker")) == NULL) {
		cJSON_Delete(l);
		return CLI_FAIL;
	}
	table_head(&t, head, 10, skip);
	cJSON_ArrayForEach(rc, json_at(l, "items")) {
		const char *cl = json_str(rc, "metadata.name");

		if (cli_opts.ray.cluster != NULL &&
		    strcmp(cl, cli_opts.ray.cluster) != 0)
			continue;
		cJSON_ArrayForEach(g, json_at(rc, "spec.workerGroupSpecs")) {
			const char *gn = json_str(g, "groupName");
			const cJSON *c = cJSON_GetArrayItem(json_at(g,
			    "template.spec.containers"), 0);
			long rep = cli_ray_num(g, "replicas", 0);
			long hosts = cli_ray_num(g, "numOfHosts", 1);
			double k = cJSON_IsTrue(json_at(g, "suspend")) ? 0 :
			    (double)(rep * hosts);
			char b[64];
			int j = 0;

			if (gn == NULL || (name != NULL && strcmp(gn, name) !=
			    0))
				continue;
			n++;
			row = xcalloc(10, sizeof *row);
			if (!skip)
				row[j++] = sdup(json_str(rc,
				    "metadata.namespace"));
			row[j++] = sdup(gn);
			row[j++] = ldup(cli_ray_num(g, "minReplicas", 0));
			row[j++] = ldup(cli_ray_num(g, "maxReplicas", 2147483647));
			snprintf(b, sizeof b, "%ld/%ld", ready_pods(pods, cl,
			    gn), rep);
			row[j++] = xstrdup(b);
			row[j++] = qstr(k * request(c, "cpu"), 0);
			row[j++] = qstr(k * request(c, "nvidia.com/gpu"), 0);
			row[j++] = qstr(k * request(c, "google.com/tpu"), 0);
			row[j++] = qstr(k * request(c, "memory"), 1);
			row[j++] = sdup(cl);
			cli_table_add(&t, row);
		}
	}
	cli_table_flush(&t);
	cJSON_Delete(l);
	cJSON_Delete(pods);
	if (name != NULL && n == 0) {
		cli_color_errorf("Ray worker group %s not found\n", name);
		return CLI_FAIL;
	}
	return CLI_OK;
}

static int
get_nodes(const char *name, const char *ns)
{
	struct cli_table t = { 0 };
	const char *head[] = { "NAMESPACE", "NAME", "CPUS", "GPUS", "TPUS",
	    "MEMORY", "CLUSTER", "TYPE", "WORKER GROUP", "AGE" };
	struct cli_buf sel = { 0 };
	cJSON *pods;
	const cJSON *p;
	int skip = ns != NULL, n = 0;
	char **row;

	cli_buf_printf(&sel, "ray.io/is-ray-node=yes");
	if (cli_opts.ray.cluster != NULL)
		cli_buf_printf(&sel, ",ray.io/cluster=%s", cli_opts.ray.cluster);
	pods = cli_ray_list("pods", ns, sel.p);
	cli_buf_free(&sel);
	if (pods == NULL)
		return CLI_FAIL;
	table_head(&t, head, 10, skip);
	cJSON_ArrayForEach(p, json_at(pods, "items")) {
		const cJSON *l = json_at(p, "metadata.labels");
		const cJSON *c = cJSON_GetArrayItem(json_at(p,
		    "spec.containers"), 0);
		int j = 0;

		if (name != NULL && strcmp(json_str(p, "metadata.name"), name)
		    != 0)
			continue;
		n++;
		row = xcalloc(10, sizeof *row);
		if (!skip)
			row[j++] = sdup(json_str(p, "metadata.namespace"));
		row[j++] = sdup(json_str(p, "metadata.name"));
		row[j++] = qstr(request(c, "cpu"), 0);
		row[j++] = qstr(request(c, "nvidia.com/gpu"), 0);
		row[j++] = qstr(request(c, "google.com/tpu"), 0);
		row[j++] = qstr(request(c, "memory"), 1);
		row[j++] = sdup(cli_ray_member(l, "ray.io/cluster"));
		row[j++] = sdup(cli_ray_member(l, "ray.io/node-type"));
		row[j++] = sdup(cli_ray_member(l, "ray.io/group"));
		row[j++] = cli_obj_age(json_str(p, "metadata.creationTimestamp"));
		cli_table_add(&t, row);
	}
	cli_table_flush(&t);
	cJSON_Delete(pods);
	if (name != NULL && n == 0) {
		cli_color_errorf("Ray node %s not found in namespace %s in %s\n",
		    name, ns ? ns : "any namespace", cli_opts.ray.cluster ?
		    cli_opts.ray.cluster : "any Ray cluster");
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* The token KubeRay generated for authOptions (the cluster's Secret). */
static int
get_token(const char *cluster)
{
	const char *ns = cli_ray_ns(), *secret = cluster, *tok;
	struct cli_buf path = { 0 };
	cJSON *rc, *s;
	char *plain = NULL;
	size_t n;
	int rc_ = CLI_FAIL;

	if ((rc = cli_ray_cluster(ns, cluster)) == NULL)
		return CLI_FAIL;
	if (json_str(rc, "spec.authOptions.mode") == NULL ||
	    strcmp(json_str(rc, "spec.authOptions.mode"), "token") != 0) {
		cli_color_errorf("Ray cluster %s does not have token "
		    "authentication enabled\n", cluster);
		cJSON_Delete(rc);
		return CLI_FAIL;
	}
	if (json_str(rc, "spec.authOptions.secretName") != NULL)
		secret = json_str(rc, "spec.authOptions.secretName");
	cli_buf_printf(&path, "/api/v1/namespaces/%s/secrets/%s", ns, secret);
	if ((s = cli_http_get_json(path.p, NULL)) != NULL) {
		tok = json_str(json_at(s, "data"), "auth_token");
		if (tok != NULL && util_base64_decode(tok, &plain, &n) == 0) {
			fwrite(plain, 1, n, stdout);
			putchar('\n');
			rc_ = CLI_OK;
		} else
			cli_color_errorf("secret %s has no auth_token\n",
			    secret);
		free(plain);
		cJSON_Delete(s);
	}
	cli_buf_free(&path);
	cJSON_Delete(rc);
	return rc_;
}

int
cli_ray_get(int argc, char **argv)
{
	const char *ns = cli_opts.all_ns ? NULL : cli_ray_ns();
	const char *what = argc > 0 ? argv[0] : "";
	const char *name = argc > 1 ? argv[1] : NULL;

	if (argc < 1 || argc > 2)
		return cli_opt_usage("ray", "usage: volray ray get "
		    "cluster|workergroup|node [NAME] | token CLUSTER");
	if (strcmp(what, "cluster") == 0 || strcmp(what, "clusters") == 0)
		return get_clusters(name, ns);
	if (strcmp(what, "workergroup") == 0 ||
	    strcmp(what, "workergroups") == 0)
		return get_workergroups(name, ns);
	if (strcmp(what, "node") == 0 || strcmp(what, "nodes") == 0)
		return get_nodes(name, ns);
	if (strcmp(what, "token") == 0 && name != NULL)
		return get_token(name);
	return cli_opt_usage("ray", "get: cluster, workergroup, node or token "
	    "CLUSTER, not %s", what);
}

