/*
 * Ray Serve's REST API, simulated: PUT /api/serve/applications/ takes a
 * serveConfigV2-style body ({"applications": [{"name", "route_prefix",
 * "import_path", "deployments": [...]}, ...], ...}) and replaces the set
 * of applications, as Serve's declarative API does. An application that
 * is new or whose config changed is DEPLOYING (its deployments UPDATING)
 * for the head's volray.io/sim-serve-duration annotation (default 1s),
 * then RUNNING (HEALTHY); unchanged ones keep their state. GET answers
 * ServeInstanceDetails as Ray's dashboard does; DELETE removes them all.
 * Status is computed when asked, so no timer runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define DEFAULT_DEPLOY_MS 1000

struct serve_app {
	char *name;
	cJSON *config;			/* the application's part of the body */
	uint64_t deployed_ms;		/* Unix ms of the last (re)deploy */
	uint64_t ready_ms;		/* RUNNING from then on */
	struct serve_app *next;
};

/* A Go duration of whole units ("1s", "500ms", "2m") in ms; def if bad. */
static uint64_t
deploy_ms(const struct ray_head *h)
{
	const char *s = h->sim_serve_duration;
	char *end;
	double v;

	if (s == NULL)
		return DEFAULT_DEPLOY_MS;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return DEFAULT_DEPLOY_MS;
	if (strcmp(end, "ms") == 0)
		return (uint64_t)v;
	if (strcmp(end, "s") == 0)
		return (uint64_t)(v * 1000);
	if (strcmp(end, "m") == 0)
		return (uint64_t)(v * 60000);
	return DEFAULT_DEPLOY_MS;
}

static void
app_free(struct serve_app *a)
{
	free(a->name);
	cJSON_Delete(a->config);
	free(a);
}

void
ray_serve_free(struct ray_head *h)
{
	struct serve_app *a, *next;

	for (a = h->apps; a != NULL; a = next) {
		next = a->next;
		app_free(a);
	}
	h->apps = NULL;
	cJSON_Delete(h->serve_config);
	h->serve_config = NULL;
}

void
ray_serve_delete(struct ray_head *h)
{
	ray_serve_free(h);
}

/* Check a PUT body as Serve's schema would; NULL or the error text. */
static char *
check_config(const cJSON *b)
{
	const cJSON *apps = json_at(b, "applications"), *a, *o;

	if (!cJSON_IsObject(b))
		return xstrdup("ValidationError: the config must be a JSON "
		    "object");
	if (!cJSON_IsArray(apps))
		return xstrdup("ValidationError: 1 validation error for "
		    "ServeDeploySchema\napplications\n  field required "
		    "(type=value_error.missing)");
	cJSON_ArrayForEach(a, apps) {
		const char *name = json_str(a, "name");

		if (!cJSON_IsObject(a) || json_str(a, "import_path") == NULL)
			return xstrdup("ValidationError: 1 validation error for "
			    "ServeDeploySchema\napplications -> import_path\n  "
			    "field required (type=value_error.missing)");
		cJSON_ArrayForEach(o, apps) {
			const char *other = json_str(o, "name");

			if (o == a)
				break;
			if (strcmp(other ? other : "default", name ? name :
			    "default") == 0)
				return util_printf("ValidationError: Found "
				    "duplicate application name '%s'. Please "
				    "ensure each application's name is unique.",
				    name ? name : "default");
		}
	}
	return NULL;
}

int
ray_serve_put(struct ray_head *h, const char *body, size_t len, char **text)
{
	cJSON *b = cJSON_ParseWithLength(body, len);
	const cJSON *c;
	struct serve_app *old = h->apps, *next = NULL, **tail = &next, *a, **pp;
	char *err;
	uint64_t now = util_now_ms();

	if (b == NULL) {
		*text = xstrdup("json.decoder.JSONDecodeError: the request body "
		    "is not valid JSON");
		return 400;
	}
	if ((err = check_config(b)) != NULL) {
		cJSON_Delete(b);
		*text = err;
		return 400;
	}
	cJSON_ArrayForEach(c, json_at(b, "applications")) {
		const char *name = json_str(c, "name") ? json_str(c, "name") :
		    "default";

		for (pp = &old; *pp != NULL; pp = &(*pp)->next)
			if (strcmp((*pp)->name, name) == 0)
				break;
		if ((a = *pp) != NULL) {
			*pp = a->next;
			if (!json_equal(a->config, c)) {
				cJSON_Delete(a->config);
				a->config = cJSON_Duplicate(c, 1);
				a->deployed_ms = now;
				a->ready_ms = now + deploy_ms(h);
			}
		} else {
			a = xcalloc(1, sizeof *a);
			a->name = xstrdup(name);
			a->config = cJSON_Duplicate(c, 1);
			a->deployed_ms = now;
			a->ready_ms = now + deploy_ms(h);
		}
		a->next = NULL;
		*tail = a;
		tail = &a->next;
	}
	/* Applications left out of the new config are deleted. */
	while (old != NULL) {
		a = old->next;
		app_free(old);
		old = a;
	}
	h->apps = next;
	cJSON_Delete(h->serve_config);
	h->serve_config = b;
	*text = NULL;
	return 200;
}

static cJSON *
app_details(const struct serve_app *a, uint64_t now)
{
	cJSON *t = cJSON_CreateObject(), *deps = cJSON_CreateObject(), *d;
	const cJSON *dc;
	int running = now >= a->ready_ms;
	const char *rp = json_str(a->config, "route_prefix");

	json_set_str(t, "name", a->name);
	json_set_str(t, "route_prefix", rp ? rp : "/");
	json_set(t, "docs_path", cJSON_CreateNull());
	json_set_str(t, "status", running ? "RUNNING" : "DEPLOYING");
	json_set_str(t, "message", "");
	json_set_num(t, "last_deployed_time_s", (double)a->deployed_ms / 1000);
	json_set(t, "deployed_app_config", cJSON_Duplicate(a->config, 1));
	json_set_str(t, "source", "declarative");
	cJSON_ArrayForEach(dc, json_at(a->config, "deployments")) {
		const char *name = json_str(dc, "name");
		const cJSON *n = json_at(dc, "num_replicas");

		if (name == NULL)
			continue;
		d = cJSON_CreateObject();
		json_set_str(d, "name", name);
		json_set_str(d, "status", running ? "HEALTHY" : "UPDATING");
		json_set_str(d, "status_trigger", running ?
		    "CONFIG_UPDATE_COMPLETED" : "CONFIG_UPDATE_STARTED");
		json_set_str(d, "message", "");
		json_set(d, "deployment_config", cJSON_Duplicate(dc, 1));
		json_set_num(d, "target_num_replicas", cJSON_IsNumber(n) ?
		    n->valuedouble : 1);
		json_set(d, "required_resources", cJSON_CreateObject());
		json_set(d, "replicas", cJSON_CreateArray());
		json_set(deps, name, d);
	}
	json_set(t, "deployments", deps);
	return t;
}

cJSON *
ray_serve_state(const struct ray_head *h)
{
	cJSON *t = cJSON_CreateObject(), *apps = cJSON_CreateArray(), *x;
	const struct serve_app *a;

	json_set(t, "config", h->serve_config ?
	    cJSON_Duplicate(h->serve_config, 1) : cJSON_CreateNull());
	for (a = h->apps; a != NULL; a = a->next) {
		x = cJSON_CreateObject();
		json_set_str(x, "name", a->name);
		json_set(x, "config", cJSON_Duplicate(a->config, 1));
		json_set_num(x, "deployed_ms", (double)a->deployed_ms);
		json_set_num(x, "ready_ms", (double)a->ready_ms);
		cJSON_AddItemToArray(apps, x);
	}
	json_set(t, "applications", apps);
	return t;
}

void
ray_serve_restore(struct ray_head *h, const cJSON *state)
{
	struct serve_app *a, **tail = &h->apps;
	const cJSON *x, *c;

	if (!cJSON_IsObject(state))
		return;
	ray_serve_free(h);
	c = json_at(state, "config");
	h->serve_config = cJSON_IsObject(c) ? cJSON_Duplicate(c, 1) : NULL;
	cJSON_ArrayForEach(x, json_at(state, "applications")) {
		if (json_str(x, "name") == NULL)
			continue;
		a = xcalloc(1, sizeof *a);
		a->name = xstrdup(json_str(x, "name"));
		a->config = cJSON_Duplicate(json_at(x, "config"), 1);
		if (a->config == NULL)
			a->config = cJSON_CreateObject();
		c = json_at(x, "deployed_ms");
		a->deployed_ms = cJSON_IsNumber(c) ? (uint64_t)c->valuedouble : 0;
		c = json_at(x, "ready_ms");
		a->ready_ms = cJSON_IsNumber(c) ? (uint64_t)c->valuedouble : 0;
		*tail = a;
		tail = &a->next;
	}
}

cJSON *
ray_serve_get(struct ray_head *h)
{
	cJSON *t = cJSON_CreateObject(), *apps = cJSON_CreateObject(), *ho;
	const struct serve_app *a;
	const cJSON *tc;
	uint64_t now = util_now_ms();

	json_set(t, "controller_info", cJSON_CreateObject());
	json_set_str(t, "proxy_location", "EveryNode");
	ho = cJSON_CreateObject();
	json_set_str(ho, "host", "0.0.0.0");
	json_set_num(ho, "port", 8000);
	json_set(t, "http_options", ho);
	json_set(t, "proxies", cJSON_CreateObject());
	json_set_str(t, "deploy_mode", "MULTI_APP");
	for (a = h->apps; a != NULL; a = a->next)
		json_set(apps, a->name, app_details(a, now));
	json_set(t, "applications", apps);
	tc = json_at(h->serve_config, "target_capacity");
	json_set(t, "target_capacity", cJSON_IsNumber(tc) ?
	    cJSON_CreateNumber(tc->valuedouble) : cJSON_CreateNull());
	return t;
}

/* Does prefix p take path (Serve's route matching: whole segments)? */
static int
prefix_takes(const char *p, const char *path)
{
	size_t n = strlen(p);

	if (strcmp(p, "/") == 0)
		return 1;
	if (strncmp(path, p, n) != 0)
		return 0;
	return path[n] == '\0' || path[n] == '/' || path[n] == '?' ||
	    p[n - 1] == '/';
}

const char *
ray_serve_route(const struct ray_head *h, const char *path,
    const char **prefix, int *running)
{
	const struct serve_app *a, *best = NULL;
	const char *bp = NULL;
	uint64_t now = util_now_ms();

	for (a = h->apps; a != NULL; a = a->next) {
		const char *rp = json_str(a->config, "route_prefix");

		if (rp == NULL)
			rp = "/";
		if (prefix_takes(rp, path) && (bp == NULL ||
		    strlen(rp) > strlen(bp))) {
			best = a;
			bp = rp;
		}
	}
	if (best == NULL)
		return NULL;
	*prefix = bp;
	*running = now >= best->ready_ms;
	return best->name;
}

cJSON *
ray_serve_routes(const struct ray_head *h)
{
	cJSON *t = cJSON_CreateObject();
	const struct serve_app *a;

	for (a = h->apps; a != NULL; a = a->next) {
		const char *rp = json_str(a->config, "route_prefix");

		json_set_str(t, rp ? rp : "/", a->name);
	}
	return t;
}
