/*
 * authorization.k8s.io and authentication.k8s.io: the reviews kubectl
 * auth can-i and whoami POST, answered and never stored.
 */
#include "registry/kinds/kinds.h"
#include "registry/kinds/protobuf_msgs.h"

/* POST-only: kubectl auth can-i. */
const struct kind_desc kind_selfsubjectaccessreview = {
	.group = "authorization.k8s.io",
	.version = "v1",
	.plural = "selfsubjectaccessreviews",
	.singular = "selfsubjectaccessreview",
	.kind = "SelfSubjectAccessReview",
	.create_only = 1,
	.protobuf = &pb_self_subject_access_review,
};

const struct kind_desc kind_selfsubjectrulesreview = {
	.group = "authorization.k8s.io",
	.version = "v1",
	.plural = "selfsubjectrulesreviews",
	.singular = "selfsubjectrulesreview",
	.kind = "SelfSubjectRulesReview",
	.create_only = 1,
	.protobuf = &pb_self_subject_rules_review,
};

/* POST-only: kubectl auth whoami. */
const struct kind_desc kind_selfsubjectreview = {
	.group = "authentication.k8s.io",
	.version = "v1",
	.plural = "selfsubjectreviews",
	.singular = "selfsubjectreview",
	.kind = "SelfSubjectReview",
	.create_only = 1,
	.protobuf = &pb_self_subject_review,
};
