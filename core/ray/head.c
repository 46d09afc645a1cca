/*
 * The Ray heads this daemon serves. Every store event on a pod labelled
 * ray.io/node-type=head updates its head: the node it is on (and so its
 * runtime, local or virtual), whether it is Running, and its dashboard
 * port (the container port named "dashboard", else --dashboard-port in
 * the Ray container's command line, else 8265). While a local head is
 * Running its dashboard also listens on 127.0.0.1:PORT; a port another
 * program holds is a logged warning. A head that is deleted, fails, or
 * whose node goes away fails its unfinished jobs, as Ray's do when the
 * head dies; a deleted head is forgotten.
 *
 * The job table is saved, coalesced, to DATA_DIR/pods/NS/NAME/
 * ray-jobs.json (with the pod's uid, so a new pod of the same name starts
 * empty) and read back when the head is first seen after a restart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "ray/ray_int.h"

#define SAVE_DELAY_MS	50
#define DEFAULT_PORT	8265

static void head_handle(http_req *, void *);

static int
is_head(const store_obj *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->labels,
	    "ray.io/node-type");

	return cJSON_IsString(v) && strcmp(v->valuestring, "head") == 0;
}

struct ray_head *
ray_head_find(ray *r, const char *ns, const char *name)
{
	const store_obj *o = store_get(r->st, "pods", ns, name);

	return o != NULL ? hmap_get(r->heads, o->uid) : NULL;
}

/* mkdir -p with mode 0700. */
static void
mkdirs(const char *path)
{
	char buf[4096], *p;

	snprintf(buf, sizeof buf, "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0700);
			*p = '/';
		}
	mkdir(buf, 0700);
}

static void
save_now(wheel_timer *t)
{
	struct ray_head *h = t->data;
	cJSON *doc = cJSON_CreateObject();
	char *path, *tmp, *s;
	FILE *f;

	json_set_str(doc, "uid", h->uid);
	json_set(doc, "jobs", ray_jobs_save(h));
	s = json_print(doc);
	cJSON_Delete(doc);
	mkdirs(h->dir);
	path = util_printf("%s/ray-jobs.json", h->dir);
	tmp = util_printf("%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL || fputs(s, f) < 0 ||
	    fclose(f) != 0 || rename(tmp, path) != 0)
		log_warn("ray: saving %s: %s", path, strerror(errno));
	free(path);
	free(tmp);
	free(s);
}

void
ray_head_save_soon(struct ray_head *h)
{
	if (!h->save_timer.armed)
		wheel_add(h->r->wheel, &h->save_timer, SAVE_DELAY_MS, save_now,
		    h);
}

static void
load(struct ray_head *h)
{
	char *path = util_printf("%s/ray-jobs.json", h->dir), *buf;
	FILE *f = fopen(path, "r");
	cJSON *doc;
	long n;

	free(path);
	if (f == NULL)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n <= 0 || (buf = calloc(1, (size_t)n + 1)) == NULL) {
		fclose(f);
		return;
	}
	if (fread(buf, 1, (size_t)n, f) == (size_t)n &&
	    (doc = cJSON_Parse(buf)) != NULL) {
		if (json_str(doc, "uid") && strcmp(json_str(doc, "uid"),
		    h->uid) == 0)
			ray_jobs_load(h, json_at(doc, "jobs"));
		cJSON_Delete(doc);
	}
	free(buf);
	fclose(f);
}

/* The dashboard port of a head pod's tree. */
static int
dashboard_port(const cJSON *pod)
{
	const cJSON *c, *p, *a;
	int port = 0;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers"))
		cJSON_ArrayForEach(p, json_at(c, "ports"))
			if (json_str(p, "name") && strcmp(json_str(p, "name"),
			    "dashboard") == 0 && cJSON_IsNumber(json_at(p,
			    "containerPort")))
				return json_at(p, "containerPort")->valueint;
	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		const char *lists[] = { "command", "args" };
		int i, next = 0;

		for (i = 0; i < 2; i++)
			cJSON_ArrayForEach(a, json_at(c, lists[i])) {
				const char *s = cJSON_IsString(a) ? a->valuestring :
				    "", *q;

				if (next && (port = atoi(s)) > 0)
					return port;
				next = strcmp(s, "--dashboard-port") == 0;
				/* Inside a shell line too: "... --dashboard-port=8265 ..." */
				if ((q = strstr(s, "--dashboard-port=")) != NULL &&
				    (port = atoi(q + 17)) > 0)
					return port;
				if ((q = strstr(s, "--dashboard-port ")) != NULL &&
				    (port = atoi(q + 17)) > 0)
					return port;
			}
	}
	return DEFAULT_PORT;
}

static void
listen_stop(struct ray_head *h)
{
	if (h->listener != NULL) {
		http_server_close(h->listener);
		h->listener = NULL;
		log_info("ray: %s/%s: dashboard no longer on 127.0.0.1:%d",
		    h->ns, h->name, h->listen_port);
	}
}

static void
listen_start(struct ray_head *h)
{
	char *cause = NULL;

	if (h->listener != NULL && h->listen_port == h->port)
		return;
	listen_stop(h);
	if (http_server_listen(h->r->loop, "127.0.0.1", h->port, head_handle,
	    h, &h->listener, &cause) != 0) {
		log_warn("ray: %s/%s: cannot serve the dashboard on "
		    "127.0.0.1:%d: %s (it stays reachable through the API's "
		    "service proxy)", h->ns, h->name, h->port, cause ? cause :
		    "error");
		free(cause);
		h->listener = NULL;
		return;
	}
	h->listen_port = h->port;
	log_info("ray: %s/%s: dashboard on http://127.0.0.1:%d", h->ns,
	    h->name, h->port);
}

static struct ray_head *
head_new(ray *r, const store_obj *o)
{
	struct ray_head *h = calloc(1, sizeof *h);

	if (h == NULL)
		fatal("out of memory");
	h->r = r;
	h->ns = strdup(o->ns);
	h->name = strdup(o->name);
	h->uid = strdup(o->uid);
	h->dir = node_mgr_pod_dir(r->nodes, o->ns, o->name);
	h->jobs = hmap_new();
	h->port = DEFAULT_PORT;
	hmap_put(r->heads, h->uid, h);
	return h;
}

static void
head_free(struct ray_head *h)
{
	listen_stop(h);
	if (h->save_timer.armed) {
		wheel_cancel(h->r->wheel, &h->save_timer);
		save_now(&h->save_timer);
	}
	ray_jobs_free(h);
	ray_serve_free(h);
	hmap_del(h->r->heads, h->uid);
	hmap_free(h->jobs);
	free(h->ns);
	free(h->name);
	free(h->uid);
	free(h->node);
	free(h->dir);
	free(h->sim_serve_duration);
	free(h);
}

/* The head died (why): its unfinished jobs fail; it serves nothing. */
static void
head_dies(struct ray_head *h, const char *why)
{
	char *msg;

	h->running = 0;
	listen_stop(h);
	if (h->dead)
		return;
	h->dead = 1;
	msg = util_printf("Job supervisor actor died: the Ray head pod %s/%s "
	    "%s.", h->ns, h->name, why);
	ray_jobs_fail_all(h, msg);
	free(msg);
}

/* A head pod's new version. */
static void
head_update(ray *r, const store_obj *o)
{
	struct ray_head *h = hmap_get(r->heads, o->uid);
	cJSON *t = store_obj_tree(o);
	const char *phase = json_str(t, "status.phase");
	int first = h == NULL;

	if (h == NULL)
		h = head_new(r, o);
	if (h->node == NULL || strcmp(h->node, o->node_name) != 0) {
		free(h->node);
		h->node = strdup(o->node_name);
	}
	h->runtime = node_mgr_runtime(r->nodes, h->node);
	h->port = dashboard_port(t);
	{
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(json_at(t,
		    "metadata.annotations"), "volray.io/sim-serve-duration");

		free(h->sim_serve_duration);
		h->sim_serve_duration = cJSON_IsString(a) ?
		    strdup(a->valuestring) : NULL;
	}
	if (first && h->runtime != NULL)
		load(h);
	if (o->deleting)
		head_dies(h, "is being deleted");
	else if (phase != NULL && (strcmp(phase, "Failed") == 0 ||
	    strcmp(phase, "Succeeded") == 0))
		head_dies(h, strcmp(phase, "Failed") == 0 ? "failed" :
		    "exited");
	else if (h->runtime != NULL && phase != NULL &&
	    strcmp(phase, "Running") == 0 && !h->dead) {
		h->running = 1;
		if (strcmp(h->runtime, "local") == 0)
			listen_start(h);
	} else
		h->running = 0;
	cJSON_Delete(t);
}

static int
on_node_gone_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;
	const char *node = arg;

	(void)k;
	if (h->node != NULL && strcmp(h->node, node) == 0)
		head_dies(h, "lost its node");
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
	if (strcmp(o->res, "pods") != 0 || !is_head(o))
		return;
	if (e->type == STORE_DELETED) {
		if ((h = hmap_get(r->heads, o->uid)) != NULL) {
			head_dies(h, "was deleted");
			head_free(h);
		}
		return;
	}
	head_update(r, o);
}

ray *
ray_new(uv_loop_t *loop, store *st, node_mgr *nodes)
{
	ray *r = calloc(1, sizeof *r);

	if (r == NULL)
		fatal("out of memory");
	r->loop = loop;
	r->st = st;
	r->nodes = nodes;
	r->wheel = node_mgr_wheel(nodes);
	r->heads = hmap_new();
	return r;
}

void
ray_start(ray *r)
{
	store_obj *const *objs;
	size_t n = store_list(r->st, "pods", NULL, &objs), i;

	for (i = 0; i < n; i++)
		if (is_head(objs[i]))
			head_update(r, objs[i]);
	store_subscribe(r->st, on_event, r);
}

static int
stop_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;

	(void)k;
	(void)arg;
	listen_stop(h);
	if (h->save_timer.armed) {
		wheel_cancel(h->r->wheel, &h->save_timer);
		save_now(&h->save_timer);
	}
	return 0;
}

void
ray_shutdown(ray *r)
{
	hmap_each(r->heads, stop_one, NULL);
}

int
ray_serves(ray *r, const char *ns, const char *pod, int port)
{
	struct ray_head *h = ray_head_find(r, ns, pod);

	return h != NULL && h->running && h->port == port;
}

/* A request on a local head's own 127.0.0.1 listener. */
static void
head_handle(http_req *req, void *arg)
{
	struct ray_head *h = arg;

	if (ray_dashboard(h->r, req, h->ns, h->name, h->port, req->path) != 0)
		http_respond(req, 503, "text/plain; charset=utf-8",
		    "the Ray head is not running\n", 28);
}
