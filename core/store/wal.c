/*
 * Write-ahead log with group commit, snapshots and crash recovery.
 *
 * wal_append encodes a record into the "pending" buffer under a mutex: one
 * memcpy, no system call. The sync thread swaps that buffer with its own,
 * fills in the records' CRCs, pwrite()s the batch at the end of the current
 * segment and fdatasync()s it; only then does it publish the batch's last
 * revision (an atomic) and wake the loop thread through a uv_async, whose
 * callback calls durable_cb. Every record appended while one fdatasync runs
 * rides on the next one, which is what group commit means. A failed write
 * or fdatasync is logged and retried with backoff; after a failed fdatasync
 * the whole batch is written again, since Linux may already have dropped the
 * dirty pages it could not write.
 *
 * Records, little-endian: u32 len, u32 crc, then len bytes of payload: u64
 * rev, u8 op, u32 klen, key, u32 vlen, value. The CRC32C covers the payload;
 * len is checked against klen and vlen inside it. Segments are
 * DIR/store/log-<16 hex>.wal, named by the first revision they may hold, and
 * are preallocated with fallocate() so that most fdatasync()s need not touch
 * file metadata; a zero length therefore marks the end of a segment.
 *
 * A snapshot at revision R asks the sync thread, in order with appends, to
 * start a new segment at R+1; a snapshot thread meanwhile writes every
 * (key, revision, value) to snap-<R>.snap.tmp (header, records in the log
 * format, trailer with count and whole-file CRC), fsyncs it, renames it,
 * fsyncs the directory, and once the rotation has happened removes older
 * snapshots and every segment that started at or before R. The snapshot
 * does not run on the sync thread so that a large one never holds up
 * commits. Value references are dropped on the loop thread afterwards.
 *
 * Recovery (wal_open) takes DIR/store/lock (flock) so no second process
 * shares the log, loads the newest snapshot that validates, replays the
 * segments in order skipping revisions the snapshot covers, truncates the
 * log at the first torn or corrupt record, fsyncs what it read (it may have
 * come from the page cache of a killed process) and starts a new segment.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/crc32c.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/wal.h"

#define REC_HDR		8			/* u32 len, u32 crc */
#define REC_FIXED	(8 + 1 + 4 + 4)		/* rev, op, klen, vlen */
#define REC_MAX		(1U << 30)		/* largest payload accepted */

#define SNAP_MAGIC	"VRSNAP1\n"
#define SNAP_HDR	24			/* magic, u64 rev, u64 count */
#define SNAP_TRAILER	16			/* u64 count, u32 crc, magic */
#define SNAP_END_MAGIC	0x444e4553u		/* "SEND" */

#define PREALLOC	(64ULL << 20)	/* segment preallocation step */
#define BUF_KEEP	(16U << 20)	/* larger idle buffers are freed */
#define CLOSE_TRIES	5		/* retries before giving up at close */

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

struct snap_ent {
	char *key;
	size_t klen;
	uint64_t rev;
	rbuf *val;
};

enum snap_state { SNAP_BUILDING, SNAP_RUNNING, SNAP_DONE, SNAP_FAILED };

struct wal_snap {
	wal *w;
	uint64_t rev;
	struct snap_ent *ents;
	size_t n;
	size_t cap;
	uint64_t log_bytes;	/* given back to the wal if writing fails */
	uv_thread_t thread;
	int committed;		/* loop thread only */
	enum snap_state state;	/* under w->mu once the thread runs */
};

struct wal {
	uv_loop_t *loop;
	char *dir;			/* DIR/store */
	wal_durable_cb durable_cb;
	void *arg;
	uv_async_t async;
	int lockfd;

	/* Loop thread only. */
	uint64_t log_bytes;
	uint64_t appended;		/* last revision appended */
	uint64_t delivered;		/* last revision given to durable_cb */
	wal_snap *snap;

	/* Under mu. */
	uv_mutex_t mu;
	uv_cond_t cond;			/* wakes the sync thread */
	uv_cond_t snapcond;		/* wakes the snapshot thread */
	struct buf pending;
	size_t pending_n;
	uint64_t pending_rev;
	int rotate;
	size_t rotate_off;
	uint64_t rotate_rev;
	uint64_t seg_start_pub;		/* segments before it are closed */
	int idle;
	int closing;
	int sync_done;
	struct wal_stats stats;

	/* Sync thread only (and wal_open/wal_close around it). */
	uv_thread_t thread;
	struct buf mine;
	int fd;
	uint64_t seg_start;
	uint64_t off;
	uint64_t prealloc_end;
	int broken;			/* gave up on a batch: publish none */

	uint64_t durable;		/* atomic */
};

/* Little-endian encoding. */

static void
put32(char *p, uint32_t v)
{
	unsigned char *u = (unsigned char *)p;

	u[0] = v;
	u[1] = v >> 8;
	u[2] = v >> 16;
	u[3] = v >> 24;
}

static void
put64(char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* Records. */

struct rec {
	uint64_t rev;
	int op;
	const char *key;
	size_t klen;
	const char *val;
	size_t vlen;
};

static size_t
rec_size(size_t klen, size_t vlen)
{
	return REC_HDR + REC_FIXED + klen + vlen;
}

/* Encode a record at p, leaving its CRC for rec_seal. */
static void
rec_encode(char *p, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
	put32(p, REC_FIXED + klen + vlen);
	put32(p + 4, 0);
	put64(p + 8, rev);
	p[16] = op;
	put32(p + 17, klen);
	if (klen > 0)
		memcpy(p + 21, key, klen);
	put32(p + 21 + klen, vlen);
	if (vlen > 0)
		memcpy(p + 25 + klen, val, vlen);
}

/* Fill in the CRC of every record in a buffer of encoded records. */
static void
rec_seal_all(char *p, size_t len)
{
	size_t off = 0, n;

	while (off < len) {
		n = get32((unsigned char *)p + off);
		put32(p + off + 4, crc32c_update(0, p + off + REC_HDR, n));
		off += REC_HDR + n;
	}
}

/*
 * Decode the record at p with avail bytes after it. Returns its size, 0 at
 * the end of the log (no bytes left or a zero length), or -1 if the record
 * is torn or corrupt, with *why set.
 */
static ssize_t
rec_decode(const unsigned char *p, size_t avail, struct rec *r,
    const char **why)
{
	uint32_t n, klen, vlen;

	if (avail == 0)
		return 0;
	if (avail < 4) {
		while (avail > 0 && p[avail - 1] == 0)
			avail--;
		if (avail == 0)
			return 0;
		*why = "short record header";
		return -1;
	}
	if ((n = get32(p)) == 0)
		return 0;
	if (avail < REC_HDR) {
		*why = "short record header";
		return -1;
	}
	if (n < REC_FIXED || n > REC_MAX) {
		*why = "impossible record length";
		return -1;
	}
	if (n > avail - REC_HDR) {
		*why = "short record";
		return -1;
	}
	if (crc32c_update(0, p + REC_HDR, n) != get32(p + 4)) {
		*why = "bad record CRC";
		return -1;
	}
	klen = get32(p + 17);
	if (klen > n - REC_FIXED ||
	    (vlen = get32(p + 21 + klen)) != n - REC_FIXED - klen) {
		*why = "inconsistent record lengths";
		return -1;
	}
	r->rev = get64(p + 8);
	r->op = p[16];
	if (r->op != WAL_PUT && r->op != WAL_DELETE) {
		*why = "unknown record operation";
		return -1;
	}
	r->key = (const char *)p + 21;
	r->klen = klen;
	r->val = (const char *)p + 25 + klen;
	r->vlen = vlen;
	return REC_HDR + n;
}

/* Small helpers. */

static void
buf_reserve(struct buf *b, size_t n)
{
	size_t cap = b->cap > 0 ? b->cap : 65536;

	if (b->cap - b->len >= n)
		return;
	while (cap - b->len < n)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

/* Write all of p at offset off, riding out partial writes and EINTR. */
static int
pwrite_all(int fd, const char *p, size_t n, uint64_t off)
{
	ssize_t r;

	while (n > 0) {
		if ((r = pwrite(fd, p, n, (off_t)off)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= r;
		off += r;
	}
	return 0;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= r;
	}
	return 0;
}

/* Make renames, creations and removals in dir durable. */
static int
fsync_dir(const char *dir)
{
	int fd, r = 0;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fsync(fd) != 0)
		r = -errno;
	close(fd);
	return r;
}

/* Parse "<prefix><16 hex digits><suffix>" exactly. */
static int
parse_name(const char *name, const char *prefix, const char *suffix,
    uint64_t *rev)
{
	size_t pl = strlen(prefix), i;
	uint64_t v = 0;
	int c;

	if (strncmp(name, prefix, pl) != 0)
		return -1;
	for (i = 0; i < 16; i++) {
		c = name[pl + i];
		if (c >= '0' && c <= '9')
			v = v << 4 | (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (c - 'a' + 10);
		else
			return -1;
	}
	if (strcmp(name + pl + 16, suffix) != 0)
		return -1;
	*rev = v;
	return 0;
}

static char *
seg_path(const char *dir, uint64_t start)
{
	return util_printf("%s/log-%016llx.wal", dir, (unsigned long long)start);
}

static char *
snap_path(const char *dir, uint64_t rev, const char *suffix)
{
	return util_printf("%s/snap-%016llx.snap%s", dir, (unsigned long long)rev,
	    suffix);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
u64_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	XGROW(*v, *cap, *n + 1);
	(*v)[(*n)++] = x;
}

/* Create (or empty) the segment starting at start and make its name durable. */
static int
seg_create(const char *dir, uint64_t start, int *fdp)
{
	char *path = seg_path(dir, start);
	int fd, r;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	r = fd < 0 ? -errno : 0;
	free(path);
	if (r != 0)
		return r;
	if ((r = fsync_dir(dir)) != 0) {
		close(fd);
		return r;
	}
	*fdp = fd;
	return 0;
}

/* Recovery. */

struct map {
	int fd;
	unsigned char *p;
	size_t len;
};

/* Open and map a whole file read-only (an empty file maps to nothing). */
static int
map_open(const char *path, int flags, struct map *m)
{
	struct stat st;
	int r;

	m->p = NULL;
	m->len = 0;
	if ((m->fd = open(path, flags | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(m->fd, &st) != 0)
		goto fail;
	m->len = st.st_size;
	if (m->len == 0)
		return 0;
	m->p = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, m->fd, 0);
	if (m->p == MAP_FAILED) {
		m->p = NULL;
		goto fail;
	}
	madvise(m->p, m->len, MADV_SEQUENTIAL);
	return 0;
fail:
	r = -errno;
	close(m->fd);
	return r;
}

static void
map_close(struct map *m)
{
	if (m->p != NULL)
		munmap(m->p, m->len);
	close(m->fd);
}

/* Check a mapped snapshot end to end: header, every record, trailer. */
static int
snap_check(const struct map *m, uint64_t rev, const char **why)
{
	const unsigned char *p = m->p;
	uint64_t count, n = 0;
	size_t off, end;
	struct rec r;
	ssize_t sz;

	if (m->len < SNAP_HDR + SNAP_TRAILER) {
		*why = "file too short";
		return -1;
	}
	if (memcmp(p, SNAP_MAGIC, 8) != 0 || get64(p + 8) != rev) {
		*why = "bad header";
		return -1;
	}
	count = get64(p + 16);
	end = m->len - SNAP_TRAILER;
	for (off = SNAP_HDR; off < end; off += sz) {
		if ((sz = rec_decode(p + off, end - off, &r, why)) <= 0) {
			if (sz == 0)
				*why = "zero record length";
			return -1;
		}
		if (r.op != WAL_PUT || r.rev > rev) {
			*why = "record not a live object";
			return -1;
		}
		n++;
	}
	if (off != end || n != count || get64(p + end) != count) {
		*why = "record count mismatch";
		return -1;
	}
	if (get32(p + end + 12) != SNAP_END_MAGIC ||
	    crc32c_update(0, p, end + 8) != get32(p + end + 8)) {
		*why = "bad trailer";
		return -1;
	}
	return 0;
}

/*
 * Load the newest snapshot that validates into replay_cb. Invalid ones are
 * renamed aside so they are neither trusted nor checked again.
 */
static int
recover_snapshot(wal *w, uint64_t *snaps, size_t nsnaps,
    wal_replay_cb replay_cb, void *arg, uint64_t *snaprev, char **cause)
{
	const char *why;
	char *path, *aside;
	struct map m;
	struct rec r;
	size_t i, off;
	ssize_t sz;
	int rc;

	*snaprev = 0;
	for (i = nsnaps; i-- > 0;) {
		path = snap_path(w->dir, snaps[i], "");
		if ((rc = map_open(path, O_RDONLY, &m)) != 0) {
			*cause = util_printf("%s: %s", path, strerror(-rc));
			free(path);
			return -1;
		}
		if (snap_check(&m, snaps[i], &why) != 0) {
			aside = snap_path(w->dir, snaps[i], ".corrupt");
			log_error("wal: %s: %s; ignoring it (renamed to %s)",
			    path, why, aside);
			map_close(&m);
			if (rename(path, aside) != 0)
				log_error("wal: rename %s: %s", path,
				    strerror(errno));
			free(aside);
			free(path);
			continue;
		}
		off = SNAP_HDR;
		while (off < m.len - SNAP_TRAILER) {
			sz = rec_decode(m.p + off, m.len - SNAP_TRAILER - off,
			    &r, &why);
			replay_cb(arg, r.rev, WAL_PUT, r.key, r.klen, r.val,
			    r.vlen);
			off += sz;
		}
		log_info("wal: loaded snapshot %s (%llu objects)", path,
		    (unsigned long long)get64(m.p + 16));
		map_close(&m);
		free(path);
		*snaprev = snaps[i];
		return 0;
	}
	return 0;
}

/* True if every byte of p[0..n) is zero (preallocated, never written). */
static int
all_zero(const unsigned char *p, size_t n)
{
	static const unsigned char z[4096];
	size_t k;

	while (n > 0) {
		k = n < sizeof z ? n : sizeof z;
		if (memcmp(p, z, k) != 0)
			return 0;
		p += k;
		n -= k;
	}
	return 1;
}

/*
 * Replay one segment. Returns 0 if it ended cleanly, 1 if it was torn or
 * corrupt (and has been truncated there), -1 on an I/O error.
 */
static int
recover_segment(wal *w, uint64_t start, uint64_t snaprev, uint64_t *logrev,
    wal_replay_cb replay_cb, void *arg, char **cause)
{
	char *path = seg_path(w->dir, start);
	const char *why = NULL;
	struct map m;
	struct rec r;
	size_t off = 0;
	ssize_t sz = 0;
	int rc, torn = 0;

	if ((rc = map_open(path, O_RDWR, &m)) != 0) {
		*cause = util_printf("%s: %s", path, strerror(-rc));
		free(path);
		return -1;
	}
	/* An empty segment maps to no pointer at all: nothing to replay. */
	while (m.p != NULL) {
		if ((sz = rec_decode(m.p + off, m.len - off, &r, &why)) < 0)
			break;
		if (sz == 0) {
			if (!all_zero(m.p + off, m.len - off)) {
				why = "data after end of log";
				sz = -1;
			}
			break;
		}
		if (r.rev <= *logrev || r.rev < start) {
			why = "revision out of order";
			sz = -1;
			break;
		}
		*logrev = r.rev;
		if (r.rev > snaprev)
			replay_cb(arg, r.rev, r.op, r.key, r.klen, r.val,
			    r.vlen);
		off += sz;
	}
	if (sz < 0) {
		log_warn("wal: %s: %s at offset %zu; truncating %zu bytes",
		    path, why, off, m.len - off);
		torn = 1;
	}
	if (off < m.len && ftruncate(m.fd, off) != 0) {
		*cause = util_printf("truncate %s: %s", path, strerror(errno));
		rc = -1;
	} else if (fsync(m.fd) != 0) {
		/* What was read may so far live only in the page cache. */
		*cause = util_printf("fsync %s: %s", path, strerror(errno));
		rc = -1;
	}
	map_close(&m);
	free(path);
	return rc != 0 ? -1 : torn;
}

/* Take the store's lock file so two processes never share one log. */
static int
lock_dir(wal *w, char **cause)
{
	char *path = util_printf("%s/lock", w->dir);

	w->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (w->lockfd < 0) {
		*cause = util_printf("%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	if (flock(w->lockfd, LOCK_EX | LOCK_NB) != 0) {
		*cause = util_printf("%s: %s", path, errno == EWOULDBLOCK ?
		    "store is in use by another process" : strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/* Read the directory, load the snapshot and replay the log. */
static int
recover(wal *w, wal_replay_cb replay_cb, void *arg, uint64_t *last_rev,
    char **cause)
{
	uint64_t *segs = NULL, *snaps = NULL, rev, snaprev, logrev = 0, covered;
	size_t nsegs = 0, csegs = 0, nsnaps = 0, csnaps = 0, i;
	struct dirent *de;
	char *path, *aside;
	DIR *d;
	int rc = -1, torn = 0, r;

	if ((d = opendir(w->dir)) == NULL) {
		*cause = util_printf("%s: %s", w->dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (parse_name(de->d_name, "log-", ".wal", &rev) == 0)
			u64_push(&segs, &nsegs, &csegs, rev);
		else if (parse_name(de->d_name, "snap-", ".snap", &rev) == 0)
			u64_push(&snaps, &nsnaps, &csnaps, rev);
		else if (parse_name(de->d_name, "snap-", ".snap.tmp",
		    &rev) == 0) {
			path = util_printf("%s/%s", w->dir, de->d_name);
			log_warn("wal: removing unfinished snapshot %s", path);
			if (unlink(path) != 0)
				log_error("wal: unlink %s: %s", path,
				    strerror(errno));
			free(path);
		}
	}
	closedir(d);
	if (nsegs > 0)
		qsort(segs, nsegs, sizeof *segs, cmp_u64);
	if (nsnaps > 0)
		qsort(snaps, nsnaps, sizeof *snaps, cmp_u64);

	if (recover_snapshot(w, snaps, nsnaps, replay_cb, arg, &snaprev,
	    cause) != 0)
		goto out;
	for (i = 0; i < nsegs; i++) {
		/*
		 * After a corrupt segment, a later one is replayed only if
		 * nothing past the snapshot can be missing in between;
		 * replaying it after a hole would be wrong.
		 */
		covered = snaprev > logrev ? snaprev : logrev;
		if (torn && segs[i] > covered + 1) {
			path = seg_path(w->dir, segs[i]);
			aside = util_printf("%s.corrupt", path);
			log_error("wal: %s follows a corrupt segment; "
			    "renamed to %s", path, aside);
			if (rename(path, aside) != 0)
				log_error("wal: rename %s: %s", path,
				    strerror(errno));
			free(aside);
			free(path);
			continue;
		}
		r = recover_segment(w, segs[i], snaprev, &logrev, replay_cb,
		    arg, cause);
		if (r < 0)
			goto out;
		torn = r;
	}
	if ((r = fsync_dir(w->dir)) != 0) {
		*cause = util_printf("fsync %s: %s", w->dir, strerror(-r));
		goto out;
	}
	*last_rev = snaprev > logrev ? snaprev : logrev;
	rc = 0;
out:
	free(segs);
	free(snaps);
	return rc;
}

/* The sync thread. */

/* Sleep before retrying a failed disk operation; -1 means give up. */
static int
backoff(wal *w, unsigned *tries)
{
	struct timespec ts;
	uint64_t ms;
	int closing;

	uv_mutex_lock(&w->mu);
	closing = w->closing;
	uv_mutex_unlock(&w->mu);
	if (closing && *tries >= CLOSE_TRIES)
		return -1;
	ms = 10ULL << (*tries < 7 ? *tries : 7);
	if (ms > 1000)
		ms = 1000;
	(*tries)++;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return 0;
}

/* Count one fdatasync and its latency in the histogram. */
static void
note_sync(wal *w, uint64_t usec)
{
	static const uint64_t bounds[] = { 500, 1000, 2000, 5000, 10000,
	    25000, 50000 };
	int i;

	for (i = 0; i < 7 && usec > bounds[i]; i++)
		;
	uv_mutex_lock(&w->mu);
	w->stats.syncs++;
	w->stats.sync_usec_total += usec;
	w->stats.lat_hist[i]++;
	uv_mutex_unlock(&w->mu);
}

/* Count one durable batch and its size in the histogram. */
static void
note_batch(wal *w, size_t nrec, size_t bytes)
{
	int i = 0;

	if (nrec > 1)
		for (i = 1; i < 7 && nrec > (size_t)1 << (2 * i); i++)
			;
	uv_mutex_lock(&w->mu);
	w->stats.records += nrec;
	w->stats.bytes += bytes;
	if (nrec > 0)
		w->stats.batch_hist[i]++;
	uv_mutex_unlock(&w->mu);
}

/* Grow the segment's preallocation ahead of the write offset. */
static void
prealloc(wal *w, size_t n)
{
	uint64_t end;

	if (w->off + n <= w->prealloc_end)
		return;
	end = (w->off + n + PREALLOC) / PREALLOC * PREALLOC;
	if (fallocate(w->fd, 0, w->prealloc_end, end - w->prealloc_end) != 0 &&
	    errno != EOPNOTSUPP)
		log_warn("wal: fallocate: %s", strerror(errno));
	/* On failure, try again only one step further on. */
	w->prealloc_end = end;
}

/*
 * Write n bytes at the end of the segment and fdatasync them, retrying
 * until both succeed. After a failed fdatasync the data is written again:
 * the kernel may have marked the pages clean without writing them.
 */
static int
commit(wal *w, const char *p, size_t n)
{
	unsigned tries = 0;
	uint64_t t0;
	int r;

	if (w->broken)
		return -1;
	for (;;) {
		prealloc(w, n);
		if ((r = pwrite_all(w->fd, p, n, w->off)) != 0)
			log_error("wal: write log-%016llx.wal: %s",
			    (unsigned long long)w->seg_start, strerror(-r));
		else {
			t0 = uv_hrtime();
			r = fdatasync(w->fd);
			note_sync(w, (uv_hrtime() - t0) / 1000);
			if (r == 0) {
				w->off += n;
				return 0;
			}
			log_error("wal: fdatasync log-%016llx.wal: %s",
			    (unsigned long long)w->seg_start, strerror(errno));
		}
		if (backoff(w, &tries) != 0) {
			w->broken = 1;
			return -1;
		}
	}
}

/* Close the current segment and start a new one at revision start. */
static int
rotate(wal *w, uint64_t start)
{
	unsigned tries = 0;
	int fd, r;

	if (start > w->seg_start && !w->broken) {
		while ((r = seg_create(w->dir, start, &fd)) != 0) {
			log_error("wal: create log-%016llx.wal: %s",
			    (unsigned long long)start, strerror(-r));
			if (backoff(w, &tries) != 0) {
				w->broken = 1;
				return -1;
			}
		}
		/* Drop the old segment's unused preallocation. */
		if (ftruncate(w->fd, w->off) != 0)
			log_warn("wal: truncate log-%016llx.wal: %s",
			    (unsigned long long)w->seg_start, strerror(errno));
		close(w->fd);
		w->fd = fd;
		w->seg_start = start;
		w->off = 0;
		w->prealloc_end = 0;
	}
	uv_mutex_lock(&w->mu);
	w->seg_start_pub = w->seg_start;
	uv_cond_broadcast(&w->snapcond);
	uv_mutex_unlock(&w->mu);
	return 0;
}

/* Take everything appended so far and make it durable, batch after batch. */
static void
sync_main(void *arg)
{
	wal *w = arg;
	struct buf tmp;
	size_t nrec, rotoff;
	uint64_t rev, rotrev;
	int rot, ok;

	for (;;) {
		uv_mutex_lock(&w->mu);
		while (w->pending.len == 0 && !w->rotate && !w->closing) {
			w->idle = 1;
			uv_cond_wait(&w->cond, &w->mu);
		}
		w->idle = 0;
		if (w->pending.len == 0 && !w->rotate) {
			uv_mutex_unlock(&w->mu);
			break;
		}
		tmp = w->mine;
		w->mine = w->pending;
		w->pending = tmp;
		nrec = w->pending_n;
		rev = w->pending_rev;
		w->pending_n = 0;
		rot = w->rotate;
		rotoff = w->rotate_off;
		rotrev = w->rotate_rev;
		w->rotate = 0;
		uv_mutex_unlock(&w->mu);

		rec_seal_all(w->mine.data, w->mine.len);
		ok = 1;
		if (!rot)
			rotoff = 0;
		else {
			if (rotoff > 0 && commit(w, w->mine.data, rotoff) != 0)
				ok = 0;
			if (rotate(w, rotrev) != 0)
				ok = 0;
		}
		if (w->mine.len > rotoff && commit(w, w->mine.data + rotoff,
		    w->mine.len - rotoff) != 0)
			ok = 0;
		if (ok && nrec > 0) {
			__atomic_store_n(&w->durable, rev, __ATOMIC_RELEASE);
			note_batch(w, nrec, w->mine.len);
			uv_async_send(&w->async);
		} else if (!ok)
			log_error("wal: giving up; revisions up to %llu are "
			    "not durable", (unsigned long long)rev);
		w->mine.len = 0;
		if (w->mine.cap > BUF_KEEP) {
			free(w->mine.data);
			w->mine.data = NULL;
			w->mine.cap = 0;
		}
	}
	uv_mutex_lock(&w->mu);
	w->sync_done = 1;
	uv_cond_broadcast(&w->snapcond);
	uv_mutex_unlock(&w->mu);
}

/* Snapshots. */

struct bwriter {
	int fd;
	char *buf;
	size_t len;
	size_t cap;
	uint32_t crc;		/* of everything written so far */
	int err;
};

/* Write out the buffer; the first error sticks and later writes are skipped. */
static void
bw_flush(struct bwriter *bw)
{
	int r;

	if (bw->err == 0 && bw->len > 0 &&
	    (r = write_all(bw->fd, bw->buf, bw->len)) != 0)
		bw->err = r;
	bw->len = 0;
}

/* Buffer bytes for the snapshot file, folding them into its running CRC. */
static void
bw_put(struct bwriter *bw, const void *p, size_t n)
{
	int r;

	bw->crc = crc32c_update(bw->crc, p, n);
	if (bw->len + n > bw->cap)
		bw_flush(bw);
	if (n >= bw->cap) {
		if (bw->err == 0 && (r = write_all(bw->fd, p, n)) != 0)
			bw->err = r;
		return;
	}
	memcpy(bw->buf + bw->len, p, n);
	bw->len += n;
}

/* Write the snapshot file and make it durable under its final name. */
static int
snap_write(wal_snap *s)
{
	char *tmp = snap_path(s->w->dir, s->rev, ".tmp");
	char *path = snap_path(s->w->dir, s->rev, "");
	char hdr[REC_HDR + 13], b[16];
	struct bwriter bw = { .cap = 1 << 20 };
	struct snap_ent *e;
	const char *what = "write";
	uint32_t crc;
	size_t i;
	int r = 0;

	bw.buf = xmalloc(bw.cap);
	if ((bw.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0) {
		r = -errno;
		what = "create";
		goto out;
	}
	memcpy(b, SNAP_MAGIC, 8);
	put64(b + 8, s->rev);
	bw_put(&bw, b, 16);
	put64(b, s->n);
	bw_put(&bw, b, 8);
	for (i = 0; i < s->n && bw.err == 0; i++) {
		e = &s->ents[i];
		put32(hdr, REC_FIXED + e->klen + e->val->len);
		put64(hdr + 8, e->rev);
		hdr[16] = WAL_PUT;
		put32(hdr + 17, e->klen);
		put32(b, e->val->len);
		crc = crc32c_update(0, hdr + REC_HDR, 13);
		crc = crc32c_update(crc, e->key, e->klen);
		crc = crc32c_update(crc, b, 4);
		crc = crc32c_update(crc, e->val->data, e->val->len);
		put32(hdr + 4, crc);
		bw_put(&bw, hdr, sizeof hdr);
		bw_put(&bw, e->key, e->klen);
		bw_put(&bw, b, 4);
		bw_put(&bw, e->val->data, e->val->len);
	}
	put64(b, s->n);
	bw_put(&bw, b, 8);
	put32(b, bw.crc);
	put32(b + 4, SNAP_END_MAGIC);
	bw_put(&bw, b, 8);
	bw_flush(&bw);
	if ((r = bw.err) != 0)
		goto out;
	if (fsync(bw.fd) != 0) {
		r = -errno;
		what = "fsync";
		goto out;
	}
	if (close(bw.fd) != 0) {
		bw.fd = -1;
		r = -errno;
		what = "close";
		goto out;
	}
	bw.fd = -1;
	if (rename(tmp, path) != 0) {
		r = -errno;
		what = "rename";
		goto out;
	}
	if ((r = fsync_dir(s->w->dir)) != 0)
		what = "fsync directory for";
out:
	if (r != 0) {
		log_error("wal: snapshot: %s %s: %s", what, tmp, strerror(-r));
		if (bw.fd >= 0)
			close(bw.fd);
		unlink(tmp);
	}
	free(bw.buf);
	free(tmp);
	free(path);
	return r;
}

/* Remove snapshots older than rev and the segments it makes obsolete. */
static void
remove_obsolete(wal *w, uint64_t rev)
{
	struct dirent *de;
	uint64_t v;
	char *path;
	DIR *d;
	int n = 0, rm;

	if ((d = opendir(w->dir)) == NULL) {
		log_error("wal: %s: %s", w->dir, strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		/*
		 * A segment that started at or before rev was closed by the
		 * rotation, so it holds nothing newer than rev.
		 */
		rm = (parse_name(de->d_name, "log-", ".wal", &v) == 0 &&
		    v <= rev) ||
		    (parse_name(de->d_name, "snap-", ".snap", &v) == 0 &&
		    v < rev);
		if (!rm)
			continue;
		path = util_printf("%s/%s", w->dir, de->d_name);
		if (unlink(path) != 0)
			log_warn("wal: unlink %s: %s", path, strerror(errno));
		else
			n++;
		free(path);
	}
	closedir(d);
	log_info("wal: snapshot at revision %llu written; removed %d old "
	    "files", (unsigned long long)rev, n);
}

/* The snapshot thread: write the file, then clean up behind it. */
static void
snap_main(void *arg)
{
	wal_snap *s = arg;
	wal *w = s->w;
	int r, rotated;

	r = snap_write(s);
	uv_mutex_lock(&w->mu);
	while (w->seg_start_pub <= s->rev && !w->sync_done)
		uv_cond_wait(&w->snapcond, &w->mu);
	rotated = w->seg_start_pub > s->rev;
	uv_mutex_unlock(&w->mu);
	if (r == 0 && rotated)
		remove_obsolete(w, s->rev);
	uv_mutex_lock(&w->mu);
	s->state = r == 0 ? SNAP_DONE : SNAP_FAILED;
	if (r == 0)
		w->stats.snapshots++;
	uv_mutex_unlock(&w->mu);
	uv_async_send(&w->async);
}

/* Drop the snapshot's references; loop thread only. */
static void
snap_free(wal_snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->ents[i].key);
		rbuf_unref(s->ents[i].val);
	}
	free(s->ents);
	free(s);
}

/* Loop thread side. */

/*
 * Woken by the other threads: reap a finished snapshot first (durable_cb
 * may well start the next one), then report the durable revision.
 */
static void
async_cb(uv_async_t *h)
{
	wal *w = h->data;
	wal_snap *s = w->snap;
	enum snap_state state = SNAP_BUILDING;
	uint64_t rev;

	if (s != NULL && s->committed) {
		uv_mutex_lock(&w->mu);
		state = s->state;
		uv_mutex_unlock(&w->mu);
	}
	if (state == SNAP_DONE || state == SNAP_FAILED) {
		uv_thread_join(&s->thread);
		if (state == SNAP_FAILED)
			w->log_bytes += s->log_bytes;
		w->snap = NULL;
		snap_free(s);
	}
	rev = __atomic_load_n(&w->durable, __ATOMIC_ACQUIRE);
	if (rev > w->delivered) {
		w->delivered = rev;
		w->durable_cb(w->arg, rev);
	}
}

static void
free_wal(wal *w)
{
	if (w->lockfd >= 0)
		close(w->lockfd);
	free(w->pending.data);
	free(w->mine.data);
	free(w->dir);
	free(w);
}

/* The async handle is closed: nothing refers to the wal any more. */
static void
close_cb(uv_handle_t *h)
{
	wal *w = h->data;

	uv_mutex_destroy(&w->mu);
	uv_cond_destroy(&w->cond);
	uv_cond_destroy(&w->snapcond);
	free_wal(w);
}

/* Recover synchronously, then start a fresh segment and the sync thread. */
int
wal_open(uv_loop_t *loop, const char *dir, wal_replay_cb replay_cb,
    wal_durable_cb durable_cb, void *arg, uint64_t *last_rev, wal **out,
    char **cause)
{
	wal *w;
	uint64_t last = 0;
	int r;

	crc32c_init();
	w = xcalloc(1, sizeof *w);
	w->loop = loop;
	w->durable_cb = durable_cb;
	w->arg = arg;
	w->fd = -1;
	w->lockfd = -1;
	w->dir = util_printf("%s/store", dir);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		*cause = util_printf("mkdir %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (mkdir(w->dir, 0755) != 0 && errno != EEXIST) {
		*cause = util_printf("mkdir %s: %s", w->dir, strerror(errno));
		goto fail;
	}
	if (lock_dir(w, cause) != 0 ||
	    recover(w, replay_cb, arg, &last, cause) != 0)
		goto fail;
	if ((r = seg_create(w->dir, last + 1, &w->fd)) != 0) {
		*cause = util_printf("create log-%016llx.wal: %s",
		    (unsigned long long)(last + 1), strerror(-r));
		goto fail;
	}
	w->seg_start = w->seg_start_pub = last + 1;
	w->appended = w->delivered = w->durable = last;

	if (uv_mutex_init(&w->mu) != 0 || uv_cond_init(&w->cond) != 0 ||
	    uv_cond_init(&w->snapcond) != 0)
		fatal("wal: cannot create mutex");
	if ((r = uv_async_init(loop, &w->async, async_cb)) != 0) {
		*cause = util_printf("uv_async_init: %s", uv_strerror(r));
		goto fail_sync;
	}
	w->async.data = w;
	if ((r = uv_thread_create(&w->thread, sync_main, w)) != 0) {
		*cause = util_printf("cannot start sync thread: %s",
		    uv_strerror(r));
		uv_close((uv_handle_t *)&w->async, close_cb);
		close(w->fd);
		return -1;
	}
	log_info("wal: %s opened at revision %llu", w->dir,
	    (unsigned long long)last);
	*last_rev = last;
	*out = w;
	return 0;

fail_sync:
	uv_mutex_destroy(&w->mu);
	uv_cond_destroy(&w->cond);
	uv_cond_destroy(&w->snapcond);
fail:
	if (w->fd >= 0)
		close(w->fd);
	free_wal(w);
	return -1;
}

/* Encode the record into the pending buffer; the CRC is the sync thread's. */
void
wal_append(wal *w, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
	size_t n;

	if (rev <= w->appended)
		fatal("wal: revision %llu appended after %llu",
		    (unsigned long long)rev, (unsigned long long)w->appended);
	if (op != WAL_PUT && op != WAL_DELETE)
		fatal("wal: unknown operation %d", op);
	if (klen > REC_MAX || vlen > REC_MAX ||
	    klen + vlen > REC_MAX - REC_FIXED)
		fatal("wal: record of %zu bytes is too large", klen + vlen);
	if (op == WAL_DELETE)
		vlen = 0;
	n = rec_size(klen, vlen);
	uv_mutex_lock(&w->mu);
	buf_reserve(&w->pending, n);
	rec_encode(w->pending.data + w->pending.len, rev, op, key, klen, val,
	    vlen);
	w->pending.len += n;
	w->pending_n++;
	w->pending_rev = rev;
	if (w->idle) {
		w->idle = 0;
		uv_cond_signal(&w->cond);
	}
	uv_mutex_unlock(&w->mu);
	w->appended = rev;
	w->log_bytes += n;
}

uint64_t
wal_log_bytes(const wal *w)
{
	return w->log_bytes;
}

uint64_t
wal_durable_rev(const wal *w)
{
	return __atomic_load_n(&w->durable, __ATOMIC_ACQUIRE);
}

/* Start a snapshot: the log rotates at rev+1, in order with the appends. */
wal_snap *
wal_snapshot_begin(wal *w, uint64_t rev)
{
	wal_snap *s;

	if (w->snap != NULL)
		return NULL;
	if (rev < w->appended) {
		log_error("wal: snapshot at %llu but revision %llu already "
		    "appended", (unsigned long long)rev,
		    (unsigned long long)w->appended);
		return NULL;
	}
	s = xcalloc(1, sizeof *s);
	s->w = w;
	s->rev = rev;
	s->log_bytes = w->log_bytes;
	w->log_bytes = 0;
	w->snap = s;

	/* Records appended from now on go to a segment starting at rev+1. */
	uv_mutex_lock(&w->mu);
	w->rotate = 1;
	w->rotate_off = w->pending.len;
	w->rotate_rev = rev + 1;
	if (w->idle) {
		w->idle = 0;
		uv_cond_signal(&w->cond);
	}
	uv_mutex_unlock(&w->mu);
	return s;
}

void
wal_snapshot_add_rev(wal_snap *s, const char *key, size_t klen, uint64_t rev,
    rbuf *val)
{
	struct snap_ent *e;

	if (s->committed)
		fatal("wal: snapshot already committed");
	XGROW(s->ents, s->cap, s->n + 1);
	e = &s->ents[s->n++];
	e->key = xmalloc(klen + 1);
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	e->klen = klen;
	e->rev = rev;
	e->val = rbuf_ref(val);
}

/* Hand the snapshot to its own thread, so commits go on meanwhile. */
void
wal_snapshot_commit(wal_snap *s)
{
	wal *w = s->w;
	int r;

	s->committed = 1;
	s->state = SNAP_RUNNING;
	if ((r = uv_thread_create(&s->thread, snap_main, s)) != 0) {
		log_error("wal: cannot start snapshot thread: %s",
		    uv_strerror(r));
		w->log_bytes += s->log_bytes;
		w->snap = NULL;
		snap_free(s);
	}
}

/*
 * Blocks the loop thread until the sync thread has written everything and
 * any snapshot is done: shutdown is the one time that is right.
 */
void
wal_close(wal *w)
{
	wal_snap *s = w->snap;

	uv_mutex_lock(&w->mu);
	w->closing = 1;
	uv_cond_signal(&w->cond);
	uv_mutex_unlock(&w->mu);
	uv_thread_join(&w->thread);
	if (s != NULL) {
		if (s->committed)
			uv_thread_join(&s->thread);
		w->snap = NULL;
		snap_free(s);
	}
	if (w->broken)
		log_error("wal: closed with records that could not be made "
		    "durable");
	else if (ftruncate(w->fd, w->off) != 0)
		log_warn("wal: truncate log-%016llx.wal: %s",
		    (unsigned long long)w->seg_start, strerror(errno));
	close(w->fd);
	log_info("wal: closed at revision %llu",
	    (unsigned long long)wal_durable_rev(w));
	uv_close((uv_handle_t *)&w->async, close_cb);
}

void
wal_get_stats(const wal *w, struct wal_stats *st)
{
	wal *mw = (wal *)w;

	if (w == NULL) {	/* no log: the store is etcd's cache */
		memset(st, 0, sizeof *st);
		return;
	}
	uv_mutex_lock(&mw->mu);
	*st = w->stats;
	uv_mutex_unlock(&mw->mu);
}
