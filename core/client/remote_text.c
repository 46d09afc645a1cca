/*
 * The remote client's JSON text written without a tree (remote_int.h):
 * a bind's body, made on the loop once per bind, where building a cJSON
 * tree and printing it cost as much as the rest of the request. Only
 * written, never read: what the client reads it parses with cJSON.
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

