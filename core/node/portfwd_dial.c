/*
 * What port-forward dials for a port of a pod (portfwd.h): the pod's own
 * port on 127.0.0.1 when it runs here as processes (in the pod's network
 * namespace when it has one, as the kubelet's port-forward dials); for a pod of a
 * simulated node, the port the node manager's port map gives (a Ray
 * head's dashboard, ray_forward_port), else nothing. Both transports
 * (portfwd.c, portfwd_spdy.c) dial through here.
 */
#include <stdlib.h>

#include "lib/util.h"
#include "net/dial.h"
#include "node/node_int.h"
#include "node/podnet.h"
#include "node/portfwd.h"

struct dial *
portfwd_dial(node_mgr *m, const char *ns, const char *pod, int port,
    const struct dial_cb *cb, void *arg, char **cause)
{
	const store_obj *o = client_get(m->c, "pods", ns, pod);
	struct node_pod *p = o ? hmap_get(m->pods, o->uid) : NULL;
	int to = port;

	if (p == NULL) {
		*cause = util_printf("pod %s/%s is gone", ns, pod);
		return NULL;
	}
	if (p->node->rt->exec_stream == NULL && (m->portmap == NULL ||
	    (to = m->portmap(m->portmap_arg, ns, pod, port)) <= 0)) {
		*cause = util_printf("the simulated pod serves nothing on port "
		    "%d", port);
		return NULL;
	}
	if (podnet_has(p)) {
		struct dial *d;

		/* An address literal: the socket is made before it returns. */
		if (podnet_pod_enter(p) != 0) {
			*cause = util_printf(
			    "pod %s/%s has no network namespace",
			    ns, pod);
			return NULL;
		}
		d = dial_open(m->loop, "127.0.0.1", to, NULL, cb, arg, cause);
		podnet_leave();
		return d;
	}
	return dial_open(m->loop, "127.0.0.1", to, NULL, cb, arg, cause);
}
