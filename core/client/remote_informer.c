/*
 * The remote client's informers (remote_int.h), which fill its mirror.
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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remote_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define PAGE		500
#define BACKOFF_MIN_MS	250
#define BACKOFF_MAX_MS	30000
#define LINE_MAX_BYTES	(16u << 20)
#define SHORT_WATCH_MS	1000
#define WATCH_GRACE_S	30	/* past timeoutSeconds: a dead connection */
#define LOG_BYTES	200	/* of bad input, in a log line */

static void list_page(struct informer *);
static void watch(struct informer *);
static void on_backoff(uv_timer_t *);

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
		it[i].rv = remote_rv_of(in->items[i]);
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
		cont = remote_query_escape(in->cont);
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
void
remote_informer_decoded(void *arg, struct remote_job *j)
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
			esc = remote_query_escape(fs[1]);
			q = util_printf("&fieldSelector=%s", esc);
			free(esc);
			return q;
		}
	return xstrdup("");
}

void
remote_informers_add(struct remote *rm, const struct remote_conf *conf)
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
		in->path = remote_collection_path(r, NULL);
		in->query = field_query(r, conf);
		uv_timer_init(rm->loop, &in->timer);
		in->timer.data = in;
	}
}

void
remote_informers_start(struct remote *rm)
{
	size_t i;

	for (i = 0; i < rm->ninf; i++) {
		rm->inf[i].timer.data = &rm->inf[i];
		uv_timer_start(&rm->inf[i].timer, on_backoff, 0, 0);
		rm->inf[i].state = I_WAIT;
		rm->inf[i].after_wait = I_LIST;
	}
}

void
remote_informer_clear(struct informer *in)
{
	drop_items(in);
	free(in->items);
	free(in->line);
	free(in->path);
	free(in->query);
}
