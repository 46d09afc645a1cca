/*
 * http-parser's callbacks, which collect a request into its connection's
 * buffers.
 *
 * The URL, the headers ("name\0value\0" pairs with offsets) and the body
 * each live in one buffer per connection, reused from request to request
 * (those grown past 64 KiB are freed between requests), so a keep-alive
 * client costs no allocation per request in the steady state. Limits are
 * enforced as the bytes arrive: a header section over 64 KiB is 431, a
 * body over 3 MiB is 413. A client that waits for "100 Continue" gets it
 * once the headers are in. on_message_complete pauses the parser, so
 * http.c dispatches exactly one request at a time.
 */
#include <string.h>
#include <strings.h>

#include "net/http_int.h"

#define MAX_HEADER	(64 * 1024)
#define MAX_BODY	(3 * 1024 * 1024)
#define KEEP_BUFFER	(64 * 1024)	/* larger ones freed between requests */

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

	if (count_header(c, len + 4) != 0)
		return -1;
	if (c->hstate != H_FIELD) {
		header_end(c);
		XGROW(c->hdrs, c->hdrcap, c->nhdrs + 1);
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
		n = http_query_decode(path, path, u.field_data[UF_PATH].len, 0);
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
