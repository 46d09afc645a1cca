/*
 * Tests for the HTTP client engine (net/hclient.c) against volray's own
 * HTTP server. The server runs on its own loop in a second thread, so
 * that a synchronous call, which blocks the client's loop, still gets an
 * answer; the client's loop runs in the main thread, stepped by wait_for
 * until a request's callbacks have run. The server records what it saw in
 * atomics. A second server speaks TLS with certificates from auth/pki.c,
 * for the client's CA, client certificate and insecure settings.
 */
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "auth/pki.h"
#include "check.h"
#include "lib/log.h"
#include "lib/util.h"
#include "net/hclient.h"
#include "net/http.h"
#include "net/tls.h"

/* Server side, on sloop in the server thread. */

static uv_loop_t sloop;
static uv_async_t stop_async;
static http_server *srv, *tsrv;
static tls_ctx *tls;
static atomic_int port, tport;
static atomic_int stream_ended;
static atomic_int watch_closed;

struct ticker {
	uv_timer_t	 t;
	http_req	*req;
	int		 n;
};

static void
free_handle(uv_handle_t *h)
{
	free(h->data);
}

/* /stream: five lines 30 ms apart, then the end. */
static void
on_stream_tick(uv_timer_t *t)
{
	struct ticker *k = t->data;
	char line[32];
	int n;

	n = snprintf(line, sizeof line, "line %d\n", k->n++);
	http_stream_write_copy(k->req, line, (size_t)n);
	if (k->n < 5)
		return;
	atomic_store(&stream_ended, 1);
	http_stream_end(k->req);
	uv_timer_stop(t);
	uv_close((uv_handle_t *)t, free_handle);
}

/* /watch: a tick every 20 ms until the client goes away. */
static void
on_watch_tick(uv_timer_t *t)
{
	struct ticker *k = t->data;

	if (http_stream_write_copy(k->req, "tick\n", 5) == 0)
		return;
	http_stream_end(k->req);
	uv_timer_stop(t);
	uv_close((uv_handle_t *)t, free_handle);
}

static void
on_watch_close(http_req *req, void *arg)
{
	(void)req;
	(void)arg;
	atomic_fetch_add(&watch_closed, 1);
}

/* /slow: the answer comes after a second. */
static void
on_slow(uv_timer_t *t)
{
	struct ticker *k = t->data;

	http_respond(k->req, 200, "text/plain", "late", 4);
	uv_close((uv_handle_t *)t, free_handle);
}

static struct ticker *
ticker_new(http_req *req, uv_timer_cb cb, uint64_t first, uint64_t every)
{
	struct ticker *k = calloc(1, sizeof *k);

	k->req = req;
	uv_timer_init(&sloop, &k->t);
	k->t.data = k;
	uv_timer_start(&k->t, cb, first, every);
	return k;
}

static const char *
hdr(http_req *req, const char *name)
{
	const char *v = http_req_header(req, name);

	return v != NULL ? v : "-";
}

static atomic_int flaky_left;

static void
handler(http_req *req, void *arg)
{
	const char *cn;
	const char *const *orgs;
	char *s, *out;
	int code, norgs;

	(void)arg;
	if (strcmp(req->path, "/echo") == 0) {
		out = util_printf("%s %s?%s\naccept=%s\nauth=%s\nua=%s\n"
		    "ctype=%s\nexpect=%s\nx-test=%s\nbody=%s", req->method,
		    req->path, req->query, hdr(req, "Accept"),
		    hdr(req, "Authorization"), hdr(req, "User-Agent"),
		    hdr(req, "Content-Type"), hdr(req, "Expect"),
		    hdr(req, "X-Test"), req->body);
		http_respond(req, 200, "text/plain", out, strlen(out));
		free(out);
	} else if (strcmp(req->path, "/status") == 0) {
		s = http_query_get(req->query, "code");
		code = s != NULL ? atoi(s) : 500;
		free(s);
		if (code == 429 || code == 409)
			http_req_add_header(req, "Retry-After", "3");
		out = util_printf("status %d", code);
		http_respond(req, code, "text/plain", out, strlen(out));
		free(out);
	} else if (strcmp(req->path, "/flaky") == 0) {
		/* 429 while flaky_left lasts, then 200. */
		if (atomic_load(&flaky_left) > 0) {
			atomic_fetch_sub(&flaky_left, 1);
			http_req_add_header(req, "Retry-After", "1");
			http_respond(req, 429, "text/plain", "later", 5);
		} else
			http_respond(req, 200, "text/plain", "ok", 2);
	} else if (strcmp(req->path, "/stream") == 0) {
		http_stream_begin(req, 200, "application/json");
		ticker_new(req, on_stream_tick, 30, 30);
	} else if (strcmp(req->path, "/watch") == 0) {
		http_stream_begin(req, 200, "application/json");
		http_req_on_close(req, on_watch_close, NULL);
		ticker_new(req, on_watch_tick, 0, 20);
	} else if (strcmp(req->path, "/slow") == 0)
		ticker_new(req, on_slow, 1000, 0);
	else if (strcmp(req->path, "/big") == 0) {
		s = calloc(1, 9u << 20);
		http_respond(req, 200, "application/octet-stream", s, 9u << 20);
		free(s);
	} else if (strcmp(req->path, "/conns") == 0) {
		out = util_printf("%d", http_server_connections(srv));
		http_respond(req, 200, "text/plain", out, strlen(out));
		free(out);
	} else if (strcmp(req->path, "/whoami") == 0) {
		if (http_req_client_cert(req, &cn, &orgs, &norgs) != 0)
			cn = "anonymous";
		http_respond(req, 200, "text/plain", cn, strlen(cn));
	} else
		http_respond(req, 404, "text/plain", "not found", 9);
}

static void
on_stop(uv_async_t *a)
{
	http_server_close(srv);
	if (tsrv != NULL)
		http_server_close(tsrv);
	uv_close((uv_handle_t *)a, NULL);
}

static void *
server_run(void *arg)
{
	(void)arg;
	uv_run(&sloop, UV_RUN_DEFAULT);
	return NULL;
}

/* The client's side, on loop in the main thread. */

static uv_loop_t loop;
static uv_timer_t tick;
static hclient *hc;

struct res {
	int		 done;
	long		 status;
	char		*body;
	size_t		 len;
	char		*err;
	char		*retry;		/* Retry-After, read in on_done */
	char		 data[4096];	/* what on_data got */
	size_t		 dlen;
	int		 pieces;
	int		 early;		/* data came before the stream ended */
	int		 cancel_after;	/* on_data cancels after this many */
	hclient_req	*req;
	struct res	*spawn;		/* on_data starts this request */
	uint64_t	 done_ms;
};

static void
res_reset(struct res *r)
{
	free(r->body);
	free(r->err);
	free(r->retry);
	memset(r, 0, sizeof *r);
}

static void
on_tick(uv_timer_t *t)
{
	(void)t;
}

/* Run the loop until *flag is set, for at most ms; whether it was. */
static int
wait_for(const int *flag, uint64_t ms)
{
	uint64_t end;

	uv_update_time(&loop);
	end = uv_now(&loop) + ms;
	while (!*flag && uv_now(&loop) < end)
		uv_run(&loop, UV_RUN_ONCE);
	return *flag;
}

/* Run the loop for ms. */
static void
spin(uint64_t ms)
{
	int never = 0;

	wait_for(&never, ms);
}

static void
on_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct res *r = arg;
	const char *ra;

	r->done = 1;
	r->status = status;
	r->body = malloc(len + 1);
	memcpy(r->body, body, len + 1);
	r->len = len;
	r->err = err != NULL ? strdup(err) : NULL;
	if ((ra = hclient_req_header(r->req, "Retry-After")) != NULL)
		r->retry = strdup(ra);
	hclient_cancel(r->req);		/* a no-op from on_done */
	r->done_ms = uv_now(&loop);
}

static void
on_data(void *arg, const char *p, size_t len)
{
	struct res *r = arg;
	char *err = NULL;
	struct hclient_call c = { 0 };

	if (r->pieces++ == 0)
		r->early = !atomic_load(&stream_ended);
	if (r->dlen + len < sizeof r->data) {
		memcpy(r->data + r->dlen, p, len);
		r->dlen += len;
	}
	if (r->spawn != NULL) {
		/* Inside libcurl: the new request waits for the loop. */
		c.url = "/echo?spawned=1";
		r->spawn->req = hclient_start(hc, &c, NULL, on_done, r->spawn,
		    &err);
		CHECK(r->spawn->req != NULL);
		r->spawn = NULL;
	}
	if (r->cancel_after > 0 && r->pieces >= r->cancel_after) {
		hclient_cancel(r->req);
		r->done = 1;		/* on_done must not run */
	}
}

/* Start a request with call c; the test's res gets the results. */
static void
start(struct res *r, const struct hclient_call *c, int stream)
{
	char *err = NULL;

	r->req = hclient_start(hc, c, stream ? on_data : NULL, on_done, r,
	    &err);
	CHECK(r->req != NULL);
	if (r->req == NULL) {
		fprintf(stderr, "start %s: %s\n", c->url, err);
		free(err);
	}
}

static void
get(struct res *r, const char *url)
{
	struct hclient_call c = { 0 };

	c.url = url;
	c.timeout_ms = 5000;
	start(r, &c, 0);
	CHECK(wait_for(&r->done, 5000));
}

static void
test_async(void)
{
	struct hclient_call c = { 0 };
	const char *hs[] = { "X-Test: yes", "Bad: a\r\nInjected: 1", NULL };
	struct res r = { 0 };

	get(&r, "/echo?x=1");
	CHECK(r.status == 200 && r.err == NULL);
	CHECK(strstr(r.body, "GET /echo?x=1\n") == r.body);
	CHECK(strstr(r.body, "auth=Bearer secret\n") != NULL);
	CHECK(strstr(r.body, "ua=volray-test/1\n") != NULL);
	CHECK(strlen(r.body) == r.len);

	res_reset(&r);
	c.method = "POST";
	c.url = "/echo";
	c.body = "{\"a\":1}";
	c.body_len = 7;
	c.content_type = "application/json";
	c.accept = "application/json";
	c.headers = hs;
	c.timeout_ms = 5000;
	start(&r, &c, 0);
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 200 && r.err == NULL);
	CHECK(strstr(r.body, "POST /echo?\n") == r.body);
	CHECK(strstr(r.body, "accept=application/json\n") != NULL);
	CHECK(strstr(r.body, "ctype=application/json\n") != NULL);
	CHECK(strstr(r.body, "expect=-\n") != NULL);
	CHECK(strstr(r.body, "x-test=yes\n") != NULL);
	CHECK(strstr(r.body, "Injected") == NULL);
	CHECK(strstr(r.body, "body={\"a\":1}") != NULL);

	/* The caller's own Authorization replaces the client's token. */
	res_reset(&r);
	hs[0] = "Authorization: Bearer mine";
	hs[1] = NULL;
	c.method = NULL;
	c.body = NULL;
	c.url = "/echo";
	start(&r, &c, 0);
	CHECK(wait_for(&r.done, 5000));
	CHECK(strstr(r.body, "auth=Bearer mine\n") != NULL);

	/* A body larger than curl's 100-continue threshold goes at once. */
	res_reset(&r);
	c.method = "PUT";
	c.headers = NULL;
	c.body_len = 200000;
	c.body = calloc(1, c.body_len);
	memset((char *)c.body, 'b', c.body_len);
	start(&r, &c, 0);
	free((char *)c.body);		/* the client copied it */
	c.body = NULL;
	c.method = NULL;
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 200 && strstr(r.body, "PUT /echo?\n") == r.body);

	res_reset(&r);
	get(&r, "/status?code=404");
	CHECK(r.status == 404 && r.err == NULL);
	CHECK_STR(r.body, "status 404");
	CHECK(r.retry == NULL);
	res_reset(&r);
	get(&r, "/status?code=409");
	CHECK(r.status == 409);
	CHECK_STR(r.retry, "3");
	/* 429 is made again after Retry-After (1 s here), twice; a 5xx
	   without Retry-After is an answer. */
	res_reset(&r);
	atomic_store(&flaky_left, 2);
	{
		uint64_t t0 = uv_now(&loop);

		get(&r, "/flaky");
		CHECK(r.status == 200);
		CHECK_STR(r.body, "ok");
		CHECK(r.done_ms - t0 >= 1900);
		CHECK(atomic_load(&flaky_left) == 0);
	}
	res_reset(&r);
	get(&r, "/status?code=503");
	CHECK(r.status == 503);

	/* Three requests in a row keep one connection. */
	res_reset(&r);
	get(&r, "/conns");
	CHECK(r.status == 200);
	{
		char *first = strdup(r.body);
		int i;

		for (i = 0; i < 3; i++) {
			res_reset(&r);
			get(&r, "/conns");
			CHECK_STR(r.body, first);
		}
		free(first);
	}
	res_reset(&r);

	/* Past the cap: an error, not a truncated body. */
	get(&r, "/big");
	CHECK(r.status == 0);
	CHECK_STR(r.err, "response body over 8 MiB");
	res_reset(&r);

	c.method = NULL;
	c.url = "/slow";
	c.timeout_ms = 100;
	start(&r, &c, 0);
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 0);
	CHECK_STR(r.err, "Timeout was reached");
	res_reset(&r);

	c.url = "http://127.0.0.1:1/";
	c.timeout_ms = 5000;
	start(&r, &c, 0);
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 0);
	CHECK_STR(r.err, "Couldn't connect to server");
	res_reset(&r);
	CHECK(hclient_inflight(hc) == 0);
}

static void
test_stream(void)
{
	struct hclient_call c = { 0 };
	struct res r = { 0 }, spawned = { 0 }, w = { 0 }, w2 = { 0 };
	int before = atomic_load(&watch_closed);

	/* Pieces as they come, and a request started from inside on_data. */
	c.url = "/stream";
	r.spawn = &spawned;
	start(&r, &c, 1);
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 200 && r.err == NULL && r.len == 0);
	CHECK(r.early);
	CHECK(r.pieces >= 2);
	r.data[r.dlen] = '\0';
	CHECK_STR(r.data, "line 0\nline 1\nline 2\nline 3\nline 4\n");
	CHECK(wait_for(&spawned.done, 5000));
	CHECK(spawned.status == 200);
	CHECK(strstr(spawned.body, "spawned=1") != NULL);
	res_reset(&r);
	res_reset(&spawned);

	/* A stream of another status is not streamed: its body is whole. */
	c.url = "/status?code=410";
	start(&r, &c, 1);
	CHECK(wait_for(&r.done, 5000));
	CHECK(r.status == 410 && r.pieces == 0);
	CHECK_STR(r.body, "status 410");
	res_reset(&r);

	/* Cancelled from its own on_data: the server sees the close. */
	c.url = "/watch";
	w.cancel_after = 3;
	start(&w, &c, 1);
	CHECK(wait_for(&w.done, 5000));
	CHECK(w.pieces >= 3 && w.status == 0 && w.body == NULL);
	/* And from outside the callbacks. */
	start(&w2, &c, 1);
	while (w2.pieces < 2 && !w2.done)
		uv_run(&loop, UV_RUN_ONCE);
	CHECK(!w2.done);
	hclient_cancel(w2.req);
	spin(300);
	CHECK(w.body == NULL && w2.body == NULL);	/* no on_done */
	CHECK(atomic_load(&watch_closed) == before + 2);
	CHECK(hclient_inflight(hc) == 0);
}

static void
test_sync(void)
{
	struct hclient_call c = { 0 };
	char *body = NULL, *err = NULL;
	size_t len;
	long status;

	c.method = "POST";
	c.url = "/echo";
	c.body = "hello";
	c.body_len = 5;
	c.content_type = "text/plain";
	CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == 0);
	CHECK(status == 200 && err == NULL && len == strlen(body));
	CHECK(strstr(body, "POST /echo?\n") == body);
	CHECK(strstr(body, "auth=Bearer secret\n") != NULL);
	CHECK(strstr(body, "body=hello") != NULL);
	free(body);
	/* The handle is reused with none of the last call's options. */
	c.method = NULL;
	c.body = NULL;
	c.content_type = NULL;
	c.url = "/status?code=409";
	CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == 0);
	CHECK(status == 409);
	CHECK_STR(body, "status 409");
	free(body);
	c.url = "/slow";
	c.timeout_ms = 100;
	CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == -1);
	CHECK(status == 0 && body == NULL);
	CHECK_STR(err, "Timeout was reached");
	free(err);
	c.url = "http://127.0.0.1:1/";
	CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == -1);
	CHECK_STR(err, "Couldn't connect to server");
	free(err);
}

static void
test_rate(void)
{
	struct hclient_call c = { 0 };
	struct res r[5];
	char *body, *err;
	uint64_t t0, last = 0;
	size_t len;
	long status;
	int i;

	memset(r, 0, sizeof r);
	/* 20 a second, one at a time: 50 ms apart. */
	hclient_set_rate(hc, 20, 1);
	uv_update_time(&loop);
	t0 = uv_now(&loop);
	c.url = "/echo";
	for (i = 0; i < 5; i++)
		start(&r[i], &c, 0);
	CHECK(hclient_inflight(hc) == 5);
	for (i = 0; i < 5; i++) {
		CHECK(wait_for(&r[i].done, 5000));
		CHECK(r[i].status == 200);
		if (r[i].done_ms > last)
			last = r[i].done_ms;
	}
	CHECK(last - t0 >= 150);
	/* A waiting request can be cancelled. */
	for (i = 0; i < 5; i++)
		res_reset(&r[i]);
	start(&r[0], &c, 0);
	start(&r[1], &c, 0);
	hclient_cancel(r[1].req);
	CHECK(wait_for(&r[0].done, 5000));
	spin(100);
	CHECK(!r[1].done);
	res_reset(&r[0]);
	/* Flows take turns: a lone request queued behind four of another
	   flow starts second in line, not fifth. */
	{
		struct hclient_call lone = { 0 };
		struct res rl;

		memset(&rl, 0, sizeof rl);
		spin(100);	/* a token again */
		c.flow = "burst";
		for (i = 0; i < 5; i++)
			start(&r[i], &c, 0);
		lone.url = "/echo";
		lone.flow = "lone";
		start(&rl, &lone, 0);
		CHECK(wait_for(&rl.done, 5000));
		for (i = 0; i < 5; i++)
			CHECK(wait_for(&r[i].done, 5000));
		/* r[0] at once, r[1] 50 ms on, the lone one 100 ms on. */
		CHECK(rl.status == 200);
		CHECK(rl.done_ms < r[2].done_ms);
		CHECK(rl.done_ms > r[0].done_ms);
		for (i = 0; i < 5; i++)
			res_reset(&r[i]);
		res_reset(&rl);
		c.flow = NULL;
	}
	/* A sync call waits its turn too. */
	t0 = uv_hrtime();
	for (i = 0; i < 3; i++) {
		CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == 0);
		free(body);
	}
	CHECK(uv_hrtime() - t0 >= 90000000u);
	hclient_set_rate(hc, 0, 0);
	spin(100);
	CHECK(hclient_inflight(hc) == 0);
}

/* TLS: a CA and client credentials as PEM bytes or files, or none. */
/*
 * At most two connections: six slow requests share them, two at a time
 * (the server sees two connections, not six), and all are answered, the
 * time spent waiting for a turn not counted in their timeouts.
 */
static void
test_max_connections(void)
{
	struct hclient_call c = { 0 };
	struct res r[6];
	char *body = NULL, *err = NULL;
	size_t len = 0;
	long status = 0;
	uint64_t t0;
	int i, all;

	memset(r, 0, sizeof r);
	hclient_set_max_connections(hc, 2);
	spin(500);			/* the idle ones closed (300 ms) */
	/* A quick answer first: libcurl then knows the server does not
	   multiplex (HTTP/1.1) and opens a second connection at once. */
	get(&r[0], "/echo");
	CHECK(r[0].status == 200);
	res_reset(&r[0]);
	t0 = uv_now(&loop);
	c.url = "/slow";
	/* Each has 1.5 s from when it runs, not from when it was asked:
	   the last two wait 2 s for their turn and still get their answer. */
	c.timeout_ms = 1500;
	for (i = 0; i < 6; i++)
		start(&r[i], &c, 0);
	spin(300);
	/* Asked on the synchronous handle: one connection more. */
	c.url = "/conns";
	c.timeout_ms = 5000;
	CHECK(hclient_call_sync(hc, &c, &status, &body, &len, &err) == 0);
	CHECK(status == 200 && body != NULL && strcmp(body, "3") == 0);
	if (body == NULL || strcmp(body, "3") != 0)
		fprintf(stderr, "connections: %s\n", body ? body : err);
	free(body);
	free(err);
	for (i = 0, all = 1; i < 6; i++)
		all &= wait_for(&r[i].done, 8000) && r[i].status == 200;
	CHECK(all);
	/* Three rounds of two: two answers after each second. */
	for (i = 0, all = 0; i < 6; i++)
		all += r[i].done_ms - t0 >= 2900;
	CHECK(all == 2);
	for (i = 0; i < 6; i++)
		res_reset(&r[i]);
	hclient_set_max_connections(hc, 0);
}

/*
 * Requests queued behind two connections keep what they were asked with:
 * 48 PUTs (more than the client keeps handles for) whose URL, body and
 * headers lived in buffers overwritten as soon as each was started, each
 * answered with its own, in turn on the handles of the finished ones.
 */
#define QUEUED	48

static void
test_queued(void)
{
	struct hclient_call c = { 0 };
	static struct res r[QUEUED];
	char url[64], body[64], xt[64], want[256];
	const char *hdrs[2] = { xt, NULL };
	int i, all, same;

	memset(r, 0, sizeof r);
	hclient_set_max_connections(hc, 2);
	c.method = "PUT";
	c.url = url;
	c.body = body;
	c.content_type = "application/json";
	c.accept = "text/plain";
	c.headers = hdrs;
	c.timeout_ms = 5000;
	for (i = 0; i < QUEUED; i++) {
		snprintf(url, sizeof url, "/echo?i=%d", i);
		snprintf(body, sizeof body, "{\"i\":%d}", i);
		snprintf(xt, sizeof xt, "X-Test: x%d", i);
		c.body_len = strlen(body);
		start(&r[i], &c, 0);
	}
	memset(url, 'u', sizeof url - 1);
	memset(body, 'b', sizeof body - 1);
	memset(xt, 'x', sizeof xt - 1);
	for (i = 0, all = 1, same = 1; i < QUEUED; i++) {
		all &= wait_for(&r[i].done, 8000) && r[i].status == 200;
		snprintf(want, sizeof want, "PUT /echo?i=%d\naccept=text/plain\n",
		    i);
		snprintf(url, sizeof url, "\nx-test=x%d\nbody={\"i\":%d}", i,
		    i);
		if (r[i].body == NULL || strncmp(r[i].body, want,
		    strlen(want)) != 0 || strstr(r[i].body, url) == NULL ||
		    strstr(r[i].body, "ctype=application/json\n") == NULL) {
			fprintf(stderr, "queued %d: %s\n", i, r[i].body ?
			    r[i].body : "(none)");
			same = 0;
		}
	}
	CHECK(all);
	CHECK(same);
	for (i = 0; i < QUEUED; i++)
		res_reset(&r[i]);
	hclient_set_max_connections(hc, 0);
}

static void
test_tls(const char *pki)
{
	struct hclient_conf conf = { 0 };
	struct hclient_call c = { 0 };
	const char *orgs[] = { "testers" };
	char *cert = NULL, *key = NULL, *ca = NULL, *cause = NULL;
	char *url = util_printf("https://127.0.0.1:%d", atomic_load(&tport));
	char *ca_file = util_printf("%s/ca.crt", pki);
	struct res r = { 0 };
	hclient *saved = hc;
	FILE *f;
	long n;

	CHECK(pki_issue_client(pki, "alice", orgs, 1, 1, &cert, &key,
	    &cause) == 0);
	f = fopen(ca_file, "r");
	CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ca = malloc((size_t)n);
	CHECK(fread(ca, 1, (size_t)n, f) == (size_t)n);
	fclose(f);

	conf.base_url = url;
	conf.ca_pem = ca;
	conf.ca_pem_len = (size_t)n;
	conf.cert_pem = cert;
	conf.cert_pem_len = strlen(cert);
	conf.key_pem = key;
	conf.key_pem_len = strlen(key);
	hc = hclient_new(&loop, &conf, &cause);
	get(&r, "/whoami");
	CHECK(r.status == 200 && r.err == NULL);
	CHECK_STR(r.body, "alice");
	res_reset(&r);
	{
		char *body, *err;
		size_t len;
		long status;

		c.url = "/whoami";
		CHECK(hclient_call_sync(hc, &c, &status, &body, &len,
		    &err) == 0);
		if (err != NULL)
			fprintf(stderr, "sync over TLS: %s\n", err);
		CHECK(status == 200);
		CHECK_STR(body, "alice");
		free(body);
		/* The server closes the idle connection; the handle makes
		 * a new one (a full handshake: volray's server refuses
		 * resumed sessions). */
		spin(500);
		CHECK(hclient_call_sync(hc, &c, &status, &body, &len,
		    &err) == 0);
		if (err != NULL)
			fprintf(stderr, "sync over TLS again: %s\n", err);
		CHECK_STR(body, "alice");
		free(body);
	}
	hclient_free(hc);

	/* The CA as a file, no client certificate. */
	memset(&conf, 0, sizeof conf);
	conf.base_url = url;
	conf.ca_file = ca_file;
	hc = hclient_new(&loop, &conf, &cause);
	get(&r, "/whoami");
	CHECK(r.status == 200);
	CHECK_STR(r.body, "anonymous");
	res_reset(&r);
	hclient_free(hc);

	/* Without the CA the server is refused, unless insecure. */
	conf.ca_file = NULL;
	hc = hclient_new(&loop, &conf, &cause);
	get(&r, "/whoami");
	CHECK(r.status == 0 && r.err != NULL);
	res_reset(&r);
	hclient_free(hc);
	conf.insecure = 1;
	hc = hclient_new(&loop, &conf, &cause);
	get(&r, "/whoami");
	CHECK(r.status == 200);
	res_reset(&r);
	/* Freed with a request in flight: no callback, handles close. */
	c.url = "/watch";
	start(&r, &c, 1);
	spin(50);
	hclient_free(hc);
	spin(100);
	CHECK(r.body == NULL);

	hc = saved;
	free(cert);
	free(key);
	free(ca);
	free(ca_file);
	free(url);
}

int
main(void)
{
	struct hclient_conf conf = { 0 };
	char tmpl[] = "/tmp/test-hclient.XXXXXX", *pki, *crt, *key, *ca;
	const char *sans[] = { "127.0.0.1" };
	char *cause = NULL, *base;
	pthread_t t;
	int have_tls;

	log_set_level(LOG_WARN);
	/* Idle connections close after 300 ms (test_tls reconnects). */
	http_set_timeouts(5000, 300);
	CHECK(mkdtemp(tmpl) != NULL);
	pki = util_printf("%s/pki", tmpl);
	crt = util_printf("%s/server.crt", pki);
	key = util_printf("%s/server.key", pki);
	ca = util_printf("%s/ca.crt", pki);
	have_tls = pki_ensure(pki, sans, 1, &cause) == 0 &&
	    (tls = tls_ctx_new(crt, key, ca, &cause)) != NULL;
	if (!have_tls) {
		fprintf(stderr, "no TLS (%s): skipped\n", cause);
		CHECK(0);
	}

	uv_loop_init(&sloop);
	CHECK(http_server_listen(&sloop, "127.0.0.1", 0, handler, NULL, &srv,
	    &cause) == 0);
	atomic_store(&port, http_server_port(srv));
	if (have_tls) {
		CHECK(http_server_listen(&sloop, "127.0.0.1", 0, handler, NULL,
		    &tsrv, &cause) == 0);
		http_server_use_tls(tsrv, tls);
		atomic_store(&tport, http_server_port(tsrv));
	}
	uv_async_init(&sloop, &stop_async, on_stop);
	pthread_create(&t, NULL, server_run, NULL);

	uv_loop_init(&loop);
	uv_timer_init(&loop, &tick);
	uv_timer_start(&tick, on_tick, 10, 10);
	base = util_printf("http://127.0.0.1:%d/", atomic_load(&port));
	conf.base_url = base;
	conf.token = "secret";
	conf.user_agent = "volray-test/1";
	hc = hclient_new(&loop, &conf, &cause);
	CHECK(hc != NULL);
	free(base);

	test_async();
	test_stream();
	test_sync();
	test_rate();
	test_max_connections();
	test_queued();
	if (have_tls)
		test_tls(pki);

	hclient_free(hc);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(&loop) == 0);
	uv_async_send(&stop_async);
	pthread_join(t, NULL);
	uv_run(&sloop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(&sloop) == 0);
	tls_ctx_free(tls);
	free(crt);
	free(key);
	free(ca);
	free(pki);
	{
		char *cmd = util_printf("rm -rf %s", tmpl);

		CHECK(system(cmd) == 0);
		free(cmd);
	}
	return check_result("test-hclient");
}
