/*
 * The scheduler's explain records served on its endpoint, for the API
 * server of another process (api/explaininfo.c relays to the URL the
 * scheduler's Lease advertises):
 *
 *   GET /volray/explain/podgroups/NS/NAME   a job (the API server turns a
 *                                           pod into its job first)
 *   GET /volray/explain/queues/NAME         a queue and its line
 *
 * The same answers as the API's explain path in a single process: the
 * record with kind and apiVersion, 404 when no kept session has one, 503
 * while this replica does not lead (no scheduler yet) or keeps no
 * sessions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/explain.h"
#include "lib/json.h"
#include "lib/util.h"
#include "net/http.h"
#include "registry/status.h"
#include "sched/sched.h"

static void
fail(http_req *req, cJSON *st)
{
	http_respond_json(req, status_code(st), st);
}

void
volrayd_explain_serve(void *arg, http_req *req, const char *rest)
{
	sched *s = *(sched **)arg;
	char kind[16], a[254], b[254], *key;
	int n = 0, queue;
	cJSON *o;

	if (strcmp(req->method, "GET") != 0) {
		fail(req, status_error(405, "MethodNotAllowed", "only GET"));
		return;
	}
	if (sscanf(rest, "%15[a-z]/%253[^/]%n", kind, a, &n) == 2 &&
	    strcmp(kind, "queues") == 0 && rest[n] == '\0')
		queue = 1;
	else if (sscanf(rest, "%15[a-z]/%253[^/]/%253[^/]%n", kind, a, b,
	    &n) == 3 && strcmp(kind, "podgroups") == 0 && rest[n] == '\0')
		queue = 0;
	else {
		fail(req, status_error(404, "NotFound", "want /volray/explain/"
		    "podgroups/NAMESPACE/NAME or /volray/explain/queues/NAME"));
		return;
	}
	key = queue ? util_printf("%s", a) : util_printf("%s/%s", a, b);
	o = sched_explain_answer(s, kind, key);
	free(key);
	http_respond_json(req, strcmp(json_str(o, "kind"), "Status") == 0 ?
	    status_code(o) : 200, o);
}
