/*
 * The nodes' endpoint, the kubelet's port for the API server (endpoint.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/endpoint.h"
#include "net/tls.h"
#include "node/logfile.h"
#include "node/podproxy.h"
#include "registry/status.h"

#define API_SERVER_CN	"kube-apiserver-kubelet-client"

struct node_endpoint {
	uv_loop_t *loop;
	client *c;
	char *data_dir;
	http_server *srv;
	tls_ctx *tls;
	node_endpoint_proxy_fn proxy;
	node_endpoint_serves_fn serves;
	void *proxy_arg;
	node_mgr *mgr;			/* exec, port-forward; NULL: none */
	char *prefix;			/* node_endpoint_set_handler's */
	node_endpoint_handler_fn handler;
	void *handler_arg;
};

static void
reply(http_req *req, cJSON *st)
{
	http_respond_json(req, status_code(st), st);
}

/* Whether the request comes from the API server; answered when not. */
static int
authorized(http_req *req, const char *subresource)
{
	const char *cn, *const *orgs;
	int norgs, i;

	if (http_req_client_cert(req, &cn, &orgs, &norgs) != 0) {
		reply(req, status_error(401, "Unauthorized", "Unauthorized"));
		return 0;
	}
	if (cn != NULL && strcmp(cn, API_SERVER_CN) == 0)
		return 1;
	for (i = 0; i < norgs; i++)
		if (strcmp(orgs[i], "system:masters") == 0)
			return 1;
	reply(req, status_error(403, "Forbidden", "Forbidden (user=%s, "
	    "verb=%s, resource=nodes, subresource=%s)", cn ? cn : "",
	    strcmp(req->method, "GET") == 0 ? "get" : "create", subresource));
	return 0;
}

static const store_obj *
get_pod(const void *c, const char *ns, const char *name)
{
	return client_get(c, "pods", ns, name);
}

/* Whether s is a path segment that names a file in the pods' tree. */
static int
segment_ok(const char *s)
{
	return *s != '\0' && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
	    strchr(s, '/') == NULL;
}

static void
container_logs(node_endpoint *e, http_req *req)
{
	char ns[254], pod[254], ctr[254], path[PATH_MAX];
	int previous = http_query_bool(req->query, "previous", 0), n = 0;
	struct logfile_opts lo;
	const store_obj *o;

	if (sscanf(req->path, "/containerLogs/%253[^/]/%253[^/]/%253[^/]%n",
	    ns, pod, ctr, &n) != 3 || req->path[n] != '\0' ||
	    !segment_ok(ns) || !segment_ok(pod) || !segment_ok(ctr)) {
		reply(req, status_bad_request("want /containerLogs/NAMESPACE/"
		    "POD/CONTAINER"));
		return;
	}
	if ((o = client_get(e->c, "pods", ns, pod)) == NULL) {
		reply(req, status_error(404, "NotFound", "pod %s/%s not found",
		    ns, pod));
		return;
	}
	snprintf(path, sizeof path, "%s/pods/%s/%s/%s%s.log", e->data_dir, ns,
	    pod, ctr, previous ? ".previous" : "");
	if (previous && access(path, R_OK) != 0) {
		reply(req, status_bad_request("previous terminated container "
		    "\"%s\" in pod \"%s\" not found", ctr, pod));
		return;
	}
	logfile_opts_query(req->query, &lo);
	if (previous)
		lo.follow = 0;
	logfile_serve(e->loop, req, path, &lo, o, get_pod, e->c);
}

static void
pod_proxy(node_endpoint *e, http_req *req)
{
	char ns[254], pod[254];
	const char *path;
	int port = 0, n = 0;

	if (sscanf(req->path, "/volray/proxy/%253[^/]/%253[^/]/%d%n", ns, pod,
	    &port, &n) != 3 || (req->path[n] != '\0' && req->path[n] != '/')) {
		reply(req, status_bad_request("want /volray/proxy/NAMESPACE/"
		    "POD/PORT/PATH"));
		return;
	}
	path = req->path[n] != '\0' ? req->path + n : "/";
	if (e->proxy != NULL && e->serves(e->proxy_arg, ns, pod, port) &&
	    e->proxy(e->proxy_arg, req, ns, pod, port, path) == 0)
		return;
	/* A local pod's own server (real Ray's dashboard). */
	if (podproxy_forward(e->mgr, e->loop, req, ns, pod, port, path) == 0)
		return;
	reply(req, status_error(503, "ServiceUnavailable", "error trying to "
	    "reach pod %s/%s on port %d: nothing serves it on this node", ns,
	    pod, port));
}

/*
 * /exec/NS/POD/CONTAINER and /portForward/NS/POD, the kubelet's paths,
 * served by the node manager (exec.c, portfwd.c) on the request itself.
 */
static void
pod_stream(node_endpoint *e, http_req *req, int exec)
{
	char ns[254], pod[254], ctr[254], verb[8], *msg = NULL;
	int n = 0, code, ok;

	if (exec)
		ok = sscanf(req->path, "/%7[a-z]/%253[^/]/%253[^/]/%253[^/]%n",
		    verb, ns, pod, ctr, &n) == 4;
	else
		ok = sscanf(req->path, "/portForward/%253[^/]/%253[^/]%n", ns,
		    pod, &n) == 2;
	if (!ok || req->path[n] != '\0') {
		reply(req, status_bad_request(exec ? "want /exec/NAMESPACE/POD/"
		    "CONTAINER or /attach/NAMESPACE/POD/CONTAINER" :
		    "want /portForward/NAMESPACE/POD"));
		return;
	}
	if (e->mgr == NULL) {
		reply(req, status_error(404, "NotFound", "no pods run here"));
		return;
	}
	if (!exec)
		code = node_portforward_serve(e->mgr, req, ns, pod, &msg);
	else if (strcmp(verb, "attach") == 0)
		code = node_attach_serve(e->mgr, req, ns, pod, ctr, &msg);
	else
		code = node_exec_serve(e->mgr, req, ns, pod, ctr, &msg);
	if (code != 0)
		reply(req, status_error(code, code == 404 ? "NotFound" :
		    code == 500 ? "InternalError" : "BadRequest", "%s", msg));
	free(msg);
}

static void
handle(http_req *req, void *arg)
{
	node_endpoint *e = arg;

	if (strcmp(req->path, "/healthz") == 0) {
		http_respond(req, 200, "text/plain", "ok", 2);
		return;
	}
	if (strncmp(req->path, "/containerLogs/", 15) == 0) {
		if (authorized(req, "log"))
			container_logs(e, req);
		return;
	}
	if (strncmp(req->path, "/exec/", 6) == 0) {
		if (authorized(req, "exec"))
			pod_stream(e, req, 1);
		return;
	}
	if (strncmp(req->path, "/attach/", 8) == 0) {
		if (authorized(req, "attach"))
			pod_stream(e, req, 1);
		return;
	}
	if (strncmp(req->path, "/portForward/", 13) == 0) {
		if (authorized(req, "portforward"))
			pod_stream(e, req, 0);
		return;
	}
	if (strncmp(req->path, "/volray/proxy/", 14) == 0) {
		if (authorized(req, "proxy"))
			pod_proxy(e, req);
		return;
	}
	if (e->prefix != NULL && strncmp(req->path, e->prefix,
	    strlen(e->prefix)) == 0) {
		if (authorized(req, "proxy"))
			e->handler(e->handler_arg, req, req->path +
			    strlen(e->prefix));
		return;
	}
	reply(req, status_error(404, "NotFound", "the node endpoint serves "
	    "no %s", req->path));
}

void
node_endpoint_set_handler(node_endpoint *e, const char *prefix,
    node_endpoint_handler_fn fn, void *arg)
{
	free(e->prefix);
	e->prefix = xstrdup(prefix);
	e->handler = fn;
	e->handler_arg = arg;
}

node_endpoint *
node_endpoint_new(uv_loop_t *loop, client *c, const char *data_dir,
    tls_ctx *tls)
{
	node_endpoint *e = xcalloc(1, sizeof *e);

	e->tls = tls;
	e->loop = loop;
	e->c = c;
	e->data_dir = xstrdup(data_dir);
	return e;
}

void
node_endpoint_set_mgr(node_endpoint *e, node_mgr *m)
{
	e->mgr = m;
}

void
node_endpoint_set_proxy(node_endpoint *e, node_endpoint_proxy_fn fn,
    node_endpoint_serves_fn serves, void *arg)
{
	e->proxy = fn;
	e->serves = serves;
	e->proxy_arg = arg;
}

int
node_endpoint_listen(node_endpoint *e, const char *host, int port,
    char **cause)
{
	if (http_server_listen(e->loop, host, port, handle, e, &e->srv,
	    cause) != 0)
		return -1;
	http_server_use_tls(e->srv, e->tls);
	return 0;
}

int
node_endpoint_port(const node_endpoint *e)
{
	return e->srv != NULL ? http_server_port(e->srv) : -1;
}

void
node_endpoint_free(node_endpoint *e)
{
	if (e == NULL)
		return;
	if (e->srv != NULL)
		http_server_close(e->srv);
	podproxy_close();
	tls_ctx_free(e->tls);
	free(e->data_dir);
	free(e->prefix);
	free(e);
}
