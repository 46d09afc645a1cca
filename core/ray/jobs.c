/*
 * A head's jobs and their state machine, as Ray's JobManager keeps them:
 * PENDING -> RUNNING -> SUCCEEDED | FAILED, or STOPPED when asked; a job
 * whose head dies FAILED. On the local node the entrypoint is a real
 * process (/bin/sh -c ENTRYPOINT, node_proc_start) in the head pod's
 * root directory, with RAY_ADDRESS, RAY_JOB_SUBMISSION_ID and the
 * runtime_env's env_vars, its output appended to the job's log; stop is
 * SIGTERM to its process group and SIGKILL 3 s later (Ray's
 * RAY_JOB_STOP_WAIT_TIME_S). On a virtual node a job is two timers on
 * the node runtimes' wheel: it starts at once and ends after its
 * metadata's volray.io/sim-duration with volray.io/sim-exit-code.
 * Messages and error types are Ray's. Every change is a record in the
 * head's journal (journal.c), read back after a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define STOP_GRACE_MS	3000
#define TAIL_CHARS	20000
#define SIM_START_MS	10
#define PLACE_RETRY_MS	1000

static const char *const status_names[] = {
	"PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"
};

const char *
ray_job_status_name(enum job_status s)
{
	return status_names[s];
}

int
ray_job_terminal(const struct ray_job *j)
{
	return j->status >= JOB_STOPPED;
}

/* Ray's default message for a status. */
static const char *
default_message(enum job_status s)
{
	switch (s) {
	case JOB_PENDING:
		return "Job has not started yet. It may be waiting for "
		    "resources (CPUs, GPUs, memory, custom resources) to become "
		    "available. It may be waiting for the runtime environment "
		    "to be set up.";
	case JOB_RUNNING:
		return "Job is currently running.";
	case JOB_STOPPED:
		return "Job was intentionally stopped.";
	case JOB_SUCCEEDED:
		return "Job finished successfully.";
	default:
		return "";
	}
}

/* A job as its head's journal keeps it: its details, request and
   simulation. */
static cJSON *
job_record(const struct ray_job *j)
{
	cJSON *t = ray_job_details(j);

	json_set(t, "request", cJSON_Duplicate(j->req, 1));
	if (j->sim_ms >= 0)
		json_set_num(t, "sim_ms", (double)j->sim_ms);
	json_set_num(t, "sim_exit", j->sim_exit);
	if (j->placed) {
		cJSON *where = cJSON_CreateArray();
		int b;

		for (b = 0; b < j->nbundles; b++)
			cJSON_AddItemToArray(where, cJSON_CreateString(
			    j->bundles[b].node ? j->bundles[b].node : ""));
		json_set(t, "placement", where);
		json_set_num(t, "placed_ms", (double)j->placed_ms);
	}
	return t;
}

cJSON *
ray_job_record(const struct ray_job *j)
{
	return job_record(j);
}

/*
 * Every change of a job is a record in its head's journal, and in its
 * GCS storage when the head is fault tolerant (gcsstore.c).
 */
static void
journal(struct ray_head *h, cJSON *rec)
{
	const char *id = json_str(rec, "submission_id");

	if (h->loading) {
		cJSON_Delete(rec);
		return;
	}
	if (h->gcs != NULL && id != NULL) {
		if (cJSON_IsTrue(json_at(rec, "deleted")))
			ray_gcs_del(h->gcs, id);
		else
			ray_gcs_put(h->gcs, id, rec);
	}
	ray_journal_append(h, rec, job_record);
}

static void on_place(wheel_timer *);

/*
 * An ended job goes to the history (history.c) with its cluster (the
 * head pod's label) and RayJob (the RayCluster's labels), not while the
 * journal is read.
 */
static void
keep(struct ray_job *j)
{
	struct ray_head *h = j->head;
	const store_obj *o;
	const cJSON *l, *cl, *crd, *cr;
	cJSON *d;
	char *logs;

	/* A fault-tolerant head's jobs go on with its next head. */
	if (h->r->history == NULL || h->loading || (h->dead && h->ft) ||
	    (o = client_get(h->r->c, "pods", h->ns, h->name)) == NULL)
		return;
	cl = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/cluster");
	if (!cJSON_IsString(cl))
		return;
	/* The RayJob a cluster was made for is on the RayCluster. */
	o = client_get(h->r->c, "rayclusters.ray.io", h->ns, cl->valuestring);
	l = o != NULL ? o->labels : NULL;
	crd = cJSON_GetObjectItemCaseSensitive(l, "ray.io/originated-from-crd");
	cr = cJSON_GetObjectItemCaseSensitive(l,
	    "ray.io/originated-from-cr-name");
	d = ray_job_details(j);
	logs = ray_job_logs(j);
	ray_history_add(h->r->history, h->ns, cl->valuestring,
	    cJSON_IsString(crd) && strcmp(crd->valuestring, "RayJob") == 0 &&
	    cJSON_IsString(cr) ? cr->valuestring : "", d, logs);
	cJSON_Delete(d);
	free(logs);
}

static void
set_status(struct ray_job *j, enum job_status s, const char *msg,
    const char *error_type)
{
	j->status = s;
	free(j->message);
	j->message = xstrdup(msg != NULL ? msg : default_message(s));
	free(j->error_type);
	j->error_type = error_type ? xstrdup(error_type) : NULL;
	if (s == JOB_RUNNING && j->driver_id == NULL)
		j->driver_id = util_printf("%02x000000",
		    ++j->head->next_driver & 0xff);
	if (s >= JOB_STOPPED) {
		j->end_ms = util_now_ms();
		keep(j);
		/* What waited may fit now: a pass soon, not from in here. */
		if (ray_demand_release(j))
			wheel_add(j->head->r->wheel, &j->head->place_timer, 0,
			    on_place, j->head);
	}
	journal(j->head, job_record(j));
}

char *
ray_job_logs(const struct ray_job *j)
{
	FILE *f;
	char *buf;
	long n;

	/* A simulated job's log is its story, kept in no file. */
	if (j->simulated) {
		if (j->driver_id == NULL)
			return xstrdup("");
		if (!j->has_exit || j->stopping)
			return util_printf("volray: simulating entrypoint: %s\n",
			    j->entrypoint);
		return util_printf("volray: simulating entrypoint: %s\n"
		    "volray: simulated entrypoint ended with exit code %d\n",
		    j->entrypoint, j->exit_code);
	}
	f = fopen(j->log_path, "r");
	if (f == NULL)
		return xstrdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL) {
		fclose(f);
		return xstrdup("");
	}
	n = (long)fread(buf, 1, (size_t)n, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Ray's message for a failed entrypoint, with the log's last 20,000 chars. */
static void
fail_exit(struct ray_job *j, int code)
{
	char *logs = ray_job_logs(j), *msg;
	size_t n = strlen(logs);
	const char *tail = n > TAIL_CHARS ? logs + n - TAIL_CHARS : logs;

	if (*tail != '\0')
		msg = util_printf("Job entrypoint command failed with exit code "
		    "%d, last available logs (truncated to 20,000 chars):\n%s",
		    code, tail);
	else
		msg = util_printf("Job entrypoint command failed with exit code "
		    "%d. No logs available.", code);
	set_status(j, JOB_FAILED, msg, "JOB_ENTRYPOINT_COMMAND_ERROR");
	free(msg);
	free(logs);
}

static void
finish(struct ray_job *j, int code)
{
	j->exit_code = code;
	j->has_exit = 1;
	if (j->stopping)
		set_status(j, JOB_STOPPED, NULL, NULL);
	else if (code == 0)
		set_status(j, JOB_SUCCEEDED, NULL, NULL);
	else
		fail_exit(j, code);
	log_info("ray: %s/%s: job %s %s (exit code %d)", j->head->ns,
	    j->head->name, j->id, ray_job_status_name(j->status), code);
}

static void
on_proc_done(void *arg, int code)
{
	struct ray_job *j = arg;

	j->proc = NULL;
	if (j->head == NULL) {
		/* The head went away while it ran: nothing to record. */
		free(j);
		return;
	}
	if (ray_job_terminal(j))
		return;
	finish(j, code);
}

static void
on_sim_end(wheel_timer *t)
{
	struct ray_job *j = t->data;

	finish(j, j->sim_exit);
}

/* A simulated job runs: its duration counts from now. */
static void
job_placed(struct ray_job *j)
{
	j->placed_ms = util_now_ms();
	journal(j->head, job_record(j));
	if (j->sim_ms >= 0)
		wheel_add(j->head->r->wheel, &j->timer, (uint64_t)j->sim_ms,
		    on_sim_end, j);
}

/* Place what waits (demand.c); try again in a second while some waits. */
static void
place(struct ray_head *h)
{
	struct ray_job **placed;
	size_t n, i;
	int waiting = ray_demand_place(h, &placed, &n);

	for (i = 0; i < n; i++)
		job_placed(placed[i]);
	free(placed);
	if (waiting)
		wheel_add(h->r->wheel, &h->place_timer, PLACE_RETRY_MS,
		    on_place, h);
}

static void
on_place(wheel_timer *t)
{
	place(t->data);
}

/* Running: its duration counts once its bundles have a place (demand.c). */
static void
on_sim_start(wheel_timer *t)
{
	struct ray_job *j = t->data;

	set_status(j, JOB_RUNNING, NULL, NULL);
	if (j->nbundles > 0)
		place(j->head);
	else
		job_placed(j);
}

/* The environment a local entrypoint gets on top of the head's. */
static char **
job_env(struct ray_job *j)
{
	const cJSON *vars = json_at(j->req, "runtime_env.env_vars"), *it;
	int n = cJSON_GetArraySize(vars), k = 0;
	char **env = xcalloc((size_t)n + 5, sizeof *env);

	env[k++] = util_printf("RAY_ADDRESS=http://127.0.0.1:%d",
	    j->head->port);
	env[k++] = util_printf("RAY_JOB_SUBMISSION_ID=%s", j->id);
	env[k++] = util_printf("RAY_JOB_ID=%s", j->driver_id ? j->driver_id :
	    "");
	cJSON_ArrayForEach(it, vars)
		if (cJSON_IsString(it) && k < n + 4)
			env[k++] = util_printf("%s=%s", it->string,
			    it->valuestring);
	env[k] = NULL;
	return env;
}

/* Start the entrypoint as a process on the local node. */
static void
start_local(struct ray_job *j)
{
	char *argv[] = { "/bin/sh", "-c", j->entrypoint, NULL };
	const char *wd = json_str(j->req, "runtime_env.working_dir");
	char **env, *cause = NULL, *cwd = NULL, *msg;
	struct stat sb;
	int i;

	if (wd != NULL && strncmp(wd, "gcs://", 6) == 0) {
		/* An uploaded working_dir (packages.c). */
		char *why = NULL;

		if ((cwd = ray_package_dir(j->head, wd + 6, &why)) == NULL) {
			msg = util_printf("RuntimeEnvSetupError: Failed to set "
			    "up runtime environment: %s", why);
			set_status(j, JOB_FAILED, msg,
			    "RUNTIME_ENV_SETUP_FAILED");
			free(msg);
			free(why);
			return;
		}
	}
	set_status(j, JOB_RUNNING, NULL, NULL);
	env = job_env(j);
	/* A local working_dir (an uploaded one is cwd already): everything
	   is on this machine. */
	if (cwd == NULL && wd != NULL && wd[0] == '/' && stat(wd, &sb) == 0 &&
	    S_ISDIR(sb.st_mode))
		cwd = xstrdup(wd);
	else if (cwd == NULL && wd != NULL && wd[0] != '/' &&
	    strstr(wd, "://") == NULL && strstr(wd, "..") == NULL)
		cwd = util_printf("%s/root/%s", j->head->dir, wd);
	{
		char *id = util_printf("job-%s", j->id);

		j->proc = node_proc_start(j->head->r->nodes, j->head->ns,
		    j->head->name, NULL, id, argv, env, cwd, j->log_path,
		    on_proc_done, j, &cause);
		free(id);
	}
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
	free(cwd);
	if (j->proc == NULL) {
		msg = util_printf("Job entrypoint command failed to start: %s",
		    cause ? cause : "unknown error");
		set_status(j, JOB_FAILED, msg,
		    "JOB_ENTRYPOINT_COMMAND_START_ERROR");
		free(msg);
	}
	free(cause);
}

/* The simulation's settings, from the job's metadata. */
static void
sim_settings(struct ray_job *j)
{
	const cJSON *md = json_at(j->req, "metadata");
	const cJSON *dv = cJSON_GetObjectItemCaseSensitive(md,
	    "volray.io/sim-duration");
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(md,
	    "volray.io/sim-exit-code");

	j->sim_ms = cJSON_IsString(dv) ? util_duration_ms(dv->valuestring) : -1;
	j->sim_exit = cJSON_IsString(ev) ? atoi(ev->valuestring) : 0;
}

static void
start(struct ray_job *j)
{
	if (j->head->runtime != NULL && strcmp(j->head->runtime, "local") ==
	    0) {
		start_local(j);
		return;
	}
	j->simulated = 1;
	{
		/* An uploaded working_dir must be there, as Ray's runtime
		   env setup needs it. */
		const char *wd = json_str(j->req, "runtime_env.working_dir");

		if (wd != NULL && strncmp(wd, "gcs://", 6) == 0 &&
		    !ray_package_has(j->head, wd + 6)) {
			char *msg = util_printf("RuntimeEnvSetupError: Failed "
			    "to set up runtime environment: the package %s is "
			    "not on the head (was it uploaded?)", wd);

			set_status(j, JOB_FAILED, msg,
			    "RUNTIME_ENV_SETUP_FAILED");
			free(msg);
			return;
		}
	}
	wheel_add(j->head->r->wheel, &j->timer, SIM_START_MS, on_sim_start, j);
}

static struct ray_job *
job_new(struct ray_head *h, const char *id)
{
	struct ray_job *j = xcalloc(1, sizeof *j);

	j->head = h;
	j->id = xstrdup(id);
	j->log_path = util_printf("%s/job-driver-%s.log", h->dir, id);
	j->sim_ms = -1;
	XGROW(h->order, h->cap, (size_t)h->njobs + 1);
	h->order[h->njobs++] = j;
	hmap_put(h->jobs, j->id, j);
	return j;
}

struct ray_job *
ray_job_find(struct ray_head *h, const char *id)
{
	return hmap_get(h->jobs, id);
}

/* "raysubmit_" and 16 letters and digits, as Ray names submissions. */
static char *
new_submission_id(void)
{
	char s[17];

	util_random_suffix(s, 16);
	return util_printf("raysubmit_%s", s);
}

/* The type checks of Ray's JobSubmitRequest: NULL, or the error text. */
static char *
check_request(const cJSON *b)
{
	static const char *const known[] = { "entrypoint", "submission_id",
	    "job_id", "runtime_env", "metadata", "entrypoint_num_cpus",
	    "entrypoint_num_gpus", "entrypoint_memory",
	    "entrypoint_resources", "entrypoint_label_selector", NULL };
	const cJSON *it, *v;
	int i;

	if (!cJSON_IsObject(b))
		return xstrdup("TypeError: the request body must be a JSON "
		    "object");
	{
		/* volray.io/sim-bundles, when given, must parse. */
		struct ray_job probe;
		char *why = NULL;

		memset(&probe, 0, sizeof probe);
		probe.req = (cJSON *)b;
		i = ray_demand_parse(&probe, &why);
		ray_demand_free(&probe);
		if (i != 0)
			return why;
	}
	cJSON_ArrayForEach(it, b) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(it->string, known[i]) == 0)
				break;
		if (known[i] == NULL)
			return util_printf("TypeError: JobSubmitRequest."
			    "__init__() got an unexpected keyword argument "
			    "'%s'", it->string);
	}
	v = cJSON_GetObjectItemCaseSensitive(b, "entrypoint");
	if (v == NULL)
		return xstrdup("TypeError: JobSubmitRequest.__init__() missing 1 "
		    "required positional argument: 'entrypoint'");
	if (!cJSON_IsString(v))
		return xstrdup("TypeError: entrypoint must be a string");
	if (*v->valuestring == '\0')
		return xstrdup("ValueError: entrypoint must be a non-empty "
		    "string");
	for (i = 1; i <= 2; i++) {
		v = cJSON_GetObjectItemCaseSensitive(b, known[i]);
		if (v != NULL && !cJSON_IsNull(v) && !cJSON_IsString(v))
			return util_printf("TypeError: %s must be a string",
			    known[i]);
	}
	v = cJSON_GetObjectItemCaseSensitive(b, "runtime_env");
	if (v != NULL && !cJSON_IsNull(v) && !cJSON_IsObject(v))
		return xstrdup("TypeError: runtime_env must be a dict");
	cJSON_ArrayForEach(it, json_at(v, "env_vars"))
		if (!cJSON_IsString(it))
			return util_printf("TypeError: runtime_env['env_vars'] "
			    "must be of type Dict[str, str], got a non-string "
			    "value for %s", it->string);
	v = cJSON_GetObjectItemCaseSensitive(b, "metadata");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v))
			return xstrdup("TypeError: metadata must be a dict");
		cJSON_ArrayForEach(it, v)
			if (!cJSON_IsString(it))
				return util_printf("TypeError: metadata values "
				    "must be strings, got %s for key %s",
				    cJSON_IsNumber(it) ? "a number" : "a non-string",
				    it->string);
	}
	for (i = 5; i <= 7; i++) {
		v = cJSON_GetObjectItemCaseSensitive(b, known[i]);
		if (v != NULL && !cJSON_IsNull(v) && (!cJSON_IsNumber(v) ||
		    v->valuedouble < 0))
			return util_printf("TypeError: %s must be a "
			    "non-negative number", known[i]);
	}
	v = cJSON_GetObjectItemCaseSensitive(b, "entrypoint_resources");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v))
			return xstrdup("TypeError: entrypoint_resources must be "
			    "a dict");
		cJSON_ArrayForEach(it, v)
			if (!cJSON_IsNumber(it))
				return util_printf("TypeError: entrypoint_"
				    "resources values must be numbers, got a "
				    "non-number for %s", it->string);
	}
	return NULL;
}

int
ray_job_submit(struct ray_head *h, const cJSON *b, struct ray_job **out,
    char **text)
{
	const char *sid;
	char *err, *id;
	struct ray_job *j;

	*out = NULL;
	if ((err = check_request(b)) != NULL) {
		*text = err;
		return 400;
	}
	sid = json_str(b, "submission_id");
	if (sid == NULL)
		sid = json_str(b, "job_id");
	id = sid != NULL ? xstrdup(sid) : new_submission_id();
	if (ray_job_find(h, id) != NULL) {
		*text = util_printf("ValueError: Job with submission_id %s "
		    "already exists. Please use a different submission_id.", id);
		free(id);
		return 400;
	}
	j = job_new(h, id);
	free(id);
	j->entrypoint = xstrdup(json_str(b, "entrypoint"));
	j->req = cJSON_Duplicate(b, 1);
	json_del(j->req, "entrypoint");
	json_del(j->req, "submission_id");
	json_del(j->req, "job_id");
	j->start_ms = util_now_ms();
	sim_settings(j);
	if (h->runtime == NULL || strcmp(h->runtime, "local") != 0) {
		char *why = NULL;

		(void)ray_demand_parse(j, &why);	/* checked above */
		free(why);
	}
	set_status(j, JOB_PENDING, NULL, NULL);
	log_info("ray: %s/%s: job %s submitted: %s", h->ns, h->name, j->id,
	    j->entrypoint);
	start(j);
	*out = j;
	return 0;
}

int
ray_job_stop(struct ray_job *j)
{
	if (ray_job_terminal(j))
		return 0;
	if (j->proc != NULL) {
		if (!j->stopping) {
			j->stopping = 1;
			node_proc_stop(j->proc, STOP_GRACE_MS);
		}
		return 1;
	}
	wheel_cancel(j->head->r->wheel, &j->timer);
	set_status(j, JOB_STOPPED, NULL, NULL);
	return 1;
}

static void
job_free(struct ray_job *j)
{
	wheel_cancel(j->head->r->wheel, &j->timer);
	ray_demand_free(j);
	free(j->id);
	free(j->driver_id);
	free(j->entrypoint);
	cJSON_Delete(j->req);
	free(j->message);
	free(j->error_type);
	free(j->log_path);
	if (j->proc != NULL) {
		/* Killed; its end callback frees what is left. */
		j->head = NULL;
		node_proc_stop(j->proc, 0);
		return;
	}
	free(j);
}

int
ray_job_delete(struct ray_job *j, char **text)
{
	struct ray_head *h = j->head;
	int i;

	if (!ray_job_terminal(j)) {
		*text = util_printf("RuntimeError: Attempted to delete job with "
		    "id '%s', but it is in a non-terminal state %s.", j->id,
		    ray_job_status_name(j->status));
		return -1;
	}
	unlink(j->log_path);
	hmap_del(h->jobs, j->id);
	for (i = 0; i < h->njobs; i++)
		if (h->order[i] == j) {
			memmove(h->order + i, h->order + i + 1,
			    (size_t)(h->njobs - i - 1) * sizeof *h->order);
			h->njobs--;
			break;
		}
	{
		cJSON *t = cJSON_CreateObject();

		json_set_str(t, "submission_id", j->id);
		json_set(t, "deleted", cJSON_CreateTrue());
		journal(h, t);
	}
	job_free(j);
	return 0;
}

static void
set_num(cJSON *t, const char *k, const cJSON *v)
{
	json_set(t, k, v != NULL ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
}

cJSON *
ray_job_details(const struct ray_job *j)
{
	cJSON *t = cJSON_CreateObject(), *di;
	const cJSON *md = json_at(j->req, "metadata");
	const cJSON *re = json_at(j->req, "runtime_env");

	json_set_str(t, "type", "SUBMISSION");
	json_set(t, "job_id", j->driver_id ? cJSON_CreateString(j->driver_id) :
	    cJSON_CreateNull());
	json_set_str(t, "submission_id", j->id);
	if (j->driver_id != NULL) {
		di = cJSON_CreateObject();
		json_set_str(di, "id", j->driver_id);
		json_set_str(di, "node_ip_address", "127.0.0.1");
		json_set_str(di, "pid", "0");
		json_set(t, "driver_info", di);
	} else
		json_set(t, "driver_info", cJSON_CreateNull());
	json_set_str(t, "status", ray_job_status_name(j->status));
	json_set_str(t, "entrypoint", j->entrypoint);
	json_set_str(t, "message", j->message ? j->message : "");
	json_set(t, "error_type", j->error_type ?
	    cJSON_CreateString(j->error_type) : cJSON_CreateNull());
	json_set_num(t, "start_time", (double)j->start_ms);
	json_set(t, "end_time", j->end_ms ? cJSON_CreateNumber((double)
	    j->end_ms) : cJSON_CreateNull());
	json_set(t, "metadata", md ? cJSON_Duplicate(md, 1) :
	    cJSON_CreateObject());
	json_set(t, "runtime_env", re ? cJSON_Duplicate(re, 1) :
	    cJSON_CreateObject());
	json_set(t, "driver_agent_http_address", cJSON_CreateNull());
	json_set(t, "driver_node_id", cJSON_CreateNull());
	json_set(t, "driver_exit_code", j->has_exit ?
	    cJSON_CreateNumber(j->exit_code) : cJSON_CreateNull());
	set_num(t, "entrypoint_num_cpus", json_at(j->req,
	    "entrypoint_num_cpus"));
	set_num(t, "entrypoint_num_gpus", json_at(j->req,
	    "entrypoint_num_gpus"));
	set_num(t, "entrypoint_memory", json_at(j->req, "entrypoint_memory"));
	set_num(t, "entrypoint_resources", json_at(j->req,
	    "entrypoint_resources"));
	return t;
}

void
ray_jobs_fail_all(struct ray_head *h, const char *why)
{
	int i;

	for (i = 0; i < h->njobs; i++) {
		struct ray_job *j = h->order[i];

		if (ray_job_terminal(j))
			continue;
		wheel_cancel(h->r->wheel, &j->timer);
		if (j->proc != NULL) {
			/* Its end must not turn FAILED into anything else. */
			j->stopping = 1;
			node_proc_stop(j->proc, 0);
		}
		set_status(j, JOB_FAILED, why, "JOB_SUPERVISOR_ACTOR_DIED");
		log_info("ray: %s/%s: job %s FAILED: %s", h->ns, h->name, j->id,
		    why);
	}
}

void
ray_jobs_free(struct ray_head *h)
{
	int i;

	wheel_cancel(h->r->wheel, &h->place_timer);
	for (i = 0; i < h->njobs; i++) {
		hmap_del(h->jobs, h->order[i]->id);
		job_free(h->order[i]);
	}
	free(h->order);
	h->order = NULL;
	h->njobs = 0;
	h->cap = 0;
}

/* A job as a record kept it (journal or GCS); NULL when bad or known. */
static struct ray_job *
from_record(struct ray_head *h, const cJSON *t)
{
	const char *id = json_str(t, "submission_id");
	const char *st = json_str(t, "status");
	const cJSON *v;
	struct ray_job *j;
	int i;

	if (id == NULL || st == NULL || json_str(t, "entrypoint") == NULL ||
	    ray_job_find(h, id) != NULL)
		return NULL;
	j = job_new(h, id);
	j->entrypoint = xstrdup(json_str(t, "entrypoint"));
	j->req = cJSON_Duplicate(json_at(t, "request"), 1);
	if (j->req == NULL)
		j->req = cJSON_CreateObject();
	for (i = 0; i < 5; i++)
		if (strcmp(st, status_names[i]) == 0)
			j->status = (enum job_status)i;
	j->message = xstrdup(json_str(t, "message") ? json_str(t,
	    "message") : "");
	if (json_str(t, "error_type") != NULL)
		j->error_type = xstrdup(json_str(t, "error_type"));
	if (json_str(t, "job_id") != NULL)
		j->driver_id = xstrdup(json_str(t, "job_id"));
	if ((v = json_at(t, "start_time")) && cJSON_IsNumber(v))
		j->start_ms = (uint64_t)v->valuedouble;
	if ((v = json_at(t, "end_time")) && cJSON_IsNumber(v))
		j->end_ms = (uint64_t)v->valuedouble;
	if ((v = json_at(t, "driver_exit_code")) && cJSON_IsNumber(v)) {
		j->exit_code = v->valueint;
		j->has_exit = 1;
	}
	if ((v = json_at(t, "sim_ms")) && cJSON_IsNumber(v))
		j->sim_ms = (int64_t)v->valuedouble;
	if ((v = json_at(t, "sim_exit")) && cJSON_IsNumber(v))
		j->sim_exit = v->valueint;
	if ((v = json_at(t, "placed_ms")) && cJSON_IsNumber(v))
		j->placed_ms = (uint64_t)v->valuedouble;
	if (j->driver_id != NULL) {
		unsigned n = (unsigned)(strtoul(j->driver_id, NULL, 16) >> 24);

		if (n > h->next_driver)
			h->next_driver = n;
	}
	j->simulated = h->runtime == NULL || strcmp(h->runtime,
	    "local") != 0;
	if (!ray_job_terminal(j) && j->simulated) {
		char *why = NULL;

		(void)ray_demand_parse(j, &why);
		free(why);
	}
	return j;
}

/* Its simulated duration runs on from when it was placed. */
static void
run_on(struct ray_job *j)
{
	uint64_t end = j->placed_ms + (uint64_t)j->sim_ms, now = util_now_ms();

	if (j->sim_ms >= 0)
		wheel_add(j->head->r->wheel, &j->timer, end > now ? end - now :
		    0, on_sim_end, j);
}

/*
 * Jobs from the head's journal after a restart of volrayd. A local
 * entrypoint that was running was killed with the daemon (its process
 * group is reaped at start), so the job FAILED as Ray's do when their
 * supervisor dies; a simulated one goes on, ending when it would have.
 */
static void
load(struct ray_head *h, const cJSON *saved)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, saved) {
		struct ray_job *j = from_record(h, t);

		if (j == NULL || ray_job_terminal(j))
			continue;
		if (!j->simulated) {
			set_status(j, JOB_FAILED, "Job supervisor actor died: "
			    "volrayd restarted and its entrypoint process was "
			    "killed.", "JOB_SUPERVISOR_ACTOR_DIED");
			continue;
		}
		if (j->status == JOB_PENDING) {
			wheel_add(h->r->wheel, &j->timer, SIM_START_MS,
			    on_sim_start, j);
		} else if (j->nbundles > 0) {
			/* Where its bundles were is not kept: placed again,
			   its work starts over. */
			wheel_add(h->r->wheel, &j->timer, SIM_START_MS,
			    on_sim_start, j);
		} else if (j->sim_ms >= 0) {
			j->placed_ms = j->start_ms;
			run_on(j);
		}
	}
}

/* Is pod name a Running, undeleted worker of h's cluster? */
static int
worker_alive(struct ray_head *h, const char *name)
{
	const store_obj *o = name != NULL ? client_get(h->r->c, "pods", h->ns,
	    name) : NULL;
	const cJSON *t, *c;

	if (o == NULL || o->deleting || strcmp(o->phase, "Running") != 0)
		return 0;
	t = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/node-type");
	c = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/cluster");
	return cJSON_IsString(t) && strcmp(t->valuestring, "worker") == 0 &&
	    cJSON_IsString(c) && h->cluster != NULL &&
	    strcmp(c->valuestring, h->cluster) == 0;
}

/*
 * A new head recovers its cluster's jobs from GCS storage (gcsstore.c),
 * as Ray's job manager does after a GCS restart: a job whose supervisor
 * (its driver) ran on a worker that is still there goes on where it was,
 * ending when it would have; one whose supervisor was on the old head
 * (a local entrypoint process, or a job without entrypoint resources)
 * died with it: FAILED, "failed to get job supervisor". A bundle whose
 * worker went is placed again.
 */
void
ray_jobs_recover(struct ray_head *h, const cJSON *saved)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, saved) {
		struct ray_job *j = from_record(h, t);
		const cJSON *where = json_at(t, "placement");
		int b, lost = 0;

		if (j == NULL || ray_job_terminal(j))
			continue;
		if (j->status == JOB_PENDING && j->simulated) {
			wheel_add(h->r->wheel, &j->timer, SIM_START_MS,
			    on_sim_start, j);
			continue;
		}
		if (!j->simulated || j->status == JOB_PENDING ||
		    !j->driver_bundle ||
		    cJSON_GetArraySize(where) != j->nbundles ||
		    !worker_alive(h, cJSON_GetArrayItem(where, 0)->valuestring)) {
			set_status(j, JOB_FAILED, "Unexpected error occurred: "
			    "failed to get job supervisor.",
			    "JOB_SUPERVISOR_ACTOR_START_FAILURE");
			continue;
		}
		for (b = 0; b < j->nbundles; b++) {
			const char *n = cJSON_GetArrayItem(where, b)->valuestring;

			if (n != NULL && worker_alive(h, n))
				j->bundles[b].node = xstrdup(n);
			else
				lost = 1;
		}
		if (!lost) {
			j->placed = 1;
			run_on(j);
			continue;
		}
		/* Its tasks start again where they fit. */
		(void)ray_demand_release(j);
		place(h);
	}
}

void
ray_jobs_load(struct ray_head *h)
{
	cJSON *saved = ray_journal_read(h);

	if (saved != NULL) {
		h->loading = 1;
		load(h, saved);
		h->loading = 0;
		cJSON_Delete(saved);
	}
	ray_journal_rewrite(h, job_record);
}
