/*
 * The RBAC authorizer, with kube-apiserver's semantics.
 *
 * Requests are answered from an index, never from JSON. The index holds
 * every Role and ClusterRole with its rules compiled (rbac_rule.c), and
 * every RoleBinding and ClusterRoleBinding under each of its subjects'
 * keys: "u:alice" for a User, "g:devs" for a Group, and
 * "u:system:serviceaccount:NS:NAME" for a ServiceAccount (the name its
 * tokens authenticate as). Authorizing looks up the user's key and one key
 * per group, then, as Kubernetes' rule resolver does, visits the
 * ClusterRoleBindings (which grant everywhere) and then the RoleBindings of
 * the request's namespace (which grant their Role's or ClusterRole's rules
 * in that namespace only), in name order, until a rule allows. Members of
 * system:masters are allowed everything without a lookup.
 *
 * The index is rebuilt lazily: a durable store event on any of the four
 * kinds, or a write of one passing the registry's admission hook, marks it
 * stale, and the next question rebuilds it (a few hundred objects at most:
 * microseconds). The same hook prevents escalation as kube-apiserver's RBAC
 * storage does: a role may hold only rules its writer holds (or the writer
 * has "escalate" on it), a binding may reference only a role whose rules
 * its writer holds in the binding's namespace (or the writer has "bind" on
 * that role). After each batch of durable events that touched a
 * ClusterRole, aggregated ClusterRoles are recomputed (rbac_policy.c), as
 * kube-controller-manager's clusterrole-aggregation controller does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/rbac.h"
#include "auth/rbac_int.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

#define RES_ROLES	"roles." RBAC_GROUP
#define RES_CROLES	"clusterroles." RBAC_GROUP
#define RES_BINDINGS	"rolebindings." RBAC_GROUP
#define RES_CBINDINGS	"clusterrolebindings." RBAC_GROUP

struct role {
	char *key;                  /* "r:NS/NAME" or "c:NAME" */
	struct rbac_rule *rules;
	int nrules;
};

struct subject {
	char *key;                  /* "u:NAME" or "g:NAME" */
	char *kind, *name, *ns;     /* as written, for describing */
};

struct binding {
	int index;                  /* ClusterRoleBindings first, by name */
	char *ns;                   /* "" for a ClusterRoleBinding */
	char *name;
	char *role_kind, *role_name;
	const struct role *role;    /* NULL: the role does not exist */
	struct subject *subjects;
	int nsubjects;
	unsigned mark;              /* visited in the current pass */
};

struct bucket {
	char *key;
	struct binding **v;
	int n;
	size_t cap;
};

struct rbac {
	store *st;
	registry *rg;
	int dirty;
	int aggregate;              /* a ClusterRole changed */
	int aggregating;
	hmap *roles;                /* key -> struct role */
	hmap *subjects;             /* key -> struct bucket */
	struct role **rolev;
	int nroles;
	struct binding **bindv;
	int nbind;
	struct bucket **bucketv;
	int nbuckets;
	unsigned mark;
	int always_allow;           /* --authorization-mode=AlwaysAllow */
	struct binding **found;     /* scratch: one pass's bindings */
	int nfound;
	size_t capfound;
	registry_admit_fn prev_admit;
	void *prev_arg;
	uint64_t rebuilds;
};

static const char *const authenticated[] = { USER_GROUP_AUTHENTICATED };
static const user_info aggregator = {
	"system:controller:clusterrole-aggregation-controller", "",
	authenticated, 1
};

/* A copy of s, or of "" for a field that is not there. */
static char *
dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

static int
is_master(const user_info *u)
{
	int i;

	for (i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], USER_GROUP_MASTERS) == 0)
			return 1;
	return 0;
}

static void
index_clear(rbac *rb)
{
	int i, j;

	for (i = 0; i < rb->nroles; i++) {
		free(rb->rolev[i]->key);
		rbac_rule_free(rb->rolev[i]->rules, rb->rolev[i]->nrules);
		free(rb->rolev[i]);
	}
	free(rb->rolev);
	for (i = 0; i < rb->nbind; i++) {
		struct binding *b = rb->bindv[i];

		for (j = 0; j < b->nsubjects; j++) {
			free(b->subjects[j].key);
			free(b->subjects[j].kind);
			free(b->subjects[j].name);
			free(b->subjects[j].ns);
		}
		free(b->subjects);
		free(b->ns);
		free(b->name);
		free(b->role_kind);
		free(b->role_name);
		free(b);
	}
	free(rb->bindv);
	for (i = 0; i < rb->nbuckets; i++) {
		free(rb->bucketv[i]->key);
		free(rb->bucketv[i]->v);
		free(rb->bucketv[i]);
	}
	free(rb->bucketv);
	hmap_free(rb->roles);
	hmap_free(rb->subjects);
	rb->rolev = NULL;
	rb->bindv = NULL;
	rb->bucketv = NULL;
	rb->nroles = rb->nbind = rb->nbuckets = 0;
	rb->roles = hmap_new();
	rb->subjects = hmap_new();
}

static void
add_roles(rbac *rb, const char *res, int cluster, size_t *cap)
{
	store_obj *const *objs;
	size_t n = store_list(rb->st, res, NULL, &objs), i;

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);
		struct role *r = xcalloc(1, sizeof *r);

		r->key = cluster ? util_printf("c:%s", objs[i]->name) :
		    util_printf("r:%s/%s", objs[i]->ns, objs[i]->name);
		r->rules = rbac_rule_compile(json_at(t, "rules"), &r->nrules);
		cJSON_Delete(t);
		XGROW(rb->rolev, *cap, rb->nroles + 1);
		rb->rolev[rb->nroles++] = r;
		hmap_put(rb->roles, r->key, r);
	}
}

/* File binding b under key (once, even if two subjects share the key). */
static void
file_binding(rbac *rb, const char *key, struct binding *b, size_t *cap)
{
	struct bucket *k = hmap_get(rb->subjects, key);

	if (k == NULL) {
		k = xcalloc(1, sizeof *k);
		k->key = xstrdup(key);
		hmap_put(rb->subjects, k->key, k);
		XGROW(rb->bucketv, *cap, rb->nbuckets + 1);
		rb->bucketv[rb->nbuckets++] = k;
	}
	if (k->n > 0 && k->v[k->n - 1] == b)
		return;
	XGROW(k->v, k->cap, k->n + 1);
	k->v[k->n++] = b;
}

/* The index key a subject authenticates as, or NULL if it matches no one. */
static char *
subject_key(const cJSON *s, const char *bns)
{
	const char *kind = json_str(s, "kind"), *name = json_str(s, "name");
	const char *ns = json_str(s, "namespace");

	if (kind == NULL || name == NULL)
		return NULL;
	if (strcmp(kind, "User") == 0)
		return util_printf("u:%s", name);
	if (strcmp(kind, "Group") == 0)
		return util_printf("g:%s", name);
	if (strcmp(kind, "ServiceAccount") == 0) {
		/* A RoleBinding's service accounts default to its namespace. */
		if (ns == NULL || *ns == '\0')
			ns = bns;
		if (*ns == '\0')
			return NULL;
		return util_printf("u:system:serviceaccount:%s:%s", ns, name);
	}
	return NULL;
}

static void
add_bindings(rbac *rb, const char *res, int cluster, size_t *cap,
    size_t *bcap)
{
	store_obj *const *objs;
	size_t n = store_list(rb->st, res, NULL, &objs), i;
	char key[600];

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]), *s, *list;
		struct binding *b = xcalloc(1, sizeof *b);
		int ns = cJSON_GetArraySize(json_at(t, "subjects"));

		b->subjects = xcalloc(ns + 1, sizeof *b->subjects);
		b->index = rb->nbind;
		b->ns = xstrdup(cluster ? "" : objs[i]->ns);
		b->name = xstrdup(objs[i]->name);
		b->role_kind = dup_or_empty(json_str(t, "roleRef.kind"));
		b->role_name = dup_or_empty(json_str(t, "roleRef.name"));
		if (strcmp(b->role_kind, "ClusterRole") == 0)
			snprintf(key, sizeof key, "c:%s", b->role_name);
		else if (!cluster && strcmp(b->role_kind, "Role") == 0)
			snprintf(key, sizeof key, "r:%s/%s", b->ns,
			    b->role_name);
		else
			key[0] = '\0';
		b->role = key[0] ? hmap_get(rb->roles, key) : NULL;
		list = json_at(t, "subjects");
		if (!cJSON_IsArray(list))
			list = NULL;
		cJSON_ArrayForEach(s, list) {
			char *k = subject_key(s, b->ns);
			struct subject *sj = &b->subjects[b->nsubjects];

			if (k == NULL)
				continue;
			sj->key = k;
			sj->kind = dup_or_empty(json_str(s, "kind"));
			sj->name = dup_or_empty(json_str(s, "name"));
			sj->ns = xstrdup(json_str(s, "namespace") &&
			    *json_str(s, "namespace") ? json_str(s,
			    "namespace") : b->ns);
			b->nsubjects++;
			file_binding(rb, k, b, cap);
		}
		cJSON_Delete(t);
		XGROW(rb->bindv, *bcap, rb->nbind + 1);
		rb->bindv[rb->nbind++] = b;
	}
}

static void
ensure_index(rbac *rb)
{
	size_t rcap = 0, kcap = 0, bcap = 0;

	if (!rb->dirty)
		return;
	index_clear(rb);
	add_roles(rb, RES_ROLES, 0, &rcap);
	add_roles(rb, RES_CROLES, 1, &rcap);
	add_bindings(rb, RES_CBINDINGS, 1, &kcap, &bcap);
	add_bindings(rb, RES_BINDINGS, 0, &kcap, &bcap);
	rb->dirty = 0;
	rb->rebuilds++;
}

static int
by_index(const void *a, const void *b)
{
	const struct binding *x = *(struct binding *const *)a;
	const struct binding *y = *(struct binding *const *)b;

	return x->index - y->index;
}

static void
collect_key(rbac *rb, const char *key, int cluster, const char *ns)
{
	struct bucket *k = hmap_get(rb->subjects, key);
	int i;

	if (k == NULL)
		return;
	for (i = 0; i < k->n; i++) {
		struct binding *b = k->v[i];

		if (b->mark == rb->mark)
			continue;
		b->mark = rb->mark;
		if (cluster ? *b->ns != '\0' : strcmp(b->ns, ns) != 0)
			continue;
		XGROW(rb->found, rb->capfound, rb->nfound + 1);
		rb->found[rb->nfound++] = b;
	}
}

/* The bindings of one pass that name the user or one of its groups. */
static void
collect(rbac *rb, const user_info *u, int cluster, const char *ns)
{
	char key[600];
	int i;

	rb->mark++;
	rb->nfound = 0;
	snprintf(key, sizeof key, "u:%s", u->name ? u->name : "");
	collect_key(rb, key, cluster, ns);
	for (i = 0; i < u->ngroups; i++) {
		snprintf(key, sizeof key, "g:%s", u->groups[i]);
		collect_key(rb, key, cluster, ns);
	}
	if (rb->nfound > 1)
		qsort(rb->found, rb->nfound, sizeof *rb->found, by_index);
}

/* Called per rule; returns 0 to stop the visit. */
typedef int (*visit_fn)(void *arg, const struct binding *,
    const struct rbac_rule *);

/*
 * Kubernetes' VisitRulesFor: the ClusterRoleBindings, then the namespace's
 * RoleBindings. A binding whose role is missing adds its error to errs.
 */
static void
visit(rbac *rb, const user_info *u, const char *ns, visit_fn fn, void *arg,
    const struct binding ***errs, int *nerrs)
{
	int pass, i, j;

	ensure_index(rb);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && (ns == NULL || *ns == '\0'))
			break;
		collect(rb, u, pass == 0, ns);
		for (i = 0; i < rb->nfound; i++) {
			const struct binding *b = rb->found[i];

			if (b->role == NULL) {
				if (errs != NULL) {
					*errs = xreallocarray(*errs, *nerrs + 1,
					    sizeof **errs);
					(*errs)[(*nerrs)++] = b;
				}
				continue;
			}
			for (j = 0; j < b->role->nrules; j++)
				if (!fn(arg, b, &b->role->rules[j]))
					return;
		}
	}
}

/* utilerrors' aggregate of the resolution errors, deduplicated. */
static char *
errors_text(const struct binding **errs, int n)
{
	char *s = NULL, *one, **seen;
	size_t len = 0;
	FILE *f;
	int i, j, k = 0;

	if (n == 0)
		return NULL;
	seen = xcalloc(n, sizeof *seen);
	f = xopen_memstream(&s, &len);
	for (i = 0; i < n; i++) {
		const struct binding *b = errs[i];

		if (strcmp(b->role_kind, "ClusterRole") == 0)
			one = util_printf("clusterrole." RBAC_GROUP " \"%s\" "
			    "not found", b->role_name);
		else if (strcmp(b->role_kind, "Role") == 0)
			one = util_printf("role." RBAC_GROUP " \"%s\" not "
			    "found", b->role_name);
		else
			one = util_printf("unsupported role reference kind: "
			    "\"%s\"", b->role_kind);
		for (j = 0; j < k; j++)
			if (strcmp(seen[j], one) == 0)
				break;
		if (j < k) {
			free(one);
			continue;
		}
		seen[k++] = one;
	}
	if (k > 1)
		fputc('[', f);
	for (j = 0; j < k; j++) {
		fprintf(f, "%s%s", j ? ", " : "", seen[j]);
		free(seen[j]);
	}
	if (k > 1)
		fputc(']', f);
	fclose(f);
	free(seen);
	return s;
}

/* The first subject of b that is u (the rule resolver's describer). */
static const struct subject *
applying(const struct binding *b, const user_info *u)
{
	char key[600];
	int i, g;

	for (i = 0; i < b->nsubjects; i++) {
		const char *k = b->subjects[i].key;

		if (k[0] == 'u') {
			snprintf(key, sizeof key, "u:%s", u->name);
			if (strcmp(k, key) == 0)
				return &b->subjects[i];
			continue;
		}
		for (g = 0; g < u->ngroups; g++)
			if (strcmp(k + 2, u->groups[g]) == 0)
				return &b->subjects[i];
	}
	return b->nsubjects > 0 ? &b->subjects[0] : NULL;
}

static char *
describe(const struct binding *b, const user_info *u)
{
	const struct subject *s = applying(b, u);
	char subj[600] = "";

	if (s != NULL && strcmp(s->kind, "ServiceAccount") == 0)
		snprintf(subj, sizeof subj, "%s \"%s/%s\"", s->kind, s->name,
		    s->ns);
	else if (s != NULL)
		snprintf(subj, sizeof subj, "%s \"%s\"", s->kind, s->name);
	if (*b->ns == '\0')
		return util_printf("ClusterRoleBinding \"%s\" of %s \"%s\" to %s",
		    b->name, b->role_kind, b->role_name, subj);
	return util_printf("RoleBinding \"%s/%s\" of %s \"%s\" to %s", b->name,
	    b->ns, b->role_kind, b->role_name, subj);
}

struct decide {
	const rbac_attrs *a;
	const struct binding *by;
};

static int
decide_rule(void *arg, const struct binding *b, const struct rbac_rule *r)
{
	struct decide *d = arg;

	if (!rbac_rule_allows(r, d->a))
		return 1;
	d->by = b;
	return 0;
}

int
rbac_authorize(rbac *rb, const user_info *u, const rbac_attrs *a,
    char **reason)
{
	struct decide d = { a, NULL };
	const struct binding **errs = NULL;
	int nerrs = 0;
	char *e, *why;

	if (reason != NULL)
		*reason = NULL;
	if (u == NULL || is_master(u) || rb->always_allow)
		return 1;
	visit(rb, u, a->ns, decide_rule, &d, reason ? &errs : NULL, &nerrs);
	if (d.by != NULL) {
		if (reason != NULL) {
			why = describe(d.by, u);
			*reason = util_printf("RBAC: allowed by %s", why);
			free(why);
		}
		free(errs);
		return 1;
	}
	if (reason != NULL && (e = errors_text(errs, nerrs)) != NULL) {
		*reason = util_printf("RBAC: %s", e);
		free(e);
	}
	free(errs);
	return 0;
}

int
rbac_check(rbac *rb, const user_info *u, const rbac_attrs *a, char **reason)
{
	*reason = NULL;
	if (rbac_authorize(rb, u, a, NULL))
		return 1;
	return rbac_authorize(rb, u, a, reason);
}

cJSON *
rbac_forbidden_reason(const user_info *u, const rbac_attrs *a,
    const char *reason)
{
	const char *user = u && u->name ? u->name : "";
	char res[512], *msg, *full;
	cJSON *s, *d;

	if (a->path != NULL)
		msg = util_printf("User \"%s\" cannot %s path \"%s\"", user,
		    a->verb, a->path);
	else {
		snprintf(res, sizeof res, "%s%s%s", a->resource,
		    a->subresource && *a->subresource ? "/" : "",
		    a->subresource ? a->subresource : "");
		if (a->ns != NULL && *a->ns)
			msg = util_printf("User \"%s\" cannot %s resource \"%s\" "
			    "in API group \"%s\" in the namespace \"%s\"", user,
			    a->verb, res, a->api_group ? a->api_group : "",
			    a->ns);
		else
			msg = util_printf("User \"%s\" cannot %s resource \"%s\" "
			    "in API group \"%s\" at the cluster scope", user,
			    a->verb, res, a->api_group ? a->api_group : "");
	}
	if (reason != NULL && *reason) {
		full = util_printf("%s: %s", msg, reason);
		free(msg);
		msg = full;
	}
	/* apierrors.NewForbidden(group.resource, name, msg). */
	if (a->path != NULL)
		s = status_error(403, "Forbidden", "forbidden: %s", msg);
	else if (a->name != NULL && *a->name)
		s = status_error(403, "Forbidden", "%s%s%s \"%s\" is forbidden: "
		    "%s", a->resource, a->api_group && *a->api_group ? "." :
		    "", a->api_group ? a->api_group : "", a->name, msg);
	else
		s = status_error(403, "Forbidden", "%s%s%s is forbidden: %s",
		    a->resource, a->api_group && *a->api_group ? "." : "",
		    a->api_group ? a->api_group : "", msg);
	free(msg);
	d = json_obj(s, "details");
	if (a->path == NULL) {
		if (a->name != NULL && *a->name)
			json_set_str(d, "name", a->name);
		if (a->api_group != NULL && *a->api_group)
			json_set_str(d, "group", a->api_group);
		json_set_str(d, "kind", a->resource);
	}
	return s;
}

cJSON *
rbac_forbidden(const user_info *u, const rbac_attrs *a)
{
	return rbac_forbidden_reason(u, a, NULL);
}

struct gather {
	const struct rbac_rule **v;
	int n;
	size_t cap;
};

static int
gather_rule(void *arg, const struct binding *b, const struct rbac_rule *r)
{
	struct gather *g = arg;

	(void)b;
	XGROW(g->v, g->cap, g->n + 1);
	g->v[g->n++] = r;
	return 1;
}

/* Every PolicyRule that applies to u in ns (RulesFor). */
static void
rules_for(rbac *rb, const user_info *u, const char *ns, struct gather *g,
    const struct binding ***errs, int *nerrs)
{
	memset(g, 0, sizeof *g);
	visit(rb, u, ns, gather_rule, g, errs, nerrs);
}

/* Go's %q of a []string: ["a" "b"]. */
static char *
go_list(const char *const *v, int n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = xopen_memstream(&s, &len);
	int i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\"%s\"", i ? " " : "", v[i]);
	fputc(']', f);
	fclose(f);
	return s;
}

static cJSON *
forbidden_write(const resource *r, const char *name, const char *why)
{
	cJSON *s = status_error(403, "Forbidden", "%s \"%s\" is forbidden: %s",
	    resource_qualified(r), name ? name : "", why);

	status_details(s, r, name);
	return s;
}

/*
 * ConfirmNoEscalation: NULL if u holds every rule in ns, else the 403
 * kube-apiserver answers.
 */
static cJSON *
confirm_no_escalation(rbac *rb, const user_info *u, const char *ns,
    const struct rbac_rule *rules, int nrules, const resource *r,
    const char *name)
{
	struct gather g;
	const struct binding **errs = NULL;
	int nerrs = 0, ok;
	char *missing = NULL, *groups, *why, *e;
	cJSON *s;

	rules_for(rb, u, ns, &g, &errs, &nerrs);
	ok = rbac_rule_covers(g.v, g.n, rules, nrules, &missing);
	free(g.v);
	if (ok) {
		free(errs);
		return NULL;
	}
	groups = go_list(u->groups, u->ngroups);
	why = util_printf("user \"%s\" (groups=%s) is attempting to grant RBAC "
	    "permissions not currently held:\n%s", u->name, groups,
	    missing ? missing : "");
	if ((e = errors_text(errs, nerrs)) != NULL) {
		char *w = util_printf("%s; resolution errors: [%s]", why, e);

		free(why);
		why = w;
		free(e);
	}
	s = forbidden_write(r, name, why);
	free(groups);
	free(why);
	free(missing);
	free(errs);
	return s;
}

/* IsOnlyMutatingGCFields: only ownerReferences or finalizers differ. */
static int
only_gc_fields(const cJSON *old, const cJSON *obj)
{
	static const char *skip[] = { "ownerReferences", "finalizers",
	    "managedFields", "resourceVersion", "generation", NULL };
	cJSON *a = cJSON_Duplicate(old, 1), *b = cJSON_Duplicate(obj, 1);
	int i, same;

	for (i = 0; skip[i] != NULL; i++) {
		json_del(json_obj(a, "metadata"), skip[i]);
		json_del(json_obj(b, "metadata"), skip[i]);
	}
	same = json_equal(a, b);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return same;
}

static int
has_aggregation(const cJSON *role)
{
	const cJSON *a = role ? json_at(role, "aggregationRule") : NULL;

	return a != NULL && !cJSON_IsNull(a);
}

/* Writing a Role or ClusterRole. */
static cJSON *
check_role(rbac *rb, const resource *r, const char *ns, const cJSON *old,
    const cJSON *obj, const user_info *u)
{
	static const char *const star[] = { "*" };
	const char *name = json_str(obj, "metadata.name");
	rbac_attrs esc = { "escalate", RBAC_GROUP, r->plural, "", ns,
	    old ? name : "", NULL };
	struct rbac_rule *rules, full[2];
	struct rbac_strs all = { (char **)star, 1, 1 }, none = { NULL, 0, 0 };
	int n;
	cJSON *s;

	if (rbac_authorize(rb, u, &esc, NULL))
		return NULL;
	rules = rbac_rule_compile(json_at(obj, "rules"), &n);
	s = confirm_no_escalation(rb, u, ns, rules, n, r, name);
	rbac_rule_free(rules, n);
	if (s != NULL || strcmp(r->plural, "clusterroles") != 0 ||
	    (!has_aggregation(obj) && !has_aggregation(old)))
		return s;
	/* An aggregationRule can gather anything: it needs "*" on "*.*". */
	full[0].verbs = full[0].groups = full[0].resources = all;
	full[0].names = full[0].urls = none;
	full[1].verbs = full[1].urls = all;
	full[1].groups = full[1].resources = full[1].names = none;
	s = confirm_no_escalation(rb, u, ns, full, 2, r, name);
	if (s == NULL)
		return NULL;
	cJSON_Delete(s);
	return forbidden_write(r, name, "must have cluster-admin privileges to "
	    "use the aggregationRule");
}

/* Writing a RoleBinding or ClusterRoleBinding. */
static cJSON *
check_binding(rbac *rb, const resource *r, const char *ns, const cJSON *obj,
    const user_info *u)
{
	const char *name = json_str(obj, "metadata.name");
	const char *kind = json_str(obj, "roleRef.kind");
	const char *ref = json_str(obj, "roleRef.name");
	int cluster = kind != NULL && strcmp(kind, "ClusterRole") == 0;
	rbac_attrs bind = { "bind", json_str(obj, "roleRef.apiGroup"),
	    cluster ? "clusterroles" : "roles", "", ns, ref, NULL };
	const struct role *role;
	char key[600];

	if (kind == NULL || ref == NULL)
		return NULL;    /* validation has refused it already */
	if (rbac_authorize(rb, u, &bind, NULL))
		return NULL;
	if (cluster)
		snprintf(key, sizeof key, "c:%s", ref);
	else
		snprintf(key, sizeof key, "r:%s/%s", ns, ref);
	ensure_index(rb);
	if ((role = hmap_get(rb->roles, key)) == NULL)
		return status_not_found(resource_find(RBAC_GROUP, "v1",
		    cluster ? "clusterroles" : "roles"), ref);
	return confirm_no_escalation(rb, u, ns, role->rules, role->nrules, r,
	    name);
}

/* The registry's admission hook: escalation checks on the RBAC kinds. */
static cJSON *
admit(void *arg, const resource *r, const char *ns, const cJSON *old,
    const cJSON *obj, const user_info *u)
{
	rbac *rb = arg;
	cJSON *s = NULL;

	if (strcmp(r->group, RBAC_GROUP) == 0) {
		if (u != NULL && !is_master(u) && (old == NULL ||
		    !only_gc_fields(old, obj))) {
			if (strcmp(r->plural, "roles") == 0 ||
			    strcmp(r->plural, "clusterroles") == 0)
				s = check_role(rb, r, ns, old, obj, u);
			else
				s = check_binding(rb, r, ns, obj, u);
		}
		if (s != NULL)
			return s;
		/* The write follows: the next question sees it. */
		rb->dirty = 1;
	}
	return rb->prev_admit ? rb->prev_admit(rb->prev_arg, r, ns, old, obj,
	    u) : NULL;
}

static cJSON *
review_answer(const char *kind, const cJSON *body)
{
	cJSON *out = cJSON_CreateObject(), *spec;

	cJSON_AddStringToObject(out, "kind", kind);
	cJSON_AddStringToObject(out, "apiVersion", "authorization.k8s.io/v1");
	cJSON_AddNullToObject(cJSON_AddObjectToObject(out, "metadata"),
	    "creationTimestamp");
	spec = cJSON_Duplicate(json_at(body, "spec"), 1);
	cJSON_AddItemToObject(out, "spec", cJSON_IsObject(spec) ? spec :
	    cJSON_CreateObject());
	if (!cJSON_IsObject(spec))
		cJSON_Delete(spec);
	return out;
}

static int
present(const cJSON *v)
{
	return v != NULL && !cJSON_IsNull(v);
}

cJSON *
rbac_self_access_review(rbac *rb, const user_info *u, const cJSON *body,
    char **cause)
{
	const cJSON *ra = json_at(body, "spec.resourceAttributes");
	const cJSON *nra = json_at(body, "spec.nonResourceAttributes");
	rbac_attrs a;
	char *reason = NULL;
	cJSON *out, *st;
	int allowed;

	*cause = NULL;
	if (present(ra) == present(nra)) {
		*cause = util_printf("spec.resourceAttributes: Invalid value: "
		    "\"null\": exactly one of nonResourceAttributes or "
		    "resourceAttributes must be specified");
		return NULL;
	}
	memset(&a, 0, sizeof a);
	if (present(ra)) {
		a.verb = json_str(ra, "verb") ? json_str(ra, "verb") : "";
		a.api_group = json_str(ra, "group") ? json_str(ra, "group") :
		    "";
		a.resource = json_str(ra, "resource") ? json_str(ra,
		    "resource") : "";
		a.subresource = json_str(ra, "subresource") ? json_str(ra,
		    "subresource") : "";
		a.ns = json_str(ra, "namespace") ? json_str(ra, "namespace") :
		    "";
		a.name = json_str(ra, "name") ? json_str(ra, "name") : "";
	} else {
		a.verb = json_str(nra, "verb") ? json_str(nra, "verb") : "";
		a.path = json_str(nra, "path") ? json_str(nra, "path") : "";
		a.api_group = a.resource = a.subresource = a.ns = a.name = "";
	}
	allowed = rbac_authorize(rb, u, &a, &reason);
	out = review_answer("SelfSubjectAccessReview", body);
	st = cJSON_AddObjectToObject(out, "status");
	cJSON_AddBoolToObject(st, "allowed", allowed);
	if (reason != NULL)
		cJSON_AddStringToObject(st, "reason", reason);
	free(reason);
	return out;
}

cJSON *
rbac_self_rules_review(rbac *rb, const user_info *u, const cJSON *body,
    char **cause)
{
	static const char *const star[] = { "*" };
	const char *ns = json_str(body, "spec.namespace");
	const struct binding **errs = NULL;
	struct rbac_strs all = { (char **)star, 1, 1 }, none = { NULL, 0, 0 };
	struct rbac_rule full[2];
	struct gather g;
	cJSON *out, *st, *rr, *nr;
	char *e;
	int nerrs = 0, i;

	*cause = NULL;
	if (ns == NULL || *ns == '\0') {
		*cause = util_printf("no namespace on request");
		return NULL;
	}
	out = review_answer("SelfSubjectRulesReview", body);
	st = cJSON_AddObjectToObject(out, "status");
	rr = cJSON_AddArrayToObject(st, "resourceRules");
	nr = cJSON_AddArrayToObject(st, "nonResourceRules");
	if (is_master(u) || rb->always_allow) {
		/* The privileged-group (or AlwaysAllow) authorizer's rules. */
		full[0].verbs = full[0].groups = full[0].resources = all;
		full[0].names = full[0].urls = none;
		full[1].verbs = full[1].urls = all;
		full[1].groups = full[1].resources = full[1].names = none;
		cJSON_AddItemToArray(rr, rbac_rule_json(&full[0]));
		cJSON_AddItemToArray(nr, rbac_rule_json(&full[1]));
	}
	rules_for(rb, u, ns, &g, &errs, &nerrs);
	for (i = 0; i < g.n; i++) {
		if (g.v[i]->resources.n > 0)
			cJSON_AddItemToArray(rr, rbac_rule_json(g.v[i]));
		if (g.v[i]->urls.n > 0)
			cJSON_AddItemToArray(nr, rbac_rule_json(g.v[i]));
	}
	free(g.v);
	cJSON_AddBoolToObject(st, "incomplete", 0);
	if ((e = errors_text(errs, nerrs)) != NULL) {
		cJSON_AddStringToObject(st, "evaluationError", e);
		free(e);
	}
	free(errs);
	return out;
}

/* SelfSubjectReview (kubectl auth whoami): who the request is from. */
static cJSON *
self_review(const user_info *u)
{
	cJSON *out = cJSON_CreateObject(), *ui, *gs;
	int i;

	cJSON_AddStringToObject(out, "kind", "SelfSubjectReview");
	cJSON_AddStringToObject(out, "apiVersion", "authentication.k8s.io/v1");
	cJSON_AddNullToObject(cJSON_AddObjectToObject(out, "metadata"),
	    "creationTimestamp");
	ui = cJSON_AddObjectToObject(cJSON_AddObjectToObject(out, "status"),
	    "userInfo");
	cJSON_AddStringToObject(ui, "username", u && u->name ? u->name : "");
	if (u && u->uid && *u->uid)
		cJSON_AddStringToObject(ui, "uid", u->uid);
	gs = cJSON_AddArrayToObject(ui, "groups");
	for (i = 0; u && i < u->ngroups; i++)
		cJSON_AddItemToArray(gs, cJSON_CreateString(u->groups[i]));
	return out;
}

/* The registry's handler of the review kinds. */
static cJSON *
review(void *arg, const resource *r, const user_info *u, const cJSON *body,
    char **cause)
{
	rbac *rb = arg;
	cJSON *out, *causes;
	char *c = NULL, *sep;

	if (strcmp(r->plural, "selfsubjectaccessreviews") == 0)
		out = rbac_self_access_review(rb, u, body, &c);
	else if (strcmp(r->plural, "selfsubjectrulesreviews") == 0)
		out = rbac_self_rules_review(rb, u, body, &c);
	else if (strcmp(r->plural, "selfsubjectreviews") == 0)
		return self_review(u);
	else {
		*cause = util_printf("%s is not a review", r->plural);
		return NULL;
	}
	if (out != NULL || c == NULL || strncmp(c, "spec.", 5) != 0 ||
	    (sep = strstr(c, ": ")) == NULL) {
		*cause = c;
		return out;
	}
	/* A field error: 422 with its cause, as kube-apiserver answers. */
	*sep = '\0';
	causes = cJSON_CreateArray();
	status_add_cause(causes, "FieldValueInvalid", c, "%s", sep + 2);
	free(c);
	return status_invalid(r, r->kind, "", causes);
}

static int
rbac_res(const char *res)
{
	return strcmp(res, RES_ROLES) == 0 || strcmp(res, RES_CROLES) == 0 ||
	    strcmp(res, RES_BINDINGS) == 0 || strcmp(res, RES_CBINDINGS) == 0;
}

static void
on_event(void *arg, const store_event *e)
{
	rbac *rb = arg;

	if (!rbac_res(e->obj->res))
		return;
	rb->dirty = 1;
	if (strcmp(e->obj->res, RES_CROLES) == 0)
		rb->aggregate = 1;
}

/* After a batch of events: recompute aggregated ClusterRoles once. */
static void
on_flush(void *arg)
{
	rbac *rb = arg;

	if (!rb->aggregate || rb->aggregating)
		return;
	rb->aggregate = 0;
	rb->aggregating = 1;
	rbac_policy_aggregate(rb->rg, rb->st, &aggregator, 0);
	rb->aggregating = 0;
}

rbac *
rbac_new(store *st, registry *rg)
{
	rbac *rb = xcalloc(1, sizeof *rb);

	rb->st = st;
	rb->rg = rg;
	rb->roles = hmap_new();
	rb->subjects = hmap_new();
	rb->dirty = 1;
	store_subscribe(st, on_event, rb);
	store_subscribe_flush(st, on_flush, rb);
	/* 0: the RBAC kinds have no status subresource. */
	rb->prev_admit = registry_set_admit(rg, admit, rb, &rb->prev_arg, 0);
	registry_set_review(rg, review, rb);
	return rb;
}

void
rbac_free(rbac *rb)
{
	if (rb == NULL)
		return;
	index_clear(rb);
	hmap_free(rb->roles);
	hmap_free(rb->subjects);
	free(rb->found);
	free(rb);
}

int
rbac_bootstrap(rbac *rb, char **cause)
{
	*cause = NULL;
	if (rbac_policy_reconcile(rb->rg, rb->st, cause) != 0)
		return -1;
	rb->dirty = 1;
	rbac_policy_aggregate(rb->rg, rb->st, &aggregator, 1);
	rb->dirty = 1;
	return 0;
}

void
rbac_set_always_allow(rbac *rb, int on)
{
	rb->always_allow = on;
}

uint64_t
rbac_rebuilds(const rbac *rb)
{
	return rb->rebuilds;
}
