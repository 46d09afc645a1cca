/*
 * Built-in kinds, one descriptor each (kinds/<group>.c), the way
 * kube-apiserver keeps pkg/registry/<group>/<kind>/ and tmux one cmd_entry
 * per command: a kind's names and scope, its feature gate, its
 * subresources, how its names are checked, its admission hooks (the
 * defaults a cluster fills in, the validation kubectl users rely on), what
 * follows its writes (stored, removed), its Table columns and row (kubectl
 * get), its protobuf message, its base64 map, whether DELETE answers the
 * object, and which client of a remote volrayd writes it.
 *
 * resource_init (kinds/builtin.c) registers them, in kinds/builtin.c's
 * order, which is discovery's; the generic code reads a resource's
 * descriptor (r->desc) instead of comparing names.
 *
 * Adding a built-in kind:
 * 1. its descriptor in kinds/<group>.c (a new group: a new file, in
 *    Makefile.am), declared and listed in kinds/builtin.c where
 *    discovery should show it;
 * 2. its hooks, if it has defaults or rules: functions of the
 *    kind_mutate_fn and kind_validate_fn types, in registry/admission_*.c
 *    and registry/admission_kinds.h (kind_stored_fn, kind_removed_fn if
 *    a write must change more than the store);
 * 3. its schema in openapi/<group>.yaml (kubectl explain; a new file in
 *    Makefile.am's dist_openapi_DATA);
 * 4. its Table columns (cols) if kubectl get should show more than Name
 *    and Age: each a field's JSONPath (path), or cells computed as
 *    kube's printers do by a row function (kinds/rows*.c, kinds/rows.h);
 *    its protobuf message (protobuf) if client-go's typed clients send
 *    it: the fields in kinds/protobuf_msgs.c, declared in
 *    kinds/protobuf_msgs.h;
 * 5. in auth/rbac_policy.c, the users' roles that cover it (view, edit:
 *    system:aggregate-to-*, as kube's bootstrap policy) and the roles of
 *    the controllers whose scripts use it (a role is what its controller
 *    does, so it stays with the others, not in the descriptor); describe
 *    in cli/cli_describe_kinds.c (the client keeps its own table);
 * 6. its tests (tests/blackbox/clusterkinds.sh or a script of its own),
 *    and its name in volrayd(8)'s list of the kinds served.
 */
#ifndef VOLRAY_KINDS_H
#define VOLRAY_KINDS_H

#include <cjson/cJSON.h>

struct pb_msg;
struct resource;
struct store;

/* Fill defaults into obj; old is the stored object on update, else NULL. */
typedef void kind_mutate_fn(struct store *, const struct resource *,
    cJSON *obj, const cJSON *old);
/* Append a cause per violation to causes. */
typedef void kind_validate_fn(struct store *, const struct resource *,
    const cJSON *obj, const cJSON *old, cJSON *causes);

/*
 * After obj is stored by a create (old NULL) or by an update that changed
 * more than its metadata and status (old: the object before): a
 * CustomResourceDefinition's versions are registered.
 */
typedef void kind_stored_fn(const struct resource *, const cJSON *obj,
    const cJSON *old);
/* After the object named name is removed. */
typedef void kind_removed_fn(const struct resource *, const char *name);

/*
 * Append a Table row's cells after NAME (all of them when the kind's
 * columns do not start with Name): kinds/rows*.c.
 */
typedef void kind_row_fn(cJSON *cells, const cJSON *obj);

/* The subresource sub of r's kind (not status or scale), or NULL. */
const struct kind_sub *kind_sub_find(const struct resource *r,
    const char *sub);

/* A Table column (kubectl get); priority 1: -o wide only. */
struct kind_col {
	const char *name;
	const char *type;        /* string, integer, number, boolean, date */
	int priority;
	const char *path;        /* the field shown as it is (".handler"),
	                            when the kind has no row function; Name
	                            and Age need none */
};

/*
 * A subresource beyond status and scale, which the descriptor's fields
 * say (a Pod's binding, eviction, log, exec...; a Namespace's finalize).
 */
struct kind_sub {
	const char *name;        /* "binding" */
	const char *kind;        /* discovery's; NULL: not listed there */
	const char *verb;        /* discovery's one verb: "create", "get" */
	const char *group;       /* another group's kind (Eviction: policy) */
	const char *version;
	int stream;              /* a connection into a pod's containers */
	const struct pb_msg *protobuf;  /* its body's message, if client-go
	                                   sends it in protobuf */
};

/* What an object's name must be (admission_check_name). */
enum kind_names {
	KIND_NAMES_SUBDOMAIN,	/* an RFC 1123 subdomain (most kinds) */
	KIND_NAMES_LABEL,	/* an RFC 1123 label, no dots (Namespace) */
	KIND_NAMES_LABEL_ALPHA,	/* a label starting with a letter (Service) */
	KIND_NAMES_SEGMENT	/* a path segment (RBAC: "system:x") */
};

/*
 * The client a remote volrayd writes a kind through (client/remote.c):
 * each its own token bucket and connections, at the flags' limits.
 */
enum kind_client {
	KIND_CLIENT_KIND,	/* one per kind, made at its first write */
	KIND_CLIENT_EVENTS,	/* the Events' one, as controller-runtime's
				   recorder has its own clientset: Events do
				   not spend the tokens writes need */
	KIND_CLIENT_LEASES	/* the Leases' one, as leader election and
				   the kubelet's heartbeats have theirs: a
				   renewal never waits behind other writes */
};

struct kind_desc {
	const char *group;       /* "" for the core group */
	const char *version;
	const char *plural;
	const char *singular;
	const char *kind;
	int namespaced;
	int has_status;          /* a /status subresource */
	int has_scale;           /* a /scale subresource */
	const char *shorts;      /* comma-separated */
	const char *categories;  /* comma-separated */
	int old_version;         /* served, but not the storage version */
	int create_only;         /* a review: answered, never stored */
	int computed;            /* metrics: read, made when asked */
	const char *gate;        /* served only with this feature gate on */
	enum kind_names names;
	const struct kind_sub *subs;  /* ends with { NULL } */
	const char *bytes_map;   /* a map of []byte, base64 in JSON ("data") */
	int delete_returns;      /* DELETE answers the object, not a Status
	                            (kube's ReturnDeletedObject) */
	enum kind_client client;      /* a remote volrayd's client for it */
	kind_mutate_fn *mutate;       /* NULL: no defaults */
	kind_validate_fn *validate;   /* NULL: no rules beyond the name */
	kind_stored_fn *stored;
	kind_removed_fn *removed;
	const struct kind_col *cols;  /* ends with { NULL }; NULL: Name, Age */
	kind_row_fn *row;
	/* Its message (kinds/protobuf_msgs.h), if client-go's typed clients
	   send it in protobuf; NULL: such a body is refused ("send JSON"). */
	const struct pb_msg *protobuf;
};

#endif
