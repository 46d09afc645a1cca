/*
 * The built-in kinds, in the order discovery lists them (kube-apiserver's:
 * the core group, then apps, batch, ...; in a group, newer versions
 * first), registered by resource_init with the feature gates that are on.
 */
#include <stddef.h>
#include <string.h>

#include "registry/kinds/kinds.h"
#include "registry/resource.h"

/* The descriptors, defined in kinds/<group>.c (tmux's cmd.c declares its
   cmd_entry structs the same way, beside the one list that names them). */
extern const struct kind_desc kind_namespace;
extern const struct kind_desc kind_node;
extern const struct kind_desc kind_pod;
extern const struct kind_desc kind_service;
extern const struct kind_desc kind_event;
extern const struct kind_desc kind_endpoints;
extern const struct kind_desc kind_configmap;
extern const struct kind_desc kind_secret;
extern const struct kind_desc kind_serviceaccount;
extern const struct kind_desc kind_limitrange;
extern const struct kind_desc kind_resourcequota;
extern const struct kind_desc kind_persistentvolumeclaim;
extern const struct kind_desc kind_persistentvolume;
extern const struct kind_desc kind_replicationcontroller;
extern const struct kind_desc kind_deployment;
extern const struct kind_desc kind_replicaset;
extern const struct kind_desc kind_daemonset;
extern const struct kind_desc kind_statefulset;
extern const struct kind_desc kind_controllerrevision;
extern const struct kind_desc kind_job;
extern const struct kind_desc kind_cronjob;
extern const struct kind_desc kind_poddisruptionbudget;
extern const struct kind_desc kind_endpointslice;
extern const struct kind_desc kind_networkpolicy;
extern const struct kind_desc kind_ingress;
extern const struct kind_desc kind_ingressclass;
extern const struct kind_desc kind_storageclass;
extern const struct kind_desc kind_csinode;
extern const struct kind_desc kind_csidriver;
extern const struct kind_desc kind_csistoragecapacity;
extern const struct kind_desc kind_volumeattachment;
extern const struct kind_desc kind_volumeattributesclass;
extern const struct kind_desc kind_deviceclass;
extern const struct kind_desc kind_resourceclaim;
extern const struct kind_desc kind_resourceclaimtemplate;
extern const struct kind_desc kind_resourceslice;
extern const struct kind_desc kind_lease;
extern const struct kind_desc kind_priorityclass;
extern const struct kind_desc kind_priorityclass_v1beta1;
extern const struct kind_desc kind_workload_v1alpha2;
extern const struct kind_desc kind_podgroup_v1alpha2;
extern const struct kind_desc kind_customresourcedefinition;
extern const struct kind_desc kind_role;
extern const struct kind_desc kind_clusterrole;
extern const struct kind_desc kind_rolebinding;
extern const struct kind_desc kind_clusterrolebinding;
extern const struct kind_desc kind_selfsubjectaccessreview;
extern const struct kind_desc kind_selfsubjectrulesreview;
extern const struct kind_desc kind_selfsubjectreview;
extern const struct kind_desc kind_apiservice;
extern const struct kind_desc kind_nodemetrics;
extern const struct kind_desc kind_podmetrics;

static const struct kind_desc *const builtin[] = {
	&kind_namespace,
	&kind_node,
	&kind_pod,
	&kind_service,
	&kind_event,
	&kind_endpoints,
	&kind_configmap,
	&kind_secret,
	&kind_serviceaccount,
	&kind_limitrange,
	&kind_resourcequota,
	&kind_persistentvolumeclaim,
	&kind_persistentvolume,
	&kind_replicationcontroller,
	&kind_deployment,
	&kind_replicaset,
	&kind_daemonset,
	&kind_statefulset,
	&kind_controllerrevision,
	&kind_job,
	&kind_cronjob,
	&kind_poddisruptionbudget,
	&kind_endpointslice,
	&kind_networkpolicy,
	&kind_ingress,
	&kind_ingressclass,
	&kind_storageclass,
	&kind_csinode,
	&kind_csidriver,
	&kind_csistoragecapacity,
	&kind_volumeattachment,
	&kind_volumeattributesclass,
	&kind_deviceclass,
	&kind_resourceclaim,
	&kind_resourceclaimtemplate,
	&kind_resourceslice,
	&kind_lease,
	&kind_priorityclass,
	&kind_priorityclass_v1beta1,
	&kind_workload_v1alpha2,
	&kind_podgroup_v1alpha2,
	&kind_customresourcedefinition,
	&kind_role,
	&kind_clusterrole,
	&kind_rolebinding,
	&kind_clusterrolebinding,
	&kind_selfsubjectaccessreview,
	&kind_selfsubjectrulesreview,
	&kind_selfsubjectreview,
	&kind_apiservice,
	&kind_nodemetrics,
	&kind_podmetrics,
};

void
resource_init(void)
{
	size_t i;

	for (i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (builtin[i]->gate == NULL || resource_gate(builtin[i]->gate))
			resource_add_builtin(builtin[i]);
}

const struct kind_sub *
kind_sub_find(const resource *r, const char *sub)
{
	const struct kind_sub *s;

	if (r->desc == NULL || r->desc->subs == NULL)
		return NULL;
	for (s = r->desc->subs; s->name != NULL; s++)
		if (strcmp(s->name, sub) == 0)
			return s;
	return NULL;
}
