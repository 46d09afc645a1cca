/*
 * Fuzz target: crash recovery from a data directory (store/wal.c and the
 * store's replay in store/store.c). The input describes what a crash could
 * have left in DIR/store/:
 *
 *   byte 0  flags: 1 seal the log's record CRCs, 2 a snapshot follows,
 *           4 seal the snapshot (header, count, trailer CRC), 8 split the
 *           log into two segments
 *   byte 1  low nibble: the first segment's start revision - 1; high
 *           nibble: the snapshot's revision - 1
 *   byte 2  the second segment's start, as an offset from the first
 *   byte 3  the snapshot's length (with flag 2), in bytes
 *   then    the snapshot bytes, then the log bytes
 *
 * Sealing fills in the CRCs a fuzzer could not guess, so that the record
 * decoding behind them is reached too; it changes no other byte. The
 * directory is opened twice, with wal_open and then with store_open, as
 * volrayd does at start-up. Recovery must succeed or refuse with a cause,
 * never crash, and never invent an object: every record replayed, and every
 * object the store holds afterwards, has its key and value bytes in the
 * files written, log revisions only go up, nothing is replayed past the
 * recovered revision, a segment is only ever cut short (truncated, never
 * rewritten), and the second recovery finds the same revision as the first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <uv.h>

#include "fuzz.h"
#include "lib/crc32c.h"
#include "store/store.h"
#include "store/wal.h"

#define NFILES 3

struct file {
	char name[64];
	unsigned char *p;
	size_t len;
};

struct ctx {
	struct file files[NFILES];
	int nfiles;
	uint64_t snaprev;	/* revision of the snapshot written, or 0 */
	uint64_t logrev;	/* last log revision replayed */
	uint64_t maxrev;	/* highest revision replayed */
	int in_log;		/* past the snapshot's records */
};

static char base[256];

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Fill in the CRC of each whole record; returns the number sealed. */
static uint64_t
seal_records(unsigned char *p, size_t len)
{
	size_t off = 0, n;
	uint64_t count = 0;

	while (len - off >= 8) {
		n = get32(p + off);
		if (n == 0 || n > len - off - 8)
			break;
		put32(p + off + 4, crc32c_update(0, p + off + 8, n));
		off += 8 + n;
		count++;
	}
	return count;
}

/* Make a snapshot file's framing valid around whatever records it holds. */
static void
seal_snapshot(unsigned char *p, size_t len, uint64_t rev)
{
	uint64_t count;
	size_t end;

	if (len < 40)
		return;
	end = len - 16;
	memcpy(p, "VRSNAP1\n", 8);
	put64(p + 8, rev);
	count = seal_records(p + 24, end - 24);
	put64(p + 16, count);
	put64(p + end, count);
	put32(p + end + 12, 0x444e4553u);
	put32(p + end + 8, crc32c_update(0, p, end + 8));
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static void
rmtree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Are these bytes somewhere in what was written? */
static int
written(const struct ctx *c, const void *s, size_t n)
{
	int i;

	if (n == 0)
		return 1;
	for (i = 0; i < c->nfiles; i++)
		if (memmem(c->files[i].p, c->files[i].len, s, n) != NULL)
			return 1;
	return 0;
}

static void
replay_cb(void *arg, uint64_t rev, int op, const char *key, size_t klen,
    const char *val, size_t vlen)
{
	struct ctx *c = arg;

	FUZZ_ASSERT(op == WAL_PUT || op == WAL_DELETE);
	FUZZ_ASSERT(written(c, key, klen));
	FUZZ_ASSERT(written(c, val, vlen));
	if (!c->in_log && (op != WAL_PUT || rev > c->snaprev ||
	    c->snaprev == 0))
		c->in_log = 1;
	if (c->in_log) {
		FUZZ_ASSERT(rev > c->logrev);
		c->logrev = rev;
	}
	if (rev > c->maxrev)
		c->maxrev = rev;
}

static void
durable_cb(void *arg, uint64_t rev)
{
	(void)arg;
	(void)rev;
}

static void
write_file(const char *dir, struct file *f)
{
	char path[512];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, f->name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, f->p, f->len) == (ssize_t)f->len);
	close(fd);
}

/* A segment may be cut short by recovery, never changed or grown. */
static void
check_prefix(const char *dir, const struct file *f)
{
	char path[512];
	unsigned char *buf;
	struct stat st;
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, f->name);
	if ((fd = open(path, O_RDONLY)) < 0)
		return;		/* renamed aside, or replaced */
	FUZZ_ASSERT(fstat(fd, &st) == 0);
	FUZZ_ASSERT((size_t)st.st_size <= f->len);
	buf = malloc(st.st_size + 1);
	FUZZ_ASSERT(read(fd, buf, st.st_size) == st.st_size);
	FUZZ_ASSERT(memcmp(buf, f->p, st.st_size) == 0);
	free(buf);
	close(fd);
}

static void
check_obj(const struct ctx *c, store *st, const char *res)
{
	store_obj *const *objs;
	size_t n, i;

	n = store_list(st, res, NULL, &objs);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(written(c, objs[i]->key, strlen(objs[i]->key)));
		FUZZ_ASSERT(written(c, objs[i]->json->data,
		    objs[i]->json->len));
		FUZZ_ASSERT(objs[i]->rev <= store_rev(st));
	}
}

struct each {
	const struct ctx *c;
	store *st;
};

static void
each_res(const char *res, size_t n, void *arg)
{
	struct each *e = arg;

	(void)n;
	check_obj(e->c, e->st, res);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";

	(void)argc;
	(void)argv;
	snprintf(base, sizeof base, "%s/volray-fuzz-wal-%ld", tmp,
	    (long)getpid());
	crc32c_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[300], sdir[320], *cause = NULL;
	unsigned char *copy;
	unsigned flags;
	uint64_t start, last = 0, last2;
	size_t snaplen, loglen, half;
	struct ctx c;
	struct each e;
	uv_loop_t loop;
	store *st;
	wal *w;
	int i, rc;

	fuzz_quiet();
	if (base[0] == '\0')
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 4)
		return 0;
	memset(&c, 0, sizeof c);
	flags = data[0];
	start = 1 + (data[1] & 0xf);
	copy = malloc(size);
	memcpy(copy, data, size);
	snaplen = flags & 2 ? data[3] : 0;
	if (snaplen > size - 4)
		snaplen = size - 4;
	loglen = size - 4 - snaplen;

	if (flags & 2) {
		struct file *f = &c.files[c.nfiles++];

		c.snaprev = 1 + (data[1] >> 4);
		snprintf(f->name, sizeof f->name, "snap-%016llx.snap",
		    (unsigned long long)c.snaprev);
		f->p = copy + 4;
		f->len = snaplen;
		if (flags & 4)
			seal_snapshot(f->p, f->len, c.snaprev);
	}
	half = flags & 8 ? loglen / 2 : loglen;
	{
		struct file *f = &c.files[c.nfiles++];

		snprintf(f->name, sizeof f->name, "log-%016llx.wal",
		    (unsigned long long)start);
		f->p = copy + 4 + snaplen;
		f->len = half;
	}
	if (flags & 8) {
		struct file *f = &c.files[c.nfiles++];

		snprintf(f->name, sizeof f->name, "log-%016llx.wal",
		    (unsigned long long)(start + data[2]));
		if (data[2] == 0)
			c.nfiles--;	/* the same name: one segment */
		f->p = copy + 4 + snaplen + half;
		f->len = loglen - half;
	}
	for (i = 0; i < c.nfiles; i++)
		if (flags & 1 && c.files[i].name[0] == 'l')
			seal_records(c.files[i].p, c.files[i].len);

	snprintf(dir, sizeof dir, "%s/d", base);
	snprintf(sdir, sizeof sdir, "%s/store", dir);
	rmtree(base);
	FUZZ_ASSERT(mkdir(base, 0755) == 0);
	FUZZ_ASSERT(mkdir(dir, 0755) == 0);
	FUZZ_ASSERT(mkdir(sdir, 0755) == 0);
	for (i = 0; i < c.nfiles; i++)
		write_file(sdir, &c.files[i]);

	uv_loop_init(&loop);
	rc = wal_open(&loop, dir, replay_cb, durable_cb, &c, &last, &w,
	    &cause);
	FUZZ_ASSERT(rc == 0 || cause != NULL);
	if (rc == 0) {
		FUZZ_ASSERT(c.maxrev <= last);
		wal_close(w);
		uv_run(&loop, UV_RUN_DEFAULT);
		for (i = 0; i < c.nfiles; i++)
			if (c.files[i].name[0] == 'l')
				check_prefix(sdir, &c.files[i]);
	}
	free(cause);
	cause = NULL;

	if (rc == 0) {
		rc = store_open(&loop, dir, &st, &cause);
		FUZZ_ASSERT(rc == 0 || cause != NULL);
		if (rc == 0) {
			last2 = store_rev(st);
			FUZZ_ASSERT(last2 == last);
			e.c = &c;
			e.st = st;
			store_each_res(st, each_res, &e);
			store_close(st);
			uv_run(&loop, UV_RUN_DEFAULT);
		}
		free(cause);
	}
	uv_loop_close(&loop);
	rmtree(base);
	free(copy);
	return 0;
}
