/*
 * Tests for the HTTP server. The server's loop runs in the main thread; one
 * client thread drives it with libcurl and with raw sockets (for pipelining,
 * malformed input and slow clients), reading responses back with http-parser
 * in response mode. Only the client thread runs CHECKs: the handlers record
 * what they saw in atomics that the client polls.
 *
 * Usage: test-http [requests-per-client] (default 1000; 64 clients).
 */
#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <uv.h>

#include "net/http.h"
#include "check.h"
#include "lib/log.h"

#define NCLIENTS 64

static uv_loop_t loop;
static uv_async_t done_async;
static http_server *srv, *srv6, *srvlocal;
static int port, port6, portlocal;
static int nrequests = 1000;

static atomic_int onclose_fired;
static atomic_int write_after_close = 1;
static atomic_int closed_seen;
static atomic_int slow_answered;
static atomic_int slow_onclose;
static atomic_int bench_failures;
static atomic_long bench_done;

static rbuf *shared;

/* Server side. */

struct delayed {
	uv_timer_t	 t;
	http_req	*req;
	char		 path[256];
	int		 slow;
};

struct watch {
	uv_timer_t	 t;
	http_req	*req;
};

static void
free_handle(uv_handle_t *h)
{
	free(h->data);
}

static void
on_delayed(uv_timer_t *t)
{
	struct delayed *d = t->data;

	if (d->slow)
		atomic_fetch_add(&slow_answered, 1);
	http_respond(d->req, 200, "text/plain", d->path, strlen(d->path));
	uv_close((uv_handle_t *)t, free_handle);
}

static void
on_slow_close(http_req *req, void *arg)
{
	atomic_fetch_add(&slow_onclose, 1);
}

static void
on_watch_close(http_req *req, void *arg)
{
	atomic_fetch_add(&onclose_fired, 1);
}

static void
on_tick(uv_timer_t *t)
{
	struct watch *w = t->data;
	int r;

	(void)http_stream_pending(w->req);
	r = http_stream_write_copy(w->req, "tick\n", 5);
	if (r == 0)
		return;
	atomic_store(&write_after_close, r);
	atomic_store(&closed_seen, http_req_closed(w->req));
	http_stream_end(w->req);
	uv_timer_stop(t);
	uv_close((uv_handle_t *)t, free_handle);
}

static void
echo(http_req *req)
{
	char *x = http_query_get(req->query, "x");
	char *y = http_query_get(req->query, "y");
	char *z = http_query_get(req->query, "z");
	char *m = http_query_get(req->query, "missing");
	const char *hdr = http_req_header(req, "x-TEST");
	size_t size = 1024 + (req->body_len < 1000 ? req->body_len : 0);
	char *out = malloc(size);
	int n;

	n = snprintf(out, size, "method=%s\npath=%s\nquery=%s\nx=%s\ny=%s\n"
	    "z=%s\nmissing=%s\nhdr=%s\nlen=%zu\nbody=%s", req->method,
	    req->path, req->query, x ? x : "(null)", y ? y : "(null)",
	    z ? z : "(null)", m ? m : "(null)", hdr ? hdr : "(null)",
	    req->body_len, req->body_len < 1000 ? req->body : "...");
	http_respond(req, 200, "text/plain", out, n);
	free(out);
	free(x);
	free(y);
	free(z);
	free(m);
}

static void
handler(http_req *req, void *arg)
{
	struct delayed *d;
	struct watch *w;
	rbuf *rb;
	char *s, buf[64];
	int n;

	if (strncmp(req->path, "/echo", 5) == 0)
		echo(req);
	else if (strncmp(req->path, "/async", 6) == 0) {
		d = calloc(1, sizeof *d);
		d->req = req;
		snprintf(d->path, sizeof d->path, "%s", req->path);
		s = http_query_get(req->query, "ms");
		d->slow = s != NULL;
		if (d->slow)
			http_req_on_close(req, on_slow_close, NULL);
		uv_timer_init(&loop, &d->t);
		d->t.data = d;
		uv_timer_start(&d->t, on_delayed, s != NULL ? atoi(s) : 50, 0);
		free(s);
	} else if (strcmp(req->path, "/stream") == 0) {
		http_stream_begin(req, 200, "application/json");
		http_stream_write_copy(req, "alpha\n", 6);
		http_stream_write(req, shared);
		s = malloc(10000);
		memset(s, 'x', 10000);
		http_stream_write_copy(req, s, 10000);
		free(s);
		http_stream_write_copy(req, "", 0);
		rb = rbuf_new("omega\n", 6);
		http_stream_write(req, rb);
		rbuf_unref(rb);
		http_stream_end(req);
	} else if (strcmp(req->path, "/watch") == 0) {
		http_stream_begin(req, 200, "application/json");
		http_stream_write_copy(req, "hello\n", 6);
		http_req_on_close(req, on_watch_close, NULL);
		w = calloc(1, sizeof *w);
		w->req = req;
		uv_timer_init(&loop, &w->t);
		w->t.data = w;
		uv_timer_start(&w->t, on_tick, 20, 20);
	} else if (strcmp(req->path, "/big") == 0) {
		s = malloc(1 << 20);
		for (n = 0; n < 1 << 20; n++)
			s[n] = 'a' + n % 26;
		http_respond(req, 200, "application/octet-stream", s, 1 << 20);
		free(s);
	} else if (strcmp(req->path, "/rbuf") == 0)
		http_respond_rbuf(req, 200, "application/json", shared);
	else if (strcmp(req->path, "/conns") == 0) {
		n = snprintf(buf, sizeof buf, "%d",
		    http_server_connections(srv));
		http_respond(req, 200, "text/plain", buf, n);
	} else if (strcmp(req->path, "/setmax") == 0) {
		s = http_query_get(req->query, "n");
		http_set_max_connections(atoi(s));
		free(s);
		http_respond(req, 200, "text/plain", "ok", 2);
	} else if (strcmp(req->path, "/relax") == 0) {
		/* Valgrind can starve a client for longer than the limits. */
		http_set_timeouts(30000, 300000);
		http_respond(req, 200, "text/plain", "ok", 2);
	} else if (strcmp(req->path, "/nocontent") == 0)
		http_respond(req, 204, NULL, NULL, 0);
	else if (strcmp(req->path, "/bench") == 0)
		http_respond(req, 200, "text/plain", "ok", 2);
	else
		http_respond(req, 404, "text/plain", "not found", 9);
}

static void
on_done(uv_async_t *a)
{
	http_server_close(srv);
	if (srv6 != NULL)
		http_server_close(srv6);
	if (srvlocal != NULL)
		http_server_close(srvlocal);
	uv_close((uv_handle_t *)a, NULL);
}

/* Client side: raw sockets with http-parser in response mode. */

struct resp {
	int		 status;
	int		 complete;
	char		*body;
	size_t		 len;
	size_t		 cap;
	char		 connection[32];
	char		 te[32];
	char		 clen[32];
	char		 ctype[64];
};

struct cli {
	int		 fd;
	http_parser	 p;
	int		 head;
	int		 eof;
	int		 n;
	struct resp	*r;
	int		 nr;
	char		 field[64];
	char		*target;
	int		 value;
};

static struct resp *
cur(struct cli *c)
{
	if (c->n >= c->nr) {
		c->r = realloc(c->r, (c->n + 16) * sizeof *c->r);
		memset(c->r + c->nr, 0, (c->n + 16 - c->nr) * sizeof *c->r);
		c->nr = c->n + 16;
	}
	return &c->r[c->n];
}

static int
c_begin(http_parser *p)
{
	struct cli *c = p->data;
	struct resp *r = cur(c);

	r->status = 0;
	r->complete = 0;
	r->len = 0;
	r->connection[0] = r->te[0] = r->clen[0] = r->ctype[0] = '\0';
	c->field[0] = '\0';
	c->value = 0;
	return 0;
}

static int
c_field(http_parser *p, const char *at, size_t len)
{
	struct cli *c = p->data;
	size_t n;

	if (c->value) {
		c->field[0] = '\0';
		c->value = 0;
	}
	n = strlen(c->field);
	if (n + len < sizeof c->field) {
		memcpy(c->field + n, at, len);
		c->field[n + len] = '\0';
	}
	return 0;
}

static int
c_value(http_parser *p, const char *at, size_t len)
{
	struct cli *c = p->data;
	struct resp *r = cur(c);
	size_t n;

	if (!c->value) {
		c->value = 1;
		c->target = NULL;
		if (strcasecmp(c->field, "connection") == 0)
			c->target = r->connection;
		else if (strcasecmp(c->field, "transfer-encoding") == 0)
			c->target = r->te;
		else if (strcasecmp(c->field, "content-length") == 0)
			c->target = r->clen;
		else if (strcasecmp(c->field, "content-type") == 0)
			c->target = r->ctype;
	}
	if (c->target != NULL) {
		n = strlen(c->target);
		if (n + len < 32) {
			memcpy(c->target + n, at, len);
			c->target[n + len] = '\0';
		}
	}
	return 0;
}

static int
c_headers(http_parser *p)
{
	struct cli *c = p->data;

	cur(c)->status = p->status_code;
	return c->head ? 1 : 0;
}

static int
c_body(http_parser *p, const char *at, size_t len)
{
	struct cli *c = p->data;
	struct resp *r = cur(c);

	if (r->len + len + 1 > r->cap) {
		r->cap = (r->len + len + 1) * 2;
		r->body = realloc(r->body, r->cap);
	}
	memcpy(r->body + r->len, at, len);
	r->len += len;
	r->body[r->len] = '\0';
	return 0;
}

static int
c_complete(http_parser *p)
{
	struct cli *c = p->data;
	struct resp *r = cur(c);

	if (r->body == NULL) {
		r->cap = 16;
		r->body = malloc(r->cap);
	}
	r->body[r->len] = '\0';
	r->complete = 1;
	c->n++;
	return 0;
}

static const http_parser_settings csettings = {
	.on_message_begin = c_begin,
	.on_header_field = c_field,
	.on_header_value = c_value,
	.on_headers_complete = c_headers,
	.on_body = c_body,
	.on_message_complete = c_complete,
};

static void
cli_init(struct cli *c, int fd)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	http_parser_init(&c->p, HTTP_RESPONSE);
	c->p.data = c;
}

static void
cli_free(struct cli *c)
{
	int i;

	for (i = 0; i < c->nr; i++)
		free(c->r[i].body);
	free(c->r);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int
tcp_connect_to(int family, const char *addr, int p)
{
	struct sockaddr_storage ss;
	struct timeval tv = {10, 0};
	socklen_t len;
	int fd;

	memset(&ss, 0, sizeof ss);
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(p);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		len = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(p);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		len = sizeof *s4;
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
tcp_connect(void)
{
	return tcp_connect_to(AF_INET, "127.0.0.1", port);
}

static int
send_all(int fd, const char *data, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= n;
	}
	return 0;
}

static int
send_str(int fd, const char *s)
{
	return send_all(fd, s, strlen(s));
}

/* Read until want responses are complete in total, EOF, or a timeout. */
static int
cli_read(struct cli *c, int want)
{
	char buf[65536];
	ssize_t n;
	size_t m;

	while (c->n < want && !c->eof) {
		n = recv(c->fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->eof = 1;
			http_parser_execute(&c->p, &csettings, NULL, 0);
			break;
		}
		m = http_parser_execute(&c->p, &csettings, buf, n);
		if (m != (size_t)n) {
			fprintf(stderr, "client parse error: %s\n",
			    http_errno_description(HTTP_PARSER_ERRNO(&c->p)));
			break;
		}
	}
	return c->n >= want;
}

/* One read: enough to see the start of a response that never ends. */
static void
cli_read_once(struct cli *c)
{
	char buf[65536];
	ssize_t n;

	n = recv(c->fd, buf, sizeof buf, 0);
	if (n == 0)
		c->eof = 1;
	if (n > 0)
		http_parser_execute(&c->p, &csettings, buf, n);
}

/* Wait for the server to close: 1 on EOF or reset, 0 on timeout. */
static int
wait_eof(int fd)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof buf, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 0;
	}
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Client side: libcurl. */

struct cbuf {
	char	*data;
	size_t	 len;
};

static size_t
curl_sink(char *p, size_t size, size_t n, void *arg)
{
	struct cbuf *b = arg;

	b->data = realloc(b->data, b->len + size * n + 1);
	memcpy(b->data + b->len, p, size * n);
	b->len += size * n;
	b->data[b->len] = '\0';
	return size * n;
}

static long
curl_do(CURL *h, const char *url, struct cbuf *b)
{
	long status = 0;

	free(b->data);
	b->data = NULL;
	b->len = 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	if (curl_easy_perform(h) != CURLE_OK)
		return -1;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

static long
curl_get(const char *url, struct cbuf *b)
{
	CURL *h = curl_easy_init();
	long status;

	status = curl_do(h, url, b);
	curl_easy_cleanup(h);
	return status;
}

static void
test_query(void)
{
	char *v;

	v = http_query_get("a=1&b=two+words&c=%41%2f%zz&d&e=", "b");
	CHECK_STR(v, "two words");
	free(v);
	v = http_query_get("a=1&b=two+words&c=%41%2f%zz&d&e=", "c");
	CHECK_STR(v, "A/%zz");
	free(v);
	v = http_query_get("a=1&b=two+words&c=%41%2f%zz&d&e=", "d");
	CHECK_STR(v, "");
	free(v);
	v = http_query_get("a=1&b=two+words&c=%41%2f%zz&d&e=", "e");
	CHECK_STR(v, "");
	free(v);
	CHECK(http_query_get("a=1&b=2", "c") == NULL);
	CHECK(http_query_get("", "a") == NULL);
	CHECK(http_query_get("ab=1", "a") == NULL);
	v = http_query_get("label%53elector=app%3Dweb&x=1", "labelSelector");
	CHECK_STR(v, "app=web");
	free(v);
	v = http_query_get("a=1&a=2", "a");
	CHECK_STR(v, "1");
	free(v);
	v = http_query_get("&&a=%", "a");
	CHECK_STR(v, "%");
	free(v);
}

/* Booleans and integers as kube-apiserver decodes its query options. */
static void
test_query_typed(void)
{
	static const char *const truthy[] = { "1", "t", "T", "true", "True",
	    "TRUE", "", "yes", "maybe", "2", "f", "F" };
	static const char *const falsy[] = { "0", "false", "False", "FALSE",
	    "fAlSe" };
	char q[64], *cause = NULL;
	long long n = 42;
	size_t i;

	for (i = 0; i < sizeof truthy / sizeof truthy[0]; i++) {
		snprintf(q, sizeof q, "a=1&watch=%s", truthy[i]);
		CHECK(http_query_bool(q, "watch", 0) == 1);
	}
	for (i = 0; i < sizeof falsy / sizeof falsy[0]; i++) {
		snprintf(q, sizeof q, "watch=%s&b=2", falsy[i]);
		CHECK(http_query_bool(q, "watch", 1) == 0);
	}
	CHECK(http_query_bool("watch", "watch", 0) == 1);
	CHECK(http_query_bool("watch=%46alse", "watch", 1) == 0);
	CHECK(http_query_bool("x=1", "watch", 0) == 0);
	CHECK(http_query_bool("x=1", "watch", 1) == 1);

	CHECK(http_query_int("x=1", "limit", &n, &cause) == 0 && n == 42);
	CHECK(http_query_int("limit=500", "limit", &n, &cause) == 1 &&
	    n == 500);
	CHECK(http_query_int("limit=-7", "limit", &n, &cause) == 1 && n == -7);
	CHECK(http_query_int("limit=%2B7", "limit", &n, &cause) == 1 &&
	    n == 7);
	CHECK(http_query_int("limit=9223372036854775807", "limit", &n,
	    &cause) == 1 && n == 9223372036854775807LL);
	CHECK(http_query_int("limit=-9223372036854775808", "limit", &n,
	    &cause) == 1 && n == -9223372036854775807LL - 1);
	CHECK(cause == NULL);
	CHECK(http_query_int("limit=abc", "limit", &n, &cause) == -1);
	CHECK_STR(cause, "strconv.ParseInt: parsing \"abc\": invalid syntax");
	free(cause);
	cause = NULL;
	CHECK(http_query_int("limit=", "limit", &n, &cause) == -1);
	CHECK_STR(cause, "strconv.ParseInt: parsing \"\": invalid syntax");
	free(cause);
	cause = NULL;
	CHECK(http_query_int("limit=12x", "limit", &n, NULL) == -1);
	CHECK(http_query_int("limit=-", "limit", &n, NULL) == -1);
	CHECK(http_query_int("limit=%201", "limit", &n, NULL) == -1);
	CHECK(http_query_int("limit=9223372036854775808", "limit", &n,
	    &cause) == -1);
	CHECK_STR(cause, "strconv.ParseInt: parsing "
	    "\"9223372036854775808\": value out of range");
	free(cause);
	CHECK(n == -9223372036854775807LL - 1);
}

static void
test_get(void)
{
	struct cbuf b = {NULL, 0};
	char url[256];
	CURL *h;
	struct curl_slist *hdrs = NULL;
	long status;

	h = curl_easy_init();
	hdrs = curl_slist_append(hdrs, "X-Test: foo bar  ");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/echo/a%%20b/c%%2Fd"
	    "?x=1&y=hello+w%%21&z", port);
	status = curl_do(h, url, &b);
	CHECK(status == 200);
	CHECK(b.data != NULL && strstr(b.data, "method=GET\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "path=/echo/a b/c/d\n") != NULL);
	CHECK(b.data != NULL &&
	    strstr(b.data, "query=x=1&y=hello+w%21&z\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "x=1\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "y=hello w!\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "z=\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "missing=(null)\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "hdr=foo bar\n") != NULL);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);

	snprintf(url, sizeof url, "http://127.0.0.1:%d/nowhere", port);
	CHECK(curl_get(url, &b) == 404);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/rbuf", port);
	CHECK(curl_get(url, &b) == 200);
	CHECK(b.data != NULL && strcmp(b.data, shared->data) == 0);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/big", port);
	CHECK(curl_get(url, &b) == 200);
	CHECK(b.len == 1 << 20);
	CHECK(b.data != NULL && b.data[0] == 'a' &&
	    b.data[(1 << 20) - 1] == 'a' + ((1 << 20) - 1) % 26);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/nocontent", port);
	CHECK(curl_get(url, &b) == 204);

	if (srv6 != NULL) {
		snprintf(url, sizeof url, "http://[::1]:%d/echo/six", port6);
		CHECK(curl_get(url, &b) == 200);
		CHECK(b.data != NULL && strstr(b.data, "path=/echo/six\n"));
	}
	snprintf(url, sizeof url, "http://127.0.0.1:%d/echo/local", portlocal);
	CHECK(curl_get(url, &b) == 200);
	CHECK(b.data != NULL && strstr(b.data, "path=/echo/local\n"));
	free(b.data);
}

static void
test_post(void)
{
	struct cbuf b = {NULL, 0};
	char url[128], *big, lenline[64];
	CURL *h;
	struct cli c;
	size_t n = 2 << 20;

	snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", port);
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, "hello body");
	CHECK(curl_do(h, url, &b) == 200);
	CHECK(b.data != NULL && strstr(b.data, "method=POST\n") != NULL);
	CHECK(b.data != NULL && strstr(b.data, "len=10\nbody=hello body"));

	/* 2 MiB: curl asks for 100-continue first. */
	big = malloc(n);
	memset(big, 'b', n);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, big);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)n);
	CHECK(curl_do(h, url, &b) == 200);
	snprintf(lenline, sizeof lenline, "len=%zu\n", n);
	CHECK(b.data != NULL && strstr(b.data, lenline) != NULL);
	curl_easy_cleanup(h);
	free(big);
	free(b.data);

	/* Chunked body, split across writes. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "POST /echo HTTP/1.1\r\nHost: x\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhel");
	sleep_ms(20);
	send_str(c.fd, "lo\r\n6\r\n world\r\n0\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 200);
	CHECK(c.n == 1 && strstr(c.r[0].body, "len=11\nbody=hello world"));
	cli_free(&c);
}

static void
test_keepalive(void)
{
	struct cbuf b = {NULL, 0};
	char url[128];
	long conns;
	CURL *h;
	struct cli c;
	int i, ok;

	h = curl_easy_init();
	for (i = 0; i < 5; i++) {
		snprintf(url, sizeof url, "http://127.0.0.1:%d/echo/%d", port,
		    i);
		CHECK(curl_do(h, url, &b) == 200);
		curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &conns);
		CHECK(conns == (i == 0 ? 1 : 0));
	}
	curl_easy_cleanup(h);
	free(b.data);

	cli_init(&c, tcp_connect());
	for (i = 0, ok = 0; i < 20; i++) {
		send_str(c.fd, "GET /echo/ka HTTP/1.1\r\nHost: x\r\n\r\n");
		if (cli_read(&c, i + 1) && c.r[i].status == 200 &&
		    c.r[i].connection[0] == '\0')
			ok++;
	}
	CHECK(ok == 20);

	/* HEAD: headers only, and the connection stays in step. */
	c.head = 1;
	send_str(c.fd, "HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 21));
	CHECK(c.n == 21 && c.r[20].status == 200 && c.r[20].len == 0 &&
	    atoi(c.r[20].clen) > 0);
	c.head = 0;
	send_str(c.fd, "GET /echo/after-head HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 22));
	CHECK(c.n == 22 && strstr(c.r[21].body, "path=/echo/after-head"));
	cli_free(&c);

	/* Connection: close from the client. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n"
	    "Connection: close\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && strcasecmp(c.r[0].connection, "close") == 0);
	CHECK(wait_eof(c.fd));
	cli_free(&c);

	/* A client that stops sending still gets its whole answer. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
	shutdown(c.fd, SHUT_WR);
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].len == 1 << 20);
	CHECK(wait_eof(c.fd));
	cli_free(&c);

	/* HTTP/1.0 closes unless asked to keep alive. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /echo HTTP/1.0\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && strcasecmp(c.r[0].connection, "close") == 0);
	CHECK(wait_eof(c.fd));
	cli_free(&c);
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && strcasecmp(c.r[0].connection, "keep-alive") == 0);
	send_str(c.fd, "GET /echo/again HTTP/1.0\r\n\r\n");
	CHECK(cli_read(&c, 2));
	CHECK(c.n == 2 && strstr(c.r[1].body, "path=/echo/again"));
	cli_free(&c);
}

static void
test_pipeline(void)
{
	struct cli c;
	char *reqs, want[64];
	size_t off;
	int i, ok, n = 2000;

	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /async/1 HTTP/1.1\r\nHost: x\r\n\r\n"
	    "GET /echo/2 HTTP/1.1\r\nHost: x\r\n\r\n"
	    "POST /async/3 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
	    "\r\nabc");
	CHECK(cli_read(&c, 3));
	CHECK(c.n == 3 && strcmp(c.r[0].body, "/async/1") == 0);
	CHECK(c.n == 3 && strstr(c.r[1].body, "path=/echo/2\n") != NULL);
	CHECK(c.n == 3 && strcmp(c.r[2].body, "/async/3") == 0);
	cli_free(&c);

	/* More than the server holds while busy: reading stops and resumes. */
	reqs = malloc(n * 64);
	for (i = 0, off = 0; i < n; i++)
		off += sprintf(reqs + off,
		    "GET /%s/%d HTTP/1.1\r\nHost: x\r\n\r\n",
		    i % 500 == 0 ? "async" : "echo", i);
	cli_init(&c, tcp_connect());
	CHECK(send_all(c.fd, reqs, off) == 0);
	CHECK(cli_read(&c, n));
	for (i = 0, ok = 0; i < c.n; i++) {
		snprintf(want, sizeof want, i % 500 == 0 ? "/async/%d" :
		    "path=/echo/%d\n", i);
		if (c.r[i].status == 200 && strstr(c.r[i].body, want) != NULL)
			ok++;
	}
	CHECK(ok == n);
	cli_free(&c);
	free(reqs);
}

static void
test_stream(void)
{
	struct cbuf b = {NULL, 0};
	char url[128], *want;
	struct cli c;
	size_t n;

	n = 6 + shared->len + 10000 + 6;
	want = malloc(n + 1);
	strcpy(want, "alpha\n");
	strcat(want, shared->data);
	memset(want + 6 + shared->len, 'x', 10000);
	strcpy(want + 6 + shared->len + 10000, "omega\n");

	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && strcasecmp(c.r[0].te, "chunked") == 0);
	CHECK(c.n == 1 && strcmp(c.r[0].ctype, "application/json") == 0);
	CHECK(c.n == 1 && c.r[0].len == n && memcmp(c.r[0].body, want, n) == 0);
	send_str(c.fd, "GET /echo/next HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 2));
	CHECK(c.n == 2 && strstr(c.r[1].body, "path=/echo/next\n") != NULL);
	cli_free(&c);

	snprintf(url, sizeof url, "http://127.0.0.1:%d/stream", port);
	CHECK(curl_get(url, &b) == 200);
	CHECK(b.len == n && memcmp(b.data, want, n) == 0);
	free(b.data);

	/* HTTP/1.0 gets the stream unframed, ended by close. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /stream HTTP/1.0\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].te[0] == '\0' && c.r[0].len == n &&
	    memcmp(c.r[0].body, want, n) == 0);
	cli_free(&c);
	free(want);
}

static void
test_limits(void)
{
	struct cbuf b = {NULL, 0};
	char url[128], *big;
	struct cli c;
	CURL *h;
	size_t i, n = 4 << 20;
	const char *status413 = "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	    "\"metadata\":{},\"status\":\"Failure\",\"message\":\"the request "
	    "body is too large\",\"reason\":\"RequestEntityTooLarge\","
	    "\"code\":413}\n";	/* JSON bodies end with a newline */

	big = malloc(n);
	memset(big, 'b', n);

	/* 413 by Content-Length, while the client keeps sending. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "POST /echo HTTP/1.1\r\nHost: x\r\n"
	    "Content-Length: 4194304\r\n\r\n");
	send_all(c.fd, big, n);
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 413);
	CHECK(c.n == 1 && strcmp(c.r[0].body, status413) == 0);
	CHECK(c.n == 1 && strcmp(c.r[0].ctype, "application/json") == 0);
	CHECK(c.n == 1 && strcasecmp(c.r[0].connection, "close") == 0);
	CHECK(wait_eof(c.fd));
	cli_free(&c);

	/* 413 by counting a chunked body. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "POST /echo HTTP/1.1\r\nHost: x\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	for (i = 0; i < 4; i++) {
		if (send_str(c.fd, "100000\r\n") != 0 ||
		    send_all(c.fd, big, 1 << 20) != 0 ||
		    send_str(c.fd, "\r\n") != 0)
			break;
	}
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 413);
	CHECK(wait_eof(c.fd));
	cli_free(&c);

	/* curl, which waits for 100-continue and gets 413 instead. */
	snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", port);
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, big);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)n);
	CHECK(curl_do(h, url, &b) == 413);
	CHECK(b.data != NULL && strcmp(b.data, status413) == 0);
	curl_easy_cleanup(h);

	/* The server still serves new connections. */
	snprintf(url, sizeof url, "http://127.0.0.1:%d/echo/alive", port);
	CHECK(curl_get(url, &b) == 200);
	CHECK(b.data != NULL && strstr(b.data, "path=/echo/alive\n") != NULL);
	free(b.data);

	/* 431 for a header section over 64 KiB. */
	memcpy(big, "GET /echo HTTP/1.1\r\nX-Big: ", 27);
	memset(big + 27, 'a', 70000);
	memcpy(big + 27 + 70000, "\r\n\r\n", 4);
	cli_init(&c, tcp_connect());
	send_all(c.fd, big, 27 + 70000 + 4);
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 431);
	CHECK(wait_eof(c.fd));
	cli_free(&c);

	/* 400 for garbage and for a bad Content-Length. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "garbage\r\n\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 400);
	CHECK(wait_eof(c.fd));
	cli_free(&c);
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n"
	    "POST /echo HTTP/1.1\r\nContent-Length: 1x\r\n\r\n");
	CHECK(cli_read(&c, 2));
	CHECK(c.n == 2 && c.r[0].status == 200 && c.r[1].status == 400);
	CHECK(wait_eof(c.fd));
	cli_free(&c);
	free(big);
}

static void
test_close(void)
{
	struct cli c;
	int i;

	/* The peer leaves during a stream. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /watch HTTP/1.1\r\nHost: x\r\n\r\n");
	for (i = 0; i < 100 && !c.eof && (c.nr == 0 || c.r[0].len < 6); i++)
		cli_read_once(&c);
	CHECK(c.nr > 0 && c.r[0].len >= 6 &&
	    strncmp(c.r[0].body, "hello\n", 6) == 0);
	cli_free(&c);
	for (i = 0; i < 500 && atomic_load(&write_after_close) == 1; i++)
		sleep_ms(10);
	CHECK(atomic_load(&onclose_fired) == 1);
	CHECK(atomic_load(&write_after_close) == -1);
	CHECK(atomic_load(&closed_seen) == 1);

	/* The peer leaves before an asynchronous answer. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /async/slow?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n");
	sleep_ms(50);
	cli_free(&c);
	for (i = 0; i < 500 && atomic_load(&slow_answered) == 0; i++)
		sleep_ms(10);
	CHECK(atomic_load(&slow_onclose) == 1);
	CHECK(atomic_load(&slow_answered) == 1);
}

static void
test_timeouts(void)
{
	struct cli c;
	const char *req =
	    "GET /echo HTTP/1.1\r\nHost: x\r\nX-Slow: yyyyyyyy\r\n";
	double t0;
	size_t i;
	char ch;

	/* Half a request: 408 and close. */
	cli_init(&c, tcp_connect());
	t0 = now();
	send_str(c.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n");
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 408);
	CHECK(wait_eof(c.fd));
	CHECK(now() - t0 > 0.8 && now() - t0 < 5);
	cli_free(&c);

	/* A byte at a time does not extend the deadline. */
	cli_init(&c, tcp_connect());
	t0 = now();
	for (i = 0; i < strlen(req); i++) {
		if (send_all(c.fd, req + i, 1) != 0)
			break;
		sleep_ms(100);
		if (recv(c.fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 1)
			break;
	}
	CHECK(now() - t0 > 0.8 && now() - t0 < 2.5);
	CHECK(cli_read(&c, 1));
	CHECK(c.n == 1 && c.r[0].status == 408);
	cli_free(&c);

	/* Nothing sent at all: closed silently. */
	cli_init(&c, tcp_connect());
	t0 = now();
	CHECK(wait_eof(c.fd));
	CHECK(now() - t0 > 0.8 && now() - t0 < 5);
	cli_free(&c);

	/* Idle keep-alive after a request: closed after the idle time. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 1));
	t0 = now();
	CHECK(wait_eof(c.fd));
	CHECK(now() - t0 > 1.2 && now() - t0 < 5);
	cli_free(&c);
}

static void
test_maxconns(void)
{
	struct cli c0, c1, c2, c3;

	cli_init(&c0, tcp_connect());
	send_str(c0.fd, "GET /setmax?n=3 HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c0, 1));
	cli_init(&c1, tcp_connect());
	send_str(c1.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c1, 1));
	cli_init(&c2, tcp_connect());
	send_str(c2.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c2, 1));
	send_str(c0.fd, "GET /conns HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c0, 2));
	CHECK(c0.n == 2 && strcmp(c0.r[1].body, "3") == 0);

	cli_init(&c3, tcp_connect());
	send_str(c3.fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(!cli_read(&c3, 1));
	CHECK(c3.eof);
	cli_free(&c3);

	send_str(c0.fd, "GET /setmax?n=8192 HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c0, 3));
	cli_free(&c1);
	cli_free(&c2);
	cli_free(&c0);
}

struct bench {
	pthread_t	 t;
	int		 id;
};

static void *
bench_run(void *arg)
{
	static const char req[] = "GET /bench HTTP/1.1\r\nHost: x\r\n\r\n";
	struct cli c;
	int i;

	cli_init(&c, tcp_connect());
	if (c.fd < 0) {
		atomic_fetch_add(&bench_failures, nrequests);
		return NULL;
	}
	for (i = 0; i < nrequests; i++) {
		c.n = 0;
		if (send_all(c.fd, req, sizeof req - 1) != 0 ||
		    !cli_read(&c, 1) || c.r[0].status != 200 ||
		    strcmp(c.r[0].body, "ok") != 0) {
			atomic_fetch_add(&bench_failures, 1);
			break;
		}
		atomic_fetch_add(&bench_done, 1);
	}
	cli_free(&c);
	return NULL;
}

static void
test_bench(void)
{
	struct bench b[NCLIENTS];
	struct cli c;
	double t0, dt;
	int i;

	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /relax HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, 1));
	cli_free(&c);

	t0 = now();
	for (i = 0; i < NCLIENTS; i++)
		pthread_create(&b[i].t, NULL, bench_run, &b[i]);
	for (i = 0; i < NCLIENTS; i++)
		pthread_join(b[i].t, NULL);
	dt = now() - t0;
	CHECK(atomic_load(&bench_failures) == 0);
	CHECK(atomic_load(&bench_done) == (long)NCLIENTS * nrequests);
	fprintf(stderr, "test-http: %d clients x %d requests: %.0f requests/s"
	    " (%.3f s)\n", NCLIENTS, nrequests,
	    atomic_load(&bench_done) / dt, dt);
}

static void *
client(void *arg)
{
	struct cli c;

	test_get();
	test_post();
	test_keepalive();
	test_pipeline();
	test_stream();
	test_limits();
	test_close();
	test_timeouts();
	test_maxconns();
	test_bench();

	/* Close the server while a request is outstanding: answered later. */
	cli_init(&c, tcp_connect());
	send_str(c.fd, "GET /async/late?ms=200 HTTP/1.1\r\nHost: x\r\n\r\n");
	sleep_ms(50);
	uv_async_send(&done_async);
	CHECK(wait_eof(c.fd));
	cli_free(&c);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	char *cause = NULL;
	int r;

	if (argc > 1)
		nrequests = atoi(argv[1]);
	log_set_level(LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	shared = rbuf_new("{\"shared\":true}\n", 16);
	test_query();
	test_query_typed();

	http_set_timeouts(1000, 1500);
	uv_loop_init(&loop);
	r = http_server_listen(&loop, "127.0.0.1", 0, handler, NULL, &srv,
	    &cause);
	CHECK(r == 0);
	if (r != 0) {
		fprintf(stderr, "listen: %s\n", cause);
		return 1;
	}
	port = http_server_port(srv);
	CHECK(port > 0);
	if (http_server_listen(&loop, "::1", 0, handler, NULL, &srv6,
	    &cause) == 0)
		port6 = http_server_port(srv6);
	else {
		fprintf(stderr, "no IPv6 (%s): skipped\n", cause);
		free(cause);
		srv6 = NULL;
	}
	CHECK(http_server_listen(&loop, "localhost", 0, handler, NULL,
	    &srvlocal, NULL) == 0);
	portlocal = http_server_port(srvlocal);
	r = http_server_listen(&loop, "256.1.1.1", 0, handler, NULL, &srv,
	    &cause);
	CHECK(r != 0 && cause != NULL);
	free(cause);
	cause = NULL;
	r = http_server_listen(&loop, "127.0.0.1", port, handler, NULL, &srv,
	    &cause);
	CHECK(r == UV_EADDRINUSE && cause != NULL);
	free(cause);

	uv_async_init(&loop, &done_async, on_done);
	pthread_create(&t, NULL, client, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	pthread_join(t, NULL);
	CHECK(atomic_load(&slow_onclose) == 2);
	CHECK(atomic_load(&slow_answered) == 2);
	CHECK(uv_loop_close(&loop) == 0);
	rbuf_unref(shared);
	curl_global_cleanup();
	return check_result("test-http");
}
