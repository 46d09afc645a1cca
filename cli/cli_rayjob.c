/*
 * volray rayjob logs NAME [-f]: a RayJob's Ray job logs, read from its
 * cluster's head through the API server's service proxy as the Ray
 * dashboard serves them (GET /api/jobs/ID/logs, core/ray/jobsapi.c). The
 * job id and the head come from the RayJob's status: status.jobId, and
 * status.dashboardURL (SERVICE.NAMESPACE.svc...:PORT) or else
 * status.rayClusterName's "-head-svc" on port 8265, as rayjob.lua sets
 * them (through an API server that is not volrayd, the node proxy to a
 * head on volray's nodes: cli_ray_head_node_path). With -f the logs are read again every 200 ms and what is new
 * printed, until the job is SUCCEEDED, FAILED or STOPPED, as `ray job
 * logs --follow` does. When no head answers (the cluster was deleted
 * after the job), or the RayJob itself is gone, the logs come from the
 * Ray job history (/apis/volray.io/v1/rayhistory/..., core/ray/history.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_ray.h"
#include "cli_res.h"
#include "lib/json.h"

#define POLL_US		200000

/* The proxy path of the head's dashboard, from the RayJob's status. */
static int
head_path(const cJSON *rj, const char *ns, struct cli_buf *b)
{
	const char *url = json_str(rj, "status.dashboardURL");
	const char *cluster = json_str(rj, "status.rayClusterName");
	const char *dot, *colon;
	struct cli_buf svc = { 0 };

	if (url != NULL && strncmp(url, "http://", 7) == 0)
		url += 7;
	if (url != NULL && *url != '\0' && (colon = strrchr(url, ':')) !=
	    NULL) {
		dot = strchr(url, '.');
		if (dot == NULL || dot > colon)
			dot = colon;
		cli_buf_printf(&svc, "%.*s:%s", (int)(dot - url), url,
		    colon + 1);
		if (dot < colon && strchr(dot + 1, '.') != NULL)
			cli_buf_printf(b, "/api/v1/namespaces/%.*s",
			    (int)(strchr(dot + 1, '.') - dot - 1), dot + 1);
		else
			cli_buf_printf(b, "/api/v1/namespaces/%s", ns);
	} else if (cluster != NULL && *cluster != '\0') {
		cli_buf_printf(&svc, "%s-head-svc:8265", cluster);
		cli_buf_printf(b, "/api/v1/namespaces/%s", ns);
	} else
		return -1;
	cli_buf_printf(b, "/services/%s/proxy", svc.p);
	cli_buf_free(&svc);
	return 0;
}

static int
terminal(const char *st)
{
	return st != NULL && (strcmp(st, "SUCCEEDED") == 0 ||
	    strcmp(st, "FAILED") == 0 || strcmp(st, "STOPPED") == 0);
}

/* Print the logs once, or as they grow until the job is over. */
static int
show_logs(const char *head, const char *id)
{
	struct cli_buf logs = { 0 }, info = { 0 };
	size_t shown = 0, n;
	const char *s;
	cJSON *t;
	int over;

	cli_buf_printf(&logs, "%s/api/jobs/%s/logs", head, id);
	cli_buf_printf(&info, "%s/api/jobs/%s", head, id);
	for (;;) {
		over = 1;
		if (cli_opts.follow) {
			if ((t = cli_http_get_json(info.p, NULL)) == NULL)
				goto fail;
			over = terminal(json_str(t, "status"));
			cJSON_Delete(t);
		}
		if ((t = cli_http_get_json(logs.p, NULL)) == NULL)
			goto fail;
		if ((s = json_str(t, "logs")) != NULL && (n = strlen(s)) >
		    shown) {
			fwrite(s + shown, 1, n - shown, stdout);
			fflush(stdout);
			shown = n;
		}
		cJSON_Delete(t);
		if (over)
			break;
		usleep(POLL_US);
	}
	cli_buf_free(&logs);
	cli_buf_free(&info);
	return CLI_OK;
fail:
	cli_buf_free(&logs);
	cli_buf_free(&info);
	return CLI_FAIL;
}

/* GET path's JSON when the answer is 200; NULL, unreported, else. */
static cJSON *
quiet_get(const char *path)
{
	struct cli_http_resp r;
	cJSON *t = NULL;

	cli_http_request("GET", path, NULL, NULL, NULL, &r);
	if (r.code == 200 && r.body.p != NULL)
		t = cJSON_Parse(r.body.p);
	cli_buf_free(&r.body);
	return t;
}

/* The kept job's history base (.../clusters/CLUSTER) and id. */
static int
history_of(const char *ns, const char *name, struct cli_buf *base,
    char **id)
{
	struct cli_buf p = { 0 };
	const char *cl, *sid;
	cJSON *t;

	cli_buf_printf(&p, "/apis/volray.io/v1/rayhistory/namespaces/%s/"
	    "rayjobs/%s", ns, name);
	t = quiet_get(p.p);
	cli_buf_free(&p);
	if (t == NULL)
		return -1;
	cl = json_str(t, "volray_history.cluster");
	sid = json_str(t, "submission_id");
	if (cl == NULL || sid == NULL) {
		cJSON_Delete(t);
		return -1;
	}
	cli_buf_printf(base, "/apis/volray.io/v1/rayhistory/namespaces/%s/"
	    "clusters/%s", ns, cl);
	*id = strdup(sid);
	cJSON_Delete(t);
	return 0;
}

/*
 * rayjob logs NAME: from the live head; when the cluster is gone (or the
 * RayJob too), from the Ray job history (core/ray/history.c).
 */
int
cli_rayjob_run(int argc, char **argv)
{
	const struct cli_res *r;
	struct cli_buf path = { 0 }, head = { 0 }, probe = { 0 };
	const char *ns, *id;
	char *kept = NULL;
	cJSON *rj, *t;
	int rc = CLI_FAIL;

	if (argc != 2 || strcmp(argv[0], "logs") != 0)
		return cli_opt_usage("rayjob", "usage: volray rayjob logs NAME "
		    "[-f]");
	if ((r = cli_res_kind("ray.io/v1", "RayJob")) == NULL)
		return CLI_FAIL;
	ns = cli_obj_ns(r);
	cli_res_path(&path, r, ns, argv[1], NULL);
	rj = quiet_get(path.p);
	id = rj != NULL ? json_str(rj, "status.jobId") : NULL;
	if (id != NULL && *id != '\0' && head_path(rj, ns, &head) == 0) {
		const char *cl = json_str(rj, "status.rayClusterName");
		struct cli_buf via = { 0 };

		if (cl != NULL && *cl != '\0' &&
		    cli_ray_head_node_path(ns, cl, &via) == 0) {
			cli_buf_free(&head);
			head = via;
		} else
			cli_buf_free(&via);
		cli_buf_printf(&probe, "%s/api/jobs/%s", head.p, id);
		if ((t = quiet_get(probe.p)) != NULL) {
			cJSON_Delete(t);
			rc = show_logs(head.p, id);
			goto out;
		}
	}
	/* The cluster (or the RayJob) is gone: what the history kept. */
	cli_buf_free(&head);
	if (history_of(ns, argv[1], &head, &kept) == 0)
		rc = show_logs(head.p, kept);
	else if (rj == NULL) {
		/* The server's NotFound, as kubectl reports it. */
		if ((t = cli_http_get_json(path.p, NULL)) != NULL)
			cJSON_Delete(t);
		cli_color_errorf("no job of rayjob %s kept in the Ray job "
		    "history either\n", argv[1]);
	} else
		cli_color_errorf("rayjob %s has no Ray job to show (no head "
		    "answers for status.jobId, none kept in the history)\n",
		    argv[1]);
out:
	cli_buf_free(&path);
	free(kept);
	cli_buf_free(&probe);
	cli_buf_free(&head);
	cJSON_Delete(rj);
	return rc;
}
