/*
 * --metrics-listen: a plain-HTTP server on a loopback address with
 * /healthz, /livez, /readyz and /metrics, for a volrayd that serves no
 * Kubernetes API (--roles without api) or wants its probes and metrics
 * apart from it. /readyz answers 200 once the daemon says it is ready
 * (its roles started); /metrics prints every registered source
 * (lib/metrics.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics.h"
#include "lib/metrics.h"
#include "net/http.h"

struct health {
	const int *ready;
};

static void
answer(http_req *req, void *arg)
{
	struct health *h = arg;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		http_respond(req, 405, "text/plain", "method not allowed\n", 19);
		return;
	}
	if (strcmp(req->path, "/healthz") == 0 ||
	    strcmp(req->path, "/livez") == 0) {
		http_respond(req, 200, "text/plain", "ok", 2);
		return;
	}
	if (strcmp(req->path, "/readyz") == 0) {
		if (*h->ready)
			http_respond(req, 200, "text/plain", "ok", 2);
		else
			http_respond(req, 503, "text/plain", "not ready", 9);
		return;
	}
	if (strcmp(req->path, "/metrics") != 0) {
		http_respond(req, 404, "text/plain", "not found\n", 10);
		return;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		http_respond(req, 500, "text/plain", "no memory\n", 10);
		return;
	}
	metrics_print_sources(f);
	fclose(f);
	http_respond(req, 200, "text/plain; version=0.0.4", buf, len);
	free(buf);
}

int
volrayd_metrics_listen(uv_loop_t *loop, const char *host, int port,
    const int *ready, char **cause)
{
	static struct health h;
	http_server *srv;

	h.ready = ready;
	return http_server_listen(loop, host, port, answer, &h, &srv, cause);
}
