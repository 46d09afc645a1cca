/*
 * The API server's way to a node's endpoint, as kube-apiserver reaches a
 * kubelet: the node's first InternalIP (else ExternalIP, else Hostname)
 * and its status.daemonEndpoints.kubeletEndpoint.Port (10250 when none),
 * over HTTPS without verifying the endpoint's certificate (as
 * kube-apiserver without --kubelet-certificate-authority), showing the
 * API server's client certificate (api_set_node_client: CN
 * kube-apiserver-kubelet-client, O system:masters, issued by the
 * cluster's CA) as its credentials. Used for the pods of nodes another
 * process runs (an agent, `--roles nodes`): pods/log, the pod and service
 * proxies, and nodes/NAME/proxy/PATH. The answer is relayed as it comes:
 * a 2xx streamed (a followed log), another status with its body; a node
 * that cannot be reached is a 500 naming the URL, as kube-apiserver's
 * "dial tcp" errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "registry/status.h"

#define NODE_PORT_DEFAULT 10250

struct fwd {
	http_req *req;
	hclient_req *hr;
	struct route rt;		/* r and verb, for the metrics */
	char *url;
	char *dial;			/* a pod's HOST:PORT, or NULL */
	int streaming;
};

static hclient *
node_client(api *a)
{
	struct hclient_conf conf;
	char *cause = NULL;

	if (a->nodes_hc != NULL)
		return a->nodes_hc;
	memset(&conf, 0, sizeof conf);
	conf.insecure = 1;
	conf.cert_pem = a->node_cert;
	conf.cert_pem_len = a->node_cert ? strlen(a->node_cert) : 0;
	conf.key_pem = a->node_key;
	conf.key_pem_len = a->node_key ? strlen(a->node_key) : 0;
	conf.user_agent = "volrayd/apiserver";
	if ((a->nodes_hc = hclient_new(a->loop, &conf, &cause)) == NULL) {
		log_error("api: the nodes' client: %s", cause);
		free(cause);
	}
	return a->nodes_hc;
}

int
nodeproxy_addr(api *a, const char *node, char *host, size_t size, int *port,
    cJSON **st)
{
	static const char *const types[] = { "InternalIP", "ExternalIP",
	    "Hostname" };
	const store_obj *o = store_get(a->st, "nodes", "", node);
	const char *addr = NULL;
	const cJSON *it, *p;
	cJSON *tree;
	size_t i;

	if (o == NULL) {
		*st = status_error(404, "NotFound", "nodes \"%s\" not found",
		    node);
		return -1;
	}
	tree = store_obj_tree(o);
	for (i = 0; i < sizeof types / sizeof *types && addr == NULL; i++)
		cJSON_ArrayForEach(it, json_at(tree, "status.addresses"))
			if (json_str(it, "type") && strcmp(json_str(it, "type"),
			    types[i]) == 0 && json_str(it, "address") &&
			    *json_str(it, "address") != '\0') {
				addr = json_str(it, "address");
				break;
			}
	p = json_at(tree, "status.daemonEndpoints.kubeletEndpoint.Port");
	if (addr == NULL) {
		*st = status_error(500, "InternalError", "node %s has no "
		    "address to reach its endpoint on", node);
		cJSON_Delete(tree);
		return -1;
	}
	util_strf(host, size, "%s", addr);
	*port = cJSON_IsNumber(p) && p->valueint > 0 ? p->valueint :
	    NODE_PORT_DEFAULT;
	cJSON_Delete(tree);
	return 0;
}

/* https://ADDRESS:PORT of node, or NULL with a Status in *st. */
static char *
node_base(api *a, const char *node, cJSON **st)
{
	char host[256];
	int port;

	if (nodeproxy_addr(a, node, host, sizeof host, &port, st) != 0)
		return NULL;
	return util_printf(strchr(host, ':') ? "https://[%s]:%d" :
	    "https://%s:%d", host, port);
}

static void
fwd_free(struct fwd *f)
{
	free(f->dial);
	free(f->url);
	free(f);
}

static void
on_data(void *arg, const char *p, size_t len)
{
	struct fwd *f = arg;
	const char *ct;

	if (!f->streaming) {
		ct = hclient_req_header(f->hr, "Content-Type");
		http_stream_begin(f->req, 200, ct != NULL ? ct : "text/plain");
		f->streaming = 1;
	}
	http_stream_write_copy(f->req, p, len);
}

static void
on_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct fwd *f = arg;
	const char *ct;

	if (f->streaming)
		http_stream_end(f->req);
	else if (status == 0 && f->dial != NULL)
		reply_status(f->req, &f->rt, status_error(503,
		    "ServiceUnavailable", "error trying to reach service: dial "
		    "tcp %s: %s", f->dial, err != NULL && (strstr(err,
		    "onnect") != NULL || strstr(err, "refused") != NULL) ?
		    "connect: connection refused" : err ? err : "no answer"));
	else if (status == 0)
		reply_status(f->req, &f->rt, status_error(500, "InternalError",
		    "%s \"%s\": %s", f->req->method, f->url, err ? err :
		    "no answer"));
	else {
		ct = hclient_req_header(f->hr, "Content-Type");
		if (status == 200 || status == 201 || status == 204 ||
		    status >= 400)
			http_respond(f->req, (int)status, ct ? ct :
			    "text/plain", body, len);
		else
			reply_status(f->req, &f->rt, status_error(502,
			    "InternalError", "%s \"%s\": status %ld",
			    f->req->method, f->url, status));
	}
	fwd_free(f);
}

/* The client went away: stop asking the node, free the request. */
static void
on_close(http_req *req, void *arg)
{
	struct fwd *f = arg;

	hclient_cancel(f->hr);
	if (f->streaming)
		http_stream_end(req);
	else
		http_respond(req, 499, "text/plain", "", 0);
	fwd_free(f);
}

int
nodeproxy_remote(const api *a, const char *node)
{
	return node != NULL && *node != '\0' && (a->node_local == NULL ||
	    !a->node_local(a->node_local_arg, node));
}

void
nodeproxy_forward(api *a, http_req *req, struct route *rt, const char *node,
    const char *path)
{
	cJSON *st = NULL;
	char *base;

	if ((base = node_base(a, node, &st)) == NULL) {
		reply_status(req, rt, st);
		return;
	}
	nodeproxy_forward_url(a, req, rt, base, path);
	free(base);
}

void
nodeproxy_forward_url(api *a, http_req *req, struct route *rt,
    const char *base, const char *path)
{
	nodeproxy_forward_with(a, req, rt, node_client(a), base, path, NULL);
}

static void
forward(api *a, http_req *req, struct route *rt, hclient *hc,
    const char *base, const char *path, const char *const *headers,
    const char *dial)
{
	struct hclient_call call;
	const char *ct = http_req_header(req, "Content-Type");
	const char *accept = http_req_header(req, "Accept");
	char *err = NULL;
	struct fwd *f;

	(void)a;
	if (hc == NULL) {
		reply_status(req, rt, status_error(500, "InternalError",
		    "no client for %s", base));
		return;
	}
	f = xcalloc(1, sizeof *f);
	f->req = req;
	f->rt.r = rt->r;
	f->rt.verb = rt->verb;
	f->rt.t0 = rt->t0;
	f->url = util_printf("%s%s", base, path);
	f->dial = dial != NULL ? xstrdup(dial) : NULL;
	memset(&call, 0, sizeof call);
	call.method = req->method;
	call.url = f->url;
	if (req->body_len > 0) {
		call.body = req->body;
		call.body_len = req->body_len;
	}
	call.content_type = ct;
	call.accept = accept;
	call.headers = headers;
	if ((f->hr = hclient_start(hc, &call, on_data, on_done, f,
	    &err)) == NULL) {
		reply_status(req, rt, status_error(500, "InternalError",
		    "%s \"%s\": %s", req->method, f->url, err));
		free(err);
		fwd_free(f);
		return;
	}
	http_req_on_close(req, on_close, f);
}

void
nodeproxy_forward_with(api *a, http_req *req, struct route *rt, hclient *hc,
    const char *base, const char *path, const char *const *headers)
{
	forward(a, req, rt, hc, base, path, headers, NULL);
}

void
nodeproxy_forward_pod(api *a, http_req *req, struct route *rt, hclient *hc,
    const char *host, int port, const char *path, const char *const *headers)
{
	char *dial = util_printf(strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
	    port);
	char *base = util_printf("http://%s", dial);

	forward(a, req, rt, hc, base, path, headers, dial);
	free(base);
	free(dial);
}
