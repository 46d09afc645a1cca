/*
 * pods/exec, pods/attach and pods/portforward: what
 * kube-apiserver checks before it hands the connection to the pod's
 * kubelet, then the hand-over. The checks are the pod strategy's ExecLocation: the pod
 * exists and has not completed, the container is named (or the pod has
 * only one), it is one of the pod's, and the pod has a node. RBAC has
 * already asked for `create` on pods/exec, whatever the method (a
 * WebSocket comes as GET), as kube-apiserver does since 1.30.
 *
 * A pod of a node this process runs is served here (the node manager's
 * node_exec_serve, node_attach_serve and node_portforward_serve, through
 * api_set_streams); a pod of a node another process runs (an agent) is
 * relayed to that node's endpoint, /exec/NS/POD/CONTAINER,
 * /attach/NS/POD/CONTAINER or /portForward/NS/POD with the
 * query kept, as kube-apiserver relays to a kubelet (streamrelay.c).
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

/* The containers' names, "[a b c]", as Go prints a []string. */
static char *
container_names(const cJSON *pod)
{
	static const char *const lists[] = { "spec.initContainers",
	    "spec.containers", "spec.ephemeralContainers" };
	char buf[2048];
	size_t n = 0, i;
	const cJSON *c;

	buf[n++] = '[';
	for (i = 0; i < 3; i++)
		cJSON_ArrayForEach(c, json_at(pod, lists[i]))
			if (json_str(c, "name") != NULL && n < sizeof buf - 300)
				n += (size_t)snprintf(buf + n, sizeof buf - n,
				    "%s%s", n > 1 ? " " : "", json_str(c,
				    "name"));
	buf[n++] = ']';
	buf[n] = '\0';
	return xstrdup(buf);
}

/* Whether name is one of the pod's containers (init and ephemeral too). */
static int
has_container(const cJSON *pod, const char *name)
{
	static const char *const lists[] = { "spec.initContainers",
	    "spec.containers", "spec.ephemeralContainers" };
	const cJSON *c;
	size_t i;

	for (i = 0; i < 3; i++)
		cJSON_ArrayForEach(c, json_at(pod, lists[i]))
			if (json_str(c, "name") != NULL &&
			    strcmp(json_str(c, "name"), name) == 0)
				return 1;
	return 0;
}

/* ExecLocation's checks; the container into *ctr (malloc'd), or a Status. */
static cJSON *
check_pod(const cJSON *pod, const char *name, const char *query,
    const char *verb, char **ctr)
{
	const char *phase = json_str(pod, "status.phase");
	const cJSON *ctrs = json_at(pod, "spec.containers");
	char *c = http_query_get(query, "container"), *names;
	cJSON *st;

	if (phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
	    strcmp(phase, "Failed") == 0)) {
		free(c);
		return status_bad_request("cannot %s a container in a "
		    "completed pod; current phase is %s", verb, phase);
	}
	if (c == NULL || *c == '\0') {
		free(c);
		c = NULL;
		if (cJSON_GetArraySize(ctrs) == 1 && json_str(
		    cJSON_GetArrayItem(ctrs, 0), "name") != NULL)
			c = xstrdup(json_str(cJSON_GetArrayItem(ctrs, 0),
			    "name"));
		else {
			names = container_names(pod);
			st = status_bad_request("a container name must be "
			    "specified for pod %s, choose one of: %s", name,
			    names);
			free(names);
			return st;
		}
	} else if (!has_container(pod, c)) {
		st = status_bad_request("container %s is not valid for pod %s",
		    c, name);
		free(c);
		return st;
	}
	if (json_str(pod, "spec.nodeName") == NULL ||
	    *json_str(pod, "spec.nodeName") == '\0') {
		free(c);
		return status_bad_request("pod %s does not have a host "
		    "assigned", name);
	}
	*ctr = c;
	return NULL;
}

/* pods/portforward: the pod exists and has a node (PortForwardLocation). */
static void
portforward(api *a, http_req *req, struct route *rt, const store_obj *o)
{
	char *msg = NULL, *path;
	int code;

	if (*o->node_name == '\0') {
		reply_status(req, rt, status_bad_request("pod %s does not have "
		    "a host assigned", rt->name));
		return;
	}
	if (nodeproxy_remote(a, o->node_name) || a->portforward == NULL) {
		path = util_printf("/portForward/%s/%s", rt->ns, rt->name);
		streamrelay_forward(a, req, rt, o->node_name, path);
		free(path);
		return;
	}
	code = a->portforward(a->exec_arg, req, rt->ns, rt->name, &msg);
	if (code != 0)
		reply_status(req, rt, status_error(code, code == 404 ?
		    "NotFound" : code == 500 ? "InternalError" : "BadRequest",
		    "%s", msg != NULL ? msg : "port-forward failed"));
	free(msg);
}

void
podstream_serve(api *a, http_req *req, struct route *rt)
{
	const store_obj *o = store_get(a->st, "pods", rt->ns, rt->name);
	char *ctr = NULL, *msg = NULL;
	api_exec_fn fn = NULL;
	cJSON *pod, *st;
	int code, attach;

	if (o == NULL) {
		reply_status(req, rt, status_error(404, "NotFound",
		    "pods \"%s\" not found", rt->name));
		return;
	}
	if (strcmp(rt->sub, "portforward") == 0) {
		portforward(a, req, rt, o);
		return;
	}
	attach = strcmp(rt->sub, "attach") == 0;
	pod = store_obj_tree(o);
	st = check_pod(pod, rt->name, req->query, attach ? "attach to" :
	    "exec into", &ctr);
	cJSON_Delete(pod);
	if (st != NULL) {
		reply_status(req, rt, st);
		return;
	}
	fn = attach ? a->attach : a->exec;
	if (nodeproxy_remote(a, o->node_name) || fn == NULL) {
		/* The node's endpoint, as kube-apiserver asks the kubelet. */
		msg = util_printf("/%s/%s/%s/%s", rt->sub, rt->ns, rt->name,
		    ctr);
		streamrelay_forward(a, req, rt, o->node_name, msg);
		free(msg);
		free(ctr);
		return;
	}
	code = fn(a->exec_arg, req, rt->ns, rt->name, ctr, &msg);
	if (code != 0)
		reply_status(req, rt, status_error(code, code == 404 ?
		    "NotFound" : code == 500 ? "InternalError" : "BadRequest",
		    "%s", msg != NULL ? msg : "exec failed"));
	free(msg);
	free(ctr);
}
