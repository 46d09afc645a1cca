/*
 * The API server's proxies, as kube-apiserver serves them:
 *   /api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH
 *   /api/v1/namespaces/NS/pods/[SCHEME:]NAME[:PORT]/proxy/PATH
 * authorized as the request's verb (get, create, update, patch, delete)
 * on services/proxy or pods/proxy with the NAME token as the name. A
 * Service's port (number or name) maps to its targetPort on the Running
 * pods its selector picks (a named targetPort through the pods' container
 * ports); the request goes to the first of them whose in-process server
 * serves that port (the Ray heads, set by api_set_proxy), else to one
 * this process reaches itself (the local node's pods, api_set_pod_addr:
 * plain HTTP to the pod's address and port, as kube-apiserver dials a
 * pod's IP; real Ray's dashboard this way), else to the first on a node
 * another process runs (an agent), through that node's endpoint
 * (nodeproxy.c, /volray/proxy/NS/POD/PORT/PATH there). No such pod is a
 * 503 as kube-apiserver answers when a service has no endpoints, or
 * when the connection to the pod is refused.
 * A Gateway's Service (annotated volray.io/gateway) routes by the
 * Gateway's HTTPRoutes instead: weighted backend Services, as a gateway
 * implementation's data plane does (gateway_route).
 *   /api/v1/nodes/NAME/proxy/PATH
 * goes to the node's endpoint at PATH (nodes/proxy), as kube-apiserver's
 * node proxy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "auth/rbac.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "net/hclient.h"
#include "registry/status.h"

static const char *
method_verb(const char *m)
{
	if (strcmp(m, "POST") == 0)
		return "create";
	if (strcmp(m, "PUT") == 0)
		return "update";
	if (strcmp(m, "PATCH") == 0)
		return "patch";
	if (strcmp(m, "DELETE") == 0)
		return "delete";
	return "get";
}

/* Split [scheme:]name[:port] (in buf) into name and port ("" if none). */
static void
split_target(char *buf, char **name, char **port)
{
	char *a = strchr(buf, ':'), *b = a ? strchr(a + 1, ':') : NULL;

	if (b != NULL) {		/* scheme:name:port */
		*a = *b = '\0';
		*name = a + 1;
		*port = b + 1;
	} else if (a != NULL) {		/* name:port */
		*a = '\0';
		*name = buf;
		*port = a + 1;
	} else {
		*name = buf;
		*port = "";
	}
}

static int
is_number(const char *s)
{
	return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

/* The container port of pod named name, or 0. */
static int
named_port(const cJSON *pod, const char *name)
{
	const cJSON *c, *p;

	cJSON_ArrayForEach(c, json_at(pod, "spec.containers"))
		cJSON_ArrayForEach(p, json_at(c, "ports"))
			if (json_str(p, "name") && strcmp(json_str(p, "name"),
			    name) == 0 && cJSON_IsNumber(json_at(p,
			    "containerPort")))
				return json_at(p, "containerPort")->valueint;
	return 0;
}

static int
pod_running(const cJSON *pod)
{
	const char *ph = json_str(pod, "status.phase");

	return ph != NULL && strcmp(ph, "Running") == 0 &&
	    json_at(pod, "metadata.deletionTimestamp") == NULL;
}

static int
selects(const cJSON *sel, const cJSON *labels)
{
	const cJSON *kv, *v;

	if (cJSON_GetArraySize(sel) == 0)
		return 0;
	cJSON_ArrayForEach(kv, sel) {
		v = cJSON_GetObjectItemCaseSensitive(labels, kv->string);
		if (!cJSON_IsString(kv) || !cJSON_IsString(v) ||
		    strcmp(v->valuestring, kv->valuestring) != 0)
			return 0;
	}
	return 1;
}

/*
 * The pods a Service's selector (a map) picks, through the store's index
 * of labels, sorted; -1 when the selector cannot be read as one (then
 * scan the namespace with selects).
 */
static ssize_t
selected_pods(api *a, const char *ns, const cJSON *sel, store_obj ***out)
{
	cJSON *ls;
	selector *s;
	char *cause = NULL;
	ssize_t n;

	*out = NULL;
	if (cJSON_GetArraySize(sel) == 0)
		return 0;
	ls = cJSON_CreateObject();
	cJSON_AddItemToObject(ls, "matchLabels", cJSON_Duplicate(sel, 1));
	s = selector_from_json(ls, &cause);
	cJSON_Delete(ls);
	free(cause);
	if (s == NULL)
		return -1;
	n = store_list_selected(a->st, "pods", ns, s, out);
	selector_free(s);
	return n;
}

static void
refused(http_req *req, struct route *rt, const cJSON *pod, int port)
{
	const char *ip = json_str(pod, "status.podIP");

	reply_status(req, rt, status_error(503, "ServiceUnavailable",
	    "error trying to reach service: dial tcp %s:%d: connect: "
	    "connection refused", ip ? ip : "<nil>", port));
}

/* The pod's node when another process runs it, else NULL. */
static const char *
remote_node(api *a, const cJSON *pod)
{
	const char *node = json_str(pod, "spec.nodeName");

	return nodeproxy_remote(a, node) ? node : NULL;
}

/* To ns/pod's port on its node's endpoint, with the request's query. */
static void
forward_remote(api *a, http_req *req, struct route *rt, const cJSON *pod,
    int port, const char *path)
{
	char *url = util_printf("/volray/proxy/%s/%s/%d%s%s%s",
	    json_str(pod, "metadata.namespace"), json_str(pod,
	    "metadata.name"), port, path, *req->query ? "?" : "", req->query);

	nodeproxy_forward(a, req, rt, remote_node(a, pod), url);
	free(url);
}

/* The plain HTTP client to the pods this process reaches itself. */
static hclient *
pods_client(api *a)
{
	struct hclient_conf conf;
	char *cause = NULL;

	if (a->pods_hc != NULL)
		return a->pods_hc;
	memset(&conf, 0, sizeof conf);
	conf.user_agent = "volrayd/apiserver";
	conf.open_socket = a->pod_socket;
	if ((a->pods_hc = hclient_new(a->loop, &conf, &cause)) == NULL) {
		log_error("api: the pods' client: %s", cause);
		free(cause);
	}
	return a->pods_hc;
}

/*
 * To port of pod ns/name at its address, when this process reaches it
 * itself (a local pod, api_set_pod_addr), in plain HTTP as
 * kube-apiserver dials a pod's IP: 0 when sent, -1 when not such a pod.
 */
static int
forward_direct(api *a, http_req *req, struct route *rt, const char *ns,
    const char *name, int port, const char *path)
{
	const char *ray_auth = http_req_header(req, "X-Ray-Authorization");
	const char *hdrs[2] = { NULL, NULL };
	char host[64], *full, *h = NULL;

	if (a->pod_addr == NULL || a->pod_addr(a->pod_addr_arg, ns, name, host,
	    sizeof host) != 0)
		return -1;
	/* Ray's token through a proxy (KubeRay's dashboard client). */
	if (ray_auth != NULL)
		hdrs[0] = h = util_printf("X-Ray-Authorization: %s", ray_auth);
	full = util_printf("%s%s%s", path, *req->query ? "?" : "",
	    req->query);
	nodeproxy_forward_pod(a, req, rt, pods_client(a), host, port, full,
	    hdrs);
	free(full);
	free(h);
	return 0;
}

/* Send to ns/pod's port, or answer 503. */
static void
forward(api *a, http_req *req, struct route *rt, const cJSON *pod,
    int port, const char *path)
{
	const char *ns = json_str(pod, "metadata.namespace");
	const char *name = json_str(pod, "metadata.name");

	if (a->proxy != NULL && a->proxy_serves(a->proxy_arg, ns, name, port) &&
	    a->proxy(a->proxy_arg, req, ns, name, port, path) == 0)
		return;
	if (forward_direct(a, req, rt, ns, name, port, path) == 0)
		return;
	if (remote_node(a, pod) != NULL)
		forward_remote(a, req, rt, pod, port, path);
	else
		refused(req, rt, pod, port);
}

static void proxy_service(api *, http_req *, struct route *, const char *,
    const char *, const char *, const char *);

/* How much of path a route match takes (-1: none). */
static int
match_len(const cJSON *m, const char *path)
{
	const char *type = json_str(m, "path.type");
	const char *v = json_str(m, "path.value");
	size_t n;

	if (v == NULL)
		v = "/";
	n = strlen(v);
	if (type != NULL && strcmp(type, "Exact") == 0)
		return strcmp(path, v) == 0 ? (int)n : -1;
	if (strcmp(v, "/") == 0)
		return 1;
	if (strncmp(path, v, n) != 0 || (path[n] != '\0' && path[n] != '/' &&
	    v[n - 1] != '/'))
		return -1;
	return (int)n;
}

/*
 * A Gateway's Service (annotated volray.io/gateway by the gateway
 * controller): the HTTPRoutes attached to that Gateway pick the backend
 * Service, the rule whose path match is longest, then a backendRef at
 * random in proportion to its weight (default 1; 0 never), and the
 * request goes on through that Service's proxy. No rule: 404.
 */
static void
gateway_route(api *a, http_req *req, struct route *rt, const char *ns,
    const char *gw, const char *path)
{
	store_obj *const *routes;
	size_t n = store_list(a->st, "httproutes.gateway.networking.k8s.io",
	    ns, &routes), i;
	cJSON *best = NULL, *keep = NULL;
	const cJSON *rule, *rules, *m, *p, *b;
	int best_len = -1;
	long total = 0, pick;
	char port[16];

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(routes[i]);
		int mine = 0;

		cJSON_ArrayForEach(p, json_at(t, "spec.parentRefs"))
			if (json_str(p, "name") != NULL && strcmp(json_str(p,
			    "name"), gw) == 0 && (json_str(p, "namespace") ==
			    NULL || strcmp(json_str(p, "namespace"), ns) == 0))
				mine = 1;
		rules = mine ? json_at(t, "spec.rules") : NULL;
		cJSON_ArrayForEach(rule, rules) {
			const cJSON *ms = json_at(rule, "matches");
			int len = cJSON_GetArraySize((cJSON *)ms) == 0 ? 1 : -1;

			cJSON_ArrayForEach(m, ms) {
				int l = match_len(m, path);

				if (l > len)
					len = l;
			}
			if (len > best_len) {
				best_len = len;
				best = (cJSON *)rule;
				if (keep != t) {
					cJSON_Delete(keep);
					keep = t;
				}
			}
		}
		if (keep != t)
			cJSON_Delete(t);
	}
	cJSON_ArrayForEach(b, json_at(best, "backendRefs")) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(b, "weight");

		total += cJSON_IsNumber(w) ? w->valueint : 1;
	}
	if (best == NULL || total <= 0) {
		reply_status(req, rt, status_error(404, "NotFound",
		    "no HTTPRoute of Gateway %s takes %s", gw, path));
		cJSON_Delete(keep);
		return;
	}
	pick = random() % total;
	cJSON_ArrayForEach(b, json_at(best, "backendRefs")) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(b, "weight");
		long wt = cJSON_IsNumber(w) ? w->valueint : 1;

		if (pick < wt) {
			const cJSON *bp = json_at(b, "port");

			snprintf(port, sizeof port, "%d", cJSON_IsNumber(bp) ?
			    bp->valueint : 80);
			proxy_service(a, req, rt, json_str(b, "namespace") ?
			    json_str(b, "namespace") : ns, json_str(b, "name"),
			    port, path);
			break;
		}
		pick -= wt;
	}
	cJSON_Delete(keep);
}

static void
proxy_service(api *a, http_req *req, struct route *rt, const char *ns,
    const char *name, const char *port, const char *path)
{
	const resource *sr = resource_find("", "v1", "services");
	const store_obj *o = store_get(a->st, "services", ns, name);
	cJSON *svc, *first = NULL;
	const cJSON *sp = NULL, *it, *tp;
	store_obj *const *pods;
	store_obj **chosen = NULL;
	size_t n, i;
	ssize_t nsel;
	int served = 0, first_target = 0;

	if (o == NULL) {
		reply_status(req, rt, status_not_found(sr, name));
		return;
	}
	svc = store_obj_tree(o);
	{
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(json_at(svc,
		    "metadata.annotations"), "volray.io/gateway");

		/* Routes to routes: a few hops, not a loop. */
		static int hops;

		if (cJSON_IsString(g) && hops >= 4)
			reply_status(req, rt, status_error(508, "LoopDetected",
			    "HTTPRoutes of Gateway %s loop", g->valuestring));
		else if (cJSON_IsString(g)) {
			hops++;
			gateway_route(a, req, rt, ns, g->valuestring, path);
			hops--;
		}
		if (cJSON_IsString(g)) {
			cJSON_Delete(svc);
			return;
		}
	}
	cJSON_ArrayForEach(it, json_at(svc, "spec.ports")) {
		const cJSON *pn = json_at(it, "port");

		if (*port == '\0' || (is_number(port) && cJSON_IsNumber(pn) &&
		    pn->valueint == atoi(port)) || (json_str(it, "name") &&
		    strcmp(json_str(it, "name"), port) == 0)) {
			sp = it;
			break;
		}
	}
	if (sp == NULL) {
		reply_status(req, rt, status_error(503,
		    "ServiceUnavailable", "no endpoints available for service "
		    "\"%s:%s\"", name, port));
		cJSON_Delete(svc);
		return;
	}
	tp = json_at(sp, "targetPort");
	if (tp == NULL)
		tp = json_at(sp, "port");
	if ((nsel = selected_pods(a, ns, json_at(svc, "spec.selector"),
	    &chosen)) >= 0) {
		pods = chosen;
		n = (size_t)nsel;
	} else
		n = store_list(a->st, "pods", ns, &pods);
	for (i = 0; i < n && !served; i++) {
		cJSON *pod;
		int target;

		if (!selects(json_at(svc, "spec.selector"), pods[i]->labels))
			continue;
		pod = store_obj_tree(pods[i]);
		target = cJSON_IsNumber(tp) ? tp->valueint : cJSON_IsString(tp) ?
		    (is_number(tp->valuestring) ? atoi(tp->valuestring) :
		    named_port(pod, tp->valuestring)) : 0;
		if (!pod_running(pod) || target <= 0) {
			cJSON_Delete(pod);
			continue;
		}
		/* A target answers at once and writes nothing: pods stays valid. */
		if (a->proxy != NULL && a->proxy_serves(a->proxy_arg, ns,
		    pods[i]->name, target) && a->proxy(a->proxy_arg, req, ns,
		    pods[i]->name, target, path) == 0)
			served = 1;
		else if (forward_direct(a, req, rt, ns, pods[i]->name, target,
		    path) == 0)
			served = 1;
		/* A pod of an agent's node ahead of one nobody serves. */
		if (!served && (first == NULL || (remote_node(a, first) ==
		    NULL && remote_node(a, pod) != NULL))) {
			cJSON_Delete(first);
			first = pod;
			first_target = target;
		} else
			cJSON_Delete(pod);
	}
	if (!served && first != NULL && remote_node(a, first) != NULL)
		forward_remote(a, req, rt, first, first_target, path);
	else if (!served && first != NULL)
		refused(req, rt, first, first_target);
	else if (!served)
		reply_status(req, rt, status_error(503,
		    "ServiceUnavailable", "no endpoints available for service "
		    "\"%s\"", name));
	free(chosen);
	cJSON_Delete(first);
	cJSON_Delete(svc);
}

static void
proxy_pod(api *a, http_req *req, struct route *rt, const char *ns,
    const char *name, const char *port, const char *path)
{
	const resource *pr = resource_find("", "v1", "pods");
	const store_obj *o = store_get(a->st, "pods", ns, name);
	cJSON *pod;
	int p;

	if (o == NULL) {
		reply_status(req, rt, status_not_found(pr, name));
		return;
	}
	pod = store_obj_tree(o);
	p = *port == '\0' ? 80 : is_number(port) ? atoi(port) :
	    named_port(pod, port);
	if (!pod_running(pod))
		reply_status(req, rt, status_error(503,
		    "ServiceUnavailable", "error trying to reach service: pod "
		    "%s is not running", name));
	else
		forward(a, req, rt, pod, p, path);
	cJSON_Delete(pod);
}

/*
 * Whether the user may use RES/proxy (ns may be NULL) named name with the
 * request's verb; answered 403 when not.
 */
static int
may_proxy(api *a, http_req *req, struct route *rt, const char *res,
    const char *ns, const char *name)
{
	char *reason = NULL;
	rbac_attrs at;

	rt->verb = method_verb(req->method);
	memset(&at, 0, sizeof at);
	at.verb = rt->verb;
	at.api_group = "";
	at.resource = res;
	at.subresource = "proxy";
	at.ns = ns;
	at.name = name;
	if (a->authz != NULL && rt->user != NULL &&
	    !rbac_check(a->authz, rt->user, &at, &reason)) {
		reply_status(req, rt, rbac_forbidden_reason(rt->user, &at,
		    reason));
		free(reason);
		return 0;
	}
	free(reason);
	return 1;
}

/* /api/v1/nodes/NAME/proxy/PATH: 1 when it is one (answered). */
static int
proxy_node(api *a, http_req *req, struct route *rt)
{
	const char *p = req->path, *rest;
	char node[256], *path;
	int n = 0;

	if (strncmp(p, "/api/v1/nodes/", 14) != 0 ||
	    sscanf(p + 14, "%255[^/]%n", node, &n) != 1)
		return 0;
	rest = p + 14 + n;
	if (strncmp(rest, "/proxy", 6) != 0 || (rest[6] != '\0' &&
	    rest[6] != '/'))
		return 0;
	rest += 6;
	if (!may_proxy(a, req, rt, "nodes", NULL, node))
		return 1;
	path = util_printf("%s%s%s", *rest ? rest : "/", *req->query ? "?" :
	    "", req->query);
	nodeproxy_forward(a, req, rt, node, path);
	free(path);
	return 1;
}

int
proxy_serve(api *a, http_req *req, struct route *rt)
{
	const char *p = req->path, *slash;
	char ns[256], res[16], target[512], *name, *port;
	const char *rest;
	int n = 0;

	if (proxy_node(a, req, rt))
		return 1;
	if (strncmp(p, "/api/v1/namespaces/", 19) != 0)
		return 0;
	if (sscanf(p + 19, "%255[^/]/%15[^/]/%511[^/]%n", ns, res, target,
	    &n) != 3 || (strcmp(res, "services") != 0 &&
	    strcmp(res, "pods") != 0))
		return 0;
	rest = p + 19 + n;
	if (strncmp(rest, "/proxy", 6) != 0 || (rest[6] != '\0' &&
	    rest[6] != '/'))
		return 0;
	rest += 6;
	slash = *rest == '\0' ? "/" : rest;
	if (!may_proxy(a, req, rt, res, ns, target))
		return 1;
	split_target(target, &name, &port);
	if (res[0] == 's')
		proxy_service(a, req, rt, ns, name, port, slash);
	else
		proxy_pod(a, req, rt, ns, name, port, slash);
	return 1;
}
