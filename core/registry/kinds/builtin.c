/*
 * The built-in kinds, in the order discovery lists them (kube-apiserver's:
 * the core group, then apps, batch, ...; in a group, newer versions
 * first), registered by resource_init with the feature gates that are on.
 */
#include <stddef.h>
#include <string.h>

#include "registry/kinds/kinds_int.h"
#include "registry/resource.h"

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
