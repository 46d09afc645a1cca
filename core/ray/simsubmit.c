/*
 * KubeRay's submitter on a simulated node (ray.h, ray_sim_submit): what
 * its `ray job status || ray job submit --no-wait ...; ray job logs
 * --follow` does, without a process. The address (its command line's
 * --address, else the container's RAY_DASHBOARD_ADDRESS: simeffect.c)
 * names the head (a Service's host name, SVC.NS.svc.cluster.local:PORT,
 * whose selector picks the head pod; or 127.0.0.1:PORT, the pod itself,
 * for SidecarMode), RAY_JOB_SUBMISSION_ID the job. The job is submitted
 * to that head unless it has it already (a rerun of the pod never submits
 * twice), with the entrypoint, runtime env, metadata and entrypoint
 * resources of the RayJob whose status.jobId is that id, as the
 * submitter's command line carries them (the job is simulated: it runs
 * for the metadata's volray.io/sim-duration, else the RayJob's annotation
 * of that name, else 1 s, and exits with volray.io/sim-exit-code found
 * the same way, else 0); then it is followed every 200 ms
 * until it ends, and the container exits 0, as `ray job logs --follow`
 * does whatever the job's outcome. A head not found or not running within
 * 30 s, or no such RayJob, exits 1, as the command's connection error
 * does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "ray/ray_int.h"

#define TICK_MS		200
#define GIVE_UP_TICKS	150	/* 30 s */

struct simsub {
	ray *r;
	uv_timer_t tick;
	char ns[254], pod[254], id[128];
	char host[512];
	int submitted;
	int following;			/* saw the job: `ray job logs --follow` */
	char head_uid[64];		/* of the head it follows */
	int ticks;
	void (*done)(void *, int);
	void *arg;
	int over;
};

static void
on_closed(uv_handle_t *h)
{
	free(h->data);
}

static void
finish(struct simsub *s, int code)
{
	if (s->over)
		return;
	s->over = 1;
	uv_timer_stop(&s->tick);
	s->done(s->arg, code);
}

struct match {
	const cJSON *selector;
	const char *ns;
	ray *r;
	struct ray_head *found;
};

static int
match_head(const char *key, void *value, void *arg)
{
	struct ray_head *h = value;
	struct match *m = arg;
	const store_obj *o;
	const cJSON *sel;

	(void)key;
	if (strcmp(h->ns, m->ns) != 0 ||
	    (o = client_get(m->r->c, "pods", h->ns, h->name)) == NULL)
		return 0;
	cJSON_ArrayForEach(sel, m->selector) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(o->labels,
		    sel->string);

		if (!cJSON_IsString(sel) || !cJSON_IsString(l) ||
		    strcmp(l->valuestring, sel->valuestring) != 0)
			return 0;
	}
	m->found = h;
	return 1;
}

/* The head the address names. */
static struct ray_head *
find_head(struct simsub *s)
{
	char svc[254], ns[254];
	struct match m;
	const store_obj *o;
	cJSON *t;
	int n;

	if (strcmp(s->host, "127.0.0.1") == 0 ||
	    strcmp(s->host, "localhost") == 0)
		return ray_head_find(s->r, s->ns, s->pod);
	n = sscanf(s->host, "%253[^.].%253[^.]", svc, ns);
	if (n < 1)
		return NULL;
	if (n == 1)
		util_strf(ns, sizeof ns, "%s", s->ns);
	if ((o = client_get(s->r->c, "services", ns, svc)) == NULL)
		return NULL;
	t = store_obj_tree(o);
	memset(&m, 0, sizeof m);
	m.selector = json_at(t, "spec.selector");
	m.ns = ns;
	m.r = s->r;
	if (cJSON_GetArraySize((cJSON *)m.selector) > 0)
		hmap_each(s->r->heads, match_head, &m);
	cJSON_Delete(t);
	return m.found;
}

/*
 * How the simulated job runs: the job's metadata, else the RayJob's
 * annotation of that name, else def (NULL: nothing).
 */
static void
sim_setting(cJSON *md, const cJSON *rayjob, const char *key,
    const char *def)
{
	const cJSON *a = json_at(rayjob, "metadata.annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);

	if (cJSON_GetObjectItemCaseSensitive(md, key) != NULL)
		return;
	if (cJSON_IsString(v))
		cJSON_AddStringToObject(md, key, v->valuestring);
	else if (def != NULL)
		cJSON_AddStringToObject(md, key, def);
}

/* What the submitter's command line submits: the RayJob's fields. */
static cJSON *
submission(struct simsub *s)
{
	store_obj *const *jobs;
	const cJSON *spec = NULL, *v;
	cJSON *body, *t = NULL, *y, *md;
	size_t n, i;

	n = client_list(s->r->c, "rayjobs.ray.io", s->ns, &jobs);
	for (i = 0; i < n && spec == NULL; i++) {
		t = store_obj_tree(jobs[i]);
		if (json_str(t, "status.jobId") != NULL &&
		    strcmp(json_str(t, "status.jobId"), s->id) == 0)
			spec = json_at(t, "spec");
		else {
			cJSON_Delete(t);
			t = NULL;
		}
	}
	if (spec == NULL)
		return NULL;
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "entrypoint",
	    json_str(spec, "entrypoint") ? json_str(spec, "entrypoint") : "");
	cJSON_AddStringToObject(body, "submission_id", s->id);
	if ((v = json_at(spec, "runtimeEnvYAML")) != NULL &&
	    cJSON_IsString(v) && (y = yamljson_parse(v->valuestring,
	    strlen(v->valuestring), NULL)) != NULL)
		cJSON_AddItemToObject(body, "runtime_env", y);
	md = cJSON_IsObject(json_at(spec, "metadata")) ?
	    cJSON_Duplicate(json_at(spec, "metadata"), 1) :
	    cJSON_CreateObject();
	sim_setting(md, t, "volray.io/sim-duration", "1s");
	sim_setting(md, t, "volray.io/sim-exit-code", NULL);
	cJSON_AddItemToObject(body, "metadata", md);
	if ((v = json_at(spec, "entrypointNumCpus")) != NULL &&
	    cJSON_IsNumber(v) && v->valuedouble > 0)
		cJSON_AddNumberToObject(body, "entrypoint_num_cpus",
		    v->valuedouble);
	if ((v = json_at(spec, "entrypointNumGpus")) != NULL &&
	    cJSON_IsNumber(v) && v->valuedouble > 0)
		cJSON_AddNumberToObject(body, "entrypoint_num_gpus",
		    v->valuedouble);
	if ((v = json_at(spec, "entrypointResources")) != NULL &&
	    cJSON_IsString(v) && (y = cJSON_Parse(v->valuestring)) != NULL)
		cJSON_AddItemToObject(body, "entrypoint_resources", y);
	cJSON_Delete(t);
	return body;
}

/*
 * Whether `ray job submit` would pass the head's token check: the head
 * wants none, or the submitter's container (the one with
 * RAY_JOB_SUBMISSION_ID) carries its token in RAY_AUTH_TOKEN, as KubeRay
 * gives it.
 */
static int
token_ok(struct simsub *s, struct ray_head *h)
{
	int head_mode, mode, ok;
	char *want = ray_auth_pod_token(s->r, h->ns, h->name, NULL, &head_mode);
	char *have = ray_auth_pod_token(s->r, s->ns, s->pod,
	    "RAY_JOB_SUBMISSION_ID", &mode);

	ok = !head_mode || want == NULL || (have != NULL &&
	    strcmp(have, want) == 0);
	free(want);
	free(have);
	return ok;
}

static void
on_tick(uv_timer_t *t)
{
	struct simsub *s = t->data;
	struct ray_head *h = find_head(s);
	struct ray_job *j;
	char *text = NULL;
	cJSON *body;

	if (h == NULL || !h->running || (s->following &&
	    strcmp(h->uid, s->head_uid) != 0)) {
		if (s->following) {
			/* The follow's connection is lost with the head. */
			log_info("ray: %s/%s: lost the Ray head at %s while "
			    "following job %s: the simulated submitter fails",
			    s->ns, s->pod, s->host, s->id);
			finish(s, 1);
			return;
		}
		if (++s->ticks >= GIVE_UP_TICKS) {
			log_info("ray: %s/%s: no Ray head at %s: the simulated "
			    "submitter fails", s->ns, s->pod, s->host);
			finish(s, 1);
		}
		return;
	}
	if ((j = ray_job_find(h, s->id)) == NULL) {
		if (s->submitted || (body = submission(s)) == NULL) {
			log_info("ray: %s/%s: no RayJob with job id %s: the "
			    "simulated submitter fails", s->ns, s->pod, s->id);
			finish(s, 1);
			return;
		}
		s->submitted = 1;
		if (!token_ok(s, h)) {
			log_info("ray: %s/%s: submitting %s: Authentication "
			    "failed: the submitter's RAY_AUTH_TOKEN is not "
			    "the head's", s->ns, s->pod, s->id);
			cJSON_Delete(body);
			finish(s, 1);
			return;
		}
		if (ray_job_submit(h, body, &j, &text) != 0) {
			log_info("ray: %s/%s: submitting %s: %s", s->ns,
			    s->pod, s->id, text ? text : "refused");
			free(text);
			cJSON_Delete(body);
			finish(s, 1);
			return;
		}
		cJSON_Delete(body);
	}
	if (!s->following)
		util_strf(s->head_uid, sizeof s->head_uid, "%s", h->uid);
	s->following = 1;
	if (ray_job_terminal(j))
		finish(s, 0);
}

void *
ray_sim_submit(ray *r, const char *ns, const char *pod,
    const char *address, const char *id, void (*done)(void *, int),
    void *arg)
{
	struct simsub *s = xcalloc(1, sizeof *s);
	const char *h = address;
	size_t n;

	if (strncmp(h, "http://", 7) == 0)
		h += 7;
	else if (strncmp(h, "https://", 8) == 0)
		h += 8;
	n = strcspn(h, ":/");
	util_strf(s->host, sizeof s->host, "%.*s", (int)n, h);
	s->r = r;
	util_strf(s->ns, sizeof s->ns, "%s", ns);
	util_strf(s->pod, sizeof s->pod, "%s", pod);
	util_strf(s->id, sizeof s->id, "%s", id);
	s->done = done;
	s->arg = arg;
	uv_timer_init(r->loop, &s->tick);
	s->tick.data = s;
	uv_timer_start(&s->tick, on_tick, 0, TICK_MS);
	return s;
}

void
ray_sim_submit_cancel(void *handle)
{
	struct simsub *s = handle;

	if (s == NULL)
		return;
	s->over = 1;
	uv_timer_stop(&s->tick);
	uv_close((uv_handle_t *)&s->tick, on_closed);
}
