/*
 * An etcd v3 client: the key-value calls the etcd-backed store needs
 * (range, transaction, watch, compaction), on the loop: every callback
 * runs on the loop thread. etcdkv_grpc.c implements it over etcd's gRPC
 * API (gRPC's C core and protobuf-c). A client over etcd's JSON gateway
 * (/v3/kv/txn, /v3/watch on libcurl) was written first and measured
 * against it: bench/etcdwire.sh found gRPC 1.6-2.7x faster on create
 * transactions with 2-4x less of etcd's CPU, and the gateway client lost
 * its watch across an etcd restart; it is in the history (git log --
 * core/store/etcdkv.c). tests/unit/test-etcdkv.c checks the contract.
 * Keys and values are bytes; revisions are etcd's int64.
 *
 * Several endpoints (the members of one cluster) are tried in turn: a
 * read or a watch that cannot reach one goes on to the next; a
 * transaction that fails in transit is reported as failed (it may have
 * committed) and the next call uses the next endpoint.
 */
#ifndef VOLRAY_ETCDKV_H
#define VOLRAY_ETCDKV_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct etcdkv etcdkv;

struct etcdkv_conf {
	const char *const *endpoints;	/* "http://127.0.0.1:2379", ... */
	int nendpoints;
	const char *ca_file;		/* --etcd-cafile, or NULL */
	const char *cert_file;		/* --etcd-certfile */
	const char *key_file;		/* --etcd-keyfile */
	unsigned timeout_ms;		/* of a call (0: 10 s) */
};

/* One key's value as etcd holds it. */
struct etcdkv_kv {
	char *key;
	size_t klen;
	char *value;		/* NUL-terminated; NULL for a deletion */
	size_t vlen;
	int64_t create_rev, mod_rev, version;
};

/* One operation of a transaction, guarded by a compare on its key's
   mod_revision: expect_mod 0 means the key must be absent, -1 no
   compare. */
struct etcdkv_op {
	int del;
	const char *key;
	size_t klen;
	const char *value;
	size_t vlen;
	int64_t expect_mod;
};

/* Outcomes of a transaction. */
enum { ETCDKV_OK = 0, ETCDKV_CONFLICT = 1, ETCDKV_ERROR = -1 };

etcdkv *etcdkv_new(uv_loop_t *, const struct etcdkv_conf *, char **cause);
/* Calls under way are dropped (their callbacks are not called). In
   etcdkv_grpc.c, watches still running are stopped and freed too, and
   it may be called from one of the client's callbacks. */
void etcdkv_free(etcdkv *);
/* The endpoint calls go to now. */
const char *etcdkv_endpoint(const etcdkv *);

/*
 * A transaction: every compare holds, then every op, at one revision.
 * done gets ETCDKV_OK and the revision of the write, ETCDKV_CONFLICT and
 * etcd's revision then (a compare failed: wait for that revision and try
 * again), or ETCDKV_ERROR with a message.
 */
typedef void (*etcdkv_txn_fn)(void *arg, int outcome, int64_t rev,
    const char *err);
void etcdkv_txn(etcdkv *, const struct etcdkv_op *, size_t n,
    etcdkv_txn_fn done, void *arg);
/* The same, blocking the loop; returns the outcome. */
int etcdkv_txn_sync(etcdkv *, const struct etcdkv_op *, size_t n,
    int64_t *rev, char **cause);

/*
 * A range [key, end) (end NULL: the key alone; "\0" for every key from
 * key on), at revision rev (0: now), at most limit keys (0: all),
 * blocking the loop. kvs (malloc'd, free with etcdkv_kvs_free) and *n;
 * *rev_out the revision read at; *more whether keys were left out; with
 * count_only, *n is the count and kvs NULL. 0, or -1 with *cause
 * ("compacted" when rev is below the compacted revision).
 */
struct etcdkv_range {
	const char *key;
	size_t klen;
	const char *end;
	size_t elen;
	int64_t rev;
	int64_t limit;
	int64_t min_mod_rev;
	int count_only;
	int keys_only;
};
int etcdkv_range_sync(etcdkv *, const struct etcdkv_range *,
    struct etcdkv_kv **kvs, size_t *n, int64_t *rev_out, int *more,
    char **cause);
void etcdkv_kvs_free(struct etcdkv_kv *, size_t n);
/*
 * The same range without blocking: done gets kvs (its to free), n, the
 * revision read at and more, or rev -1 and err ("compacted" when rev is
 * below the compacted revision). Tried at the current endpoint only (a
 * lost one is left for the next call).
 */
typedef void (*etcdkv_range_fn)(void *arg, struct etcdkv_kv *kvs, size_t n,
    int64_t rev, int more, const char *err);
void etcdkv_range(etcdkv *, const struct etcdkv_range *, etcdkv_range_fn,
    void *arg);
/* The cluster's revision now, asynchronously: rev, or -1 with err. */
typedef void (*etcdkv_rev_fn)(void *arg, int64_t rev, const char *err);
void etcdkv_current_rev(etcdkv *, const char *probe_key, etcdkv_rev_fn,
    void *arg);

/*
 * A watch of [key, end) from start_rev on, with each deletion's previous
 * value: on_event for each change in revision order (kv->value NULL for
 * a deletion; prev the value before, or NULL), on_progress with the
 * revision every event up to which was delivered, and on_end once when
 * the watch cannot go on: compacted > 0 when start_rev (or the revision
 * reached) is below etcd's compaction, else err. A watch whose endpoint
 * fails is taken up again at the next one from the revision after the
 * last delivered.
 */
struct etcdkv_watch_cb {
	void (*on_event)(void *arg, const struct etcdkv_kv *kv,
	    const struct etcdkv_kv *prev);
	void (*on_progress)(void *arg, int64_t rev);
	void (*on_end)(void *arg, int64_t compacted, const char *err);
	void *arg;
};
typedef struct etcdkv_watch etcdkv_watch;
etcdkv_watch *etcdkv_watch_start(etcdkv *, const char *key, size_t klen,
    const char *end, size_t elen, int64_t start_rev,
    const struct etcdkv_watch_cb *);
void etcdkv_watch_stop(etcdkv_watch *);

/* Compact the history up to rev (asynchronously; errors are logged). */
void etcdkv_compact(etcdkv *, int64_t rev);

/* The end of the range of every key that starts with prefix (its last
   byte plus one), into buf of size >= len. */
void etcdkv_prefix_end(const char *prefix, size_t len, char *buf);

#endif
