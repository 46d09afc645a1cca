/*
 * Ray job history: every Ray job that ends is kept after its cluster is
 * gone (KubeRay's users lose a job's logs with its RayCluster; KubeRay's
 * History Server answers that). A job's JobDetails, with the namespace,
 * the RayCluster and the RayJob it came from, go to
 * DATA_DIR/ray-history/NS/CLUSTER/ID.json and its driver log beside it
 * (ID.log), when the job ends; the store is bounded by a number of jobs
 * and of bytes (--ray-history-max, --ray-history-max-bytes), the oldest
 * going first, and is read back at start. Served read-only at
 *
 *   /apis/volray.io/v1/rayhistory/namespaces/NS/clusters/CLUSTER/api/jobs/
 *       [ID[/logs]]          Ray's Jobs API answers (list, details, logs)
 *   /apis/volray.io/v1/rayhistory/namespaces/NS/rayjobs/NAME
 *                            the latest job of a RayJob (its details)
 *
 * whatever became of the cluster (volray rayjob logs falls back to it).
 */
#include <dirent.h>
#include <errno.h>
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

#define PREFIX	"/apis/volray.io/v1/rayhistory/namespaces/"

/* One kept job. */
struct hjob {
	char *ns, *cluster, *rayjob, *id;
	char *base;		/* DIR/NS/CLUSTER/ID (+ .json, .log) */
	uint64_t at;		/* when it was kept (ms), the order */
	long long bytes;
};

struct ray_history {
	char *dir;
	long max_jobs;
	long long max_bytes;
	struct hjob **jobs;	/* oldest first */
	size_t n, cap;
	long long bytes;
};

static int
safe_name(const char *s)
{
	return s != NULL && *s != '\0' && *s != '.' && strchr(s, '/') == NULL &&
	    strlen(s) < 254;
}

static void
hjob_free(struct hjob *hj)
{
	free(hj->ns);
	free(hj->cluster);
	free(hj->rayjob);
	free(hj->id);
	free(hj->base);
	free(hj);
}

static long long
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static int
write_file(const char *path, const char *data)
{
	char *tmp = util_printf("%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	int ok = f != NULL && fputs(data, f) >= 0;

	if (f != NULL && fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp, path) != 0)
		ok = 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

/* Drop the oldest kept jobs while over a bound. */
static void
trim(struct ray_history *hs)
{
	size_t drop = 0, i;

	while (drop < hs->n && ((long)(hs->n - drop) > hs->max_jobs ||
	    hs->bytes > hs->max_bytes)) {
		struct hjob *hj = hs->jobs[drop++];
		char *p;

		p = util_printf("%s.json", hj->base);
		unlink(p);
		free(p);
		p = util_printf("%s.log", hj->base);
		unlink(p);
		free(p);
		hs->bytes -= hj->bytes;
		hjob_free(hj);
	}
	if (drop == 0)
		return;
	for (i = drop; i < hs->n; i++)
		hs->jobs[i - drop] = hs->jobs[i];
	hs->n -= drop;
}

static void
append(struct ray_history *hs, struct hjob *hj)
{
	size_t i;

	XGROW(hs->jobs, hs->cap, hs->n + 1);
	/* Keep the order by time (a load reads files in any order). */
	for (i = hs->n; i > 0 && hs->jobs[i - 1]->at > hj->at; i--)
		hs->jobs[i] = hs->jobs[i - 1];
	hs->jobs[i] = hj;
	hs->n++;
	hs->bytes += hj->bytes;
}

/* Read back what an earlier run kept: DIR/NS/CLUSTER/ID.json. */
static void
load(struct ray_history *hs)
{
	DIR *d1 = opendir(hs->dir), *d2, *d3;
	struct dirent *e1, *e2, *e3;

	while (d1 != NULL && (e1 = readdir(d1)) != NULL) {
		char *p1 = util_printf("%s/%s", hs->dir, e1->d_name);

		if (!safe_name(e1->d_name) || (d2 = opendir(p1)) == NULL) {
			free(p1);
			continue;
		}
		while ((e2 = readdir(d2)) != NULL) {
			char *p2 = util_printf("%s/%s", p1, e2->d_name);

			if (!safe_name(e2->d_name) ||
			    (d3 = opendir(p2)) == NULL) {
				free(p2);
				continue;
			}
			while ((e3 = readdir(d3)) != NULL) {
				size_t n = strlen(e3->d_name);
				struct hjob *hj;
				char *json;
				cJSON *t;

				if (n < 6 || strcmp(e3->d_name + n - 5,
				    ".json") != 0)
					continue;
				hj = xcalloc(1, sizeof *hj);
				hj->base = util_printf("%s/%.*s", p2,
				    (int)(n - 5), e3->d_name);
				json = util_printf("%s.json", hj->base);
				t = NULL;
				{
					char *text = util_read_file(json, NULL);

					t = text ? cJSON_Parse(text) : NULL;
					free(text);
				}
				if (t == NULL || json_str(t, "submission_id") ==
				    NULL) {
					log_warn("ray history: %s: not a kept "
					    "job, skipped", json);
					cJSON_Delete(t);
					free(json);
					free(hj->base);
					free(hj);
					continue;
				}
				hj->ns = xstrdup(e1->d_name);
				hj->cluster = xstrdup(e2->d_name);
				hj->id = xstrdup(json_str(t, "submission_id"));
				hj->rayjob = xstrdup(json_str(t,
				    "volray_history.rayjob") ? json_str(t,
				    "volray_history.rayjob") : "");
				hj->at = (uint64_t)cJSON_GetNumberValue(json_at(t,
				    "volray_history.kept_at"));
				hj->bytes = file_size(json);
				free(json);
				json = util_printf("%s.log", hj->base);
				hj->bytes += file_size(json);
				free(json);
				cJSON_Delete(t);
				append(hs, hj);
			}
			closedir(d3);
			free(p2);
		}
		closedir(d2);
		free(p1);
	}
	if (d1 != NULL)
		closedir(d1);
	trim(hs);
}

struct ray_history *
ray_history_new(const char *dir, long max_jobs, long long max_bytes)
{
	struct ray_history *hs = xcalloc(1, sizeof *hs);

	hs->dir = xstrdup(dir);
	hs->max_jobs = max_jobs;
	hs->max_bytes = max_bytes;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		log_warn("ray history: %s: %s", dir, strerror(errno));
	load(hs);
	log_info("ray history: %zu jobs kept in %s", hs->n, dir);
	return hs;
}

void
ray_history_free(struct ray_history *hs)
{
	size_t i;

	if (hs == NULL)
		return;
	for (i = 0; i < hs->n; i++)
		hjob_free(hs->jobs[i]);
	free(hs->jobs);
	free(hs->dir);
	free(hs);
}

static struct hjob *
find(struct ray_history *hs, const char *ns, const char *cluster,
    const char *id)
{
	size_t i;

	for (i = hs->n; i > 0; i--) {
		struct hjob *hj = hs->jobs[i - 1];

		if (strcmp(hj->ns, ns) == 0 && strcmp(hj->cluster, cluster) ==
		    0 && strcmp(hj->id, id) == 0)
			return hj;
	}
	return NULL;
}

void
ray_history_add(struct ray_history *hs, const char *ns, const char *cluster,
    const char *rayjob, const cJSON *details, const char *logs)
{
	const char *id = json_str(details, "submission_id");
	struct hjob *hj;
	cJSON *rec, *meta;
	char *dir, *text, *p;

	if (hs == NULL || hs->max_jobs <= 0 || !safe_name(ns) ||
	    !safe_name(cluster) || !safe_name(id))
		return;
	if ((hj = find(hs, ns, cluster, id)) != NULL) {
		/* Kept again (a stop after a failure...): the newest wins. */
		size_t i;

		for (i = 0; i < hs->n && hs->jobs[i] != hj; i++)
			;
		for (; i + 1 < hs->n; i++)
			hs->jobs[i] = hs->jobs[i + 1];
		hs->n--;
		hs->bytes -= hj->bytes;
		hjob_free(hj);
	}
	dir = util_printf("%s/%s", hs->dir, ns);
	mkdir(dir, 0700);
	free(dir);
	dir = util_printf("%s/%s/%s", hs->dir, ns, cluster);
	mkdir(dir, 0700);
	hj = xcalloc(1, sizeof *hj);
	hj->ns = xstrdup(ns);
	hj->cluster = xstrdup(cluster);
	hj->rayjob = xstrdup(rayjob ? rayjob : "");
	hj->id = xstrdup(id);
	hj->base = util_printf("%s/%s", dir, id);
	hj->at = util_now_ms();
	free(dir);
	rec = cJSON_Duplicate(details, 1);
	meta = cJSON_AddObjectToObject(rec, "volray_history");
	cJSON_AddStringToObject(meta, "namespace", ns);
	cJSON_AddStringToObject(meta, "cluster", cluster);
	cJSON_AddStringToObject(meta, "rayjob", hj->rayjob);
	cJSON_AddNumberToObject(meta, "kept_at", (double)hj->at);
	text = json_print(rec);
	cJSON_Delete(rec);
	p = util_printf("%s.json", hj->base);
	if (write_file(p, text) != 0)
		log_warn("ray history: writing %s failed", p);
	hj->bytes = (long long)strlen(text);
	free(p);
	free(text);
	p = util_printf("%s.log", hj->base);
	if (write_file(p, logs ? logs : "") != 0)
		log_warn("ray history: writing %s failed", p);
	hj->bytes += logs ? (long long)strlen(logs) : 0;
	free(p);
	append(hs, hj);
	trim(hs);
}

static cJSON *
details_of(const struct hjob *hj)
{
	char *p = util_printf("%s.json", hj->base);
	char *text = util_read_file(p, NULL);
	cJSON *t = text ? cJSON_Parse(text) : NULL;

	free(p);
	free(text);
	return t;
}

static void
send_text(http_req *req, int code, const char *msg)
{
	http_respond(req, code, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* path: what follows PREFIX ("NS/clusters/C/api/jobs/..." or
   "NS/rayjobs/NAME"). */
static void
serve(struct ray_history *hs, http_req *req, const char *path)
{
	char ns[254], kind[32], name[254], rest[512] = "";
	size_t i;
	int n;

	n = sscanf(path, "%253[^/]/%31[^/]/%253[^/]%511s", ns, kind, name,
	    rest);
	if (n < 3) {
		send_text(req, 404, "not found");
		return;
	}
	if (strcmp(kind, "rayjobs") == 0 && rest[0] == '\0') {
		for (i = hs->n; i > 0; i--)
			if (strcmp(hs->jobs[i - 1]->ns, ns) == 0 &&
			    strcmp(hs->jobs[i - 1]->rayjob, name) == 0) {
				cJSON *t = details_of(hs->jobs[i - 1]);

				if (t != NULL) {
					http_respond_json(req, 200, t);
					return;
				}
			}
		send_text(req, 404, "no kept job of that RayJob");
		return;
	}
	if (strcmp(kind, "clusters") != 0 ||
	    strncmp(rest, "/api/jobs", 9) != 0) {
		send_text(req, 404, "not found");
		return;
	}
	if (strcmp(rest, "/api/jobs") == 0 || strcmp(rest, "/api/jobs/") ==
	    0) {
		cJSON *list = cJSON_CreateArray(), *t;

		for (i = 0; i < hs->n; i++)
			if (strcmp(hs->jobs[i]->ns, ns) == 0 &&
			    strcmp(hs->jobs[i]->cluster, name) == 0 &&
			    (t = details_of(hs->jobs[i])) != NULL)
				cJSON_AddItemToArray(list, t);
		http_respond_json(req, 200, list);
		return;
	}
	{
		char id[254] = "", what[32] = "";
		struct hjob *hj;

		sscanf(rest + 10, "%253[^/]/%31s", id, what);
		if ((hj = find(hs, ns, name, id)) == NULL) {
			send_text(req, 404, "Job ID does not exist");
			return;
		}
		if (what[0] == '\0') {
			cJSON *t = details_of(hj);

			if (t != NULL)
				http_respond_json(req, 200, t);
			else
				send_text(req, 404, "Job ID does not exist");
		} else if (strcmp(what, "logs") == 0) {
			char *p = util_printf("%s.log", hj->base);
			char *text = util_read_file(p, NULL);
			cJSON *t = cJSON_CreateObject();

			cJSON_AddStringToObject(t, "logs", text ? text : "");
			free(text);
			free(p);
			http_respond_json(req, 200, t);
		} else
			send_text(req, 404, "not found");
	}
}

int
ray_history_serve(ray *r, http_req *req)
{
	if (strncmp(req->path, PREFIX, sizeof PREFIX - 1) != 0)
		return -1;
	if (strcmp(req->method, "GET") != 0) {
		send_text(req, 405, "the Ray job history is read-only");
		return 0;
	}
	if (r->history == NULL) {
		send_text(req, 503, "no Ray job history here (--ray-history-max"
		    "=0, or the ray role runs in another process)");
		return 0;
	}
	serve(r->history, req, req->path + sizeof PREFIX - 1);
	return 0;
}
