/*
 * GET /apis/volray.io/v1/explain/...: why a job waits, as the scheduler
 * of this server recorded it over its last sessions (sched/explain.c),
 * for `volray explain` and `volray queue pending`:
 *
 *   .../explain/namespaces/NS/podgroups/NAME   a PodGroup's job
 *   .../explain/namespaces/NS/pods/NAME        the job of a pod (its
 *                                              PodGroup, or the implicit
 *                                              group of a bare pod)
 *   .../explain/queues/NAME                    a queue and its waiting
 *                                              jobs in line
 *
 * A read-only, non-resource path beside /apis/volray.io/v1/policy,
 * authorized as it is (RBAC nonResourceURLs, verb get). 404 when no kept
 * session has a record (the job is not waiting, or is not known yet);
 * 503 when the scheduler runs in another process (--roles) or keeps no
 * sessions (--explain-sessions=0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/status.h"
#include "sched/sched.h"
#include "store/store.h"

#define PREFIX "/apis/volray.io/v1/explain/"

int
explaininfo_path(const char *path)
{
	return strncmp(path, PREFIX, sizeof PREFIX - 1) == 0;
}

/* Split "a/b/c..." into at most n segments in buf; the count. */
static int
split(const char *s, char *buf, size_t len, char **seg, int n)
{
	int k = 0;
	char *p;

	snprintf(buf, len, "%s", s);
	for (p = buf; k < n && p != NULL && *p; ) {
		seg[k++] = p;
		if ((p = strchr(p, '/')) != NULL)
			*p++ = '\0';
	}
	return p != NULL && *p ? -1 : k;
}

void
explaininfo_get(api *a, http_req *req, struct route *rt)
{
	char buf[1024], *seg[5], *key = NULL;
	const char *kind;
	cJSON *o;
	int n;

	rt->verb = "get";
	if (strcmp(req->method, "GET") != 0) {
		reply_status(req, rt, status_error(405, "MethodNotAllowed",
		    "only GET"));
		return;
	}
	n = split(req->path + sizeof PREFIX - 1, buf, sizeof buf, seg, 5);
	if (n == 2 && strcmp(seg[0], "queues") == 0) {
		kind = "queues";
		key = xstrdup(seg[1]);
	} else if (n == 4 && strcmp(seg[0], "namespaces") == 0 &&
	    strcmp(seg[2], "podgroups") == 0) {
		kind = "podgroups";
		key = util_printf("%s/%s", seg[1], seg[3]);
	} else if (n == 4 && strcmp(seg[0], "namespaces") == 0 &&
	    strcmp(seg[2], "pods") == 0) {
		const store_obj *so = store_get(a->st, "pods", seg[1], seg[3]);
		cJSON *pod = so != NULL ? store_obj_tree(so) : NULL;

		kind = "podgroups";
		if (pod == NULL) {
			reply_status(req, rt, status_error(404, "NotFound",
			    "pods \"%s\" not found", seg[3]));
			return;
		}
		key = sched_pod_job_key(pod);
		cJSON_Delete(pod);
	} else {
		reply_status(req, rt, status_error(404, "NotFound", "want "
		    PREFIX "namespaces/NS/podgroups/NAME, .../pods/NAME or "
		    PREFIX "queues/NAME"));
		return;
	}
	if (!sched_explain_on(a->policy_sched)) {
		reply_status(req, rt, status_error(503, "ServiceUnavailable",
		    "%s", a->policy_sched == NULL ? "the scheduler does not "
		    "run in this server (--roles): ask the one that runs it" :
		    "the scheduler keeps no sessions (--explain-sessions=0)"));
		free(key);
		return;
	}
	if ((o = sched_explain(a->policy_sched, kind, key ? key : "")) ==
	    NULL) {
		reply_status(req, rt, status_error(404, "NotFound", "%s %s: no "
		    "record in the scheduler's last sessions: %s",
		    strcmp(kind, "queues") == 0 ? "queue" : "job", key ? key :
		    "?", strcmp(kind, "queues") == 0 ? "no job waits in it" :
		    "it does not wait (bound, running or finished) or has not "
		    "been scheduled yet"));
		free(key);
		return;
	}
	free(key);
	cJSON_AddStringToObject(o, "kind", strcmp(kind, "queues") == 0 ?
	    "QueueExplanation" : "JobExplanation");
	cJSON_AddStringToObject(o, "apiVersion", "volray.io/v1");
	reply_json(req, rt, 200, o);
}
