/*
 * volray ray: what KubeRay's `kubectl ray` plugin (1.7) does, with its
 * flags, defaults and messages:
 *   create cluster NAME        a RayCluster as the plugin generates it
 *                              (--dry-run prints it; --wait until
 *                              RayClusterProvisioned)
 *   create workergroup NAME -c CLUSTER   a worker group added to it
 *   get cluster [NAME]         Desired/Available workers, resources,
 *                              condition, status, age
 *   get workergroup [NAME] [-c CLUSTER]  min, max, ready/desired, totals
 *   get node [NAME] [-c CLUSTER]         the Ray pods with their requests
 *   get token CLUSTER          the token of authOptions' Secret
 *   scale cluster NAME -w GROUP [-r N] [--min-replicas N] [--max-replicas N]
 *   scale job NAME -w GROUP ... the same on a running RayJob (its spec and
 *                              its cluster; cli_ray_scale.c)
 *   job submit --name NAME [ray job submit flags] -- ENTRYPOINT...
 *                              a RayJob in InteractiveMode, then the Ray
 *                              job submitted to its head (through the
 *                              API server's service proxy) with that id,
 *                              followed as `ray job submit` does
 *   log NAME [--out-dir D] [--node-type all|head|worker]
 *                              every Ray pod's container logs into D/NAME
 *   delete NAME | raycluster/NAME | rayjob/NAME | rayservice/NAME [-y]
 *   session NAME | TYPE/NAME   kubectl port-forward to its head Service
 * The gets are in cli_ray_get.c, job submit and log in cli_ray_job.c,
 * session in cli_ray_session.c.
 * Documented in volray(1), RAY.
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
#include "cli_res.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "cli_ray.h"

#define RAY_VERSION	"2.52.0"
#define POLL_US		200000

const char *
cli_ray_ns(void)
{
	return cli_opts.ns != NULL ? cli_opts.ns : cli_http_namespace();
}

const char *
cli_ray_or(const char *v, const char *def)
{
	return v != NULL ? v : def;
}

/* Set item at a dotted path, making the objects on the way. */
void
cli_ray_put(cJSON *o, const char *path, cJSON *item)
{
	char key[128];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
		o = json_obj(o, key);
		path = dot + 1;
	}
	json_set(o, path, item);
}

/* A label (or any member whose key has dots) of an object, or NULL. */
const char *
cli_ray_member(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "k=v,k2=v2" into an object of strings; -1 when malformed. */
static int
kv_map(const char *s, cJSON *into, const char *flag)
{
	char *copy, *tok, *save = NULL, *eq;

	if (s == NULL)
		return 0;
	copy = strdup(s);
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL || eq == tok) {
			cli_color_errorf("%s: %s is not KEY=VALUE\n", flag, tok);
			free(copy);
			return -1;
		}
		*eq = '\0';
		cJSON_DeleteItemFromObjectCaseSensitive(into, tok);
		cJSON_AddStringToObject(into, tok, eq + 1);
	}
	free(copy);
	return 0;
}

int
cli_ray_check_quantities(void)
{
	const char *q[] = { cli_opts.ray.head_cpu, cli_opts.ray.head_memory,
	    cli_opts.ray.head_gpu, cli_opts.ray.worker_cpu,
	    cli_opts.ray.worker_memory, cli_opts.ray.worker_gpu };
	size_t i;
	double d;

	for (i = 0; i < sizeof q / sizeof *q; i++)
		if (q[i] != NULL && quantity_parse(q[i], &d) != 0) {
			cli_color_errorf("%s is not a quantity\n", q[i]);
			return -1;
		}
	return 0;
}

/* The flags' worker group, in the config's words (NULL: a bad flag). */
static cJSON *
flags_group(const char *name)
{
	cJSON *g = cJSON_CreateObject(), *params = cJSON_CreateObject();

	if (kv_map(cli_opts.ray.worker_params, params,
	    "--worker-ray-start-params") != 0) {
		cJSON_Delete(params);
		cJSON_Delete(g);
		return NULL;
	}
	if (name != NULL)
		cJSON_AddStringToObject(g, "name", name);
	cJSON_AddNumberToObject(g, "replicas", cli_opts.replicas >= 0 ?
	    (double)cli_opts.replicas : 1);
	if (cli_opts.ray.min_replicas >= 0)
		cJSON_AddNumberToObject(g, "min-replicas",
		    (double)cli_opts.ray.min_replicas);
	if (cli_opts.ray.max_replicas >= 0)
		cJSON_AddNumberToObject(g, "max-replicas",
		    (double)cli_opts.ray.max_replicas);
	if (cli_opts.ray.hosts > 0)
		cJSON_AddNumberToObject(g, "num-of-hosts",
		    (double)cli_opts.ray.hosts);
	if (cli_opts.ray.worker_cpu != NULL)
		cJSON_AddStringToObject(g, "cpu", cli_opts.ray.worker_cpu);
	if (cli_opts.ray.worker_memory != NULL)
		cJSON_AddStringToObject(g, "memory", cli_opts.ray.worker_memory);
	if (cli_opts.ray.worker_gpu != NULL)
		cJSON_AddStringToObject(g, "gpu", cli_opts.ray.worker_gpu);
	cJSON_AddItemToObject(g, "ray-start-params", params);
	return g;
}

/* The flags as the plugin's cluster config (NULL: a bad flag). */
static cJSON *
flags_config(void)
{
	cJSON *cfg = cJSON_CreateObject(), *head, *params, *g;

	if (cli_opts.ray.ray_version != NULL)
		cJSON_AddStringToObject(cfg, "ray-version",
		    cli_opts.ray.ray_version);
	if (cli_opts.ray.image != NULL)
		cJSON_AddStringToObject(cfg, "image", cli_opts.ray.image);
	head = cJSON_AddObjectToObject(cfg, "head");
	if (cli_opts.ray.head_cpu != NULL)
		cJSON_AddStringToObject(head, "cpu", cli_opts.ray.head_cpu);
	if (cli_opts.ray.head_memory != NULL)
		cJSON_AddStringToObject(head, "memory", cli_opts.ray.head_memory);
	if (cli_opts.ray.head_gpu != NULL)
		cJSON_AddStringToObject(head, "gpu", cli_opts.ray.head_gpu);
	params = cJSON_AddObjectToObject(head, "ray-start-params");
	if (kv_map(cli_opts.ray.head_params, params,
	    "--head-ray-start-params") != 0 || (g = flags_group(NULL)) ==
	    NULL) {
		cJSON_Delete(cfg);
		return NULL;
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(cfg, "worker-groups"), g);
	if (cli_opts.ray.autoscaler != NULL)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(cfg,
		    "autoscaler"), "version", cli_opts.ray.autoscaler);
	return cfg;
}

/* The RayCluster spec the plugin generates from the flags. */
cJSON *
cli_ray_cluster_spec(void)
{
	cJSON *cfg = flags_config(), *spec;

	if (cfg == NULL)
		return NULL;
	spec = cli_ray_spec_from_config(cfg);
	cJSON_Delete(cfg);
	return spec;
}

static void
cluster_path(struct cli_buf *b, const char *ns, const char *name)
{
	cli_buf_printf(b, "/apis/ray.io/v1/namespaces/%s/rayclusters%s%s", ns,
	    name ? "/" : "", name ? name : "");
}

/* Until the cluster is RayClusterProvisioned, or the timeout. */
static int
wait_provisioned(const char *ns, const char *name)
{
	long until = cli_obj_now_ms() + (cli_opts.timeout_ms > 0 ?
	    cli_opts.timeout_ms : 300000);
	struct cli_buf path = { 0 };
	struct cli_http_resp r;
	cJSON *o;
	int ok = 0;

	cluster_path(&path, ns, name);
	while (!ok && cli_obj_now_ms() < until) {
		memset(&r, 0, sizeof r);
		cli_http_request("GET", path.p, NULL, NULL, NULL, &r);
		if (r.code == 200 && (o = cJSON_Parse(r.body.p)) != NULL) {
			ok = json_condition_true(o, "RayClusterProvisioned");
			cJSON_Delete(o);
		}
		cli_buf_free(&r.body);
		if (!ok)
			usleep(POLL_US);
	}
	cli_buf_free(&path);
	if (!ok)
		cli_color_errorf("timed out waiting for cluster %s to be "
		    "provisioned\n", name);
	return ok ? 0 : -1;
}

/* Flags that --file replaces (the plugin refuses them together). */
static const char *
file_conflict(void)
{
	const struct cli_ray_opts *o = &cli_opts.ray;

	if (o->ray_version || o->image || o->head_cpu || o->head_memory ||
	    o->head_gpu || o->worker_cpu || o->worker_memory || o->worker_gpu ||
	    o->labels || o->annotations || o->head_params ||
	    o->worker_params || o->autoscaler || o->hosts > 0 ||
	    cli_opts.replicas >= 0)
		return "--file cannot be used with the flags that describe the "
		    "cluster (--ray-version, --image, --head-*, --worker-*, "
		    "--labels, --annotations, --num-of-hosts, --autoscaler)";
	return NULL;
}

/* The cluster's name, namespace, labels and spec from --file. */
static cJSON *
from_file(const char **name, const char **ns, cJSON **labels,
    cJSON **ann, cJSON **cfg)
{
	const char *fname, *fns, *why = file_conflict();
	cJSON *spec;

	if (why != NULL) {
		cli_color_errorf("%s\n", why);
		return NULL;
	}
	if ((*cfg = cli_ray_config_read(cli_opts.ray.file)) == NULL)
		return NULL;
	fname = json_str(*cfg, "name");
	fns = json_str(*cfg, "namespace");
	if (fname != NULL && *name != NULL && strcmp(fname, *name) != 0) {
		cli_color_errorf("the cluster name in the config file \"%s\" "
		    "does not match the cluster name \"%s\". You must use the "
		    "same name to perform this operation\n", fname, *name);
		return NULL;
	}
	if (*name == NULL)
		*name = fname;
	if (*name == NULL) {
		cli_color_errorf("the cluster name is required\n");
		return NULL;
	}
	if (fns != NULL && cli_opts.ns != NULL && strcmp(fns, cli_opts.ns) !=
	    0) {
		cli_color_errorf("the namespace in the config file \"%s\" does "
		    "not match the namespace \"%s\". You must pass "
		    "--namespace=%s to perform this operation\n", fns,
		    cli_opts.ns, fns);
		return NULL;
	}
	if (fns != NULL)
		*ns = fns;
	cJSON_Delete(*labels);
	cJSON_Delete(*ann);
	*labels = cJSON_Duplicate(json_at(*cfg, "labels"), 1);
	*ann = cJSON_Duplicate(json_at(*cfg, "annotations"), 1);
	if (*labels == NULL)
		*labels = cJSON_CreateObject();
	if (*ann == NULL)
		*ann = cJSON_CreateObject();
	spec = cli_ray_spec_from_config(*cfg);
	return spec;
}

static int
create_cluster(const char *name)
{
	const char *ns = cli_ray_ns();
	cJSON *rc, *spec, *labels = cJSON_CreateObject();
	cJSON *ann = cJSON_CreateObject(), *out, *cfg = NULL;
	struct cli_buf path = { 0 };
	char *body;
	int rc_ = CLI_FAIL;

	if (cli_opts.ray.file != NULL)
		spec = from_file(&name, &ns, &labels, &ann, &cfg);
	else if (name == NULL) {
		cJSON_Delete(labels);
		cJSON_Delete(ann);
		return cli_opt_usage("ray", "create cluster: a NAME, or --file");
	} else if (cli_ray_check_quantities() != 0 ||
	    kv_map(cli_opts.ray.labels, labels, "--labels") != 0 ||
	    kv_map(cli_opts.ray.annotations, ann, "--annotations") != 0)
		spec = NULL;
	else
		spec = cli_ray_cluster_spec();
	if (spec == NULL) {
		cJSON_Delete(labels);
		cJSON_Delete(ann);
		cJSON_Delete(cfg);
		return CLI_USAGE;
	}

	rc = cJSON_CreateObject();
	cJSON_AddStringToObject(rc, "apiVersion", "ray.io/v1");
	cJSON_AddStringToObject(rc, "kind", "RayCluster");
	cli_ray_put(rc, "metadata.name", cJSON_CreateString(name));
	cli_ray_put(rc, "metadata.namespace", cJSON_CreateString(ns));
	if (cJSON_GetArraySize(labels) > 0)
		cli_ray_put(rc, "metadata.labels", labels);
	else
		cJSON_Delete(labels);
	if (cJSON_GetArraySize(ann) > 0)
		cli_ray_put(rc, "metadata.annotations", ann);
	else
		cJSON_Delete(ann);
	cJSON_AddItemToObject(rc, "spec", spec);
	if (cli_opts.ray.dry_run) {
		cli_print_yaml(stdout, rc);
		cJSON_Delete(rc);
		cJSON_Delete(cfg);
		return CLI_OK;
	}
	cluster_path(&path, ns, NULL);
	body = cJSON_PrintUnformatted(rc);
	out = cli_obj_send("POST", path.p, "application/json", body);
	free(body);
	if (out != NULL) {
		printf("Created Ray cluster: %s\n", name);
		rc_ = CLI_OK;
		if (cli_opts.wait) {
			if (wait_provisioned(ns, name) == 0)
				printf("Ray cluster %s is provisioned\n", name);
			else
				rc_ = CLI_FAIL;
		}
	}
	cJSON_Delete(out);
	cJSON_Delete(rc);
	cli_buf_free(&path);
	cJSON_Delete(cfg);
	return rc_;
}

cJSON *
cli_ray_cluster(const char *ns, const char *name)
{
	struct cli_buf path = { 0 };
	cJSON *o;

	cluster_path(&path, ns, name);
	o = cli_http_get_json(path.p, NULL);
	cli_buf_free(&path);
	return o;
}

/* GET path: the object on 200, else NULL (nothing reported). */
static cJSON *
get_quiet(const char *path)
{
	struct cli_http_resp r = { 0 };
	cJSON *t = NULL;

	cli_http_request("GET", path, NULL, NULL, NULL, &r);
	if (r.code == 200)
		t = cJSON_Parse(r.body.p);
	cli_buf_free(&r.body);
	return t;
}

/*
 * kube-apiserver's service proxy dials the head pod's IP, where nothing of
 * an emulated head on a simulated node listens; through an API server
 * that is not volrayd (its /version's gitCommit), a head on one of
 * volray's nodes (labelled volray.io/runtime) is reached through the node
 * proxy to its agent's endpoint, as the controllers reach it.
 */
int
cli_ray_head_node_path(const char *ns, const char *cluster,
    struct cli_buf *b)
{
	struct cli_buf p = { 0 };
	cJSON *v, *rc = NULL, *pod = NULL, *node = NULL;
	const char *commit, *podname, *nodename;
	int ret = -1;

	if ((v = get_quiet("/version")) == NULL)
		return -1;
	commit = json_str(v, "gitCommit");
	if (commit == NULL || strcmp(commit, "volray") == 0)
		goto out;
	cluster_path(&p, ns, cluster);
	rc = get_quiet(p.p);
	podname = json_str(rc, "status.head.podName");
	if (podname == NULL || *podname == '\0')
		goto out;
	p.len = 0;
	cli_buf_printf(&p, "/api/v1/namespaces/%s/pods/%s", ns, podname);
	pod = get_quiet(p.p);
	nodename = json_str(pod, "spec.nodeName");
	if (nodename == NULL || *nodename == '\0')
		goto out;
	p.len = 0;
	cli_buf_printf(&p, "/api/v1/nodes/%s", nodename);
	node = get_quiet(p.p);
	if (cli_ray_member(json_at(node, "metadata.labels"),
	    "volray.io/runtime") == NULL)
		goto out;
	cli_buf_printf(b, "/api/v1/nodes/%s/proxy/volray/proxy/%s/%s/8265",
	    nodename, ns, podname);
	ret = 0;
out:
	cJSON_Delete(v);
	cJSON_Delete(rc);
	cJSON_Delete(pod);
	cJSON_Delete(node);
	cli_buf_free(&p);
	return ret;
}

/* A merge patch of the cluster's workerGroupSpecs (the whole list). */
static int
create_workergroup(const char *group)
{
	const char *ns = cli_ray_ns(), *cl = cli_opts.ray.cluster;
	cJSON *rc, *groups, *g;
	const cJSON *x;
	char image[160];
	int rc_;

	if (cl == NULL)
		return cli_opt_usage("ray", "create workergroup: "
		    "-c/--ray-cluster is required");
	if (cli_ray_check_quantities() != 0)
		return CLI_USAGE;
	if ((rc = cli_ray_cluster(ns, cl)) == NULL)
		return CLI_FAIL;
	cJSON_ArrayForEach(x, json_at(rc, "spec.workerGroupSpecs"))
		if (json_str(x, "groupName") && strcmp(json_str(x,
		    "groupName"), group) == 0) {
			cli_color_errorf("worker group %s already exists in Ray "
			    "cluster %s\n", group, cl);
			cJSON_Delete(rc);
			return CLI_FAIL;
		}
	snprintf(image, sizeof image, "%s", cli_ray_or(cli_opts.ray.image,
	    json_str(cJSON_GetArrayItem(json_at(rc,
	    "spec.headGroupSpec.template.spec.containers"), 0), "image")));
	{
		cJSON *want = flags_group(group);
		int bad = 0;

		g = want != NULL ? cli_ray_worker_group(want, 0, image, NULL,
		    &bad) : NULL;
		cJSON_Delete(want);
		if (g != NULL && bad) {
			cJSON_Delete(g);
			g = NULL;
		}
	}
	if (g == NULL) {
		cJSON_Delete(rc);
		return CLI_USAGE;
	}
	groups = cJSON_Duplicate(json_at(rc, "spec.workerGroupSpecs"), 1);
	if (groups == NULL)
		groups = cJSON_CreateArray();
	cJSON_AddItemToArray(groups, g);
	rc_ = cli_ray_put_groups(ns, cl, rc, groups) == 0 ? CLI_OK : CLI_FAIL;
	if (rc_ == CLI_OK)
		printf("Updated Ray cluster %s/%s with new worker group\n", ns,
		    cl);
	cJSON_Delete(rc);
	return rc_;
}

long
cli_ray_num(const cJSON *o, const char *path, long def)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : def;
}

cJSON *
cli_ray_list(const char *what, const char *ns, const char *selector)
{
	struct cli_buf path = { 0 };
	cJSON *l;

	if (ns != NULL)
		cli_buf_printf(&path, "%s/namespaces/%s/%s", strcmp(what,
		    "pods") == 0 ? "/api/v1" : "/apis/ray.io/v1", ns, what);
	else
		cli_buf_printf(&path, "%s/%s", strcmp(what, "pods") == 0 ?
		    "/api/v1" : "/apis/ray.io/v1", what);
	if (selector != NULL)
		cli_http_query_add(&path, "labelSelector", selector);
	l = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	return l;
}

/* --- delete, log ----------------------------------------------------- */

static int
delete_run(int argc, char **argv)
{
	struct cli_buf path = { 0 }, list_ = { 0 };
	const char *ns = cli_ray_ns();
	char answer[16];
	int i, rc = CLI_OK;

	if (argc < 1)
		return cli_opt_usage("ray", "delete: accepts a minimum of 1 "
		    "arg, received 0");
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *slash = strchr(a, '/');

		if (slash != NULL && strncmp(a, "raycluster/", 11) != 0 &&
		    strncmp(a, "rayjob/", 7) != 0 &&
		    strncmp(a, "rayservice/", 11) != 0) {
			cli_buf_free(&list_);
			return cli_opt_usage("ray", "unsupported resource "
			    "type: %s", a);
		}
		cli_buf_printf(&list_, "\n%s/%s", slash ? "" : "raycluster",
		    slash ? a : a);
	}
	if (!cli_opts.ray.yes) {
		printf("Are you sure you want to delete the following "
		    "resources?%s\n(y/yes/n/no)", list_.p);
		fflush(stdout);
		if (fgets(answer, sizeof answer, stdin) == NULL)
			answer[0] = '\0';
		answer[strcspn(answer, "\r\n")] = '\0';
		if (strcmp(answer, "n") == 0 || strcmp(answer, "no") == 0) {
			printf("Canceled deletion.\n");
			cli_buf_free(&list_);
			return CLI_OK;
		}
		if (strcmp(answer, "y") != 0 && strcmp(answer, "yes") != 0) {
			printf("Unknown input %s\n", answer);
			cli_buf_free(&list_);
			return CLI_FAIL;
		}
	}
	cli_buf_free(&list_);
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *slash = strchr(a, '/');
		char type[16];
		cJSON *out;

		snprintf(type, sizeof type, "%.*s", slash ? (int)(slash - a) :
		    10, slash ? a : "raycluster");
		path.len = 0;
		cli_buf_printf(&path, "/apis/ray.io/v1/namespaces/%s/%ss/%s",
		    ns, type, slash ? slash + 1 : a);
		if ((out = cli_obj_send("DELETE", path.p, NULL, NULL)) ==
		    NULL) {
			rc = CLI_FAIL;
			continue;
		}
		cJSON_Delete(out);
		printf("Deleted %s %s\n", type, slash ? slash + 1 : a);
	}
	cli_buf_free(&path);
	return rc;
}

int
cli_ray_run(int argc, char **argv)
{
	const char *v = argc > 0 ? argv[0] : "";

	if (strcmp(v, "create") == 0 && (argc == 3 || argc == 2) &&
	    strcmp(argv[1], "cluster") == 0)
		return create_cluster(argc == 3 ? argv[2] : NULL);
	if (strcmp(v, "create") == 0 && argc == 3 &&
	    strcmp(argv[1], "workergroup") == 0)
		return create_workergroup(argv[2]);
	if (strcmp(v, "get") == 0)
		return cli_ray_get(argc - 1, argv + 1);
	if (strcmp(v, "scale") == 0 && argc == 3 &&
	    strcmp(argv[1], "cluster") == 0)
		return cli_ray_scale_cluster(argv[2]);
	if (strcmp(v, "scale") == 0 && argc == 3 &&
	    strcmp(argv[1], "job") == 0)
		return cli_ray_scale_job(argv[2]);
	if (strcmp(v, "delete") == 0)
		return delete_run(argc - 1, argv + 1);
	if (strcmp(v, "log") == 0)
		return cli_ray_log(argc - 1, argv + 1);
	if (strcmp(v, "session") == 0)
		return cli_ray_session(argc - 1, argv + 1);
	if (strcmp(v, "job") == 0 && argc >= 2 && strcmp(argv[1], "submit") ==
	    0)
		return cli_ray_job_submit(argc - 2, argv + 2);
	return cli_opt_usage("ray", "usage: volray ray create cluster|"
	    "workergroup NAME | get cluster|workergroup|node [NAME] | get "
	    "token CLUSTER | scale cluster|job NAME -w GROUP -r N | job submit "
	    "--name NAME -- ENTRYPOINT | session NAME | log NAME | delete "
	    "NAME");
}
