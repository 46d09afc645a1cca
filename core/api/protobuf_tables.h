/*
 * The descriptor tables of the protobuf decoder (protobuf_tables.c): what a
 * k8s.io/api message looks like, field by field, for protobuf.c to read.
 */
#ifndef VOLRAY_PROTOBUF_TABLES_H
#define VOLRAY_PROTOBUF_TABLES_H

#include <stddef.h>
#include <stdint.h>

enum kind {
	K_STRING,
	K_BYTES,	/* base64 string in JSON */
	K_INT32,
	K_INT64,
	K_BOOL,
	K_MESSAGE,
	K_TIME,		/* metav1.Time: RFC 3339 string */
	K_MICROTIME,	/* metav1.MicroTime: RFC 3339 with microseconds */
	K_QUANTITY,	/* resource.Quantity: string */
	K_INTSTR,	/* intstr.IntOrString: number or string */
	K_RAW		/* runtime.RawExtension: the JSON it holds */
};

#define F_REPEATED	0x1
#define F_MAP		0x2	/* map<string, kind> */
#define F_KEEP		0x4	/* zero values kept: pointer or no omitempty */
#define F_INLINE	0x8	/* embedded struct: fields go to the parent */

struct msg;

struct field {
	uint32_t		 num;
	const char		*name;
	enum kind		 kind;
	int			 flags;
	const struct msg	*msg;
};

struct msg {
	const char		*name;
	const struct field	*fields;
	size_t			 nfields;
};

/*
 * The message for a kind in apiVersion, or NULL; *kind_known says whether
 * the kind is described in some other apiVersion.
 */
const struct msg *protobuf_tables_find(const char *api_version,
    const char *kind, int *kind_known);

#endif
