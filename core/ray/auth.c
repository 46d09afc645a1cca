/*
 * Ray's token authentication (RAY_AUTH_MODE=token, Ray 2.52+) for the
 * heads volrayd serves. A head pod whose Ray container (the first) has
 * RAY_AUTH_MODE=token wants, on every dashboard request but the health
 * checks and /api/authentication_mode, the token of its RAY_AUTH_TOKEN
 * (a value, or a Secret's key as KubeRay sets it), as Ray's dashboard
 * takes it: "Authorization: Bearer TOKEN", else "X-Ray-Authorization:
 * Bearer TOKEN" (what clients send through a proxy: the API server's
 * proxies drop the Authorization header, which carried the Kubernetes
 * credentials, as kube-apiserver does once it has authenticated a
 * request), else the cookie ray-authentication-token. None: 401
 * "Unauthorized: Missing authentication token"; a wrong one: 403
 * "Forbidden: Invalid authentication token", Ray's words.
 * RAY_ENABLE_K8S_TOKEN_AUTH (Kubernetes-delegated tokens) is not checked
 * here: such a head takes any bearer token (documented).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

char *
ray_pod_env(client *cl, const char *ns, const cJSON *c, const char *name)
{
	const cJSON *e, *ref;
	const store_obj *o;
	char *out = NULL;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "env")) {
		const char *n = json_str(e, "name");

		if (n == NULL || strcmp(n, name) != 0)
			continue;
		if (json_str(e, "value") != NULL)
			return xstrdup(json_str(e, "value"));
		ref = json_at(e, "valueFrom.secretKeyRef");
		if (ref == NULL || json_str(ref, "name") == NULL ||
		    json_str(ref, "key") == NULL)
			return NULL;
		if ((o = client_get(cl, "secrets", ns, json_str(ref, "name"))) !=
		    NULL) {
			cJSON *t = store_obj_tree(o);
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(
			    json_at(t, "data"), json_str(ref, "key"));
			size_t len;

			if (cJSON_IsString(d) &&
			    util_base64_decode(d->valuestring, &out, &len) != 0)
				out = NULL;
			cJSON_Delete(t);
		}
		return out;
	}
	return NULL;
}

/* The container of pod ns/name whose env has want (NULL: the first). */
static const cJSON *
container(const cJSON *pod, const char *want)
{
	const cJSON *c, *e;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers")) {
		if (want == NULL)
			return c;
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "env"))
			if (json_str(e, "name") != NULL &&
			    strcmp(json_str(e, "name"), want) == 0)
				return c;
	}
	return NULL;
}

char *
ray_auth_pod_token(ray *r, const char *ns, const char *pod, const char *with,
    int *mode_token)
{
	const store_obj *o = client_get(r->c, "pods", ns, pod);
	const cJSON *c;
	char *mode, *tok = NULL;
	cJSON *t;

	*mode_token = 0;
	if (o == NULL)
		return NULL;
	t = store_obj_tree(o);
	if ((c = container(t, with)) != NULL) {
		mode = ray_pod_env(r->c, ns, c, "RAY_AUTH_MODE");
		*mode_token = mode != NULL && strcmp(mode, "token") == 0;
		free(mode);
		tok = ray_pod_env(r->c, ns, c, "RAY_AUTH_TOKEN");
	}
	cJSON_Delete(t);
	return tok;
}

static int
open_path(const char *path)
{
	static const char *const open[] = { "/api/healthz", "/api/gcs_healthz",
	    "/api/local_raylet_healthz", "/api/authentication_mode", NULL };
	int i;

	for (i = 0; open[i] != NULL; i++)
		if (strcmp(path, open[i]) == 0)
			return 1;
	return 0;
}

/* The bearer token of a request, as Ray's middleware finds it. */
static const char *
request_token(http_req *req, int proxied, char *cookie, size_t size)
{
	const char *v = proxied ? NULL : http_req_header(req, "Authorization");
	const char *c;

	if (v == NULL || *v == '\0')
		v = http_req_header(req, "X-Ray-Authorization");
	if (v != NULL && *v != '\0')
		return strncmp(v, "Bearer ", 7) == 0 ? v + 7 : "";
	if ((c = http_req_header(req, "Cookie")) != NULL &&
	    (c = strstr(c, "ray-authentication-token=")) != NULL) {
		c += strlen("ray-authentication-token=");
		util_strf(cookie, size, "%.*s", (int)strcspn(c, "; "), c);
		return cookie;
	}
	return NULL;
}

int
ray_auth_check(struct ray_head *h, http_req *req, const char *path,
    int proxied)
{
	char cookie[512];
	const char *given;
	char *want;
	int token_mode, ok;

	if (strcmp(path, "/api/authentication_mode") == 0) {
		want = ray_auth_pod_token(h->r, h->ns, h->name, NULL,
		    &token_mode);
		free(want);
		const char *body = token_mode ?
		    "{\"authentication_mode\": \"token\"}" :
		    "{\"authentication_mode\": \"disabled\"}";

		http_respond(req, 200, "application/json", body, strlen(body));
		return -1;
	}
	if (open_path(path))
		return 0;
	want = ray_auth_pod_token(h->r, h->ns, h->name, NULL, &token_mode);
	if (!token_mode || want == NULL) {
		/* A token mode without a token: Ray's head would not start;
		   this one answers as if unauthenticated. */
		free(want);
		return 0;
	}
	given = request_token(req, proxied, cookie, sizeof cookie);
	if (given == NULL) {
		free(want);
		http_respond(req, 401, "text/plain; charset=utf-8",
		    "Unauthorized: Missing authentication token", 42);
		return -1;
	}
	ok = strcmp(given, want) == 0;
	free(want);
	if (!ok) {
		http_respond(req, 403, "text/plain; charset=utf-8",
		    "Forbidden: Invalid authentication token", 39);
		return -1;
	}
	return 0;
}
