/*
 * A small JSONPath evaluator for printer columns. The path is walked step
 * by step over a set of current nodes: ".name" selects a member, "[N]" an
 * element, "[*]" every element, "[?(@.k==\"v\")]" the elements whose member
 * k equals v (string, number or bool text), and "[?(@.k)]" those that have k.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonpath.h"

struct eval {
	void (*fn)(const cJSON *, void *);
	void *arg;
	int count;
};

static int
text_equal(const cJSON *v, const char *want)
{
	char buf[64];

	if (cJSON_IsString(v))
		return strcmp(v->valuestring, want) == 0;
	if (cJSON_IsBool(v))
		return strcmp(cJSON_IsTrue(v) ? "true" : "false", want) == 0;
	if (cJSON_IsNumber(v)) {
		snprintf(buf, sizeof buf, "%g", v->valuedouble);
		return strcmp(buf, want) == 0;
	}
	return 0;
}

/* Does element el satisfy the filter text "@.a.b==\"v\"" or "@.a"? */
static int
filter_match(const cJSON *el, const char *f, size_t len)
{
	char expr[256], *eq, *want, *p;
	const cJSON *v = el;
	char *save, *tok;
	int neg = 0;

	if (len >= sizeof expr)
		return 0;
	memcpy(expr, f, len);
	expr[len] = '\0';
	if (strncmp(expr, "@.", 2) != 0)
		return 0;
	want = NULL;
	if ((eq = strstr(expr, "==")) != NULL || (eq = strstr(expr, "!=")) !=
	    NULL) {
		neg = eq[0] == '!';
		*eq = '\0';
		want = eq + 2;
		while (*want == ' ')
			want++;
		if (*want == '"' || *want == '\'') {
			want++;
			if ((p = strpbrk(want, "\"'")) != NULL)
				*p = '\0';
		}
		for (p = eq - 1; p > expr && *p == ' '; p--)
			*p = '\0';
	}
	for (tok = strtok_r(expr + 2, ".", &save); tok != NULL && v != NULL;
	    tok = strtok_r(NULL, ".", &save))
		v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, tok)
		    : NULL;
	if (want == NULL)
		return v != NULL;
	return neg ? !(v != NULL && text_equal(v, want)) :
	    v != NULL && text_equal(v, want);
}

static void
walk(const cJSON *node, const char *p, struct eval *ev)
{
	const cJSON *el;
	char name[256];
	size_t n;

	if (node == NULL)
		return;
	while (*p == ' ')
		p++;
	if (*p == '\0' || *p == '}') {
		ev->count++;
		ev->fn(node, ev->arg);
		return;
	}
	if (*p == '.') {
		p++;
		if (*p == '.' || *p == '\0')
			return;
		n = strcspn(p, ".[}");
		if (n >= sizeof name)
			return;
		memcpy(name, p, n);
		name[n] = '\0';
		if (strcmp(name, "*") == 0) {
			cJSON_ArrayForEach(el, node)
				walk(el, p + n, ev);
			return;
		}
		walk(cJSON_IsObject(node) ?
		    cJSON_GetObjectItemCaseSensitive(node, name) : NULL, p + n,
		    ev);
		return;
	}
	if (*p == '[') {
		const char *end;

		if (strncmp(p, "[?(", 3) == 0) {
			end = strstr(p, ")]");
			if (end == NULL)
				return;
			cJSON_ArrayForEach(el, node)
				if (filter_match(el, p + 3, end - (p + 3)))
					walk(el, end + 2, ev);
			return;
		}
		end = strchr(p, ']');
		if (end == NULL)
			return;
		if (p[1] == '*') {
			cJSON_ArrayForEach(el, node)
				walk(el, end + 1, ev);
			return;
		}
		if (p[1] == '\'' || p[1] == '"') {
			n = (size_t)(end - p) - 3;
			if (n >= sizeof name)
				return;
			memcpy(name, p + 2, n);
			name[n] = '\0';
			walk(cJSON_GetObjectItemCaseSensitive(node, name),
			    end + 1, ev);
			return;
		}
		{
			int i = atoi(p + 1);

			if (i < 0)
				i += cJSON_GetArraySize(node);
			walk(cJSON_IsArray(node) ? cJSON_GetArrayItem(node, i) :
			    NULL, end + 1, ev);
		}
		return;
	}
}

int
jsonpath_each(const cJSON *obj, const char *path,
    void (*fn)(const cJSON *, void *), void *arg)
{
	struct eval ev = { fn, arg, 0 };

	while (*path == ' ')
		path++;
	if (*path == '{')
		path++;
	if (*path == '$')
		path++;
	if (*path != '.' && *path != '[')
		return 0;
	walk(obj, path, &ev);
	return ev.count;
}

static void
first(const cJSON *m, void *arg)
{
	const cJSON **out = arg;

	if (*out == NULL)
		*out = m;
}

const cJSON *
jsonpath_first(const cJSON *obj, const char *path)
{
	const cJSON *out = NULL;

	jsonpath_each(obj, path, first, &out);
	return out;
}
