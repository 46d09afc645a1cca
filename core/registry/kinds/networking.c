/*
 * discovery.k8s.io and networking.k8s.io: EndpointSlices, kept by
 * the endpoints controller; NetworkPolicies and Ingresses, stored and
 * served, enforced by nothing (no proxy, no CNI).
 */
#include <stddef.h>

#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_endpointslice = {
	.group = "discovery.k8s.io",
	.version = "v1",
	.plural = "endpointslices",
	.singular = "endpointslice",
	.kind = "EndpointSlice",
	.namespaced = 1,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "AddressType", "string", 0 },
		{ "Ports", "string", 0 },
		{ "Endpoints", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_endpointslice,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Pod-Selector", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_networkpolicy,
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
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Class", "string", 0 },
		{ "Hosts", "string", 0 },
		{ "Address", "string", 0 },
		{ "Ports", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_ingress,
	.protobuf = &pb_ingress,
};

const struct kind_desc kind_ingressclass = {
	.group = "networking.k8s.io",
	.version = "v1",
	.plural = "ingressclasses",
	.singular = "ingressclass",
	.kind = "IngressClass",
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Controller", "string", 0 },
		{ "Parameters", "string", 0 },
		{ "Age", "string", 0 },
		{ NULL }
	},
	.row = rows_ingressclass,
};
