/*
 * The etcd-backed store (store.h): a mirror (store_mirror.c) filled from
 * etcd, and the backend its writes go to (store_int.h).
 *
 * Open lists PREFIX/ page by page at one revision, then one watch of the
 * whole prefix from the revision after: every object of every resource
 * comes in etcd's revision order on one stream, as the embedded store's
 * events do. A value that is not a JSON object of its resource's kind is
 * reported once (its key and revision) and skipped.
 *
 * Writes are staged and committed as transactions (etcdkv_txn) whose
 * compares are the mod_revisions the cache held: a stale cache cannot
 * overwrite a newer version, it gets a conflict and its caller tries
 * again once the cache has caught up. The value written is the object
 * without metadata.resourceVersion, which etcd's mod_revision is.
 *
 * Waiting for a revision: committed writes come back on the watch; a
 * consistent read asks etcd its revision first. Should no event under
 * the prefix reach that revision (a write elsewhere in etcd), a count of
 * the keys changed since settles it after a moment.
 *
 * Nothing here blocks the loop once it runs but the synchronous commit
 * (store_batch_commit_sync, and a write outside a batch): the listing
 * at open is before the loop; a listing again (the watch fell below the
 * compaction), the settling count and the compaction round are calls
 * answered through callbacks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/etcdkv.h"
#include "store/store_int.h"

/* Operations in one etcd transaction: below etcd's --max-txn-ops 128. */
#define TXN_MAX_OPS	100
/* A consistent read waits this long for the watch before counting. */
#define SYNC_SETTLE_MS	200

struct staged {
	int del;
	char *ekey;
	size_t eklen;
	char *value;
	size_t vlen;
	int64_t expect;
	char *res, *ns, *name;
};

struct waiter {
	uint64_t rev;
	store_durable_cb cb;
	void *arg;
};

struct commit {
	store *st;
	struct staged *ops;
	size_t nops, next;	/* chunks go one after another */
	store_commit_fn done;
	void *arg;
	int outcome;
	uint64_t rev;
	char *err;
};

struct etcd_store {
	store *st;
	etcdkv *kv;
	const struct store_etcd_layout *lay;
	char *prefix;		/* "/registry/" */
	size_t plen;
	char *end;		/* the prefix's range end */
	etcdkv_watch *watch;
	uint64_t applied;	/* the cache has every change up to here */
	int batch;		/* staging */
	struct staged *ops;
	size_t nops, capops;
	struct waiter *waiters;
	size_t nwaiters, capwaiters;
	uint64_t sync_target;	/* the largest a consistent read waits on */
	uv_timer_t settle;
	uint64_t settling;	/* the target a count under way settles, or 0 */
	hmap *reported;		/* bad keys: "key" -> mod_revision */
	uv_timer_t compact;
	unsigned compaction_s;
	int64_t compact_next;	/* the revision to compact next time */
	int64_t compact_version;	/* of the compaction key, last seen */
	int compacting;		/* a round under way */
	uv_timer_t relist;	/* listing again after a failure */
	int relisting;		/* a listing under way */
	int64_t compact_now;	/* the revision that round read at */
	struct store_backend be;
	int closed;		/* timers closed */
};

static struct etcd_store *
etcd_of(const store *st)
{
	return st->backend != NULL ? st->backend->ctx : NULL;
}

int
store_is_etcd(const store *st)
{
	return etcd_of(st) != NULL;
}

/* ---- keys and values ---- */

/* The etcd key of res/ns/name (malloc'd), or NULL. */
static char *
ekey_of(struct etcd_store *e, const char *res, const char *ns,
    const char *name, size_t *len)
{
	char path[1024];

	char *k;

	if (e->lay->join(res, ns, name, path, sizeof path) != 0)
		return NULL;
	k = util_printf("%s%s", e->prefix, path);
	*len = strlen(k);
	return k;
}

struct reported {
	int64_t rev;
	char key[];
};

static void
report(struct etcd_store *e, const char *key, int64_t rev, const char *why)
{
	struct reported *r = hmap_get(e->reported, key);

	if (r != NULL && r->rev == rev)
		return;
	if (r == NULL) {
		r = xmalloc(sizeof *r + strlen(key) + 1);
		strcpy(r->key, key);
		hmap_put(e->reported, r->key, r);
	}
	r->rev = rev;
	log_warn("store: etcd: %s at revision %lld skipped: %s", key,
	    (long long)rev, why);
}

/* Split an etcd key into res/ns/name; -1 (reported) when not an object's. */
static int
split_key(struct etcd_store *e, const char *key, size_t klen, int64_t rev,
    char *res, char *ns, char *name)
{
	if (klen < e->plen || memcmp(key, e->prefix, e->plen) != 0)
		return -1;
	/* volray's own state (volray.io/pki) is no object. */
	if (strncmp(key + e->plen, "volray.io/", 10) == 0 ||
	    strcmp(key + e->plen, "compact_rev_key") == 0)
		return -1;
	if (memchr(key, '\0', klen) != NULL || e->lay->split(key + e->plen,
	    res, 256, ns, 256, name, 256) != 0) {
		report(e, key, rev, "not an object's key");
		return -1;
	}
	return 0;
}

/* The tree of a value, its resourceVersion set to rev; NULL (reported)
   when it is no object of res's kind. */
static cJSON *
tree_of(struct etcd_store *e, const char *key, const char *res,
    const char *value, size_t vlen, int64_t rev)
{
	cJSON *t = cJSON_ParseWithLength(value, vlen);
	const char *want = e->lay->kind_of(res), *kind;

	if (!cJSON_IsObject(t)) {
		report(e, key, rev, "not a JSON object");
		cJSON_Delete(t);
		return NULL;
	}
	kind = json_str(t, "kind");
	if (want != NULL && (kind == NULL || strcmp(kind, want) != 0)) {
		char why[160];

		snprintf(why, sizeof why, "kind %s, not %s", kind ? kind :
		    "(none)", want);
		report(e, key, rev, why);
		cJSON_Delete(t);
		return NULL;
	}
	store_set_rv(t, (uint64_t)rev);
	return t;
}

/* ---- waiting for revisions ---- */

static void
release(struct etcd_store *e)
{
	size_t i = 0;

	while (i < e->nwaiters) {
		struct waiter w = e->waiters[i];

		if (w.rev > e->applied) {
			i++;
			continue;
		}
		e->waiters[i] = e->waiters[--e->nwaiters];
		w.cb(w.arg);
	}
}

static void
wait_rev(struct etcd_store *e, uint64_t rev, store_durable_cb cb, void *arg)
{
	if (rev <= e->applied) {
		cb(arg);
		return;
	}
	XGROW(e->waiters, e->capwaiters, e->nwaiters + 1);
	e->waiters[e->nwaiters].rev = rev;
	e->waiters[e->nwaiters].cb = cb;
	e->waiters[e->nwaiters].arg = arg;
	e->nwaiters++;
}

/* The cache holds etcd's writes up to rev: answer who waited for it. */
static void
note_applied(struct etcd_store *e, uint64_t rev)
{
	if (rev <= e->applied)
		return;
	e->applied = rev;
	if (rev > e->st->rev)
		e->st->rev = rev;
	release(e);
}

static void
be_when(store *st, uint64_t rev, store_durable_cb cb, void *arg)
{
	wait_rev(etcd_of(st), rev, cb, arg);
}

/* ---- the watch ---- */

static void
on_event(void *arg, const struct etcdkv_kv *kv, const struct etcdkv_kv *prev)
{
	struct etcd_store *e = arg;
	char res[256], ns[256], name[256];
	cJSON *t;

	if (split_key(e, kv->key, kv->klen, kv->mod_rev, res, ns, name) != 0)
		goto done;
	if (kv->value != NULL) {
		if ((t = tree_of(e, kv->key, res, kv->value, kv->vlen,
		    kv->mod_rev)) != NULL) {
			store_mirror_put_tree(e->st, res, ns, name, t,
			    (uint64_t)kv->mod_rev);
			cJSON_Delete(t);
		}
	} else {
		char *last = NULL;

		/* The final state: the value before, at the deletion. */
		if (prev != NULL && prev->value != NULL && (t = cJSON_ParseWithLength(
		    prev->value, prev->vlen)) != NULL) {
			if (cJSON_IsObject(t)) {
				store_set_rv(t, (uint64_t)kv->mod_rev);
				last = json_print(t);
			}
			cJSON_Delete(t);
		}
		store_mirror_delete(e->st, res, ns, name, last, last ?
		    strlen(last) : 0, (uint64_t)kv->mod_rev);
		free(last);
	}
done:
	note_applied(e, (uint64_t)kv->mod_rev);
}

static void
on_progress(void *arg, int64_t rev)
{
	note_applied(arg, (uint64_t)rev);
}

static void relist_tick(uv_timer_t *);

static void
on_end(void *arg, int64_t compacted, const char *err)
{
	struct etcd_store *e = arg;

	/* Below etcd's compaction: the cache can no longer follow the
	   changes one by one. Lose nothing: list again. */
	log_error("store: etcd: the watch ended (%s); the cache is listed "
	    "again", compacted ? "compacted" : err ? err : "?");
	etcdkv_watch_stop(e->watch);
	e->watch = NULL;
	relist_tick(&e->relist);
}

/* ---- listing ---- */

struct run {
	hmap *seen;		/* resources listed */
	char res[256];
	struct store_mirror_item *items;
	cJSON **trees;
	char **strs;
	size_t n, cap;
};

static void
run_flush(struct etcd_store *e, struct run *r, uint64_t rev)
{
	size_t i;

	if (r->res[0] != '\0') {
		store_mirror_replace(e->st, r->res, r->items, r->n, rev);
		if (hmap_get(r->seen, r->res) == NULL) {
			char *k = xstrdup(r->res);

			hmap_put(r->seen, k, k);
		}
	}
	for (i = 0; i < r->n; i++) {
		cJSON_Delete(r->trees[i]);
		free(r->strs[i]);
	}
	r->n = 0;
	r->res[0] = '\0';
}

static void
run_add(struct run *r, const char *ns, const char *name, cJSON *t,
    int64_t rev)
{
	size_t nl = strlen(ns), ml = strlen(name);
	char *s;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->items = xreallocarray(r->items, r->cap, sizeof *r->items);
		r->trees = xreallocarray(r->trees, r->cap, sizeof *r->trees);
		r->strs = xreallocarray(r->strs, r->cap, sizeof *r->strs);
	}
	s = xmalloc(nl + ml + 2);
	memcpy(s, ns, nl + 1);
	memcpy(s + nl + 1, name, ml + 1);
	r->strs[r->n] = s;
	r->trees[r->n] = t;
	memset(&r->items[r->n], 0, sizeof r->items[r->n]);
	r->items[r->n].ns = s;
	r->items[r->n].name = s + nl + 1;
	r->items[r->n].tree = t;
	r->items[r->n].rv = (uint64_t)rev;
	r->n++;
}

struct vanished {
	store *st;
	hmap *seen;
	char **res;
	size_t n, cap;
};

static void
collect_vanished(const char *res, size_t n, void *arg)
{
	struct vanished *v = arg;

	(void)n;
	if (hmap_get(v->seen, res) == NULL) {
		XGROW(v->res, v->cap, v->n + 1);
		v->res[v->n++] = xstrdup(res);
	}
}

static int
free_value(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 0;
}

/* After a listing at rev (0: failed): a resource the cache holds that
   etcd no longer has is emptied (its objects were deleted meanwhile). */
static void
list_done(struct etcd_store *e, struct run *r, uint64_t rev)
{
	struct vanished v = { e->st, r->seen, NULL, 0, 0 };
	size_t i;

	if (rev > 0)
		store_each_res(e->st, collect_vanished, &v);
	for (i = 0; i < v.n; i++) {
		store_mirror_replace(e->st, v.res[i], NULL, 0, rev);
		free(v.res[i]);
	}
	free(v.res);
	hmap_each(r->seen, free_value, NULL);
	hmap_free(r->seen);
	free(r->items);
	free(r->trees);
	free(r->strs);
}

/* A listing under way: the resource being gathered, where the next page
   starts, the revision every page is read at. */
struct listing {
	struct etcd_store *e;
	struct run r;
	char *from;
	size_t flen;
	int64_t at;
	size_t objs;
	uint64_t t0;
};

static void
listing_init(struct etcd_store *e, struct listing *l)
{
	memset(l, 0, sizeof *l);
	l->e = e;
	l->r.seen = hmap_new();
	l->from = xstrdup(e->prefix);
	l->flen = e->plen;
	l->t0 = util_usec();
}

static void
listing_query(const struct listing *l, struct etcdkv_range *q)
{
	memset(q, 0, sizeof *q);
	q->key = l->from;
	q->klen = l->flen;
	q->end = l->e->end;
	q->elen = l->e->plen;
	q->rev = l->at;
	q->limit = 10000;
}

/* One page read at rev into the listing (which takes kvs); whether
   another page follows. */
static int
listing_page(struct listing *l, struct etcdkv_kv *kvs, size_t n,
    int64_t rev, int more)
{
	struct etcd_store *e = l->e;
	char res[256], ns[256], name[256];
	size_t i;

	if (l->at == 0)
		l->at = rev;
	for (i = 0; i < n; i++) {
		cJSON *t;

		if (split_key(e, kvs[i].key, kvs[i].klen, kvs[i].mod_rev,
		    res, ns, name) != 0 || (t = tree_of(e, kvs[i].key, res,
		    kvs[i].value, kvs[i].vlen, kvs[i].mod_rev)) == NULL)
			continue;
		if (strcmp(res, l->r.res) != 0) {
			run_flush(e, &l->r, (uint64_t)l->at);
			snprintf(l->r.res, sizeof l->r.res, "%s", res);
		}
		run_add(&l->r, ns, name, t, kvs[i].mod_rev);
		l->objs++;
	}
	if (n > 0) {
		/* The next page starts after the last key. */
		free(l->from);
		l->flen = kvs[n - 1].klen + 1;
		l->from = xmalloc(l->flen);
		memcpy(l->from, kvs[n - 1].key, l->flen - 1);
		l->from[l->flen - 1] = '\0';
	}
	etcdkv_kvs_free(kvs, n);
	return more && n > 0;
}

/* The listing's end: its revision, or -1 when it failed (what it
   gathered of the resource it was on is dropped). */
static int64_t
listing_end(struct listing *l, int failed)
{
	struct etcd_store *e = l->e;

	free(l->from);
	if (failed) {
		l->r.res[0] = '\0';
		run_flush(e, &l->r, 0);
		list_done(e, &l->r, 0);
		return -1;
	}
	run_flush(e, &l->r, (uint64_t)l->at);
	list_done(e, &l->r, (uint64_t)l->at);
	log_info("store: etcd: %zu objects under %s at revision %lld "
	    "(%.0f ms)", l->objs, e->prefix, (long long)l->at,
	    (double)(util_usec() - l->t0) / 1000);
	return l->at;
}

/*
 * Read every object under the prefix at one revision into the cache
 * (replacing what it held of each resource), blocking: at open, before
 * the loop runs. The revision, or -1.
 */
static int64_t
list_all(struct etcd_store *e, char **cause)
{
	struct etcdkv_range q;
	struct etcdkv_kv *kvs;
	struct listing l;
	size_t n;
	int64_t rev;
	int more;

	listing_init(e, &l);
	do {
		listing_query(&l, &q);
		if (etcdkv_range_sync(e->kv, &q, &kvs, &n, &rev, &more,
		    cause) != 0)
			return listing_end(&l, 1);
	} while (listing_page(&l, kvs, n, rev, more));
	return listing_end(&l, 0);
}

static void start_watch(struct etcd_store *, int64_t from);
static void relist_page(struct listing *);

/* A page of a re-listing: the next, the watch from after it, or, when
   etcd could not answer, the listing again in a second. */
static void
relisted(void *arg, struct etcdkv_kv *kvs, size_t n, int64_t rev, int more,
    const char *err)
{
	struct listing *l = arg;
	struct etcd_store *e = l->e;
	int64_t at;

	if (rev < 0) {
		log_error("store: etcd: listing %s: %s", e->prefix, err);
		listing_end(l, 1);
		free(l);
		e->relisting = 0;
		uv_timer_start(&e->relist, relist_tick, 1000, 0);
		return;
	}
	if (listing_page(l, kvs, n, rev, more)) {
		relist_page(l);
		return;
	}
	at = listing_end(l, 0);
	free(l);
	e->relisting = 0;
	note_applied(e, (uint64_t)at);
	start_watch(e, at + 1);
}

static void
relist_page(struct listing *l)
{
	struct etcdkv_range q;

	listing_query(l, &q);
	etcdkv_range(l->e->kv, &q, relisted, l);
}

/* List the prefix again without blocking (the watch fell below etcd's
   compaction); the watch starts again from after the listing. */
static void
relist_tick(uv_timer_t *t)
{
	struct etcd_store *e = t->data;
	struct listing *l;

	if (e->relisting)
		return;
	e->relisting = 1;
	l = xmalloc(sizeof *l);
	listing_init(e, l);
	relist_page(l);
}

static void
start_watch(struct etcd_store *e, int64_t from)
{
	struct etcdkv_watch_cb cb = { on_event, on_progress, on_end, e };

	e->watch = etcdkv_watch_start(e->kv, e->prefix, e->plen, e->end,
	    e->plen, from, &cb);
}

/* ---- staging and committing ---- */

static void
staged_free(struct staged *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ops[i].ekey);
		free(ops[i].value);
		free(ops[i].res);
		free(ops[i].ns);
		free(ops[i].name);
	}
	free(ops);
}

/* The bytes etcd keeps of obj: all but metadata.resourceVersion. */
static char *
value_of(cJSON *obj, size_t *len)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON *rv = md ? cJSON_DetachItemFromObjectCaseSensitive(md,
	    "resourceVersion") : NULL;
	char *s = json_print(obj);

	if (rv != NULL)
		cJSON_AddItemToObject(md, "resourceVersion", rv);
	*len = strlen(s);
	return s;
}

static void
stage(struct etcd_store *e, const char *res, const char *ns,
    const char *name, cJSON *obj, int del)
{
	const store_obj *cur = store_get(e->st, res, ns, name);
	struct staged *op = NULL;
	size_t eklen, i;
	char *ek = ekey_of(e, res, ns, name, &eklen);

	if (ek == NULL) {
		log_error("store: etcd: %s has no key layout; %s/%s not "
		    "written", res, ns, name);
		return;
	}
	for (i = 0; i < e->nops; i++)
		if (strcmp(e->ops[i].ekey, ek) == 0) {
			/* Written twice in one batch: the last wins, guarded
			   by what the cache held before the first. */
			op = &e->ops[i];
			free(op->value);
			op->value = NULL;
			free(ek);
			break;
		}
	if (op == NULL) {
		XGROW(e->ops, e->capops, e->nops + 1);
		op = &e->ops[e->nops++];
		memset(op, 0, sizeof *op);
		op->ekey = ek;
		op->eklen = eklen;
		op->expect = cur != NULL ? (int64_t)cur->rev : 0;
		op->res = xstrdup(res);
		op->ns = xstrdup(ns);
		op->name = xstrdup(name);
	}
	op->del = del;
	store_set_rv(obj, STORE_REV_PENDING);
	if (!del)
		op->value = value_of(obj, &op->vlen);
}

void
store_batch_begin(store *st)
{
	struct etcd_store *e = etcd_of(st);

	if (e != NULL)
		e->batch = 1;
}

size_t
store_batch_size(const store *st)
{
	struct etcd_store *e = etcd_of(st);

	return e != NULL ? e->nops : 0;
}

int
store_batch_staged(const store *st, const char *res, const char *ns,
    const char *name)
{
	struct etcd_store *e = etcd_of(st);
	size_t i;

	if (e == NULL)
		return -1;
	for (i = e->nops; i-- > 0;)
		if (strcmp(e->ops[i].name, name) == 0 &&
		    strcmp(e->ops[i].ns, ns) == 0 &&
		    strcmp(e->ops[i].res, res) == 0)
			return e->ops[i].del ? 0 : 1;
	return -1;
}

void
store_batch_abort(store *st)
{
	struct etcd_store *e = etcd_of(st);

	if (e == NULL)
		return;
	staged_free(e->ops, e->nops);
	e->ops = NULL;
	e->nops = e->capops = 0;
	e->batch = 0;
}

/* Take the staged writes out of the store. */
static struct staged *
take(struct etcd_store *e, size_t *n)
{
	struct staged *ops = e->ops;

	*n = e->nops;
	e->ops = NULL;
	e->nops = e->capops = 0;
	e->batch = 0;
	return ops;
}

static size_t
txn_ops(const struct staged *s, size_t n, struct etcdkv_op *ops)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ops[i].del = s[i].del;
		ops[i].key = s[i].ekey;
		ops[i].klen = s[i].eklen;
		ops[i].value = s[i].value;
		ops[i].vlen = s[i].vlen;
		ops[i].expect_mod = s[i].expect;
	}
	return n;
}

static void commit_next(struct commit *);

static void
commit_finish(void *arg)
{
	struct commit *c = arg;

	if (c->done != NULL)
		c->done(c->arg, c->outcome, c->rev, c->err);
	else if (c->outcome != STORE_COMMIT_OK)
		log_warn("store: etcd: a write was lost: %s", c->err ?
		    c->err : "conflict");
	staged_free(c->ops, c->nops);
	free(c->err);
	free(c);
}

static void
commit_done(void *arg, int outcome, int64_t rev, const char *err)
{
	struct commit *c = arg;
	struct etcd_store *e = etcd_of(c->st);

	c->outcome = outcome;
	c->rev = rev > 0 ? (uint64_t)rev : 0;
	if (outcome == ETCDKV_ERROR) {
		c->err = xstrdup(err ? err : "etcd: failed");
		commit_finish(c);
		return;
	}
	if (outcome == ETCDKV_OK && c->next < c->nops) {
		commit_next(c);
		return;
	}
	/* Answer once the cache holds what etcd had: the write, or the
	   newer version that made it conflict. */
	wait_rev(e, c->rev, commit_finish, c);
}

static void
commit_next(struct commit *c)
{
	struct etcd_store *e = etcd_of(c->st);
	size_t n = c->nops - c->next;
	struct etcdkv_op ops[TXN_MAX_OPS];

	if (n > TXN_MAX_OPS)
		n = TXN_MAX_OPS;
	txn_ops(c->ops + c->next, n, ops);
	c->next += n;
	etcdkv_txn(e->kv, ops, n, commit_done, c);
}

void
store_batch_commit(store *st, store_commit_fn done, void *arg)
{
	struct etcd_store *e = etcd_of(st);
	struct commit *c;

	if (e == NULL || e->nops == 0) {
		if (e != NULL)
			e->batch = 0;
		if (done != NULL)
			done(arg, STORE_COMMIT_OK, 0, NULL);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->st = st;
	c->ops = take(e, &c->nops);
	c->done = done;
	c->arg = arg;
	commit_next(c);
}

/* Read one key again from etcd into the cache (after a conflict). */
static void
refresh(struct etcd_store *e, const struct staged *s, int64_t at)
{
	struct etcdkv_range q;
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t rev;
	int more;
	char *err = NULL;
	cJSON *t;

	memset(&q, 0, sizeof q);
	q.key = s->ekey;
	q.klen = s->eklen;
	if (etcdkv_range_sync(e->kv, &q, &kvs, &n, &rev, &more, &err) != 0) {
		log_warn("store: etcd: reading %s: %s", s->ekey, err);
		free(err);
		return;
	}
	if (n == 0)
		store_mirror_provisional(e->st, s->res, s->ns, s->name, NULL,
		    (uint64_t)(at > rev ? at : rev));
	else if ((t = tree_of(e, s->ekey, s->res, kvs[0].value, kvs[0].vlen,
	    kvs[0].mod_rev)) != NULL) {
		store_mirror_provisional(e->st, s->res, s->ns, s->name, t,
		    (uint64_t)kvs[0].mod_rev);
		cJSON_Delete(t);
	}
	etcdkv_kvs_free(kvs, n);
}

int
store_batch_commit_sync(store *st, uint64_t *rev, char **cause)
{
	struct etcd_store *e = etcd_of(st);
	struct etcdkv_op ops[TXN_MAX_OPS];
	struct staged *s;
	size_t n, i, at = 0, k;
	int64_t r = 0;
	int out = ETCDKV_OK;

	*cause = NULL;
	*rev = 0;
	if (e == NULL)
		return STORE_COMMIT_OK;
	s = take(e, &n);
	while (at < n && out == ETCDKV_OK) {
		k = n - at > TXN_MAX_OPS ? TXN_MAX_OPS : n - at;
		txn_ops(s + at, k, ops);
		out = etcdkv_txn_sync(e->kv, ops, k, &r, cause);
		if (out == ETCDKV_OK) {
			for (i = at; i < at + k; i++) {
				cJSON *t = NULL;

				if (!s[i].del)
					t = tree_of(e, s[i].ekey, s[i].res,
					    s[i].value, s[i].vlen, r);
				if (s[i].del || t != NULL)
					store_mirror_provisional(st, s[i].res,
					    s[i].ns, s[i].name, t,
					    (uint64_t)r);
				cJSON_Delete(t);
			}
			*rev = (uint64_t)r;
		} else if (out == ETCDKV_CONFLICT)
			for (i = at; i < at + k; i++)
				refresh(e, &s[i], r);
		at += k;
	}
	staged_free(s, n);
	return out == ETCDKV_OK ? STORE_COMMIT_OK : out == ETCDKV_CONFLICT ?
	    STORE_COMMIT_CONFLICT : STORE_COMMIT_ERROR;
}

/* store_put and store_delete on this store. */
static uint64_t
be_put(store *st, const char *res, const char *ns, const char *name,
    cJSON *obj, int del)
{
	struct etcd_store *e = etcd_of(st);
	uint64_t rev;
	char *err = NULL;
	int rc;

	if (e->batch) {
		stage(e, res, ns, name, obj, del);
		return STORE_REV_PENDING;
	}
	e->batch = 1;
	stage(e, res, ns, name, obj, del);
	if ((rc = store_batch_commit_sync(st, &rev, &err)) != STORE_COMMIT_OK) {
		log_warn("store: etcd: %s %s/%s/%s: %s", del ? "delete" :
		    "write", res, ns, name, rc == STORE_COMMIT_CONFLICT ?
		    "changed meanwhile; not written" : err);
		free(err);
		return 0;
	}
	store_set_rv(obj, rev);
	return rev;
}

/* ---- consistent reads ---- */

struct sync_req {
	struct etcd_store *e;
	store_durable_cb cb;
	void *arg;
};

static void settle(uv_timer_t *);

/* The count of the keys changed since what the cache held: none, and
   the cache has every change up to the target asked about. */
static void
settled(void *arg, struct etcdkv_kv *kvs, size_t n, int64_t rev, int more,
    const char *err)
{
	struct etcd_store *e = arg;
	uint64_t target = e->settling;

	(void)more;
	(void)err;
	etcdkv_kvs_free(kvs, 0);
	e->settling = 0;
	if (rev >= 0 && n == 0)
		note_applied(e, target);
	if (e->sync_target > e->applied &&
	    !uv_is_active((uv_handle_t *)&e->settle))
		uv_timer_start(&e->settle, settle, SYNC_SETTLE_MS, 0);
}

/* The watch has not reached the revision a read waits on: if no key
   under the prefix changed after what the cache holds, it has all.
   Asked without blocking; one count at a time. */
static void
settle(uv_timer_t *t)
{
	struct etcd_store *e = t->data;
	struct etcdkv_range q;

	if (e->sync_target <= e->applied || e->settling != 0)
		return;
	memset(&q, 0, sizeof q);
	q.key = e->prefix;
	q.klen = e->plen;
	q.end = e->end;
	q.elen = e->plen;
	q.min_mod_rev = (int64_t)e->applied + 1;
	q.count_only = 1;
	e->settling = e->sync_target;
	etcdkv_range(e->kv, &q, settled, e);
}

static void
sync_rev(void *arg, int64_t rev, const char *err)
{
	struct sync_req *r = arg;
	struct etcd_store *e = r->e;

	if (rev < 0) {
		/* etcd cannot say: serve what the cache has. */
		log_warn("store: etcd: %s", err);
		r->cb(r->arg);
		free(r);
		return;
	}
	if ((uint64_t)rev > e->applied) {
		if ((uint64_t)rev > e->sync_target)
			e->sync_target = (uint64_t)rev;
		if (!uv_is_active((uv_handle_t *)&e->settle))
			uv_timer_start(&e->settle, settle, SYNC_SETTLE_MS, 0);
	}
	wait_rev(e, (uint64_t)rev, r->cb, r->arg);
	free(r);
}

void
store_sync(store *st, store_durable_cb cb, void *arg)
{
	struct etcd_store *e = etcd_of(st);
	struct sync_req *r;
	char probe[512];

	if (e == NULL) {
		cb(arg);
		return;
	}
	r = xmalloc(sizeof *r);
	r->e = e;
	r->cb = cb;
	r->arg = arg;
	snprintf(probe, sizeof probe, "%svolray.io/sync", e->prefix);
	etcdkv_current_rev(e->kv, probe, sync_rev, r);
}

/* ---- cluster state that is no object ---- */

int
store_etcd_get_raw(store *st, const char *name, char **val, size_t *len,
    char **cause)
{
	struct etcd_store *e = etcd_of(st);
	struct etcdkv_range q;
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t rev;
	int more;
	char *key = util_printf("%svolray.io/%s", e->prefix, name);

	memset(&q, 0, sizeof q);
	q.key = key;
	q.klen = strlen(key);
	*val = NULL;
	if (etcdkv_range_sync(e->kv, &q, &kvs, &n, &rev, &more, cause) != 0) {
		free(key);
		return -1;
	}
	free(key);
	if (n == 0) {
		etcdkv_kvs_free(kvs, n);
		return 1;
	}
	*val = kvs[0].value;
	*len = kvs[0].vlen;
	kvs[0].value = NULL;
	etcdkv_kvs_free(kvs, n);
	return 0;
}

int
store_etcd_create_raw(store *st, const char *name, const char *val,
    size_t len, char **cause)
{
	struct etcd_store *e = etcd_of(st);
	struct etcdkv_op op;
	char *key = util_printf("%svolray.io/%s", e->prefix, name);
	int64_t rev;
	int out;

	memset(&op, 0, sizeof op);
	op.key = key;
	op.klen = strlen(key);
	op.value = val;
	op.vlen = len;
	op.expect_mod = 0;
	out = etcdkv_txn_sync(e->kv, &op, 1, &rev, cause);
	free(key);
	return out == ETCDKV_OK ? 0 : out == ETCDKV_CONFLICT ? 1 : -1;
}

/* ---- compaction ---- */

/*
 * Every interval, as kube-apiserver does: the servers of one etcd race
 * on the version of PREFIX/compact_rev_key; the one whose transaction
 * wins compacts at the revision it noted an interval ago, so the history
 * kept is at least one interval long and one server compacts each time.
 * A round reads the key, then writes it, without blocking the loop; a
 * tick while one is under way is skipped.
 */
static void
compact_written(void *arg, int out, int64_t rev, const char *err)
{
	struct etcd_store *e = arg;

	(void)rev;
	(void)err;
	e->compacting = 0;
	if (out != ETCDKV_OK)
		return;
	e->compact_version++;
	if (e->compact_next > 0) {
		log_info("store: etcd: compacting at revision %lld",
		    (long long)e->compact_next);
		etcdkv_compact(e->kv, e->compact_next);
	}
	e->compact_next = e->compact_now;
}

static void
compact_read(void *arg, struct etcdkv_kv *kvs, size_t n, int64_t now,
    int more, const char *err)
{
	struct etcd_store *e = arg;
	struct etcdkv_op op;
	char *key, val[32];

	(void)more;
	if (now < 0) {
		log_warn("store: etcd: compaction: %s", err);
		e->compacting = 0;
		return;
	}
	/* Ours to do only if nobody moved the key since we last saw it. */
	if (n > 0 && kvs[0].version != e->compact_version) {
		e->compact_version = kvs[0].version;
		etcdkv_kvs_free(kvs, n);
		e->compact_next = now;
		e->compacting = 0;
		return;
	}
	etcdkv_kvs_free(kvs, n);
	key = util_printf("%scompact_rev_key", e->prefix);
	memset(&op, 0, sizeof op);
	op.key = key;
	op.klen = strlen(key);
	snprintf(val, sizeof val, "%lld", (long long)now);
	op.value = val;
	op.vlen = strlen(val);
	op.expect_mod = -1;
	e->compact_now = now;
	etcdkv_txn(e->kv, &op, 1, compact_written, e);
	free(key);
}

static void
compact_tick(uv_timer_t *t)
{
	struct etcd_store *e = t->data;
	struct etcdkv_range q;
	char *key;

	if (e->compacting)
		return;
	e->compacting = 1;
	key = util_printf("%scompact_rev_key", e->prefix);
	memset(&q, 0, sizeof q);
	q.key = key;
	q.klen = strlen(key);
	etcdkv_range(e->kv, &q, compact_read, e);
	free(key);
}

/* ---- open and close ---- */

static int
free_reported(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 0;
}

static void
closed(uv_handle_t *h)
{
	struct etcd_store *e = h->data;

	if (++e->closed == 3)
		free(e);
}

static void
be_close(store *st)
{
	struct etcd_store *e = etcd_of(st);

	etcdkv_watch_stop(e->watch);
	etcdkv_free(e->kv);
	staged_free(e->ops, e->nops);
	free(e->waiters);
	hmap_each(e->reported, free_reported, NULL);
	hmap_free(e->reported);
	free(e->prefix);
	free(e->end);
	st->backend = NULL;
	/* The timers are part of e: it goes with the last. */
	uv_close((uv_handle_t *)&e->settle, closed);
	uv_close((uv_handle_t *)&e->compact, closed);
	uv_close((uv_handle_t *)&e->relist, closed);
}

int
store_etcd_open(uv_loop_t *loop, const struct store_etcd_conf *conf,
    store **out, char **cause)
{
	struct etcdkv_conf kc;
	struct etcd_store *e;
	store *st;
	const char *p = conf->prefix ? conf->prefix : "/registry";
	size_t len = strlen(p);

	memset(&kc, 0, sizeof kc);
	kc.endpoints = conf->servers;
	kc.nendpoints = conf->nservers;
	kc.ca_file = conf->ca_file;
	kc.cert_file = conf->cert_file;
	kc.key_file = conf->key_file;
	e = xcalloc(1, sizeof *e);
	if ((e->kv = etcdkv_new(loop, &kc, cause)) == NULL) {
		free(e);
		return -1;
	}
	store_mirror_open(loop, &st);
	/* Nothing is durable until etcd says so: waits go to the backend. */
	e->st = st;
	e->lay = conf->layout;
	e->prefix = util_printf("%s%s", p, len > 0 && p[len - 1] == '/' ?
	    "" : "/");
	e->plen = strlen(e->prefix);
	e->end = xstrdup(e->prefix);
	etcdkv_prefix_end(e->prefix, e->plen, e->end);
	e->reported = hmap_new();
	e->compaction_s = conf->compaction_s;
	uv_timer_init(loop, &e->settle);
	e->settle.data = e;
	uv_timer_init(loop, &e->compact);
	e->compact.data = e;
	uv_timer_init(loop, &e->relist);
	e->relist.data = e;
	e->be.put = be_put;
	e->be.when = be_when;
	e->be.close = be_close;
	e->be.ctx = e;
	st->backend = &e->be;
	{
		int64_t at = list_all(e, cause);

		if (at < 0) {
			store_close(st);
			return -1;
		}
		note_applied(e, (uint64_t)at);
		start_watch(e, at + 1);
	}
	if (e->compaction_s > 0)
		uv_timer_start(&e->compact, compact_tick,
		    (uint64_t)e->compaction_s * 1000,
		    (uint64_t)e->compaction_s * 1000);
	*out = st;
	return 0;
}
