/*
 * API routing. A request path is matched, in order, against the health and
 * metadata endpoints (/healthz, /readyz, /livez, /version, /metrics),
 * discovery (/api, /apis/...), OpenAPI (/openapi/v3/...), and finally the
 * resource paths
 *   /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]]
 *   /apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME[/SUB]]
 * which are resolved against the resource registry and dispatched by method
 * to api_read.c, api_write.c and podlog.c. Every handler answers through
 * reply.c (replies that follow a write wait there for the store to report
 * the write durable) and none calls back into this file.
 *
 * Service and pod proxy paths go to proxy.c before all of that.
 *
 * Every request but the health checks and /version must carry credentials
 * (a bearer token, or a client certificate the TLS layer verified); none,
 * or a token nobody holds, is answered 401 before anything else happens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_int.h"
#include "api/apimetrics.h"
#include "api/discovery.h"
#include "api/impersonate.h"
#include "api/limits.h"
#include "api/reply.h"
#include "auth/rbac.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "net/tls.h"
#include "registry/kinds/kinds.h"
#include "registry/status.h"

api *
api_new(uv_loop_t *loop, store *st, registry *rg, watch_hub *hub,
    const char *data_dir)
{
	api *a = xcalloc(1, sizeof *a);

	a->data_dir = xstrdup(data_dir);
	a->loop = loop;
	a->st = st;
	a->rg = rg;
	a->hub = hub;
	return a;
}

void
api_free(api *a)
{
	if (a == NULL)
		return;
	if (a->nodes_hc != NULL)
		hclient_free(a->nodes_hc);
	if (a->pods_hc != NULL)
		hclient_free(a->pods_hc);
	tls_ctx_free(a->nodes_tls);
	free(a->node_cert);
	free(a->node_key);
	free(a->data_dir);
	free(a);
}

void
api_set_ready(api *a, int ready)
{
	a->ready = ready;
}

void
api_set_draining(api *a, int draining)
{
	a->draining = draining;
}

void
api_set_server(api *a, http_server *srv)
{
	a->srv = srv;
}

void
api_set_client(api *a, struct client *c)
{
	a->client = c;
	apiservice_start(a);
}

void
api_set_authn(api *a, authn *au)
{
	a->authn = au;
}

void
api_set_limits(api *a, limits *l)
{
	a->limits = l;
}

void
api_set_authorizer(api *a, rbac *authz)
{
	a->authz = authz;
}

void
api_set_history(api *a, api_history_fn fn, void *arg)
{
	a->history = fn;
	a->history_arg = arg;
}

void
api_set_proxy(api *a, api_proxy_fn fn, api_proxy_serves_fn serves, void *arg)
{
	a->proxy = fn;
	a->proxy_serves = serves;
	a->proxy_arg = arg;
}

void
api_set_pod_addr(api *a, api_pod_addr_fn fn, int (*open_socket)(int, int,
    int), void *arg)
{
	a->pod_addr = fn;
	a->pod_socket = open_socket;
	a->pod_addr_arg = arg;
}

void
api_set_nodes(api *a, int (*local)(void *, const char *), void *arg,
    const char *cert_pem, const char *key_pem)
{
	a->node_local = local;
	a->node_local_arg = arg;
	free(a->node_cert);
	free(a->node_key);
	a->node_cert = cert_pem ? xstrdup(cert_pem) : NULL;
	a->node_key = key_pem ? xstrdup(key_pem) : NULL;
}

void
api_set_usage(api *a, api_usage_fn fn, void *arg)
{
	a->usage = fn;
	a->usage_arg = arg;
}

void
api_set_streams(api *a, api_exec_fn exec, api_exec_fn attach,
    api_portforward_fn pf, void *arg)
{
	a->exec = exec;
	a->attach = attach;
	a->portforward = pf;
	a->exec_arg = arg;
}

/* exec, attach, portforward: connections into a pod's containers. */
static int
is_stream_sub(const struct route *rt)
{
	const struct kind_sub *s;

	return rt->sub != NULL && (s = kind_sub_find(rt->r, rt->sub)) !=
	    NULL && s->stream;
}

void
api_set_policy_sources(api *a, struct controller_rt *ctrl, struct sched *s)
{
	a->policy_ctrl = ctrl;
	a->policy_sched = s;
}

/* The verb a resource request asks for, in Kubernetes' words. */
static const char *
request_verb(const http_req *req, const struct route *rt, int watch)
{
	const char *m = req->method;

	/* A WebSocket's GET asks for create too (kube-apiserver 1.30+). */
	if (rt->r != NULL && is_stream_sub(rt))
		return "create";
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
		if (watch)
			return "watch";
		return rt->name == NULL ? "list" : "get";
	}
	if (strcmp(m, "POST") == 0)
		return "create";
	if (strcmp(m, "PUT") == 0)
		return "update";
	if (strcmp(m, "PATCH") == 0)
		return "patch";
	if (strcmp(m, "DELETE") == 0)
		return rt->name == NULL ? "deletecollection" : "delete";
	return "";
}

/*
 * Ask the authorizer whether rt->user may do this; answer 403 and return
 * -1 when not. r is NULL for a non-resource path.
 */
static int
authorize(api *a, http_req *req, struct route *rt, int watch)
{
	char verb[16], *reason = NULL;
	rbac_attrs at;
	size_t i;
	int ok;

	if (a->authz == NULL || rt->user == NULL)
		return 0;
	memset(&at, 0, sizeof at);
	if (rt->r == NULL) {
		for (i = 0; req->method[i] && i < sizeof verb - 1; i++)
			verb[i] = (char)(req->method[i] | 0x20);
		verb[i] = '\0';
		at.verb = verb;
		at.api_group = at.resource = at.subresource = at.ns =
		    at.name = "";
		at.path = req->path;
	} else {
		at.verb = request_verb(req, rt, watch);
		at.api_group = rt->r->group;
		at.resource = rt->r->plural;
		at.subresource = rt->sub ? rt->sub : "";
		at.ns = rt->ns ? rt->ns : "";
		at.name = rt->name ? rt->name : "";
		/* A namespace is its own namespace, as in kube's RequestInfo. */
		if (strcmp(rt->r->store_key, "namespaces") == 0 && rt->name)
			at.ns = rt->name;
	}
	ok = rbac_check(a->authz, rt->user, &at, &reason);
	if (!ok)
		reply_status(req, rt, rbac_forbidden_reason(rt->user, &at,
		    reason));
	free(reason);
	return ok ? 0 : -1;
}

void
api_set_reload(api *a, int (*fn)(void *, char **), void *arg)
{
	a->reload = fn;
	a->reload_arg = arg;
}

/* POST /apis/volray.io/v1/policy/reload: reload Lua scripts. */
static void
handle_reload(api *a, http_req *req, struct route *rt)
{
	char *cause = NULL;
	cJSON *s;

	rt->verb = "create";
	if (strcmp(req->method, "POST") != 0) {
		reply_status(req, rt, status_error(405, "MethodNotAllowed",
		    "use POST to reload"));
		return;
	}
	if (a->reload == NULL || a->reload(a->reload_arg, &cause) == 0) {
		s = status_success();
		json_set_str(s, "message", "Lua scripts reloaded");
		reply_json(req, rt, 200, s);
		return;
	}
	reply_status(req, rt, status_error(422, "Invalid",
	    "reload failed, the running scripts are unchanged: %s",
	    cause ? cause : "unknown error"));
	free(cause);
}

/* Split the path into at most 8 segments (in rt->buf). */
static int
segments(struct route *rt, const char *path, char **seg, int max)
{
	char *p, *save, *tok;
	int n = 0;

	snprintf(rt->buf, sizeof rt->buf, "%s", path);
	p = rt->buf;
	for (tok = strtok_r(p, "/", &save); tok != NULL && n < max;
	    tok = strtok_r(NULL, "/", &save))
		seg[n++] = tok;
	return tok != NULL ? -1 : n;
}

static void
not_found(http_req *req, struct route *rt, const char *path)
{
	cJSON *s = status_error(404, "NotFound", "the server could not find "
	    "the requested resource");

	(void)path;
	/* kube-apiserver's NotFound of nothing in particular: empty details,
	   which kubectl debug reads (ephemeral containers "disabled"). */
	if (cJSON_GetObjectItem(s, "details") == NULL)
		cJSON_AddObjectToObject(s, "details");
	reply_status(req, rt, s);
}

/* Resolve the resource part of a path; 0 on success. */
static int
route_resource(http_req *req, struct route *rt, char **seg, int n,
    const char *group, const char *version, int *watch)
{
	const resource *r, *nsres = resource_find("", "v1", "namespaces");
	int i = 0;

	if (n > 0 && strcmp(seg[0], "watch") == 0) {
		*watch = 1;
		i = 1;
	}
	if (n - i >= 3 && strcmp(seg[i], "namespaces") == 0 &&
	    (r = resource_find(group, version, seg[i + 2])) != NULL &&
	    r->namespaced) {
		rt->ns = seg[i + 1];
		i += 2;
	} else if (n - i >= 2 && strcmp(seg[i], "namespaces") == 0 &&
	    *group == '\0') {
		/* /api/v1/namespaces/NAME[/SUB] */
		rt->r = nsres;
		rt->name = seg[i + 1];
		rt->sub = n - i >= 3 ? seg[i + 2] : NULL;
		return n - i <= 3 ? 0 : -1;
	}
	if (i >= n)
		return -1;
	r = resource_find(group, version, seg[i]);
	if (r == NULL)
		return -1;
	rt->r = r;
	/* A namespaced object is only under its namespace's path. */
	if (r->namespaced && rt->ns == NULL && i + 1 < n)
		return -1;
	if (i + 1 < n)
		rt->name = seg[i + 1];
	if (i + 2 < n)
		rt->sub = seg[i + 2];
	if (i + 3 < n)
		return -1;
	(void)req;
	return 0;
}

static void
handle_special(api *a, http_req *req, struct route *rt, const char *path)
{
	cJSON *doc;

	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0 ||
	    strncmp(path, "/healthz/", 9) == 0 ||
	    strncmp(path, "/livez/", 7) == 0) {
		reply_text(req, 200, "ok");
		return;
	}
	if (strcmp(path, "/readyz") == 0 || strncmp(path, "/readyz/", 8) == 0) {
		if (a->ready && !a->draining)
			reply_text(req, 200, "ok");
		else
			reply_text(req, 503, "not ready");
		return;
	}
	/* The Python client's VersionApi asks for /version/. */
	if (strcmp(path, "/version") == 0 || strcmp(path, "/version/") == 0) {
		reply_json(req, rt, 200, discovery_version());
		return;
	}
	if (strcmp(path, "/metrics") == 0) {
		char *m = apimetrics_render(a->st, a->hub, a->srv ?
		    http_server_connections(a->srv) : 0), *all;

		if (a->limits != NULL) {
			all = util_printf("%s# TYPE "
			    "volray_apiserver_rejected_requests_total counter\n"
			    "volray_apiserver_rejected_requests_total %llu\n", m,
			    limits_rejected(a->limits));
			free(m);
			m = all;
		}

		http_respond(req, 200, "text/plain; version=0.0.4", m,
		    strlen(m));
		free(m);
		return;
	}
	if (strncmp(path, "/openapi/v3", 11) == 0) {
		if ((doc = discovery_openapi(path)) != NULL)
			reply_json(req, rt, 200, doc);
		else
			not_found(req, rt, path);
		return;
	}
	if ((doc = apiservice_discovery(a, path,
	    discovery_document(path))) != NULL) {
		reply_json(req, rt, 200, doc);
		return;
	}
	not_found(req, rt, path);
}

/* Paths anyone may read, as kube-apiserver's system:public-info-viewer. */
static int
public_path(const char *path)
{
	static const char *const open[] = { "/healthz", "/livez", "/readyz",
	    "/version" };
	size_t i, n;

	for (i = 0; i < sizeof open / sizeof open[0]; i++) {
		n = strlen(open[i]);
		if (strncmp(path, open[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/'))
			return 1;
	}
	return 0;
}

/*
 * Establish rt->user from the request's bearer token or, failing that, its
 * client certificate. -1 when neither is valid; as with kube-apiserver's
 * union of authenticators, either one that succeeds is enough.
 */
static int
authenticate(api *a, http_req *req, struct route *rt)
{
	const char *h = http_req_header(req, "Authorization"), *cn;
	const char *const *orgs;
	int norgs;

	if (h != NULL) {
		while (*h == ' ')
			h++;
		if (strncasecmp(h, "Bearer ", 7) == 0) {
			h += 7;
			while (*h == ' ')
				h++;
			if ((rt->user = authn_token(a->authn, h)) != NULL)
				return 0;
		}
	}
	if (http_req_client_cert(req, &cn, &orgs, &norgs) == 0) {
		authn_cert(cn, orgs, norgs, &rt->cert_user, rt->cert_groups,
		    ROUTE_MAX_GROUPS);
		rt->user = &rt->cert_user;
		return 0;
	}
	return -1;
}

/*
 * Count the request against the in-flight and per-user limits. Watches
 * and followed logs are long-running: they hold no in-flight slot, only
 * (watches) a place in the user's watch count.
 */
static cJSON *
admit(api *a, http_req *req, struct route *rt)
{
	const char *p = req->path;
	size_t n = strlen(p);
	int mutating = strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0;
	int watch = !mutating && (http_query_bool(req->query, "watch", 0) ||
	    ((strncmp(p, "/api/", 5) == 0 || strncmp(p, "/apis/", 6) == 0) &&
	    strstr(p, "/watch/") != NULL));
	int follow = !mutating && n > 4 && strcmp(p + n - 4, "/log") == 0 &&
	    http_query_bool(req->query, "follow", 0);

	return limits_admit(a->limits, req, rt->user, mutating, watch || follow,
	    watch);
}

/* Hand a resource request to its verb's handler by method. */
static void
dispatch(api *a, http_req *req, struct route *rt, int watch)
{
	const char *m = req->method;

	if (rt->sub != NULL && strcmp(rt->sub, "scale") == 0 &&
	    resource_has_scale(rt->r)) {
		api_write_scale(a, req, rt);
		return;
	}
	if (rt->r->computed) {
		/* metrics.k8s.io: get and list, nothing else. */
		if ((strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) ||
		    watch || http_query_bool(req->query, "watch", 0))
			reply_status(req, rt, status_error(405,
			    "MethodNotAllowed", "the server does not allow "
			    "this method on the requested resource"));
		else if (rt->name == NULL)
			metricsapi_list(a, req, rt);
		else
			metricsapi_get(a, req, rt);
		return;
	}
	/* APIServices: the Local ones are answered there, not stored. */
	if (strcmp(rt->r->store_key, "apiservices.apiregistration.k8s.io") ==
	    0 && apiservice_serve(a, req, rt, watch))
		return;
	if (is_stream_sub(rt) && rt->name != NULL) {
		podstream_serve(a, req, rt);
		return;
	}
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
		if (rt->name == NULL) {
			if (watch || http_query_bool(req->query, "watch", 0))
				api_read_watch(a, req, rt);
			else
				api_read_list(a, req, rt);
		} else if (rt->sub != NULL && strcmp(rt->sub, "log") == 0)
			podlog_get(a, req, rt);
		else if (watch) {
			/* /watch/.../NAME: a watch with a name filter. */
			api_read_watch(a, req, rt);
		} else
			api_read_get(a, req, rt);
	} else if (strcmp(m, "POST") == 0) {
		if (rt->name == NULL && rt->r->namespaced && rt->ns == NULL)
			/* A namespaced kind is created in a namespace's path
			   only: kube-apiserver's 405 for /api/v1/pods. */
			reply_status(req, rt, status_error(405,
			    "MethodNotAllowed", "the server does not allow "
			    "this method on the requested resource"));
		else if (rt->name == NULL)
			api_write_create(a, req, rt);
		else if (rt->sub != NULL && strcmp(rt->sub, "binding") == 0)
			api_write_bind(a, req, rt);
		else if (rt->sub != NULL && strcmp(rt->sub, "eviction") == 0)
			api_write_evict(a, req, rt);
		else
			reply_status(req, rt, status_error(405,
			    "MethodNotAllowed", "the server does not allow "
			    "this method on the requested resource"));
	} else if (strcmp(m, "PUT") == 0 && rt->name != NULL) {
		api_write_update(a, req, rt);
	} else if (strcmp(m, "PATCH") == 0 && rt->name != NULL) {
		api_write_patch(a, req, rt);
	} else if (strcmp(m, "DELETE") == 0) {
		if (rt->name != NULL)
			api_write_delete(a, req, rt);
		else
			api_write_delete_collection(a, req, rt);
	} else
		reply_status(req, rt, status_error(405,
		    "MethodNotAllowed", "the server does not allow this "
		    "method on the requested resource"));
}

void
api_handle(http_req *req, void *arg)
{
	api *a = arg;
	struct route rt;
	char *seg[10];
	const char *group, *version, *m = req->method;
	int n, base, watch = 0;
	cJSON *st;

	memset(&rt, 0, sizeof rt);
	rt.t0 = util_usec();
	rt.verb = "get";
	if (a->authn != NULL && !public_path(req->path) &&
	    authenticate(a, req, &rt) != 0) {
		reply_status(req, &rt, status_error(401, "Unauthorized",
		    "Unauthorized"));
		return;
	}
	if (a->authn != NULL && !public_path(req->path) &&
	    impersonate(a->authz, req, &rt) != 0)
		return;
	if (a->limits != NULL && !public_path(req->path) &&
	    (st = admit(a, req, &rt)) != NULL) {
		reply_status(req, &rt, st);
		return;
	}
	if (proxy_serve(a, req, &rt))
		return;
	/* The Ray job history: Ray's Jobs API paths, deeper than ours. */
	if (strncmp(req->path, "/apis/volray.io/v1/rayhistory/", 30) == 0) {
		if (authorize(a, req, &rt, 0) == 0 && (a->history == NULL ||
		    a->history(a->history_arg, req) != 0))
			not_found(req, &rt, req->path);
		return;
	}
	n = segments(&rt, req->path, seg, 10);
	if (n < 0) {
		not_found(req, &rt, req->path);
		return;
	}
	if (strcmp(req->path, "/apis/volray.io/v1/policy/reload") == 0) {
		if (authorize(a, req, &rt, 0) == 0)
			handle_reload(a, req, &rt);
		return;
	}
	if (strcmp(req->path, "/apis/volray.io/v1/policy") == 0) {
		if (authorize(a, req, &rt, 0) == 0)
			policyinfo_get(a, req, &rt);
		return;
	}
	if (explaininfo_path(req->path)) {
		if (authorize(a, req, &rt, 0) == 0)
			explaininfo_get(a, req, &rt);
		return;
	}
	/* An aggregated group-version: its server answers. */
	if (n >= 3 && strcmp(seg[0], "apis") == 0 &&
	    apiservice_proxy(a, req, &rt, seg[1], seg[2]))
		return;
	if (n >= 3 && strcmp(seg[0], "api") == 0) {
		group = "";
		version = seg[1];
		base = 2;
	} else if (n >= 4 && strcmp(seg[0], "apis") == 0) {
		group = seg[1];
		version = seg[2];
		base = 3;
	} else {
		if (public_path(req->path) || authorize(a, req, &rt, 0) == 0)
			handle_special(a, req, &rt, req->path);
		return;
	}
	if (route_resource(req, &rt, seg + base, n - base, group, version,
	    &watch) != 0 || rt.r == NULL) {
		not_found(req, &rt, req->path);
		return;
	}
	if (rt.r->namespaced && rt.ns == NULL && rt.name != NULL &&
	    strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0 &&
	    strcmp(m, "POST") != 0) {
		/* Namespaced object without a namespace in the path. */
		not_found(req, &rt, req->path);
		return;
	}
	if (rt.sub != NULL && strcmp(rt.sub, "status") != 0 &&
	    !(strcmp(rt.sub, "scale") == 0 && resource_has_scale(rt.r)) &&
	    kind_sub_find(rt.r, rt.sub) == NULL) {
		not_found(req, &rt, req->path);
		return;
	}
	if (rt.sub != NULL && strcmp(rt.sub, "status") == 0 &&
	    !rt.r->has_status) {
		not_found(req, &rt, req->path);
		return;
	}
	if (authorize(a, req, &rt, (strcmp(m, "GET") == 0 ||
	    strcmp(m, "HEAD") == 0) && (watch || http_query_bool(req->query,
	    "watch", 0))) != 0)
		return;
	if (a->draining && strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) {
		reply_status(req, &rt, status_error(503,
		    "ServiceUnavailable", "the server is shutting down"));
		return;
	}
	if (store_is_etcd(a->st))
		api_etcd_run(a, req, &rt, watch, dispatch);
	else
		dispatch(a, req, &rt, watch);
}
