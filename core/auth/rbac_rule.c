/*
 * PolicyRules, compiled. A rule's lists are copied out of the JSON once,
 * when the RBAC index is rebuilt, with a flag for a "*" member, so that
 * matching a request is a few string comparisons.
 *
 * Matching follows Kubernetes (pkg/apis/rbac/v1 evaluation helpers): a verb,
 * API group and resource each match "*" or themselves; "pods/log" is the
 * resource of a subresource request and "*" + "/log" matches it in any
 * resource; resourceNames, when present, must hold the request's name (so
 * list, watch and create without a name never match such a rule);
 * nonResourceURLs match exactly, or as a prefix when they end in "*".
 *
 * Covering (the escalation check) breaks the servant rules down into
 * (group, resource, verb[, name]) and (url, verb) atoms and looks for an
 * owner rule that holds each; what no owner holds is compacted (atoms that
 * differ only in the verb are merged) and described as kube-apiserver
 * describes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/rbac_int.h"
#include "lib/xmalloc.h"

static void
strs_compile(const cJSON *rule, const char *key, struct rbac_strs *out)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(rule, key), *it;
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;

	memset(out, 0, sizeof *out);
	if (n == 0)
		return;
	out->v = xcalloc(n, sizeof *out->v);
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			continue;
		out->v[out->n++] = xstrdup(it->valuestring);
		if (strcmp(it->valuestring, "*") == 0)
			out->star = 1;
	}
}

static void
strs_free(struct rbac_strs *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

struct rbac_rule *
rbac_rule_compile(const cJSON *rules, int *n)
{
	struct rbac_rule *v;
	const cJSON *it;
	int cap = cJSON_IsArray(rules) ? cJSON_GetArraySize(rules) : 0;

	*n = 0;
	v = xcalloc(cap + 1, sizeof *v);
	if (cap == 0)
		return v;
	cJSON_ArrayForEach(it, rules) {
		struct rbac_rule *r = &v[*n];

		if (!cJSON_IsObject(it))
			continue;
		strs_compile(it, "verbs", &r->verbs);
		strs_compile(it, "apiGroups", &r->groups);
		strs_compile(it, "resources", &r->resources);
		strs_compile(it, "resourceNames", &r->names);
		strs_compile(it, "nonResourceURLs", &r->urls);
		(*n)++;
	}
	return v;
}

void
rbac_rule_free(struct rbac_rule *v, int n)
{
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++) {
		strs_free(&v[i].verbs);
		strs_free(&v[i].groups);
		strs_free(&v[i].resources);
		strs_free(&v[i].names);
		strs_free(&v[i].urls);
	}
	free(v);
}

static int
has(const struct rbac_strs *s, const char *x)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], x) == 0)
			return 1;
	return 0;
}

/* "pods/log" against the rule's resources (exact, "*", or "*" + "/log"). */
static int
resource_matches(const struct rbac_strs *s, const char *res, const char *sub)
{
	size_t rl = strlen(res), sl = strlen(sub);
	int i;

	if (s->star)
		return 1;
	for (i = 0; i < s->n; i++) {
		const char *v = s->v[i];

		if (sl == 0) {
			if (strcmp(v, res) == 0)
				return 1;
			continue;
		}
		if (strncmp(v, res, rl) == 0 && v[rl] == '/' &&
		    strcmp(v + rl + 1, sub) == 0)
			return 1;
		if (v[0] == '*' && v[1] == '/' && strcmp(v + 2, sub) == 0)
			return 1;
	}
	return 0;
}

/* A URL rule ending in "*" is a prefix (every trailing "*" dropped). */
static int
url_covers(const char *rule, const char *path)
{
	size_t n = strlen(rule);

	if (strcmp(rule, path) == 0)
		return 1;
	if (n == 0 || rule[n - 1] != '*')
		return 0;
	while (n > 0 && rule[n - 1] == '*')
		n--;
	return strncmp(rule, path, n) == 0;
}

int
rbac_rule_allows(const struct rbac_rule *r, const rbac_attrs *a)
{
	int i;

	if (!r->verbs.star && !has(&r->verbs, a->verb))
		return 0;
	if (a->path != NULL) {
		for (i = 0; i < r->urls.n; i++)
			if (url_covers(r->urls.v[i], a->path))
				return 1;
		return 0;
	}
	if (!r->groups.star && !has(&r->groups, a->api_group ? a->api_group :
	    ""))
		return 0;
	if (!resource_matches(&r->resources, a->resource ? a->resource : "",
	    a->subresource ? a->subresource : ""))
		return 0;
	return r->names.n == 0 || has(&r->names, a->name ? a->name : "");
}

/* One atom of a servant rule: a single verb on one thing. */
struct atom {
	const char *group, *resource, *name, *url, *verb;
};

static int
atom_covered(const struct rbac_rule *o, const struct atom *a)
{
	const char *slash;
	char buf[512];

	if (!o->verbs.star && !has(&o->verbs, a->verb))
		return 0;
	if (a->url != NULL) {
		int i;

		for (i = 0; i < o->urls.n; i++)
			if (url_covers(o->urls.v[i], a->url))
				return 1;
		return 0;
	}
	if (!o->groups.star && !has(&o->groups, a->group))
		return 0;
	if (!o->resources.star && !has(&o->resources, a->resource)) {
		if ((slash = strchr(a->resource, '/')) == NULL)
			return 0;
		snprintf(buf, sizeof buf, "*%s", slash);
		if (!has(&o->resources, buf))
			return 0;
	}
	if (a->name == NULL)
		return o->names.n == 0;
	return o->names.n == 0 || has(&o->names, a->name);
}

/* A missing permission after compaction. */
struct missing {
	const char *group, *resource, *name, *url;
	const char **verbs;
	int nverbs;
};

static void
add_verb(struct missing *m, const char *verb)
{
	int i;

	for (i = 0; i < m->nverbs; i++)
		if (strcmp(m->verbs[i], verb) == 0)
			return;
	m->verbs = xreallocarray(m->verbs, m->nverbs + 1, sizeof *m->verbs);
	m->verbs[m->nverbs++] = verb;
}

static int
same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL &&
	    strcmp(a, b) == 0);
}

/* Go's %q of a one-element []string: ["x"]. */
static void
quoted(FILE *f, const char *label, const char *const *v, int n, int *first)
{
	int i;

	if (n == 0)
		return;
	fprintf(f, "%s%s:[", *first ? "" : ", ", label);
	for (i = 0; i < n; i++) {
		const char *p;

		fprintf(f, "%s\"", i ? " " : "");
		for (p = v[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', f);
			fputc(*p, f);
		}
		fputc('"', f);
	}
	fputc(']', f);
	*first = 0;
}

static char *
describe(const struct missing *m)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = xopen_memstream(&s, &len);
	int first = 1;

	fputc('{', f);
	if (m->url == NULL) {
		quoted(f, "APIGroups", &m->group, 1, &first);
		quoted(f, "Resources", &m->resource, 1, &first);
	} else
		quoted(f, "NonResourceURLs", &m->url, 1, &first);
	if (m->name != NULL)
		quoted(f, "ResourceNames", &m->name, 1, &first);
	quoted(f, "Verbs", m->verbs, m->nverbs, &first);
	fputc('}', f);
	fclose(f);
	return s;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Record an atom nobody holds, merged with one that differs by verb only. */
static void
note_missing(struct missing **v, int *n, const struct atom *a)
{
	int i;

	for (i = 0; i < *n; i++) {
		struct missing *m = &(*v)[i];

		if (same(m->group, a->group) && same(m->resource, a->resource) &&
		    same(m->name, a->name) && same(m->url, a->url) &&
		    a->url == NULL) {
			add_verb(m, a->verb);
			return;
		}
	}
	*v = xreallocarray(*v, *n + 1, sizeof **v);
	memset(&(*v)[*n], 0, sizeof **v);
	(*v)[*n].group = a->group;
	(*v)[*n].resource = a->resource;
	(*v)[*n].name = a->name;
	(*v)[*n].url = a->url;
	add_verb(&(*v)[*n], a->verb);
	(*n)++;
}

static int
check_atom(const struct rbac_rule *const *owner, int nowner,
    const struct atom *a, struct missing **miss, int *nmiss)
{
	int i;

	for (i = 0; i < nowner; i++)
		if (atom_covered(owner[i], a))
			return 1;
	note_missing(miss, nmiss, a);
	return 0;
}

int
rbac_rule_covers(const struct rbac_rule *const *owner, int nowner,
    const struct rbac_rule *servant, int nservant, char **missing)
{
	struct missing *miss = NULL;
	struct atom a;
	int nmiss = 0, i, g, r, v, k, covered = 1;
	char **lines;
	size_t len = 0;

	for (i = 0; i < nservant; i++) {
		const struct rbac_rule *s = &servant[i];

		for (g = 0; g < s->groups.n; g++)
			for (r = 0; r < s->resources.n; r++)
				for (v = 0; v < s->verbs.n; v++) {
					memset(&a, 0, sizeof a);
					a.group = s->groups.v[g];
					a.resource = s->resources.v[r];
					a.verb = s->verbs.v[v];
					if (s->names.n == 0) {
						covered &= check_atom(owner,
						    nowner, &a, &miss, &nmiss);
						continue;
					}
					for (k = 0; k < s->names.n; k++) {
						a.name = s->names.v[k];
						covered &= check_atom(owner,
						    nowner, &a, &miss, &nmiss);
					}
				}
		for (k = 0; k < s->urls.n; k++)
			for (v = 0; v < s->verbs.n; v++) {
				memset(&a, 0, sizeof a);
				a.url = s->urls.v[k];
				a.verb = s->verbs.v[v];
				covered &= check_atom(owner, nowner, &a, &miss,
				    &nmiss);
			}
	}
	if (missing != NULL) {
		*missing = NULL;
		if (nmiss > 0) {
			/* A sorted set of descriptions, one per line. */
			lines = xcalloc(nmiss, sizeof *lines);
			for (i = 0; i < nmiss; i++) {
				lines[i] = describe(&miss[i]);
				len += strlen(lines[i]) + 1;
			}
			qsort(lines, nmiss, sizeof *lines, cmp_str);
			*missing = xcalloc(1, len + 1);
			for (i = 0; i < nmiss; i++) {
				if (i > 0 && strcmp(lines[i], lines[i - 1]) == 0)
					continue;
				if (**missing)
					strcat(*missing, "\n");
				strcat(*missing, lines[i]);
			}
			for (i = 0; i < nmiss; i++)
				free(lines[i]);
			free(lines);
		}
	}
	for (i = 0; i < nmiss; i++)
		free(miss[i].verbs);
	free(miss);
	return covered;
}

static void
add_strs(cJSON *o, const char *key, const struct rbac_strs *s, int always)
{
	if (s->n == 0 && !always)
		return;
	cJSON_AddItemToObject(o, key, cJSON_CreateStringArray(
	    (const char *const *)s->v, s->n));
}

cJSON *
rbac_rule_json(const struct rbac_rule *r)
{
	cJSON *o = cJSON_CreateObject();

	add_strs(o, "verbs", &r->verbs, 1);
	if (r->urls.n > 0) {
		add_strs(o, "nonResourceURLs", &r->urls, 0);
		return o;
	}
	add_strs(o, "apiGroups", &r->groups, 0);
	add_strs(o, "resources", &r->resources, 0);
	add_strs(o, "resourceNames", &r->names, 0);
	return o;
}
