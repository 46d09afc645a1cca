/*
 * Watch fan-out.
 *
 * The hub subscribes to the store's durable events. Each resource has a
 * ring of its last events (references to the immutable object versions)
 * and a list of watchers. When an event arrives it goes into the ring, then
 * to every watcher of the resource whose filters match: the line
 * {"type":...,"object":...} is encoded once per (type, encoding) and the
 * same reference-counted buffer is queued on every connection.
 *
 * Filters see both the old and new version: an object that stops matching
 * a watcher's selector is sent to it as DELETED, one that starts matching as
 * ADDED, as the API server does. A watch resuming from revision R replays
 * the ring after R; if the ring no longer reaches back to R, the watch gets
 * 410 Expired. A watch that starts from the current state (sendInitialEvents)
 * gets an ADDED line per matching object, then for a watch-list, as
 * client-go's reflector streams its lists, a BOOKMARK at that state's
 * revision annotated k8s.io/initial-events-end: the list is complete. A watcher whose queued output passes the byte budget is
 * closed: it must re-list, and memory stays bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/table.h"
#include "api/watch.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

#define DEFAULT_HISTORY 10000
#define DEFAULT_BUDGET (16u << 20)
#define BOOKMARK_MS 5000
#define BATCH 64

struct wevent {
	enum store_event_type type;
	store_obj *obj;
	store_obj *old;
};

struct watcher;

struct wres {
	char *key;
	struct wevent *ring;
	size_t cap, head, n;      /* circular buffer */
	uint64_t known_since;      /* every change after this is in the ring */
	struct watcher *first;
};

struct watcher {
	watch_hub *hub;
	struct wres *wr;
	http_req *req;
	const resource *r;
	char *ns;
	char *name;                 /* metadata.name field fast path */
	selector *labels, *fields;
	int bookmarks, table, include;
	uint64_t start_rev;         /* events at or below are in the listing */
	uv_timer_t *timer;
	struct watcher *prev, *next;
	int closed;
	rbuf *batch[BATCH];         /* lines of the current fsync batch */
	int nbatch;
	int dirty;                  /* on the hub's dirty list */
};

struct watch_hub {
	uv_loop_t *loop;
	store *st;
	hmap *res;
	size_t history;
	size_t budget;
	uint64_t last_rev;
	uv_timer_t *bookmark;
	struct watcher **dirty;     /* watchers with batched lines */
	size_t ndirty, capdirty;
	struct watch_stats stats;
};

static const char *type_names[] = { "", "ADDED", "MODIFIED", "DELETED" };

static struct wres *
wres_get(watch_hub *h, const char *key)
{
	struct wres *w = hmap_get(h->res, key);

	if (w == NULL) {
		w = xcalloc(1, sizeof *w);
		w->key = xstrdup(key);
		w->cap = h->history;
		w->ring = xcalloc(w->cap, sizeof *w->ring);
		w->known_since = store_start_rev(h->st);
		hmap_put(h->res, w->key, w);
	}
	return w;
}

static void
timer_closed(uv_handle_t *h)
{
	free(h);
}

/* Unlink a watcher and finish its stream. */
static void
watcher_close(struct watcher *w)
{
	size_t i;

	if (w->closed)
		return;
	w->closed = 1;
	while (w->nbatch > 0)
		rbuf_unref(w->batch[--w->nbatch]);
	if (w->dirty) {
		for (i = 0; i < w->hub->ndirty; i++)
			if (w->hub->dirty[i] == w)
				w->hub->dirty[i] = NULL;
	}
	if (w->prev)
		w->prev->next = w->next;
	else
		w->wr->first = w->next;
	if (w->next)
		w->next->prev = w->prev;
	if (w->timer != NULL) {
		uv_timer_stop(w->timer);
		uv_close((uv_handle_t *)w->timer, timer_closed);
	}
	w->hub->stats.watchers--;
	http_stream_end(w->req);
	selector_free(w->labels);
	selector_free(w->fields);
	free(w->ns);
	free(w->name);
	free(w);
}

static void
peer_closed(http_req *req, void *arg)
{
	watcher_close(arg);
}

static void
timed_out(uv_timer_t *t)
{
	watcher_close(t->data);
}

/* Does this version pass the watcher's filters? */
static int
matches(const struct watcher *w, const store_obj *o, cJSON **tree)
{
	if (o == NULL)
		return 0;
	if (w->ns != NULL && strcmp(w->ns, o->ns) != 0)
		return 0;
	if (w->name != NULL && strcmp(w->name, o->name) != 0)
		return 0;
	if (w->labels != NULL && !selector_match_labels(w->labels, o->labels))
		return 0;
	if (w->fields != NULL) {
		if (*tree == NULL)
			*tree = store_obj_tree(o);
		if (!selector_match_fields(w->fields, *tree))
			return 0;
	}
	return 1;
}

/* Encode one event line in the watcher's encoding. */
static rbuf *
encode(const struct watcher *w, enum store_event_type type,
    const store_obj *o)
{
	char *s;
	size_t tl;
	rbuf *b;

	if (!w->table) {
		tl = strlen(type_names[type]);
		b = rbuf_new(NULL, o->json->len + tl + 22);
		b->len = (size_t)sprintf(b->data, "{\"type\":\"%s\",\"object\":",
		    type_names[type]);
		memcpy(b->data + b->len, o->json->data, o->json->len);
		b->len += o->json->len;
		b->data[b->len++] = '}';
		b->data[b->len++] = '\n';
		b->data[b->len] = '\0';
		return b;
	} else {
		cJSON *tree = store_obj_tree(o), *t, *ev;
		char rv[32];

		snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rev);
		t = table_new(w->r, rv);
		table_add_row(t, w->r, tree, w->include);
		cJSON_Delete(tree);
		ev = cJSON_CreateObject();
		cJSON_AddStringToObject(ev, "type", type_names[type]);
		cJSON_AddItemToObject(ev, "object", t);
		s = json_print(ev);
		cJSON_Delete(ev);
		tl = strlen(s);
		b = rbuf_new(s, tl + 1);
		b->data[tl] = '\n';
		free(s);
		return b;
	}
}

/*
 * Queue lines in one write (taking the references); close the watcher if
 * the connection is gone or it has fallen too far behind.
 */
static void
write_lines(struct watcher *w, rbuf **lines, int n)
{
	if (http_stream_write_many(w->req, lines, n) != 0) {
		watcher_close(w);
		return;
	}
	w->hub->stats.events_sent += n;
	if (http_stream_pending(w->req) > w->hub->budget) {
		log_warn("watch: closing slow watcher of %s (%zu bytes "
		    "queued)", w->r->store_key, http_stream_pending(w->req));
		w->hub->stats.closed_slow++;
		watcher_close(w);
	}
}

static void
send_line(struct watcher *w, rbuf *line)
{
	write_lines(w, &line, 1);
}

/* Write a watcher's batched lines in one go. */
static void
flush_watcher(struct watcher *w)
{
	int n = w->nbatch;

	w->nbatch = 0;
	if (n > 0)
		write_lines(w, w->batch, n);
}

/* Keep a line for the end of this fsync batch (one write per watcher). */
static void
batch_line(struct watcher *w, rbuf *line)
{
	watch_hub *h = w->hub;

	if (w->nbatch == BATCH)
		flush_watcher(w);
	if (w->closed) {
		rbuf_unref(line);
		return;
	}
	w->batch[w->nbatch++] = line;
	if (!w->dirty) {
		XGROW(h->dirty, h->capdirty, h->ndirty + 1);
		h->dirty[h->ndirty++] = w;
		w->dirty = 1;
	}
}

/* The end of a durable batch: flush every watcher that has lines. */
static void
on_flush(void *arg)
{
	watch_hub *h = arg;
	size_t i;

	for (i = 0; i < h->ndirty; i++) {
		struct watcher *w = h->dirty[i];

		if (w == NULL)
			continue;
		w->dirty = 0;
		flush_watcher(w);
	}
	h->ndirty = 0;
}

/*
 * Decide what (if anything) a watcher sees of an event, and send it, using
 * the per-event cache of encoded lines.
 */
static void
deliver(struct watcher *w, const struct wevent *e, rbuf *cache[2][4],
    cJSON **tnew, cJSON **told, int live)
{
	int mnew, mold;
	enum store_event_type type = e->type;
	const store_obj *o = e->obj;

	if (o->rev <= w->start_rev)
		return;
	mnew = matches(w, e->obj, tnew);
	mold = e->old != NULL && matches(w, e->old, told);
	if (type == STORE_DELETED) {
		if (!mnew && !mold)
			return;
	} else if (type == STORE_MODIFIED) {
		if (!mnew && !mold)
			return;
		if (mnew && !mold)
			type = STORE_ADDED;
		else if (!mnew && mold)
			type = STORE_DELETED;
	} else if (!mnew)
		return;
	if (cache[w->table][type] == NULL)
		cache[w->table][type] = encode(w, type, o);
	if (live)
		batch_line(w, rbuf_ref(cache[w->table][type]));
	else
		send_line(w, rbuf_ref(cache[w->table][type]));
}

/* A durable store event: remember it and fan it out. */
static void
on_event(void *arg, const store_event *se)
{
	watch_hub *h = arg;
	struct wres *wr = wres_get(h, se->obj->res);
	struct wevent *slot;
	struct watcher *w, *next;
	rbuf *cache[2][4] = { { 0 } };
	cJSON *tnew = NULL, *told = NULL;
	int i, j;

	if (wr->n == wr->cap) {
		slot = &wr->ring[wr->head];
		wr->known_since = slot->obj->rev;
		store_obj_unref(slot->obj);
		store_obj_unref(slot->old);
		wr->head = (wr->head + 1) % wr->cap;
		wr->n--;
	}
	slot = &wr->ring[(wr->head + wr->n) % wr->cap];
	wr->n++;
	slot->type = se->type;
	slot->obj = store_obj_ref(se->obj);
	slot->old = store_obj_ref(se->old);
	h->last_rev = se->obj->rev;
	for (w = wr->first; w != NULL; w = next) {
		next = w->next;
		deliver(w, slot, cache, &tnew, &told, 1);
	}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 4; j++)
			rbuf_unref(cache[i][j]);
	cJSON_Delete(tnew);
	cJSON_Delete(told);
}

/*
 * A BOOKMARK line: an empty object of the kind that carries only the
 * revision and, where it ends a watch-list's initial events, the
 * k8s.io/initial-events-end annotation; in a Table watch a one-row Table
 * of that object (its row's object PartialObjectMetadata when annotated),
 * as kube-apiserver converts every event's object.
 */
static rbuf *
encode_bookmark(const struct watcher *w, uint64_t rev, int end)
{
	char buf[512], rv[32];
	cJSON *obj, *md, *t, *ev;
	char *s;
	size_t len;
	rbuf *b;

	snprintf(rv, sizeof rv, "%llu", (unsigned long long)rev);
	if (!w->table) {
		int n = snprintf(buf, sizeof buf, "{\"type\":\"BOOKMARK\","
		    "\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
		    "\"metadata\":{\"resourceVersion\":\"%s\"%s}}}\n",
		    w->r->kind, w->r->gv, rv, end ? ",\"annotations\":"
		    "{\"k8s.io/initial-events-end\":\"true\"}" : "");

		return rbuf_new(buf, (size_t)n);
	}
	obj = cJSON_CreateObject();
	cJSON_AddStringToObject(obj, "kind", w->r->kind);
	cJSON_AddStringToObject(obj, "apiVersion", w->r->gv);
	md = cJSON_AddObjectToObject(obj, "metadata");
	cJSON_AddStringToObject(md, "resourceVersion", rv);
	if (end)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(md,
		    "annotations"), "k8s.io/initial-events-end", "true");
	t = table_new(w->r, rv);
	table_add_row(t, w->r, obj, end && w->include == TABLE_OBJECT ?
	    TABLE_METADATA : (enum table_include)w->include);
	cJSON_Delete(obj);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "BOOKMARK");
	cJSON_AddItemToObject(ev, "object", t);
	s = json_print(ev);
	cJSON_Delete(ev);
	len = strlen(s);
	b = rbuf_new(s, len + 1);
	b->data[len] = '\n';
	free(s);
	return b;
}

static void
send_bookmark(struct watcher *w, uint64_t rev)
{
	send_line(w, encode_bookmark(w, rev, 0));
}

static int
bookmark_res(const char *key, void *value, void *arg)
{
	struct wres *wr = value;
	watch_hub *h = arg;
	struct watcher *w, *next;

	(void)key;
	for (w = wr->first; w != NULL; w = next) {
		next = w->next;
		if (w->bookmarks && h->last_rev > w->start_rev)
			send_bookmark(w, h->last_rev);
	}
	return 0;
}

static void
bookmark_tick(uv_timer_t *t)
{
	watch_hub *h = t->data;

	hmap_each(h->res, bookmark_res, h);
}

watch_hub *
watch_hub_new(uv_loop_t *loop, store *st)
{
	watch_hub *h = xcalloc(1, sizeof *h);

	h->loop = loop;
	h->st = st;
	h->res = hmap_new();
	h->history = DEFAULT_HISTORY;
	h->budget = DEFAULT_BUDGET;
	h->last_rev = store_rev(st);
	store_subscribe(st, on_event, h);
	store_subscribe_flush(st, on_flush, h);
	h->bookmark = xmalloc(sizeof *h->bookmark);
	uv_timer_init(loop, h->bookmark);
	h->bookmark->data = h;
	uv_timer_start(h->bookmark, bookmark_tick, BOOKMARK_MS, BOOKMARK_MS);
	uv_unref((uv_handle_t *)h->bookmark);
	return h;
}

static int
free_wres(const char *key, void *value, void *arg)
{
	struct wres *wr = value;
	size_t i;

	(void)key;
	(void)arg;
	while (wr->first != NULL)
		watcher_close(wr->first);
	for (i = 0; i < wr->n; i++) {
		store_obj_unref(wr->ring[(wr->head + i) % wr->cap].obj);
		store_obj_unref(wr->ring[(wr->head + i) % wr->cap].old);
	}
	free(wr->ring);
	free(wr->key);
	free(wr);
	return 0;
}

void
watch_hub_free(watch_hub *h)
{
	if (h == NULL)
		return;
	/* The timer outlives the hub until its close callback frees it. */
	uv_timer_stop(h->bookmark);
	uv_close((uv_handle_t *)h->bookmark, timer_closed);
	hmap_each(h->res, free_wres, NULL);
	hmap_free(h->res);
	free(h->dirty);
	free(h);
}

void
watch_set_history(watch_hub *h, int events)
{
	h->history = events > 0 ? (size_t)events : DEFAULT_HISTORY;
}

void
watch_get_stats(const watch_hub *h, struct watch_stats *s)
{
	*s = h->stats;
}

static void
respond_status(http_req *req, cJSON *st)
{
	char *s = json_print(st);

	http_respond(req, status_code(st), "application/json", s, strlen(s));
	free(s);
	cJSON_Delete(st);
}

/*
 * The one ERROR event kube-apiserver's watch cache sends when the state
 * asked for is newer than it has: a 504 Timeout Status the client retries
 * after a second (client-go's watch-list then starts again from "").
 */
static void
too_large(watch_hub *h, http_req *req, struct watch_opts *o)
{
	cJSON *st = status_error(504, "Timeout", "Timeout: Too large "
	    "resource version: %llu, current: %llu",
	    (unsigned long long)o->min_rev,
	    (unsigned long long)store_rev(h->st));
	cJSON *d = json_obj(st, "details"), *cause, *ev;
	char *s;

	cause = cJSON_CreateObject();
	cJSON_AddStringToObject(cause, "reason", "ResourceVersionTooLarge");
	cJSON_AddStringToObject(cause, "message", "Too large resource version");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(d, "causes"), cause);
	cJSON_AddNumberToObject(d, "retryAfterSeconds", 1);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", "ERROR");
	cJSON_AddItemToObject(ev, "object", st);
	s = json_print(ev);
	cJSON_Delete(ev);
	selector_free(o->labels);
	selector_free(o->fields);
	http_stream_begin(req, 200, "application/json");
	http_stream_write_copy(req, s, strlen(s));
	http_stream_write_copy(req, "\n", 1);
	http_stream_end(req);
	free(s);
}

int
watch_open(watch_hub *h, http_req *req, struct watch_opts *o)
{
	struct wres *wr = wres_get(h, o->r->store_key);
	struct watcher *w;
	const char *name;
	size_t i;

	if (o->initial && o->min_rev > store_rev(h->st)) {
		too_large(h, req, o);
		return -1;
	}
	if (!o->initial && o->rv < wr->known_since) {
		h->stats.expired++;
		selector_free(o->labels);
		selector_free(o->fields);
		respond_status(req, status_error(410, "Expired",
		    "too old resource version: %llu (%llu)",
		    (unsigned long long)o->rv,
		    (unsigned long long)wr->known_since));
		return -1;
	}
	w = xcalloc(1, sizeof *w);
	w->hub = h;
	w->wr = wr;
	w->req = req;
	w->r = o->r;
	w->ns = o->ns ? xstrdup(o->ns) : NULL;
	w->labels = o->labels && !selector_empty(o->labels) ? o->labels : NULL;
	if (w->labels == NULL)
		selector_free(o->labels);
	w->fields = o->fields && !selector_empty(o->fields) ? o->fields : NULL;
	if (w->fields == NULL)
		selector_free(o->fields);
	name = w->fields ? selector_field_equals(w->fields, "metadata.name") :
	    NULL;
	w->name = name ? xstrdup(name) : NULL;
	w->bookmarks = o->bookmarks;
	w->table = o->table;
	w->include = o->table_include;
	w->next = wr->first;
	if (wr->first)
		wr->first->prev = w;
	wr->first = w;
	h->stats.watchers++;
	http_req_on_close(req, peer_closed, w);
	http_stream_begin(req, 200, "application/json");
	if (o->timeout_s > 0) {
		w->timer = xmalloc(sizeof *w->timer);
		uv_timer_init(h->loop, w->timer);
		w->timer->data = w;
		uv_timer_start(w->timer, timed_out,
		    (uint64_t)o->timeout_s * 1000, 0);
	}
	if (o->initial) {
		/* Synthetic ADDED for every current object. */
		store_obj *const *objs;
		size_t n = store_list(h->st, o->r->store_key, w->ns, &objs);
		rbuf **lines = xcalloc(n + 1, sizeof *lines);
		size_t nl = 0;

		w->start_rev = store_rev(h->st);
		for (i = 0; i < n; i++) {
			cJSON *t = NULL;

			if (matches(w, objs[i], &t))
				lines[nl++] = encode(w, STORE_ADDED, objs[i]);
			cJSON_Delete(t);
		}
		for (i = 0; i < nl && !w->closed; i++)
			send_line(w, lines[i]);
		for (; i < nl; i++)
			rbuf_unref(lines[i]);
		free(lines);
		if (o->initial_end && !w->closed) {
			h->stats.lists++;
			send_line(w, encode_bookmark(w, w->start_rev, 1));
		}
		return 0;
	}
	/* Replay what the ring holds after rv. */
	w->start_rev = o->rv;
	for (i = 0; i < wr->n && !w->closed; i++) {
		struct wevent *e = &wr->ring[(wr->head + i) % wr->cap];
		rbuf *cache[2][4] = { { 0 } };
		cJSON *tn = NULL, *to = NULL;
		int a, b;

		if (e->obj->rev <= o->rv)
			continue;
		deliver(w, e, cache, &tn, &to, 0);
		for (a = 0; a < 2; a++)
			for (b = 0; b < 4; b++)
				rbuf_unref(cache[a][b]);
		cJSON_Delete(tn);
		cJSON_Delete(to);
	}
	return 0;
}
