/*
 * The remote client's JSON text written without a tree (remote_int.h):
 * a bind's body, and a pod's text with its node set. Both are made on
 * the loop once per bind, where building a cJSON tree and printing it
 * (the body), or parsing the pod and printing it again (the assumed
 * version), cost as much as the rest of the request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remote_int.h"
#include "lib/xmalloc.h"

/* Bytes s takes as a JSON string, quotes included. */
static size_t
quoted_len(const char *s)
{
	size_t n = 2;

	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			n += 2;
		else if (ch < 0x20)
			n += 6;
		else
			n++;
	}
	return n;
}

/* s as a JSON string at out (quoted_len(s) bytes); past it. */
static char *
quote(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	*out++ = '"';
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			*out++ = '\\';
			*out++ = (char)ch;
		} else if (ch < 0x20) {
			memcpy(out, "\\u00", 4);
			out[4] = hex[ch >> 4];
			out[5] = hex[ch & 15];
			out += 6;
		} else
			*out++ = (char)ch;
	}
	*out++ = '"';
	return out;
}

/* Append the literal lit at out; past it. */
static char *
lit(char *out, const char *lit)
{
	size_t n = strlen(lit);

	memcpy(out, lit, n);
	return out + n;
}

char *
remote_binding_body(const char *ns, const char *name, const char *node,
    size_t *len)
{
	static const char *const part[] = {
		"{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":"
		    "{\"name\":",
		",\"namespace\":",
		"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
		    "\"name\":",
		"}}",
	};
	size_t n = strlen(part[0]) + strlen(part[1]) + strlen(part[2]) +
	    strlen(part[3]) + quoted_len(name) + quoted_len(ns) +
	    quoted_len(node);
	char *body = xmalloc(n + 1), *p = body;

	p = lit(p, part[0]);
	p = quote(p, name);
	p = lit(p, part[1]);
	p = quote(p, ns);
	p = lit(p, part[2]);
	p = quote(p, node);
	p = lit(p, part[3]);
	*p = '\0';
	*len = (size_t)(p - body);
	return body;
}

/* --- a pod's text with its node set ------------------------------------ */

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	return p;
}

/* Past the string whose opening quote is at p; NULL if it does not end.
   Most of a pod's bytes are in strings: memchr finds each quote, which
   ends the string unless an odd number of backslashes precede it. */
static const char *
skip_string(const char *p, const char *end)
{
	const char *q, *b;

	for (p++; p < end; p = q + 1) {
		if ((q = memchr(p, '"', (size_t)(end - p))) == NULL)
			return NULL;
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
	}
	return NULL;
}

/* Past the value at p (any: nested objects and arrays counted, strings
   skipped whole); NULL if the text ends first. */
static const char *
skip_value(const char *p, const char *end)
{
	int depth = 0;

	while (p < end) {
		switch (*p) {
		case '"':
			if ((p = skip_string(p, end)) == NULL)
				return NULL;
			if (depth == 0)
				return p;
			continue;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (depth == 0)	/* a scalar's end */
				return p;
			if (--depth == 0)
				return p + 1;
			break;
		case ',':
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			if (depth == 0)
				return p;
			break;
		}
		p++;
	}
	return depth == 0 ? p : NULL;
}

/* One member of an object: its key's bytes (between the quotes) and its
   value's. */
struct member {
	const char *key;
	size_t keylen;
	const char *val, *valend;
};

/*
 * The first member named key (no escapes in it) of the object whose '{'
 * is at p: 1 with m, 0 when there is none, -1 when the text is not an
 * object as expected or a key has an escape (it might spell key).
 */
static int
find_member(const char *p, const char *end, const char *key,
    struct member *m)
{
	size_t klen = strlen(key);
	const char *q;

	if (p >= end || *p != '{')
		return -1;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return 0;
	while (p < end) {
		if (*p != '"' || (q = skip_string(p, end)) == NULL)
			return -1;
		m->key = p + 1;
		m->keylen = (size_t)(q - 1 - m->key);
		if (memchr(m->key, '\\', m->keylen) != NULL)
			return -1;
		p = skip_ws(q, end);
		if (p >= end || *p != ':')
			return -1;
		m->val = skip_ws(p + 1, end);
		if ((m->valend = skip_value(m->val, end)) == NULL ||
		    m->valend == m->val)
			return -1;
		if (m->keylen == klen && memcmp(m->key, key, klen) == 0)
			return 1;
		p = skip_ws(m->valend, end);
		if (p < end && *p == '}')
			return 0;
		if (p >= end || *p != ',')
			return -1;
		p = skip_ws(p + 1, end);
	}
	return -1;
}

rbuf *
remote_with_node_name(const char *json, size_t len, const char *node)
{
	const char *end = json + len, *top = skip_ws(json, end);
	const char *cut, *resume;	/* json's bytes [cut, resume) go */
	struct member spec, nn;
	size_t qn = quoted_len(node), n;
	rbuf *out;
	char *p;
	int has;

	if (find_member(top, end, "spec", &spec) != 1 || *spec.val != '{' ||
	    (has = find_member(spec.val, spec.valend, "nodeName", &nn)) < 0)
		return NULL;
	if (has) {
		/* The value replaced: "nodeName":"" or null. */
		cut = nn.val;
		resume = nn.valend;
		n = len - (size_t)(resume - cut) + qn;
	} else {
		/* "nodeName":NODE first in spec, a comma after it unless
		   spec is empty. */
		cut = resume = spec.val + 1;
		n = len + strlen("\"nodeName\":") + qn + 1;
	}
	out = rbuf_new(NULL, n);
	memcpy(out->data, json, (size_t)(cut - json));
	p = out->data + (cut - json);
	if (!has)
		p = lit(p, "\"nodeName\":");
	p = quote(p, node);
	if (!has && *skip_ws(resume, spec.valend) != '}')
		*p++ = ',';
	memcpy(p, resume, (size_t)(end - resume));
	p += end - resume;
	*p = '\0';
	out->len = (size_t)(p - out->data);
	return out;
}
