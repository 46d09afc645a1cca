/*
 * Write-ahead log with group commit, snapshots and crash recovery.
 *
 * The loop thread appends records (revision, op, key, value) to an in-memory
 * buffer; a dedicated sync thread writes the buffer and fdatasync()s it, so
 * every record appended while one fsync runs shares the next one. When a sync
 * completes, durable_cb runs on the loop thread with the highest revision now
 * on disk: the store acknowledges writes only from there.
 *
 * On disk (DIR/store/): log segments "log-<16 hex start rev>.wal" and
 * snapshots "snap-<16 hex rev>.snap". Each record carries a CRC32C; recovery
 * loads the newest valid snapshot, replays the segments after it in order, and
 * truncates the last segment at the first torn or corrupt record.
 */
#ifndef VOLRAY_WAL_H
#define VOLRAY_WAL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lib/rbuf.h"

enum wal_op { WAL_PUT = 1, WAL_DELETE = 2 };

typedef struct wal wal;
typedef struct wal_snap wal_snap;

/* Called during wal_open for every recovered record in revision order
 * (snapshot contents first, as WAL_PUT with the revision stored for each
 * object: its own from wal_snapshot_add_rev, else the snapshot's). */
typedef void (*wal_replay_cb)(void *arg, uint64_t rev, int op,
    const char *key, size_t klen, const char *val, size_t vlen);
/* Called on the loop thread: every record with revision <= rev is durable. */
typedef void (*wal_durable_cb)(void *arg, uint64_t rev);

/*
 * Open (creating if needed) the log under dir, replay it through replay_cb,
 * and start the sync thread. *last_rev is the highest recovered revision
 * (0 for a new store). Returns 0, or -1 with *cause set.
 */
int wal_open(uv_loop_t *loop, const char *dir, wal_replay_cb replay_cb,
    wal_durable_cb durable_cb, void *arg, uint64_t *last_rev, wal **out,
    char **cause);
/* Queue one record; revisions must be strictly increasing. Never blocks on disk. */
void wal_append(wal *, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen);
/* Bytes of log written since the last snapshot (to decide when to compact). */
uint64_t wal_log_bytes(const wal *);
/* Highest revision known durable. */
uint64_t wal_durable_rev(const wal *);

/*
 * Snapshot of the whole store at revision rev (the current revision: every
 * record <= rev has already been appended). Add every live object, then
 * commit; the sync thread writes it beside the log, fsyncs, renames, fsyncs
 * the directory, then removes log segments and snapshots it makes obsolete.
 * wal_snapshot_add_rev takes a reference to val; references are released on the
 * loop thread once the snapshot is written. Only one snapshot at a time:
 * wal_snapshot_begin returns NULL while one is in progress.
 */
wal_snap *wal_snapshot_begin(wal *, uint64_t rev);
/* Add one object with its own revision (its resourceVersion), so that
 * recovery gives it back unchanged. */
void wal_snapshot_add_rev(wal_snap *, const char *key, size_t klen,
    uint64_t rev, rbuf *val);
void wal_snapshot_commit(wal_snap *);

/* Write and fsync everything queued, wait for any snapshot, stop the thread.
 * durable_cb is not called again. The wal is freed by a uv_close callback:
 * the caller must run the loop afterwards (uv_run) before closing it. */
void wal_close(wal *);

/* Counters for /metrics. */
struct wal_stats {
	uint64_t syncs;          /* fdatasync calls */
	uint64_t records;        /* records made durable */
	uint64_t bytes;          /* bytes written to the log */
	uint64_t sync_usec_total;
	uint64_t batch_hist[8];  /* records per sync: 1,2-4,5-16,17-64,65-256,257-1024,1025-4096,more */
	uint64_t lat_hist[8];    /* fsync latency: <=0.5,1,2,5,10,25,50,>50 ms */
	uint64_t snapshots;
};
void wal_get_stats(const wal *, struct wal_stats *);

#endif
