/*
 * rbac.authorization.k8s.io: Roles, ClusterRoles and their bindings;
 * their names are path segments ("system:controller:job-controller").
 */
#include <stddef.h>

#include "registry/admission_kinds.h"
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"
#include "registry/kinds/rows.h"

const struct kind_desc kind_role = {
	.group = "rbac.authorization.k8s.io",
	.version = "v1",
	.plural = "roles",
	.singular = "role",
	.kind = "Role",
	.namespaced = 1,
	.names = KIND_NAMES_SEGMENT,
	.validate = admission_rbac_role_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Created At", "date", 0 },
		{ NULL }
	},
	.row = rows_created_at,
	.protobuf = &pb_role,
};

const struct kind_desc kind_clusterrole = {
	.group = "rbac.authorization.k8s.io",
	.version = "v1",
	.plural = "clusterroles",
	.singular = "clusterrole",
	.kind = "ClusterRole",
	.names = KIND_NAMES_SEGMENT,
	.validate = admission_rbac_clusterrole_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Created At", "date", 0 },
		{ NULL }
	},
	.row = rows_created_at,
	.protobuf = &pb_cluster_role,
};

const struct kind_desc kind_rolebinding = {
	.group = "rbac.authorization.k8s.io",
	.version = "v1",
	.plural = "rolebindings",
	.singular = "rolebinding",
	.kind = "RoleBinding",
	.namespaced = 1,
	.names = KIND_NAMES_SEGMENT,
	.mutate = admission_rbac_binding_mutate,
	.validate = admission_rbac_rolebinding_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Role", "string", 0 },
		{ "Age", "string", 0 },
		{ "Users", "string", 1 },
		{ "Groups", "string", 1 },
		{ "ServiceAccounts", "string", 1 },
		{ NULL }
	},
	.row = rows_binding,
	.protobuf = &pb_role_binding,
};

const struct kind_desc kind_clusterrolebinding = {
	.group = "rbac.authorization.k8s.io",
	.version = "v1",
	.plural = "clusterrolebindings",
	.singular = "clusterrolebinding",
	.kind = "ClusterRoleBinding",
	.names = KIND_NAMES_SEGMENT,
	.mutate = admission_rbac_binding_mutate,
	.validate = admission_rbac_clusterrolebinding_validate,
	.cols = (const struct kind_col[]){
		{ "Name", "string", 0 },
		{ "Role", "string", 0 },
		{ "Age", "string", 0 },
		{ "Users", "string", 1 },
		{ "Groups", "string", 1 },
		{ "ServiceAccounts", "string", 1 },
		{ NULL }
	},
	.row = rows_binding,
	.protobuf = &pb_role_binding,
};
