/*
 * The protobuf messages of the built-in kinds (kinds/protobuf_msgs.c):
 * what a k8s.io/api message looks like, field by field, for the decoder
 * (api/protobuf.c) to read. A kind's descriptor names its top-level
 * message (kind_desc.protobuf, kind_sub.protobuf): the field numbers are
 * a fact of the kind, as its Table columns are; the wire format is the
 * API's.
 */
#ifndef VOLRAY_PROTOBUF_MSGS_H
#define VOLRAY_PROTOBUF_MSGS_H

#include <stddef.h>
#include <stdint.h>

/* How a field's value is written on the wire and shown in JSON. */
enum pb_type {
	PB_STRING,
	PB_BYTES,	/* base64 string in JSON */
	PB_INT32,
	PB_INT64,
	PB_BOOL,
	PB_MESSAGE,
	PB_TIME,	/* metav1.Time: RFC 3339 string */
	PB_MICROTIME,	/* metav1.MicroTime: RFC 3339 with microseconds */
	PB_QUANTITY,	/* resource.Quantity: string */
	PB_INTSTR,	/* intstr.IntOrString: number or string */
	PB_RAW		/* runtime.RawExtension: the JSON it holds */
};

#define PB_REPEATED	0x1
#define PB_MAP		0x2	/* map<string, kind> */
#define PB_KEEP		0x4	/* zero values kept: pointer or no omitempty */
#define PB_INLINE	0x8	/* embedded struct: fields go to the parent */

struct pb_msg;

struct pb_field {
	uint32_t		 num;
	const char		*name;
	enum pb_type		 kind;
	int			 flags;
	const struct pb_msg	*msg;
};

struct pb_msg {
	const char		*name;
	const struct pb_field	*fields;
	size_t			 nfields;
};

/* The kinds' top-level messages, named by their descriptors. */
extern const struct pb_msg pb_namespace;
extern const struct pb_msg pb_pod;
extern const struct pb_msg pb_binding;		/* pods/binding */
extern const struct pb_msg pb_event;
extern const struct pb_msg pb_lease;
extern const struct pb_msg pb_resource_claim_object;
extern const struct pb_msg pb_config_map;
extern const struct pb_msg pb_secret;
extern const struct pb_msg pb_service_account;
extern const struct pb_msg pb_service;
extern const struct pb_msg pb_resource_quota;
extern const struct pb_msg pb_deployment;
extern const struct pb_msg pb_job;
extern const struct pb_msg pb_cron_job;
extern const struct pb_msg pb_priority_class;
extern const struct pb_msg pb_role;
extern const struct pb_msg pb_cluster_role;
extern const struct pb_msg pb_role_binding;	/* and ClusterRoleBinding */
extern const struct pb_msg pb_pdb;
extern const struct pb_msg pb_ingress;
extern const struct pb_msg pb_self_subject_access_review;
extern const struct pb_msg pb_self_subject_rules_review;
extern const struct pb_msg pb_self_subject_review;

/*
 * Bodies that are no kind's: DeleteOptions (metav1 registers it in every
 * group version) and TokenRequest (serviceaccounts/token's, kubectl
 * create token).
 */
extern const struct pb_msg pb_delete_options;
extern const struct pb_msg pb_token_request;

#endif
