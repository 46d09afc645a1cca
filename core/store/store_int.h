/*
 * Internals shared by the store's files: the store itself, and the steps
 * of a write that the mirror (store_mirror.c) takes as the log-backed
 * store (store.c) does: build a version, run the filters, index it, queue
 * its event, deliver. The files call downwards only: store_mirror.c calls
 * store.c, never the reverse.
 */
#ifndef VOLRAY_STORE_INT_H
#define VOLRAY_STORE_INT_H

#include "lib/hmap.h"
#include "store/store.h"
#include "store/wal.h"

/* One resource's objects. */
struct store_coll {
	char *res;
	hmap *objs;        /* "ns/name" -> store_obj */
	store_obj **sorted;
	size_t nsorted;
	int dirty;
	hmap *tombs;       /* a mirror's deleted keys: "ns/name" ->
			      struct store_tomb (NULL until one) */
};

/* A key with a provisional version (store_mirror_provisional). */
struct store_prov {
	uint64_t rev;		/* the provisional version's revision */
	store_obj *seen;	/* what subscribers last saw, or NULL */
	char key[];		/* "res/ns/name" */
};

/* A key a mirror deleted at rv: versions up to rv are stale for it. */
struct store_tomb {
	uint64_t rv;
	char nsname[];
};

struct store {
	uv_loop_t *loop;
	struct store_filter {
		char *res;		/* NULL: removed */
		int (*test)(void *, const cJSON *);
		void *arg;
		int handle;		/* the slot and its generation */
	} filters[STORE_MAX_FILTERS];
	int nfilters;		/* slots ever taken */
	uint32_t fgen;		/* bumped when a removed slot is taken */
	wal *wal;                  /* NULL in a mirror */
	int mirror;                /* versions come from another server */
	uint64_t rev;
	uint64_t start_rev;
	uint64_t durable;
	uint64_t live_bytes;       /* JSON bytes of every current version */
	hmap *colls;
	hmap *uids;
	hmap *deps;
	hmap *on_node;             /* spec.nodeName -> deps */
	hmap *labeled;             /* label pairs (store_labels.c) */
	store_event *pending;
	size_t npending, cappending, headpending;
	struct waiter *waiters;
	size_t nwaiters, capwaiters, headwaiters;
	struct sub *subs;
	size_t nsubs;
	struct { void (*fn)(void *); void *arg; } flush[4];
	size_t nflush;
	int delivering;
	int held;                  /* mirror: events wait for a release */
	struct store_backend *backend;	/* etcd (store_etcd.c), or NULL */
	hmap *prov;                /* a mirror's provisional versions:
				      key -> struct store_prov */
	struct store_stats stats;
};

/*
 * Where a store's writes go when it is a cache of another store (etcd):
 * store_put and store_delete hand their write here instead of making it,
 * and store_when_durable its wait (store_etcd.c sets it).
 */
struct store_backend {
	uint64_t (*put)(store *, const char *res, const char *ns,
	    const char *name, cJSON *obj, int del);
	void (*when)(store *, uint64_t rev, store_durable_cb, void *arg);
	void (*close)(store *);
	void *ctx;
};

/* Set metadata.resourceVersion of obj to rev. */
void store_set_rv(cJSON *obj, uint64_t rev);

/* An empty store on loop, with neither log nor objects. */
store *store_new(uv_loop_t *);
/* The collection of res, created if asked. */
struct store_coll *store_coll_get(store *, const char *res, int create);
/*
 * A new version (one reference) of res/ns/name at rev, holding json (the
 * reference is taken over) with the fields of tree, json's parsed form.
 */
store_obj *store_version_new(const char *res, const char *ns,
    const char *name, uint64_t rev, rbuf *json, const cJSON *tree);
/* What store_derive asked of o's resource, made from tree. */
void store_version_derive(store_obj *, const cJSON *tree);
/* The store filters of o's resource, on the tree it was written from. */
void store_run_filters(store *, store_obj *, const cJSON *tree);
/* Put o (its reference taken over) in the indexes in place of the
   current version, or remove nsname's when o is NULL; returns the version
   replaced (its reference is the caller's), or NULL. */
store_obj *store_index_set(store *, const char *res, const char *nsname,
    store_obj *o);
/* Index o's label pairs in place of old's (either may be NULL). */
void store_labels_index(store *, const store_obj *old, const store_obj *o);
void store_labels_free(store *);
/* Keys of the objects of res in ns labelled key=value, in no order. */
size_t store_labels_keys(const store *, const char *res, const char *ns,
    const char *key, const char *value, const char ***keys);
/* Queue an event (its references taken over) for the next delivery. */
void store_push_event(store *, enum store_event_type, store_obj *o,
    store_obj *old);
/* Acknowledge the waiters and deliver the queued events up to the durable
   revision, then call the flush subscribers; a no-op when called from a
   subscriber (the delivery under way picks up what it queued). */
void store_deliver(store *);

#endif
