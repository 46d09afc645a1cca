/*
 * volray job: vcctl's verbs for Volcano Jobs (batch.volcano.sh/v1alpha1).
 * run makes a job from flags (one task of --replicas pods of --image) or
 * from -f FILE; list prints vcctl's columns; view describes one; delete
 * deletes one; suspend and resume create the Command (bus.volcano.sh)
 * AbortJob or ResumeJob that the job controller acts on and deletes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define JOBS_GV		"/apis/batch.volcano.sh/v1alpha1"
#define COMMANDS_GV	"/apis/bus.volcano.sh/v1alpha1"

static int
usage(const char *why)
{
	return cli_opt_usage("job", "%s\nusage: volray job run --name NAME "
	    "[--image I] [--replicas N] [--min N]\n"
	    "         [--requests K=V,...] [--limits K=V,...] [--queue Q] "
	    "[--scheduler S] | run -f FILE\n"
	    "       | list [-A] | view NAME | delete NAME | suspend NAME | "
	    "resume NAME", why);
}

static const char *
ns(void)
{
	const char *n = cli_opts.ns != NULL ? cli_opts.ns : cli_http_namespace();

	return n != NULL ? n : "default";
}


static int
request(const char *method, const char *path, const cJSON *doc,
    cJSON **out)
{
	struct cli_http_resp r;
	char *body = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;

	cli_http_request(method, path, body != NULL ? "application/json" :
	    NULL, body, NULL, &r);
	free(body);
	if (r.code >= 300) {
		cli_http_report(&r);
		cli_buf_free(&r.body);
		return CLI_FAIL;
	}
	if (out != NULL)
		*out = cJSON_Parse(r.body.p != NULL ? r.body.p : "{}");
	cli_buf_free(&r.body);
	return CLI_OK;
}

/* run: a one-task job from the flags, as vcctl job run makes it. */
static int
job_run(void)
{
	const struct cli_job_opts *o = &cli_opts.job;
	cJSON *d, *spec, *task, *c, *res;
	struct cli_buf path = { 0 };
	char **argv;
	int rc;

	if (cli_opts.nfiles > 0) {
		argv = NULL;
		return cli_apply_create(0, argv);	/* -f FILE */
	}
	if (o->name == NULL)
		return usage("job run needs --name (or -f FILE)");
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "apiVersion", "batch.volcano.sh/v1alpha1");
	cJSON_AddStringToObject(d, "kind", "Job");
	json_set_str(json_obj(d, "metadata"), "name", o->name);
	json_set_str(json_obj(d, "metadata"), "namespace", ns());
	spec = json_obj(d, "spec");
	cJSON_AddNumberToObject(spec, "minAvailable", o->min > 0 ?
	    (double)o->min : 1);
	json_set_str(spec, "schedulerName", o->scheduler ? o->scheduler :
	    "volcano");
	json_set_str(spec, "queue", o->queue ? o->queue : "default");
	task = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "tasks"), task);
	cJSON_AddStringToObject(task, "name", o->name);
	cJSON_AddNumberToObject(task, "replicas", o->replicas > 0 ?
	    (double)o->replicas : 1);
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "name", o->name);
	cJSON_AddStringToObject(c, "image", o->image ? o->image : "busybox");
	cJSON_AddStringToObject(c, "imagePullPolicy", "IfNotPresent");
	res = json_obj(c, "resources");
	if (cli_res_list(o->requests ? o->requests : "cpu=1000m,memory=100Mi",
	    json_obj(res, "requests")) != 0 || (o->limits != NULL &&
	    cli_res_list(o->limits, json_obj(res, "limits")) != 0)) {
		cJSON_Delete(d);
		cJSON_Delete(c);
		return usage("--requests and --limits want K=V,... such as "
		    "cpu=1,memory=1Gi");
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(json_obj(json_obj(task,
	    "template"), "spec"), "containers"), c);
	json_set_str(json_obj(json_obj(task, "template"), "spec"),
	    "restartPolicy", "OnFailure");
	cli_buf_printf(&path, "%s/namespaces/%s/jobs", JOBS_GV, ns());
	rc = request("POST", path.p, d, NULL);
	if (rc == CLI_OK)
		printf("run job %s successfully\n", o->name);
	cli_buf_free(&path);
	cJSON_Delete(d);
	return rc;
}

static char *
count(const cJSON *j, const char *field)
{
	const cJSON *n = json_at(j, field);
	struct cli_buf b = { 0 };

	cli_buf_printf(&b, "%.0f", cJSON_IsNumber(n) ? n->valuedouble : 0);
	return b.p;
}

/* list: vcctl's columns. */
static int
job_list(void)
{
	static const char *const head[] = { "Name", "Creation", "Phase",
	    "JobType", "Replicas", "Min", "Pending", "Running", "Succeeded",
	    "Failed", "Unknown", "RetryCount" };
	struct cli_table t = { 0 };
	struct cli_buf path = { 0 };
	const cJSON *j, *task;
	cJSON *list;
	char *cells[13];
	int i, all = cli_opts.all_ns, off = all ? 1 : 0;

	if (all)
		cli_buf_printf(&path, "%s/jobs", JOBS_GV);
	else
		cli_buf_printf(&path, "%s/namespaces/%s/jobs", JOBS_GV, ns());
	list = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	if (list == NULL)
		return CLI_FAIL;
	if (cJSON_GetArraySize(json_at(list, "items")) == 0) {
		printf("No resources found\n");
		cJSON_Delete(list);
		return CLI_OK;
	}
	t.ncol = 12 + off;
	if (all)
		cells[0] = xstrdup("Namespace");
	for (i = 0; i < 12; i++)
		cells[i + off] = xstrdup(head[i]);
	cli_table_add(&t, cells);
	cJSON_ArrayForEach(j, json_at(list, "items")) {
		const char *created = json_str(j, "metadata.creationTimestamp");
		const cJSON *tl = cJSON_GetObjectItemCaseSensitive(json_at(j,
		    "metadata.labels"), "volcano.sh/job-type");
		const char *type = cJSON_IsString(tl) ? tl->valuestring : NULL;
		double replicas = 0;
		char day[11];

		cJSON_ArrayForEach(task, json_at(j, "spec.tasks")) {
			const cJSON *r = json_at(task, "replicas");

			replicas += cJSON_IsNumber(r) ? r->valuedouble : 0;
		}
		snprintf(day, sizeof day, "%s", created ? created : "");
		if (all)
			cells[0] = xstrdup(json_str(j, "metadata.namespace"));
		cells[off + 0] = xstrdup(json_str(j, "metadata.name"));
		cells[off + 1] = xstrdup(day);
		cells[off + 2] = xstrdup(json_str(j, "status.state.phase") ?
		    json_str(j, "status.state.phase") : "");
		cells[off + 3] = xstrdup(type ? type : "Batch");
		cells[off + 4] = util_printf("%.0f", replicas);
		cells[off + 5] = count(j, "status.minAvailable");
		cells[off + 6] = count(j, "status.pending");
		cells[off + 7] = count(j, "status.running");
		cells[off + 8] = count(j, "status.succeeded");
		cells[off + 9] = count(j, "status.failed");
		cells[off + 10] = count(j, "status.unknown");
		cells[off + 11] = count(j, "status.retryCount");
		cli_table_add(&t, cells);
	}
	cli_table_flush(&t);
	cJSON_Delete(list);
	return CLI_OK;
}

static int
job_delete(const char *name)
{
	struct cli_buf path = { 0 };
	int rc;

	cli_buf_printf(&path, "%s/namespaces/%s/jobs/%s", JOBS_GV, ns(), name);
	rc = request("DELETE", path.p, NULL, NULL);
	cli_buf_free(&path);
	if (rc == CLI_OK)
		printf("delete job %s successfully\n", name);
	return rc;
}

/* suspend / resume: a Command owned by the job, for its controller. */
static int
job_command(const char *name, const char *action)
{
	struct cli_buf path = { 0 };
	cJSON *job = NULL, *d, *ref, *refs, *md;
	char *lower, *p;
	int rc;

	cli_buf_printf(&path, "%s/namespaces/%s/jobs/%s", JOBS_GV, ns(), name);
	rc = request("GET", path.p, NULL, &job);
	cli_buf_free(&path);
	if (rc != CLI_OK)
		return rc;
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "apiVersion", "bus.volcano.sh/v1alpha1");
	cJSON_AddStringToObject(d, "kind", "Command");
	md = json_obj(d, "metadata");
	lower = util_printf("%s-%s-", name, action);
	for (p = lower; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	json_set_str(md, "generateName", lower);
	free(lower);
	json_set_str(md, "namespace", ns());
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "batch.volcano.sh/v1alpha1");
	cJSON_AddStringToObject(ref, "kind", "Job");
	cJSON_AddStringToObject(ref, "name", name);
	cJSON_AddStringToObject(ref, "uid", json_str(job, "metadata.uid") ?
	    json_str(job, "metadata.uid") : "");
	cJSON_AddTrueToObject(ref, "controller");
	cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
	refs = cJSON_AddArrayToObject(md, "ownerReferences");
	cJSON_AddItemToArray(refs, cJSON_Duplicate(ref, 1));
	cJSON_AddItemToObject(d, "target", ref);
	cJSON_AddStringToObject(d, "action", action);
	cli_buf_printf(&path, "%s/namespaces/%s/commands", COMMANDS_GV, ns());
	rc = request("POST", path.p, d, NULL);
	cli_buf_free(&path);
	cJSON_Delete(d);
	cJSON_Delete(job);
	if (rc == CLI_OK)
		printf("%s job %s successfully\n", strcmp(action, "AbortJob") ==
		    0 ? "suspend" : "resume", name);
	return rc;
}

int
cli_job_run(int argc, char **argv)
{
	char *dargv[2];

	if (argc == 0)
		return usage("job needs a subcommand");
	if (strcmp(argv[0], "run") == 0 && argc == 1)
		return job_run();
	if (strcmp(argv[0], "list") == 0 && argc == 1)
		return job_list();
	if (argc != 2)
		return usage("a job name, and only one, is needed");
	if (strcmp(argv[0], "view") == 0) {
		dargv[0] = "vcjob";
		dargv[1] = argv[1];
		return cli_describe_run(2, dargv);
	}
	if (strcmp(argv[0], "delete") == 0)
		return job_delete(argv[1]);
	if (strcmp(argv[0], "suspend") == 0)
		return job_command(argv[1], "AbortJob");
	if (strcmp(argv[0], "resume") == 0)
		return job_command(argv[1], "ResumeJob");
	return usage("unknown job subcommand");
}
