/*
 * kubectl's last-applied-configuration annotation, for volray apply. The
 * annotation holds the configuration a client-side apply last sent: the
 * document of the file, its namespace filled in, with the annotation
 * itself taken out of metadata.annotations (which is then present, if
 * empty), encoded as kubectl encodes it: Go's encoding/json over a map,
 * so keys sorted, no spaces, <, > and & escaped as \u003c, \u003e and
 * \u0026, and a newline at the end. Writing the same bytes is what lets
 * kubectl apply and volray apply take turns on one object: each reads the
 * other's annotation as its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_lastapplied.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

/* Go's encoding of a float64: integers plainly, others the shortest
 * digits that read back, without an exponent between 1e-6 and 1e21. */
static void
put_number(struct cli_buf *b, double d)
{
	char s[64], *e;
	int p;

	if (!isfinite(d)) {
		cli_buf_add(b, "null", 4);
		return;
	}
	if (d == floor(d) && fabs(d) < 1e21) {
		cli_buf_printf(b, "%.0f", d);
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(s, sizeof s, "%.*g", p, d);
		if (strtod(s, NULL) == d)
			break;
	}
	if (strchr(s, 'e') != NULL && fabs(d) >= 1e-6 && fabs(d) < 1e21) {
		for (p = 1; p <= 30; p++) {
			snprintf(s, sizeof s, "%.*f", p, d);
			if (strtod(s, NULL) == d)
				break;
		}
	}
	/* Go writes e-07 as e-7. */
	if ((e = strstr(s, "e-0")) != NULL || (e = strstr(s, "e+0")) != NULL)
		memmove(e + 2, e + 3, strlen(e + 3) + 1);
	cli_buf_add(b, s, strlen(s));
}

/* A string as Go's encoder writes it (HTML-safe, U+2028/9 escaped). */
static void
put_string(struct cli_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	cli_buf_add(b, "\"", 1);
	for (; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			cli_buf_add(b, "\\\"", 2);
			break;
		case '\\':
			cli_buf_add(b, "\\\\", 2);
			break;
		case '\n':
			cli_buf_add(b, "\\n", 2);
			break;
		case '\r':
			cli_buf_add(b, "\\r", 2);
			break;
		case '\t':
			cli_buf_add(b, "\\t", 2);
			break;
		case '<': case '>': case '&':
			cli_buf_printf(b, "\\u%04x", *p);
			break;
		default:
			if (*p < 0x20)
				cli_buf_printf(b, "\\u%04x", *p);
			else if (p[0] == 0xe2 && p[1] == 0x80 &&
			    (p[2] == 0xa8 || p[2] == 0xa9)) {
				cli_buf_printf(b, "\\u20%s", p[2] == 0xa8 ?
				    "28" : "29");
				p += 2;
			} else
				cli_buf_add(b, (const char *)p, 1);
		}
	}
	cli_buf_add(b, "\"", 1);
}

static int
key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

/* One value, objects with their keys in byte order. */
static void
put_value(struct cli_buf *b, const cJSON *v)
{
	const cJSON **keys, *el;
	int n = 0, i;

	if (cJSON_IsObject(v)) {
		keys = xmalloc((cJSON_GetArraySize(v) + 1) *
		    sizeof *keys);
		cJSON_ArrayForEach(el, v)
			keys[n++] = el;
		qsort(keys, n, sizeof *keys, key_cmp);
		cli_buf_add(b, "{", 1);
		for (i = 0; i < n; i++) {
			if (i > 0)
				cli_buf_add(b, ",", 1);
			put_string(b, keys[i]->string);
			cli_buf_add(b, ":", 1);
			put_value(b, keys[i]);
		}
		cli_buf_add(b, "}", 1);
		free(keys);
	} else if (cJSON_IsArray(v)) {
		cli_buf_add(b, "[", 1);
		cJSON_ArrayForEach(el, v) {
			if (el != v->child)
				cli_buf_add(b, ",", 1);
			put_value(b, el);
		}
		cli_buf_add(b, "]", 1);
	} else if (cJSON_IsString(v))
		put_string(b, v->valuestring);
	else if (cJSON_IsNumber(v))
		put_number(b, v->valuedouble);
	else if (cJSON_IsTrue(v))
		cli_buf_add(b, "true", 4);
	else if (cJSON_IsFalse(v))
		cli_buf_add(b, "false", 5);
	else
		cli_buf_add(b, "null", 4);
}

char *
cli_lastapplied_encode(const cJSON *v)
{
	struct cli_buf b = { 0 };

	cli_buf_add(&b, "", 0);
	put_value(&b, v);
	cli_buf_add(&b, "\n", 1);
	return b.p;
}

/* metadata.annotations of doc, made if absent (kubectl leaves {}). */
static cJSON *
annotations(cJSON *doc)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata"), *a;

	if (!cJSON_IsObject(md)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "metadata");
		md = cJSON_AddObjectToObject(doc, "metadata");
	}
	a = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	if (!cJSON_IsObject(a)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
		a = cJSON_AddObjectToObject(md, "annotations");
	}
	return a;
}

cJSON *
cli_lastapplied_modified(const cJSON *doc)
{
	cJSON *m = cJSON_Duplicate(doc, 1), *a;
	char *enc;

	a = annotations(m);
	cJSON_DeleteItemFromObjectCaseSensitive(a, CLI_LASTAPPLIED);
	enc = cli_lastapplied_encode(m);
	cJSON_AddStringToObject(a, CLI_LASTAPPLIED, enc);
	free(enc);
	return m;
}

cJSON *
cli_lastapplied_of(const cJSON *live, int *missing)
{
	const cJSON *a = json_at(live, "metadata.annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, CLI_LASTAPPLIED);
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;

	*missing = s == NULL;
	if (s == NULL || *s == '\0')
		return NULL;
	return cJSON_Parse(s);
}
