/*
 * Tests for wal.c: records appended through a running loop come back in
 * order after a reopen (puts and deletes, across segments); the on-disk CRC
 * is CRC32C; snapshots keep each object's revision, remove the segments
 * they cover and release their references; a torn or corrupt tail (garbage,
 * a cut record, a flipped byte, a bad record in an earlier segment) is
 * truncated and everything before it kept; leftover or invalid snapshot
 * files are ignored; a second open of the same store is refused; failed
 * writes and fdatasyncs (injected) are retried and never reported durable.
 * A fork()ed child appends and snapshots until it is killed with SIGKILL at
 * a random moment, and every revision it had reported durable must be
 * recovered. Throughput with 1 KB values is printed, never asserted.
 *
 * Usage: test-wal [--no-fork] [--quick] (both for valgrind).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "lib/log.h"
#include "store/wal.h"

static int quick;

/* Recovered records, copied out of replay_cb. */
struct recd {
	uint64_t rev;
	int op;
	char *key;
	char *val;
	size_t vlen;
};

struct replay {
	struct recd *v;
	size_t n;
	size_t cap;
};

struct ctx {
	uv_loop_t loop;
	wal *w;
	struct replay rp;
	uint64_t last;
	uint64_t durable;
	int backwards;		/* durable_cb revisions that did not increase */
};

static void
replay_cb(void *arg, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
	struct replay *rp = &((struct ctx *)arg)->rp;
	struct recd *r;

	if (rp->n == rp->cap) {
		rp->cap = rp->cap ? rp->cap * 2 : 256;
		rp->v = realloc(rp->v, rp->cap * sizeof *rp->v);
	}
	r = &rp->v[rp->n++];
	r->rev = rev;
	r->op = op;
	r->key = strndup(key, klen);
	r->val = malloc(vlen + 1);
	memcpy(r->val, val, vlen);
	r->vlen = vlen;
}

static void
replay_clear(struct replay *rp)
{
	size_t i;

	for (i = 0; i < rp->n; i++) {
		free(rp->v[i].key);
		free(rp->v[i].val);
	}
	free(rp->v);
	memset(rp, 0, sizeof *rp);
}

static void
durable_cb(void *arg, uint64_t rev)
{
	struct ctx *c = arg;

	if (rev <= c->durable)
		c->backwards++;
	c->durable = rev;
}

/* Deterministic content: key, operation and value are functions of rev. */
#define NKEYS 50

static void
key_for(uint64_t rev, char *out, size_t len)
{
	snprintf(out, len, "pods/default/p%llu",
	    (unsigned long long)(rev % NKEYS));
}

static int
op_for(uint64_t rev)
{
	return rev % 7 == 0 ? WAL_DELETE : WAL_PUT;
}

static size_t
val_for(uint64_t rev, char *out)
{
	size_t n, i;

	n = rev % 13 == 0 ? 0 : (rev * 2654435761u) % 2048;
	if (rev % 101 == 0)
		n = 70000;
	for (i = 0; i < n; i++)
		out[i] = 'a' + (rev + i * 7) % 26;
	return n;
}

static char valbuf[70000];

static void
append_rev(wal *w, uint64_t rev)
{
	char key[64];
	size_t vlen;

	key_for(rev, key, sizeof key);
	vlen = op_for(rev) == WAL_DELETE ? 0 : val_for(rev, valbuf);
	wal_append(w, rev, op_for(rev), key, strlen(key), valbuf, vlen);
}

/* Does r hold exactly what append_rev(rev) wrote? */
static int
rec_matches(const struct recd *r, uint64_t rev)
{
	char key[64], val[70000];
	size_t vlen;

	key_for(rev, key, sizeof key);
	vlen = op_for(rev) == WAL_DELETE ? 0 : val_for(rev, val);
	return r->rev == rev && r->op == op_for(rev) &&
	    strcmp(r->key, key) == 0 && r->vlen == vlen &&
	    memcmp(r->val, val, vlen) == 0;
}

/* Size of the record append_rev(rev) writes. */
static size_t
rec_size_for(uint64_t rev)
{
	char key[64];

	key_for(rev, key, sizeof key);
	return 8 + 17 + strlen(key) +
	    (op_for(rev) == WAL_DELETE ? 0 : val_for(rev, valbuf));
}

/*
 * Fault injection: these definitions take the place of libc's for wal.c,
 * which is linked into this program. While a counter is positive the call
 * fails with the given error instead.
 */
static int fail_fsyncs, fail_writes;

int
fdatasync(int fd)
{
	if (fail_fsyncs > 0) {
		fail_fsyncs--;
		errno = EIO;
		return -1;
	}
	return syscall(SYS_fdatasync, fd);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (fail_writes > 0) {
		fail_writes--;
		errno = ENOSPC;
		return -1;
	}
	return syscall(SYS_pwrite64, fd, buf, n, off);
}

/* Files and directories. */

static char *
mktemp_dir(void)
{
	const char *t = getenv("TMPDIR");
	char *d;

	if (asprintf(&d, "%s/test-wal.XXXXXX", t ? t : "/tmp") < 0 ||
	    mkdtemp(d) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	return d;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void
rm_rf(char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static char *
store_file(const char *dir, const char *fmt, unsigned long long rev)
{
	char name[64], *p;

	snprintf(name, sizeof name, fmt, rev);
	if (asprintf(&p, "%s/store/%s", dir, name) < 0)
		exit(2);
	return p;
}

static int
file_exists(const char *dir, const char *fmt, unsigned long long rev)
{
	char *p = store_file(dir, fmt, rev);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

static long long
file_size(const char *dir, const char *fmt, unsigned long long rev)
{
	char *p = store_file(dir, fmt, rev);
	struct stat st;
	long long r = stat(p, &st) == 0 ? st.st_size : -1;

	free(p);
	return r;
}

/* Number of directory entries whose name ends in suffix. */
static int
count_files(const char *dir, const char *suffix)
{
	char *p;
	DIR *d;
	struct dirent *de;
	size_t sl = strlen(suffix), l;
	int n = 0;

	if (asprintf(&p, "%s/store", dir) < 0 || (d = opendir(p)) == NULL)
		exit(2);
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l >= sl && strcmp(de->d_name + l - sl, suffix) == 0)
			n++;
	}
	closedir(d);
	free(p);
	return n;
}

static void
write_file(const char *dir, const char *fmt, unsigned long long rev,
    const void *data, size_t len, long long off)
{
	char *p = store_file(dir, fmt, rev);
	int fd = open(p, O_WRONLY | O_CREAT, 0644);

	if (fd < 0 || pwrite(fd, data, len, off < 0 ?
	    lseek(fd, 0, SEEK_END) : off) != (ssize_t)len) {
		perror(p);
		exit(2);
	}
	close(fd);
	free(p);
}

static void
truncate_file(const char *dir, const char *fmt, unsigned long long rev,
    long long len)
{
	char *p = store_file(dir, fmt, rev);

	if (truncate(p, len) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

static void
flip_byte(const char *dir, const char *fmt, unsigned long long rev,
    long long off)
{
	char *p = store_file(dir, fmt, rev);
	int fd = open(p, O_RDWR);
	unsigned char b;

	if (fd < 0 || pread(fd, &b, 1, off) != 1) {
		perror(p);
		exit(2);
	}
	b ^= 0x40;
	if (pwrite(fd, &b, 1, off) != 1)
		exit(2);
	close(fd);
	free(p);
}

static char *
read_file(const char *dir, const char *fmt, unsigned long long rev, size_t len)
{
	char *p = store_file(dir, fmt, rev), *b = malloc(len);
	int fd = open(p, O_RDONLY);

	if (fd < 0 || pread(fd, b, len, 0) != (ssize_t)len) {
		perror(p);
		exit(2);
	}
	close(fd);
	free(p);
	return b;
}

/* Driving the loop. */

static void
timeout_cb(uv_timer_t *t)
{
	*(int *)t->data = 1;
}

/* Run the loop until pred(c) holds or 60 seconds (valgrind) have passed. */
static int
run_until(struct ctx *c, int (*pred)(struct ctx *, void *), void *arg)
{
	uv_timer_t t;
	int expired = 0, ok;

	uv_timer_init(&c->loop, &t);
	t.data = &expired;
	uv_timer_start(&t, timeout_cb, 60000, 0);
	while (!(ok = pred(c, arg)) && !expired)
		uv_run(&c->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&c->loop, UV_RUN_NOWAIT);
	if (!ok)
		fprintf(stderr, "run_until: timed out\n");
	return ok;
}

static int
durable_at(struct ctx *c, void *arg)
{
	return c->durable >= *(uint64_t *)arg;
}

static int
snapshots_done(struct ctx *c, void *arg)
{
	struct wal_stats st;

	wal_get_stats(c->w, &st);
	return st.snapshots >= *(uint64_t *)arg;
}

/* Open dir with a fresh context; the replayed records land in c->rp. */
static int
ctx_open(struct ctx *c, const char *dir)
{
	char *cause = NULL;

	memset(c, 0, sizeof *c);
	uv_loop_init(&c->loop);
	if (wal_open(&c->loop, dir, replay_cb, durable_cb, c, &c->last, &c->w,
	    &cause) != 0) {
		fprintf(stderr, "wal_open %s: %s\n", dir, cause);
		free(cause);
		uv_run(&c->loop, UV_RUN_DEFAULT);
		uv_loop_close(&c->loop);
		replay_clear(&c->rp);
		return -1;
	}
	c->durable = c->last;
	return 0;
}

static void
ctx_close(struct ctx *c)
{
	wal_close(c->w);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(&c->loop) == 0);
	replay_clear(&c->rp);
}

/* Appending from inside the loop, as the store does. */
struct feeder {
	struct ctx *c;
	uv_idle_t idle;
	uint64_t next;
	uint64_t last;
	size_t batch;
};

static void
feed_cb(uv_idle_t *h)
{
	struct feeder *f = h->data;
	size_t i;

	for (i = 0; i < f->batch && f->next <= f->last; i++)
		append_rev(f->c->w, f->next++);
	if (f->next > f->last)
		uv_idle_stop(h);
}

/* Append first..last through the running loop and wait until durable. */
static int
feed(struct ctx *c, uint64_t first, uint64_t last, size_t batch)
{
	struct feeder f = { c, { 0 }, first, last, batch };
	int ok;

	uv_idle_init(&c->loop, &f.idle);
	f.idle.data = &f;
	uv_idle_start(&f.idle, feed_cb);
	ok = run_until(c, durable_at, &last);
	uv_close((uv_handle_t *)&f.idle, NULL);
	uv_run(&c->loop, UV_RUN_NOWAIT);
	return ok;
}

/* Check that the replay is exactly first..last as append_rev wrote them. */
static int
replay_is(const struct replay *rp, size_t from, uint64_t first, uint64_t last)
{
	size_t i;

	if (rp->n - from != last - first + 1) {
		fprintf(stderr, "replay has %zu records, want %llu\n",
		    rp->n - from, (unsigned long long)(last - first + 1));
		return 0;
	}
	for (i = from; i < rp->n; i++) {
		if (!rec_matches(&rp->v[i], first + i - from)) {
			fprintf(stderr, "record %zu (rev %llu) differs\n", i,
			    (unsigned long long)rp->v[i].rev);
			return 0;
		}
	}
	return 1;
}

/* Bitwise CRC32C, the reference the fast versions must agree with. */
static uint32_t
ref_crc32c(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffff;
	int k;

	while (n-- > 0) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78 & -(c & 1));
	}
	return ~c;
}

static uint32_t
le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walk a segment with an independent parser; count records whose CRC and
 * layout are right. */
static size_t
check_segment_format(const char *dir, uint64_t start, uint64_t first)
{
	char *p = store_file(dir, "log-%016llx.wal", start);
	FILE *f = fopen(p, "rb");
	unsigned char *b;
	size_t len, off = 0, n = 0, ok = 0;
	uint32_t rl;

	free(p);
	if (f == NULL)
		return 0;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	b = malloc(len + 1);
	if (fread(b, 1, len, f) != len)
		len = 0;
	fclose(f);
	while (off + 8 <= len && (rl = le32(b + off)) != 0 &&
	    off + 8 + rl <= len) {
		uint64_t rev = le32(b + off + 8) |
		    (uint64_t)le32(b + off + 12) << 32;

		if (ref_crc32c(b + off + 8, rl) == le32(b + off + 4) &&
		    rev == first + n && b[off + 16] == op_for(rev) &&
		    rl == rec_size_for(rev) - 8)
			ok++;
		off += 8 + rl;
		n++;
	}
	free(b);
	return n == ok ? n : 0;
}

/* Tests. */

static void
test_crc_reference(void)
{
	/* The standard check value, so the reference itself is right. */
	CHECK(ref_crc32c((const unsigned char *)"123456789", 9) ==
	    0xe3069283u);
}

static void
test_basic(void)
{
	char *dir = mktemp_dir();
	struct ctx c;
	struct wal_stats st;
	uint64_t n = quick ? 1000 : 5000, hsum = 0, lsum = 0;
	char *cause = NULL;
	wal *w2;
	int i;

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == 0 && c.rp.n == 0);
	CHECK(wal_durable_rev(c.w) == 0);
	CHECK(file_exists(dir, "log-%016llx.wal", 1));

	/* A second open of the same store is refused while this one runs. */
	CHECK(wal_open(&c.loop, dir, replay_cb, durable_cb, &c, &c.last, &w2,
	    &cause) == -1);
	CHECK(cause != NULL && strstr(cause, "in use") != NULL);
	free(cause);

	CHECK(feed(&c, 1, n, 37));
	CHECK(c.durable == n && wal_durable_rev(c.w) == n);
	CHECK(c.backwards == 0);
	CHECK(wal_log_bytes(c.w) > n * 25);
	wal_get_stats(c.w, &st);
	CHECK(st.records == n);
	CHECK(st.syncs >= 1 && st.bytes >= wal_log_bytes(c.w));
	for (i = 0; i < 8; i++) {
		hsum += st.batch_hist[i];
		lsum += st.lat_hist[i];
	}
	CHECK(hsum >= 1 && hsum <= st.syncs);
	CHECK(lsum == st.syncs);
	CHECK(st.snapshots == 0);
	ctx_close(&c);
	CHECK(check_segment_format(dir, 1, 1) == n);

	/* Everything comes back, in order; more goes to a new segment. */
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == n);
	CHECK(replay_is(&c.rp, 0, 1, n));
	CHECK(wal_durable_rev(c.w) == n);
	CHECK(feed(&c, n + 1, n + 100, 7));
	ctx_close(&c);
	CHECK(file_exists(dir, "log-%016llx.wal", n + 1));

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == n + 100);
	CHECK(replay_is(&c.rp, 0, 1, n + 100));
	ctx_close(&c);
	rm_rf(dir);
}

static long long log_end(uint64_t);

/* The live state after revisions 1..upto: rev of each key's latest put. */
static void
model_at(uint64_t upto, uint64_t live[NKEYS])
{
	uint64_t r;

	memset(live, 0, NKEYS * sizeof *live);
	for (r = 1; r <= upto; r++)
		live[r % NKEYS] = op_for(r) == WAL_DELETE ? 0 : r;
}

/* Snapshot the model state at rev; the values are fresh rbufs in vals. */
static wal_snap *
snapshot(wal *w, uint64_t rev, rbuf *vals[NKEYS])
{
	uint64_t live[NKEYS];
	char key[64], val[70000];
	wal_snap *s;
	int k;

	if ((s = wal_snapshot_begin(w, rev)) == NULL)
		return NULL;
	model_at(rev, live);
	for (k = 0; k < NKEYS; k++) {
		vals[k] = NULL;
		if (live[k] == 0)
			continue;
		key_for(live[k], key, sizeof key);
		vals[k] = rbuf_new(val, val_for(live[k], val));
		wal_snapshot_add_rev(s, key, strlen(key), live[k], vals[k]);
	}
	wal_snapshot_commit(s);
	return s;
}

/* Check that replay starts with exactly the snapshot of the model at rev. */
static size_t
check_snapshot_part(const struct replay *rp, uint64_t rev)
{
	uint64_t live[NKEYS];
	size_t i, n = 0;
	int k, bad = 0;

	model_at(rev, live);
	for (k = 0; k < NKEYS; k++)
		n += live[k] != 0;
	if (rp->n < n)
		return (size_t)-1;
	for (i = 0; i < n; i++) {
		const struct recd *r = &rp->v[i];

		if (r->rev > rev || live[r->rev % NKEYS] != r->rev ||
		    r->op != WAL_PUT || !rec_matches(r, r->rev))
			bad++;
		else
			live[r->rev % NKEYS] = 0;
	}
	return bad ? (size_t)-1 : n;
}

static void
test_snapshot(void)
{
	char *dir = mktemp_dir();
	struct ctx c;
	rbuf *vals[NKEYS];
	uint64_t one = 1, two = 2, before;
	char *seg1;
	size_t n;
	int k, refs_held = 1, refs_back = 1;

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(feed(&c, 1, 300, 10));
	seg1 = read_file(dir, "log-%016llx.wal", 1, log_end(300));
	before = wal_log_bytes(c.w);
	CHECK(before > 0);
	CHECK(snapshot(c.w, 300, vals) != NULL);
	CHECK(wal_log_bytes(c.w) == 0);
	CHECK(wal_snapshot_begin(c.w, 300) == NULL);
	for (k = 0; k < NKEYS; k++)
		if (vals[k] != NULL && vals[k]->refs != 2)
			refs_held = 0;
	CHECK(refs_held);
	CHECK(feed(&c, 301, 400, 10));
	CHECK(wal_log_bytes(c.w) > 0 && wal_log_bytes(c.w) < before);
	CHECK(run_until(&c, snapshots_done, &one));
	/* The snapshot gave its references back on this thread. */
	for (k = 0; k < NKEYS; k++) {
		if (vals[k] != NULL && vals[k]->refs != 1)
			refs_back = 0;
		rbuf_unref(vals[k]);
	}
	CHECK(refs_back);
	CHECK(file_exists(dir, "snap-%016llx.snap", 300));
	CHECK(!file_exists(dir, "log-%016llx.wal", 1));
	CHECK(file_exists(dir, "log-%016llx.wal", 301));
	CHECK(count_files(dir, ".tmp") == 0);
	CHECK(count_files(dir, ".wal") == 1);
	ctx_close(&c);

	/*
	 * As if the process died between writing the snapshot and removing
	 * the segment it covers: the old records must not be replayed again.
	 */
	write_file(dir, "log-%016llx.wal", 1, seg1, log_end(300), 0);
	free(seg1);

	/* Snapshot contents with their own revisions, then 301..400. */
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == 400);
	CHECK(file_exists(dir, "log-%016llx.wal", 1));
	n = check_snapshot_part(&c.rp, 300);
	CHECK(n != (size_t)-1 && n > 0);
	if (n != (size_t)-1)
		CHECK(replay_is(&c.rp, n, 301, 400));

	/*
	 * A snapshot with nothing appended since the segment began needs no
	 * rotation; it still replaces the older snapshot and segment.
	 */
	CHECK(snapshot(c.w, 400, vals) != NULL);
	CHECK(run_until(&c, snapshots_done, &one));
	for (k = 0; k < NKEYS; k++)
		rbuf_unref(vals[k]);
	CHECK(!file_exists(dir, "snap-%016llx.snap", 300));
	CHECK(!file_exists(dir, "log-%016llx.wal", 301));
	CHECK(file_exists(dir, "snap-%016llx.snap", 400));
	CHECK(file_exists(dir, "log-%016llx.wal", 401));

	/* A snapshot begun then abandoned at close is freed cleanly. */
	CHECK(feed(&c, 401, 450, 10));
	CHECK(snapshot(c.w, 450, vals) != NULL);
	CHECK(feed(&c, 451, 460, 10));
	ctx_close(&c);
	for (k = 0; k < NKEYS; k++) {
		CHECK(vals[k] == NULL || vals[k]->refs == 1);
		rbuf_unref(vals[k]);
	}

	/* A leftover .tmp and an invalid newer snapshot are ignored. */
	write_file(dir, "snap-%016llx.snap.tmp", 500, "VRSNAP1\ngarbage", 15,
	    0);
	write_file(dir, "snap-%016llx.snap", 600, "VRSNAP1\n\x58\x02", 10, 0);
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == 460);
	n = check_snapshot_part(&c.rp, 450);
	CHECK(n != (size_t)-1 && n > 0);
	if (n != (size_t)-1)
		CHECK(replay_is(&c.rp, n, 451, 460));
	CHECK(count_files(dir, ".tmp") == 0);
	CHECK(!file_exists(dir, "snap-%016llx.snap", 600));
	CHECK(file_exists(dir, "snap-%016llx.snap.corrupt", 600));

	/* A snapshot while another runs is refused; stats count them. */
	CHECK(snapshot(c.w, 460, vals) != NULL);
	CHECK(wal_snapshot_begin(c.w, 460) == NULL);
	CHECK(run_until(&c, snapshots_done, &one));
	for (k = 0; k < NKEYS; k++)
		rbuf_unref(vals[k]);
	CHECK(feed(&c, 461, 470, 10));
	CHECK(snapshot(c.w, 470, vals) != NULL);
	CHECK(run_until(&c, snapshots_done, &two));
	for (k = 0; k < NKEYS; k++)
		rbuf_unref(vals[k]);
	CHECK(count_files(dir, ".snap") == 1);
	ctx_close(&c);

	/*
	 * A valid snapshot's bytes under a newer name (its header disagrees)
	 * and a complete copy left as .tmp are both not trusted.
	 */
	{
		char *src = store_file(dir, "snap-%016llx.snap", 470);
		FILE *f = fopen(src, "rb");
		char *b;
		long len;

		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		b = malloc(len);
		CHECK(fread(b, 1, len, f) == (size_t)len);
		fclose(f);
		write_file(dir, "snap-%016llx.snap", 480, b, len, 0);
		write_file(dir, "snap-%016llx.snap.tmp", 490, b, len, 0);
		free(b);
		free(src);
	}
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == 470);
	n = check_snapshot_part(&c.rp, 470);
	CHECK(n != (size_t)-1 && n == c.rp.n);
	CHECK(file_exists(dir, "snap-%016llx.snap.corrupt", 480));
	CHECK(!file_exists(dir, "snap-%016llx.snap.tmp", 490));
	ctx_close(&c);
	rm_rf(dir);
}

/* Run the loop for ms milliseconds. */
static void
run_for(struct ctx *c, unsigned ms)
{
	uv_timer_t t;
	int expired = 0;

	uv_timer_init(&c->loop, &t);
	t.data = &expired;
	uv_timer_start(&t, timeout_cb, ms, 0);
	while (!expired)
		uv_run(&c->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&c->loop, UV_RUN_NOWAIT);
}

/*
 * Failed writes and fdatasyncs are retried, and nothing is reported
 * durable until they succeed; at close the wal gives up after a few tries.
 */
static void
test_io_errors(void)
{
	char *dir = mktemp_dir();
	struct wal_stats st;
	struct ctx c;
	uint64_t want;

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(feed(&c, 1, 10, 5));

	/* Retries back off 10, 20, 40 ms: at 30 ms nothing is durable yet. */
	fail_fsyncs = 3;
	append_rev(c.w, 11);
	run_for(&c, 30);
	CHECK(c.durable == 10 && wal_durable_rev(c.w) == 10);
	want = 11;
	CHECK(run_until(&c, durable_at, &want));
	CHECK(fail_fsyncs == 0);

	fail_writes = 2;
	append_rev(c.w, 12);
	run_for(&c, 15);
	CHECK(c.durable == 11);
	want = 12;
	CHECK(run_until(&c, durable_at, &want));
	CHECK(fail_writes == 0);
	wal_get_stats(c.w, &st);
	CHECK(st.records == 12);
	CHECK(c.backwards == 0);

	/* A disk that never recovers: close gives up, reports nothing. */
	fail_fsyncs = 1000000;
	append_rev(c.w, 13);
	ctx_close(&c);
	CHECK(c.durable == 12);
	fail_fsyncs = 0;

	/* Revision 13 reached the page cache, so it may come back. */
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last >= 12);
	CHECK(replay_is(&c.rp, 0, 1, c.last));
	ctx_close(&c);
	rm_rf(dir);
}

/* Build a store holding revisions 1..n in log-1, closed. */
static char *
make_log(uint64_t n)
{
	char *dir = mktemp_dir();
	struct ctx c;

	if (ctx_open(&c, dir) != 0)
		exit(2);
	if (!feed(&c, 1, n, 16))
		exit(2);
	ctx_close(&c);
	return dir;
}

static long long
log_end(uint64_t n)
{
	long long end = 0;
	uint64_t r;

	for (r = 1; r <= n; r++)
		end += rec_size_for(r);
	return end;
}

/* Reopen a damaged store: expect 1..want, then check appending goes on. */
static void
expect_recovery(const char *dir, uint64_t want, long long seg1_size)
{
	struct ctx c;

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == want);
	CHECK(replay_is(&c.rp, 0, 1, want));
	CHECK(file_size(dir, "log-%016llx.wal", 1) == seg1_size);
	CHECK(feed(&c, want + 1, want + 20, 5));
	ctx_close(&c);
	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	CHECK(c.last == want + 20);
	CHECK(replay_is(&c.rp, 0, 1, want + 20));
	ctx_close(&c);
}

static void
test_torn(void)
{
	uint64_t n = 200;
	long long end = log_end(n), last = rec_size_for(n);
	static const char garbage[] = "\x13\x37 this is not a record at all";
	char *dir;

	/* The log is exactly its records after a clean close. */
	dir = make_log(n);
	CHECK(file_size(dir, "log-%016llx.wal", 1) == end);
	CHECK(check_segment_format(dir, 1, 1) == n);

	/* Garbage after the last record. */
	write_file(dir, "log-%016llx.wal", 1, garbage, sizeof garbage, -1);
	expect_recovery(dir, n, end);
	rm_rf(dir);

	/* Garbage after a run of zeros (a preallocated tail). */
	dir = make_log(n);
	write_file(dir, "log-%016llx.wal", 1, garbage, sizeof garbage,
	    end + 100000);
	expect_recovery(dir, n, end);
	rm_rf(dir);

	/* A clean zero tail is just the end of the log. */
	dir = make_log(n);
	truncate_file(dir, "log-%016llx.wal", 1, end + (1 << 20));
	expect_recovery(dir, n, end);
	rm_rf(dir);

	/* The last record cut in the middle, and cut inside its header. */
	dir = make_log(n);
	truncate_file(dir, "log-%016llx.wal", 1, end - 7);
	expect_recovery(dir, n - 1, end - last);
	rm_rf(dir);
	dir = make_log(n);
	truncate_file(dir, "log-%016llx.wal", 1, end - last + 5);
	expect_recovery(dir, n - 1, end - last);
	rm_rf(dir);

	/* One byte flipped in the last record's payload, then in its length. */
	dir = make_log(n);
	flip_byte(dir, "log-%016llx.wal", 1, end - 3);
	expect_recovery(dir, n - 1, end - last);
	rm_rf(dir);
	dir = make_log(n);
	flip_byte(dir, "log-%016llx.wal", 1, end - last + 1);
	expect_recovery(dir, n - 1, end - last);
	rm_rf(dir);

	/*
	 * Corruption in an earlier segment: it is truncated there, and the
	 * later segment (which would leave a hole) is set aside.
	 */
	{
		struct ctx c;

		dir = make_log(n);
		if (ctx_open(&c, dir) != 0) {
			CHECK(0);
			return;
		}
		CHECK(feed(&c, n + 1, n + 50, 5));
		ctx_close(&c);
		flip_byte(dir, "log-%016llx.wal", 1, log_end(100) + 30);
		expect_recovery(dir, 100, log_end(100));
		CHECK(file_exists(dir, "log-%016llx.wal.corrupt", n + 1));
		rm_rf(dir);
	}

	/*
	 * A corrupt segment that a snapshot covers (left behind by a crash
	 * before cleanup) leaves no hole: the segments after it still count.
	 */
	{
		struct ctx c;
		rbuf *vals[NKEYS];
		uint64_t one = 1;
		char *seg1;
		size_t k;
		int i;

		dir = make_log(n);
		seg1 = read_file(dir, "log-%016llx.wal", 1, end);
		if (ctx_open(&c, dir) != 0) {
			CHECK(0);
			return;
		}
		CHECK(snapshot(c.w, n, vals) != NULL);
		CHECK(run_until(&c, snapshots_done, &one));
		for (i = 0; i < NKEYS; i++)
			rbuf_unref(vals[i]);
		CHECK(feed(&c, n + 1, n + 50, 5));
		ctx_close(&c);
		write_file(dir, "log-%016llx.wal", 1, seg1, end, 0);
		free(seg1);
		flip_byte(dir, "log-%016llx.wal", 1, log_end(100) + 30);
		if (ctx_open(&c, dir) != 0) {
			CHECK(0);
			return;
		}
		CHECK(c.last == n + 50);
		k = check_snapshot_part(&c.rp, n);
		CHECK(k != (size_t)-1);
		if (k != (size_t)-1)
			CHECK(replay_is(&c.rp, k, n + 1, n + 50));
		CHECK(file_size(dir, "log-%016llx.wal", 1) == log_end(100));
		CHECK(count_files(dir, ".corrupt") == 0);
		ctx_close(&c);
		rm_rf(dir);
	}
}

/*
 * The crash test's child: recover, then append and snapshot as fast as
 * the disk allows, writing each durable revision to fd, until killed.
 */
struct child {
	struct ctx c;
	int fd;
	uint64_t next;
	uv_idle_t idle;
	rbuf *vals[NKEYS];
	int snapping;
};

static void
child_write(int fd, uint64_t rev)
{
	char *p = (char *)&rev;
	size_t n = sizeof rev;
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, p, n)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(3);
		p += r;
		n -= r;
	}
}

static void
child_idle(uv_idle_t *h)
{
	struct child *ch = h->data;
	struct wal_stats st;
	size_t i, n = 1 + rand() % 200;
	int k;

	if (ch->snapping) {
		wal_get_stats(ch->c.w, &st);
		if (st.snapshots == (uint64_t)ch->snapping) {
			for (k = 0; k < NKEYS; k++)
				rbuf_unref(ch->vals[k]);
			ch->snapping = 0;
		}
	}
	for (i = 0; i < n; i++)
		append_rev(ch->c.w, ch->next++);
	if (!ch->snapping && wal_log_bytes(ch->c.w) > (1 << 20) &&
	    snapshot(ch->c.w, ch->next - 1, ch->vals) != NULL) {
		wal_get_stats(ch->c.w, &st);
		ch->snapping = st.snapshots + 1;
	}
	/* Keep at most ~20k records in flight, as acks would. */
	if (ch->next - 1 - ch->c.durable > 20000)
		uv_idle_stop(h);
}

static void
child_replay(void *arg, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
}

static void
child_durable(void *arg, uint64_t rev)
{
	struct child *ch = arg;

	ch->c.durable = rev;
	child_write(ch->fd, rev);
	if (!uv_is_active((uv_handle_t *)&ch->idle))
		uv_idle_start(&ch->idle, child_idle);
}

static void
crash_child(const char *dir, int fd, unsigned seed)
{
	static struct child ch;
	char *cause = NULL;

	srand(seed);
	log_set_level(LOG_ERROR);
	ch.fd = fd;
	uv_loop_init(&ch.c.loop);
	if (wal_open(&ch.c.loop, dir, child_replay, child_durable, &ch,
	    &ch.c.last, &ch.c.w, &cause) != 0) {
		fprintf(stderr, "child: %s\n", cause);
		_exit(4);
	}
	ch.c.durable = ch.c.last;
	ch.next = ch.c.last + 1;
	uv_idle_init(&ch.c.loop, &ch.idle);
	ch.idle.data = &ch;
	uv_idle_start(&ch.idle, child_idle);
	uv_run(&ch.c.loop, UV_RUN_DEFAULT);
	_exit(5);
}

/* Newest snapshot file's revision, 0 if none. */
static uint64_t
newest_snapshot(const char *dir)
{
	char *p;
	DIR *d;
	struct dirent *de;
	unsigned long long v;
	uint64_t best = 0;
	char tail[16];

	if (asprintf(&p, "%s/store", dir) < 0 || (d = opendir(p)) == NULL)
		exit(2);
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "snap-%16llx.%15s", &v, tail) == 2 &&
		    strcmp(tail, "snap") == 0 && v > best)
			best = v;
	}
	closedir(d);
	free(p);
	return best;
}

static void
test_crash(void)
{
	char *dir = mktemp_dir();
	int round, fds[2], status;
	uint64_t maxdur = 0, rev, snaprev, total = 0;
	struct pollfd pfd;
	struct ctx c;
	ssize_t r;
	size_t n;
	pid_t pid;
	long ms;
	uint64_t t0;

	srand(time(NULL) ^ getpid());
	for (round = 0; round < 8; round++) {
		if (pipe(fds) != 0)
			exit(2);
		fflush(stderr);
		if ((pid = fork()) == 0) {
			close(fds[0]);
			crash_child(dir, fds[1], rand());
		}
		close(fds[1]);
		ms = 50 + rand() % 600;
		t0 = uv_hrtime();
		pfd.fd = fds[0];
		pfd.events = POLLIN;
		while ((uv_hrtime() - t0) / 1000000 < (uint64_t)ms) {
			if (poll(&pfd, 1, 5) <= 0)
				continue;
			if ((r = read(fds[0], &rev, sizeof rev)) <= 0)
				break;
			if (r == sizeof rev && rev > maxdur)
				maxdur = rev;
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* What the child wrote before it died is still in the pipe. */
		while ((r = read(fds[0], &rev, sizeof rev)) == sizeof rev)
			if (rev > maxdur)
				maxdur = rev;
		close(fds[0]);

		snaprev = newest_snapshot(dir);
		if (ctx_open(&c, dir) != 0) {
			CHECK(0);
			break;
		}
		CHECK(c.last >= maxdur);
		n = snaprev > 0 ? check_snapshot_part(&c.rp, snaprev) : 0;
		CHECK(n != (size_t)-1);
		if (n != (size_t)-1)
			CHECK(replay_is(&c.rp, n, snaprev + 1, c.last));
		if (getenv("TEST_WAL_VERBOSE"))
			fprintf(stderr, "round %d: recovered %llu, reported "
			    "durable %llu, snapshot %llu\n", round,
			    (unsigned long long)c.last,
			    (unsigned long long)maxdur,
			    (unsigned long long)snaprev);
		total = c.last;
		ctx_close(&c);
		if (check_failures)
			break;
	}
	fprintf(stderr, "test-wal: crash test: 8 kills, %llu revisions, last "
	    "reported durable %llu\n", (unsigned long long)total,
	    (unsigned long long)maxdur);
	CHECK(maxdur > 0);
	rm_rf(dir);
}

/*
 * Throughput: 1 KB values appended through a running loop, with at most
 * window records not yet durable (as if that many clients awaited acks).
 */
struct tput {
	struct ctx *c;
	uv_idle_t idle;
	uint64_t next;
	uint64_t last;
	uint64_t window;
	uint64_t append_ns;
	char val[1024];
};

static void
tput_cb(uv_idle_t *h)
{
	struct tput *t = h->data;
	char key[64];
	uint64_t t0 = uv_hrtime();
	int i;

	for (i = 0; i < 256 && t->next <= t->last &&
	    t->next - t->c->durable <= t->window; i++) {
		snprintf(key, sizeof key, "pods/ns-%llu/pod-%llu",
		    (unsigned long long)(t->next % 100),
		    (unsigned long long)t->next);
		wal_append(t->c->w, t->next, WAL_PUT, key, strlen(key),
		    t->val, sizeof t->val);
		t->next++;
	}
	t->append_ns += uv_hrtime() - t0;
	if (t->next > t->last)
		uv_idle_stop(h);
}

static void
throughput(uint64_t n, uint64_t window)
{
	char *dir = mktemp_dir();
	static struct tput t;
	struct wal_stats st;
	struct ctx c;
	uint64_t t0, dt;
	double secs;

	if (ctx_open(&c, dir) != 0) {
		CHECK(0);
		return;
	}
	memset(&t, 0, sizeof t);
	memset(t.val, 'x', sizeof t.val);
	t.c = &c;
	t.next = 1;
	t.last = n;
	t.window = window;
	uv_idle_init(&c.loop, &t.idle);
	t.idle.data = &t;
	t0 = uv_hrtime();
	uv_idle_start(&t.idle, tput_cb);
	CHECK(run_until(&c, durable_at, &n));
	dt = uv_hrtime() - t0;
	uv_close((uv_handle_t *)&t.idle, NULL);
	wal_get_stats(c.w, &st);
	secs = dt / 1e9;
	fprintf(stderr, "test-wal: throughput, 1 KB values, %llu in flight: "
	    "%.0f records/s, %.1f MB/s; %llu fdatasyncs, %.0f records and "
	    "%.3f ms each; wal_append %.0f ns\n", (unsigned long long)window,
	    n / secs, st.bytes / secs / 1e6, (unsigned long long)st.syncs,
	    (double)st.records / st.syncs,
	    st.sync_usec_total / 1000.0 / st.syncs,
	    (double)t.append_ns / n);
	ctx_close(&c);
	rm_rf(dir);
}

static void
test_throughput(void)
{
	throughput(quick ? 20000 : 300000, 50000);
	throughput(quick ? 5000 : 100000, 1000);
	throughput(quick ? 1000 : 10000, 1);
}

int
main(int argc, char **argv)
{
	int i, nofork = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-fork") == 0)
			nofork = 1;
		else if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
	}
	log_set_level(LOG_WARN);
	test_crc_reference();
	test_basic();
	test_snapshot();
	test_torn();
	test_io_errors();
	if (!nofork)
		test_crash();
	test_throughput();
	return check_result("test-wal");
}
