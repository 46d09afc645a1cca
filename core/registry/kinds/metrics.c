/*
 * metrics.k8s.io/v1beta1: kubectl top's, computed when read
 * (api/metricsapi.c).
 */
#include "registry/kinds/kinds.h"

/* get and list only, computed: kubectl top (api/metricsapi.c). */
const struct kind_desc kind_nodemetrics = {
	.group = "metrics.k8s.io",
	.version = "v1beta1",
	.plural = "nodes",
	.singular = "",
	.kind = "NodeMetrics",
	.computed = 1,
};

const struct kind_desc kind_podmetrics = {
	.group = "metrics.k8s.io",
	.version = "v1beta1",
	.plural = "pods",
	.singular = "",
	.kind = "PodMetrics",
	.namespaced = 1,
	.computed = 1,
};
