/*
 * YAML to JSON. libyaml's event parser drives a recursive builder that makes
 * cJSON nodes directly, without libyaml's intermediate document tree. Plain
 * scalars are typed as go-yaml v2 types them for sigs.k8s.io/yaml: null,
 * true/false (and yes/no/on/off, but not y/n), integers in decimal, hex,
 * octal and binary, floats; quoted and block scalars stay strings and an
 * explicit !!tag wins. Anchors live for one document; an alias copies the
 * anchored tree, and a budget on copied nodes stops "billion laughs" input.
 * Merge keys (<<) and duplicate keys are settled when a mapping ends: explicit
 * keys beat merged ones, the last explicit duplicate wins. Input that is
 * plain JSON goes straight to cJSON so the two always agree.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>		/* isfinite, a macro: no libm */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

#define MAX_DEPTH	1000		/* same nesting limit as cJSON */
#define ALIAS_BUDGET	100000		/* nodes an alias may copy freely */

#define TAG_PREFIX	"tag:yaml.org,2002:"

struct anchor {
	struct anchor	*next;
	char		*name;
	cJSON		*node;		/* private copy */
	size_t		 size;		/* nodes in node, charged per alias */
};

struct loader {
	yaml_parser_t	 parser;
	const char	*buf;
	size_t		 len;
	struct anchor	*anchors;
	size_t		 events;	/* nodes read from the input */
	size_t		 copied;	/* nodes made by aliases */
	int		 depth;
	char		*cause;
};

static cJSON	*load_node(struct loader *, yaml_event_t *);

/* Record the first error of a parse, with its line. */
static void
fail(struct loader *l, size_t line, const char *fmt, ...)
{
	va_list	ap;
	char	msg[256];

	if (l->cause != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	l->cause = util_printf("yaml: line %zu: %s", line, msg);
}

/* Turn libyaml's error state into a cause. */
static void
fail_parser(struct loader *l)
{
	yaml_parser_t	*p = &l->parser;
	const char	*problem = p->problem ? p->problem : "unknown error";
	size_t		 line = 1, i, n;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		xoom("libyaml");
	case YAML_READER_ERROR:
		for (i = 0; i < p->problem_offset && i < l->len; i++) {
			if (l->buf[i] == '\n')
				line++;
		}
		break;
	default:
		/*
		 * At the end of the stream libyaml moves to a line past an
		 * unterminated last line; point at the last real line.
		 */
		line = p->problem_mark.line + 1;
		if (line > 1 && p->problem_mark.index >= l->len) {
			for (i = 0, n = 1; i < l->len; i++) {
				if (l->buf[i] == '\n' && i + 1 < l->len)
					n++;
			}
			if (line > n)
				line = n;
		}
		break;
	}
	fail(l, line, "%s", problem);
}

static int
next_event(struct loader *l, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&l->parser, ev)) {
		fail_parser(l);
		return -1;
	}
	return 0;
}

/* Drop the anchors of a finished document. */
static void
forget_anchors(struct loader *l)
{
	struct anchor	*a, *next;

	for (a = l->anchors; a != NULL; a = next) {
		next = a->next;
		free(a->name);
		cJSON_Delete(a->node);
		free(a);
	}
	l->anchors = NULL;
}

/*
 * Parse an integer as Go's strconv.ParseInt(s, 0, 64) does after go-yaml has
 * removed underscores: optional sign, then 0x, 0o, 0b or a leading 0 select
 * the base. Values past int64 are still numbers (as doubles).
 */
static int
parse_int(const char *s, double *out)
{
	int		 neg = 0, base = 10, digit;
	uint64_t	 v = 0, limit;
	const char	*p = s;

	if (*p == '+' || *p == '-')
		neg = (*p++ == '-');
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
		base = 8;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		base = 2;
		p += 2;
	} else if (p[0] == '0' && p[1] != '\0')
		base = 8;
	if (*p == '\0')
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX;
	for (; *p != '\0'; p++) {
		if (*p >= '0' && *p <= '9')
			digit = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			digit = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			digit = *p - 'A' + 10;
		else
			return -1;
		if (digit >= base)
			return -1;
		if (v > (limit - (uint64_t)digit) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + (uint64_t)digit;
	}
	*out = neg ? -(double)v : (double)v;
	return 0;
}

/*
 * Parse a float of go-yaml's accepted shape,
 * [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, refusing overflow.
 */
static int
parse_float(const char *s, double *out)
{
	const char	*p = s;
	char		*end;
	size_t		 n;

	if (*p == '+' || *p == '-')
		p++;
	if (*p == '.') {
		p++;
		if ((n = strspn(p, "0123456789")) == 0)
			return -1;
		p += n;
	} else {
		if ((n = strspn(p, "0123456789")) == 0)
			return -1;
		p += n;
		if (*p == '.')
			p += 1 + strspn(p + 1, "0123456789");
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if ((n = strspn(p, "0123456789")) == 0)
			return -1;
		p += n;
	}
	if (*p != '\0')
		return -1;
	*out = strtod(s, &end);
	if (*end != '\0' || !isfinite(*out))
		return -1;
	return 0;
}

static int
one_of(const char *s, const char *const *list)
{
	for (; *list != NULL; list++) {
		if (strcmp(s, *list) == 0)
			return 1;
	}
	return 0;
}

static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
static const char *const trues[] = {
	"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL
};
static const char *const falses[] = {
	"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL
};

/* Parse a number after dropping underscores; -1 if it is not one. */
static int
parse_number(const char *s, size_t len, int intonly, double *out)
{
	char	buf[128];
	size_t	i, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '_')
			continue;
		if (s[i] == '\0' || n == sizeof buf - 1)
			return -1;
		buf[n++] = s[i];
	}
	buf[n] = '\0';
	if (parse_int(buf, out) == 0)
		return 0;
	if (intonly)
		return -1;
	return parse_float(buf, out);
}

/* Type a plain scalar as go-yaml v2's resolver does. */
static cJSON *
resolve_plain(const char *s, size_t len)
{
	double	d;

	if (len < 8 && one_of(s, nulls))
		return cJSON_CreateNull();
	if (len < 8 && one_of(s, trues))
		return cJSON_CreateTrue();
	if (len < 8 && one_of(s, falses))
		return cJSON_CreateFalse();
	if (strchr("+-.0123456789", s[0]) != NULL &&
	    parse_number(s, len, 0, &d) == 0)
		return cJSON_CreateNumber(d);
	return cJSON_CreateString(s);
}

/* Build a scalar with an explicit core tag; NULL if the value cannot be one. */
static cJSON *
resolve_tagged(struct loader *l, const char *tag, const char *s, size_t len,
    size_t line)
{
	double	 d;

	if (strcmp(tag, "int") == 0 || strcmp(tag, "float") == 0) {
		if (parse_number(s, len, tag[0] == 'i', &d) == 0)
			return cJSON_CreateNumber(d);
		if (tag[0] == 'f' && strchr(s, '.') != NULL && (
		    strcasecmp(s, ".nan") == 0 || strcasecmp(s, ".inf") == 0 ||
		    strcasecmp(s, "+.inf") == 0 || strcasecmp(s, "-.inf") == 0))
			return cJSON_CreateString(s);
	} else if (strcmp(tag, "bool") == 0) {
		if (one_of(s, trues))
			return cJSON_CreateTrue();
		if (one_of(s, falses))
			return cJSON_CreateFalse();
	} else if (strcmp(tag, "null") == 0) {
		if (one_of(s, nulls))
			return cJSON_CreateNull();
	} else
		return cJSON_CreateString(s);
	fail(l, line, "cannot decode !!str `%.40s` as a !!%s", s, tag);
	return NULL;
}

/* Build a scalar: explicit tags first, then plain typing, else a string. */
static cJSON *
load_scalar(struct loader *l, yaml_event_t *ev)
{
	const char	*s = (const char *)ev->data.scalar.value;
	const char	*tag = (const char *)ev->data.scalar.tag;
	size_t		 len = ev->data.scalar.length;

	if (tag != NULL && strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0)
		return resolve_tagged(l, tag + strlen(TAG_PREFIX), s, len,
		    ev->start_mark.line + 1);
	if (tag != NULL && strcmp(tag, "!") == 0)
		return cJSON_CreateString(s);
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return resolve_plain(s, len);
	return cJSON_CreateString(s);
}

/* Copy the node an alias names, charging its size to the alias budget. */
static cJSON *
load_alias(struct loader *l, yaml_event_t *ev)
{
	const char	*name = (const char *)ev->data.alias.anchor;
	struct anchor	*a;

	for (a = l->anchors; a != NULL; a = a->next) {
		if (strcmp(a->name, name) == 0)
			break;
	}
	if (a == NULL) {
		fail(l, ev->start_mark.line + 1,
		    "unknown anchor '%s' referenced", name);
		return NULL;
	}
	l->copied += a->size;
	if (l->copied > ALIAS_BUDGET && l->copied / 10 > l->events) {
		fail(l, ev->start_mark.line + 1,
		    "document contains excessive aliasing");
		return NULL;
	}
	return cJSON_Duplicate(a->node, 1);
}

/* Build a sequence from the events up to its end. */
static cJSON *
load_sequence(struct loader *l)
{
	yaml_event_t	 ev;
	cJSON		*seq = cJSON_CreateArray(), *n;

	for (;;) {
		if (next_event(l, &ev) != 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return seq;
		}
		if ((n = load_node(l, &ev)) == NULL)
			goto fail;
		cJSON_AddItemToArray(seq, n);
	}
fail:
	cJSON_Delete(seq);
	return NULL;
}

/* Format a number as a map key, the way sigs.k8s.io/yaml prints it. */
static void
number_key(double d, char *buf, size_t size)
{
	int	prec;

	if (d > -1e18 && d < 1e18 && d == (double)(long long)d) {
		snprintf(buf, size, "%.0f", d);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
	snprintf(buf, size, "%.17g", d);
}

/* The string form of a mapping key; NULL if the key is not a scalar. */
static char *
key_string(struct loader *l, const cJSON *k, size_t line)
{
	char	buf[64];

	if (cJSON_IsString(k))
		return util_printf("%s", k->valuestring);
	if (cJSON_IsNumber(k)) {
		number_key(k->valuedouble, buf, sizeof buf);
		return util_printf("%s", buf);
	}
	if (cJSON_IsBool(k))
		return util_printf("%s", cJSON_IsTrue(k) ? "true" : "false");
	fail(l, line, "unsupported map key");
	return NULL;
}

struct keyed {
	cJSON	*item;
	size_t	 index;
};

static int
keyed_cmp(const void *a, const void *b)
{
	const struct keyed	*ka = a, *kb = b;
	int			 c = strcmp(ka->item->string, kb->item->string);

	if (c != 0)
		return c;
	return (ka->index > kb->index) - (ka->index < kb->index);
}

/*
 * Settle duplicate keys. The first nexplicit items were written in the
 * mapping, the rest came from merge keys: the last explicit duplicate wins,
 * else the first merged one; the winner takes the first one's place.
 */
static void
dedup(cJSON *map, size_t nexplicit)
{
	struct keyed	*v;
	cJSON		*it, *win;
	size_t		 n = 0, i, j, k;
	int		 dup = 0;

	for (it = map->child; it != NULL; it = it->next)
		n++;
	if (n < 2)
		return;
	if (n <= 16) {
		for (it = map->child; it != NULL && !dup; it = it->next) {
			for (win = it->next; win != NULL; win = win->next) {
				if (strcmp(it->string, win->string) == 0) {
					dup = 1;
					break;
				}
			}
		}
		if (!dup)
			return;
	}
	v = xreallocarray(NULL, n, sizeof *v);
	for (i = 0, it = map->child; it != NULL; it = it->next, i++) {
		v[i].item = it;
		v[i].index = i;
	}
	qsort(v, n, sizeof *v, keyed_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n; j++) {
			if (strcmp(v[i].item->string, v[j].item->string) != 0)
				break;
		}
		if (j - i == 1)
			continue;
		win = v[i].item;
		for (k = i; k < j && v[k].index < nexplicit; k++)
			win = v[k].item;
		for (k = i + 1; k < j; k++) {
			if (v[k].item != win)
				cJSON_Delete(cJSON_DetachItemViaPointer(map,
				    v[k].item));
		}
		if (win != v[i].item) {
			cJSON_DetachItemViaPointer(map, win);
			cJSON_ReplaceItemViaPointer(map, v[i].item, win);
		}
	}
	free(v);
}

/* Queue the value of a << key; its keys are added when the mapping ends. */
static int
add_merge(struct loader *l, cJSON *merges, cJSON *v, size_t line)
{
	cJSON	*it;

	if (cJSON_IsObject(v)) {
		cJSON_AddItemToArray(merges, v);
		return 0;
	}
	if (cJSON_IsArray(v)) {
		for (it = v->child; it != NULL; it = it->next) {
			if (!cJSON_IsObject(it))
				break;
		}
		if (it == NULL) {
			while ((it = cJSON_DetachItemFromArray(v, 0)) != NULL)
				cJSON_AddItemToArray(merges, it);
			cJSON_Delete(v);
			return 0;
		}
	}
	cJSON_Delete(v);
	fail(l, line, "map merge requires map or sequence of maps as the value");
	return -1;
}

/* A plain or !!merge-tagged "<<" key. */
static int
is_merge_key(const yaml_event_t *ev)
{
	const char	*tag = (const char *)ev->data.scalar.tag;

	if (ev->type != YAML_SCALAR_EVENT)
		return 0;
	if (strcmp((const char *)ev->data.scalar.value, "<<") != 0)
		return 0;
	if (tag != NULL)
		return strcmp(tag, TAG_PREFIX "merge") == 0;
	return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Build a mapping: keys become strings, << values are merged at the end. */
static cJSON *
load_mapping(struct loader *l)
{
	yaml_event_t	 ev;
	cJSON		*map = cJSON_CreateObject(), *merges = NULL;
	cJSON		*k, *v, *src, *it;
	char		*key;
	size_t		 line, nexplicit = 0;

	for (;;) {
		if (next_event(l, &ev) != 0)
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		line = ev.start_mark.line + 1;
		if (is_merge_key(&ev)) {
			yaml_event_delete(&ev);
			if (next_event(l, &ev) != 0 ||
			    (v = load_node(l, &ev)) == NULL)
				goto fail;
			if (merges == NULL)
				merges = cJSON_CreateArray();
			if (add_merge(l, merges, v, line) != 0)
				goto fail;
			continue;
		}
		if ((k = load_node(l, &ev)) == NULL)
			goto fail;
		key = key_string(l, k, line);
		cJSON_Delete(k);
		if (key == NULL)
			goto fail;
		if (next_event(l, &ev) != 0 || (v = load_node(l, &ev)) == NULL) {
			free(key);
			goto fail;
		}
		cJSON_AddItemToObject(map, key, v);
		free(key);
		nexplicit++;
	}
	if (merges != NULL) {
		for (src = merges->child; src != NULL; src = src->next) {
			while ((it = src->child) != NULL) {
				cJSON_DetachItemViaPointer(src, it);
				cJSON_AddItemToArray(map, it);
			}
		}
		cJSON_Delete(merges);
	}
	dedup(map, nexplicit);
	return map;
fail:
	cJSON_Delete(merges);
	cJSON_Delete(map);
	return NULL;
}

/* Remember an anchored node under its name, as a private copy. */
static void
remember(struct loader *l, const char *name, const cJSON *n, size_t size)
{
	struct anchor	*a;

	a = xmalloc(sizeof *a);
	a->name = xstrdup(name);
	a->node = cJSON_Duplicate(n, 1);
	a->size = size;
	a->next = l->anchors;
	l->anchors = a;
}

/* Build the node that starts with ev, which is consumed. */
static cJSON *
load_node(struct loader *l, yaml_event_t *ev)
{
	cJSON		*n = NULL;
	const char	*anchor = NULL;
	size_t		 before = l->events + l->copied;

	if (++l->depth > MAX_DEPTH) {
		fail(l, ev->start_mark.line + 1, "exceeded max depth of %d",
		    MAX_DEPTH);
		goto out;
	}
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		n = load_alias(l, ev);
		break;
	case YAML_SCALAR_EVENT:
		anchor = (const char *)ev->data.scalar.anchor;
		l->events++;
		n = load_scalar(l, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = (const char *)ev->data.sequence_start.anchor;
		l->events++;
		n = load_sequence(l);
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = (const char *)ev->data.mapping_start.anchor;
		l->events++;
		n = load_mapping(l);
		break;
	default:
		fail(l, ev->start_mark.line + 1, "did not find expected node");
		break;
	}
	if (n != NULL && anchor != NULL)
		remember(l, anchor, n, l->events + l->copied - before);
out:
	l->depth--;
	yaml_event_delete(ev);
	return n;
}

/* Parse the stream; with first, stop after the first non-empty document. */
static cJSON *
load_stream(const char *buf, size_t len, int first, char **cause)
{
	struct loader	 l;
	yaml_event_t	 ev;
	yaml_event_type_t type;
	cJSON		*docs = cJSON_CreateArray(), *n;

	memset(&l, 0, sizeof l);
	l.buf = buf;
	l.len = len;
	if (!yaml_parser_initialize(&l.parser))
		xoom("yaml_parser_initialize");
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)buf,
	    len);
	for (;;) {
		if (next_event(&l, &ev) != 0)
			goto fail;
		type = ev.type;
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT)
			break;
		if (type != YAML_DOCUMENT_START_EVENT)
			continue;
		if (next_event(&l, &ev) != 0)
			goto fail;
		n = load_node(&l, &ev);
		forget_anchors(&l);
		l.events = l.copied = 0;
		if (n == NULL)
			goto fail;
		if (next_event(&l, &ev) != 0) {
			cJSON_Delete(n);
			goto fail;
		}
		yaml_event_delete(&ev);
		if (cJSON_IsNull(n)) {
			cJSON_Delete(n);
			continue;
		}
		cJSON_AddItemToArray(docs, n);
		if (first)
			break;
	}
	yaml_parser_delete(&l.parser);
	return docs;
fail:
	forget_anchors(&l);
	yaml_parser_delete(&l.parser);
	cJSON_Delete(docs);
	if (cause != NULL)
		*cause = l.cause;
	else
		free(l.cause);
	return NULL;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Parse buf with cJSON if it is exactly one JSON object or array. */
static cJSON *
load_json(const char *buf, size_t len)
{
	const char	*p = buf, *end = buf + len, *stop;
	cJSON		*j;

	while (p < end && is_space(*p))
		p++;
	if (p == end || (*p != '{' && *p != '['))
		return NULL;
	if ((j = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop,
	    0)) == NULL)
		return NULL;
	while (stop < end && is_space(*stop))
		stop++;
	if (stop != end) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

cJSON *
yamljson_parse(const char *buf, size_t len, char **cause)
{
	cJSON	*docs, *doc;

	if (cause != NULL)
		*cause = NULL;
	if ((doc = load_json(buf, len)) != NULL)
		return doc;
	if ((docs = load_stream(buf, len, 1, cause)) == NULL)
		return NULL;
	doc = cJSON_DetachItemFromArray(docs, 0);
	cJSON_Delete(docs);
	if (doc == NULL && cause != NULL)
		*cause = util_printf("empty document");
	return doc;
}

cJSON *
yamljson_parse_all(const char *buf, size_t len, char **cause)
{
	cJSON	*docs, *doc;

	if (cause != NULL)
		*cause = NULL;
	if ((doc = load_json(buf, len)) != NULL) {
		docs = cJSON_CreateArray();
		cJSON_AddItemToArray(docs, doc);
		return docs;
	}
	return load_stream(buf, len, 0, cause);
}

cJSON *
yamljson_load_file(const char *path, char **cause)
{
	FILE		*f;
	struct stat	 st;
	char		*buf = NULL, *why = NULL;
	size_t		 len = 0, cap, n;
	cJSON		*docs;
	int		 saved;

	if (cause != NULL)
		*cause = NULL;
	if ((f = fopen(path, "r")) == NULL)
		goto syserr;
	cap = 4096;
	if (fstat(fileno(f), &st) == 0 && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		saved = errno;
		fclose(f);
		free(buf);
		errno = saved;
		goto syserr;
	}
	fclose(f);
	docs = yamljson_parse_all(buf, len, &why);
	free(buf);
	if (docs == NULL) {
		if (cause != NULL)
			*cause = util_printf("%s: %s", path, why);
		free(why);
	}
	return docs;
syserr:
	if (cause != NULL)
		*cause = util_printf("%s: %s", path, strerror(errno));
	return NULL;
}

cJSON *
yamljson_load_dir(const char *dir, char **cause)
{
	struct dirent **ents;
	cJSON *all, *docs, *d;
	char *why;
	int n, i;

	*cause = NULL;
	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0) {
		*cause = util_printf("cannot read the directory %s: %s", dir,
		    strerror(errno));
		return NULL;
	}
	all = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);
		char *path;

		if (l < 5 || strcmp(ents[i]->d_name + l - 5, ".yaml") != 0) {
			free(ents[i]);
			continue;
		}
		path = util_printf("%s/%s", dir, ents[i]->d_name);
		free(ents[i]);
		if ((docs = yamljson_load_file(path, &why)) == NULL) {
			if (*cause == NULL)
				*cause = util_printf("%s: %s", path, why);
			free(why);
		} else {
			while ((d = cJSON_DetachItemFromArray(docs, 0)) != NULL)
				cJSON_AddItemToArray(all, d);
			cJSON_Delete(docs);
		}
		free(path);
	}
	free(ents);
	return all;
}
