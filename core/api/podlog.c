/*
 * pods/log: a container's log as kube-apiserver serves it. The options
 * are validated here, as PodLogOptions are, and the container named or
 * picked; then a pod of a node this process runs is read from its log
 * file (node/logfile.c renders it as the kubelet's ReadLogs does), and a
 * pod of a node another process runs (an agent, `--roles nodes`) is
 * asked of that node's endpoint, /containerLogs/NS/NAME/CONTAINER, through
 * the API server's node proxy (nodeproxy.c), as kube-apiserver asks the
 * kubelet.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/apimetrics.h"
#include "api/reply.h"
#include "lib/crilog.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/logfile.h"
#include "registry/status.h"

/*
 * The options into lo; -1 when they are refused (answered as
 * kube-apiserver's validation of PodLogOptions answers).
 */
static int
log_options(http_req *req, struct route *rt, struct logfile_opts *lo)
{
	long long *lines = &lo->tail;
	long long since_s = -1, limit = -1;
	char *since_t = http_query_get(req->query, "sinceTime"), *bad = NULL;
	int64_t ns = 0;

	memset(lo, 0, sizeof *lo);
	*lines = LLONG_MIN;
	if (reply_int_param(req, rt, "tailLines", lines) != 0 ||
	    reply_int_param(req, rt, "sinceSeconds", &since_s) != 0 ||
	    reply_int_param(req, rt, "limitBytes", &limit) != 0) {
		free(since_t);
		return -1;
	}
	lo->timestamps = http_query_bool(req->query, "timestamps", 0);
	lo->follow = http_query_bool(req->query, "follow", 0);
	if (since_t != NULL && crilog_time_parse(since_t, strlen(since_t),
	    &ns) != 0) {
		reply_status(req, rt, status_bad_request("parsing time "
		    "\"%s\" as \"2006-01-02T15:04:05Z07:00\": cannot parse",
		    since_t));
		free(since_t);
		return -1;
	}
	if (since_t != NULL && since_s != -1)
		bad = util_printf("[]: Forbidden: at most one of `sinceTime` or "
		    "`sinceSeconds` may be specified");
	else if (*lines != LLONG_MIN && *lines < 0)
		bad = util_printf("tailLines: Invalid value: %lld: must be "
		    "greater than or equal to 0", *lines);
	else if (limit != -1 && limit < 1)
		bad = util_printf("limitBytes: Invalid value: %lld: must be "
		    "greater than 0", limit);
	else if (since_s != -1 && since_s < 1)
		bad = util_printf("sinceSeconds: Invalid value: %lld: must be "
		    "greater than 0", since_s);
	free(since_t);
	if (*lines == LLONG_MIN)
		*lines = -1;
	if (bad != NULL) {
		reply_status(req, rt, status_error(422, "Invalid",
		    "PodLogOptions \"%s\" is invalid: %s", rt->name, bad));
		free(bad);
		return -1;
	}
	lo->limit = limit;
	if (since_s > 0)
		lo->since_ns = crilog_now() - since_s * 1000000000LL;
	else if (ns > 0)
		lo->since_ns = ns;
	return 0;
}

/* The container to read: ?container= or the pod's only one; NULL: answered. */
static char *
pick_container(http_req *req, struct route *rt, const store_obj *o)
{
	cJSON *tree = store_obj_tree(o);
	const cJSON *cs = json_at(tree, "spec.containers"), *c;
	char *container = http_query_get(req->query, "container");
	int found = 0;

	if (container != NULL && *container != '\0') {
		/* Init containers have logs too. */
		cJSON_ArrayForEach(c, json_at(tree, "spec.initContainers"))
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				cs = json_at(tree, "spec.initContainers");
		cJSON_ArrayForEach(c, cs)
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				found = 1;
		if (!found) {
			reply_status(req, rt, status_bad_request(
			    "container %s is not valid for pod %s", container,
			    rt->name));
			free(container);
			container = NULL;
		}
	} else if (cJSON_GetArraySize(cs) == 1) {
		free(container);
		container = xstrdup(json_str(cJSON_GetArrayItem(cs, 0), "name") ?
		    json_str(cJSON_GetArrayItem(cs, 0), "name") : "");
	} else {
		char names[1024] = "";
		size_t len = 0;

		cJSON_ArrayForEach(c, cs)
			len += snprintf(names + len, len < sizeof names ?
			    sizeof names - len : 0, "%s%s", len ? " " : "",
			    json_str(c, "name"));
		reply_status(req, rt, status_bad_request("a container name "
		    "must be specified for pod %s, choose one of: [%s]",
		    rt->name, names));
		free(container);
		container = NULL;
	}
	cJSON_Delete(tree);
	return container;
}

static const store_obj *
get_pod(const void *st, const char *ns, const char *name)
{
	return store_get(st, "pods", ns, name);
}

void
podlog_get(api *a, http_req *req, struct route *rt)
{
	const store_obj *o;
	char *container = NULL, *url, path[PATH_MAX];
	int previous = http_query_bool(req->query, "previous", 0);
	struct logfile_opts lo;

	rt->verb = "get";
	if (log_options(req, rt, &lo) != 0)
		return;
	if ((o = store_get(a->st, "pods", rt->ns ? rt->ns : "", rt->name)) ==
	    NULL) {
		reply_status(req, rt, status_not_found(rt->r, rt->name));
		return;
	}
	if ((container = pick_container(req, rt, o)) == NULL)
		return;
	if (nodeproxy_remote(a, o->node_name)) {
		/* The kubelet's path; the query as the client sent it. */
		url = util_printf("/containerLogs/%s/%s/%s%s%s", o->ns,
		    o->name, container, *req->query ? "?" : "", req->query);
		nodeproxy_forward(a, req, rt, o->node_name, url);
		free(url);
		free(container);
		return;
	}
	snprintf(path, sizeof path, "%s/pods/%s/%s/%s%s.log", a->data_dir,
	    o->ns, o->name, container, previous ? ".previous" : "");
	if (previous && access(path, R_OK) != 0) {
		reply_status(req, rt, status_bad_request("previous "
		    "terminated container \"%s\" in pod \"%s\" not found",
		    container, rt->name));
		free(container);
		return;
	}
	free(container);
	apimetrics_request(rt->verb, "pods", 200, util_usec() - rt->t0);
	/* The previous instance is over: there is nothing to follow. */
	if (previous)
		lo.follow = 0;
	logfile_serve(a->loop, req, path, &lo, o, get_pod, a->st);
}
