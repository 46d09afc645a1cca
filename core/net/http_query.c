/*
 * Query strings and percent-decoding. A handler reads its parameters one
 * by one from the raw query (http_query_get), decoded as Go's net/url
 * decodes them ('+' is a space, a '%' not followed by two hex digits
 * stands for itself); booleans and integers are read as kube-apiserver
 * reads them, with Go's error text for a malformed integer. The request
 * path is decoded in place with the same rules, '+' left as it is.
 */
#include <string.h>
#include <strings.h>

#include "lib/util.h"
#include "net/http_int.h"

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * Decode the next byte of a percent-encoded string at *s (before end),
 * advancing *s; a '%' not followed by two hex digits stands for itself.
 */
static int
decode_next(const char **s, const char *end, int plus)
{
	const char *p = *s;
	int hi, lo;

	if (*p == '%' && end - p >= 3 && (hi = hexval(p[1])) >= 0 &&
	    (lo = hexval(p[2])) >= 0) {
		*s = p + 3;
		return hi << 4 | lo;
	}
	*s = p + 1;
	if (plus && *p == '+')
		return ' ';
	return (unsigned char)*p;
}

/* Percent-decode len bytes of src into dst (may be src); return the length. */
size_t
http_query_decode(char *dst, const char *src, size_t len, int plus)
{
	const char *end = src + len;
	size_t n = 0;

	while (src < end)
		dst[n++] = decode_next(&src, end, plus);
	return n;
}

/* Whether the encoded query component s (len bytes) decodes to key. */
static int
decoded_equal(const char *s, size_t len, const char *key)
{
	const char *end = s + len;
	const unsigned char *k = (const unsigned char *)key;

	while (s < end) {
		if (*k == '\0' || decode_next(&s, end, 1) != *k)
			return 0;
		k++;
	}
	return *k == '\0';
}

/* The nth (from 0) value of key, decoded and malloc'd, or NULL. */
static char *
query_nth(const char *query, const char *key, int nth)
{
	const char *p, *amp, *eq, *end;
	char *v;
	size_t n;

	if (query == NULL || key == NULL)
		return NULL;
	for (p = query; *p != '\0'; p = *amp != '\0' ? amp + 1 : amp) {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', amp - p);
		end = eq != NULL ? eq : amp;
		if (end == p && *key != '\0')
			continue;
		if (!decoded_equal(p, end - p, key) || nth-- > 0)
			continue;
		if (eq == NULL)
			n = 0;
		else
			n = amp - (eq + 1);
		v = xmalloc(n + 1);
		n = eq != NULL ? http_query_decode(v, eq + 1, n, 1) : 0;
		v[n] = '\0';
		return v;
	}
	return NULL;
}

char *
http_query_get(const char *query, const char *key)
{
	return query_nth(query, key, 0);
}

char **
http_query_all(const char *query, const char *key, int *n)
{
	char **v = NULL, *s;
	int k = 0;

	while ((s = query_nth(query, key, k)) != NULL) {
		v = xreallocarray(v, k + 2, sizeof *v);
		v[k++] = s;
		v[k] = NULL;
	}
	if (n != NULL)
		*n = k;
	return v;
}

void
http_query_all_free(char **v)
{
	int i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * A boolean parameter as kube-apiserver decodes one into its options
 * (runtime.Convert_Slice_string_To_bool): "0" and "false" in any case are
 * false, every other value, the empty one included, is true. It never
 * refuses a value, so neither do we.
 */
int
http_query_bool(const char *query, const char *key, int def)
{
	char *v = http_query_get(query, key);
	int b;

	if (v == NULL)
		return def;
	b = !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
	free(v);
	return b;
}

/*
 * An integer parameter as strconv.ParseInt(v, 10, 64) reads it: an optional
 * sign and decimal digits, nothing else, within int64. The cause is worded
 * as Go's error, which kube-apiserver returns in its 400.
 */
int
http_query_int(const char *query, const char *key, long long *out,
    char **cause)
{
	char *v = http_query_get(query, key);
	const char *p, *why = NULL;
	unsigned long long acc = 0, max = 9223372036854775807ULL;
	int neg = 0;

	if (v == NULL)
		return 0;
	p = v;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (*p == '\0')
		why = "invalid syntax";
	for (; why == NULL && *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			why = "invalid syntax";
		else if (acc > (max + neg - (unsigned)(*p - '0')) / 10)
			why = "value out of range";
		else
			acc = acc * 10 + (unsigned)(*p - '0');
	}
	if (why != NULL) {
		if (cause != NULL)
			*cause = util_printf("strconv.ParseInt: parsing "
			    "\"%s\": %s", v, why);
		free(v);
		return -1;
	}
	*out = neg ? (long long)(0 - acc) : (long long)acc;
	free(v);
	return 1;
}
