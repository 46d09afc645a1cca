/*
 * Patch algorithms over cJSON trees: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and Kubernetes strategic merge patch.
 *
 * Merge patch and strategic merge patch never edit their inputs: they walk
 * the target and the patch side by side and build a fresh result, copying
 * untouched subtrees, so the target's key order is kept and new keys follow
 * it. JSON patch duplicates the target once and edits that copy in place; a
 * failing operation throws the copy away, so a patch applies entirely or not
 * at all.
 *
 * Strategic merge patch is a merge patch that also knows how to merge lists.
 * Kubernetes takes each list's strategy from struct tags on the Go types; we
 * take it from a table keyed by the list's field path inside the object
 * (list elements add no path segment), matched by suffix so that a pod spec
 * is recognised at "spec" in a Pod, "spec.template.spec" in a Deployment and
 * "spec.jobTemplate.spec.template.spec" in a CronJob. A list either merges
 * maps by a merge key, merges primitives as a set (finalizers) or, by
 * default, is replaced. The patch may carry directives: "$patch" (replace,
 * delete), "$retainKeys", "$setElementOrder/<field>" and
 * "$deleteFromPrimitiveList/<field>"; they act on the result and never
 * appear in it.
 *
 * Memory does not run out here: cJSON allocates through xmalloc, which
 * exits. A cJSON call that still returns NULL refused its arguments or
 * (newer cJSON's cJSON_Duplicate) a tree nested past its limit; the
 * causes say what could not be copied or inserted, not why.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/xmalloc.h"
#include "registry/patch.h"

#define DIRECTIVE_PATCH		"$patch"
#define DIRECTIVE_RETAIN	"$retainKeys"
#define PREFIX_ORDER		"$setElementOrder/"
#define PREFIX_DELETE		"$deleteFromPrimitiveList/"

/* Deeper lists than this fall back to replacement. */
#define MAX_DEPTH		64

/* How a strategic merge patch treats one list. */
struct listrule {
	const char	*kind;		/* NULL for every known kind */
	int		 anchored;	/* field is the whole path */
	const char	*field[3];	/* path suffix, outermost first */
	const char	*key;		/* NULL: merge primitives as a set */
};

/*
 * Lists not listed here (tolerations, envFrom, args, command, ...) are
 * replaced. The first matching rule wins, so the Service ports rule must
 * come before anything that could match "ports".
 */
static const struct listrule listrules[] = {
	{ "Service", 1, { "spec", "ports" }, "port" },
	{ "Node", 1, { "spec", "taints" }, "key" },
	{ "Node", 1, { "status", "addresses" }, "type" },
	{ "Pod", 1, { "status", "podIPs" }, "ip" },
	{ NULL, 0, { "containers", "ports" }, "containerPort" },
	{ NULL, 0, { "initContainers", "ports" }, "containerPort" },
	{ NULL, 0, { "ephemeralContainers", "ports" }, "containerPort" },
	{ NULL, 0, { "containers" }, "name" },
	{ NULL, 0, { "initContainers" }, "name" },
	{ NULL, 0, { "ephemeralContainers" }, "name" },
	{ NULL, 0, { "env" }, "name" },
	{ NULL, 0, { "volumes" }, "name" },
	{ NULL, 0, { "volumeMounts" }, "mountPath" },
	{ NULL, 0, { "volumeDevices" }, "devicePath" },
	{ NULL, 0, { "imagePullSecrets" }, "name" },
	{ NULL, 0, { "hostAliases" }, "ip" },
	{ NULL, 0, { "topologySpreadConstraints" }, "topologyKey" },
	{ NULL, 0, { "resourceClaims" }, "name" },
	{ NULL, 0, { "status", "conditions" }, "type" },
	{ NULL, 0, { "metadata", "ownerReferences" }, "uid" },
	{ NULL, 0, { "metadata", "finalizers" }, NULL },
};

/* Built-in kinds; any other kind merges lists by replacement. */
static const char *known_kinds[] = {
	"Binding", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "CronJob",
	"DaemonSet", "Deployment", "EndpointSlice", "Endpoints", "Event",
	"HorizontalPodAutoscaler", "Ingress", "Job", "Lease", "LimitRange",
	"Namespace", "NetworkPolicy", "Node", "PersistentVolume",
	"PersistentVolumeClaim", "Pod", "PodDisruptionBudget", "PodTemplate",
	"PriorityClass", "ReplicaSet", "ReplicationController", "ResourceQuota",
	"Role", "RoleBinding", "Secret", "Service", "ServiceAccount",
	"StatefulSet", "StorageClass",
};

/* State of one strategic merge: the field path to the current value. */
struct smp {
	const char	*kind;
	int		 known;
	const char	*path[MAX_DEPTH];
	int		 depth;		/* past MAX_DEPTH no rule applies */
	char		*cause;		/* first error */
};

/* A JSON pointer split into unescaped reference tokens. */
struct ptr {
	char		**seg;
	int		  n;
};

static void	 set_cause(char **, const char *, ...)
		     __attribute__((format(printf, 2, 3)));
static void	 smp_error(struct smp *, const char *, ...)
		     __attribute__((format(printf, 2, 3)));
static cJSON	*smp_value(struct smp *, const cJSON *, const cJSON *, int *);

/* Formats a malloc'd message; NULL only when memory runs out. */
static char *
vformat(const char *fmt, va_list ap)
{
	va_list	 aq;
	char	*s;
	int	 n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return (NULL);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return (s);
}

/* Sets *cause, if the caller asked for it. */
static void
set_cause(char **cause, const char *fmt, ...)
{
	va_list	ap;

	if (cause == NULL)
		return;
	va_start(ap, fmt);
	*cause = vformat(fmt, ap);
	va_end(ap);
}

/* Adds item to obj under key; item is freed if that fails. */
static int
add_member(cJSON *obj, const char *key, cJSON *item)
{
	if (item == NULL)
		return (-1);
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return (-1);
	}
	return (0);
}

/* Appends item to arr; item is freed if that fails. */
static int
add_element(cJSON *arr, cJSON *item)
{
	if (item == NULL)
		return (-1);
	if (!cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		return (-1);
	}
	return (0);
}

/*
 * Inserts item (owned) before position idx of arr. Debian's cJSON 1.7.15
 * refuses cJSON_InsertItemInArray in the middle of an array, so the tail is
 * moved aside and appended again instead.
 */
static int
insert_element(cJSON *arr, int idx, cJSON *item)
{
	cJSON	*tail, *e;

	if (cJSON_GetArrayItem(arr, idx) == NULL)
		return (add_element(arr, item));
	if ((tail = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(item);
		return (-1);
	}
	while ((e = cJSON_DetachItemFromArray(arr, idx)) != NULL)
		cJSON_AddItemToArray(tail, e);
	cJSON_AddItemToArray(arr, item);
	while (tail->child != NULL)
		cJSON_AddItemToArray(arr,
		    cJSON_DetachItemViaPointer(tail, tail->child));
	cJSON_Delete(tail);
	return (0);
}

static int
has_prefix(const char *s, const char *prefix)
{
	return (strncmp(s, prefix, strlen(prefix)) == 0);
}

/* Merges patch into target per RFC 7386, building a new tree. */
static cJSON *
merge(const cJSON *target, const cJSON *patch)
{
	const cJSON	*t, *p;
	cJSON		*res;

	if (!cJSON_IsObject(patch))
		return (cJSON_Duplicate(patch, 1));
	if (!cJSON_IsObject(target))
		target = NULL;
	if ((res = cJSON_CreateObject()) == NULL)
		return (NULL);

	if (target != NULL) {
		cJSON_ArrayForEach(t, target) {
			if (t->string == NULL)
				continue;
			p = cJSON_GetObjectItemCaseSensitive(patch, t->string);
			if (cJSON_IsNull(p))
				continue;
			if (add_member(res, t->string, p == NULL ?
			    cJSON_Duplicate(t, 1) : merge(t, p)) != 0)
				goto fail;
		}
	}
	cJSON_ArrayForEach(p, patch) {
		if (p->string == NULL || cJSON_IsNull(p))
			continue;
		if (target != NULL &&
		    cJSON_GetObjectItemCaseSensitive(target, p->string) != NULL)
			continue;
		if (add_member(res, p->string, merge(NULL, p)) != 0)
			goto fail;
	}
	return (res);

fail:
	cJSON_Delete(res);
	return (NULL);
}

cJSON *
patch_merge(const cJSON *target, const cJSON *patch, char **cause)
{
	cJSON	*res;

	if (patch == NULL) {
		set_cause(cause, "merge patch: no patch");
		return (NULL);
	}
	if ((res = merge(target, patch)) == NULL)
		set_cause(cause, "merge patch: a value could not be copied "
		    "into the result");
	return (res);
}

/* Splits a JSON pointer (RFC 6901) into tokens, undoing ~0 and ~1. */
static int
ptr_parse(const char *s, struct ptr *p)
{
	const char	*cp, *end;
	char		*tok, *out;
	int		 n;

	p->seg = NULL;
	p->n = 0;
	if (*s == '\0')
		return (0);
	if (*s != '/')
		return (-1);

	n = 0;
	for (cp = s; *cp != '\0'; cp++) {
		if (*cp == '/')
			n++;
	}
	p->seg = xcalloc((size_t)n, sizeof *p->seg);

	for (cp = s + 1;; cp = end + 1) {
		end = strchr(cp, '/');
		if (end == NULL)
			end = cp + strlen(cp);
		tok = xmalloc((size_t)(end - cp) + 1);
		p->seg[p->n++] = tok;
		for (out = tok; cp < end; cp++) {
			if (*cp != '~') {
				*out++ = *cp;
				continue;
			}
			if (cp + 1 < end && cp[1] == '0')
				*out++ = '~';
			else if (cp + 1 < end && cp[1] == '1')
				*out++ = '/';
			else
				return (-1);
			cp++;
		}
		*out = '\0';
		if (*end == '\0')
			break;
	}
	return (0);
}

static void
ptr_free(struct ptr *p)
{
	int	i;

	for (i = 0; i < p->n; i++)
		free(p->seg[i]);
	free(p->seg);
}

/* Parses an array index token: digits without a leading zero, or -1. */
static int
array_index(const char *tok)
{
	long	v = 0;

	if (*tok == '\0' || (tok[0] == '0' && tok[1] != '\0'))
		return (-1);
	for (; *tok != '\0'; tok++) {
		if (*tok < '0' || *tok > '9')
			return (-1);
		v = v * 10 + (*tok - '0');
		if (v > INT_MAX)
			return (-1);
	}
	return ((int)v);
}

/* Looks up one token in an object or array; NULL if absent. */
static cJSON *
ptr_child(cJSON *c, const char *tok)
{
	int	i;

	if (cJSON_IsObject(c))
		return (cJSON_GetObjectItemCaseSensitive(c, tok));
	if (cJSON_IsArray(c)) {
		if ((i = array_index(tok)) < 0)
			return (NULL);
		return (cJSON_GetArrayItem(c, i));
	}
	return (NULL);
}

/* Follows the first n tokens of p from doc. */
static cJSON *
ptr_walk(cJSON *doc, const struct ptr *p, int n)
{
	int	i;

	for (i = 0; i < n && doc != NULL; i++)
		doc = ptr_child(doc, p->seg[i]);
	return (doc);
}

/* Adds value (owned) at p, as the "add" operation does. */
static int
ptr_add(cJSON **doc, const struct ptr *p, cJSON *value, const char *op,
    const char *path, char **cause)
{
	cJSON		*parent;
	const char	*last;
	int		 idx, size;

	if (p->n == 0) {
		cJSON_Delete(*doc);
		*doc = value;
		return (0);
	}
	parent = ptr_walk(*doc, p, p->n - 1);
	last = p->seg[p->n - 1];

	if (cJSON_IsObject(parent)) {
		if (cJSON_GetObjectItemCaseSensitive(parent, last) != NULL) {
			if (cJSON_ReplaceItemInObjectCaseSensitive(parent, last,
			    value))
				return (0);
			cJSON_Delete(value);
			goto unbuilt;
		}
		if (add_member(parent, last, value) != 0)
			goto unbuilt;
		return (0);
	}
	if (cJSON_IsArray(parent)) {
		size = cJSON_GetArraySize(parent);
		idx = strcmp(last, "-") == 0 ? size : array_index(last);
		if (idx < 0 || idx > size) {
			cJSON_Delete(value);
			set_cause(cause, "jsonpatch %s operation does not "
			    "apply: index out of bounds: %s", op, path);
			return (-1);
		}
		if (insert_element(parent, idx, value) != 0)
			goto unbuilt;
		return (0);
	}
	cJSON_Delete(value);
	set_cause(cause, "jsonpatch %s operation does not apply: "
	    "doc is missing path: %s", op, path);
	return (-1);

unbuilt:
	set_cause(cause, "jsonpatch %s operation: the value could not be "
	    "inserted", op);
	return (-1);
}

/* Detaches and returns the value at p, for "remove" and "move". */
static cJSON *
ptr_detach(cJSON *doc, const struct ptr *p, const char *op,
    const char *what, const char *path, char **cause)
{
	cJSON		*parent, *item;
	const char	*last;
	int		 idx;

	if (p->n == 0) {
		set_cause(cause, "jsonpatch %s operation does not apply: "
		    "cannot remove the document root", op);
		return (NULL);
	}
	parent = ptr_walk(doc, p, p->n - 1);
	last = p->seg[p->n - 1];
	item = NULL;
	if (cJSON_IsObject(parent))
		item = cJSON_GetObjectItemCaseSensitive(parent, last);
	else if (cJSON_IsArray(parent)) {
		idx = array_index(last);
		if (idx < 0 || idx >= cJSON_GetArraySize(parent)) {
			set_cause(cause, "jsonpatch %s operation does not "
			    "apply: index out of bounds: %s", op, path);
			return (NULL);
		}
		item = cJSON_GetArrayItem(parent, idx);
	}
	if (item == NULL) {
		set_cause(cause, "jsonpatch %s operation does not apply: "
		    "doc is missing %s: %s", op, what, path);
		return (NULL);
	}
	return (cJSON_DetachItemViaPointer(parent, item));
}

/*
 * Replaces the value at p with value (owned). As kube-apiserver's
 * json-patch (evanphx/json-patch v4) does, a member missing from an
 * object that exists is set (Ray's autoscaler replaces a worker group's
 * scaleStrategy that no one wrote); a missing parent or array index is
 * an error.
 */
static int
ptr_replace(cJSON **doc, const struct ptr *p, cJSON *value,
    const char *path, char **cause)
{
	cJSON	*parent, *item;

	if (p->n == 0) {
		cJSON_Delete(*doc);
		*doc = value;
		return (0);
	}
	parent = ptr_walk(*doc, p, p->n - 1);
	item = ptr_child(parent, p->seg[p->n - 1]);
	if (item == NULL && cJSON_IsObject(parent)) {
		if (cJSON_AddItemToObject(parent, p->seg[p->n - 1], value))
			return (0);
		cJSON_Delete(value);
		set_cause(cause, "jsonpatch replace operation: the value "
		    "could not be added");
		return (-1);
	}
	if (item == NULL) {
		cJSON_Delete(value);
		set_cause(cause, "jsonpatch replace operation does not apply: "
		    "doc is missing path: %s", path);
		return (-1);
	}
	if (cJSON_IsObject(parent)) {
		if (cJSON_ReplaceItemInObjectCaseSensitive(parent,
		    p->seg[p->n - 1], value))
			return (0);
	} else if (cJSON_ReplaceItemViaPointer(parent, item, value))
		return (0);
	cJSON_Delete(value);
	set_cause(cause, "jsonpatch replace operation: the value could not "
	    "replace the old one");
	return (-1);
}

/* Returns 1 if pointer a is a proper prefix of pointer b. */
static int
ptr_is_prefix(const struct ptr *a, const struct ptr *b)
{
	int	i;

	if (a->n >= b->n)
		return (0);
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->seg[i], b->seg[i]) != 0)
			return (0);
	}
	return (1);
}

/* Returns the string member name of op, or NULL with *cause set. */
static const char *
op_string(const cJSON *o, const char *name, const char *op, char **cause)
{
	const cJSON	*v;

	v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!cJSON_IsString(v)) {
		set_cause(cause, "jsonpatch %s operation: missing or invalid "
		    "\"%s\"", op, name);
		return (NULL);
	}
	return (v->valuestring);
}

/* Applies one operation object to *doc. */
static int
apply_op(cJSON **doc, const cJSON *o, char **cause)
{
	struct ptr	 p, f;
	const cJSON	*value;
	cJSON		*item;
	const char	*op, *path, *from = NULL;
	int		 rc = -1;

	if (!cJSON_IsObject(o)) {
		set_cause(cause, "jsonpatch: operation is not an object");
		return (-1);
	}
	value = cJSON_GetObjectItemCaseSensitive(o, "op");
	if (!cJSON_IsString(value)) {
		set_cause(cause, "jsonpatch: operation has no \"op\"");
		return (-1);
	}
	op = value->valuestring;
	if (strcmp(op, "add") != 0 && strcmp(op, "remove") != 0 &&
	    strcmp(op, "replace") != 0 && strcmp(op, "move") != 0 &&
	    strcmp(op, "copy") != 0 && strcmp(op, "test") != 0) {
		set_cause(cause, "jsonpatch: unexpected kind: %s", op);
		return (-1);
	}
	if ((path = op_string(o, "path", op, cause)) == NULL)
		return (-1);
	value = cJSON_GetObjectItemCaseSensitive(o, "value");
	if (value == NULL && (strcmp(op, "add") == 0 ||
	    strcmp(op, "replace") == 0 || strcmp(op, "test") == 0)) {
		set_cause(cause, "jsonpatch %s operation: missing \"value\"",
		    op);
		return (-1);
	}
	if ((strcmp(op, "move") == 0 || strcmp(op, "copy") == 0) &&
	    (from = op_string(o, "from", op, cause)) == NULL)
		return (-1);

	f.seg = NULL;
	f.n = 0;
	if (ptr_parse(path, &p) != 0) {
		set_cause(cause, "jsonpatch %s operation does not apply: "
		    "invalid path: %s", op, path);
		ptr_free(&p);
		return (-1);
	}
	if (from != NULL && ptr_parse(from, &f) != 0) {
		set_cause(cause, "jsonpatch %s operation does not apply: "
		    "invalid from path: %s", op, from);
		goto out;
	}

	if (strcmp(op, "add") == 0) {
		if ((item = cJSON_Duplicate(value, 1)) == NULL)
			set_cause(cause, "jsonpatch add operation: the "
			    "value could not be copied");
		else
			rc = ptr_add(doc, &p, item, op, path, cause);
	} else if (strcmp(op, "remove") == 0) {
		item = ptr_detach(*doc, &p, op, "path", path, cause);
		if (item != NULL) {
			cJSON_Delete(item);
			rc = 0;
		}
	} else if (strcmp(op, "replace") == 0) {
		if ((item = cJSON_Duplicate(value, 1)) == NULL)
			set_cause(cause, "jsonpatch replace operation: the "
			    "value could not be copied");
		else
			rc = ptr_replace(doc, &p, item, path, cause);
	} else if (strcmp(op, "move") == 0) {
		if (ptr_walk(*doc, &f, f.n) == NULL) {
			set_cause(cause, "jsonpatch move operation does not "
			    "apply: doc is missing from path: %s", from);
		} else if (ptr_is_prefix(&f, &p)) {
			set_cause(cause, "jsonpatch move operation does not "
			    "apply: cannot move %s into its own child %s", from,
			    path);
		} else if (strcmp(from, path) == 0)
			rc = 0;
		else if ((item = ptr_detach(*doc, &f, op, "from path", from,
		    cause)) != NULL)
			rc = ptr_add(doc, &p, item, op, path, cause);
	} else if (strcmp(op, "copy") == 0) {
		item = ptr_walk(*doc, &f, f.n);
		if (item == NULL) {
			set_cause(cause, "jsonpatch copy operation does not "
			    "apply: doc is missing from path: %s", from);
		} else if ((item = cJSON_Duplicate(item, 1)) == NULL)
			set_cause(cause, "jsonpatch copy operation: the "
			    "value could not be copied");
		else
			rc = ptr_add(doc, &p, item, op, path, cause);
	} else {
		item = ptr_walk(*doc, &p, p.n);
		if (item == NULL) {
			set_cause(cause, "jsonpatch test operation does not "
			    "apply: doc is missing path: %s", path);
		} else if (!json_equal(item, value)) {
			set_cause(cause, "jsonpatch test operation does not "
			    "apply: testing value %s failed", path);
		} else
			rc = 0;
	}

out:
	ptr_free(&f);
	ptr_free(&p);
	return (rc);
}

cJSON *
patch_json(const cJSON *target, const cJSON *ops, char **cause)
{
	const cJSON	*o;
	cJSON		*doc;

	if (!cJSON_IsArray(ops)) {
		set_cause(cause, "jsonpatch: patch must be an array of "
		    "operations");
		return (NULL);
	}
	if (target == NULL)
		doc = cJSON_CreateNull();
	else
		doc = cJSON_Duplicate(target, 1);
	if (doc == NULL) {
		set_cause(cause, "jsonpatch: the document could not be copied");
		return (NULL);
	}
	cJSON_ArrayForEach(o, ops) {
		if (apply_op(&doc, o, cause) != 0) {
			cJSON_Delete(doc);
			return (NULL);
		}
	}
	return (doc);
}

/* Records the first error of a strategic merge. */
static void
smp_error(struct smp *s, const char *fmt, ...)
{
	va_list	ap;

	if (s->cause != NULL)
		return;
	va_start(ap, fmt);
	s->cause = vformat(fmt, ap);
	va_end(ap);
}

static int
is_directive(const char *key)
{
	if (key == NULL)
		return (0);
	return (strcmp(key, DIRECTIVE_PATCH) == 0 ||
	    strcmp(key, DIRECTIVE_RETAIN) == 0 ||
	    has_prefix(key, PREFIX_ORDER) || has_prefix(key, PREFIX_DELETE));
}

static void
path_push(struct smp *s, const char *field)
{
	if (s->depth < MAX_DEPTH)
		s->path[s->depth] = field;
	s->depth++;
}

static void
path_pop(struct smp *s)
{
	s->depth--;
}

/* Finds the rule for the list at the current path; NULL means replace. */
static const struct listrule *
find_rule(const struct smp *s)
{
	const struct listrule	*r;
	size_t			 i;
	int			 n, j;

	if (!s->known || s->depth > MAX_DEPTH)
		return (NULL);
	for (i = 0; i < sizeof listrules / sizeof listrules[0]; i++) {
		r = &listrules[i];
		if (r->kind != NULL && strcmp(r->kind, s->kind) != 0)
			continue;
		for (n = 0; n < 3 && r->field[n] != NULL; n++)
			;
		if (n > s->depth || (r->anchored && n != s->depth))
			continue;
		for (j = 0; j < n; j++) {
			if (strcmp(r->field[j], s->path[s->depth - n + j]) != 0)
				break;
		}
		if (j == n)
			return (r);
	}
	return (NULL);
}

/* Returns the $patch directive of a list element, or NULL. */
static const cJSON *
element_directive(const cJSON *e)
{
	if (!cJSON_IsObject(e))
		return (NULL);
	return (cJSON_GetObjectItemCaseSensitive(e, DIRECTIVE_PATCH));
}

/* Returns 1 if list element e is a map whose key equals v. */
static int
key_matches(const cJSON *e, const char *key, const cJSON *v)
{
	const cJSON	*k;

	if (!cJSON_IsObject(e))
		return (0);
	k = cJSON_GetObjectItemCaseSensitive(e, key);
	return (k != NULL && json_equal(k, v));
}

/* Returns 1 if some element of list equals v. */
static int
list_contains(const cJSON *list, const cJSON *v)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, list) {
		if (json_equal(e, v))
			return (1);
	}
	return (0);
}

/*
 * Checks the "$patch" elements of a list patch: sets *replace if one asks to
 * replace the list, and rejects unknown directives and deletions that cannot
 * name their element.
 */
static int
check_list_directives(struct smp *s, const cJSON *patch,
    const struct listrule *r, int *replace)
{
	const cJSON	*p, *d, *k;

	*replace = 0;
	cJSON_ArrayForEach(p, patch) {
		if ((d = element_directive(p)) == NULL)
			continue;
		if (!cJSON_IsString(d)) {
			smp_error(s, "unknown patch type: %s",
			    cJSON_IsNull(d) ? "null" : "(not a string)");
			return (-1);
		}
		if (strcmp(d->valuestring, "replace") == 0)
			*replace = 1;
		else if (strcmp(d->valuestring, "delete") == 0) {
			if (r == NULL || r->key == NULL)
				continue;
			k = cJSON_GetObjectItemCaseSensitive(p, r->key);
			if (k == NULL) {
				smp_error(s, "delete patch type with no merge "
				    "key defined: %s", r->key);
				return (-1);
			}
		} else if (strcmp(d->valuestring, "merge") != 0) {
			smp_error(s, "unknown patch type: %s", d->valuestring);
			return (-1);
		}
	}
	return (0);
}

/* Returns 1 if orig element e is deleted by a "$patch": "delete" element. */
static int
element_deleted(const cJSON *e, const cJSON *patch, const char *key)
{
	const cJSON	*p, *d, *k;

	cJSON_ArrayForEach(p, patch) {
		d = element_directive(p);
		if (d == NULL || strcmp(d->valuestring, "delete") != 0)
			continue;
		k = cJSON_GetObjectItemCaseSensitive(p, key);
		if (key_matches(e, key, k))
			return (1);
	}
	return (0);
}

/* Merges one patch map element into the keyed list res. */
static int
merge_keyed_element(struct smp *s, cJSON *res, const cJSON *p,
    const char *key)
{
	const cJSON	*k;
	cJSON		*e, *v;
	int		 del;

	k = cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, key) : NULL;
	if (k == NULL) {
		smp_error(s, "map does not contain declared merge key: %s",
		    key);
		return (-1);
	}
	cJSON_ArrayForEach(e, res) {
		if (key_matches(e, key, k))
			break;
	}
	v = smp_value(s, e, p, &del);
	if (v == NULL)
		return (del ? 0 : -1);
	if (e == NULL)
		return (add_element(res, v));
	if (!cJSON_ReplaceItemViaPointer(res, e, v)) {
		cJSON_Delete(v);
		return (-1);
	}
	return (0);
}

/*
 * Merges a list patch into orig (NULL if the target has no list here),
 * following the rule for the current path.
 */
static cJSON *
smp_list(struct smp *s, const cJSON *orig, const cJSON *patch)
{
	const struct listrule	*r;
	const cJSON		*o, *p;
	cJSON			*res, *v;
	int			 replace, del;

	r = find_rule(s);
	if (check_list_directives(s, patch, r, &replace) != 0)
		return (NULL);
	if (replace || r == NULL)
		orig = NULL;
	if ((res = cJSON_CreateArray()) == NULL)
		goto unbuilt;

	if (orig != NULL) {
		cJSON_ArrayForEach(o, orig) {
			if (r->key != NULL && element_deleted(o, patch, r->key))
				continue;
			if (r->key == NULL && list_contains(res, o))
				continue;
			if (add_element(res, cJSON_Duplicate(o, 1)) != 0)
				goto unbuilt;
		}
	}
	cJSON_ArrayForEach(p, patch) {
		if (element_directive(p) != NULL &&
		    strcmp(element_directive(p)->valuestring, "merge") != 0)
			continue;
		if (orig != NULL && r->key != NULL) {
			if (merge_keyed_element(s, res, p, r->key) != 0)
				goto fail;
			continue;
		}
		if (orig != NULL && list_contains(res, p))
			continue;
		v = smp_value(s, NULL, p, &del);
		if (v == NULL) {
			if (del)
				continue;
			goto fail;
		}
		if (add_element(res, v) != 0)
			goto unbuilt;
	}
	return (res);

unbuilt:
	smp_error(s, "strategic merge patch: a value could not be copied "
	    "into the result");
fail:
	cJSON_Delete(res);
	return (NULL);
}

/* Removes from list every element equal to one of values. */
static void
delete_values(cJSON *list, const cJSON *values)
{
	cJSON	*e, *next;

	for (e = list->child; e != NULL; e = next) {
		next = e->next;
		if (list_contains(values, e))
			cJSON_Delete(cJSON_DetachItemViaPointer(list, e));
	}
}

/*
 * Reorders list in place: elements named by order (by merge key, or by value
 * for primitives) come first in that order, the rest follow as they were.
 */
static int
order_list(cJSON *list, const cJSON *order, const char *key)
{
	const cJSON	*entry, *k;
	cJSON		*front, *e;

	if ((front = cJSON_CreateArray()) == NULL)
		return (-1);
	cJSON_ArrayForEach(entry, order) {
		k = NULL;
		if (key != NULL) {
			k = cJSON_IsObject(entry) ?
			    cJSON_GetObjectItemCaseSensitive(entry, key) : NULL;
			if (k == NULL)
				continue;
		}
		cJSON_ArrayForEach(e, list) {
			if (k != NULL ? key_matches(e, key, k) :
			    json_equal(e, entry))
				break;
		}
		if (e != NULL)
			cJSON_AddItemToArray(front,
			    cJSON_DetachItemViaPointer(list, e));
	}
	while (list->child != NULL)
		cJSON_AddItemToArray(front,
		    cJSON_DetachItemViaPointer(list, list->child));
	while (front->child != NULL)
		cJSON_AddItemToArray(list,
		    cJSON_DetachItemViaPointer(front, front->child));
	cJSON_Delete(front);
	return (0);
}

/*
 * Applies the list and key directives of patch to the merged map res:
 * deletions from primitive lists, then element order, then $retainKeys.
 */
static int
apply_directives(struct smp *s, cJSON *res, const cJSON *patch)
{
	const struct listrule	*r;
	const cJSON		*p, *retain, *k;
	cJSON			*list, *e, *next;
	const char		*field;

	cJSON_ArrayForEach(p, patch) {
		if (p->string == NULL || !has_prefix(p->string, PREFIX_DELETE))
			continue;
		if (!cJSON_IsArray(p)) {
			smp_error(s, "invalid patch: %s must be a list",
			    p->string);
			return (-1);
		}
		field = p->string + strlen(PREFIX_DELETE);
		list = cJSON_GetObjectItemCaseSensitive(res, field);
		if (cJSON_IsArray(list))
			delete_values(list, p);
	}

	cJSON_ArrayForEach(p, patch) {
		if (p->string == NULL || !has_prefix(p->string, PREFIX_ORDER))
			continue;
		if (!cJSON_IsArray(p)) {
			smp_error(s, "invalid patch: %s must be a list",
			    p->string);
			return (-1);
		}
		field = p->string + strlen(PREFIX_ORDER);
		list = cJSON_GetObjectItemCaseSensitive(res, field);
		if (!cJSON_IsArray(list))
			continue;
		path_push(s, field);
		r = find_rule(s);
		path_pop(s);
		if (order_list(list, p, r != NULL ? r->key : NULL) != 0) {
			smp_error(s, "strategic merge patch: the list %s "
			    "could not be reordered", field);
			return (-1);
		}
	}

	retain = cJSON_GetObjectItemCaseSensitive(patch, DIRECTIVE_RETAIN);
	if (retain == NULL)
		return (0);
	if (!cJSON_IsArray(retain))
		goto bad_retain;
	cJSON_ArrayForEach(k, retain) {
		if (!cJSON_IsString(k))
			goto bad_retain;
	}
	for (e = res->child; e != NULL; e = next) {
		next = e->next;
		cJSON_ArrayForEach(k, retain) {
			if (strcmp(k->valuestring, e->string) == 0)
				break;
		}
		if (k == NULL)
			cJSON_Delete(cJSON_DetachItemViaPointer(res, e));
	}
	return (0);

bad_retain:
	smp_error(s, "invalid patch: %s must be a list of strings",
	    DIRECTIVE_RETAIN);
	return (-1);
}

/*
 * Merges a map patch into orig (NULL if the target has no map here). Returns
 * NULL with *deleted set if the patch deletes the map.
 */
static cJSON *
smp_map(struct smp *s, const cJSON *orig, const cJSON *patch, int *deleted)
{
	const cJSON	*d, *o, *p;
	cJSON		*res, *v;
	int		 del;

	*deleted = 0;
	d = cJSON_GetObjectItemCaseSensitive(patch, DIRECTIVE_PATCH);
	if (d != NULL) {
		if (!cJSON_IsString(d)) {
			smp_error(s, "unknown patch type: %s",
			    cJSON_IsNull(d) ? "null" : "(not a string)");
			return (NULL);
		}
		if (strcmp(d->valuestring, "delete") == 0) {
			*deleted = 1;
			return (NULL);
		}
		if (strcmp(d->valuestring, "replace") == 0)
			orig = NULL;
		else if (strcmp(d->valuestring, "merge") != 0) {
			smp_error(s, "unknown patch type: %s", d->valuestring);
			return (NULL);
		}
	}
	if ((res = cJSON_CreateObject()) == NULL)
		goto unbuilt;

	if (orig != NULL) {
		cJSON_ArrayForEach(o, orig) {
			if (o->string == NULL)
				continue;
			p = cJSON_GetObjectItemCaseSensitive(patch, o->string);
			if (p != NULL && is_directive(p->string))
				p = NULL;
			if (cJSON_IsNull(p))
				continue;
			if (p == NULL) {
				if (add_member(res, o->string,
				    cJSON_Duplicate(o, 1)) != 0)
					goto unbuilt;
				continue;
			}
			path_push(s, o->string);
			v = smp_value(s, o, p, &del);
			path_pop(s);
			if (v == NULL) {
				if (del)
					continue;
				goto fail;
			}
			if (add_member(res, o->string, v) != 0)
				goto unbuilt;
		}
	}
	cJSON_ArrayForEach(p, patch) {
		if (p->string == NULL || is_directive(p->string) ||
		    cJSON_IsNull(p))
			continue;
		if (orig != NULL &&
		    cJSON_GetObjectItemCaseSensitive(orig, p->string) != NULL)
			continue;
		path_push(s, p->string);
		v = smp_value(s, NULL, p, &del);
		path_pop(s);
		if (v == NULL) {
			if (del)
				continue;
			goto fail;
		}
		if (add_member(res, p->string, v) != 0)
			goto unbuilt;
	}
	if (apply_directives(s, res, patch) != 0)
		goto fail;
	return (res);

unbuilt:
	smp_error(s, "strategic merge patch: a value could not be copied "
	    "into the result");
fail:
	cJSON_Delete(res);
	return (NULL);
}

/*
 * Merges any patch value into orig. Maps and lists merge only with a value
 * of the same type; anything else replaces.
 */
static cJSON *
smp_value(struct smp *s, const cJSON *orig, const cJSON *patch, int *deleted)
{
	cJSON	*v;

	*deleted = 0;
	if (cJSON_IsObject(patch))
		return (smp_map(s, cJSON_IsObject(orig) ? orig : NULL, patch,
		    deleted));
	if (cJSON_IsArray(patch))
		return (smp_list(s, cJSON_IsArray(orig) ? orig : NULL, patch));
	if ((v = cJSON_Duplicate(patch, 1)) == NULL)
		smp_error(s, "strategic merge patch: a value could not be "
		    "copied");
	return (v);
}

/* Does a strategic merge patch know the lists of this kind? */
static int
kind_known(const char *kind)
{
	size_t	i;

	for (i = 0; kind != NULL &&
	    i < sizeof known_kinds / sizeof known_kinds[0]; i++) {
		if (strcmp(kind, known_kinds[i]) == 0)
			return (1);
	}
	return (0);
}

int
patch_list_rule(const char *kind, const char *const *path, int depth,
    const char **key)
{
	const struct listrule	*r;
	struct smp		 s;
	int			 i;

	memset(&s, 0, sizeof s);
	s.kind = kind;
	s.known = kind_known(kind);
	for (i = 0; i < depth; i++)
		path_push(&s, path[i]);
	if ((r = find_rule(&s)) == NULL)
		return (0);
	*key = r->key;
	return (1);
}

cJSON *
patch_strategic(const cJSON *target, const cJSON *patch, const char *kind,
    char **cause)
{
	struct smp	 s;
	cJSON		*res;
	int		 del;

	memset(&s, 0, sizeof s);
	s.kind = kind;
	s.known = kind_known(kind);
	if (!cJSON_IsObject(patch)) {
		set_cause(cause, "strategic merge patch must be a JSON object");
		return (NULL);
	}
	res = smp_map(&s, cJSON_IsObject(target) ? target : NULL, patch, &del);
	if (res == NULL && del)
		res = cJSON_CreateObject();
	if (res == NULL) {
		if (s.cause == NULL)
			smp_error(&s, "strategic merge patch: the result "
			    "could not be built");
		if (cause != NULL)
			*cause = s.cause;
		else
			free(s.cause);
	}
	return (res);
}
