/*
 * The object store. Objects live in one collection per resource: a hash map
 * from "ns/name" to the current version, and a sorted array of the same
 * versions rebuilt lazily after writes, for ordered lists and paging. Two
 * more indexes map uids to objects and owner uids to dependents' keys (for
 * garbage collection).
 *
 * A write assigns the next revision, serializes the object once, replaces
 * the version in the index, and appends the record to the write-ahead log.
 * The event waits in a pending queue until the log reports the revision
 * durable; then subscribers see it and write acknowledgements go out, in
 * revision order. When the log has grown past a threshold since the last
 * snapshot, a snapshot of every live version is handed to the log's thread.
 *
 * A mirror (store_mirror.c) is the same store with no log: its versions
 * come from another API server, whose writes are durable there, so its
 * events are delivered as soon as they are queued.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "store/store_int.h"

#define SNAPSHOT_BYTES (64ULL << 20)

/* The keys of the objects that name one owner uid (or one node). */
struct deps {
	char *uid;
	char **keys;
	size_t n, cap;
};

struct waiter {
	uint64_t rev;
	store_durable_cb cb;
	void *arg;
};

struct sub {
	store_event_cb cb;
	void *arg;
};

/* Subsystems' derived data, by resource (store_derive). */
static struct derive {
	const char *res;
	store_derive_fn make;
	void (*drop)(void *);
} derives[4];
static int nderives;

void
store_derive(const char *res, store_derive_fn make, void (*drop)(void *))
{
	int i;

	for (i = 0; i < nderives; i++)
		if (strcmp(derives[i].res, res) == 0)
			break;
	if (i == nderives) {
		if (nderives == (int)(sizeof derives / sizeof *derives))
			fatal("store_derive: too many resources");
		nderives++;
	}
	derives[i].res = res;
	derives[i].make = make;
	derives[i].drop = drop;
}

static const struct derive *
derive_of(const char *res)
{
	int i;

	for (i = 0; i < nderives; i++)
		if (strcmp(derives[i].res, res) == 0)
			return &derives[i];
	return NULL;
}

void
store_version_derive(store_obj *o, const cJSON *tree)
{
	const struct derive *d = derive_of(o->res);

	if (d != NULL)
		o->derived = d->make(tree);
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

store_obj *
store_obj_ref(store_obj *o)
{
	if (o != NULL)
		o->refs++;
	return o;
}

void
store_obj_unref(store_obj *o)
{
	if (o == NULL || --o->refs > 0)
		return;
	if (o->derived != NULL) {
		const struct derive *d = derive_of(o->res);

		if (d != NULL && d->drop != NULL)
			d->drop(o->derived);
	}
	rbuf_unref(o->json);
	cJSON_Delete(o->labels);
	free(o->owners);
	free(o->strs);
	free(o);
}

cJSON *
store_obj_tree(const store_obj *o)
{
	return cJSON_ParseWithLength(o->json->data, o->json->len);
}

/*
 * Build an immutable version from its serialized JSON, extracting the fields
 * the indexes and filters need. tree is the parsed form of json.
 */
store_obj *
store_version_new(const char *res, const char *ns, const char *name,
    uint64_t rev, rbuf *json, const cJSON *tree)
{
	store_obj *o = xcalloc(1, sizeof *o);
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(tree, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(tree, "spec");
	const cJSON *refs, *r, *fin, *labels;
	const char *uid = jstr(md, "uid"), *node = jstr(spec, "nodeName");
	size_t lr = strlen(res), ln = strlen(ns), lm = strlen(name);
	size_t lu, lnode, total, nref, i;
	char *p;

	uid = uid ? uid : "";
	node = node ? node : "";
	lu = strlen(uid);
	lnode = strlen(node);
	refs = cJSON_GetObjectItemCaseSensitive(md, "ownerReferences");
	nref = cJSON_IsArray(refs) ? (size_t)cJSON_GetArraySize(refs) : 0;

	/* One block holds the key, the parts and the owner strings. */
	total = (lr + ln + lm + 3) + (lr + 1) + (ln + 1) + (lm + 1) + (lu + 1) +
	    (lnode + 1);
	cJSON_ArrayForEach(r, refs) {
		const char *s;
		total += ((s = jstr(r, "uid")) ? strlen(s) : 0) + 1;
		total += ((s = jstr(r, "apiVersion")) ? strlen(s) : 0) + 1;
		total += ((s = jstr(r, "kind")) ? strlen(s) : 0) + 1;
		total += ((s = jstr(r, "name")) ? strlen(s) : 0) + 1;
	}
	p = o->strs = xmalloc(total);
#define PUT(dst, src, len) do { memcpy(p, src, len); p[len] = '\0';	\
	dst = p; p += (len) + 1; } while (0)
	o->key = p;
	p += sprintf(p, "%s/%s/%s", res, ns, name) + 1;
	PUT(o->res, res, lr);
	PUT(o->ns, ns, ln);
	PUT(o->name, name, lm);
	PUT(o->uid, uid, lu);
	PUT(o->node_name, node, lnode);
	if (nref > 0) {
		o->owners = xcalloc(nref, sizeof *o->owners);
		i = 0;
		cJSON_ArrayForEach(r, refs) {
			const char *s;
			size_t l;

			s = (s = jstr(r, "uid")) ? s : "";
			l = strlen(s);
			PUT(o->owners[i].uid, s, l);
			s = (s = jstr(r, "apiVersion")) ? s : "";
			l = strlen(s);
			PUT(o->owners[i].api_version, s, l);
			s = (s = jstr(r, "kind")) ? s : "";
			l = strlen(s);
			PUT(o->owners[i].kind, s, l);
			s = (s = jstr(r, "name")) ? s : "";
			l = strlen(s);
			PUT(o->owners[i].name, s, l);
			o->owners[i].controller = cJSON_IsTrue(
			    cJSON_GetObjectItemCaseSensitive(r, "controller"));
			o->owners[i].block = cJSON_IsTrue(
			    cJSON_GetObjectItemCaseSensitive(r,
			    "blockOwnerDeletion"));
			i++;
		}
		o->nowners = (int)i;
	}
#undef PUT
	o->refs = 1;
	o->rev = rev;
	o->json = json;
	labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
	/* Empty too: {} is not an absent map (ctrl/objpaths.c). */
	if (cJSON_IsObject(labels))
		o->labels = cJSON_Duplicate(labels, 1);
	fin = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	o->nfinalizers = cJSON_IsArray(fin) ? cJSON_GetArraySize(fin) : 0;
	o->deleting = cJSON_GetObjectItemCaseSensitive(md,
	    "deletionTimestamp") != NULL;
	{
		const char *ph = jstr(cJSON_GetObjectItemCaseSensitive(tree,
		    "status"), "phase");

		if (ph != NULL)
			snprintf(o->phase, sizeof o->phase, "%s", ph);
	}
	return o;
}

struct store_coll *
store_coll_get(store *st, const char *res, int create)
{
	struct store_coll *c = hmap_get(st->colls, res);

	if (c == NULL && create) {
		c = xcalloc(1, sizeof *c);
		c->res = xstrdup(res);
		c->objs = hmap_new();
		hmap_put(st->colls, c->res, c);
	}
	return c;
}

static const char *
nskey(const store_obj *o)
{
	return o->key + strlen(o->res) + 1;
}

static void
deps_add(hmap *deps, const char *owner_uid, const char *key)
{
	struct deps *d = hmap_get(deps, owner_uid);

	if (d == NULL) {
		d = xcalloc(1, sizeof *d);
		d->uid = xstrdup(owner_uid);
		hmap_put(deps, d->uid, d);
	}
	XGROW(d->keys, d->cap, d->n + 1);
	d->keys[d->n++] = xstrdup(key);
}

static void
deps_remove(hmap *deps, const char *owner_uid, const char *key)
{
	struct deps *d = hmap_get(deps, owner_uid);
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++) {
		if (strcmp(d->keys[i], key) == 0) {
			free(d->keys[i]);
			d->keys[i] = d->keys[--d->n];
			break;
		}
	}
	if (d->n == 0) {
		hmap_del(deps, d->uid);
		free(d->keys);
		free(d->uid);
		free(d);
	}
}

static int cmp_obj(const void *, const void *);

/* Put a version into the indexes (replacing any previous one), or remove. */
store_obj *
store_index_set(store *st, const char *res, const char *nsname, store_obj *o)
{
	struct store_coll *c = store_coll_get(st, res, 1);
	store_obj *old;
	int i;

	old = o ? hmap_put(c->objs, nskey(o), o) : hmap_del(c->objs, nsname);
	if (o != NULL)
		st->live_bytes += o->json->len;
	if (old != NULL)
		st->live_bytes -= old->json->len;
	if (old != NULL) {
		if (*old->uid && hmap_get(st->uids, old->uid) == old)
			hmap_del(st->uids, old->uid);
		for (i = 0; i < old->nowners; i++)
			deps_remove(st->deps, old->owners[i].uid, old->key);
	}
	if (o != NULL) {
		if (*o->uid)
			hmap_put(st->uids, o->uid, o);
		for (i = 0; i < o->nowners; i++)
			deps_add(st->deps, o->owners[i].uid, o->key);
	}
	store_labels_index(st, old, o);
	/* By node: once bound, a pod's node does not change. */
	if (old != NULL && *old->node_name && (o == NULL ||
	    strcmp(o->node_name, old->node_name) != 0))
		deps_remove(st->on_node, old->node_name, old->key);
	if (o != NULL && *o->node_name && (old == NULL ||
	    strcmp(o->node_name, old->node_name) != 0))
		deps_add(st->on_node, o->node_name, o->key);
	if (o != NULL && old != NULL && !c->dirty && c->sorted != NULL) {
		/*
		 * A new version of an object keeps its place in the sorted
		 * list: swap the pointer rather than sorting again (a status
		 * write must not cost the next list a sort of everything).
		 */
		size_t lo = 0, hi = c->nsorted, mid;

		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (cmp_obj(&c->sorted[mid], &old) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < c->nsorted && c->sorted[lo] == old) {
			c->sorted[lo] = o;
			return old;
		}
	}
	c->dirty = 1;
	return old;
}

/* Replay one recovered record into the indexes. */
static void
replay(void *arg, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
	store *st = arg;
	char *k = xstrndup(key, klen), *ns, *name;
	store_obj *o, *old;
	cJSON *tree;

	if (rev > st->rev)
		st->rev = rev;
	if ((ns = strchr(k, '/')) == NULL || (name = strchr(ns + 1, '/')) ==
	    NULL) {
		log_warn("store: skipping record with bad key %s", k);
		free(k);
		return;
	}
	*ns++ = '\0';
	*name++ = '\0';
	if (op == WAL_DELETE) {
		char nsname[512];

		snprintf(nsname, sizeof nsname, "%s/%s", ns, name);
		store_obj_unref(store_index_set(st, k, nsname, NULL));
		free(k);
		return;
	}
	tree = cJSON_ParseWithLength(val, vlen);
	if (tree == NULL) {
		log_warn("store: skipping unparsable record %s/%s/%s", k, ns,
		    name);
		free(k);
		return;
	}
	o = store_version_new(k, ns, name, rev, rbuf_new(val, vlen), tree);
	store_version_derive(o, tree);
	cJSON_Delete(tree);
	old = store_index_set(st, k, NULL, o);
	store_obj_unref(old);
	free(k);
}

struct snapctx {
	wal_snap *s;
};

static int
snap_obj(const char *key, void *value, void *arg)
{
	store_obj *o = value;
	struct snapctx *ctx = arg;

	(void)key;
	wal_snapshot_add_rev(ctx->s, o->key, strlen(o->key), o->rev, o->json);
	return 0;
}

static int
snap_each_coll(const char *key, void *value, void *arg)
{
	struct store_coll *c = value;

	(void)key;
	hmap_each(c->objs, snap_obj, arg);
	return 0;
}

/* Hand a snapshot of every live version to the log once it has grown. */
static void
maybe_snapshot(store *st)
{
	struct snapctx ctx;

	/*
	 * Snapshot once the log since the last one is as big as the live
	 * data (and at least 64 MB): each snapshot then costs no more than
	 * the writes that earned it, whatever the store's size.
	 */
	if (wal_log_bytes(st->wal) < SNAPSHOT_BYTES ||
	    wal_log_bytes(st->wal) < st->live_bytes)
		return;
	if ((ctx.s = wal_snapshot_begin(st->wal, st->rev)) == NULL)
		return;
	hmap_each(st->colls, snap_each_coll, &ctx);
	wal_snapshot_commit(ctx.s);
	st->stats.snapshots++;
}

void
store_deliver(store *st)
{
	store_event e;
	struct waiter *w;
	size_t i;

	if (st->delivering)
		return;
	st->delivering = 1;
	/* Acknowledge first: a writer need not wait for the fan-out. */
	while (st->headwaiters < st->nwaiters) {
		w = &st->waiters[st->headwaiters];
		if (w->rev > st->durable)
			break;
		st->headwaiters++;
		w->cb(w->arg);
	}
	if (st->headwaiters == st->nwaiters)
		st->headwaiters = st->nwaiters = 0;
	while (st->headpending < st->npending) {
		/* A copy: a subscriber that writes may move the queue. */
		e = st->pending[st->headpending];
		if (e.obj->rev > st->durable)
			break;
		st->headpending++;
		for (i = 0; i < st->nsubs; i++)
			st->subs[i].cb(st->subs[i].arg, &e);
		store_obj_unref(e.obj);
		store_obj_unref(e.old);
	}
	if (st->headpending == st->npending)
		st->headpending = st->npending = 0;
	for (i = 0; i < st->nflush; i++)
		st->flush[i].fn(st->flush[i].arg);
	st->delivering = 0;
}

/* The log made everything up to rev durable: deliver events and acks. */
static void
durable(void *arg, uint64_t rev)
{
	store *st = arg;

	if (rev <= st->durable)
		return;
	st->durable = rev;
	if (st->delivering)
		return;
	store_deliver(st);
	maybe_snapshot(st);
}

store *
store_new(uv_loop_t *loop)
{
	store *st = xcalloc(1, sizeof *st);

	st->loop = loop;
	st->colls = hmap_new();
	st->uids = hmap_new();
	st->deps = hmap_new();
	st->on_node = hmap_new();
	st->labeled = hmap_new();
	return st;
}

int
store_open(uv_loop_t *loop, const char *data_dir, store **out, char **cause)
{
	store *st = store_new(loop);
	uint64_t last = 0;

	if (wal_open(loop, data_dir, replay, durable, st, &last, &st->wal,
	    cause) != 0) {
		store_close(st);
		return -1;
	}
	if (last > st->rev)
		st->rev = last;
	st->start_rev = st->durable = st->rev;
	*out = st;
	return 0;
}

static int
free_obj(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	store_obj_unref(value);
	return 0;
}

static int
free_value(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	free(value);
	return 0;
}

static int
free_coll(const char *key, void *value, void *arg)
{
	struct store_coll *c = value;

	(void)key;
	(void)arg;
	hmap_each(c->objs, free_obj, NULL);
	hmap_free(c->objs);
	if (c->tombs != NULL) {
		hmap_each(c->tombs, free_value, NULL);
		hmap_free(c->tombs);
	}
	free(c->sorted);
	free(c->res);
	free(c);
	return 0;
}

static int
free_prov(const char *key, void *value, void *arg)
{
	struct store_prov *p = value;

	(void)key;
	(void)arg;
	store_obj_unref(p->seen);
	free(p);
	return 0;
}

static int
free_deps(const char *key, void *value, void *arg)
{
	struct deps *d = value;
	size_t i;

	(void)key;
	(void)arg;
	for (i = 0; i < d->n; i++)
		free(d->keys[i]);
	free(d->keys);
	free(d->uid);
	free(d);
	return 0;
}

void
store_close(store *st)
{
	size_t i;

	if (st == NULL)
		return;
	if (st->backend != NULL)
		st->backend->close(st);
	if (st->wal != NULL)
		wal_close(st->wal);
	for (i = st->headpending; i < st->npending; i++) {
		store_obj_unref(st->pending[i].obj);
		store_obj_unref(st->pending[i].old);
	}
	free(st->pending);
	free(st->waiters);
	free(st->subs);
	hmap_each(st->colls, free_coll, NULL);
	hmap_free(st->colls);
	hmap_free(st->uids);
	if (st->prov != NULL) {
		hmap_each(st->prov, free_prov, NULL);
		hmap_free(st->prov);
	}
	hmap_each(st->deps, free_deps, NULL);
	hmap_free(st->deps);
	hmap_each(st->on_node, free_deps, NULL);
	hmap_free(st->on_node);
	store_labels_free(st);
	for (i = 0; i < (size_t)st->nfilters; i++)
		free(st->filters[i].res);
	free(st);
}

uint64_t
store_rev(const store *st)
{
	return st->rev;
}

uint64_t
store_start_rev(const store *st)
{
	return st->start_rev;
}

const store_obj *
store_get(const store *st, const char *res, const char *ns, const char *name)
{
	struct store_coll *c = hmap_get(st->colls, res);
	size_t nl = ns ? strlen(ns) : 0, ml = name ? strlen(name) : 0;
	char buf[512];

	/* "ns/name", without snprintf: every write and most reads ask. */
	if (c == NULL || nl + ml + 2 > sizeof buf)
		return NULL;
	memcpy(buf, ns ? ns : "", nl);
	buf[nl] = '/';
	memcpy(buf + nl + 1, name ? name : "", ml + 1);
	return hmap_get(c->objs, buf);
}

const store_obj *
store_get_uid(const store *st, const char *uid)
{
	return hmap_get(st->uids, uid);
}

const store_obj *
store_get_key(const store *st, const char *key)
{
	const char *slash = strchr(key, '/');
	char res[256];
	struct store_coll *c;

	if (slash == NULL || (size_t)(slash - key) >= sizeof res)
		return NULL;
	memcpy(res, key, slash - key);
	res[slash - key] = '\0';
	if ((c = hmap_get(st->colls, res)) == NULL)
		return NULL;
	return hmap_get(c->objs, slash + 1);
}

static int
collect(const char *key, void *value, void *arg)
{
	struct store_coll *c = arg;

	(void)key;
	c->sorted[c->nsorted++] = value;
	return 0;
}

static int
cmp_obj(const void *a, const void *b)
{
	const store_obj *x = *(store_obj *const *)a, *y = *(store_obj *const *)b;
	int r = strcmp(x->ns, y->ns);

	return r ? r : strcmp(x->name, y->name);
}

struct refs {
	store_obj **objs;
	size_t n;
};

static int
collect_ref(const char *key, void *value, void *arg)
{
	struct refs *r = arg;

	(void)key;
	r->objs[r->n++] = store_obj_ref(value);
	return 0;
}

size_t
store_list_refs(store *st, const char *res, store_obj ***out)
{
	struct store_coll *c = hmap_get(st->colls, res);
	struct refs r = { NULL, 0 };

	*out = NULL;
	if (c == NULL || hmap_count(c->objs) == 0)
		return 0;
	r.objs = xreallocarray(NULL, hmap_count(c->objs), sizeof *r.objs);
	hmap_each(c->objs, collect_ref, &r);
	*out = r.objs;
	return r.n;
}

void
store_sort(store_obj **objs, size_t n)
{
	/* An empty copy may be NULL, which qsort must not be given. */
	if (n > 1)
		qsort(objs, n, sizeof *objs, cmp_obj);
}

size_t
store_list(store *st, const char *res, const char *ns,
    store_obj *const **out)
{
	struct store_coll *c = hmap_get(st->colls, res);
	size_t lo, hi, mid, start;

	*out = NULL;
	if (c == NULL || hmap_count(c->objs) == 0)
		return 0;
	if (c->dirty) {
		free(c->sorted);
		c->sorted = xreallocarray(NULL, hmap_count(c->objs),
		    sizeof *c->sorted);
		c->nsorted = 0;
		hmap_each(c->objs, collect, c);
		qsort(c->sorted, c->nsorted, sizeof *c->sorted, cmp_obj);
		c->dirty = 0;
	}
	if (ns == NULL) {
		*out = c->sorted;
		return c->nsorted;
	}
	/* Binary search for the first and past-the-last of the namespace. */
	lo = 0;
	hi = c->nsorted;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (strcmp(c->sorted[mid]->ns, ns) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	start = lo;
	hi = c->nsorted;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (strcmp(c->sorted[mid]->ns, ns) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out = c->sorted + start;
	return lo - start;
}

ssize_t
store_list_selected(const store *st, const char *res, const char *ns,
    const selector *sel, store_obj ***out)
{
	const char *key, *value, **keys = NULL, **k;
	store_obj *o;
	size_t i, n = 0, best = 0, nk;
	int any = 0;

	*out = NULL;
	/* The smallest set of the requirements of one exact value. */
	for (i = 0; selector_label_equals(sel, i, &key, &value); i++) {
		nk = store_labels_keys(st, res, ns ? ns : "", key, value, &k);
		if (!any || nk < best) {
			best = nk;
			keys = k;
		}
		any = 1;
		if (best == 0)
			break;
	}
	if (!any)
		return -1;
	if (best == 0)
		return 0;
	*out = xcalloc(best, sizeof **out);
	for (i = 0; i < best; i++) {
		o = (store_obj *)store_get_key(st, keys[i]);
		if (o != NULL && selector_match_labels(sel, o->labels))
			(*out)[n++] = o;
	}
	store_sort(*out, n);
	return (ssize_t)n;
}

size_t
store_count(const store *st, const char *res)
{
	struct store_coll *c = hmap_get(st->colls, res);

	return c ? hmap_count(c->objs) : 0;
}

struct eachres {
	void (*fn)(const char *, size_t, void *);
	void *arg;
};

static int
each_res(const char *key, void *value, void *arg)
{
	struct eachres *e = arg;
	struct store_coll *c = value;

	if (hmap_count(c->objs) > 0)
		e->fn(key, hmap_count(c->objs), e->arg);
	return 0;
}

void
store_each_res(const store *st, void (*fn)(const char *, size_t, void *),
    void *arg)
{
	struct eachres e = { fn, arg };

	hmap_each(st->colls, each_res, &e);
}

void
store_set_rv(cJSON *obj, uint64_t rev)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	char buf[32];

	if (md == NULL)
		md = cJSON_AddObjectToObject(obj, "metadata");
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)rev);
	if (cJSON_GetObjectItemCaseSensitive(md, "resourceVersion") != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(md, "resourceVersion",
		    cJSON_CreateString(buf));
	else
		cJSON_AddStringToObject(md, "resourceVersion", buf);
}

void
store_push_event(store *st, enum store_event_type type, store_obj *o,
    store_obj *old)
{
	store_event *e;

	if (st->npending == st->cappending) {
		if (st->headpending > 0) {
			memmove(st->pending, st->pending + st->headpending,
			    (st->npending - st->headpending) * sizeof *e);
			st->npending -= st->headpending;
			st->headpending = 0;
		}
		XGROW(st->pending, st->cappending, st->npending + 1);
	}
	e = &st->pending[st->npending++];
	e->type = type;
	e->obj = o;
	e->old = old;
}

void
store_run_filters(store *st, store_obj *o, const cJSON *tree)
{
	int i;

	o->fknown = o->fmatch = 0;
	o->fgen = st->fgen;
	for (i = 0; i < st->nfilters; i++) {
		const struct store_filter *f = &st->filters[i];

		if (f->res == NULL || strcmp(f->res, o->res) != 0)
			continue;
		o->fknown |= 1ULL << i;
		if (f->test(f->arg, tree))
			o->fmatch |= 1ULL << i;
	}
}

/* A handle: the slot in its low bits, above them the generation the
   slot was taken in. */
#define FILTER_SLOT_BITS	6
#define FILTER_SLOT(h)		((h) & (STORE_MAX_FILTERS - 1))
#define FILTER_GEN(h)		((uint32_t)(h) >> FILTER_SLOT_BITS)
#define FILTER_MAX_GEN		(INT_MAX >> FILTER_SLOT_BITS)

/* A slot for a new filter: a fresh one, else one given back (then the
   generation moves on, so that what its last filter said of versions
   is no longer believed). -1: none. */
static int
filter_slot(store *st)
{
	int i;

	if (st->nfilters < STORE_MAX_FILTERS)
		return st->nfilters++;
	if (st->fgen >= FILTER_MAX_GEN)
		return -1;
	for (i = 0; i < STORE_MAX_FILTERS; i++)
		if (st->filters[i].res == NULL) {
			st->fgen++;
			return i;
		}
	return -1;
}

int
store_filter_add(store *st, const char *res,
    int (*test)(void *arg, const cJSON *tree), void *arg)
{
	struct store_filter *f;
	int i;

	if ((i = filter_slot(st)) < 0)
		return -1;
	f = &st->filters[i];
	f->res = xstrdup(res);
	f->test = test;
	f->arg = arg;
	f->handle = (int)(st->fgen << FILTER_SLOT_BITS) | i;
	return f->handle;
}

void
store_filter_remove(store *st, int h)
{
	struct store_filter *f;

	if (h < 0 || FILTER_SLOT(h) >= st->nfilters)
		return;
	f = &st->filters[FILTER_SLOT(h)];
	if (f->res == NULL || f->handle != h)
		return;
	free(f->res);
	f->res = NULL;
}

int
store_obj_filtered(const store_obj *o, int h)
{
	if (h < 0 || !(o->fknown & (1ULL << FILTER_SLOT(h))) ||
	    o->fgen < FILTER_GEN(h))
		return -1;
	return (o->fmatch & (1ULL << FILTER_SLOT(h))) != 0;
}

int
store_filter_count(const store *st)
{
	int i, n = 0;

	for (i = 0; i < st->nfilters; i++)
		if (st->filters[i].res != NULL)
			n++;
	return n;
}

/* Serialize, version and log one write; returns the new version. */
static store_obj *
write_version(store *st, const char *res, const char *ns, const char *name,
    cJSON *obj, int op)
{
	char key[768];
	size_t klen;
	rbuf *json;
	store_obj *o;

	store_set_rv(obj, ++st->rev);
	json = json_print_rbuf(obj);	/* numbers exactly */
	o = store_version_new(res, ns, name, st->rev, json, obj);
	store_run_filters(st, o, obj);
	if (st->mirror)
		return o;
	klen = (size_t)snprintf(key, sizeof key, "%s/%s/%s", res, ns, name);
	if (op == WAL_DELETE)
		wal_append(st->wal, st->rev, WAL_DELETE, key, klen, NULL, 0);
	else
		wal_append(st->wal, st->rev, WAL_PUT, key, klen, json->data,
		    json->len);
	return o;
}

uint64_t
store_put(store *st, const char *res, const char *ns, const char *name,
    cJSON *obj)
{
	store_obj *o, *old;

	if (st->backend != NULL)
		return st->backend->put(st, res, ns ? ns : "", name, obj, 0);
	o = write_version(st, res, ns ? ns : "", name, obj, WAL_PUT);
	old = store_index_set(st, res, NULL, store_obj_ref(o));
	st->stats.puts++;
	store_push_event(st, old ? STORE_MODIFIED : STORE_ADDED, o, old);
	if (st->mirror) {
		uint64_t rev = o->rev;	/* o goes with its event */

		store_deliver(st);
		return rev;
	}
	return o->rev;
}

uint64_t
store_delete(store *st, const char *res, const char *ns, const char *name,
    cJSON *last)
{
	store_obj *o, *old;
	char nsname[512];

	ns = ns ? ns : "";
	if (st->backend != NULL)
		return st->backend->put(st, res, ns, name, last, 1);
	o = write_version(st, res, ns, name, last, WAL_DELETE);
	snprintf(nsname, sizeof nsname, "%s/%s", ns, name);
	old = store_index_set(st, res, nsname, NULL);
	st->stats.deletes++;
	store_push_event(st, STORE_DELETED, o, old);
	if (st->mirror) {
		uint64_t rev = o->rev;	/* o goes with its event */

		store_deliver(st);
		return rev;
	}
	return o->rev;
}

void
store_when_durable(store *st, uint64_t rev, store_durable_cb cb, void *arg)
{
	struct waiter *w;

	if (st->backend != NULL) {
		st->backend->when(st, rev, cb, arg);
		return;
	}
	if (st->mirror || (rev <= st->durable &&
	    st->headpending == st->npending)) {
		cb(arg);
		return;
	}
	if (st->nwaiters == st->capwaiters) {
		if (st->headwaiters > 0) {
			memmove(st->waiters, st->waiters + st->headwaiters,
			    (st->nwaiters - st->headwaiters) * sizeof *w);
			st->nwaiters -= st->headwaiters;
			st->headwaiters = 0;
		}
		XGROW(st->waiters, st->capwaiters, st->nwaiters + 1);
	}
	w = &st->waiters[st->nwaiters++];
	w->rev = rev;
	w->cb = cb;
	w->arg = arg;
}

void
store_subscribe(store *st, store_event_cb cb, void *arg)
{
	st->subs = xreallocarray(st->subs, st->nsubs + 1, sizeof *st->subs);
	st->subs[st->nsubs].cb = cb;
	st->subs[st->nsubs].arg = arg;
	st->nsubs++;
}

void
store_subscribe_flush(store *st, void (*fn)(void *), void *arg)
{
	if (st->nflush == sizeof st->flush / sizeof st->flush[0])
		fatal("store: too many flush subscribers");
	st->flush[st->nflush].fn = fn;
	st->flush[st->nflush].arg = arg;
	st->nflush++;
}

static size_t
deps_keys(hmap *deps, const char *uid, const char ***keys)
{
	struct deps *d = hmap_get(deps, uid);

	if (d == NULL) {
		*keys = NULL;
		return 0;
	}
	*keys = (const char **)d->keys;
	return d->n;
}

size_t
store_dependents(const store *st, const char *uid, const char ***keys)
{
	return deps_keys(st->deps, uid, keys);
}

size_t
store_on_node(const store *st, const char *node, const char ***keys)
{
	return deps_keys(st->on_node, node, keys);
}

void
store_get_stats(const store *st, struct store_stats *s)
{
	*s = st->stats;
}

struct wal *
store_wal(const store *st)
{
	return st->wal;
}
