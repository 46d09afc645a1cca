/*
 * The node endpoint's way to a local pod's port (podproxy.h): plain HTTP
 * to the pod's address through one kept-alive client (net/hclient.c),
 * the request's method, body, Content-Type, Accept and Ray's
 * X-Ray-Authorization passed on; a 2xx answer is streamed back as it
 * comes, another status with its body. A pod that does not answer is
 * kube-apiserver's 503 "dial tcp HOST:PORT: connect: connection refused".
 * If the API server goes away first, the request to the pod is cancelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "node/podnet.h"
#include "node/podproxy.h"
#include "registry/status.h"

struct relay {
	http_req *req;
	hclient_req *hr;
	char *dial;			/* HOST:PORT, for the messages */
	int streaming;
};

static hclient *pods_hc;		/* one per process, made at first use */

static void
relay_free(struct relay *r)
{
	free(r->dial);
	free(r);
}

static void
on_data(void *arg, const char *p, size_t len)
{
	struct relay *r = arg;
	const char *ct;

	if (!r->streaming) {
		ct = hclient_req_header(r->hr, "Content-Type");
		http_stream_begin(r->req, 200, ct != NULL ? ct : "text/plain");
		r->streaming = 1;
	}
	http_stream_write_copy(r->req, p, len);
}

static void
on_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct relay *r = arg;
	const char *ct;
	cJSON *st;

	if (r->streaming)
		http_stream_end(r->req);
	else if (status == 0) {
		st = status_error(503, "ServiceUnavailable", "error trying to "
		    "reach service: dial tcp %s: %s", r->dial, err != NULL &&
		    (strstr(err, "onnect") != NULL || strstr(err, "refused") !=
		    NULL) ? "connect: connection refused" : err ? err :
		    "no answer");
		http_respond_json(r->req, 503, st);
	} else {
		ct = hclient_req_header(r->hr, "Content-Type");
		http_respond(r->req, (int)status, ct ? ct : "text/plain", body,
		    len);
	}
	relay_free(r);
}

/* The API server went away: stop asking the pod. */
static void
on_close(http_req *req, void *arg)
{
	struct relay *r = arg;

	hclient_cancel(r->hr);
	if (r->streaming)
		http_stream_end(req);
	else
		http_respond(req, 499, "text/plain", "", 0);
	relay_free(r);
}

int
podproxy_forward(node_mgr *m, uv_loop_t *loop, http_req *req,
    const char *ns, const char *name, int port, const char *path)
{
	const char *ray_auth = http_req_header(req, "X-Ray-Authorization");
	const char *hdrs[2] = { NULL, NULL };
	struct hclient_call call;
	struct hclient_conf conf;
	char host[64], *url, *h = NULL, *err = NULL;
	struct relay *r;

	if (m == NULL || node_mgr_pod_addr(m, ns, name, host, sizeof host) != 0)
		return -1;
	if (pods_hc == NULL) {
		memset(&conf, 0, sizeof conf);
		conf.user_agent = "volrayd/node";
		conf.open_socket = podnet_socket;
		if ((pods_hc = hclient_new(loop, &conf, &err)) == NULL) {
			log_error("node: the pods' client: %s", err);
			free(err);
			return -1;
		}
	}
	r = xcalloc(1, sizeof *r);
	r->req = req;
	r->dial = util_printf(strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
	    port);
	url = util_printf("http://%s%s%s%s", r->dial, path, *req->query ? "?" :
	    "", req->query);
	if (ray_auth != NULL)
		hdrs[0] = h = util_printf("X-Ray-Authorization: %s", ray_auth);
	memset(&call, 0, sizeof call);
	call.method = req->method;
	call.url = url;
	if (req->body_len > 0) {
		call.body = req->body;
		call.body_len = req->body_len;
	}
	call.content_type = http_req_header(req, "Content-Type");
	call.accept = http_req_header(req, "Accept");
	call.headers = hdrs;
	r->hr = hclient_start(pods_hc, &call, on_data, on_done, r, &err);
	free(url);
	free(h);
	if (r->hr == NULL) {
		cJSON *st = status_error(500, "InternalError", "%s: %s",
		    r->dial, err);

		http_respond_json(req, 500, st);
		free(err);
		relay_free(r);
		return 0;
	}
	http_req_on_close(req, on_close, r);
	return 0;
}

void
podproxy_close(void)
{
	if (pods_hc != NULL)
		hclient_free(pods_hc);
	pods_hc = NULL;
}
