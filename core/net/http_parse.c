/*
 * The request side of an HTTP connection: http-parser's callbacks, which
 * collect a request into the connection's buffers, and what a handler
 * reads back from them (headers, query parameters).
 *
 * The URL, the headers ("name\0value\0" pairs with offsets) and the body
 * each live in one buffer per connection, reused from request to request
 * (those grown past 64 KiB are freed between requests), so a keep-alive
 * client costs no allocation per request in the steady state. Limits are
 * enforced as the bytes arrive: a header section over 64 KiB is 431, a
 * body over 3 MiB is 413. on_message_complete pauses the parser, so http.c
 * dispatches exactly one request at a time.
 *
 * Paths and query parameters are percent-decoded as Go's net/url decodes
 * them; integer and boolean parameters are read as kube-apiserver reads
 * them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "net/http_int.h"

#define MAX_HEADER	(64 * 1024)
#define MAX_BODY	(3 * 1024 * 1024)
#define KEEP_BUFFER	(64 * 1024)	/* larger ones freed between requests */

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
static size_t
decode(char *dst, const char *src, size_t len, int plus)
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

char *
http_query_get(const char *query, const char *key)
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
		if (!decoded_equal(p, end - p, key))
			continue;
		if (eq == NULL)
			n = 0;
		else
			n = amp - (eq + 1);
		if ((v = malloc(n + 1)) == NULL)
			fatal("http: out of memory");
		n = eq != NULL ? decode(v, eq + 1, n, 1) : 0;
		v[n] = '\0';
		return v;
	}
	return NULL;
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
		if (cause != NULL && asprintf(cause, "strconv.ParseInt: "
		    "parsing \"%s\": %s", v, why) < 0)
			fatal("http: out of memory");
		free(v);
		return -1;
	}
	*out = neg ? (long long)(0 - acc) : (long long)acc;
	free(v);
	return 1;
}

const char *
http_req_header(const http_req *req, const char *name)
{
	struct conn *c = REQ_CONN(req);
	size_t i;

	for (i = 0; i < c->nhdrs; i++) {
		if (strcasecmp(c->hbuf + c->hdrs[i].name, name) == 0)
			return c->hbuf + c->hdrs[i].value;
	}
	return NULL;
}

int
http_req_client_cert(const http_req *req, const char **cn,
    const char *const **orgs, int *norgs)
{
	struct conn *c = REQ_CONN(req);

	return c->tls != NULL ? tls_conn_peer(c->tls, cn, orgs, norgs) : -1;
}

/* Reset buffers between requests, freeing any that grew large. */
void
http_parse_reset(struct conn *c)
{
	if (c->bodycap > KEEP_BUFFER) {
		free(c->body);
		c->body = NULL;
		c->bodycap = 0;
	}
	if (c->hcap > KEEP_BUFFER) {
		free(c->hbuf);
		c->hbuf = NULL;
		c->hcap = 0;
		free(c->hdrs);
		c->hdrs = NULL;
		c->hdrcap = 0;
	}
	if (c->urlcap > KEEP_BUFFER) {
		free(c->url);
		c->url = NULL;
		c->urlcap = 0;
	}
	c->nhdrs = 0;
	c->hlen = 0;
	c->urllen = 0;
	c->bodylen = 0;
}

static int
count_header(struct conn *c, size_t len)
{
	c->hsize += len;
	if (c->hsize > MAX_HEADER) {
		c->err_status = 431;
		return -1;
	}
	return 0;
}

static void
hbuf_add(struct conn *c, const char *p, size_t len)
{
	http_buf_grow(&c->hbuf, &c->hcap, c->hlen + len + 1);
	memcpy(c->hbuf + c->hlen, p, len);
	c->hlen += len;
}

/* Terminate the header being collected, trimming trailing white space. */
static void
header_end(struct conn *c)
{
	struct hdr *h;

	if (c->hstate == H_NONE)
		return;
	h = &c->hdrs[c->nhdrs - 1];
	if (c->hstate == H_FIELD) {
		hbuf_add(c, "", 1);
		h->value = c->hlen;
	}
	while (c->hlen > h->value && (c->hbuf[c->hlen - 1] == ' ' ||
	    c->hbuf[c->hlen - 1] == '\t'))
		c->hlen--;
	hbuf_add(c, "", 1);
	c->hstate = H_NONE;
}

/* The first byte of a request starts its deadline. */
static int
on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	c->in_message = 1;
	c->urllen = 0;
	c->hlen = 0;
	c->nhdrs = 0;
	c->hstate = H_NONE;
	c->hsize = 0;
	c->bodylen = 0;
	c->err_status = 0;
	http_conn_timer(c, T_REQUEST, http_conn_request_ms);
	return 0;
}

static int
on_url(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (count_header(c, len) != 0)
		return -1;
	http_buf_grow(&c->url, &c->urlcap, c->urllen + len + 1);
	memcpy(c->url + c->urllen, at, len);
	c->urllen += len;
	return 0;
}

/* Header names and values may arrive in pieces; a new name ends a header. */
static int
on_header_field(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;
	struct hdr *h;
	size_t n;

	if (count_header(c, len + 4) != 0)
		return -1;
	if (c->hstate != H_FIELD) {
		header_end(c);
		if (c->nhdrs == c->hdrcap) {
			n = c->hdrcap != 0 ? c->hdrcap * 2 : 16;
			if ((h = realloc(c->hdrs, n * sizeof *h)) == NULL)
				fatal("http: out of memory");
			c->hdrs = h;
			c->hdrcap = n;
		}
		c->hdrs[c->nhdrs].name = c->hlen;
		c->hdrs[c->nhdrs].value = c->hlen;
		c->nhdrs++;
		c->hstate = H_FIELD;
	}
	hbuf_add(c, at, len);
	return 0;
}

static int
on_header_value(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (count_header(c, len) != 0)
		return -1;
	if (c->hstate == H_NONE)
		return 0;
	if (c->hstate == H_FIELD) {
		hbuf_add(c, "", 1);
		c->hdrs[c->nhdrs - 1].value = c->hlen;
		c->hstate = H_VALUE;
	}
	hbuf_add(c, at, len);
	return 0;
}

/* Split the URL into a decoded path and a raw query, in place. */
static int
split_url(struct conn *c)
{
	struct http_parser_url u;
	char *path;
	size_t n;

	if (c->urllen == 0 || c->urllen > 65535)
		return -1;
	c->url[c->urllen] = '\0';
	http_parser_url_init(&u);
	if (http_parser_parse_url(c->url, c->urllen,
	    c->parser.method == HTTP_CONNECT, &u) != 0)
		return -1;
	if (u.field_set & (1 << UF_QUERY)) {
		c->req.query = c->url + u.field_data[UF_QUERY].off;
		c->url[u.field_data[UF_QUERY].off +
		    u.field_data[UF_QUERY].len] = '\0';
	} else
		c->req.query = "";
	if (u.field_set & (1 << UF_PATH)) {
		path = c->url + u.field_data[UF_PATH].off;
		n = decode(path, path, u.field_data[UF_PATH].len, 0);
		path[n] = '\0';
		c->req.path = path;
	} else
		c->req.path = "/";
	return 0;
}

/* Headers are in: split the URL and refuse bodies that cannot fit. */
static int
on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;
	const char *expect;
	struct wreq *w;
	uv_buf_t buf;
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	header_end(c);
	if (split_url(c) != 0) {
		c->err_status = 400;
		return -1;
	}
	if ((p->flags & F_CONTENTLENGTH) && p->content_length > MAX_BODY) {
		c->err_status = 413;
		return -1;
	}
	if ((p->flags & F_CONTENTLENGTH) && p->content_length != 0 &&
	    p->content_length >= c->bodycap)
		http_buf_grow(&c->body, &c->bodycap, p->content_length + 1);

	/* The client waits for a go-ahead before sending a large body. */
	expect = http_req_header(&c->req, "Expect");
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 &&
	    p->http_major == 1 && p->http_minor >= 1 &&
	    ((p->flags & F_CHUNKED) || ((p->flags & F_CONTENTLENGTH) &&
	    p->content_length != 0))) {
		w = http_conn_wreq_get(c->srv);
		memcpy(w->head, cont, sizeof cont - 1);
		buf = uv_buf_init(w->head, sizeof cont - 1);
		http_conn_write(c, w, &buf, 1);
	}
	return 0;
}

static int
on_body(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	if (c->bodylen + len > MAX_BODY) {
		c->err_status = 413;
		return -1;
	}
	http_buf_grow(&c->body, &c->bodycap, c->bodylen + len + 1);
	memcpy(c->body + c->bodylen, at, len);
	c->bodylen += len;
	return 0;
}

/* Pause the parser: the request is dispatched once execute returns. */
static int
on_message_complete(http_parser *p)
{
	struct conn *c = p->data;

	c->in_message = 0;
	c->complete = 1;
	c->http10 = p->http_major < 1 ||
	    (p->http_major == 1 && p->http_minor == 0);
	c->close_after = !http_should_keep_alive(p) || p->upgrade;
	http_parser_pause(p, 1);
	return 0;
}

/* The callbacks above, run by http.c through http_parser_execute. */
const http_parser_settings http_parse_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};
