/*
 * A pod's Events, as the kubelet records them (source.component
 * "kubelet"): the pod worker's for a container that cannot run, the
 * probes' Unhealthy and Killing. One recorder for every node of the node
 * manager (client/recorder.h folds repeats into counts); nothing for a
 * pod already gone from the store.
 */
#include "node/node_int.h"

void
podevent_record(struct node_pod *p, const char *type, const char *reason,
    const char *message)
{
	struct recorder_obj o = { "v1", "Pod", p->ns, p->name, p->uid, NULL };

	if (p->removed || p->node->m->events == NULL)
		return;
	recorder_event(p->node->m->events, &o, type, reason, message, NULL);
}
