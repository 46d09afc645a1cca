/*
 * volray ray scale: a worker group's replicas, minReplicas and
 * maxReplicas, set on a RayCluster as KubeRay's plugin does (scale
 * cluster), or on a running RayJob (scale job), which the plugin cannot
 * do (kuberay#4819): the RayJob's spec.rayClusterSpec records the new
 * size, so that a retry's new cluster has it too, and the cluster the
 * RayJob runs on now is changed the same way. A replica count outside
 * the group's bounds is refused for a cluster (the plugin's rule); for a
 * job the bound moves to it and the output says so.
 * Documented in volray(1), RAY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "lib/json.h"
#include "cli_ray.h"

/* What a scale asks for: -1 where a flag is not given. */
struct scale_req {
	const char *group;
	long replicas, min, max;
	int move_bounds;	/* a job's: bounds follow the replica count */
};

/* Set a number member, replacing the one there. */
static void
set_num(cJSON *o, const char *key, long n)
{
	cJSON_DeleteItemFromObject(o, key);
	cJSON_AddNumberToObject(o, key, (double)n);
}

/* The group named r->group in groups, or NULL (reported, with the names
   there are, as the plugin says it). */
static cJSON *
find_group(cJSON *groups, const struct scale_req *r, const char *what,
    const char *name, const char *ns)
{
	struct cli_buf names = { 0 };
	cJSON *g, *found = NULL;

	cJSON_ArrayForEach(g, groups) {
		const char *gn = json_str(g, "groupName");

		cli_buf_printf(&names, "%s%s", names.len ? ", " : "",
		    gn ? gn : "");
		if (gn != NULL && strcmp(gn, r->group) == 0)
			found = g;
	}
	if (found == NULL)
		cli_color_errorf("worker group %s not found in %s %s in "
		    "namespace %s. Available worker groups: %s\n", r->group,
		    what, name, ns, names.p ? names.p : "");
	cli_buf_free(&names);
	return found;
}

/*
 * Apply r to the group g, writing what changed into changes: 0, or -1
 * when the request does not fit the group's bounds (reported).
 */
static int
edit_group(cJSON *g, const struct scale_req *r, struct cli_buf *changes)
{
	long cur = cli_ray_num(g, "replicas", 0);
	long cmin = cli_ray_num(g, "minReplicas", 0);
	long cmax = cli_ray_num(g, "maxReplicas", 2147483647);
	long mn = r->min >= 0 ? r->min : cmin, mx = r->max >= 0 ? r->max :
	    cmax;

	if (r->move_bounds && r->replicas >= 0) {
		if (r->max < 0 && r->replicas > mx)
			mx = r->replicas;
		if (r->min < 0 && r->replicas < mn)
			mn = r->replicas;
	}
	if (mn > mx) {
		cli_color_errorf("cannot set --min-replicas (%ld) greater than "
		    "--max-replicas (%ld)\n", mn, mx);
		return -1;
	}
	if (r->replicas >= 0 && r->replicas < mn) {
		cli_color_errorf("cannot set --replicas (%ld) less than "
		    "--min-replicas (%ld)\n", r->replicas, mn);
		return -1;
	}
	if (r->replicas >= 0 && r->replicas > mx) {
		cli_color_errorf("cannot set --replicas (%ld) greater than "
		    "--max-replicas (%ld)\n", r->replicas, mx);
		return -1;
	}
	if (mn != cmin) {
		cli_buf_printf(changes, "%s minReplicas: %ld to %ld",
		    r->min >= 0 ? "Scaled" : "Lowered", cmin, mn);
		set_num(g, "minReplicas", mn);
	}
	if (mx != cmax) {
		cli_buf_printf(changes, "%s%s maxReplicas: %ld to %ld",
		    changes->len ? ", " : "", r->max >= 0 ? "Scaled" :
		    "Raised", cmax, mx);
		set_num(g, "maxReplicas", mx);
	}
	if (r->replicas >= 0 && r->replicas != cur) {
		cli_buf_printf(changes, "%sScaled Replicas: %ld to %ld",
		    changes->len ? ", " : "", cur, r->replicas);
		set_num(g, "replicas", r->replicas);
	}
	return 0;
}

/* The request from the flags: 0, or a usage error. */
static int
scale_request(struct scale_req *r, int move_bounds)
{
	r->group = cli_opts.ray.worker_group;
	r->replicas = cli_opts.replicas;
	r->min = cli_opts.ray.min_replicas;
	r->max = cli_opts.ray.max_replicas;
	r->move_bounds = move_bounds;
	if (r->group == NULL)
		return cli_opt_usage("ray", "must specify -w/--worker-group");
	if (r->replicas < 0 && r->min < 0 && r->max < 0)
		return cli_opt_usage("ray", "must specify at least one of "
		    "--replicas, --min-replicas, or --max-replicas "
		    "(non-negative integers)");
	if (r->min >= 0 && r->max >= 0 && r->min > r->max)
		return cli_opt_usage("ray", "--min-replicas (%ld) cannot be "
		    "greater than --max-replicas (%ld)", r->min, r->max);
	return 0;
}

/*
 * Merge-patch obj's groups at path (dotted, "spec.workerGroupSpecs")
 * with obj's resourceVersion, so that a concurrent change is a 409
 * rather than lost: 0, or -1 (reported). Takes groups.
 */
static int
put_groups_at(const char *url, const cJSON *obj, const char *path,
    cJSON *groups)
{
	cJSON *patch = cJSON_CreateObject(), *out;
	char *body;

	cli_ray_put(patch, "metadata.resourceVersion",
	    cJSON_CreateString(json_str(obj, "metadata.resourceVersion")));
	cli_ray_put(patch, path, groups);
	body = cJSON_PrintUnformatted(patch);
	out = cli_obj_send("PATCH", url, "application/merge-patch+json",
	    body);
	free(body);
	cJSON_Delete(patch);
	cJSON_Delete(out);
	return out != NULL ? 0 : -1;
}

int
cli_ray_put_groups(const char *ns, const char *name, const cJSON *rc,
    cJSON *groups)
{
	struct cli_buf url = { 0 };
	int rc_;

	cli_buf_printf(&url, "/apis/ray.io/v1/namespaces/%s/rayclusters/%s",
	    ns, name);
	rc_ = put_groups_at(url.p, rc, "spec.workerGroupSpecs", groups);
	cli_buf_free(&url);
	return rc_;
}

/*
 * Scale the group of cluster name as r says: CLI_OK (changed, or nothing
 * to change; quiet says nothing then) or CLI_FAIL. The message names
 * what (KubeRay's "Ray cluster").
 */
static int
scale_one_cluster(const char *ns, const char *name,
    const struct scale_req *r)
{
	struct cli_buf changes = { 0 };
	cJSON *rc, *groups = NULL, *g;
	int rc_ = CLI_FAIL;

	if ((rc = cli_ray_cluster(ns, name)) == NULL)
		return CLI_FAIL;
	groups = cJSON_Duplicate(json_at(rc, "spec.workerGroupSpecs"), 1);
	if ((g = find_group(groups, r, "Ray cluster", name, ns)) == NULL ||
	    edit_group(g, r, &changes) != 0)
		goto out;
	rc_ = CLI_OK;
	if (changes.len == 0)
		printf("Worker group %s in Ray cluster %s in namespace %s "
		    "already matches the requested configuration. Skipping.\n",
		    r->group, name, ns);
	else if (cli_ray_put_groups(ns, name, rc, groups) == 0)
		printf("Updated worker group %s in Ray cluster %s in "
		    "namespace %s (%s)\n", r->group, name, ns, changes.p);
	else
		rc_ = CLI_FAIL;
	groups = NULL;
out:
	cJSON_Delete(groups);
	cJSON_Delete(rc);
	cli_buf_free(&changes);
	return rc_;
}

int
cli_ray_scale_cluster(const char *name)
{
	struct scale_req r;
	int rc;

	if ((rc = scale_request(&r, 0)) != 0)
		return rc;
	return scale_one_cluster(cli_ray_ns(), name, &r);
}

/* The RayCluster the RayJob job runs on now, when it is the job's own and
   not being deleted, or NULL. */
static cJSON *
job_cluster(const cJSON *job, const char *ns)
{
	const char *cl = json_str(job, "status.rayClusterName");
	struct cli_buf url = { 0 };
	const char *origin;
	cJSON *rc;

	if (cl == NULL || *cl == '\0')
		return NULL;
	cli_buf_printf(&url, "/apis/ray.io/v1/namespaces/%s/rayclusters/%s",
	    ns, cl);
	rc = cli_http_get_json(url.p, NULL);
	cli_buf_free(&url);
	if (rc == NULL)
		return NULL;
	origin = cli_ray_member(json_at(rc, "metadata.labels"),
	    "ray.io/originated-from-cr-name");
	if (origin == NULL || strcmp(origin, json_str(job, "metadata.name")) !=
	    0 || json_at(rc, "metadata.deletionTimestamp") != NULL) {
		cJSON_Delete(rc);
		return NULL;
	}
	return rc;
}

int
cli_ray_scale_job(const char *name)
{
	const char *ns = cli_ray_ns();
	struct cli_buf url = { 0 }, changes = { 0 };
	struct scale_req r;
	cJSON *job = NULL, *groups = NULL, *g, *rc;
	const cJSON *sel;
	int rc_;

	if ((rc_ = scale_request(&r, 1)) != 0)
		return rc_;
	rc_ = CLI_FAIL;
	cli_buf_printf(&url, "/apis/ray.io/v1/namespaces/%s/rayjobs/%s", ns,
	    name);
	if ((job = cli_http_get_json(url.p, NULL)) == NULL)
		goto out;
	sel = json_at(job, "spec.clusterSelector");
	if (cJSON_IsObject(sel) && sel->child != NULL) {
		cli_color_errorf("RayJob %s in namespace %s runs on a cluster "
		    "it does not own (clusterSelector): scale that cluster "
		    "instead (volray ray scale cluster)\n", name, ns);
		goto out;
	}
	groups = cJSON_Duplicate(json_at(job,
	    "spec.rayClusterSpec.workerGroupSpecs"), 1);
	if ((g = find_group(groups, &r, "RayJob", name, ns)) == NULL ||
	    edit_group(g, &r, &changes) != 0)
		goto out;
	if (changes.len == 0)
		printf("Worker group %s in RayJob %s in namespace %s already "
		    "matches the requested configuration.\n", r.group, name,
		    ns);
	else if (put_groups_at(url.p, job, "spec.rayClusterSpec."
	    "workerGroupSpecs", groups) == 0)
		printf("Updated worker group %s in RayJob %s in namespace %s "
		    "(%s)\n", r.group, name, ns, changes.p);
	else {
		groups = NULL;
		goto out;
	}
	groups = NULL;
	/* The cluster it runs on now: the same bounds and count. */
	if ((rc = job_cluster(job, ns)) == NULL) {
		printf("RayJob %s has no running cluster: its next one gets "
		    "the new size\n", name);
		rc_ = CLI_OK;
		goto out;
	}
	r.move_bounds = 1;
	rc_ = scale_one_cluster(ns, json_str(rc, "metadata.name"), &r);
	cJSON_Delete(rc);
out:
	cJSON_Delete(groups);
	cJSON_Delete(job);
	cli_buf_free(&url);
	cli_buf_free(&changes);
	return rc_;
}
