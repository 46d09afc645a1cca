/*
 * The mirror: a store with no log, filled with the versions another API
 * server gave, for a remote client's cache (store.h describes the calls).
 *
 * Every change goes through the steps of a local write (store.c): the
 * version is built with the same extracted fields, the store filters run
 * on its tree, the indexes take it, and its event is queued; then, as
 * there is nothing to wait for, the queue is delivered at once. What
 * differs is where revisions come from: each version keeps the remote
 * resourceVersion it came with, so the mirror orders the versions of one
 * key by it and drops a stale one, whether it comes from a watch that is
 * behind or from a write's response that overtook its event. A deleted
 * key keeps a tombstone with its deletion's resourceVersion, so that an
 * event from before the deletion cannot bring the object back; a re-list
 * or the watch's progress past it removes the tombstone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "store/store_int.h"

int
store_mirror_open(uv_loop_t *loop, store **out)
{
	store *st = store_new(loop);

	st->mirror = 1;
	/* Everything a mirror holds is durable already, on its server. */
	st->durable = UINT64_MAX;
	*out = st;
	return 0;
}

/* "ns/name" in buf; 0 when it does not fit (store_get finds no such key). */
static int
nsname_of(char *buf, size_t size, const char *ns, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", ns, name);

	return n >= 0 && (size_t)n < size;
}

static uint64_t
tomb_rv(const struct store_coll *c, const char *nsname)
{
	const struct store_tomb *t = c->tombs ? hmap_get(c->tombs, nsname) :
	    NULL;

	return t ? t->rv : 0;
}

/* Remember that nsname was deleted at rv (or later). */
static void
tomb_set(struct store_coll *c, const char *nsname, uint64_t rv)
{
	struct store_tomb *t;
	size_t len = strlen(nsname);

	if (c->tombs == NULL)
		c->tombs = hmap_new();
	if ((t = hmap_get(c->tombs, nsname)) != NULL) {
		if (rv > t->rv)
			t->rv = rv;
		return;
	}
	t = xmalloc(sizeof *t + len + 1);
	t->rv = rv;
	memcpy(t->nsname, nsname, len + 1);
	hmap_put(c->tombs, t->nsname, t);
}

static void
tomb_clear(struct store_coll *c, const char *nsname)
{
	if (c->tombs != NULL)
		free(hmap_del(c->tombs, nsname));
}

struct prune {
	uint64_t upto;
	struct store_tomb **gone;
	size_t n, cap;
};

static int
collect_old_tomb(const char *key, void *value, void *arg)
{
	struct store_tomb *t = value;
	struct prune *p = arg;

	(void)key;
	if (t->rv <= p->upto) {
		XGROW(p->gone, p->cap, p->n + 1);
		p->gone[p->n++] = t;
	}
	return 0;
}

/* Forget the tombstones of c up to rv: no event older can come now. */
static void
tomb_prune(struct store_coll *c, uint64_t rv)
{
	struct prune p = { rv, NULL, 0, 0 };
	size_t i;

	if (c->tombs == NULL)
		return;
	hmap_each(c->tombs, collect_old_tomb, &p);
	for (i = 0; i < p.n; i++)
		free(hmap_del(c->tombs, p.gone[i]->nsname));
	free(p.gone);
}

static void
seen_rv(store *st, uint64_t rv)
{
	if (rv > st->rev)
		st->rev = rv;
}

store_obj *
store_mirror_version(const char *res, const char *ns, const char *name,
    const cJSON *tree, uint64_t rv)
{
	if (!cJSON_IsObject(tree))
		return NULL;
	return store_version_new(res, ns ? ns : "", name, rv,
	    json_print_rbuf(tree), tree);
}

/* Whether a store filter of st is on res. */
static int
filtered(const store *st, const char *res)
{
	int i;

	for (i = 0; i < st->nfilters; i++)
		if (st->filters[i].res != NULL &&
		    strcmp(st->filters[i].res, res) == 0)
			return 1;
	return 0;
}

/*
 * A version built off the loop (store_mirror_version), made one of st's:
 * the store filters run on its tree, parsed again only when one is on
 * its resource (the builder could not know st's filters, which change on
 * the loop).
 */
static store_obj *
adopt(store *st, store_obj *o)
{
	cJSON *tree;

	if (!filtered(st, o->res))
		return o;
	tree = store_obj_tree(o);
	store_run_filters(st, o, tree);
	cJSON_Delete(tree);
	return o;
}

/*
 * A new version of res/ns/name at rv: pre when given (built off the loop,
 * its reference taken over), else from json or tree (either may be NULL,
 * not both), with the store filters run; NULL when json is not an object.
 */
static store_obj *
version_of(store *st, const char *res, const char *ns, const char *name,
    const char *json, size_t len, const cJSON *tree, uint64_t rv, int derive,
    store_obj *pre)
{
	cJSON *parsed = NULL;
	store_obj *o;
	rbuf *buf;

	if (pre != NULL)
		return adopt(st, pre);
	if (tree == NULL) {
		parsed = cJSON_ParseWithLength(json, len);
		if (!cJSON_IsObject(parsed)) {
			log_warn("store: mirror: %s/%s/%s at %llu is no JSON "
			    "object", res, ns, name, (unsigned long long)rv);
			cJSON_Delete(parsed);
			return NULL;
		}
		tree = parsed;
	} else if (!cJSON_IsObject(tree)) {
		log_warn("store: mirror: %s/%s/%s at %llu is no JSON object",
		    res, ns, name, (unsigned long long)rv);
		return NULL;
	}
	buf = json != NULL ? rbuf_new(json, len) : json_print_rbuf(tree);
	o = store_version_new(res, ns, name, rv, buf, tree);
	store_run_filters(st, o, tree);
	if (derive)
		store_version_derive(o, tree);
	cJSON_Delete(parsed);
	return o;
}

/*
 * Index o (its reference taken over) in place of its key's and queue its
 * events; returns how many. A new uid under the same name is another
 * object: the old one's deletion comes first, as a watch would have said.
 */
static size_t
install(store *st, struct store_coll *c, store_obj *o)
{
	store_obj *old = store_index_set(st, o->res, NULL, store_obj_ref(o));

	tomb_clear(c, o->key + strlen(o->res) + 1);
	st->stats.puts++;
	if (old != NULL && *old->uid && strcmp(old->uid, o->uid) != 0) {
		st->stats.deletes++;
		store_push_event(st, STORE_DELETED, store_obj_ref(old), old);
		store_push_event(st, STORE_ADDED, o, NULL);
		return 2;
	}
	store_push_event(st, old ? STORE_MODIFIED : STORE_ADDED, o, old);
	return 1;
}

/* Is a version at rv of nsname older than what c knows of it? */
static int
stale(const struct store_coll *c, const char *nsname, uint64_t rv)
{
	const store_obj *cur = c ? hmap_get(c->objs, nsname) : NULL;

	if (cur != NULL && rv <= cur->rev)
		return 1;
	return c != NULL && rv <= tomb_rv(c, nsname);
}

/*
 * Provisional versions: what a writer that has just committed a write to
 * the store behind the mirror (etcd) put into the index before the watch
 * brings it back, so that its own next read sees it. Subscribers are not
 * told then: each key keeps the version they last saw (seen) until the
 * watch's events reach the provisional revision, and every event on the
 * way is delivered against it, so that they see each change once, in
 * revision order.
 */
static struct store_prov *
prov_of(store *st, const char *res, const char *nsname)
{
	char key[768];

	if (st->prov == NULL || hmap_count(st->prov) == 0)
		return NULL;
	snprintf(key, sizeof key, "%s/%s", res, nsname);
	return hmap_get(st->prov, key);
}

static void
prov_drop(store *st, struct store_prov *p)
{
	hmap_del(st->prov, p->key);
	store_obj_unref(p->seen);
	free(p);
}

/* Queue the event that takes subscribers from seen (a reference taken
   over, or NULL) to o (a reference taken over, or NULL: deleted, last
   its final state, a reference taken over). */
static void
prov_emit(store *st, store_obj *seen, store_obj *o, store_obj *last)
{
	if (o == NULL) {
		if (seen != NULL) {
			st->stats.deletes++;
			store_push_event(st, STORE_DELETED, last ? last :
			    store_obj_ref(seen), seen);
		} else
			store_obj_unref(last);
		return;
	}
	store_obj_unref(last);
	st->stats.puts++;
	if (seen != NULL && *seen->uid && strcmp(seen->uid, o->uid) != 0) {
		st->stats.deletes++;
		store_push_event(st, STORE_DELETED, store_obj_ref(seen), seen);
		store_push_event(st, STORE_ADDED, o, NULL);
		return;
	}
	store_push_event(st, seen ? STORE_MODIFIED : STORE_ADDED, o, seen);
}

/* A watch's event for a key with a provisional version. */
static int
prov_event(store *st, const char *res, const char *ns, const char *name,
    const char *nsname, const char *json, size_t len, const cJSON *tree,
    uint64_t rv, int del, store_obj *pre)
{
	struct store_prov *p = prov_of(st, res, nsname);
	struct store_coll *c = store_coll_get(st, res, 1);
	store_obj *o = NULL, *last = NULL, *cur;

	if (p->seen != NULL && rv <= p->seen->rev) {
		store_obj_unref(pre);
		return 0;
	}
	if (!del && (o = version_of(st, res, ns, name, json, len, tree, rv,
	    0, pre)) == NULL)
		return -EINVAL;
	if (del && (json != NULL || pre != NULL))
		last = version_of(st, res, ns, name, json, len, NULL, rv, 0,
		    pre);
	if (rv < p->rev) {
		/* On the way: subscribers hear of it, the index keeps the
		   provisional version. */
		store_obj *seen = p->seen;

		p->seen = o ? store_obj_ref(o) : NULL;
		prov_emit(st, seen, o, last);
		cur = hmap_get(c->objs, nsname);
		if ((cur == NULL && p->seen == NULL) || (cur != NULL &&
		    p->seen != NULL && cur->rev == p->seen->rev))
			prov_drop(st, p);
	} else {
		/* The write itself, or past it: the index takes it. */
		store_obj *seen = p->seen;

		p->seen = NULL;
		cur = store_index_set(st, res, nsname, o ? store_obj_ref(o) :
		    NULL);
		store_obj_unref(cur);
		if (o != NULL)
			tomb_clear(c, nsname);
		else
			tomb_set(c, nsname, rv);
		prov_emit(st, seen, o, last);
		prov_drop(st, p);
	}
	if (!st->held)
		store_deliver(st);
	return 1;
}

int
store_mirror_provisional(store *st, const char *res, const char *ns,
    const char *name, const cJSON *tree, uint64_t rv)
{
	struct store_coll *c = store_coll_get(st, res, 1);
	struct store_prov *p;
	char nsname[512], key[768];
	store_obj *o = NULL, *cur;

	ns = ns ? ns : "";
	if (!nsname_of(nsname, sizeof nsname, ns, name))
		return -EINVAL;
	if (tree != NULL && (o = version_of(st, res, ns, name, NULL, 0, tree,
	    rv, 0, NULL)) == NULL)
		return -EINVAL;
	if (st->prov == NULL)
		st->prov = hmap_new();
	if ((p = prov_of(st, res, nsname)) == NULL) {
		snprintf(key, sizeof key, "%s/%s", res, nsname);
		p = xmalloc(sizeof *p + strlen(key) + 1);
		strcpy(p->key, key);
		p->rev = 0;
		cur = hmap_get(c->objs, nsname);
		p->seen = cur ? store_obj_ref(cur) : NULL;
		hmap_put(st->prov, p->key, p);
	}
	/* Not store_rev: the watch has not reached rv yet. */
	if (rv > p->rev)
		p->rev = rv;
	cur = store_index_set(st, res, nsname, o);
	store_obj_unref(cur);
	if (o != NULL)
		tomb_clear(c, nsname);
	return 1;
}

/* put and put_version: json, tree or pre (its reference taken over). */
static int
put(store *st, const char *res, const char *ns, const char *name,
    const char *json, size_t len, const cJSON *tree, uint64_t rv,
    store_obj *pre)
{
	struct store_coll *c;
	char nsname[512];
	store_obj *o;

	ns = ns ? ns : "";
	seen_rv(st, rv);
	if (!nsname_of(nsname, sizeof nsname, ns, name)) {
		log_warn("store: mirror: name too long: %s/%s/%s", res, ns,
		    name);
		store_obj_unref(pre);
		return -EINVAL;
	}
	if (prov_of(st, res, nsname) != NULL)
		return prov_event(st, res, ns, name, nsname, json, len, tree,
		    rv, 0, pre);
	if (stale(store_coll_get(st, res, 0), nsname, rv)) {
		store_obj_unref(pre);
		return 0;
	}
	if ((o = version_of(st, res, ns, name, json, len, tree, rv, 0,
	    pre)) == NULL)
		return -EINVAL;
	c = store_coll_get(st, res, 1);
	install(st, c, o);
	if (!st->held)
		store_deliver(st);
	return 1;
}

int
store_mirror_put(store *st, const char *res, const char *ns,
    const char *name, const char *json, size_t len, uint64_t rv)
{
	return put(st, res, ns, name, json, len, NULL, rv, NULL);
}

int
store_mirror_put_tree(store *st, const char *res, const char *ns,
    const char *name, const cJSON *tree, uint64_t rv)
{
	return put(st, res, ns, name, NULL, 0, tree, rv, NULL);
}

int
store_mirror_put_parsed(store *st, const char *res, const char *ns,
    const char *name, const char *json, size_t len, const cJSON *tree,
    uint64_t rv)
{
	return put(st, res, ns, name, json, len, tree, rv, NULL);
}

int
store_mirror_put_version(store *st, store_obj *o)
{
	return put(st, o->res, o->ns, o->name, NULL, 0, NULL, o->rev, o);
}

/* delete and delete_version: the final state in json or pre (its
   reference taken over), or neither. */
static int
del(store *st, const char *res, const char *ns, const char *name,
    const char *json, size_t len, uint64_t rv, store_obj *pre)
{
	struct store_coll *c = store_coll_get(st, res, 0);
	store_obj *cur, *last = NULL;
	char nsname[512];

	ns = ns ? ns : "";
	seen_rv(st, rv);
	if (c == NULL || !nsname_of(nsname, sizeof nsname, ns, name)) {
		store_obj_unref(pre);
		return 0;
	}
	if (prov_of(st, res, nsname) != NULL)
		return prov_event(st, res, ns, name, nsname, json, len, NULL,
		    rv, 1, pre);
	if ((cur = hmap_get(c->objs, nsname)) == NULL) {
		/* Already gone (a delete's response came first): still,
		   nothing older than this deletion may bring it back. */
		if (tomb_rv(c, nsname) > 0)
			tomb_set(c, nsname, rv);
		store_obj_unref(pre);
		return 0;
	}
	if (rv < cur->rev) {
		store_obj_unref(pre);
		return 0;
	}
	if (json != NULL || pre != NULL)
		last = version_of(st, res, ns, name, json, len, NULL, rv, 0,
		    pre);
	if (last == NULL)
		last = store_obj_ref(cur);
	cur = store_index_set(st, res, nsname, NULL);
	tomb_set(c, nsname, rv > cur->rev ? rv : cur->rev);
	st->stats.deletes++;
	store_push_event(st, STORE_DELETED, last, cur);
	if (!st->held)
		store_deliver(st);
	return 1;
}

int
store_mirror_delete(store *st, const char *res, const char *ns,
    const char *name, const char *json, size_t len, uint64_t rv)
{
	return del(st, res, ns, name, json, len, rv, NULL);
}

int
store_mirror_delete_version(store *st, store_obj *last)
{
	return del(st, last->res, last->ns, last->name, NULL, 0, last->rev,
	    last);
}

/* The objects a re-list lacks: held at or before its revision. */
struct gone {
	const hmap *listed;
	uint64_t upto;
	store_obj **objs;
	size_t n, cap;
};

static int
collect_gone(const char *key, void *value, void *arg)
{
	store_obj *o = value;
	struct gone *g = arg;

	if (o->rev <= g->upto && hmap_get(g->listed, key) == NULL) {
		XGROW(g->objs, g->cap, g->n + 1);
		g->objs[g->n++] = o;
	}
	return 0;
}

size_t
store_mirror_replace(store *st, const char *res,
    const struct store_mirror_item *items, size_t n, uint64_t list_rv)
{
	struct store_coll *c = store_coll_get(st, res, 1);
	struct gone g = { NULL, list_rv ? list_rv : UINT64_MAX, NULL, 0, 0 };
	hmap *listed = hmap_new();
	char **keys = xcalloc(n ? n : 1, sizeof *keys);
	size_t i, events = 0;

	seen_rv(st, list_rv);
	for (i = 0; i < n; i++) {
		const struct store_mirror_item *it = &items[i];
		const char *ns = it->ns ? it->ns : "";
		store_obj *o;

		keys[i] = xmalloc(strlen(ns) + strlen(it->name) + 2);
		sprintf(keys[i], "%s/%s", ns, it->name);
		hmap_put(listed, keys[i], keys[i]);
		seen_rv(st, it->rv);
		if (stale(c, keys[i], it->rv))
			continue;
		o = version_of(st, res, ns, it->name, it->json, it->len,
		    it->tree, it->rv, 1, NULL);
		if (o != NULL)	/* else the version held stays */
			events += install(st, c, o);
	}
	g.listed = listed;
	hmap_each(c->objs, collect_gone, &g);
	store_sort(g.objs, g.n);
	for (i = 0; i < g.n; i++) {
		store_obj *o = g.objs[i];
		const char *nsname = o->key + strlen(o->res) + 1;

		store_push_event(st, STORE_DELETED, store_obj_ref(o),
		    store_index_set(st, res, nsname, NULL));
		st->stats.deletes++;
		events++;
	}
	/* The list is the truth at list_rv: older deletions are in it. */
	tomb_prune(c, g.upto);
	free(g.objs);
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	hmap_free(listed);
	if (!st->held)
		store_deliver(st);
	return events;
}

void
store_mirror_progress(store *st, const char *res, uint64_t rv)
{
	struct store_coll *c = store_coll_get(st, res, 0);

	seen_rv(st, rv);
	if (c != NULL)
		tomb_prune(c, rv);
}

void
store_mirror_hold(store *st, int hold)
{
	st->held = hold;
	if (!hold)
		store_deliver(st);
}
