/*
 * The HTTP side of a head's dashboard: Ray's Jobs REST API
 * (/api/jobs/...), /api/version, the health checks KubeRay's probes use,
 * and the Serve REST API (/api/serve/applications/). Answers are Ray's:
 * JSON bodies for results, plain-text bodies with Ray's status codes for
 * errors ("Job X does not exist" 404; a refused submission 400 with the
 * Python exception's text), aiohttp's "404: Not Found" and "405: Method
 * Not Allowed" for other paths and methods; /api/packages/ stores
 * working_dir uploads (packages.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "ray/ray_int.h"

#define RAY_VERSION	"2.46.0"

static void
send_text(http_req *req, int code, const char *text)
{
	http_respond(req, code, "text/plain; charset=utf-8", text,
	    strlen(text));
}

static int
is(const http_req *req, const char *m)
{
	return strcmp(req->method, m) == 0 || (strcmp(m, "GET") == 0 &&
	    strcmp(req->method, "HEAD") == 0);
}

static void
not_found(http_req *req)
{
	send_text(req, 404, "404: Not Found");
}

static void
not_allowed(http_req *req)
{
	send_text(req, 405, "405: Method Not Allowed");
}

static void
job_missing(http_req *req, const char *id)
{
	char *s = util_printf("Job %s does not exist", id);

	send_text(req, 404, s);
	free(s);
}

static void
submit(struct ray_head *h, http_req *req)
{
	cJSON *b = cJSON_ParseWithLength(req->body, req->body_len), *t;
	struct ray_job *j;
	char *text = NULL;
	int code;

	if (b == NULL) {
		send_text(req, 400, "json.decoder.JSONDecodeError: the request "
		    "body is not valid JSON");
		return;
	}
	code = ray_job_submit(h, b, &j, &text);
	cJSON_Delete(b);
	if (code != 0) {
		send_text(req, code, text);
		free(text);
		return;
	}
	t = cJSON_CreateObject();
	json_set_str(t, "job_id", j->id);
	json_set_str(t, "submission_id", j->id);
	http_respond_json(req, 200, t);
}

static void
list(struct ray_head *h, http_req *req)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < h->njobs; i++)
		cJSON_AddItemToArray(a, ray_job_details(h->order[i]));
	http_respond_json(req, 200, a);
}

/* /api/jobs/ID[/logs|/stop]: rest is what follows "/api/jobs/". */
static void
job_path(struct ray_head *h, http_req *req, const char *rest)
{
	char id[256];
	const char *slash = strchr(rest, '/'), *sub = slash ? slash + 1 : "";
	struct ray_job *j;
	char *text = NULL;
	cJSON *t;

	snprintf(id, sizeof id, "%.*s", (int)(slash ? (size_t)(slash - rest) :
	    strlen(rest)), rest);
	if (strcmp(sub, "") != 0 && strcmp(sub, "logs") != 0 &&
	    strcmp(sub, "stop") != 0) {
		not_found(req);
		return;
	}
	if ((*sub == '\0' && !is(req, "GET") && !is(req, "DELETE")) ||
	    (strcmp(sub, "logs") == 0 && !is(req, "GET")) ||
	    (strcmp(sub, "stop") == 0 && !is(req, "POST"))) {
		not_allowed(req);
		return;
	}
	if ((j = ray_job_find(h, id)) == NULL) {
		job_missing(req, id);
		return;
	}
	if (strcmp(sub, "logs") == 0) {
		char *logs = ray_job_logs(j);

		t = cJSON_CreateObject();
		json_set_str(t, "logs", logs);
		free(logs);
		http_respond_json(req, 200, t);
	} else if (strcmp(sub, "stop") == 0) {
		t = cJSON_CreateObject();
		json_set(t, "stopped", cJSON_CreateBool(ray_job_stop(j)));
		http_respond_json(req, 200, t);
	} else if (is(req, "DELETE")) {
		if (ray_job_delete(j, &text) != 0) {
			send_text(req, 400, text);
			free(text);
			return;
		}
		t = cJSON_CreateObject();
		json_set(t, "deleted", cJSON_CreateBool(1));
		http_respond_json(req, 200, t);
	} else
		http_respond_json(req, 200, ray_job_details(j));
}

static void
version(struct ray_head *h, http_req *req)
{
	cJSON *t = cJSON_CreateObject();
	char *session = util_printf("session_volray_%s", h->uid);

	json_set_str(t, "version", "4");
	json_set_str(t, "ray_version", RAY_VERSION);
	json_set_str(t, "ray_commit", "volray");
	json_set_str(t, "session_name", session);
	free(session);
	http_respond_json(req, 200, t);
}

static void
serve(struct ray_head *h, http_req *req)
{
	char *text = NULL;
	int code;

	if (is(req, "GET"))
		http_respond_json(req, 200, ray_serve_get(h));
	else if (is(req, "PUT")) {
		code = ray_serve_put(h, req->body, req->body_len, &text);
		if (code == 200)
			ray_gcs_put_serve(h->gcs, h);
		send_text(req, code, text ? text : "");
		free(text);
	} else if (is(req, "DELETE")) {
		ray_serve_delete(h);
		ray_gcs_put_serve(h->gcs, h);
		send_text(req, 200, "");
	} else
		not_allowed(req);
}

/*
 * /api/packages/PROTOCOL/NAME: is the package there (GET), store it
 * (PUT), as Ray's dashboard answers `ray job submit --working-dir`.
 */
static void
packages(struct ray_head *h, http_req *req, const char *rest)
{
	const char *name = strchr(rest, '/');
	char *why = NULL;

	if (name == NULL || !ray_package_name_ok(name + 1)) {
		send_text(req, 400, "Invalid package URI");
		return;
	}
	name++;
	if (is(req, "GET")) {
		if (ray_package_has(h, name))
			send_text(req, 200, "");
		else
			send_text(req, 404, "Package not found");
	} else if (is(req, "PUT")) {
		if (ray_package_put(h, name, req->body, req->body_len,
		    &why) == 0)
			send_text(req, 200, "");
		else
			send_text(req, 500, why);
		free(why);
	} else
		not_allowed(req);
}

/*
 * Serve's HTTP proxy, simulated: an application whose route_prefix takes
 * the path answers 200 with who answered (application, prefix, cluster,
 * pod), the way a deployment would; /-/routes and /-/healthz as Serve's
 * proxy has them; no application: 404 in Serve's words; one still
 * deploying: 503.
 */
void
ray_serve_http(struct ray_head *h, http_req *req, const char *path,
    const char *pod)
{
	const char *prefix = NULL, *app;
	int running = 0;
	cJSON *t;

	if (strcmp(path, "/-/routes") == 0) {
		http_respond_json(req, 200, ray_serve_routes(h));
		return;
	}
	if (strcmp(path, "/-/healthz") == 0) {
		send_text(req, 200, "success");
		return;
	}
	if ((app = ray_serve_route(h, path, &prefix, &running)) == NULL) {
		char *msg = util_printf("Path '%s' not found. Ping "
		    "http://.../-/routes for available routes.", path);

		send_text(req, 404, msg);
		free(msg);
		return;
	}
	if (!running) {
		send_text(req, 503, "Service Unavailable");
		return;
	}
	t = cJSON_CreateObject();
	json_set_str(t, "application", app);
	json_set_str(t, "route_prefix", prefix);
	json_set_str(t, "cluster", h->cluster ? h->cluster : "");
	json_set_str(t, "pod", pod);
	json_set_str(t, "path", path);
	http_respond_json(req, 200, t);
}

void
ray_jobsapi_serve(struct ray_head *h, http_req *req, const char *path)
{
	if (strcmp(path, "/api/jobs/") == 0 || strcmp(path, "/api/jobs") == 0) {
		if (is(req, "GET"))
			list(h, req);
		else if (is(req, "POST"))
			submit(h, req);
		else
			not_allowed(req);
	} else if (strncmp(path, "/api/jobs/", 10) == 0)
		job_path(h, req, path + 10);
	else if (strncmp(path, "/api/packages/", 14) == 0)
		packages(h, req, path + 14);
	else if (strcmp(path, "/api/version") == 0) {
		if (is(req, "GET"))
			version(h, req);
		else
			not_allowed(req);
	} else if (strcmp(path, "/api/gcs_healthz") == 0 ||
	    strcmp(path, "/api/local_raylet_healthz") == 0 ||
	    strcmp(path, "/api/healthz") == 0)
		send_text(req, 200, "success");
	else if (strcmp(path, "/api/serve/applications/") == 0 ||
	    strcmp(path, "/api/serve/applications") == 0)
		serve(h, req);
	else if (strcmp(path, "/api/volray/autoscaler") == 0) {
		if (is(req, "GET"))
			http_respond_json(req, 200, ray_demand_report(h));
		else
			not_allowed(req);
	} else
		not_found(req);
}
