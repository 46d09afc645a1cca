/*
 * OpenAPI v3 schema validation for custom resources. schema_compile turns
 * the JSON schema into a tree of nodes once: types become a bit mask,
 * properties a sorted array searched by bsearch, patterns compiled regexes
 * (after ere.c translates the ECMA/RE2 escapes POSIX lacks). schema_validate
 * then walks the object and the tree together in one pass that does what the
 * API server does in three: it applies defaults (also to nulls of
 * non-nullable fields and inside defaulted objects), prunes fields the
 * schema does not know, and validates. The path of a value is a chain of
 * frames on the C stack and becomes a string only when a violation is
 * reported, so a valid object costs no allocation beyond the defaults it
 * receives. allOf, anyOf, oneOf and not only validate: their branches run in
 * a read-only mode, anyOf/oneOf/not silently and stopping at the first
 * violation.
 */
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ere.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/schema.h"

#define T_NULL		0x01
#define T_BOOLEAN	0x02
#define T_INTEGER	0x04
#define T_NUMBER	0x08
#define T_STRING	0x10
#define T_ARRAY		0x20
#define T_OBJECT	0x40

#define F_NULLABLE	0x0001
#define F_PRESERVE	0x0002	/* x-kubernetes-preserve-unknown-fields */
#define F_INTORSTRING	0x0004
#define F_EMBEDDED	0x0008	/* x-kubernetes-embedded-resource */
#define F_MIN		0x0010
#define F_MAX		0x0020
#define F_EXMIN		0x0040
#define F_EXMAX		0x0080
#define F_UNIQUE	0x0100
#define F_ADDLTRUE	0x0200	/* additionalProperties: true */
#define F_PATTERN	0x0400
#define F_LISTSET	0x0800
#define F_LISTMAP	0x1000
#define F_CLOSED	0x2000	/* unknown fields are pruned */
#define F_MULTIPLE	0x4000

enum format { FMT_NONE, FMT_INT32, FMT_INT64, FMT_DATETIME };

struct prop {
	char		*name;
	struct schema	*s;
	size_t		 order;		/* position in the schema */
};

struct required {
	char		*name;
	long		 idx;		/* in props, or -1 */
};

struct schema {
	unsigned	 types;
	unsigned	 flags;
	enum format	 format;
	double		 minimum;
	double		 maximum;
	double		 multiple;
	long long	 minlen, maxlen;	/* -1 when unset */
	long long	 minitems, maxitems;
	long long	 minprops, maxprops;
	char		*pattern;
	regex_t		 re;

	struct prop	*props;
	size_t		 nprops;
	size_t		*defaulted;	/* indexes of props with a default */
	size_t		 ndefaulted;
	struct required	*req;
	size_t		 nreq;
	struct schema	*items;
	struct schema	*addl;

	cJSON		*enumv;
	cJSON		*def;
	char		**mapkeys;
	size_t		 nmapkeys;

	struct schema	**allof, **anyof, **oneof;
	size_t		 nallof, nanyof, noneof;
	struct schema	*not;
};

/* One step of the path from the root to a value, kept on the C stack. */
struct path {
	const struct path	*up;
	const char		*key;	/* NULL for an array index */
	size_t			 idx;
};

struct vctx {
	cJSON	*causes;	/* NULL: count only */
	int	 n;
	int	 mutate;	/* apply defaults and prune */
	int	 quick;		/* stop at the first violation */
	struct sbuf *pruned;	/* when set: the pruned fields' paths */
};

struct sbuf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};

static void
sb_grow(struct sbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	b->cap = (b->len + more + 1) * 2;
	b->s = xrealloc(b->s, b->cap);
}

static void
sb_putn(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void
sb_putc(struct sbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

static __attribute__((format(printf, 2, 3))) void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list	ap;
	char	tmp[256];
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("schema: vsnprintf of \"%s\" failed", fmt);
	if ((size_t)n < sizeof tmp) {
		sb_putn(b, tmp, (size_t)n);
		return;
	}
	sb_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Hand over the string; an empty buffer still yields "". */
static char *
sb_take(struct sbuf *b)
{
	if (b->s == NULL)
		return xstrdup("");
	return b->s;
}

static int
integral(double d)
{
	if (d >= 9007199254740992.0 || d <= -9007199254740992.0)
		return isfinite(d);
	return d == (double)(long long)d;
}

/* Format a number as Go's %v prints the int64 or float64 it would be. */
static void
sb_number(struct sbuf *b, double d)
{
	char	buf[64];
	int	prec;

	if (integral(d) && d < 1e21 && d > -1e21) {
		sb_printf(b, "%.0f", d);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof buf, "%.17g", d);
	sb_puts(b, buf);
}

/* Quote a string as Go's %q does for the common cases. */
static void
sb_quote(struct sbuf *b, const char *s)
{
	sb_putc(b, '"');
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '"':
			sb_puts(b, "\\\"");
			break;
		case '\\':
			sb_puts(b, "\\\\");
			break;
		case '\n':
			sb_puts(b, "\\n");
			break;
		case '\t':
			sb_puts(b, "\\t");
			break;
		case '\r':
			sb_puts(b, "\\r");
			break;
		default:
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				sb_printf(b, "\\x%02x", (unsigned char)*s);
			else
				sb_putc(b, *s);
			break;
		}
	}
	sb_putc(b, '"');
}

static void
sb_json(struct sbuf *b, const cJSON *v)
{
	char	*s;

	if ((s = cJSON_PrintUnformatted(v)) == NULL)
		fatal("schema: a value cJSON cannot print");
	sb_puts(b, s);
	cJSON_free(s);
}

/* A value as field.Error prints it: strings quoted, numbers bare. */
static void
sb_value(struct sbuf *b, const cJSON *v)
{
	if (v == NULL)
		sb_quote(b, "");
	else if (cJSON_IsString(v))
		sb_quote(b, v->valuestring);
	else if (cJSON_IsNumber(v))
		sb_number(b, v->valuedouble);
	else if (cJSON_IsBool(v))
		sb_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNull(v))
		sb_quote(b, "null");
	else
		sb_json(b, v);
}

static int
plain_key(const char *k)
{
	if (*k == '\0')
		return 0;
	for (; *k != '\0'; k++) {
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		    (*k >= '0' && *k <= '9') || *k == '_' || *k == '-'))
			return 0;
	}
	return 1;
}

/* Write the path root first: keys dotted or [bracketed], indexes [i]. */
static void
sb_path(struct sbuf *b, const struct path *p)
{
	if (p == NULL)
		return;
	sb_path(b, p->up);
	if (p->key == NULL)
		sb_printf(b, "[%zu]", p->idx);
	else if (!plain_key(p->key))
		sb_printf(b, "[%s]", p->key);
	else {
		if (p->up != NULL)
			sb_putc(b, '.');
		sb_puts(b, p->key);
	}
}

/* Count a violation; tell whether it should be written down. */
static int
violation(struct vctx *c)
{
	c->n++;
	return c->causes != NULL;
}

/* Append one {"reason","message","field"} cause. */
static void
emit(struct vctx *c, const char *reason, struct sbuf *msg, struct sbuf *field)
{
	cJSON	*o = cJSON_CreateObject();
	char	*m = sb_take(msg), *f = sb_take(field);

	cJSON_AddStringToObject(o, "reason", reason);
	cJSON_AddStringToObject(o, "message", m);
	cJSON_AddStringToObject(o, "field", f);
	cJSON_AddItemToArray(c->causes, o);
	free(m);
	free(f);
}

/* "Invalid value: <v>: <path> in body <detail>" */
static __attribute__((format(printf, 4, 5))) void
invalid(struct vctx *c, const struct path *p, const cJSON *v,
    const char *fmt, ...)
{
	struct sbuf	 m = { 0 }, f = { 0 };
	va_list		 ap;
	char		 detail[512];

	if (!violation(c))
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	sb_path(&f, p);
	sb_puts(&m, "Invalid value: ");
	sb_value(&m, v);
	sb_printf(&m, ": %s in body %s", f.s ? f.s : "", detail);
	emit(c, "FieldValueInvalid", &m, &f);
}

/* A value of the wrong type (or format): both are named, as strings. */
static void
type_invalid(struct vctx *c, const struct path *p, const char *want,
    const char *got)
{
	struct sbuf	 m = { 0 }, f = { 0 };

	if (!violation(c))
		return;
	sb_path(&f, p);
	sb_puts(&m, "Invalid value: ");
	sb_quote(&m, got);
	sb_printf(&m, ": %s in body must be of type %s: ", f.s ? f.s : "",
	    want);
	sb_quote(&m, got);
	emit(c, "FieldValueTypeInvalid", &m, &f);
}

/* "Required value", with an optional detail. */
static void
required(struct vctx *c, const struct path *p, const char *detail)
{
	struct sbuf	 m = { 0 }, f = { 0 };

	if (!violation(c))
		return;
	sb_path(&f, p);
	sb_puts(&m, "Required value");
	if (detail != NULL)
		sb_printf(&m, ": %s", detail);
	emit(c, "FieldValueRequired", &m, &f);
}

/* "Unsupported value: <v>: supported values: "a", "b"" */
static void
not_supported(struct vctx *c, const struct path *p, const cJSON *v,
    const cJSON *allowed)
{
	struct sbuf	 m = { 0 }, f = { 0 }, j;
	const cJSON	*e;

	if (!violation(c))
		return;
	sb_path(&f, p);
	sb_puts(&m, "Unsupported value: ");
	sb_value(&m, v);
	sb_puts(&m, ": supported values: ");
	for (e = allowed->child; e != NULL; e = e->next) {
		if (e != allowed->child)
			sb_puts(&m, ", ");
		if (cJSON_IsString(e))
			sb_quote(&m, e->valuestring);
		else {
			memset(&j, 0, sizeof j);
			sb_json(&j, e);
			sb_quote(&m, j.s);
			free(j.s);
		}
	}
	emit(c, "FieldValueNotSupported", &m, &f);
}

/* Violations with their own field.Error types: TooLong, TooMany, Duplicate. */
static void
other(struct vctx *c, const struct path *p, const char *reason,
    const char *type, const cJSON *v, const char *detail)
{
	struct sbuf	 m = { 0 }, f = { 0 };

	if (!violation(c))
		return;
	sb_path(&f, p);
	sb_puts(&m, type);
	if (v != NULL) {
		sb_puts(&m, ": ");
		sb_value(&m, v);
	}
	if (detail != NULL)
		sb_printf(&m, ": %s", detail);
	emit(c, reason, &m, &f);
}

/* ---- compiling ---- */

static struct schema *compile(const cJSON *, const char *, char **);

static int
compile_fail(char **cause, const char *path, const char *fmt, ...)
{
	struct sbuf	b = { 0 };
	va_list		ap;
	char		msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (cause != NULL && *cause == NULL) {
		sb_printf(&b, "%s: %s", *path ? path : "schema", msg);
		*cause = sb_take(&b);
	}
	return -1;
}

static char *
child_path(const char *path, const char *a, const char *b)
{
	struct sbuf	s = { 0 };

	sb_puts(&s, path);
	if (*path != '\0')
		sb_putc(&s, '.');
	sb_puts(&s, a);
	if (b != NULL) {
		sb_putc(&s, '.');
		sb_puts(&s, b);
	}
	return sb_take(&s);
}

static int
prop_cmp(const void *a, const void *b)
{
	return strcmp(((const struct prop *)a)->name,
	    ((const struct prop *)b)->name);
}

/* Binary search of the sorted properties. */
static long
find_prop(const struct schema *s, const char *name)
{
	size_t	lo = 0, hi = s->nprops, mid;
	int	c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(name, s->props[mid].name);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Translate and compile a pattern; the cause names the schema path. */
static int
compile_pattern(struct schema *s, const char *pat, const char *path,
    char **cause)
{
	char	*ere, err[128];
	int	 rc;

	s->pattern = xstrdup(pat);
	if ((ere = ere_translate(pat)) == NULL)
		return compile_fail(cause, path,
		    "pattern '%s' cannot be expressed as POSIX ERE", pat);
	rc = regcomp(&s->re, ere, REG_EXTENDED | REG_NOSUB);
	free(ere);
	if (rc != 0) {
		regerror(rc, &s->re, err, sizeof err);
		return compile_fail(cause, path, "pattern '%s': %s", pat, err);
	}
	s->flags |= F_PATTERN;
	return 0;
}

static int
type_bit(const char *t)
{
	static const struct {
		const char	*name;
		unsigned	 bit;
	} types[] = {
		{ "object", T_OBJECT }, { "array", T_ARRAY },
		{ "string", T_STRING }, { "integer", T_INTEGER },
		{ "number", T_NUMBER }, { "boolean", T_BOOLEAN },
	};
	size_t	i;

	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		if (strcmp(t, types[i].name) == 0)
			return (int)types[i].bit;
	}
	return -1;
}

/* Read a non-negative integer keyword such as minLength into *out. */
static int
count_kw(const cJSON *j, const char *kw, long long *out, const char *path,
    char **cause)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(j, kw);

	*out = -1;
	if (v == NULL)
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
	    !integral(v->valuedouble) || v->valuedouble > 9e18)
		return compile_fail(cause, path,
		    "%s must be a non-negative integer", kw);
	*out = (long long)v->valuedouble;
	return 0;
}

/* Read minimum or maximum with its exclusive flag (a bool, or a number). */
static int
bound_kw(struct schema *s, const cJSON *j, int max, const char *path,
    char **cause)
{
	const char	*kw = max ? "maximum" : "minimum";
	const char	*exkw = max ? "exclusiveMaximum" : "exclusiveMinimum";
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(j, kw);
	const cJSON	*ex = cJSON_GetObjectItemCaseSensitive(j, exkw);
	double		*bound = max ? &s->maximum : &s->minimum;

	if (v != NULL) {
		if (!cJSON_IsNumber(v))
			return compile_fail(cause, path, "%s must be a number",
			    kw);
		*bound = v->valuedouble;
		s->flags |= max ? F_MAX : F_MIN;
	}
	if (ex == NULL)
		return 0;
	if (cJSON_IsNumber(ex)) {
		*bound = ex->valuedouble;
		s->flags |= max ? (F_MAX | F_EXMAX) : (F_MIN | F_EXMIN);
	} else if (cJSON_IsBool(ex)) {
		if (cJSON_IsTrue(ex))
			s->flags |= max ? F_EXMAX : F_EXMIN;
	} else
		return compile_fail(cause, path, "%s must be a boolean", exkw);
	return 0;
}

static int
flag_kw(struct schema *s, const cJSON *j, const char *kw, unsigned flag,
    const char *path, char **cause)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(j, kw);

	if (v == NULL)
		return 0;
	if (!cJSON_IsBool(v))
		return compile_fail(cause, path, "%s must be a boolean", kw);
	if (cJSON_IsTrue(v))
		s->flags |= flag;
	return 0;
}

/* Compile properties, sorted by name for lookup. */
static int
compile_props(struct schema *s, const cJSON *j, const char *path,
    char **cause)
{
	const cJSON	*props = cJSON_GetObjectItemCaseSensitive(j,
			    "properties"), *p;
	char		*cpath;
	size_t		 i, k;

	if (props == NULL)
		return 0;
	if (!cJSON_IsObject(props))
		return compile_fail(cause, path, "properties must be an object");
	s->nprops = (size_t)cJSON_GetArraySize(props);
	s->props = xcalloc(s->nprops, sizeof *s->props);
	i = 0;
	cJSON_ArrayForEach(p, props) {
		s->props[i].name = xstrdup(p->string);
		s->props[i].order = i;
		cpath = child_path(path, "properties", p->string);
		s->props[i].s = compile(p, cpath, cause);
		free(cpath);
		if (s->props[i++].s == NULL)
			return -1;
	}
	qsort(s->props, s->nprops, sizeof *s->props, prop_cmp);
	for (i = 1; i < s->nprops; i++) {
		if (strcmp(s->props[i - 1].name, s->props[i].name) == 0)
			return compile_fail(cause, path,
			    "duplicate property '%s'", s->props[i].name);
	}
	/* Defaults are added in the order the schema lists them. */
	s->defaulted = xcalloc(s->nprops, sizeof *s->defaulted);
	for (k = 0; k < s->nprops; k++) {
		for (i = 0; i < s->nprops; i++) {
			if (s->props[i].order == k && s->props[i].s->def != NULL)
				s->defaulted[s->ndefaulted++] = i;
		}
	}
	return 0;
}

/* Keep required names with their property index where there is one. */
static int
compile_required(struct schema *s, const cJSON *j, const char *path,
    char **cause)
{
	const cJSON	*req = cJSON_GetObjectItemCaseSensitive(j, "required");
	const cJSON	*r;

	if (req == NULL)
		return 0;
	if (!cJSON_IsArray(req))
		return compile_fail(cause, path, "required must be an array");
	s->req = xcalloc((size_t)cJSON_GetArraySize(req), sizeof *s->req);
	cJSON_ArrayForEach(r, req) {
		if (!cJSON_IsString(r))
			return compile_fail(cause, path,
			    "required must list strings");
		s->req[s->nreq].name = xstrdup(r->valuestring);
		s->req[s->nreq++].idx = find_prop(s, r->valuestring);
	}
	return 0;
}

/* Compile the schemas of allOf, anyOf or oneOf. */
static int
compile_list(struct schema ***out, size_t *n, const cJSON *j, const char *kw,
    const char *path, char **cause)
{
	const cJSON	*list = cJSON_GetObjectItemCaseSensitive(j, kw), *e;
	char		*cpath, idx[32];

	if (list == NULL)
		return 0;
	if (!cJSON_IsArray(list))
		return compile_fail(cause, path, "%s must be an array", kw);
	*out = xcalloc((size_t)cJSON_GetArraySize(list), sizeof **out);
	cJSON_ArrayForEach(e, list) {
		snprintf(idx, sizeof idx, "%zu", *n);
		cpath = child_path(path, kw, idx);
		(*out)[*n] = compile(e, cpath, cause);
		free(cpath);
		if ((*out)[(*n)++] == NULL)
			return -1;
	}
	return 0;
}

static struct schema *
compile_sub(const cJSON *j, const char *path, const char *kw, char **cause)
{
	struct schema	*s;
	char		*cpath = child_path(path, kw, NULL);

	s = compile(j, cpath, cause);
	free(cpath);
	return s;
}

static int
compile_format(struct schema *s, const cJSON *j, const char *path,
    char **cause)
{
	const cJSON	*f = cJSON_GetObjectItemCaseSensitive(j, "format");

	if (f == NULL)
		return 0;
	if (!cJSON_IsString(f))
		return compile_fail(cause, path, "format must be a string");
	if (strcmp(f->valuestring, "int32") == 0)
		s->format = FMT_INT32;
	else if (strcmp(f->valuestring, "int64") == 0)
		s->format = FMT_INT64;
	else if (strcmp(f->valuestring, "date-time") == 0)
		s->format = FMT_DATETIME;
	return 0;
}

/* x-kubernetes-list-type set or map (with its keys); atomic needs nothing. */
static int
compile_listtype(struct schema *s, const cJSON *j, const char *path,
    char **cause)
{
	const cJSON	*lt, *keys, *k;

	lt = cJSON_GetObjectItemCaseSensitive(j, "x-kubernetes-list-type");
	if (lt == NULL)
		return 0;
	if (!cJSON_IsString(lt))
		return compile_fail(cause, path,
		    "x-kubernetes-list-type must be a string");
	if (strcmp(lt->valuestring, "set") == 0)
		s->flags |= F_LISTSET;
	else if (strcmp(lt->valuestring, "map") == 0) {
		keys = cJSON_GetObjectItemCaseSensitive(j,
		    "x-kubernetes-list-map-keys");
		if (!cJSON_IsArray(keys) || cJSON_GetArraySize(keys) == 0)
			return compile_fail(cause, path, "x-kubernetes-list-"
			    "type map needs x-kubernetes-list-map-keys");
		s->mapkeys = xcalloc((size_t)cJSON_GetArraySize(keys),
		    sizeof *s->mapkeys);
		cJSON_ArrayForEach(k, keys) {
			if (!cJSON_IsString(k))
				return compile_fail(cause, path,
				    "x-kubernetes-list-map-keys must list "
				    "strings");
			s->mapkeys[s->nmapkeys++] = xstrdup(k->valuestring);
		}
		s->flags |= F_LISTMAP;
	} else if (strcmp(lt->valuestring, "atomic") != 0)
		return compile_fail(cause, path,
		    "unknown x-kubernetes-list-type '%s'", lt->valuestring);
	return 0;
}

/* Compile the keywords of one schema object into s. */
static int
compile_into(struct schema *s, const cJSON *j, const char *path, char **cause)
{
	const cJSON	*v;
	int		 bit;

	if (!cJSON_IsObject(j))
		return compile_fail(cause, path, "schema must be an object");
	if (cJSON_GetObjectItemCaseSensitive(j, "$ref") != NULL)
		return compile_fail(cause, path, "$ref is not supported");
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "type")) != NULL) {
		if (!cJSON_IsString(v) || (bit = type_bit(v->valuestring)) < 0)
			return compile_fail(cause, path, "unsupported type %s",
			    cJSON_IsString(v) ? v->valuestring : "(not a string)");
		s->types = (unsigned)bit;
	}
	if (flag_kw(s, j, "nullable", F_NULLABLE, path, cause) != 0 ||
	    flag_kw(s, j, "x-kubernetes-preserve-unknown-fields", F_PRESERVE,
	    path, cause) != 0 ||
	    flag_kw(s, j, "x-kubernetes-int-or-string", F_INTORSTRING, path,
	    cause) != 0 ||
	    flag_kw(s, j, "x-kubernetes-embedded-resource", F_EMBEDDED, path,
	    cause) != 0 ||
	    flag_kw(s, j, "uniqueItems", F_UNIQUE, path, cause) != 0)
		return -1;
	if (s->flags & F_INTORSTRING)
		s->types = T_INTEGER | T_STRING;
	if (bound_kw(s, j, 0, path, cause) != 0 ||
	    bound_kw(s, j, 1, path, cause) != 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "multipleOf")) != NULL) {
		if (!cJSON_IsNumber(v) || v->valuedouble <= 0)
			return compile_fail(cause, path,
			    "multipleOf must be a positive number");
		s->multiple = v->valuedouble;
		s->flags |= F_MULTIPLE;
	}
	if (count_kw(j, "minLength", &s->minlen, path, cause) != 0 ||
	    count_kw(j, "maxLength", &s->maxlen, path, cause) != 0 ||
	    count_kw(j, "minItems", &s->minitems, path, cause) != 0 ||
	    count_kw(j, "maxItems", &s->maxitems, path, cause) != 0 ||
	    count_kw(j, "minProperties", &s->minprops, path, cause) != 0 ||
	    count_kw(j, "maxProperties", &s->maxprops, path, cause) != 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "pattern")) != NULL) {
		if (!cJSON_IsString(v))
			return compile_fail(cause, path,
			    "pattern must be a string");
		if (compile_pattern(s, v->valuestring, path, cause) != 0)
			return -1;
	}
	if (compile_format(s, j, path, cause) != 0 ||
	    compile_props(s, j, path, cause) != 0 ||
	    compile_required(s, j, path, cause) != 0 ||
	    compile_listtype(s, j, path, cause) != 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "items")) != NULL &&
	    (s->items = compile_sub(v, path, "items", cause)) == NULL)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(j,
	    "additionalProperties")) != NULL) {
		if (cJSON_IsTrue(v))
			s->flags |= F_ADDLTRUE;
		else if (!cJSON_IsFalse(v) && (s->addl = compile_sub(v, path,
		    "additionalProperties", cause)) == NULL)
			return -1;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "enum")) != NULL) {
		if (!cJSON_IsArray(v))
			return compile_fail(cause, path, "enum must be an array");
		s->enumv = cJSON_Duplicate(v, 1);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "default")) != NULL) {
		s->def = cJSON_Duplicate(v, 1);
		/* Copies of the default take the key of the field they fill. */
		cJSON_free(s->def->string);
		s->def->string = NULL;
	}
	if (compile_list(&s->allof, &s->nallof, j, "allOf", path, cause) != 0 ||
	    compile_list(&s->anyof, &s->nanyof, j, "anyOf", path, cause) != 0 ||
	    compile_list(&s->oneof, &s->noneof, j, "oneOf", path, cause) != 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "not")) != NULL &&
	    (s->not = compile_sub(v, path, "not", cause)) == NULL)
		return -1;

	/*
	 * As the API server prunes: an object schema without properties or
	 * additionalProperties knows no fields at all.
	 */
	if ((s->types == T_OBJECT || s->nprops > 0) &&
	    !(s->flags & (F_PRESERVE | F_ADDLTRUE)) && s->addl == NULL)
		s->flags |= F_CLOSED;
	return 0;
}

static struct schema *
compile(const cJSON *j, const char *path, char **cause)
{
	struct schema	*s = xcalloc(1, sizeof *s);

	if (compile_into(s, j, path, cause) != 0) {
		schema_free(s);
		return NULL;
	}
	return s;
}

schema *
schema_compile(const cJSON *openapi_v3_schema, char **cause)
{
	if (cause != NULL)
		*cause = NULL;
	return compile(openapi_v3_schema, "", cause);
}

static void
free_list(struct schema **list, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		schema_free(list[i]);
	free(list);
}

void
schema_free(schema *s)
{
	size_t	i;

	if (s == NULL)
		return;
	if (s->flags & F_PATTERN)
		regfree(&s->re);
	free(s->pattern);
	for (i = 0; i < s->nprops; i++) {
		free(s->props[i].name);
		schema_free(s->props[i].s);
	}
	free(s->props);
	free(s->defaulted);
	for (i = 0; i < s->nreq; i++)
		free(s->req[i].name);
	free(s->req);
	schema_free(s->items);
	schema_free(s->addl);
	cJSON_Delete(s->enumv);
	cJSON_Delete(s->def);
	for (i = 0; i < s->nmapkeys; i++)
		free(s->mapkeys[i]);
	free(s->mapkeys);
	free_list(s->allof, s->nallof);
	free_list(s->anyof, s->nanyof);
	free_list(s->oneof, s->noneof);
	schema_free(s->not);
	free(s);
}

/* ---- validating ---- */

static void check(const struct schema *, cJSON *, const struct path *,
		    struct vctx *, int);

static unsigned
value_type(const cJSON *v)
{
	switch (v->type & 0xff) {
	case cJSON_False:
	case cJSON_True:
		return T_BOOLEAN;
	case cJSON_Number:
		return integral(v->valuedouble) ? T_INTEGER : T_NUMBER;
	case cJSON_String:
	case cJSON_Raw:
		return T_STRING;
	case cJSON_Array:
		return T_ARRAY;
	case cJSON_Object:
		return T_OBJECT;
	default:
		return T_NULL;
	}
}

static const char *
type_name(unsigned t)
{
	switch (t) {
	case T_BOOLEAN:
		return "boolean";
	case T_INTEGER:
		return "integer";
	case T_NUMBER:
		return "number";
	case T_STRING:
		return "string";
	case T_ARRAY:
		return "array";
	case T_OBJECT:
		return "object";
	case T_INTEGER | T_STRING:
		return "integer,string";
	default:
		return "null";
	}
}

static int
is_meta(const char *k)
{
	return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 ||
	    strcmp(k, "metadata") == 0;
}

static int
stop(const struct vctx *c)
{
	return c->quick && c->n > 0;
}

/*
 * Check a child value; a null in a non-nullable field with a default is
 * replaced by the default first, as the API server does. Returns the item
 * now in the parent.
 */
static cJSON *
check_child(const struct schema *cs, cJSON *parent, cJSON *it,
    const struct path *p, struct vctx *c, int keep)
{
	cJSON	*d;

	if (cs == NULL)
		return it;
	if (c->mutate && cs->def != NULL && cJSON_IsNull(it) &&
	    !(cs->flags & F_NULLABLE)) {
		d = cJSON_Duplicate(cs->def, 1);
		d->string = it->string;
		it->string = NULL;
		cJSON_ReplaceItemViaPointer(parent, it, d);
		it = d;
	}
	check(cs, it, p, c, keep);
	return it;
}

/* Count UTF-8 characters: every byte that does not continue one. */
static long long
utf8_len(const char *s)
{
	long long	n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

static int
digits(const char *s, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
	}
	return 1;
}

static int
num2(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/*
 * A loose RFC 3339 check: YYYY-MM-DDTHH:MM[:SS[.frac]] with an optional
 * Z or +hh:mm, as strfmt accepts its several layouts.
 */
static int
datetime_ok(const char *s)
{
	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) ||
	    s[7] != '-' || !digits(s + 8, 2))
		return 0;
	if (num2(s + 5) < 1 || num2(s + 5) > 12 || num2(s + 8) < 1 ||
	    num2(s + 8) > 31)
		return 0;
	s += 10;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return 0;
	s++;
	if (!digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) ||
	    num2(s) > 23 || num2(s + 3) > 59)
		return 0;
	s += 5;
	if (*s == ':') {
		if (!digits(s + 1, 2) || num2(s + 1) > 60)
			return 0;
		s += 3;
		if (*s == '.' || *s == ',') {
			if (!digits(s + 1, 1))
				return 0;
			for (s++; *s >= '0' && *s <= '9'; s++)
				;
		}
	}
	if (*s == 'Z' || *s == 'z')
		s++;
	else if (*s == '+' || *s == '-') {
		if (!digits(s + 1, 2) || s[3] != ':' || !digits(s + 4, 2))
			return 0;
		s += 6;
	}
	return *s == '\0';
}

/* Bounds, multipleOf and the int32/int64 formats of a number. */
static void
check_number(const struct schema *s, const cJSON *v, const struct path *p,
    struct vctx *c)
{
	double	d = v->valuedouble;

	if (s->flags & F_MIN) {
		if ((s->flags & F_EXMIN) ? d <= s->minimum : d < s->minimum) {
			struct sbuf b = { 0 };

			sb_number(&b, s->minimum);
			invalid(c, p, v, "should be greater than%s %s",
			    (s->flags & F_EXMIN) ? "" : " or equal to", b.s);
			free(b.s);
		}
	}
	if (s->flags & F_MAX) {
		if ((s->flags & F_EXMAX) ? d >= s->maximum : d > s->maximum) {
			struct sbuf b = { 0 };

			sb_number(&b, s->maximum);
			invalid(c, p, v, "should be less than%s %s",
			    (s->flags & F_EXMAX) ? "" : " or equal to", b.s);
			free(b.s);
		}
	}
	if (s->flags & F_MULTIPLE) {
		if (!integral(d / s->multiple)) {
			struct sbuf b = { 0 };

			sb_number(&b, s->multiple);
			invalid(c, p, v, "should be a multiple of %s", b.s);
			free(b.s);
		}
	}
	if ((s->format == FMT_INT32 && (d < INT32_MIN || d > INT32_MAX)) ||
	    (s->format == FMT_INT64 && (d < -9223372036854775808.0 ||
	    d >= 9223372036854775808.0))) {
		struct sbuf b = { 0 };

		sb_number(&b, d);
		type_invalid(c, p, s->format == FMT_INT32 ? "int32" : "int64",
		    b.s);
		free(b.s);
	}
}

/* Length in characters, pattern and date-time format of a string. */
static void
check_string(const struct schema *s, const cJSON *v, const struct path *p,
    struct vctx *c)
{
	const char	*str = v->valuestring;
	long long	 len;
	char		 detail[64];

	if (s->minlen >= 0 || s->maxlen >= 0) {
		len = utf8_len(str);
		if (s->maxlen >= 0 && len > s->maxlen) {
			snprintf(detail, sizeof detail,
			    "may not be longer than %lld", s->maxlen);
			other(c, p, "FieldValueTooLong", "Too long", NULL,
			    detail);
		}
		if (s->minlen >= 0 && len < s->minlen)
			invalid(c, p, v, "should be at least %lld chars long",
			    s->minlen);
	}
	if ((s->flags & F_PATTERN) && regexec(&s->re, str, 0, NULL, 0) != 0)
		invalid(c, p, v, "should match '%s'", s->pattern);
	if (s->format == FMT_DATETIME && !datetime_ok(str))
		type_invalid(c, p, "date-time", str);
}

/* Do two map-list items agree on every x-kubernetes-list-map-key? */
static int
same_keys(const struct schema *s, const cJSON *a, const cJSON *b)
{
	const cJSON	*ka, *kb;
	size_t		 i;

	for (i = 0; i < s->nmapkeys; i++) {
		ka = cJSON_GetObjectItemCaseSensitive(a, s->mapkeys[i]);
		kb = cJSON_GetObjectItemCaseSensitive(b, s->mapkeys[i]);
		if ((ka == NULL) != (kb == NULL))
			return 0;
		if (ka != NULL && !json_equal(ka, kb))
			return 0;
	}
	return 1;
}

/* Report the later copy of each duplicate of a set or map-keyed list. */
static void
check_unique(const struct schema *s, const cJSON *arr, const struct path *p,
    struct vctx *c)
{
	const cJSON	*a, *b, *k;
	cJSON		*keys;
	struct path	 ip = { p, NULL, 0 };
	size_t		 i;

	for (b = arr->child, ip.idx = 0; b != NULL && !stop(c);
	    b = b->next, ip.idx++) {
		for (a = arr->child; a != b; a = a->next) {
			if (s->flags & F_LISTMAP) {
				if (cJSON_IsObject(a) && cJSON_IsObject(b) &&
				    same_keys(s, a, b))
					break;
			} else if (json_equal(a, b))
				break;
		}
		if (a == b)
			continue;
		if (s->flags & F_LISTSET) {
			other(c, &ip, "FieldValueDuplicate", "Duplicate value",
			    b, NULL);
		} else if (s->flags & F_LISTMAP) {
			keys = cJSON_CreateObject();
			for (i = 0; i < s->nmapkeys; i++) {
				k = cJSON_GetObjectItemCaseSensitive(b,
				    s->mapkeys[i]);
				if (k != NULL)
					cJSON_AddItemToObject(keys,
					    s->mapkeys[i], cJSON_Duplicate(k, 1));
			}
			other(c, &ip, "FieldValueDuplicate", "Duplicate value",
			    keys, NULL);
			cJSON_Delete(keys);
		} else {
			invalid(c, p, NULL, "shouldn't contain duplicates");
			return;
		}
	}
}

/* Check the items, then the item count and any uniqueness rule. */
static void
check_array(const struct schema *s, cJSON *arr, const struct path *p,
    struct vctx *c)
{
	cJSON		*it, *next;
	struct path	 ip = { p, NULL, 0 };
	long long	 n;
	char		 detail[64];
	cJSON		 count;

	for (it = arr->child; it != NULL; it = next, ip.idx++) {
		next = it->next;
		check_child(s->items, arr, it, &ip, c,
		    (s->flags & F_PRESERVE) != 0);
		if (stop(c))
			return;
	}
	n = (long long)ip.idx;
	if (s->maxitems >= 0 && n > s->maxitems) {
		memset(&count, 0, sizeof count);
		count.type = cJSON_Number;
		count.valuedouble = (double)n;
		snprintf(detail, sizeof detail, "must have at most %lld items",
		    s->maxitems);
		other(c, p, "FieldValueTooMany", "Too many", &count, detail);
	}
	if (s->minitems >= 0 && n < s->minitems) {
		memset(&count, 0, sizeof count);
		count.type = cJSON_Number;
		count.valuedouble = (double)n;
		invalid(c, p, &count, "should have at least %lld items",
		    s->minitems);
	}
	if (s->flags & (F_UNIQUE | F_LISTSET | F_LISTMAP))
		check_unique(s, arr, p, c);
}

static void
setbit(uint64_t *bits, size_t i)
{
	bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static int
getbit(const uint64_t *bits, size_t i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

/*
 * Walk the fields of an object: validate known ones, keep or prune unknown
 * ones, then add missing defaults and report missing required fields. The
 * root's apiVersion, kind and metadata belong to the caller.
 */
static void
check_object(const struct schema *s, cJSON *obj, const struct path *p,
    struct vctx *c, int keep)
{
	uint64_t	 stackbits[4], *seen = stackbits;
	cJSON		*it, *next, *d;
	const struct schema *cs;
	struct path	 fp = { p, NULL, 0 };
	size_t		 i, nfields = 0;
	long		 idx;
	int		 root = (p == NULL), track;

	track = (s->nreq > 0 || s->ndefaulted > 0);
	if (track && s->nprops > sizeof stackbits * 8)
		seen = xcalloc((s->nprops + 63) / 64, sizeof *seen);
	else
		memset(stackbits, 0, sizeof stackbits);

	for (it = obj->child; it != NULL; it = next) {
		next = it->next;
		nfields++;
		fp.key = it->string;
		if ((root || (s->flags & F_EMBEDDED)) && is_meta(it->string)) {
			if (root || find_prop(s, it->string) < 0)
				continue;
		}
		if ((idx = find_prop(s, it->string)) >= 0) {
			if (track)
				setbit(seen, (size_t)idx);
			cs = s->props[idx].s;
		} else if (s->addl != NULL)
			cs = s->addl;
		else if (!keep && c->mutate && (s->flags & F_CLOSED)) {
			if (c->pruned != NULL) {
				if (c->pruned->len > 0)
					sb_putc(c->pruned, '\n');
				sb_path(c->pruned, &fp);
			}
			cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
			nfields--;
			continue;
		} else
			continue;
		check_child(cs, obj, it, &fp, c, 0);
		if (stop(c))
			goto out;
	}

	if (c->mutate) {
		for (i = 0; i < s->ndefaulted; i++) {
			idx = (long)s->defaulted[i];
			if (getbit(seen, (size_t)idx) ||
			    (root && is_meta(s->props[idx].name)))
				continue;
			cs = s->props[idx].s;
			d = cJSON_Duplicate(cs->def, 1);
			cJSON_AddItemToObject(obj, s->props[idx].name, d);
			setbit(seen, (size_t)idx);
			nfields++;
			fp.key = s->props[idx].name;
			check(cs, d, &fp, c, 0);
		}
	}

	for (i = 0; i < s->nreq && !stop(c); i++) {
		if (root && is_meta(s->req[i].name))
			continue;
		if (s->req[i].idx >= 0 ? getbit(seen, (size_t)s->req[i].idx) :
		    cJSON_GetObjectItemCaseSensitive(obj, s->req[i].name) != NULL)
			continue;
		fp.key = s->req[i].name;
		required(c, &fp, NULL);
	}
	if (s->flags & F_EMBEDDED) {
		fp.key = "apiVersion";
		if (cJSON_GetObjectItemCaseSensitive(obj, "apiVersion") == NULL)
			required(c, &fp, "must not be empty");
		fp.key = "kind";
		if (cJSON_GetObjectItemCaseSensitive(obj, "kind") == NULL)
			required(c, &fp, "must not be empty");
	}
	if (s->maxprops >= 0 && (long long)nfields > s->maxprops)
		invalid(c, p, NULL, "should have at most %lld properties",
		    s->maxprops);
	if (s->minprops >= 0 && (long long)nfields < s->minprops)
		invalid(c, p, NULL, "should have at least %lld properties",
		    s->minprops);
out:
	if (seen != stackbits)
		free(seen);
}

/* The value must equal one of the enum's values. */
static void
check_enum(const struct schema *s, const cJSON *v, const struct path *p,
    struct vctx *c)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, s->enumv) {
		if (json_equal(v, e))
			return;
	}
	not_supported(c, p, v, s->enumv);
}

/* Does v satisfy s? Read-only, silent and stopping at the first problem. */
static int
satisfies(const struct schema *s, cJSON *v, const struct path *p)
{
	struct vctx	q = { NULL, 0, 0, 1 };

	check(s, v, p, &q, 1);
	return q.n == 0;
}

/* allOf reports its branches' violations; anyOf, oneOf, not only count. */
static void
check_combinators(const struct schema *s, cJSON *v, const struct path *p,
    struct vctx *c)
{
	struct vctx	sub = { c->causes, 0, 0, c->quick };
	size_t		i, matched;

	for (i = 0; i < s->nallof && !stop(&sub); i++)
		check(s->allof[i], v, p, &sub, 1);
	c->n += sub.n;
	if (s->nanyof > 0 && !stop(c)) {
		for (i = 0; i < s->nanyof; i++) {
			if (satisfies(s->anyof[i], v, p))
				break;
		}
		if (i == s->nanyof)
			invalid(c, p, NULL,
			    "must validate at least one schema (anyOf)");
	}
	if (s->noneof > 0 && !stop(c)) {
		for (i = 0, matched = 0; i < s->noneof && matched < 2; i++)
			matched += satisfies(s->oneof[i], v, p);
		if (matched != 1)
			invalid(c, p, NULL,
			    "must validate one and only one schema (oneOf)");
	}
	if (s->not != NULL && !stop(c) && satisfies(s->not, v, p))
		invalid(c, p, NULL, "must not validate the schema (not)");
}

/*
 * Check one value against its schema: null handling, type, the keywords
 * of its type, enum, then the combinators. keep says unknown fields of an
 * object here stay (below x-kubernetes-preserve-unknown-fields).
 */
static void
check(const struct schema *s, cJSON *v, const struct path *p,
    struct vctx *c, int keep)
{
	unsigned	vt;

	vt = value_type(v);
	if (vt == T_NULL) {
		if ((s->flags & F_NULLABLE) || s->types == 0)
			return;
		type_invalid(c, p, type_name(s->types), "null");
		return;
	}
	if (s->types != 0 && !(s->types & vt) &&
	    !(vt == T_INTEGER && (s->types & T_NUMBER))) {
		type_invalid(c, p, type_name(s->types), type_name(vt));
		return;
	}
	switch (vt) {
	case T_INTEGER:
	case T_NUMBER:
		check_number(s, v, p, c);
		break;
	case T_STRING:
		check_string(s, v, p, c);
		break;
	case T_ARRAY:
		check_array(s, v, p, c);
		break;
	case T_OBJECT:
		check_object(s, v, p, c, keep || (s->flags & F_PRESERVE));
		break;
	}
	if (s->enumv != NULL && !stop(c))
		check_enum(s, v, p, c);
	if ((s->nallof || s->nanyof || s->noneof || s->not) && !stop(c))
		check_combinators(s, v, p, c);
}

int
schema_validate(const schema *s, cJSON *obj, cJSON *causes)
{
	return schema_validate_pruned(s, obj, causes, NULL);
}

int
schema_validate_pruned(const schema *s, cJSON *obj, cJSON *causes,
    char **pruned)
{
	struct sbuf	b = { 0 };
	struct vctx	c = { causes, 0, 1, 0, pruned != NULL ? &b : NULL };

	if (pruned != NULL)
		*pruned = NULL;
	if (s == NULL || obj == NULL)
		return 0;
	check(s, obj, NULL, &c, 0);
	if (pruned != NULL && b.len > 0)
		*pruned = sb_take(&b);
	else
		free(b.s);
	return c.n;
}
