/*
 * The Ray heads this daemon serves. Every store event on a pod labelled
 * ray.io/node-type=head updates its head: the node it is on (and so its
 * runtime, local or virtual), whether it is Running, and its dashboard
 * port (the container port named "dashboard", else --dashboard-port in
 * the Ray container's command line, else 8265). While a local head is
 * Running its dashboard also listens on 127.0.0.1:PORT; a port another
 * program holds is a logged warning. A head that is deleted, fails, or
 * whose node goes away fails its unfinished jobs, as Ray's do when the
 * head dies; a deleted head is forgotten. A head's jobs are read back
 * from its journal (journal.c) when it is first seen after a restart,
 * and with GCS fault tolerance from its cluster's Redis (gcsstore.c),
 * which outlives the head: a new head recovers them. Raylets (raylet.c)
 * are told of every change of a cluster's heads.
 * A dashboard request, through the API's proxies or on a local head's
 * own listener, is answered by jobsapi.c once the head is found here.
 * A head pod that runs real Ray (the local node's, its Ray container's
 * image a Ray image, node/rayimage.h) is none of these: the API's proxies
 * reach its own dashboard at the pod's address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/rayimage.h"
#include "ray/ray_int.h"

#define DEFAULT_PORT	8265
#define DEFAULT_AGENT_PORT 52365

static void head_handle(http_req *, void *);

static int
is_head(const store_obj *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->labels,
	    "ray.io/node-type");

	return cJSON_IsString(v) && strcmp(v->valuestring, "head") == 0;
}

static struct ray_head *
head_find(ray *r, const char *ns, const char *name)
{
	const store_obj *o = client_get(r->c, "pods", ns, name);

	return o != NULL ? hmap_get(r->heads, o->uid) : NULL;
}

struct ray_head *
ray_head_find(ray *r, const char *ns, const char *name)
{
	return head_find(r, ns, name);
}

/* The value of --flag=N or --flag N in the containers' command lines. */
static int
flag_port(const cJSON *pod, const char *flag, int def)
{
	const cJSON *c, *a;
	size_t fl = strlen(flag);
	int port;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		const char *lists[] = { "command", "args" };
		int i, next = 0;

		for (i = 0; i < 2; i++)
			cJSON_ArrayForEach(a, json_at(c, lists[i])) {
				const char *s = cJSON_IsString(a) ? a->valuestring :
				    "", *q;

				if (next && (port = atoi(s)) > 0)
					return port;
				next = strcmp(s, flag) == 0;
				/* Inside a shell line too: "... --flag=8265 ..." */
				for (q = strstr(s, flag); q != NULL; q = strstr(q +
				    1, flag))
					if ((q[fl] == '=' || q[fl] == ' ') &&
					    (port = atoi(q + fl + 1)) > 0)
						return port;
			}
	}
	return def;
}

/* The dashboard port of a head pod's tree. */
static int
dashboard_port(const cJSON *pod)
{
	const cJSON *c, *p;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers"))
		cJSON_ArrayForEach(p, json_at(c, "ports"))
			if (json_str(p, "name") && strcmp(json_str(p, "name"),
			    "dashboard") == 0 && cJSON_IsNumber(json_at(p,
			    "containerPort")))
				return json_at(p, "containerPort")->valueint;
	return flag_port(pod, "--dashboard-port", DEFAULT_PORT);
}

static void
listener_stop(struct ray_head *h, struct listener *l)
{
	if (l->srv != NULL) {
		http_server_close(l->srv);
		l->srv = NULL;
		log_info("ray: %s/%s: %s no longer on 127.0.0.1:%d", h->ns,
		    h->name, l->what, l->port);
	}
	l->port = 0;
	l->clash = 0;
}

/* Listen on 127.0.0.1:port; a port in use is one warning, not a retry loop. */
static void
listener_start(struct ray_head *h, struct listener *l, int port)
{
	char *cause = NULL;

	if ((l->srv != NULL && l->port == port) || l->clash == port)
		return;
	listener_stop(h, l);
	if (http_server_listen(h->r->loop, "127.0.0.1", port, head_handle, h,
	    &l->srv, &cause) != 0) {
		log_warn("ray: %s/%s: cannot serve the %s on 127.0.0.1:%d: %s "
		    "(it stays reachable through the API's service proxy)",
		    h->ns, h->name, l->what, port, cause ? cause : "error");
		free(cause);
		l->srv = NULL;
		l->clash = port;
		return;
	}
	l->port = port;
	log_info("ray: %s/%s: %s on http://127.0.0.1:%d", h->ns, h->name,
	    l->what, port);
}

static void
listen_stop(struct ray_head *h)
{
	listener_stop(h, &h->dash);
	listener_stop(h, &h->agent);
	listener_stop(h, &h->fwd);
}

/*
 * A local head's dashboard, and its agent port (--dashboard-agent-listen-
 * port, 52365) for KubeRay's probes of /api/local_raylet_healthz.
 */
static void
listen_start(struct ray_head *h)
{
	listener_start(h, &h->dash, h->port);
	listener_start(h, &h->agent, h->agent_port);
}

static struct ray_head *
head_new(ray *r, const store_obj *o)
{
	struct ray_head *h = xcalloc(1, sizeof *h);

	h->r = r;
	h->ns = xstrdup(o->ns);
	h->name = xstrdup(o->name);
	h->uid = xstrdup(o->uid);
	h->dir = node_mgr_pod_dir(r->nodes, o->ns, o->name);
	h->jobs = hmap_new();
	h->port = DEFAULT_PORT;
	h->journal = -1;
	h->dash.what = "dashboard";
	h->agent.what = "dashboard agent";
	hmap_put(r->heads, h->uid, h);
	return h;
}

static void
head_free(struct ray_head *h)
{
	ray_gcs_close(h->gcs);
	h->gcs = NULL;
	listen_stop(h);
	ray_jobs_free(h);
	ray_demand_head_free(h);
	ray_journal_close(h);
	ray_serve_free(h);
	hmap_del(h->r->heads, h->uid);
	hmap_free(h->jobs);
	free(h->ns);
	free(h->name);
	free(h->uid);
	free(h->node);
	free(h->dir);
	free(h->sim_serve_duration);
	free(h->cluster);
	free(h->session);
	free(h);
}

/*
 * The head died (why): its unfinished jobs fail; it serves nothing. A
 * fault-tolerant head's GCS storage is left as it was: the next head
 * recovers its jobs from it.
 */
static void
head_dies(struct ray_head *h, const char *why)
{
	char *msg;

	h->running = 0;
	listen_stop(h);
	ray_gcs_close(h->gcs);
	h->gcs = NULL;
	h->recovering = 0;
	if (h->dead)
		return;
	h->dead = 1;
	msg = util_printf("Job supervisor actor died: the Ray head pod %s/%s "
	    "%s.%s", h->ns, h->name, why, h->ft ? " (GCS fault tolerance: "
	    "the next head recovers the job from Redis.)" : "");
	ray_jobs_fail_all(h, msg);
	free(msg);
}

static void head_update(ray *, const store_obj *);

/* A fault-tolerant head read its cluster's GCS storage: it serves. */
static void
on_recovered(struct ray_head *h, const cJSON *records, const char *session,
    const cJSON *serve)
{
	const store_obj *o;

	free(h->session);
	h->session = xstrdup(session);
	ray_jobs_recover(h, records);
	/* Serve's controller checkpoints them in the GCS; their replicas
	   on the workers kept serving. */
	if (serve != NULL)
		ray_serve_restore(h, serve);
	h->recovering = 0;
	if ((o = client_get(h->r->c, "pods", h->ns, h->name)) != NULL)
		head_update(h->r, o);
}

/*
 * The embedded backend's storage: DATA_DIR/gcs-storage/<uid of the claim
 * of the head's volume gcs-storage> (malloc'd), when the Ray container
 * has RAY_gcs_storage=rocksdb; NULL otherwise, *cause saying so when it
 * asked for it.
 */
static char *
embedded_dir(struct ray_head *h, const cJSON *pod, char **cause)
{
	const cJSON *c = cJSON_GetArrayItem(json_at(pod, "spec.containers"), 0);
	const cJSON *vol;
	char *be = ray_pod_env(h->r->c, h->ns, c, "RAY_gcs_storage");
	const char *claim = NULL;
	const store_obj *o;
	int rocks = be != NULL && strcmp(be, "rocksdb") == 0;

	free(be);
	*cause = NULL;
	if (!rocks)
		return NULL;
	cJSON_ArrayForEach(vol, json_at(pod, "spec.volumes"))
		if (json_str(vol, "name") != NULL && strcmp(json_str(vol,
		    "name"), "gcs-storage") == 0)
			claim = json_str(vol, "persistentVolumeClaim.claimName");
	if (claim == NULL || h->r->data_dir == NULL ||
	    (o = client_get(h->r->c, "persistentvolumeclaims", h->ns,
	    claim)) == NULL) {
		*cause = util_printf(
		    "the embedded GCS storage's claim %s is not "
		    "there", claim ? claim : "(no gcs-storage volume)");
		return NULL;
	}
	return util_printf("%s/gcs-storage/%s", h->r->data_dir, o->uid);
}

/*
 * The head's jobs, once it is on a node: its journal's (after a restart
 * of volrayd), then, with GCS fault tolerance, those its cluster's GCS
 * storage kept (gcsstore.c: Redis; gcsfile.c: embedded); it serves
 * nothing until they are read.
 */
static void
head_load(struct ray_head *h, const cJSON *pod)
{
	struct gcs_target g;
	char *why = NULL, *dir;

	h->loaded = 1;
	ray_jobs_load(h);
	if (h->ft && ((dir = embedded_dir(h, pod, &why)) != NULL ||
	    why != NULL)) {
		if (dir == NULL) {
			log_warn("ray: %s/%s: %s; its jobs will not outlive it",
			    h->ns, h->name, why);
			free(why);
			h->ft = 0;
			h->session = ray_session_name(h->uid);
			return;
		}
		h->recovering = 1;
		h->gcs = ray_gcs_open_file(h, dir, ray_job_record,
		    ray_serve_state, on_recovered);
		free(dir);
		return;
	}
	if (h->ft && ray_gcs_target(h->r, h->ns, pod, &g, &why) != 0) {
		log_warn("ray: %s/%s: GCS fault tolerance without Redis: %s; "
		    "its jobs will not outlive it", h->ns, h->name, why);
		free(why);
		h->ft = 0;
	}
	if (!h->ft) {
		h->session = ray_session_name(h->uid);
		return;
	}
	h->recovering = 1;
	h->gcs = ray_gcs_open(h, &g, 1, ray_job_record, ray_serve_state,
	    on_recovered);
	ray_gcs_target_free(&g);
}

/* A head pod's new version. */
static void
head_update(ray *r, const store_obj *o)
{
	struct ray_head *h = hmap_get(r->heads, o->uid);
	cJSON *t = store_obj_tree(o);
	const char *phase = json_str(t, "status.phase");
	int first = h == NULL;

	/* Real Ray serves its own dashboard: nothing to emulate. */
	if (rayimage_real(r->nodes, o->node_name, json_str(cJSON_GetArrayItem(
	    json_at(t, "spec.containers"), 0), "image"))) {
		if (h != NULL)
			head_free(h);
		cJSON_Delete(t);
		return;
	}
	if (h == NULL)
		h = head_new(r, o);
	if (h->node == NULL || strcmp(h->node, o->node_name) != 0) {
		free(h->node);
		h->node = xstrdup(o->node_name);
	}
	h->runtime = node_mgr_runtime(r->nodes, h->node);
	h->port = dashboard_port(t);
	h->agent_port = flag_port(t, "--dashboard-agent-listen-port",
	    DEFAULT_AGENT_PORT);
	{
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(json_at(t,
		    "metadata.annotations"), "volray.io/sim-serve-duration");

		free(h->sim_serve_duration);
		h->sim_serve_duration = cJSON_IsString(a) ?
		    xstrdup(a->valuestring) : NULL;
	}
	if (first) {
		const cJSON *cl = cJSON_GetObjectItemCaseSensitive(o->labels,
		    "ray.io/cluster");
		const cJSON *ft = cJSON_GetObjectItemCaseSensitive(json_at(t,
		    "metadata.annotations"), "ray.io/ft-enabled");

		h->cluster = cJSON_IsString(cl) ? xstrdup(cl->valuestring) :
		    NULL;
		h->ft = cJSON_IsString(ft) && strcasecmp(ft->valuestring,
		    "true") == 0;
	}
	if (!h->loaded && h->runtime != NULL)
		head_load(h, t);
	if (o->deleting)
		head_dies(h, "is being deleted");
	else if (phase != NULL && (strcmp(phase, "Failed") == 0 ||
	    strcmp(phase, "Succeeded") == 0))
		head_dies(h, strcmp(phase, "Failed") == 0 ? "failed" :
		    "exited");
	else if (h->runtime != NULL && phase != NULL &&
	    strcmp(phase, "Running") == 0 && !h->dead) {
		h->running = !h->recovering;
		if (h->running && strcmp(h->runtime, "local") == 0)
			listen_start(h);
	} else
		h->running = 0;
	cJSON_Delete(t);
	ray_raylets_check(r, h->ns, h->cluster);
}

static int
on_node_gone_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;
	const char *node = arg;

	(void)k;
	if (h->node != NULL && strcmp(h->node, node) == 0) {
		head_dies(h, "lost its node");
		ray_raylets_check(h->r, h->ns, h->cluster);
	}
	return 0;
}

static void
on_event(void *arg, const store_event *e)
{
	ray *r = arg;
	const store_obj *o = e->obj;
	struct ray_head *h;

	if (strcmp(o->res, "nodes") == 0) {
		if (e->type == STORE_DELETED)
			hmap_each(r->heads, on_node_gone_one, (void *)o->name);
		return;
	}
	if (strcmp(o->res, "persistentvolumeclaims") == 0) {
		/* A claim gone takes the embedded GCS storage on it. */
		if (e->type == STORE_DELETED && r->data_dir != NULL)
			ray_gcs_file_remove(r->data_dir, o->uid);
		return;
	}
	if (strcmp(o->res, "pods") != 0 || !is_head(o))
		return;
	if (e->type == STORE_DELETED) {
		if ((h = hmap_get(r->heads, o->uid)) != NULL) {
			char *ns = xstrdup(h->ns);
			char *cl = h->cluster ? xstrdup(h->cluster) : NULL;

			head_dies(h, "was deleted");
			head_free(h);
			ray_raylets_check(r, ns, cl);
			free(ns);
			free(cl);
		}
		return;
	}
	head_update(r, o);
}

const char *const ray_kinds[] = { "pods",
	"services", "rayjobs.ray.io",	/* simulated submitters (simsubmit.c) */
	"endpoints",			/* Redis behind a Service (gcsstore.c) */
	"persistentvolumeclaims",	/* embedded GCS storage (gcsfile.c) */
	"secrets",			/* Ray tokens (auth.c) */
	"rayclusters.ray.io",		/* a job's RayJob (jobs.c, history) */
	NULL };

ray *
ray_new(uv_loop_t *loop, client *c, node_mgr *nodes)
{
	ray *r = xcalloc(1, sizeof *r);

	r->loop = loop;
	r->c = c;
	r->nodes = nodes;
	r->wheel = node_mgr_wheel(nodes);
	r->heads = hmap_new();
	return r;
}

void
ray_set_data_dir(ray *r, const char *dir)
{
	free(r->data_dir);
	r->data_dir = dir ? xstrdup(dir) : NULL;
}

void
ray_set_history(ray *r, const char *dir, long max_jobs, long long max_bytes)
{
	ray_history_free(r->history);
	r->history = max_jobs > 0 ? ray_history_new(dir, max_jobs, max_bytes) :
	    NULL;
}

void
ray_start(ray *r)
{
	store_obj *const *objs;
	size_t n = client_list(r->c, "pods", NULL, &objs), i;

	for (i = 0; i < n; i++)
		if (is_head(objs[i]))
			head_update(r, objs[i]);
	client_subscribe(r->c, on_event, r);
}

static int
stop_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;

	(void)k;
	(void)arg;
	listen_stop(h);
	return 0;
}

void
ray_shutdown(ray *r)
{
	hmap_each(r->heads, stop_one, NULL);
	ray_history_free(r->history);
	r->history = NULL;
}

/* Serve's HTTP port on every Running pod of a cluster. */
#define SERVE_PORT 8000

struct find_serving {
	const char *ns, *cluster;
	struct ray_head *found;
};

static int
serving_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;
	struct find_serving *f = arg;

	(void)k;
	if (!h->running || h->apps == NULL || h->cluster == NULL ||
	    strcmp(h->ns, f->ns) != 0 || strcmp(h->cluster, f->cluster) != 0)
		return 0;
	f->found = h;
	return 1;
}

/* The serving head of pod ns/pod's cluster, when the pod is Running. */
static struct ray_head *
serve_head(ray *r, const char *ns, const char *pod)
{
	const store_obj *o = client_get(r->c, "pods", ns, pod);
	const cJSON *cl;
	struct find_serving f = { ns, NULL, NULL };

	if (o == NULL || o->deleting || strcmp(o->phase, "Running") != 0 ||
	    !cJSON_IsString(cl = cJSON_GetObjectItemCaseSensitive(o->labels,
	    "ray.io/cluster")))
		return NULL;
	f.cluster = cl->valuestring;
	hmap_each(r->heads, serving_one, &f);
	return f.found;
}

int
ray_serves(ray *r, const char *ns, const char *pod, int port)
{
	struct ray_head *h = head_find(r, ns, pod);

	if (port == SERVE_PORT && (h == NULL || h->port != port))
		return serve_head(r, ns, pod) != NULL;
	return h != NULL && h->running && h->port == port;
}

int
ray_dashboard(ray *r, http_req *req, const char *ns, const char *pod,
    int port, const char *path, int proxied)
{
	struct ray_head *h = head_find(r, ns, pod);

	if (port == SERVE_PORT && (h == NULL || h->port != port)) {
		if ((h = serve_head(r, ns, pod)) == NULL)
			return -1;
		ray_serve_http(h, req, path, pod);
		return 0;
	}
	if (h == NULL || !h->running || h->port != port)
		return -1;
	if (ray_auth_check(h, req, path, proxied) == 0)
		ray_jobsapi_serve(h, req, path);
	return 0;
}

int
ray_forward_port(ray *r, const char *ns, const char *pod, int port)
{
	struct ray_head *h = head_find(r, ns, pod);
	char *cause = NULL;

	if (h == NULL || !h->running || h->port != port)
		return -1;
	if (h->dash.srv != NULL)
		return h->dash.port;
	if (h->fwd.srv == NULL) {
		h->fwd.what = "dashboard for port-forward";
		if (http_server_listen(r->loop, "127.0.0.1", 0, head_handle, h,
		    &h->fwd.srv, &cause) != 0) {
			log_warn("ray: %s/%s: no port for port-forward: %s",
			    ns, pod, cause ? cause : "error");
			free(cause);
			h->fwd.srv = NULL;
			return -1;
		}
		h->fwd.port = http_server_port(h->fwd.srv);
		log_info("ray: %s/%s: dashboard for port-forward on "
		    "http://127.0.0.1:%d", ns, pod, h->fwd.port);
	}
	return h->fwd.port;
}

/* A request on a local head's own 127.0.0.1 listener. */
static void
head_handle(http_req *req, void *arg)
{
	struct ray_head *h = arg;

	/* The agent's port answers as the dashboard does. */
	if (ray_dashboard(h->r, req, h->ns, h->name, h->port, req->path,
	    0) != 0)
		http_respond(req, 503, "text/plain; charset=utf-8",
		    "the Ray head is not running\n", 28);
}
