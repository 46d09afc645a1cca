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
 * 503 when the scheduler keeps no sessions (--explain-sessions=0).
 *
 * When the scheduler runs in another process (--roles), the request goes
 * to the scheduler that holds the Lease volray-scheduler (any namespace,
 * the most recently renewed), at the URL its volray.io/endpoint
 * annotation gives, as .../volray/explain/podgroups/NS/NAME or
 * queues/NAME (a pod is turned into its job here), over HTTPS with the
 * credentials the API server shows the nodes' endpoints; no holder, or a
 * holder that advertises no endpoint, is a 503 that says so.
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
#define SCHED_LEASE "volray-scheduler"
#define ENDPOINT_ANNOTATION "volray.io/endpoint"

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

/* The Lease of the leading scheduler: the most recently renewed
   volray-scheduler with a holder, or NULL (a new tree). */
static cJSON *
sched_lease(api *a)
{
	store_obj *const *objs;
	const char *best_time = "";
	cJSON *best = NULL;
	size_t n, i;

	n = store_list(a->st, "leases.coordination.k8s.io", NULL, &objs);
	for (i = 0; i < n; i++) {
		cJSON *t;
		const char *renew;

		if (strcmp(objs[i]->name, SCHED_LEASE) != 0)
			continue;
		t = store_obj_tree(objs[i]);
		renew = json_str(t, "spec.renewTime");
		if (json_str(t, "spec.holderIdentity") == NULL ||
		    *json_str(t, "spec.holderIdentity") == '\0' ||
		    renew == NULL || strcmp(renew, best_time) <= 0) {
			cJSON_Delete(t);
			continue;
		}
		cJSON_Delete(best);
		best = t;
		best_time = renew;
	}
	return best;
}

/* To the leading scheduler's endpoint, or a 503 that says why not. */
static void
relay(api *a, http_req *req, struct route *rt, const char *kind,
    const char *key)
{
	cJSON *lease = sched_lease(a);
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(json_at(lease,
	    "metadata.annotations"), ENDPOINT_ANNOTATION);
	const char *url = cJSON_IsString(ann) ? ann->valuestring : NULL;
	char *path;

	if (lease == NULL || url == NULL || strncmp(url, "https://", 8) != 0) {
		reply_status(req, rt, status_error(503, "ServiceUnavailable",
		    "the scheduler does not run in this server (--roles) and "
		    "%s", lease == NULL ? "no scheduler holds the Lease "
		    SCHED_LEASE " (explain through the API needs the "
		    "scheduler's leader election)" : "the scheduler holding "
		    "the Lease " SCHED_LEASE " advertises no endpoint (its "
		    "--scheduler-listen is off or failed: see its log)"));
		cJSON_Delete(lease);
		return;
	}
	path = util_printf("/volray/explain/%s/%s", kind, key);
	nodeproxy_forward_url(a, req, rt, url, path);
	free(path);
	cJSON_Delete(lease);
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
		if (key == NULL) {
			reply_status(req, rt, status_error(404, "NotFound",
			    "pods \"%s\": no job (no namespace or uid)",
			    seg[3]));
			return;
		}
	} else {
		reply_status(req, rt, status_error(404, "NotFound", "want "
		    PREFIX "namespaces/NS/podgroups/NAME, .../pods/NAME or "
		    PREFIX "queues/NAME"));
		return;
	}
	if (a->policy_sched == NULL) {
		relay(a, req, rt, kind, key);
		free(key);
		return;
	}
	o = sched_explain_answer(a->policy_sched, kind, key);
	free(key);
	if (strcmp(json_str(o, "kind"), "Status") == 0)
		reply_status(req, rt, o);
	else
		reply_json(req, rt, 200, o);
}
