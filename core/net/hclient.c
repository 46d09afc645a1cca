/*
 * The HTTP client engine: libcurl's multi interface on the libuv loop.
 *
 * libcurl tells us through its socket callback which sockets to watch and
 * for what (one uv_poll_t each, attached with curl_multi_assign) and
 * through its timer callback when to call it back (one uv_timer_t); we
 * hand it readiness with curl_multi_socket_action and then collect the
 * finished transfers. The multi handle keeps the connections alive and
 * multiplexes HTTP/2 streams (CURLPIPE_MULTIPLEX, CURLOPT_PIPEWAIT: a new
 * request waits for a connection that may multiplex rather than open
 * another).
 *
 * A request that cannot start at once (no rate token, or every connection
 * busy) waits in a fair queue (lib/fairq.h), one line per flow (the
 * caller's: remote.c names the object's namespace), and the lines take
 * turns as tokens and connections come: a burst of one namespace's writes
 * holds up another's write by one request per busy namespace, not by the
 * burst (kuberay#2646). The bucket is client-go's (qps, burst); a token is
 * taken when a request starts, and a synchronous call, which cannot wait
 * in line, takes one into debt that the queue then waits out. One
 * uv_timer_t wakes the queue for the next token, or for the first of the
 * requests refused for now (429) whose Retry-After has passed.
 *
 * libcurl's API may not be re-entered from its callbacks, and a streamed
 * body reaches the caller from inside curl_multi_socket_action: there a
 * cancel only marks the request (it is removed when libcurl returns) and a
 * new request waits for the rate timer, armed at 0. Finished transfers
 * are reported after libcurl returns, so on_done may do anything but free
 * the client.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "lib/fairq.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"

/* Connecting may take this long even when the request has no timeout. */
#define CONNECT_TIMEOUT_MS	30000L
/* Easy handles kept for the next requests (idle). */
#define IDLE_EASY		32

enum req_state {
	REQ_WAITING,		/* in its flow's line, for a token and a
				   connection */
	REQ_DELAYED,		/* in delayed, until due_ns (Retry-After) */
	REQ_RUNNING,		/* in the multi handle, in running */
	REQ_CANCELLED,		/* cancelled inside libcurl, in dead */
	REQ_FINISHING,		/* on_done is running */
};

struct hclient_req {
	hclient *h;
	enum req_state state;
	CURL *easy;		/* from when it first runs */
	struct hclient_call call;	/* a copy, until then: its strings
					   are in kept */
	char *kept;
	struct curl_slist *hdrs;
	hclient_data_fn on_data;
	hclient_done_fn on_done;
	void *arg;
	char *resp;		/* the body, unless streamed */
	size_t resp_len, resp_cap;
	int status_seen;	/* on_data: the status was looked at */
	int streaming;		/* on_data: a 2xx, delivered as it comes */
	int too_big;
	int retries;		/* answered 429 and made again */
	uint64_t due_ns;	/* when delayed: wait until this uv_hrtime */
	uint64_t queued_at;	/* when it went in line (uv_hrtime) */
	struct fairq_link wait;	/* in its flow's line, when waiting */
	struct fairq_line *flow;
	struct hclient_req *prev, *next;	/* delayed, running or dead */
};

/* A list of requests. */
struct rlist {
	struct hclient_req *head, *tail;
};

/* One watched socket. */
struct sock {
	uv_poll_t poll;
	hclient *h;
	curl_socket_t fd;
	struct sock *prev, *next;
};

struct hclient {
	uv_loop_t *loop;
	CURLM *multi;
	CURLSH *share;		/* the DNS cache, async and sync */
	CURL *sync;		/* the synchronous calls' handle */
	uv_timer_t timer;	/* libcurl's */
	uv_timer_t rate_timer;	/* the waiting and delayed requests' */
	int open_handles;	/* while freeing: timers not yet closed */
	int in_curl;		/* inside curl_multi_socket_action */

	char *base;
	char *ca_file, *cert_file, *key_file;
	struct curl_blob ca, cert, key;
	int insecure;
	char *auth;		/* "Authorization: Bearer ..." */
	char *user_agent;
	int (*open_socket)(int, int, int);

	double qps;		/* <= 0: no limit */
	double burst, tokens;
	uint64_t last_ns;

	uint64_t launched;	/* requests handed to libcurl */
	uint64_t queued_ns;	/* their time in line (tokens, connections) */

	fairq *waiting;		/* a line per flow */
	struct rlist delayed, running;
	struct hclient_req *dead;	/* singly linked through next */
	int inflight;
	int nrunning;		/* in running */
	int max_running;	/* 0: no limit */
	struct sock *socks;
	/* Handles of finished requests, reset, for the next ones: making
	   one (curl_easy_init, tens of KB zeroed) and freeing it cost as
	   much of the loop as the rest of a small request. */
	CURL *idle[IDLE_EASY];
	int nidle;
};

static void
rlist_add(struct rlist *l, struct hclient_req *r)
{
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail != NULL)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
}

static void
rlist_del(struct rlist *l, struct hclient_req *r)
{
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->prev = r->next = NULL;
}

/* An easy handle: an idle one, or a new one (NULL if libcurl cannot). */
static CURL *
easy_get(hclient *h)
{
	return h->nidle > 0 ? h->idle[--h->nidle] : curl_easy_init();
}

/* Done with e: kept, its options back to libcurl's defaults (its
   connection is the multi handle's, not its own), or freed. */
static void
easy_put(hclient *h, CURL *e)
{
	if (h->nidle < IDLE_EASY) {
		curl_easy_reset(e);
		h->idle[h->nidle++] = e;
	} else
		curl_easy_cleanup(e);
}

/* Bytes s takes with its NUL; none for NULL. */
static size_t
kept_len(const char *s)
{
	return s != NULL ? strlen(s) + 1 : 0;
}

/* Copy len bytes of s to *p, NUL-terminated; the copy (NULL for NULL),
   *p past it. */
static const char *
keep(char **p, const char *s, size_t len)
{
	char *at = *p;

	if (s == NULL)
		return NULL;
	memcpy(at, s, len);
	at[len] = '\0';
	*p += len + 1;
	return at;
}

/*
 * What the request will need of c when it runs, copied into r->call, in
 * one allocation (r->kept: the headers' array, then the strings and the
 * body): thousands of binds may wait in line, each with its copy.
 */
static void
call_keep(struct hclient_req *r, const struct hclient_call *c)
{
	struct hclient_call *k = &r->call;
	size_t n = 0, i, total, arr;
	const char **hv = NULL;
	char *p;

	while (c->headers != NULL && c->headers[n] != NULL)
		n++;
	arr = n > 0 ? (n + 1) * sizeof *hv : 0;
	total = arr + kept_len(c->method) + kept_len(c->url) +
	    (c->body != NULL ? c->body_len + 1 : 0) +
	    kept_len(c->content_type) + kept_len(c->accept);
	for (i = 0; i < n; i++)
		total += kept_len(c->headers[i]);
	r->kept = xmalloc(total);
	p = r->kept + arr;
	k->method = keep(&p, c->method, kept_len(c->method) - 1);
	k->url = keep(&p, c->url, strlen(c->url));
	if (c->body != NULL) {
		k->body = keep(&p, c->body, c->body_len);
		k->body_len = c->body_len;
	}
	k->content_type = keep(&p, c->content_type,
	    kept_len(c->content_type) - 1);
	k->accept = keep(&p, c->accept, kept_len(c->accept) - 1);
	if (n > 0) {
		hv = (const char **)(void *)r->kept;
		for (i = 0; i < n; i++)
			hv[i] = keep(&p, c->headers[i], strlen(c->headers[i]));
		hv[n] = NULL;
		k->headers = hv;
	}
	k->timeout_ms = c->timeout_ms;
}

static void
call_drop(struct hclient_req *r)
{
	free(r->kept);
	r->kept = NULL;
	memset(&r->call, 0, sizeof r->call);
}

static void
req_free(struct hclient_req *r)
{
	if (r->easy != NULL) {
		curl_multi_remove_handle(r->h->multi, r->easy);
		easy_put(r->h, r->easy);
	}
	call_drop(r);
	curl_slist_free_all(r->hdrs);
	free(r->resp);
	free(r);
}

static void arm_rate_timer(hclient *);

/* A running request is over: the first waiting one may have its turn. */
static void
slot_freed(hclient *h)
{
	h->nrunning--;
	if (fairq_len(h->waiting) > 0)
		arm_rate_timer(h);
}

/* Free the requests cancelled while libcurl was running. */
static void
reap(hclient *h)
{
	struct hclient_req *r;

	while ((r = h->dead) != NULL) {
		h->dead = r->next;
		req_free(r);
	}
}

/*
 * Whether a finished request is to be made again, as client-go makes a
 * request the server refused for now: 429 Too Many Requests, or a 5xx
 * with Retry-After, at most HCLIENT_RETRIES times, after Retry-After
 * seconds (1 when none; at most 10). Not a streamed one: a watch's
 * informer has its own backoff. Delayed until then, in order of when it
 * is due; then it waits in its line again for a token.
 */
static int
retry_later(hclient *h, struct hclient_req *r, long status)
{
	struct curl_header *hd;
	struct hclient_req *at;
	const char *ra = NULL;
	long secs = 1;

	if (r->on_data != NULL || r->retries >= HCLIENT_RETRIES ||
	    (status != 429 && status < 500))
		return 0;
	if (curl_easy_header(r->easy, "Retry-After", 0, CURLH_HEADER, -1,
	    &hd) == CURLHE_OK)
		ra = hd->value;
	if (status != 429 && ra == NULL)
		return 0;
	if (ra != NULL && atol(ra) > 0)
		secs = atol(ra) > 10 ? 10 : atol(ra);
	curl_multi_remove_handle(h->multi, r->easy);
	rlist_del(&h->running, r);
	slot_freed(h);
	r->retries++;
	r->resp_len = 0;
	r->state = REQ_DELAYED;
	r->due_ns = uv_hrtime() + (uint64_t)secs * 1000000000u;
	for (at = h->delayed.tail; at != NULL && at->due_ns > r->due_ns;
	    at = at->prev)
		;
	if (at == NULL) {		/* first */
		r->prev = NULL;
		r->next = h->delayed.head;
		if (h->delayed.head != NULL)
			h->delayed.head->prev = r;
		else
			h->delayed.tail = r;
		h->delayed.head = r;
	} else {
		r->prev = at;
		r->next = at->next;
		if (at->next != NULL)
			at->next->prev = r;
		else
			h->delayed.tail = r;
		at->next = r;
	}
	arm_rate_timer(h);
	return 1;
}

/* Report every finished transfer, then free it. */
static void
check_done(hclient *h)
{
	struct hclient_req *r;
	const char *err;
	long status;
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
		r = NULL;
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r == NULL || r->state != REQ_RUNNING)
			continue;	/* cancelled: reap frees it */
		status = 0;
		err = NULL;
		if (r->too_big)
			err = "response body over 8 MiB";
		else if (m->data.result != CURLE_OK)
			err = curl_easy_strerror(m->data.result);
		else
			curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE,
			    &status);
		/* m is invalid from here on. */
		if (err == NULL && retry_later(h, r, status))
			continue;
		curl_multi_remove_handle(h->multi, r->easy);
		rlist_del(&h->running, r);
		h->inflight--;
		slot_freed(h);
		r->state = REQ_FINISHING;
		if (r->streaming || r->resp == NULL)
			r->on_done(r->arg, status, "", 0, err);
		else
			r->on_done(r->arg, status, r->resp, r->resp_len, err);
		req_free(r);
	}
}

/* Give libcurl an event, then report and clean up after it. */
static void
socket_action(hclient *h, curl_socket_t fd, int flags)
{
	int running;

	h->in_curl = 1;
	curl_multi_socket_action(h->multi, fd, flags, &running);
	h->in_curl = 0;
	reap(h);
	check_done(h);
}

static void
on_poll(uv_poll_t *p, int status, int events)
{
	struct sock *s = p->data;
	int flags = 0;

	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	socket_action(s->h, s->fd, flags);
}

static void
on_timer(uv_timer_t *t)
{
	socket_action(t->data, CURL_SOCKET_TIMEOUT, 0);
}

static void
free_sock(uv_handle_t *hd)
{
	free(hd->data);
}

static void
sock_close(hclient *h, struct sock *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		h->socks = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	uv_poll_stop(&s->poll);
	uv_close((uv_handle_t *)&s->poll, free_sock);
}

/* libcurl says which socket to watch, for what, or to stop. */
static int
socket_cb(CURL *e, curl_socket_t fd, int what, void *arg, void *sockp)
{
	hclient *h = arg;
	struct sock *s = sockp;
	int ev = 0;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			sock_close(h, s);
			curl_multi_assign(h->multi, fd, NULL);
		}
		return 0;
	}
	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->h = h;
		s->fd = fd;
		if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
			free(s);
			return -1;
		}
		s->poll.data = s;
		s->next = h->socks;
		if (h->socks != NULL)
			h->socks->prev = s;
		h->socks = s;
		curl_multi_assign(h->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		ev |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		ev |= UV_WRITABLE;
	uv_poll_start(&s->poll, ev, on_poll);
	return 0;
}

static int
timer_cb(CURLM *m, long ms, void *arg)
{
	hclient *h = arg;

	(void)m;
	if (ms < 0)
		uv_timer_stop(&h->timer);
	else
		uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
	return 0;
}

static void
blob_set(struct curl_blob *b, const char *pem, size_t len)
{
	if (pem == NULL || len == 0)
		return;
	b->data = xmalloc(len);
	memcpy(b->data, pem, len);
	b->len = len;
	b->flags = CURL_BLOB_NOCOPY;	/* the client outlives its requests */
}

hclient *
hclient_new(uv_loop_t *loop, const struct hclient_conf *conf, char **cause)
{
	hclient *h = xcalloc(1, sizeof *h);

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((h->multi = curl_multi_init()) == NULL ||
	    (h->share = curl_share_init()) == NULL) {
		*cause = xstrdup("libcurl: cannot start a multi handle");
		curl_multi_cleanup(h->multi);
		free(h);
		return NULL;
	}
	h->loop = loop;
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	uv_timer_init(loop, &h->timer);
	uv_timer_init(loop, &h->rate_timer);
	h->timer.data = h->rate_timer.data = h;
	h->waiting = fairq_new();
	if (conf == NULL)
		return h;
	if (conf->base_url != NULL) {
		h->base = xstrdup(conf->base_url);
		while (*h->base != '\0' && h->base[strlen(h->base) - 1] == '/')
			h->base[strlen(h->base) - 1] = '\0';
	}
	h->ca_file = conf->ca_file ? xstrdup(conf->ca_file) : NULL;
	h->cert_file = conf->cert_file ? xstrdup(conf->cert_file) : NULL;
	h->key_file = conf->key_file ? xstrdup(conf->key_file) : NULL;
	blob_set(&h->ca, conf->ca_pem, conf->ca_pem_len);
	blob_set(&h->cert, conf->cert_pem, conf->cert_pem_len);
	blob_set(&h->key, conf->key_pem, conf->key_pem_len);
	h->insecure = conf->insecure;
	if (conf->token != NULL && *conf->token != '\0')
		h->auth = util_printf("Authorization: Bearer %s", conf->token);
	h->user_agent = conf->user_agent ? xstrdup(conf->user_agent) : NULL;
	h->open_socket = conf->open_socket;
	return h;
}

hclient *
hclient_new_like(const hclient *h)
{
	struct hclient_conf conf = { 0 };
	char *cause = NULL;
	hclient *n;

	conf.base_url = h->base;
	conf.ca_file = h->ca_file;
	conf.ca_pem = (const char *)h->ca.data;
	conf.ca_pem_len = h->ca.len;
	conf.cert_file = h->cert_file;
	conf.cert_pem = (const char *)h->cert.data;
	conf.cert_pem_len = h->cert.len;
	conf.key_file = h->key_file;
	conf.key_pem = (const char *)h->key.data;
	conf.key_pem_len = h->key.len;
	conf.insecure = h->insecure;
	conf.user_agent = h->user_agent;
	conf.open_socket = h->open_socket;
	if ((n = hclient_new(h->loop, &conf, &cause)) == NULL) {
		/* Only a multi handle libcurl could not make. */
		free(cause);
		return NULL;
	}
	/* The token as h sends it. */
	n->auth = h->auth != NULL ? xstrdup(h->auth) : NULL;
	return n;
}

static void
on_handle_closed(uv_handle_t *hd)
{
	hclient *h = hd->data;

	if (--h->open_handles == 0)
		free(h);
}

void
hclient_free(hclient *h)
{
	struct hclient_req *r;
	struct fairq_link *k;

	if (h == NULL)
		return;
	while ((k = fairq_pop(h->waiting)) != NULL)
		req_free(FAIRQ_ITEM(k, struct hclient_req, wait));
	fairq_free(h->waiting, NULL);
	while ((r = h->delayed.head) != NULL) {
		rlist_del(&h->delayed, r);
		req_free(r);
	}
	while ((r = h->running.head) != NULL) {
		rlist_del(&h->running, r);
		req_free(r);
	}
	reap(h);
	while (h->nidle > 0)
		curl_easy_cleanup(h->idle[--h->nidle]);
	curl_multi_cleanup(h->multi);
	while (h->socks != NULL)
		sock_close(h, h->socks);
	curl_easy_cleanup(h->sync);
	curl_share_cleanup(h->share);
	free(h->base);
	free(h->ca_file);
	free(h->cert_file);
	free(h->key_file);
	free(h->ca.data);
	free(h->cert.data);
	free(h->key.data);
	free(h->auth);
	free(h->user_agent);
	h->open_handles = 2;
	uv_timer_stop(&h->timer);
	uv_timer_stop(&h->rate_timer);
	uv_close((uv_handle_t *)&h->timer, on_handle_closed);
	uv_close((uv_handle_t *)&h->rate_timer, on_handle_closed);
}

void
hclient_set_max_connections(hclient *h, int n)
{
	h->max_running = n;
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)n);
	curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, (long)n);
}

void
hclient_set_rate(hclient *h, double qps, int burst)
{
	h->qps = qps;
	h->burst = burst < 1 ? 1 : burst;
	h->tokens = h->burst;
	h->last_ns = uv_hrtime();
}

/* Refill the bucket for the time gone by. */
static void
refill(hclient *h)
{
	uint64_t now = uv_hrtime();

	h->tokens += (double)(now - h->last_ns) * h->qps / 1e9;
	if (h->tokens > h->burst)
		h->tokens = h->burst;
	h->last_ns = now;
}

/* How long until a whole token is there (ns): 0 when one is now. */
static uint64_t
token_wait(hclient *h)
{
	if (h->qps <= 0)
		return 0;
	refill(h);
	if (h->tokens >= 1)
		return 0;
	return (uint64_t)((1 - h->tokens) / h->qps * 1e9) + 1;
}

/* Take a token, into debt if need be: how long until it is ours (ns). */
static uint64_t
reserve(hclient *h)
{
	if (h->qps <= 0)
		return 0;
	refill(h);
	h->tokens -= 1;
	if (h->tokens >= 0)
		return 0;
	return (uint64_t)(-h->tokens / h->qps * 1e9);
}

int
hclient_inflight(const hclient *h)
{
	return h->inflight;
}

void
hclient_stats(const hclient *h, struct hclient_stats *st)
{
	st->requests = h->launched;
	st->queued_s = (double)h->queued_ns / 1e9;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct hclient_req *r = arg;
	size_t len = size * n;
	long status = 0;

	if (r->state == REQ_CANCELLED)
		return 0;
	if (r->on_data != NULL && !r->status_seen) {
		r->status_seen = 1;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
		r->streaming = status >= 200 && status < 300;
	}
	if (r->streaming) {
		r->on_data(r->arg, p, len);
		return r->state == REQ_CANCELLED ? 0 : len;
	}
	if (r->resp_len + len > HCLIENT_MAX_BODY) {
		r->too_big = 1;
		return 0;	/* libcurl fails the transfer */
	}
	if (r->resp_len + len + 1 > r->resp_cap) {
		r->resp_cap = (r->resp_len + len + 1) * 2;
		r->resp = xrealloc(r->resp, r->resp_cap);
	}
	memcpy(r->resp + r->resp_len, p, len);
	r->resp_len += len;
	r->resp[r->resp_len] = '\0';
	return len;
}

/* Whether the call's own headers include one named name. */
static int
has_header(const struct hclient_call *c, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; c->headers != NULL && c->headers[i] != NULL; i++)
		if (strncasecmp(c->headers[i], name, n) == 0 &&
		    (c->headers[i][n] == ':' || c->headers[i][n] == ';'))
			return 1;
	return 0;
}

static struct curl_slist *
add_header(struct curl_slist *l, const char *name, const char *value)
{
	char *line = util_printf("%s: %s", name, value);

	l = curl_slist_append(l, line);
	free(line);
	return l;
}

/* libcurl's socket for a connection, made by the client's open_socket. */
static curl_socket_t
open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	hclient *h = arg;
	int fd;

	(void)purpose;
	fd = h->open_socket(a->family, a->socktype, a->protocol);
	return fd < 0 ? CURL_SOCKET_BAD : fd;
}

/* Set up e for call with the client's credentials; its body goes to r. */
static void
easy_setup(hclient *h, CURL *e, const struct hclient_call *c,
    struct hclient_req *r, unsigned timeout_ms)
{
	const char *method = c->method != NULL ? c->method : "GET";
	struct curl_slist *l = NULL;
	char *url;
	int i;

	if (c->url[0] == '/' && h->base != NULL) {
		url = util_printf("%s%s", h->base, c->url);
		curl_easy_setopt(e, CURLOPT_URL, url);
		free(url);
	} else
		curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(e, CURLOPT_SHARE, h->share);
	/*
	 * No TLS session resumption: volray's own server (net/tls.c)
	 * verifies client certificates without a session id context, and
	 * OpenSSL then fails every resumed handshake.
	 */
	curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	if (h->ca.data != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &h->ca);
	else if (h->ca_file != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO, h->ca_file);
	if (h->cert.data != NULL)
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &h->cert);
	else if (h->cert_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLCERT, h->cert_file);
	if (h->key.data != NULL)
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &h->key);
	else if (h->key_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLKEY, h->key_file);
	if (h->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (h->user_agent != NULL)
		curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent);
	if (h->open_socket != NULL) {
		curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
		curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, h);
	}
	if (c->body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)c->body_len);
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, c->body);
		/* No 100-continue round trip before a large body. */
		if (!has_header(c, "Expect"))
			l = curl_slist_append(l, "Expect:");
	}
	if (c->accept != NULL)
		l = add_header(l, "Accept", c->accept);
	if (c->content_type != NULL)
		l = add_header(l, "Content-Type", c->content_type);
	if (h->auth != NULL && !has_header(c, "Authorization"))
		l = curl_slist_append(l, h->auth);
	for (i = 0; c->headers != NULL && c->headers[i] != NULL; i++)
		if (strpbrk(c->headers[i], "\r\n") == NULL)
			l = curl_slist_append(l, c->headers[i]);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, l);
	r->hdrs = l;
}

/*
 * Hand a request to libcurl; -1 with *cause. Its easy handle is set up
 * here, the first time (a retry keeps it): thousands of binds may wait
 * in line, and only the few running need one, so that the handles of
 * finished requests serve the next.
 */
static int
launch(hclient *h, struct hclient_req *r, char **cause)
{
	CURLMcode mc;

	if (r->easy == NULL) {
		if ((r->easy = easy_get(h)) == NULL) {
			*cause = xstrdup("libcurl: cannot make a handle");
			return -1;
		}
		easy_setup(h, r->easy, &r->call, r, r->call.timeout_ms);
		call_drop(r);
	}
	if ((mc = curl_multi_add_handle(h->multi, r->easy)) != CURLM_OK) {
		*cause = xstrdup(curl_multi_strerror(mc));
		return -1;
	}
	r->state = REQ_RUNNING;
	rlist_add(&h->running, r);
	h->nrunning++;
	h->launched++;
	return 0;
}

/* Whether another request may be handed to libcurl now. */
static int
slot_free(const hclient *h)
{
	return h->max_running <= 0 || h->nrunning < h->max_running;
}

static void on_rate_timer(uv_timer_t *);

/* Wake up for the next token of the waiting requests (when a connection
   is free for them) or the first delayed one, whichever is sooner; at
   once inside libcurl. */
static void
arm_rate_timer(hclient *h)
{
	uint64_t now = uv_hrtime(), ns = UINT64_MAX;

	if (fairq_len(h->waiting) > 0 && slot_free(h))
		ns = token_wait(h);
	if (h->delayed.head != NULL) {
		uint64_t due = h->delayed.head->due_ns;

		if (due <= now)
			ns = 0;
		else if (due - now < ns)
			ns = due - now;
	}
	if (ns == UINT64_MAX) {
		uv_timer_stop(&h->rate_timer);
		return;
	}
	uv_timer_start(&h->rate_timer, on_rate_timer,
	    (ns + 999999) / 1000000, 0);
}

/* Queue r last in its flow's line. */
static void
wait_in_line(hclient *h, struct hclient_req *r)
{
	r->state = REQ_WAITING;
	r->queued_at = uv_hrtime();
	fairq_push(h->waiting, r->flow, &r->wait);
}

/* Start the waiting requests, flows in turn, while tokens and
   connections last; the delayed ones that are due go back in line. */
static void
on_rate_timer(uv_timer_t *t)
{
	hclient *h = t->data;
	struct hclient_req *r;
	struct fairq_link *k;
	char *err = NULL;

	while ((r = h->delayed.head) != NULL && r->due_ns <= uv_hrtime()) {
		rlist_del(&h->delayed, r);
		wait_in_line(h, r);
	}
	while (fairq_len(h->waiting) > 0 && slot_free(h) &&
	    token_wait(h) == 0) {
		k = fairq_pop(h->waiting);
		r = FAIRQ_ITEM(k, struct hclient_req, wait);
		reserve(h);
		h->queued_ns += uv_hrtime() - r->queued_at;
		if (launch(h, r, &err) != 0) {
			h->inflight--;
			r->state = REQ_FINISHING;
			r->on_done(r->arg, 0, "", 0, err);
			free(err);
			err = NULL;
			req_free(r);
		}
	}
	arm_rate_timer(h);
}

hclient_req *
hclient_start(hclient *h, const struct hclient_call *c,
    hclient_data_fn on_data, hclient_done_fn on_done, void *arg, char **cause)
{
	struct hclient_req *r;

	if (c->url == NULL || (c->url[0] == '/' && h->base == NULL)) {
		*cause = xstrdup("no URL");
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	r->h = h;
	r->on_data = on_data;
	r->on_done = on_done;
	r->arg = arg;
	call_keep(r, c);
	r->flow = fairq_line(h->waiting, c->flow != NULL ? c->flow : "");
	if (!h->in_curl && fairq_len(h->waiting) == 0 && slot_free(h) &&
	    token_wait(h) == 0) {
		reserve(h);
		if (launch(h, r, cause) != 0) {
			req_free(r);
			return NULL;
		}
	} else {
		wait_in_line(h, r);
		arm_rate_timer(h);
	}
	h->inflight++;
	return r;
}

void
hclient_cancel(hclient_req *r)
{
	hclient *h;

	if (r == NULL)
		return;
	h = r->h;
	switch (r->state) {
	case REQ_WAITING:
		fairq_remove(h->waiting, &r->wait);
		h->inflight--;
		req_free(r);
		break;
	case REQ_DELAYED:
		rlist_del(&h->delayed, r);
		h->inflight--;
		req_free(r);
		break;
	case REQ_RUNNING:
		rlist_del(&h->running, r);
		h->inflight--;
		slot_freed(h);
		if (h->in_curl) {
			r->state = REQ_CANCELLED;
			r->next = h->dead;
			h->dead = r;
		} else
			req_free(r);
		break;
	case REQ_CANCELLED:
	case REQ_FINISHING:
		break;
	}
}

const char *
hclient_req_header(hclient_req *r, const char *name)
{
	struct curl_header *hd;

	if (r->easy == NULL || curl_easy_header(r->easy, name, 0,
	    CURLH_HEADER, -1, &hd) != CURLHE_OK)
		return NULL;
	return hd->value;
}

/* Sleep ns nanoseconds, whatever signals come. */
static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
	    (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
hclient_call_sync(hclient *h, const struct hclient_call *c, long *status,
    char **body, size_t *len, char **cause)
{
	struct hclient_req r;
	CURLcode rc;
	uint64_t wait;

	*status = 0;
	*body = NULL;
	*len = 0;
	*cause = NULL;
	if (c->url == NULL || (c->url[0] == '/' && h->base == NULL)) {
		*cause = xstrdup("no URL");
		return -1;
	}
	if (h->sync == NULL && (h->sync = curl_easy_init()) == NULL) {
		*cause = xstrdup("libcurl: cannot make a handle");
		return -1;
	}
	if ((wait = reserve(h)) > 0)
		sleep_ns(wait);
	h->launched++;
	h->queued_ns += wait;
	/* A reset handle keeps its connections and caches. */
	curl_easy_reset(h->sync);
	memset(&r, 0, sizeof r);
	r.h = h;
	r.state = REQ_RUNNING;
	r.easy = h->sync;
	easy_setup(h, h->sync, c, &r, c->timeout_ms != 0 ? c->timeout_ms :
	    HCLIENT_SYNC_TIMEOUT_MS);
	rc = curl_easy_perform(h->sync);
	curl_slist_free_all(r.hdrs);
	curl_easy_setopt(h->sync, CURLOPT_HTTPHEADER, NULL);
	if (r.too_big || rc != CURLE_OK) {
		*cause = xstrdup(r.too_big ? "response body over 8 MiB" :
		    curl_easy_strerror(rc));
		free(r.resp);
		return -1;
	}
	curl_easy_getinfo(h->sync, CURLINFO_RESPONSE_CODE, status);
	*body = r.resp != NULL ? r.resp : xstrdup("");
	*len = r.resp_len;
	return 0;
}
