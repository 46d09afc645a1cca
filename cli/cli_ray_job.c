/*
 * volray ray job submit and ray log (cli_ray.c): a RayJob in
 * InteractiveMode whose Ray job is submitted to its head and followed,
 * and a cluster's container logs written to a directory.
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
#include "cli_ray.h"

#define POLL_US		200000

/* Write body to path (made with its directories under base). */
static int
write_under(const char *base, const char *rel, const struct cli_buf *body)
{
	char path[4096], *s;
	FILE *f;

	if (snprintf(path, sizeof path, "%s/%s", base, rel) >=
	    (int)sizeof path || strstr(rel, "..") != NULL)
		return -1;
	for (s = path + strlen(base) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(path, 0755);
		*s = '/';
	}
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	if (body->len > 0)
		fwrite(body->p, 1, body->len, f);
	return fclose(f);
}

/*
 * A real Ray node's session logs (the pod's /tmp/ray/session_latest/logs),
 * as the kuberay plugin copies them, through the head dashboard's log API
 * (GET /api/v0/logs?node_ip=IP, then each file) into DIR/ray/. The number
 * of files written; 0 when the head's dashboard has no such API (volray's
 * emulated heads: their Ray is volrayd).
 */
static int
ray_session_logs(const char *ns, const char *cluster, const char *ip,
    const char *dir)
{
	struct cli_buf path = { 0 };
	struct cli_http_resp r = { 0 };
	const cJSON *cat, *f;
	cJSON *t = NULL;
	int n = 0;

	cli_buf_printf(&path, "/api/v1/namespaces/%s/services/%s-head-svc:8265/"
	    "proxy/api/v0/logs", ns, cluster);
	cli_http_query_add(&path, "node_ip", ip);
	cli_http_request("GET", path.p, NULL, NULL, NULL, &r);
	if (r.code == 200)
		t = cJSON_Parse(r.body.p);
	cli_buf_free(&r.body);
	cJSON_ArrayForEach(cat, json_at(t, "data.result"))
		cJSON_ArrayForEach(f, cat) {
			struct cli_http_resp fr = { 0 };
			const char *name = cJSON_GetStringValue(f);
			char rel[1024];

			if (name == NULL || *name == '\0' ||
			    name[strlen(name) - 1] == '/')
				continue;
			path.len = 0;
			cli_buf_printf(&path, "/api/v1/namespaces/%s/services/"
			    "%s-head-svc:8265/proxy/api/v0/logs/file", ns,
			    cluster);
			cli_http_query_add(&path, "node_ip", ip);
			cli_http_query_add(&path, "filename", name);
			cli_http_query_add(&path, "lines", "-1");
			cli_http_request("GET", path.p, NULL, NULL, NULL, &fr);
			snprintf(rel, sizeof rel, "ray/%s", name);
			if (fr.code == 200 && write_under(dir, rel,
			    &fr.body) == 0)
				n++;
			cli_buf_free(&fr.body);
		}
	cJSON_Delete(t);
	cli_buf_free(&path);
	return n;
}

/*
 * Every Ray pod's container logs into DIR/CLUSTER/POD/CONTAINER.log, and
 * for real Ray its session logs into DIR/CLUSTER/POD/ray/.
 */
int
cli_ray_log(int argc, char **argv)
{
	const char *ns = cli_ray_ns();
	const char *type = cli_ray_or(cli_opts.ray.node_type, "all");
	const char *dir = cli_ray_or(cli_opts.ray.out_dir, ".");
	struct cli_buf sel = { 0 }, path = { 0 }, file = { 0 };
	const cJSON *p, *c;
	cJSON *pods, *rc;
	int n = 0, rc_ = CLI_OK;

	if (argc != 1)
		return cli_opt_usage("ray", "usage: volray ray log NAME "
		    "[--out-dir DIR] [--node-type all|head|worker]");
	if (strcmp(type, "all") != 0 && strcmp(type, "head") != 0 &&
	    strcmp(type, "worker") != 0)
		return cli_opt_usage("ray", "--node-type: all, head or worker, "
		    "not %s", type);
	if ((rc = cli_ray_cluster(ns, argv[0])) == NULL)
		return CLI_FAIL;
	cJSON_Delete(rc);
	cli_buf_printf(&sel, "ray.io/cluster=%s", argv[0]);
	if (strcmp(type, "all") != 0)
		cli_buf_printf(&sel, ",ray.io/node-type=%s", type);
	pods = cli_ray_list("pods", ns, sel.p);
	cli_buf_free(&sel);
	if (pods == NULL)
		return CLI_FAIL;
	cli_buf_printf(&file, "%s/%s", dir, argv[0]);
	if (mkdir(dir, 0755) != 0 && access(dir, W_OK) != 0) {
		cli_color_errorf("cannot write %s\n", dir);
		cJSON_Delete(pods);
		cli_buf_free(&file);
		return CLI_FAIL;
	}
	(void)mkdir(file.p, 0755);
	cJSON_ArrayForEach(p, json_at(pods, "items")) {
		const char *pod = json_str(p, "metadata.name");

		printf("Downloading log for Ray Node %s\n", pod);
		file.len = 0;
		cli_buf_printf(&file, "%s/%s/%s", dir, argv[0], pod);
		(void)mkdir(file.p, 0755);
		cJSON_ArrayForEach(c, json_at(p, "spec.containers")) {
			struct cli_http_resp r = { 0 };
			FILE *f;

			path.len = 0;
			cli_buf_printf(&path, "/api/v1/namespaces/%s/pods/%s/"
			    "log", ns, pod);
			cli_http_query_add(&path, "container",
			    json_str(c, "name"));
			cli_http_request("GET", path.p, NULL, NULL, NULL, &r);
			file.len = 0;
			cli_buf_printf(&file, "%s/%s/%s/%s.log", dir, argv[0],
			    pod, json_str(c, "name"));
			if (r.code == 200 && (f = fopen(file.p, "w")) != NULL) {
				if (r.body.len > 0)
					fwrite(r.body.p, 1, r.body.len, f);
				fclose(f);
			} else if (r.code != 200) {
				cli_http_report(&r);
				rc_ = CLI_FAIL;
			}
			cli_buf_free(&r.body);
		}
		if (json_str(p, "status.podIP") != NULL) {
			int k;

			file.len = 0;
			cli_buf_printf(&file, "%s/%s/%s", dir, argv[0], pod);
			if ((k = ray_session_logs(ns, argv[0], json_str(p,
			    "status.podIP"), file.p)) > 0)
				printf("  %d Ray session logs in %s/ray\n", k,
				    file.p);
		}
		n++;
	}
	if (n == 0)
		cli_color_errorf("No Ray nodes found for cluster %s\n",
		    argv[0]);
	cJSON_Delete(pods);
	cli_buf_free(&path);
	cli_buf_free(&file);
	return n == 0 ? CLI_FAIL : rc_;
}

/* The Ray job's status through the head's service proxy, or NULL. */
static cJSON *
ray_job(const char *head, const char *id)
{
	struct cli_buf p = { 0 };
	struct cli_http_resp r = { 0 };
	cJSON *t = NULL;

	cli_buf_printf(&p, "%s/api/jobs/%s", head, id);
	cli_http_request("GET", p.p, NULL, NULL, NULL, &r);
	if (r.code == 200)
		t = cJSON_Parse(r.body.p);
	cli_buf_free(&r.body);
	cli_buf_free(&p);
	return t;
}

/* "raysubmit_" and 16 letters and digits, as Ray names submissions. */
static void
new_submission_id(char *out, size_t n)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
	    "RSTUVWXYZ0123456789";
	unsigned char r[16];
	FILE *f = fopen("/dev/urandom", "r");
	size_t i;

	if (f == NULL || fread(r, 1, sizeof r, f) != sizeof r)
		for (i = 0; i < sizeof r; i++)
			r[i] = (unsigned char)rand();
	if (f != NULL)
		fclose(f);
	snprintf(out, n, "raysubmit_");
	for (i = 0; i < sizeof r && strlen(out) + 1 < n; i++)
		out[10 + i] = abc[r[i] % (sizeof abc - 1)], out[11 + i] = '\0';
}

/* A JSON flag's value into req under key; -1 (reported) when bad. */
static int
json_flag(cJSON *req, const char *key, const char *value, const char *flag)
{
	cJSON *v;

	if (value == NULL)
		return 0;
	if ((v = cJSON_Parse(value)) == NULL || !cJSON_IsObject(v)) {
		cJSON_Delete(v);
		cli_color_errorf("%s: a JSON object wanted\n", flag);
		return -1;
	}
	cJSON_AddItemToObject(req, key, v);
	return 0;
}

/* The submission `ray job submit` would make (NULL: a bad flag). */
static cJSON *
submission(const char *ep, const char *id)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "entrypoint", ep);
	cJSON_AddStringToObject(req, "submission_id", id);
	if (json_flag(req, "runtime_env", cli_opts.ray.runtime_env_json,
	    "--runtime-env-json") != 0 || json_flag(req, "metadata",
	    cli_opts.ray.metadata_json, "--metadata-json") != 0 ||
	    json_flag(req, "entrypoint_resources",
	    cli_opts.ray.entrypoint_resources, "--entrypoint-resources") != 0) {
		cJSON_Delete(req);
		return NULL;
	}
	if (cli_opts.ray.ep_cpus != NULL)
		cJSON_AddNumberToObject(req, "entrypoint_num_cpus",
		    atof(cli_opts.ray.ep_cpus));
	if (cli_opts.ray.ep_gpus != NULL)
		cJSON_AddNumberToObject(req, "entrypoint_num_gpus",
		    atof(cli_opts.ray.ep_gpus));
	if (cli_opts.ray.ep_memory > 0)
		cJSON_AddNumberToObject(req, "entrypoint_memory",
		    (double)cli_opts.ray.ep_memory);
	return req;
}

/* Until the RayJob's cluster is ready: its head's proxy path in head. */
static int
wait_cluster(const char *ns, const char *name, long until,
    struct cli_buf *head)
{
	struct cli_buf path = { 0 };
	const char *cl;
	cJSON *t, *rc;
	int said = 0;

	cli_buf_printf(&path, "/apis/ray.io/v1/namespaces/%s/rayjobs/%s", ns,
	    name);
	printf("Waiting for RayCluster\n");
	for (;;) {
		if ((t = cli_http_get_json(path.p, NULL)) == NULL)
			break;
		if ((cl = json_str(t, "status.rayClusterName")) != NULL &&
		    *cl != '\0') {
			if (!said++)
				printf("Checking Cluster Status for cluster "
				    "%s...\n", cl);
			rc = cli_ray_cluster(ns, cl);
			if (rc != NULL && json_str(rc, "status.state") != NULL &&
			    strcmp(json_str(rc, "status.state"), "ready") ==
			    0) {
				if (cli_ray_head_node_path(ns, cl, head) != 0)
					cli_buf_printf(head, "/api/v1/namespaces/"
					    "%s/services/%s-head-svc:8265/proxy",
					    ns, cl);
				cJSON_Delete(rc);
				cJSON_Delete(t);
				cli_buf_free(&path);
				return 0;
			}
			cJSON_Delete(rc);
		}
		cJSON_Delete(t);
		if (cli_obj_now_ms() > until) {
			cli_color_errorf("timed out waiting for RayJob %s's "
			    "cluster\n", name);
			break;
		}
		usleep(POLL_US);
	}
	cli_buf_free(&path);
	return -1;
}

/* `ray job submit`'s part: submit, then follow the logs to the end. */
static int
submit_follow(const char *head, cJSON *req, const char *id, long until)
{
	struct cli_buf path = { 0 };
	char *body = cJSON_PrintUnformatted(req);
	const char *st;
	size_t shown = 0;
	cJSON *t;

	cli_buf_printf(&path, "%s/api/jobs/", head);
	for (;;) {
		struct cli_http_resp r = { 0 };

		cli_http_request("POST", path.p, "application/json", body,
		    NULL, &r);
		if (r.code == 200) {
			cli_buf_free(&r.body);
			break;
		}
		if (r.code == 400 || cli_obj_now_ms() > until) {
			cli_color_errorf("submitting the Ray job: %s\n",
			    r.body.p ? r.body.p : "no answer from the head");
			cli_buf_free(&r.body);
			free(body);
			cli_buf_free(&path);
			return -1;
		}
		cli_buf_free(&r.body);
		usleep(POLL_US);
	}
	free(body);
	printf("Ray job submitted with ID %s\n", id);
	if (cli_opts.ray.no_wait) {
		cli_buf_free(&path);
		return 0;
	}
	path.len = 0;
	cli_buf_printf(&path, "%s/api/jobs/%s/logs", head, id);
	/* Logs, then the status; once the job is over, the logs once
	   more: what it printed after the last read is shown too. */
	for (int over = 0;;) {
		cJSON *l = cli_http_get_json(path.p, NULL);
		const char *s = l ? json_str(l, "logs") : NULL;

		if (s != NULL && strlen(s) > shown) {
			fputs(s + shown, stdout);
			fflush(stdout);
			shown = strlen(s);
		}
		cJSON_Delete(l);
		if (over)
			break;
		t = ray_job(head, id);
		st = t ? json_str(t, "status") : NULL;
		over = st != NULL && (strcmp(st, "SUCCEEDED") == 0 ||
		    strcmp(st, "FAILED") == 0 || strcmp(st, "STOPPED") == 0);
		cJSON_Delete(t);
		if (!over)
			usleep(POLL_US);
	}
	cli_buf_free(&path);
	return 0;
}

/* Until the RayJob's Ray job is over, as the plugin watches it. */
static int
wait_rayjob(const char *ns, const char *name)
{
	struct cli_buf path = { 0 };
	char last[64] = "";
	const char *st, *id;
	cJSON *t;
	int rc = CLI_FAIL;

	cli_buf_printf(&path, "/apis/ray.io/v1/namespaces/%s/rayjobs/%s", ns,
	    name);
	printf("Waiting for job to finish...\n");
	while ((t = cli_http_get_json(path.p, NULL)) != NULL) {
		st = cli_ray_or(json_str(t, "status.jobStatus"), "");
		id = json_str(t, "status.jobId");
		if (id == NULL || *id == '\0')
			id = "unknown";
		if (strcmp(st, last) != 0) {
			printf("Current status: %s (RayJob: %s, JobID: %s)\n", st,
			    name, id);
			snprintf(last, sizeof last, "%s", st);
		}
		if (strcmp(st, "SUCCEEDED") == 0 || strcmp(st, "STOPPED") ==
		    0) {
			printf("Job %s finished with status %s.\n", id, st);
			rc = CLI_OK;
		} else if (strcmp(st, "FAILED") == 0) {
			if (json_str(t, "status.message") != NULL)
				cli_color_errorf("job %s failed: %s\n", id,
				    json_str(t, "status.message"));
			else
				cli_color_errorf("job %s failed with status "
				    "%s\n", id, st);
		} else {
			cJSON_Delete(t);
			usleep(POLL_US);
			continue;
		}
		cJSON_Delete(t);
		break;
	}
	cli_buf_free(&path);
	return rc;
}

int
cli_ray_job_submit(int argc, char **argv)
{
	const char *ns = cli_ray_ns(), *name = cli_opts.ray.job_name;
	struct cli_buf path = { 0 }, head = { 0 }, ep = { 0 };
	cJSON *rj, *spec, *out, *req;
	long until = cli_obj_now_ms() + (cli_opts.timeout_ms > 0 ?
	    cli_opts.timeout_ms : 300000);
	char id[96], *body;
	int i, rc = CLI_FAIL;

	if (argc < 1)
		return cli_opt_usage("ray", "job submit: the entrypoint goes "
		    "after --: volray ray job submit --name NAME -- python "
		    "script.py");
	if (name == NULL)
		return cli_opt_usage("ray", "job submit: --name is required "
		    "(the RayJob's name)");
	for (i = 0; i < argc; i++)
		cli_buf_printf(&ep, "%s%s", i ? " " : "", argv[i]);
	if (cli_opts.ray.submission_id != NULL)
		snprintf(id, sizeof id, "%s", cli_opts.ray.submission_id);
	else {
		new_submission_id(id, sizeof id);
		printf("Generated submission ID for Ray job: %s\n", id);
	}
	if (cli_ray_check_quantities() != 0 ||
	    (spec = cli_ray_cluster_spec()) == NULL ||
	    (req = submission(ep.p, id)) == NULL) {
		cli_buf_free(&ep);
		return CLI_USAGE;
	}
	rj = cJSON_CreateObject();
	cJSON_AddStringToObject(rj, "apiVersion", "ray.io/v1");
	cJSON_AddStringToObject(rj, "kind", "RayJob");
	cli_ray_put(rj, "metadata.name", cJSON_CreateString(name));
	cli_ray_put(rj, "metadata.namespace", cJSON_CreateString(ns));
	cli_ray_put(rj, "spec.submissionMode", cJSON_CreateString("InteractiveMode"));
	cli_ray_put(rj, "spec.entrypoint", cJSON_CreateString(ep.p));
	cli_ray_put(rj, "spec.jobId", cJSON_CreateString(id));
	cli_ray_put(rj, "spec.rayClusterSpec", spec);
	if (cli_opts.ray.dry_run) {
		cli_print_yaml(stdout, rj);
		rc = CLI_OK;
		goto done;
	}
	cli_buf_printf(&path, "/apis/ray.io/v1/namespaces/%s/rayjobs", ns);
	body = cJSON_PrintUnformatted(rj);
	out = cli_obj_send("POST", path.p, "application/json", body);
	free(body);
	if (out == NULL)
		goto done;
	cJSON_Delete(out);
	printf("Submitted RayJob %s.\n", name);
	if (wait_cluster(ns, name, until, &head) != 0)
		goto done;
	if (cli_opts.ray.working_dir != NULL) {
		char *uri;
		cJSON *env;

		if (cli_ray_upload(head.p, cli_opts.ray.working_dir, &uri) != 0)
			goto done;
		if ((env = cJSON_GetObjectItemCaseSensitive(req,
		    "runtime_env")) == NULL)
			env = cJSON_AddObjectToObject(req, "runtime_env");
		cJSON_DeleteItemFromObjectCaseSensitive(env, "working_dir");
		cJSON_AddStringToObject(env, "working_dir", uri);
		free(uri);
	}
	if (submit_follow(head.p, req, id, until) != 0)
		goto done;
	rc = cli_opts.ray.no_wait ? CLI_OK : wait_rayjob(ns, name);
done:
	cJSON_Delete(rj);
	cJSON_Delete(req);
	cli_buf_free(&path);
	cli_buf_free(&head);
	cli_buf_free(&ep);
	return rc;
}

