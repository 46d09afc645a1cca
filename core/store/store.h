/*
 * The object store: every API object, indexed by resource, namespace and
 * name, versioned by one global revision, and made durable through the
 * write-ahead log (wal.c) before any write is acknowledged or observed.
 *
 * A stored object is an immutable, reference-counted version: its JSON bytes
 * (with metadata.resourceVersion already set) plus the few fields every path
 * needs pre-extracted. A write replaces the version in the index; watch
 * events keep the old and new versions alive for as long as they need them.
 * Events are delivered to subscribers only once the write is durable.
 */
#ifndef VOLRAY_STORE_H
#define VOLRAY_STORE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include <uv.h>

#include "lib/rbuf.h"
#include "lib/selector.h"

typedef struct store store;

struct store_owner {
	const char *uid;
	const char *api_version;
	const char *kind;
	const char *name;
	int controller;
	int block;
};

typedef struct store_obj {
	int refs;
	const char *key;   /* "res/ns/name" */
	const char *res;   /* storage resource: "pods", "deployments.apps" */
	const char *ns;    /* "" for cluster-scoped objects */
	const char *name;
	const char *uid;
	const char *node_name;  /* spec.nodeName or "" */
	uint64_t rev;
	rbuf *json;
	cJSON *labels;     /* metadata.labels (object) or NULL */
	struct store_owner *owners;
	int nowners;
	int nfinalizers;
	int deleting;      /* metadata.deletionTimestamp is set */
	uint32_t fgen;     /* the store's filter generation when fknown and
			      fmatch were set (where padding was) */
	char phase[16];    /* status.phase (truncated), or "" */
	char *strs;        /* storage for the strings above */
	void *derived;     /* what a subsystem derives from a version loaded
			      at open (store_derive), or NULL */
	uint64_t fknown;   /* store filters run on this version (bit = slot) */
	uint64_t fmatch;   /* and those that matched */
} store_obj;

/*
 * Have every version of resource res that the store loads at open (its
 * snapshot and log, after a restart) carry make(tree), computed from the
 * tree the store parses then anyway, and freed with drop when the version
 * goes. Versions written later carry NULL: their writers' subsystems see
 * them as events. Process-wide; set before any store opens. make may
 * return NULL. The scheduler keeps its summary of each pod this way, so
 * its first session after a restart need not parse 100,000 bound pods.
 */
typedef void *(*store_derive_fn)(const cJSON *tree);
void store_derive(const char *res, store_derive_fn make, void (*drop)(void *));

enum store_event_type { STORE_ADDED = 1, STORE_MODIFIED, STORE_DELETED };

/* An event delivered after it is durable: obj is the new version (for
 * DELETED, the final state with the deletion revision), old the previous. */
typedef struct store_event {
	enum store_event_type type;
	store_obj *obj;
	store_obj *old;
} store_event;

typedef void (*store_event_cb)(void *arg, const store_event *);
typedef void (*store_durable_cb)(void *arg);

int store_open(uv_loop_t *, const char *data_dir, store **, char **cause);
/* Flush to disk and free everything. */
void store_close(store *);

store_obj *store_obj_ref(store_obj *);
void store_obj_unref(store_obj *);
/* Parse the stored JSON into a new tree (caller frees). */
cJSON *store_obj_tree(const store_obj *);

uint64_t store_rev(const store *);
/* The oldest revision since which this process has seen every change. */
uint64_t store_start_rev(const store *);

const store_obj *store_get(const store *, const char *res, const char *ns,
    const char *name);
const store_obj *store_get_uid(const store *, const char *uid);
/*
 * Objects of one resource in (namespace, name) order, all namespaces when ns
 * is NULL. The array belongs to the store and stays valid until the next write.
 */
size_t store_list(store *, const char *res, const char *ns,
    store_obj *const **out);
/*
 * Every object of one resource, unordered, each with a reference taken:
 * a copy that stays valid across writes (for reading off the loop: the
 * versions are immutable). The caller unrefs each and frees the array.
 */
size_t store_list_refs(store *, const char *res, store_obj ***out);
/* Sort such a copy in (namespace, name) order; touches only the copy. */
void store_sort(store_obj **, size_t);
size_t store_count(const store *, const char *res);
/* Visit every resource name that has objects. */
void store_each_res(const store *, void (*fn)(const char *res, size_t n,
    void *arg), void *arg);

/*
 * Write a new version of an object (create or replace). Sets
 * metadata.resourceVersion in obj to the new revision and returns it.
 */
uint64_t store_put(store *, const char *res, const char *ns, const char *name,
    cJSON *obj);
/*
 * A test run on the tree of each version of res as it is written (the
 * store has the tree then), so that a subscriber asking it of an event's
 * version need not parse the bytes: the controllers' watch field
 * selectors. Returns a handle, or -1 while STORE_MAX_FILTERS are in use.
 * A removed filter's slot is taken again by a later one: the handle
 * names the slot and the generation it was taken in, so a version the
 * slot's earlier filter judged is not known to the new one.
 * store_obj_filtered: 1 matched, 0 did not, -1 not known (the version was
 * loaded at open or written before the filter was added); a handle given
 * back is not to be asked again. store_filter_remove of a handle given
 * back already does nothing.
 */
#define STORE_MAX_FILTERS 64
int store_filter_add(store *, const char *res,
    int (*test)(void *arg, const cJSON *tree), void *arg);
void store_filter_remove(store *, int handle);
int store_obj_filtered(const store_obj *, int handle);
/* Filters in use. */
int store_filter_count(const store *);

/* Remove an object; last is its final state (resourceVersion is set). */
uint64_t store_delete(store *, const char *res, const char *ns,
    const char *name, cJSON *last);

/* Run cb once every write up to rev is durable (at once if it already is). */
void store_when_durable(store *, uint64_t rev, store_durable_cb, void *arg);
/* Subscribe to durable events, in revision order. */
void store_subscribe(store *, store_event_cb, void *arg);
/* Called after each batch of events made durable by one fsync. */
void store_subscribe_flush(store *, void (*fn)(void *arg), void *arg);

/* Keys ("res/ns/name") of objects with an ownerReference to uid. */
size_t store_dependents(const store *, const char *uid, const char ***keys);
/*
 * The objects of res in ns ("" for cluster-scoped ones) that the label
 * selector sel selects, sorted as store_list sorts, into *out (malloc'd;
 * the versions stay valid until the next write), found through the index
 * of labels (store_labels.c) from one of sel's requirements of one exact
 * value; -1 when sel has none (then scan store_list).
 */
ssize_t store_list_selected(const store *, const char *res, const char *ns,
    const selector *sel, store_obj ***out);
/* Keys of the objects (pods) whose spec.nodeName is node; the array
   changes with the next write: copy what a loop that writes needs. */
size_t store_on_node(const store *, const char *node, const char ***keys);
/* Split a key into its parts; returns a store_obj or NULL. */
const store_obj *store_get_key(const store *, const char *key);

/*
 * A mirror (store_mirror.c): a store with no log and no data directory,
 * filled by an informer with the versions another API server gave (list
 * and watch), and read by the same calls with the same indexes. Its
 * versions carry the remote resourceVersion as their revision, and
 * store_rev is the largest seen. Its events reach subscribers within the
 * call that makes them, in call order, and the flush subscribers run after
 * each call; store_when_durable calls back at once. store_put and
 * store_delete still work on it (the next revision after the largest
 * seen, delivered at once), but its writers use these calls instead.
 *
 * A version not newer than the one held for its key is ignored (a
 * write's response may come before its watch event), and so is one not
 * newer than the key's deletion: a mirror remembers the resourceVersion
 * at which it deleted each key (a tombstone) until a newer version of the
 * key, a re-list or the watch's progress past it (store_mirror_progress).
 */
int store_mirror_open(uv_loop_t *, store **);
/*
 * Replace res/ns/name with the version in json (len bytes, its
 * metadata.resourceVersion rv), or in tree (not kept; printed once):
 * ADDED or MODIFIED (a version with a new uid is the old object DELETED,
 * then the new ADDED). Returns 1, 0 when ignored as stale, or -EINVAL
 * when json is no JSON object (nothing changes).
 */
int store_mirror_put(store *, const char *res, const char *ns,
    const char *name, const char *json, size_t len, uint64_t rv);
int store_mirror_put_tree(store *, const char *res, const char *ns,
    const char *name, const cJSON *tree, uint64_t rv);
/* Both: json kept as the version's text, its fields read from tree, its
   parsed form (neither parsed nor printed again: a write's answer). */
int store_mirror_put_parsed(store *, const char *res, const char *ns,
    const char *name, const char *json, size_t len, const cJSON *tree,
    uint64_t rv);
/*
 * Remove res/ns/name, deleted at rv: DELETED, whose version is the final
 * state in json when given (and a JSON object), else the one held.
 * Returns 1, or 0 when absent or rv is older than the version held.
 */
int store_mirror_delete(store *, const char *res, const char *ns,
    const char *name, const char *json, size_t len, uint64_t rv);

/*
 * A version of res/ns/name at rv (its metadata.resourceVersion) built
 * from tree, a JSON object (printed once, not kept), for the two calls
 * below; NULL when tree is no object. It touches no store and no global
 * state, so a thread other than the loop's may build it (the remote
 * client decodes watch events off the loop); the store filters run when
 * it is put. Versions made so carry no store_derive data.
 */
store_obj *store_mirror_version(const char *res, const char *ns,
    const char *name, const cJSON *tree, uint64_t rv);
/* store_mirror_put and store_mirror_delete (o the final state) of a
   version so built, its reference taken over; on the loop. */
int store_mirror_put_version(store *, store_obj *o);
int store_mirror_delete_version(store *, store_obj *o);

/* One object of a re-list: json, tree or both (one is parsed or printed
   from the other), rv its metadata.resourceVersion. ns NULL or "" for a
   cluster-scoped object. */
struct store_mirror_item {
	const char *ns;
	const char *name;
	const char *json;
	size_t len;
	const cJSON *tree;
	uint64_t rv;
};
/*
 * A re-list of res at list_rv (the list's resourceVersion; 0: the list is
 * all there is) replaces what the mirror holds of res, as client-go's
 * Replace: ADDED for an object new to the mirror, MODIFIED for one whose
 * rv is newer than the version held, DELETED for one held (at or before
 * list_rv) that the list lacks; nothing for the rest, so that no event a
 * subscriber has handled comes again. Items are taken in order; the
 * deletions follow in (namespace, name) order; one flush after all of
 * them. Versions made here carry store_derive's data, as a store's
 * loaded at open do. Returns the number of events delivered.
 */
size_t store_mirror_replace(store *, const char *res,
    const struct store_mirror_item *, size_t n, uint64_t list_rv);
/*
 * The watch of res has delivered every change up to rv (a bookmark):
 * store_rev becomes at least rv, and the tombstones of res up to rv go.
 */
void store_mirror_progress(store *, const char *res, uint64_t rv);
/*
 * Hold a mirror's events (hold 1): puts, deletes and replaces change the
 * indexes at once, as a write to the embedded store does, and their
 * events wait until hold 0 delivers them. A remote client writes its own
 * writes' answers through this way, so a reader sees its write at once
 * and subscribers hear of it later, never in the middle of the write.
 */
void store_mirror_hold(store *, int hold);

/*
 * A version the writer of res/ns/name has just committed at rv to the
 * store behind the mirror (etcd), before the watch brings it (tree NULL:
 * a deletion): readers see it at once; subscribers hear of it, and of
 * every change of the key before it, when the watch delivers them, in
 * revision order. 1, or -EINVAL.
 */
int store_mirror_provisional(store *, const char *res, const char *ns,
    const char *name, const cJSON *tree, uint64_t rv);

/*
 * The etcd-backed store (store_etcd.c): a mirror that is the cache of an
 * etcd cluster, which is the truth. It lists the prefix at open and then
 * follows one etcd watch of it, so its versions carry etcd's revisions
 * (mod_revision) as their resourceVersions and its events come in etcd's
 * revision order. It keeps no log of its own.
 *
 * Writes: store_put and store_delete inside a batch (store_batch_begin)
 * are staged, each guarded by the mod_revision of the version the cache
 * holds (0: the key must be absent), and return STORE_REV_PENDING, which
 * is also the resourceVersion they set in the caller's tree; the batch
 * commits as one etcd transaction (store_batch_commit: the callback runs
 * once the watch has brought the write back, or, on a conflict, once the
 * cache has caught up with the revision etcd had then: do it all again).
 * A write outside a batch commits at once, blocking the loop, and is
 * written into the cache as a provisional version (its caller reads it
 * back); on a conflict it is dropped and logged, and store_put returns 0.
 *
 * The rule of the asynchronous commit, which is how the loop writes (the
 * API's writes, the embedded client's _async calls):
 * - Staged versions are never in the cache. Between the stage and the
 *   callback readers see the version before; the callback runs once the
 *   cache holds the write (OK) or the version that beat it (CONFLICT),
 *   so a caller that reads after its callback reads its own write.
 * - Two commits of one key in flight were both staged over the version
 *   the cache held, and both compare its mod_revision: etcd applies the
 *   first to arrive and the other gets CONFLICT. Nothing is overwritten
 *   unseen; a writer that needs both keeps one write per key in flight
 *   (the workqueue's one reconcile per key, the node runtimes' one status
 *   write per object) or runs again on the winner (the API's retries).
 * - A commit that fails (ERROR: etcd unreachable, or the answer lost in
 *   transit) has nothing in the cache to drop, as store_batch_abort has
 *   nothing before a commit; if it did commit after all, the watch brings
 *   it as any other writer's. The caller hears 500 and may try again: a
 *   try staged over the old version gets CONFLICT, never a double write.
 * The synchronous commit (store_batch_commit_sync) is for the offline
 * copy (store_migrate) and callers with no loop to hold yet: it puts the
 * committed versions into the cache at once as provisional ones.
 */
#define STORE_REV_PENDING	9000000000000000001ULL

struct store_etcd_layout {
	/* The path of res/ns/name under the prefix ("pods/default/web-1",
	   "ray.io/rayjobs/default/x") into buf; -1 when res has none. */
	int (*join)(const char *res, const char *ns, const char *name,
	    char *buf, size_t size);
	/* And back: -1 when the path is no object's. */
	int (*split)(const char *path, char *res, size_t rsize, char *ns,
	    size_t nssize, char *name, size_t namesize);
	/* The kind res holds (a value of another kind is refused). */
	const char *(*kind_of)(const char *res);
};

struct store_etcd_conf {
	const char *const *servers;	/* --etcd-servers */
	int nservers;
	const char *ca_file, *cert_file, *key_file;
	const char *prefix;		/* --etcd-prefix: "/registry" */
	unsigned compaction_s;		/* 0: never */
	const struct store_etcd_layout *layout;
};

int store_etcd_open(uv_loop_t *, const struct store_etcd_conf *, store **,
    char **cause);
int store_is_etcd(const store *);

enum { STORE_COMMIT_OK = 0, STORE_COMMIT_CONFLICT = 1,
    STORE_COMMIT_ERROR = -1 };
/* Stage the writes that follow (a no-op on another store). */
void store_batch_begin(store *);
/* Writes staged since; 0 on another store. */
size_t store_batch_size(const store *);
/* Commit what was staged, asynchronously; rev is the write's revision
   (the staged versions' resourceVersion). An empty batch: OK, 0. */
typedef void (*store_commit_fn)(void *arg, int outcome, uint64_t rev,
    const char *err);
void store_batch_commit(store *, store_commit_fn, void *arg);
/* The same, blocking the loop; committed versions are provisional in the
   cache, and on a conflict the keys are read again from etcd. */
int store_batch_commit_sync(store *, uint64_t *rev, char **cause);
/* Whether res/ns/name is staged: 1 written, 0 deleted, -1 neither. */
int store_batch_staged(const store *, const char *res, const char *ns,
    const char *name);
/* Forget what was staged. */
void store_batch_abort(store *);
/*
 * Call cb once the cache holds every write etcd had acknowledged when
 * this was called (a consistent read); at once on another store.
 */
void store_sync(store *, store_durable_cb, void *arg);
/*
 * Cluster state that is not an object (the PKI, the admin's token):
 * the value of PREFIX/volray.io/NAME (0, malloc'd; 1 when absent; -1 and
 * *cause), and its creation when absent (0 created, 1 there already).
 */
int store_etcd_get_raw(store *, const char *name, char **val, size_t *len,
    char **cause);
int store_etcd_create_raw(store *, const char *name, const char *val,
    size_t len, char **cause);

/*
 * Copy every object of from that to lacks into to (store_migrate.c), as
 * it is but for its resourceVersion; the objects to has already are left
 * alone. The counts: copied, already there, written meanwhile by another
 * (left to it). 0, or -1 with *cause.
 */
struct store_migrate_counts {
	size_t copied, there, lost;
};
int store_migrate(store *from, store *to, struct store_migrate_counts *,
    char **cause);

struct store_stats {
	uint64_t puts, deletes, snapshots;
};
void store_get_stats(const store *, struct store_stats *);
struct wal *store_wal(const store *);

#endif
