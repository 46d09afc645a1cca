/*
 * The remote client (remote.h): informers that fill a mirror, and writes
 * sent over HTTPS.
 *
 * An informer is a small state machine per resource: LIST (pages of 500,
 * each page's items kept until the last one, then one store_mirror_replace)
 * -> WATCH (a streamed GET whose bytes are split into lines, each a watch
 * event put into the mirror; the lines are parsed into the mirror's
 * versions by the decoder's thread, remote_decode.c, and come back in
 * order, the stream's end after its last line; a generation number per
 * request drops what comes back of a watch the informer has left for a
 * list) -> on the stream's end, WATCH again from the
 * last resourceVersion (bookmarks move it too); on 410 Gone, or an ERROR
 * event saying so, LIST again; on any other failure, WAIT with a backoff
 * doubling from 250 ms to 30 s, then what was interrupted. A watch asks
 * the server to end it after 5 to 10 minutes, as client-go's reflector
 * does, and gives up on its own half a minute after that, so that a
 * silently dead connection is noticed. A watch that ends at once with
 * nothing in it, or after an ERROR event, is a failure too (client-go's
 * "very short watch"): a server that keeps doing that is not asked again
 * at once, which would spend the rate limiter's tokens that writes need.
 *
 * What the server sends is not trusted: a line that is not JSON, an
 * object without a name, a stream that stops mid-line are logged with
 * what came (its first bytes) and skipped; the informer goes on.
 *
 * Writes made through the *_async calls (all that run on the loop: the
 * controllers', the scheduler's, the node runtimes' and lifecycle's,
 * Events, Leases) leave the loop free while they travel; the synchronous
 * ones (start-up's: the CRDs) block it for one round trip
 * (hclient_call_sync). Their
 * answers are put into the mirror with its events held; a zero timer
 * releases them on the next turn of the loop. Only the answers of
 * resources the mirror follows are put there (nothing else would ever
 * update or remove them), and never a dry run's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remote.h"
#include "client/remote_decode.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/hmap.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "registry/kinds/kinds.h"
#include "registry/status.h"

/* Kept-alive connections for the requests other than watches. */
#define REMOTE_WRITE_CONNS	8
/* Connections of the Events' client (events_h) and the Leases'
   (leases_h). */
#define EVENT_CONNS		2
#define LEASE_CONNS		2
#define PAGE		500
#define BACKOFF_MIN_MS	250
#define BACKOFF_MAX_MS	30000
#define LINE_MAX_BYTES	(16u << 20)
#define SHORT_WATCH_MS	1000
#define WATCH_GRACE_S	30	/* past timeoutSeconds: a dead connection */
#define LOG_BYTES	200	/* of bad input, in a log line */

enum istate { I_LIST, I_WATCH, I_WAIT };

struct informer {
	struct remote *rm;
	const resource *r;
	char *path;			/* "/api/v1/pods" */
	char *query;			/* "&fieldSelector=..." or "" */
	enum istate state;
	enum istate after_wait;		/* what a WAIT goes back to */
	hclient_req *req;
	uv_timer_t timer;
	unsigned backoff_ms;
	uint64_t rv;			/* the last resourceVersion seen */
	uint64_t lists;			/* lists started (1 + relists) */
	int synced;
	/* A list under way: its pages' items, kept until the last. */
	cJSON **items;
	size_t nitems, capitems;
	char *cont;
	uint64_t list_rv;
	/* A watch under way: the bytes of an unfinished line, when it
	   started, how many lines it gave, whether one was an ERROR. */
	char *line;
	size_t linelen, linecap;
	uint64_t watch_start;
	unsigned watch_lines;
	int watch_failed;
	/* Bumped by every request the informer starts: the decoder's jobs
	   of an earlier one (a watch it has left for a list) are dropped. */
	uint64_t gen;
};

struct remote {
	uv_loop_t *loop;
	hclient *h;
	/* Events' own client and token bucket (the same limits), as
	   controller-runtime's recorder has its own clientset: Events do
	   not spend the tokens writes need. */
	hclient *events_h;
	/* Leases' own client (the same limits), as kube-scheduler and
	   kube-controller-manager give leader election its own clientset
	   and the kubelet its heartbeats: a renewal never queues behind
	   the watches' reconnections or a burst of writes, which would
	   cost the leadership when the API server restarts. */
	hclient *leases_h;
	/* Every other kind's writes: a client (and token bucket, with the
	   same limits) per kind, by store key, made at the kind's first
	   write. controller-runtime's client, which KubeRay's operator
	   uses, makes a REST client per kind and client-go gives each a
	   bucket of its own: --kube-api-qps means what KubeRay's --qps
	   does. Watches, lists and synchronous calls go through h. */
	hmap *kinds;
	double qps;
	int burst;
	store *mirror;
	client *c;
	char *server;
	struct informer *inf;
	size_t ninf;
	size_t nsynced;
	void (*on_synced)(void *);
	void *arg;
	uv_timer_t release;		/* delivers held write-through events */
	int held;
	remote_decoder *dec;		/* the watches' lines, decoded */
};

static void list_page(struct informer *);
static void watch(struct informer *);
static void on_backoff(uv_timer_t *);

static uint64_t
rv_of(const cJSON *obj)
{
	const char *s = json_str(obj, "metadata.resourceVersion");

	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* s percent-encoded for a URL's query: RFC 3986's unreserved bytes kept
   (a continue token may hold '+', '/' and '=', which a server decodes). */
static char *
query_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(strlen(s) * 3 + 1), *o = out;
	unsigned char ch;

	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '~')
			*o++ = (char)ch;
		else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	*o = '\0';
	return out;
}

/* Log bad input with its first LOG_BYTES bytes. */
static void
log_bad(const struct informer *in, const char *verb, const char *what,
    const char *p, size_t len)
{
	log_warn("remote: %s %s: %s: %.*s%s", verb, in->path, what,
	    (int)(len > LOG_BYTES ? LOG_BYTES : len), p,
	    len > LOG_BYTES ? "..." : "");
}

/* Log a failed request: libcurl's error, or the status and what the
   server said (its first bytes: an error page may be large). */
static void
log_failed(const struct informer *in, const char *verb, long status,
    const char *body, size_t len, const char *err)
{
	char what[32];

	if (err != NULL) {
		log_warn("remote: %s %s: %s", verb, in->path, err);
		return;
	}
	snprintf(what, sizeof what, "HTTP %ld", status);
	log_bad(in, verb, what, body, len);
}

/* "/api/v1" or "/apis/GROUP/VERSION", then the namespace if any. */
static char *
collection_path(const resource *r, const char *ns)
{
	char *base = *r->group != '\0' ?
	    util_printf("/apis/%s/%s", r->group, r->version) :
	    util_printf("/api/%s", r->version), *p;

	if (r->namespaced && ns != NULL && *ns != '\0')
		p = util_printf("%s/namespaces/%s/%s", base, ns, r->plural);
	else
		p = util_printf("%s/%s", base, r->plural);
	free(base);
	return p;
}

/* --- informers --------------------------------------------------------- */

static void
wait_then(struct informer *in, enum istate next)
{
	in->state = I_WAIT;
	in->after_wait = next;
	in->backoff_ms = in->backoff_ms ? in->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (in->backoff_ms > BACKOFF_MAX_MS)
		in->backoff_ms = BACKOFF_MAX_MS;
	/* With jitter up to as much again (client-go's reflector: 1.0):
	   the watches a restart of the server broke come back spread out,
	   not all in one instant. */
	uv_timer_start(&in->timer, on_backoff, in->backoff_ms +
	    util_random(in->backoff_ms + 1), 0);
}

static void
drop_items(struct informer *in)
{
	size_t i;

	for (i = 0; i < in->nitems; i++)
		cJSON_Delete(in->items[i]);
	in->nitems = 0;
	free(in->cont);
	in->cont = NULL;
}

static void
synced(struct informer *in)
{
	struct remote *rm = in->rm;

	if (in->synced)
		return;
	in->synced = 1;
	if (++rm->nsynced == rm->ninf && rm->on_synced != NULL)
		rm->on_synced(rm->arg);
}

/* The last page is in: the mirror's objects of this resource become
   the list's. */
static void
list_done(struct informer *in)
{
	struct store_mirror_item *it = xcalloc(in->nitems + 1, sizeof *it);
	size_t i;

	for (i = 0; i < in->nitems; i++) {
		it[i].ns = json_str(in->items[i], "metadata.namespace");
		it[i].name = json_str(in->items[i], "metadata.name");
		it[i].tree = in->items[i];
		it[i].rv = rv_of(in->items[i]);
	}
	store_mirror_replace(in->rm->mirror, in->r->store_key, it, in->nitems,
	    in->list_rv);
	free(it);
	in->rv = in->list_rv;
	drop_items(in);
	in->backoff_ms = 0;
	synced(in);
	watch(in);
}

/* A page of the list, parsed by the decoder: its items kept, then the
   next page, or the list is done. */
static void
list_parsed(struct informer *in, struct remote_job *j)
{
	size_t i;

	for (i = 0; i < j->nd; i++)
		log_bad(in, "list", j->d[i].what, j->d[i].text, j->d[i].len);
	if (j->not_list) {
		drop_items(in);
		wait_then(in, I_LIST);
		return;
	}
	XGROW(in->items, in->capitems, in->nitems + j->nitems);
	memcpy(in->items + in->nitems, j->items, j->nitems *
	    sizeof *j->items);
	in->nitems += j->nitems;
	j->nitems = 0;
	free(in->cont);
	in->cont = j->cont;
	j->cont = NULL;
	in->list_rv = j->list_rv;
	if (in->cont != NULL)
		list_page(in);
	else
		list_done(in);
}

/* A page's answer: parsed by the decoder's thread, in its turn. */
static void
on_list(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct informer *in = arg;
	struct remote_job *j;

	in->req = NULL;
	if (status != 200) {
		log_failed(in, "list", status, body, len, err);
		drop_items(in);
		wait_then(in, I_LIST);
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->owner = in;
	j->gen = in->gen;
	j->r = in->r;
	j->page = 1;
	j->buf = xmalloc(len + 1);
	memcpy(j->buf, body, len);
	j->buf[len] = '\0';
	j->len = len;
	remote_decode_push(in->rm->dec, j);
}

static void
list_page(struct informer *in)
{
	struct hclient_call call = { 0 };
	char *url, *err = NULL, *cont;

	in->state = I_LIST;
	in->gen++;
	if (in->cont == NULL)
		in->lists++;
	if (in->cont != NULL) {
		cont = query_escape(in->cont);
		url = util_printf("%s?limit=%d%s&continue=%s", in->path, PAGE,
		    in->query, cont);
		free(cont);
	} else
		url = util_printf("%s?limit=%d%s", in->path, PAGE, in->query);
	call.url = url;
	call.accept = "application/json";
	call.timeout_ms = 60000;
	in->req = hclient_start(in->rm->h, &call, NULL, on_list, in, &err);
	free(url);
	if (in->req == NULL) {
		log_warn("remote: list %s: %s", in->path, err);
		free(err);
		drop_items(in);
		wait_then(in, I_LIST);
	}
}

/* Stop the watch under way (or what is left of it in the decoder) and
   list again. */
static void
relist(struct informer *in)
{
	if (in->req != NULL)
		hclient_cancel(in->req);
	in->req = NULL;
	in->linelen = 0;
	list_page(in);
}

/* One event of a watch, decoded: into the mirror. 1 to go on, 0 to list
   again. The version is taken from d. */
static int
watch_event(struct informer *in, struct remote_decoded *d)
{
	store_obj *o = d->o;

	in->watch_lines++;
	d->o = NULL;
	switch (d->kind) {
	case RD_BAD:
		log_bad(in, "watch", d->what, d->text, d->len);
		break;
	case RD_ERROR:
		log_info("remote: watch %s: %s", in->path, d->text);
		in->watch_failed = 1;
		return d->code != 410;
	case RD_BOOKMARK:
		if (d->rv > in->rv)
			in->rv = d->rv;
		store_mirror_progress(in->rm->mirror, in->r->store_key, d->rv);
		break;
	case RD_PUT:
	case RD_DELETE:
		if (o != NULL && d->kind == RD_PUT)
			store_mirror_put_version(in->rm->mirror, o);
		else if (o != NULL)
			store_mirror_delete_version(in->rm->mirror, o);
		if (d->rv > in->rv)
			in->rv = d->rv;
		break;
	}
	return 1;
}

/*
 * Bytes of a watch: its whole lines go to the decoder, in one job, with
 * the unfinished line kept before them; the rest waits for more.
 */
static void
on_watch_data(void *arg, const char *p, size_t len)
{
	struct informer *in = arg;
	struct remote_job *j;
	size_t whole = len;

	while (whole > 0 && p[whole - 1] != '\n')
		whole--;
	if (whole > 0) {
		j = xcalloc(1, sizeof *j);
		j->owner = in;
		j->gen = in->gen;
		j->r = in->r;
		j->len = in->linelen + whole;
		j->buf = xmalloc(j->len);
		memcpy(j->buf, in->line, in->linelen);
		memcpy(j->buf + in->linelen, p, whole);
		in->linelen = 0;
		remote_decode_push(in->rm->dec, j);
	}
	if (whole == len)
		return;
	if (in->linelen + len - whole > LINE_MAX_BYTES) {
		log_warn("remote: watch %s: an event past %u bytes", in->path,
		    LINE_MAX_BYTES);
		relist(in);
		return;
	}
	XGROW(in->line, in->linecap, in->linelen + len - whole);
	memcpy(in->line + in->linelen, p + whole, len - whole);
	in->linelen += len - whole;
}

/* The watch is over and every line before its end is in the mirror. */
static void
watch_done(struct informer *in, long status, const char *body, size_t len,
    const char *err)
{
	if (status == 410) {
		list_page(in);
	} else if (status == 200 && (in->watch_failed ||
	    (in->watch_lines == 0 && uv_now(in->rm->loop) - in->watch_start <
	    SHORT_WATCH_MS))) {
		log_warn("remote: watch %s: %s", in->path, in->watch_failed ?
		    "ended after an error" : "ended at once, empty");
		wait_then(in, I_WATCH);
	} else if (status == 200) {
		in->backoff_ms = 0;
		watch(in);
	} else {
		log_failed(in, "watch", status, body, len, err);
		wait_then(in, I_WATCH);
	}
}

/* A job back from the decoder: its events, then the end it marks. */
static void
on_decoded(void *arg, struct remote_job *j)
{
	struct informer *in = j->owner;
	size_t i;

	(void)arg;
	if (j->page) {
		if (j->gen == in->gen)
			list_parsed(in, j);
		remote_job_free(j);
		return;
	}
	for (i = 0; i < j->nd && j->gen == in->gen; i++)
		if (!watch_event(in, &j->d[i]))
			relist(in);
	if (j->mark && j->gen == in->gen)
		watch_done(in, j->status, j->body, j->body_len, j->err);
	remote_job_free(j);
}

/* The stream is over: its end follows its last lines through the
   decoder. */
static void
on_watch_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct informer *in = arg;
	struct remote_job *j = xcalloc(1, sizeof *j);

	in->req = NULL;
	if (in->linelen > 0) {
		/* The stream ended in the middle of an event: the watch
		   from the last whole one will send it again. */
		log_bad(in, "watch", "the stream ended mid-event, dropped",
		    in->line, in->linelen);
		in->linelen = 0;
	}
	j->owner = in;
	j->gen = in->gen;
	j->r = in->r;
	j->mark = 1;
	j->status = status;
	if (body != NULL) {
		j->body = xmalloc(len + 1);
		memcpy(j->body, body, len);
		j->body[len] = '\0';
		j->body_len = len;
	}
	j->err = err != NULL ? xstrdup(err) : NULL;
	remote_decode_push(in->rm->dec, j);
}

static void
watch(struct informer *in)
{
	struct hclient_call call = { 0 };
	char *url, *err = NULL;
	unsigned secs = 300 + (unsigned)(random() % 300);

	in->state = I_WATCH;
	in->gen++;
	in->watch_start = uv_now(in->rm->loop);
	in->watch_lines = 0;
	in->watch_failed = 0;
	url = util_printf("%s?watch=1&allowWatchBookmarks=true&"
	    "resourceVersion=%llu&timeoutSeconds=%u%s", in->path,
	    (unsigned long long)in->rv, secs, in->query);
	call.url = url;
	call.accept = "application/json";
	call.timeout_ms = (secs + WATCH_GRACE_S) * 1000;
	in->req = hclient_start(in->rm->h, &call, on_watch_data,
	    on_watch_done, in, &err);
	free(url);
	if (in->req == NULL) {
		log_warn("remote: watch %s: %s", in->path, err);
		free(err);
		wait_then(in, I_WATCH);
	}
}

static void
on_backoff(uv_timer_t *t)
{
	struct informer *in = t->data;

	if (in->state != I_WAIT)
		return;
	if (in->after_wait == I_LIST)
		list_page(in);
	else
		watch(in);
}

/* --- writes ------------------------------------------------------------ */

static void
on_release(uv_timer_t *t)
{
	struct remote *rm = t->data;

	rm->held = 0;
	store_mirror_hold(rm->mirror, 0);
}

/* Whether an informer follows r's objects into the mirror. */
static int
mirrored(const struct remote *rm, const resource *r)
{
	size_t i;

	for (i = 0; i < rm->ninf; i++)
		if (strcmp(rm->inf[i].r->store_key, r->store_key) == 0)
			return 1;
	return 0;
}

/* Hold the mirror's events until the next turn of the loop. */
static void
hold_events(struct remote *rm)
{
	if (rm->held)
		return;
	rm->held = 1;
	store_mirror_hold(rm->mirror, 1);
	uv_timer_start(&rm->release, on_release, 0, 0);
}

/* Put a write's answer into the mirror; its event waits for the loop. */
static void
write_through(struct remote *rm, const resource *r, const cJSON *obj)
{
	uint64_t rv = rv_of(obj);

	if (!mirrored(rm, r) || rv == 0 ||
	    json_str(obj, "metadata.name") == NULL ||
	    json_str(obj, "kind") == NULL ||
	    strcmp(json_str(obj, "kind"), r->kind) != 0)
		return;
	hold_events(rm);
	store_mirror_put_tree(rm->mirror, r->store_key,
	    json_str(obj, "metadata.namespace"), json_str(obj, "metadata.name"),
	    obj, rv);
}

/* Append one "key=value" to a URL's query. */
static void
query_add(char **url, const char *key, const char *value)
{
	char *n = util_printf("%s%c%s=%s", *url, strchr(*url, '?') ? '&' :
	    '?', key, value);

	free(*url);
	*url = n;
}

/* The query of a write's options. */
static void
add_query(char **url, const struct reg_opts *o)
{
	char *fm;

	if (o == NULL)
		return;
	if (o->field_manager != NULL) {
		fm = query_escape(o->field_manager);
		query_add(url, "fieldManager", fm);
		free(fm);
	}
	if (o->dry_run)
		query_add(url, "dryRun", "All");
	if (o->validate_strict)
		query_add(url, "fieldValidation", "Strict");
	if (o->force)
		query_add(url, "force", "true");
}

/* The resource whose answer a write puts into the mirror: none for a
   dry run's, which is what would have been stored. */
static const resource *
through(const resource *r, const struct reg_opts *o)
{
	return o != NULL && o->dry_run ? NULL : r;
}

/*
 * A write's answer as the registry gives it: the code and the object or
 * Status the server sent; a Status of our own when there was no answer
 * (status 0, err says why) or it was not JSON.
 */
static void
answer(struct reg_result *res, long status, const char *body, size_t len,
    const char *err)
{
	memset(res, 0, sizeof *res);
	if (status == 0) {
		res->code = 503;
		res->body = status_error(503, "ServiceUnavailable", "%s",
		    err != NULL ? err : "no answer");
		return;
	}
	res->code = (int)status;
	if ((res->body = cJSON_ParseWithLength(body, len)) == NULL) {
		if (res->code < 300)
			res->code = 500;
		res->body = status_error(res->code, "InternalError", "%s",
		    "the server's answer is not JSON");
	}
}

/*
 * Send one write and fill res as the registry would: the code, and the
 * object or Status the server answered (a Status of our own when it
 * could not be reached). A 2xx answer is written through as r's (NULL:
 * not at all).
 */
static void
send_write(struct remote *rm, const resource *r, const char *method,
    char *url, const char *ctype, const char *body, size_t len,
    struct reg_result *res)
{
	struct hclient_call call = { 0 };
	char *out = NULL, *err = NULL;
	size_t outlen = 0;
	long status = 0;

	call.method = method;
	call.url = url;
	call.body = body;
	call.body_len = len;
	call.content_type = ctype;
	call.accept = "application/json";
	if (hclient_call_sync(rm->h, &call, &status, &out, &outlen, &err) !=
	    0) {
		log_warn("remote: %s %s: %s", method, url, err);
		status = 0;
	}
	answer(res, status, out, outlen, err);
	if (res->code < 300 && r != NULL)
		write_through(rm, r, res->body);
	free(err);
	free(out);
	free(url);
}

static char *
object_path(const resource *r, const char *ns, const char *name,
    const char *sub)
{
	char *c = collection_path(r, ns), *p;

	p = sub != NULL ? util_printf("%s/%s/%s", c, name, sub) :
	    util_printf("%s/%s", c, name);
	free(c);
	return p;
}

static void
r_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = collection_path(r, ns), *body = cJSON_PrintUnformatted(obj);

	add_query(&url, o);
	send_write(impl, through(r, o), "POST", url, "application/json", body,
	    strlen(body), res);
	free(body);
	cJSON_Delete(obj);
}

static void
r_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	char *url = object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL), *body = cJSON_PrintUnformatted(obj);

	add_query(&url, o);
	send_write(impl, through(r, o), "PUT", url, "application/json", body,
	    strlen(body), res);
	free(body);
	cJSON_Delete(obj);
}

/*
 * The object's resourceVersion on the server now, if it is still the
 * object of uid; NULL otherwise (malloc'd).
 */
static char *
fresh_rv(struct remote *rm, const resource *r, const char *ns,
    const char *name, const char *uid)
{
	char *path = object_path(r, ns, name, NULL), *body = NULL, *err = NULL;
	char *rv = NULL;
	long status = 0;
	cJSON *t;

	if (remote_get(rm, path, &status, &body, &err) == 0 && status == 200 &&
	    (t = cJSON_Parse(body)) != NULL) {
		const char *u = json_str(t, "metadata.uid");

		if (uid == NULL || (u != NULL && strcmp(u, uid) == 0))
			rv = json_str(t, "metadata.resourceVersion") != NULL ?
			    xstrdup(json_str(t, "metadata.resourceVersion")) :
			    NULL;
		cJSON_Delete(t);
	}
	free(err);
	free(body);
	free(path);
	return rv;
}

/*
 * A status its writer owns (reg_opts.own_status: the kubelet's of its pods
 * and nodes): on a conflict the write is made again over the server's
 * newer version, as client-go's RetryOnConflict does, while the object is
 * the same one (its uid), three tries in all. The mirror may lag the
 * server; the embedded store never does. Other writers (the scheduler's
 * conditions) get the 409 and decide again from a newer version.
 */
static void
r_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url, *body, *rv;
	int try;

	cJSON_DeleteItemFromObject(current, "status");
	if (status != NULL)
		cJSON_AddItemToObject(current, "status", status);
	for (try = 0;; try++) {
		url = object_path(r, ns, name, "status");
		add_query(&url, o);
		body = cJSON_PrintUnformatted(current);
		send_write(impl, through(r, o), "PUT", url, "application/json",
		    body, strlen(body), res);
		free(body);
		if (res->code != 409 || try == 2 || o == NULL ||
		    !o->own_status || (rv = fresh_rv(impl, r, ns,
		    name, json_str(current, "metadata.uid"))) == NULL)
			break;
		json_set_str(json_obj(current, "metadata"), "resourceVersion",
		    rv);
		free(rv);
		cJSON_Delete(res->body);
		res->body = NULL;
	}
	cJSON_Delete(current);
}

static void
r_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL);

	add_query(&url, o);
	send_write(impl, through(r, o), "PATCH", url, content_type, body, len,
	    res);
}

/* DeleteOptions from the registry's options. */
static char *
delete_body(const struct reg_opts *o)
{
	cJSON *d = cJSON_CreateObject();
	char *s;

	json_set_str(d, "apiVersion", "v1");
	json_set_str(d, "kind", "DeleteOptions");
	if (o != NULL && o->propagation != NULL)
		json_set_str(d, "propagationPolicy", o->propagation);
	if (o != NULL && o->grace_set)
		json_set_num(d, "gracePeriodSeconds", (double)o->grace_period);
	if (o != NULL && o->precond_uid != NULL)
		json_set_str(json_obj(d, "preconditions"), "uid",
		    o->precond_uid);
	if (o != NULL && o->precond_rv != NULL)
		json_set_str(json_obj(d, "preconditions"), "resourceVersion",
		    o->precond_rv);
	if (o != NULL && o->dry_run)
		cJSON_AddItemToObject(d, "dryRun",
		    cJSON_CreateStringArray((const char *[]){ "All" }, 1));
	s = cJSON_PrintUnformatted(d);
	cJSON_Delete(d);
	return s;
}

static void
r_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = object_path(r, ns, name, NULL), *body = delete_body(o);

	/* What DELETE answers is the object on its way out: the watch
	   says when it is gone, so nothing is written through. */
	send_write(impl, NULL, "DELETE", url, "application/json", body,
	    strlen(body), res);
	free(body);
}

/*
 * A bind the server took: the mirror's pod gets its node at once (its
 * event held to the next turn), so the next scheduling session does not
 * see it pending before the watch says it is bound.
 */
static void
assume_bound(struct remote *rm, const char *ns, const char *name,
    const char *node)
{
	const store_obj *o = store_get(rm->mirror, "pods", ns, name);
	cJSON *t;

	if (o == NULL || *o->node_name != '\0' ||
	    (t = store_obj_tree(o)) == NULL)
		return;
	json_set_str(json_obj(t, "spec"), "nodeName", node);
	hold_events(rm);
	store_mirror_assume(rm->mirror, "pods", ns, name, t);
	cJSON_Delete(t);
}

/* A pods/binding body. */
static char *
binding_body(const char *ns, const char *name, const char *node)
{
	cJSON *b = cJSON_CreateObject();
	char *body;

	json_set_str(b, "apiVersion", "v1");
	json_set_str(b, "kind", "Binding");
	json_set_str(json_obj(b, "metadata"), "name", name);
	json_set_str(json_obj(b, "metadata"), "namespace", ns);
	json_set_str(json_obj(b, "target"), "apiVersion", "v1");
	json_set_str(json_obj(b, "target"), "kind", "Node");
	json_set_str(json_obj(b, "target"), "name", node);
	body = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return body;
}

static void
r_bind(void *impl, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	const resource *pods = resource_find("", "v1", "pods");
	char *url = object_path(pods, ns, name, "binding");
	char *body = binding_body(ns, name, node);

	send_write(impl, NULL, "POST", url, "application/json", body,
	    strlen(body), res);
	free(body);
	if (res->code < 300)
		assume_bound(impl, ns, name, node);
}

struct async_write {
	struct remote *rm;
	const resource *through;	/* its 2xx answer into the mirror */
	client_done_fn done;		/* NULL: none */
	void *arg;
	char *ns;			/* the object's namespace: the line
					   it waits in (hclient's flow) */
	char *name, *node;		/* a bind's, to assume it bound */
	hclient *via;			/* rm->h, events_h or leases_h */
};

/* The client a write of r goes through, as its descriptor says:
   Events' and Leases' own, its kind's for the rest. */
static hclient *
client_for(struct remote *rm, const resource *r)
{
	hclient *h;

	if (r == NULL)
		return rm->h;
	if (r->desc != NULL && r->desc->client == KIND_CLIENT_EVENTS)
		return rm->events_h;
	if (r->desc != NULL && r->desc->client == KIND_CLIENT_LEASES)
		return rm->leases_h;
	if ((h = hmap_get(rm->kinds, r->store_key)) != NULL)
		return h;
	if ((h = hclient_new_like(rm->h)) == NULL)
		return rm->h;
	hclient_set_rate(h, rm->qps, rm->burst);
	hclient_set_max_connections(h, REMOTE_WRITE_CONNS);
	hmap_put(rm->kinds, r->store_key, h);
	return h;
}

static void
async_free(struct async_write *aw)
{
	free(aw->ns);
	free(aw->name);
	free(aw->node);
	free(aw);
}

/* An asynchronous write's answer, as send_write fills a result. */
static void
on_async_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct async_write *aw = arg;
	struct reg_result res;

	answer(&res, status, body, len, err);
	if (res.code < 300 && aw->through != NULL)
		write_through(aw->rm, aw->through, res.body);
	if (res.code < 300 && aw->node != NULL)
		assume_bound(aw->rm, aw->ns, aw->name, aw->node);
	if (aw->done != NULL)
		aw->done(aw->arg, &res);
	else
		cJSON_Delete(res.body);
	async_free(aw);
}

/*
 * Start one write (url is taken) whose answer comes to aw through
 * on_async_done; the rate limiter's wait is the request's, not the
 * loop's.
 */
static void
send_async(struct remote *rm, struct async_write *aw, const char *method,
    char *url, const char *ctype, const char *body, size_t len)
{
	struct hclient_call call = { 0 };
	char *err = NULL;

	aw->rm = rm;
	call.method = method;
	call.url = url;
	call.body = body;
	call.body_len = len;
	call.content_type = ctype;
	call.accept = "application/json";
	call.timeout_ms = HCLIENT_SYNC_TIMEOUT_MS;
	/* Namespaces take turns in the rate limiter's queue: a burst in
	   one does not hold up another's writes (kuberay#2646). */
	call.flow = aw->ns;
	if (hclient_start(aw->via != NULL ? aw->via : rm->h, &call, NULL,
	    on_async_done, aw, &err) == NULL) {
		log_warn("remote: %s %s: %s", method, url, err);
		on_async_done(aw, 0, "", 0, err);
		free(err);
	}
	free(url);
}

/* A write of r in namespace ns (the hclient line it waits in), sent
   through the client client_for() names, its 2xx answer written into
   the mirror as into (through()'s answer, or NULL: not at all), the
   answer then to done(arg). */
static struct async_write *
new_write(struct remote *rm, const resource *r, const char *ns,
    const resource *into, client_done_fn done, void *arg)
{
	struct async_write *aw = xcalloc(1, sizeof *aw);

	aw->ns = xstrdup(ns != NULL ? ns : "");
	aw->through = into;
	aw->via = client_for(rm, r);
	aw->done = done;
	aw->arg = arg;
	return aw;
}

static void
r_bind_async(void *impl, const char *ns, const char *name, const char *node,
    client_done_fn done, void *arg)
{
	const resource *pods = resource_find("", "v1", "pods");
	struct async_write *aw = new_write(impl, pods, ns, NULL, done, arg);
	char *body = binding_body(ns, name, node);

	aw->name = xstrdup(name);
	aw->node = xstrdup(node);
	send_async(impl, aw, "POST", object_path(pods, ns, name, "binding"),
	    "application/json", body, strlen(body));
	free(body);
}

/* Send obj (taken) to url (taken) with method, without waiting. */
static void
send_obj_async(struct remote *rm, const resource *r, const char *ns,
    const struct reg_opts *o, const char *method, char *url, cJSON *obj,
    client_done_fn done, void *arg)
{
	struct async_write *aw = new_write(rm, r, ns, through(r, o), done,
	    arg);
	char *body = cJSON_PrintUnformatted(obj);

	cJSON_Delete(obj);
	add_query(&url, o);
	send_async(rm, aw, method, url, "application/json", body,
	    strlen(body));
	free(body);
}

/* PUT obj (taken) to url (taken) without waiting. */
static void
put_async(struct remote *rm, const resource *r, const char *ns,
    const struct reg_opts *o, char *url, cJSON *obj, client_done_fn done,
    void *arg)
{
	send_obj_async(rm, r, ns, o, "PUT", url, obj, done, arg);
}

/*
 * A status its writer owns (reg_opts.own_status), written without
 * waiting as r_update_status writes it while the loop waits: on a 409 the
 * server's version is read (without waiting either) and the status
 * written again over it while the object is the same one (its uid),
 * three tries in all; then the last answer goes to done.
 */
struct own_write {
	struct remote *rm;
	const resource *r, *through;
	char *ns, *name, *url;		/* url: the status's, with the query */
	cJSON *current;			/* the object with its new status */
	int conflicts;
	struct reg_result conflict;	/* kept while the fresh one is read */
	client_done_fn done;
	void *arg;
};

static void own_send(struct own_write *);

static void
own_finish(struct own_write *ow, struct reg_result *res)
{
	if (ow->done != NULL)
		ow->done(ow->arg, res);
	else
		cJSON_Delete(res->body);
	cJSON_Delete(ow->current);
	free(ow->ns);
	free(ow->name);
	free(ow->url);
	free(ow);
}

/* The server's version after a conflict: write again over it, or give
   the conflict to done if the object is gone or another one. */
static void
on_own_fresh(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct own_write *ow = arg;
	const char *uid = json_str(ow->current, "metadata.uid"), *u, *rv;
	cJSON *t = status == 200 ? cJSON_ParseWithLength(body, len) : NULL;

	(void)err;
	u = json_str(t, "metadata.uid");
	rv = json_str(t, "metadata.resourceVersion");
	if (t == NULL || rv == NULL || (uid != NULL && (u == NULL ||
	    strcmp(u, uid) != 0))) {
		cJSON_Delete(t);
		own_finish(ow, &ow->conflict);
		return;
	}
	json_set_str(json_obj(ow->current, "metadata"), "resourceVersion",
	    rv);
	cJSON_Delete(t);
	cJSON_Delete(ow->conflict.body);
	memset(&ow->conflict, 0, sizeof ow->conflict);
	own_send(ow);
}

static void
on_own_answer(void *arg, struct reg_result *res)
{
	struct own_write *ow = arg;
	struct hclient_call call = { 0 };
	char *url, *err = NULL;

	if (res->code != 409 || ++ow->conflicts == 3) {
		own_finish(ow, res);
		return;
	}
	ow->conflict = *res;
	url = object_path(ow->r, ow->ns, ow->name, NULL);
	call.url = url;
	call.accept = "application/json";
	call.timeout_ms = HCLIENT_SYNC_TIMEOUT_MS;
	call.flow = ow->ns;
	if (hclient_start(ow->rm->h, &call, NULL, on_own_fresh, ow, &err) ==
	    NULL) {
		log_warn("remote: GET %s: %s", url, err);
		free(err);
		own_finish(ow, &ow->conflict);
	}
	free(url);
}

static void
own_send(struct own_write *ow)
{
	struct async_write *aw = new_write(ow->rm, ow->r, ow->ns, ow->through,
	    on_own_answer, ow);
	char *body = cJSON_PrintUnformatted(ow->current);

	send_async(ow->rm, aw, "PUT", xstrdup(ow->url), "application/json",
	    body, strlen(body));
	free(body);
}

static void
r_update_status_async(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct own_write *ow;

	cJSON_DeleteItemFromObject(current, "status");
	if (status != NULL)
		cJSON_AddItemToObject(current, "status", status);
	if (o == NULL || !o->own_status) {
		put_async(impl, r, ns, o, object_path(r, ns, name, "status"),
		    current, done, arg);
		return;
	}
	ow = xcalloc(1, sizeof *ow);
	ow->rm = impl;
	ow->r = r;
	ow->through = through(r, o);
	ow->ns = xstrdup(ns != NULL ? ns : "");
	ow->name = xstrdup(name);
	ow->url = object_path(r, ns, name, "status");
	add_query(&ow->url, o);
	ow->current = current;
	ow->done = done;
	ow->arg = arg;
	own_send(ow);
}

static void
r_update_async(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *o,
    client_done_fn done, void *arg)
{
	put_async(impl, r, ns, o, object_path(r, ns, name, o != NULL ?
	    o->subresource : NULL), obj, done, arg);
}

static void
r_patch_async(void *impl, const resource *r, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct async_write *aw = new_write(impl, r, ns, through(r, o), done,
	    arg);
	char *url = object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL);

	add_query(&url, o);
	send_async(impl, aw, "PATCH", url, content_type, body, len);
}

static void
r_create_async(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	send_obj_async(impl, r, ns, o, "POST", collection_path(r, ns), obj,
	    done, arg);
}

/* As r_delete: nothing written through, the watch says when it is gone. */
static void
r_delete_async(void *impl, const resource *r, const char *ns,
    const char *name, const struct reg_opts *o, client_done_fn done,
    void *arg)
{
	struct async_write *aw = new_write(impl, r, ns, NULL, done, arg);
	char *body = delete_body(o);

	send_async(impl, aw, "DELETE", object_path(r, ns, name, NULL),
	    "application/json", body, strlen(body));
	free(body);
}

/* An eviction is the pod's graceful delete, as Volcano's evictor makes
   it (pods/eviction would also consult PodDisruptionBudgets). */
static void
r_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	r_delete(impl, resource_find("", "v1", "pods"), ns, name, o, res);
}

static void
r_evict_async(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	r_delete_async(impl, resource_find("", "v1", "pods"), ns, name, o,
	    done, arg);
}

static void
on_informer_closed(uv_handle_t *h)
{
	struct remote *rm = h->data;

	if (--rm->nsynced == 0) {
		free(rm->inf);
		free(rm);
	}
}

static int
free_kind_client(const char *key, void *h, void *arg)
{
	(void)key;
	(void)arg;
	hclient_free(h);
	return 0;
}

static void
r_free(void *impl)
{
	struct remote *rm = impl;
	size_t i;

	/* First: its jobs hold versions, and point at the informers. */
	remote_decode_free(rm->dec);
	for (i = 0; i < rm->ninf; i++) {
		struct informer *in = &rm->inf[i];

		drop_items(in);
		free(in->items);
		free(in->line);
		free(in->path);
		free(in->query);
	}
	hmap_each(rm->kinds, free_kind_client, NULL);
	hmap_free(rm->kinds);
	hclient_free(rm->h);
	hclient_free(rm->events_h);
	hclient_free(rm->leases_h);
	/* Held events (a write's, not yet released) go with the mirror. */
	store_close(rm->mirror);
	free(rm->server);
	/* The timers close on the loop; the last one frees. */
	rm->nsynced = rm->ninf + 1;
	for (i = 0; i < rm->ninf; i++) {
		rm->inf[i].timer.data = rm;
		uv_close((uv_handle_t *)&rm->inf[i].timer, on_informer_closed);
	}
	rm->release.data = rm;
	uv_close((uv_handle_t *)&rm->release, on_informer_closed);
}

static const struct client_ops remote_ops = {
	r_create, r_update, r_update_status, r_patch, r_delete, r_bind,
	r_evict, r_free, r_bind_async, r_update_status_async, r_patch_async,
	r_update_async, r_create_async, r_delete_async, r_evict_async
};

/* --- the client -------------------------------------------------------- */

static int
wanted(const resource *r, const struct remote_conf *conf)
{
	size_t i;

	if (r->create_only || r->computed)
		return 0;
	if (conf->resources == NULL)
		return 1;
	for (i = 0; conf->resources[i] != NULL; i++)
		if (strcmp(conf->resources[i], r->store_key) == 0)
			return 1;
	return 0;
}

/* The fieldSelector the conf gives r's informer, as a query's tail. */
static char *
field_query(const resource *r, const struct remote_conf *conf)
{
	const char *const *fs = conf->field_selectors;
	char *esc, *q;

	for (; fs != NULL && fs[0] != NULL; fs += 2)
		if (strcmp(fs[0], r->store_key) == 0) {
			esc = query_escape(fs[1]);
			q = util_printf("&fieldSelector=%s", esc);
			free(esc);
			return q;
		}
	return xstrdup("");
}

/* One informer per stored resource, on the version stored. */
static void
add_informers(struct remote *rm, const struct remote_conf *conf)
{
	int i, n = resource_count();

	rm->inf = xcalloc((size_t)n + 1, sizeof *rm->inf);
	for (i = 0; i < n; i++) {
		const resource *r = resource_at(i), *s;
		struct informer *in;
		size_t j;

		if (!wanted(r, conf))
			continue;
		/* One version of each store key: the storage one. */
		s = resource_by_store_key(r->store_key);
		if (s != r && !r->storage)
			continue;
		for (j = 0; j < rm->ninf; j++)
			if (strcmp(rm->inf[j].r->store_key, r->store_key) == 0)
				break;
		if (j < rm->ninf)
			continue;
		in = &rm->inf[rm->ninf++];
		in->rm = rm;
		in->r = r;
		in->path = collection_path(r, NULL);
		in->query = field_query(r, conf);
		uv_timer_init(rm->loop, &in->timer);
		in->timer.data = in;
	}
}

remote *
remote_new(uv_loop_t *loop, const struct kubecfg *kc,
    const struct remote_conf *conf, char **cause)
{
	struct hclient_conf hc = { 0 };
	struct remote *rm = xcalloc(1, sizeof *rm);
	size_t i;

	rm->loop = loop;
	hc.base_url = kc->server;
	hc.ca_pem = kc->ca.data;
	hc.ca_pem_len = kc->ca.len;
	hc.cert_pem = kc->cert.data;
	hc.cert_pem_len = kc->cert.len;
	hc.key_pem = kc->key.data;
	hc.key_pem_len = kc->key.len;
	hc.insecure = kc->insecure;
	hc.token = kc->token;
	hc.user_agent = conf->user_agent != NULL ? conf->user_agent :
	    "volrayd";
	if ((rm->h = hclient_new(loop, &hc, cause)) == NULL) {
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->h, conf->qps, conf->burst);
	rm->qps = conf->qps;
	rm->burst = conf->burst;
	if ((rm->events_h = hclient_new(loop, &hc, cause)) == NULL) {
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->events_h, conf->qps, conf->burst);
	hclient_set_max_connections(rm->events_h, EVENT_CONNS);
	if ((rm->leases_h = hclient_new(loop, &hc, cause)) == NULL) {
		hclient_free(rm->events_h);
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->leases_h, conf->qps, conf->burst);
	hclient_set_max_connections(rm->leases_h, LEASE_CONNS);
	if (store_mirror_open(loop, &rm->mirror) != 0) {
		*cause = xstrdup("cannot make the mirror");
		hclient_free(rm->leases_h);
		hclient_free(rm->events_h);
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	rm->kinds = hmap_new();
	rm->server = xstrdup(kc->server);
	rm->on_synced = conf->on_synced;
	rm->arg = conf->arg;
	uv_timer_init(loop, &rm->release);
	rm->release.data = rm;
	add_informers(rm, conf);
	rm->dec = remote_decode_new(loop, on_decoded, rm);
	/* A connection per watch and REMOTE_WRITE_CONNS for the rest. */
	hclient_set_max_connections(rm->h, (int)rm->ninf + REMOTE_WRITE_CONNS);
	for (i = 0; i < rm->ninf; i++) {
		rm->inf[i].timer.data = &rm->inf[i];
		uv_timer_start(&rm->inf[i].timer, on_backoff, 0, 0);
		rm->inf[i].state = I_WAIT;
		rm->inf[i].after_wait = I_LIST;
	}
	rm->c = client_new(rm->mirror, &remote_ops, rm);
	return rm;
}

void
remote_print_metrics(FILE *f, const remote *rm)
{
	size_t i;

	fprintf(f, "# HELP volray_remote_mirror_objects Objects of a kind "
	    "mirrored from the remote API.\n"
	    "# TYPE volray_remote_mirror_objects gauge\n");
	for (i = 0; i < rm->ninf; i++)
		fprintf(f, "volray_remote_mirror_objects{resource=\"%s\"} %zu\n",
		    rm->inf[i].r->store_key, store_count(rm->mirror,
		    rm->inf[i].r->store_key));
	fprintf(f, "# HELP volray_remote_lists_total Lists of a kind from the "
	    "remote API (the first, then one per 410 Gone or failed "
	    "watch).\n# TYPE volray_remote_lists_total counter\n");
	for (i = 0; i < rm->ninf; i++)
		fprintf(f, "volray_remote_lists_total{resource=\"%s\"} %llu\n",
		    rm->inf[i].r->store_key,
		    (unsigned long long)rm->inf[i].lists);
	remote_decode_print_metrics(f, rm->dec);
}

client *
remote_client(remote *rm)
{
	return rm->c;
}

int
remote_synced(const remote *rm)
{
	return rm->nsynced == rm->ninf;
}

const char *
remote_server(const remote *rm)
{
	return rm->server;
}

int
remote_get(remote *rm, const char *path, long *status, char **body,
    char **cause)
{
	struct hclient_call call = { 0 };
	size_t len;

	call.url = path;
	call.accept = "application/json";
	return hclient_call_sync(rm->h, &call, status, body, &len, cause);
}
