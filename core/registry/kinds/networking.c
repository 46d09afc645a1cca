/*
 * discovery.k8s.io and networking.k8s.io: EndpointSlices, kept by
 * the endpoints controller; NetworkPolicies and Ingresses, stored and
 * served, enforced by nothing (no proxy, no CNI).
 */
#include "registry/kinds/kinds_int.h"

const struct kind_desc kind_endpointslice = {
	.group = "discovery.k8s.io",
	.version = "v1",
	.plural = "endpointslices",
	.singular = "endpointslice",
	.kind = "EndpointSlice",
	.namespaced = 1,
};

/* Stored and served; nothing enforces them (no proxy, no CNI). */
const struct kind_desc kind_networkpolicy = {
	.group = "networking.k8s.io",
	.version = "v1",
	.plural = "networkpolicies",
	.singular = "networkpolicy",
	.kind = "NetworkPolicy",
	.namespaced = 1,
	.shorts = "netpol",
};

const struct kind_desc kind_ingress = {
	.group = "networking.k8s.io",
	.version = "v1",
	.plural = "ingresses",
	.singular = "ingress",
	.kind = "Ingress",
	.namespaced = 1,
	.has_status = 1,
	.shorts = "ing",
};

const struct kind_desc kind_ingressclass = {
	.group = "networking.k8s.io",
	.version = "v1",
	.plural = "ingressclasses",
	.singular = "ingressclass",
	.kind = "IngressClass",
};
