/*
 * Tests for the etcd client (store/etcdkv.h) against a real single-member
 * etcd, started here on free loopback ports with a data directory under
 * /tmp, and killed and removed at the end (the test is skipped, exit 77,
 * without an etcd binary: $ETCD, else etcd on PATH). Only etcdkv.h is
 * used, so it is the contract any implementation keeps. The loop runs in the main thread,
 * stepped by wait_for until a callback has run; etcd sends a watch's
 * progress notifications every second here. VERBOSE=1 shows the
 * client's log.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "lib/log.h"
#include "lib/util.h"
#include "store/etcdkv.h"

static uv_loop_t loop;
static uv_timer_t tick;
static pid_t etcd_pid = -1, tls_pid = -1;
static char tmpdir[] = "/tmp/test-etcdkv.XXXXXX";
static char *live_url, *dead_url;
static int etcd_port, etcd_peer;

/* ---- etcd ---- */

/* A loopback port nobody listens on now. */
static int
free_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The etcd binary: $ETCD, else etcd on PATH; NULL when there is none. */
static char *
find_etcd(void)
{
	const char *env = getenv("ETCD"), *path = getenv("PATH");
	char *dirs, *d, *save = NULL, *p;

	if (env != NULL && *env != '\0')
		return access(env, X_OK) == 0 ? util_printf("%s", env) : NULL;
	dirs = util_printf("%s", path ? path : "/usr/bin:/bin");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		p = util_printf("%s/etcd", d);
		if (access(p, X_OK) == 0) {
			free(dirs);
			return p;
		}
		free(p);
	}
	free(dirs);
	return NULL;
}

static void
etcd_kill(void)
{
	char *cmd;

	if (etcd_pid > 0) {
		kill(etcd_pid, SIGKILL);
		waitpid(etcd_pid, NULL, 0);
		etcd_pid = -1;
	}
	if (tls_pid > 0) {
		kill(tls_pid, SIGKILL);
		waitpid(tls_pid, NULL, 0);
		tls_pid = -1;
	}
	cmd = util_printf("rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test-etcdkv: %s failed\n", cmd);
	free(cmd);
}

static void
on_alarm(int sig)
{
	ssize_t w;

	(void)sig;
	if (etcd_pid > 0)
		kill(etcd_pid, SIGKILL);
	if (tls_pid > 0)
		kill(tls_pid, SIGKILL);
	w = write(2, "test-etcdkv: timed out\n", 23);
	_exit(w > 0 ? 1 : 2);
}

/* Start etcd on port (client) and peer; its pid. With tls, a second
   one: HTTPS with tls.crt, and client certificates signed by it. */
static pid_t
etcd_spawn(const char *bin, int port, int peer, int tls)
{
	const char *sfx = tls ? "-tls" : "";
	char *data = util_printf("%s/data%s", tmpdir, sfx);
	char *log = util_printf("%s/etcd%s.log", tmpdir, sfx);
	char *cu = util_printf("%s://127.0.0.1:%d", tls ? "https" : "http",
	    port);
	char *pu = util_printf("http://127.0.0.1:%d", peer);
	char *cluster = util_printf("default=%s", pu);
	char *crt = util_printf("%s/tls.crt", tmpdir);
	char *key = util_printf("%s/tls.key", tmpdir);
	const char *argv[] = { bin, "--data-dir", data, "--listen-client-urls",
	    cu, "--advertise-client-urls", cu, "--listen-peer-urls", pu,
	    "--initial-advertise-peer-urls", pu, "--initial-cluster", cluster,
	    "--experimental-watch-progress-notify-interval", "1s",
	    "--cert-file", crt, "--key-file", key, "--client-cert-auth",
	    "--trusted-ca-file", crt, NULL };
	pid_t pid;
	int fd;

	if (!tls)
		argv[15] = NULL;
	if ((pid = fork()) == 0) {
		/* Not left behind should the test crash. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	free(data);
	free(log);
	free(cu);
	free(pu);
	free(cluster);
	free(crt);
	free(key);
	return pid;
}

static void
on_tick(uv_timer_t *t)
{
	(void)t;
}

/* Run the loop until *flag is set, for at most ms; whether it was. */
static int
wait_for(const int *flag, uint64_t ms)
{
	uint64_t end;

	uv_update_time(&loop);
	end = uv_now(&loop) + ms;
	while (!*flag && uv_now(&loop) < end)
		uv_run(&loop, UV_RUN_ONCE);
	return *flag;
}

static void
spin(uint64_t ms)
{
	int never = 0;

	wait_for(&never, ms);
}

/* A client of n endpoints; over TLS with tls.crt as its CA when ca is
   set, and as its certificate too when cert is. */
static etcdkv *
client_tls(const char *const *eps, int n, int ca, int cert)
{
	struct etcdkv_conf c;
	char *cause = NULL, *crt, *key;
	etcdkv *kv;

	memset(&c, 0, sizeof c);
	c.endpoints = eps;
	c.nendpoints = n;
	c.timeout_ms = 3000;
	crt = util_printf("%s/tls.crt", tmpdir);
	key = util_printf("%s/tls.key", tmpdir);
	c.ca_file = ca ? crt : NULL;
	c.cert_file = cert ? crt : NULL;
	c.key_file = cert ? key : NULL;
	if ((kv = etcdkv_new(&loop, &c, &cause)) == NULL)
		fprintf(stderr, "etcdkv_new: %s\n", cause);
	free(cause);
	free(crt);
	free(key);
	return kv;
}

static etcdkv *
client(const char *const *eps, int n)
{
	struct etcdkv_conf c;
	char *cause = NULL;
	etcdkv *kv;

	memset(&c, 0, sizeof c);
	c.endpoints = eps;
	c.nendpoints = n;
	c.timeout_ms = 3000;
	if ((kv = etcdkv_new(&loop, &c, &cause)) == NULL)
		fprintf(stderr, "etcdkv_new: %s\n", cause);
	free(cause);
	return kv;
}

/* Whether etcd answers a range within 30 s (and is still running). */
static int
etcd_ready(etcdkv *kv)
{
	struct etcdkv_range r;
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t rev;
	int more, i;
	char *err;

	memset(&r, 0, sizeof r);
	r.key = "/ready";
	r.klen = 6;
	for (i = 0; i < 150; i++) {
		if (waitpid(etcd_pid, NULL, WNOHANG) == etcd_pid) {
			etcd_pid = -1;
			return 0;
		}
		if (etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more,
		    &err) == 0) {
			etcdkv_kvs_free(kvs, n);
			return 1;
		}
		free(err);
		spin(200);
	}
	return 0;
}

/* Start etcd (new ports when it cannot bind them); sets live_url. */
static int
etcd_start(const char *bin)
{
	const char *eps[1];
	etcdkv *kv;
	int tries, ok = 0, port;

	for (tries = 0; tries < 3 && !ok; tries++) {
		port = etcd_port = free_port();
		etcd_peer = free_port();
		etcd_pid = etcd_spawn(bin, port, etcd_peer, 0);
		free(live_url);
		live_url = util_printf("http://127.0.0.1:%d", port);
		eps[0] = live_url;
		if ((kv = client(eps, 1)) == NULL)
			return 0;
		ok = etcd_ready(kv);
		etcdkv_free(kv);
		if (!ok && etcd_pid > 0) {
			kill(etcd_pid, SIGKILL);
			waitpid(etcd_pid, NULL, 0);
			etcd_pid = -1;
		}
	}
	return ok;
}

/* ---- helpers ---- */

struct txn_res {
	int done, out;
	int64_t rev;
	char err[256];
};

static void
on_txn(void *arg, int outcome, int64_t rev, const char *err)
{
	struct txn_res *t = arg;

	t->done = 1;
	t->out = outcome;
	t->rev = rev;
	snprintf(t->err, sizeof t->err, "%s", err ? err : "");
}

/* One transaction through the loop; its outcome, *rev. */
static int
txn(etcdkv *kv, const struct etcdkv_op *ops, size_t n, int64_t *rev)
{
	struct txn_res t;

	memset(&t, 0, sizeof t);
	etcdkv_txn(kv, ops, n, on_txn, &t);
	CHECK(wait_for(&t.done, 5000));
	if (!t.done)
		return -2;
	*rev = t.rev;
	return t.out;
}

static struct etcdkv_op
put(const char *key, const char *value, int64_t expect)
{
	struct etcdkv_op o;

	memset(&o, 0, sizeof o);
	o.key = key;
	o.klen = strlen(key);
	o.value = value;
	o.vlen = strlen(value);
	o.expect_mod = expect;
	return o;
}

static struct etcdkv_op
del(const char *key, int64_t expect)
{
	struct etcdkv_op o = put(key, "", expect);

	o.del = 1;
	o.value = NULL;
	return o;
}

/* A put through the loop, unguarded; its revision. */
static int64_t
put1(etcdkv *kv, const char *key, const char *value)
{
	struct etcdkv_op o = put(key, value, -1);
	int64_t rev = 0;

	CHECK(txn(kv, &o, 1, &rev) == ETCDKV_OK);
	return rev;
}

static struct etcdkv_range
range_of(const char *key, const char *end)
{
	struct etcdkv_range r;

	memset(&r, 0, sizeof r);
	r.key = key;
	r.klen = strlen(key);
	r.end = end;
	r.elen = end ? strlen(end) : 0;
	return r;
}

/* One key's value ("" when absent), at revision rev (0: now). */
static int
get(etcdkv *kv, const char *key, int64_t rev, char *out, size_t size)
{
	struct etcdkv_range r = range_of(key, NULL);
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t at;
	int more;
	char *err;

	r.rev = rev;
	out[0] = '\0';
	if (etcdkv_range_sync(kv, &r, &kvs, &n, &at, &more, &err) != 0) {
		fprintf(stderr, "range %s: %s\n", key, err);
		free(err);
		return -1;
	}
	if (n == 1)
		snprintf(out, size, "%s", kvs[0].value);
	etcdkv_kvs_free(kvs, n);
	return (int)n;
}

struct rev_res {
	int done;
	int64_t rev;
};

static void
on_rev(void *arg, int64_t rev, const char *err)
{
	struct rev_res *r = arg;

	r->done = 1;
	r->rev = rev;
	if (err != NULL)
		fprintf(stderr, "current_rev: %s\n", err);
}

static int64_t
current_rev(etcdkv *kv)
{
	struct rev_res r = { 0, 0 };

	etcdkv_current_rev(kv, "/t/probe", on_rev, &r);
	CHECK(wait_for(&r.done, 5000));
	return r.rev;
}

/* ---- a watcher that records what it is told ---- */

struct event {
	int64_t rev;
	char key[32], value[32], prev[32];
	int del, has_prev;
};

struct watcher {
	etcdkv_watch *w;
	struct event ev[128];
	int n;
	int64_t progress;
	int nprogress;
	int ended;
	int64_t compacted;
	char err[256];
	int stop_after;		/* stop in on_event after that many */
	etcdkv *free_kv;	/* or free this client there */
	int stopped;
	int late;		/* callbacks after the stop */
};

static void
w_event(void *arg, const struct etcdkv_kv *kv, const struct etcdkv_kv *prev)
{
	struct watcher *x = arg;
	struct event *e;

	if (x->stopped) {
		x->late++;
		return;
	}
	if (x->n >= (int)(sizeof x->ev / sizeof x->ev[0]))
		return;
	e = &x->ev[x->n++];
	e->rev = kv->mod_rev;
	snprintf(e->key, sizeof e->key, "%.*s", (int)kv->klen, kv->key);
	e->del = kv->value == NULL;
	if (kv->value != NULL)
		snprintf(e->value, sizeof e->value, "%s", kv->value);
	e->has_prev = prev != NULL && prev->value != NULL;
	if (e->has_prev)
		snprintf(e->prev, sizeof e->prev, "%s", prev->value);
	if (x->stop_after > 0 && x->n == x->stop_after) {
		x->stopped = 1;
		etcdkv_watch_stop(x->w);
	}
	if (x->free_kv != NULL) {
		x->stopped = 1;
		etcdkv_free(x->free_kv);
		x->free_kv = NULL;
	}
}

static void
w_progress(void *arg, int64_t rev)
{
	struct watcher *x = arg;

	if (x->stopped)
		x->late++;
	x->progress = rev;
	x->nprogress++;
}

/* As the store does: stop the watch from its on_end. */
static void
w_end(void *arg, int64_t compacted, const char *err)
{
	struct watcher *x = arg;

	if (x->stopped)
		x->late++;
	x->ended = 1;
	x->compacted = compacted;
	snprintf(x->err, sizeof x->err, "%s", err ? err : "");
	x->stopped = 1;
	etcdkv_watch_stop(x->w);
}

static void
watch(etcdkv *kv, struct watcher *x, const char *prefix, int64_t from)
{
	struct etcdkv_watch_cb cb = { w_event, w_progress, w_end, x };
	char end[64];
	size_t len = strlen(prefix);

	etcdkv_prefix_end(prefix, len, end);
	x->w = etcdkv_watch_start(kv, prefix, len, end, len, from, &cb);
	CHECK(x->w != NULL);
}

static void
unwatch(struct watcher *x)
{
	if (!x->stopped) {
		x->stopped = 1;
		etcdkv_watch_stop(x->w);
	}
}

/* Run the loop until the watcher has n events. */
static int
wait_events(struct watcher *x, int n, uint64_t ms)
{
	uint64_t end;

	uv_update_time(&loop);
	end = uv_now(&loop) + ms;
	while (x->n < n && uv_now(&loop) < end)
		uv_run(&loop, UV_RUN_ONCE);
	return x->n >= n;
}

/* ---- the tests ---- */

/* Create if absent, update and delete guarded by mod_revision. */
static void
test_txn(etcdkv *kv)
{
	struct etcdkv_op o;
	int64_t r1 = 0, r2 = 0, r3 = 0, rev = 0;
	char *err = NULL, v[32];

	o = put("/t/a", "1", 0);
	CHECK(txn(kv, &o, 1, &r1) == ETCDKV_OK);
	CHECK(r1 > 0);
	CHECK(txn(kv, &o, 1, &rev) == ETCDKV_CONFLICT);
	CHECK(rev == r1);
	o = put("/t/a", "2", r1);
	CHECK(etcdkv_txn_sync(kv, &o, 1, &r2, &err) == ETCDKV_OK);
	CHECK(err == NULL && r2 > r1);
	CHECK(etcdkv_txn_sync(kv, &o, 1, &rev, &err) == ETCDKV_CONFLICT);
	CHECK(rev == r2);
	CHECK(get(kv, "/t/a", 0, v, sizeof v) == 1);
	CHECK_STR(v, "2");
	o = del("/t/a", r1);
	CHECK(txn(kv, &o, 1, &rev) == ETCDKV_CONFLICT);
	o = del("/t/a", r2);
	CHECK(txn(kv, &o, 1, &r3) == ETCDKV_OK);
	CHECK(r3 > r2);
	CHECK(get(kv, "/t/a", 0, v, sizeof v) == 0);
	CHECK(get(kv, "/t/a", r2, v, sizeof v) == 1);
	CHECK_STR(v, "2");
}

/* Every op of a transaction or none; bytes with a NUL go through. */
static void
test_txn_multi(etcdkv *kv)
{
	struct etcdkv_op o[3];
	struct etcdkv_range r = range_of("/t/m/", "/t/m0");
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t r1 = 0, rev = 0;
	int more;
	char *err = NULL, v[32];

	o[0] = put("/t/m/1", "one", 0);
	o[1] = put("/t/m/2", "two", 0);
	CHECK(txn(kv, o, 2, &r1) == ETCDKV_OK);
	o[0] = put("/t/m/3", "three", 0);
	o[1] = put("/t/m/1", "uno", 0);	/* exists: the whole txn fails */
	CHECK(txn(kv, o, 2, &rev) == ETCDKV_CONFLICT);
	CHECK(rev == r1);
	CHECK(get(kv, "/t/m/3", 0, v, sizeof v) == 0);
	CHECK(get(kv, "/t/m/1", 0, v, sizeof v) == 1);
	CHECK_STR(v, "one");
	o[0] = put("/t/m/3", "three", 0);
	o[1] = del("/t/m/2", r1);
	o[2] = put("/t/m/1", "a\0b", r1);
	o[2].vlen = 3;
	CHECK(etcdkv_txn_sync(kv, o, 3, &rev, &err) == ETCDKV_OK);
	CHECK(rev > r1);
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(kvs[0].klen == 6 && memcmp(kvs[0].key, "/t/m/1", 6) == 0);
		CHECK(kvs[0].vlen == 3 && memcmp(kvs[0].value, "a\0b", 4) == 0);
		CHECK(kvs[0].mod_rev == kvs[1].mod_rev);
		CHECK(kvs[0].create_rev == r1 && kvs[0].version == 2);
		CHECK(kvs[1].klen == 6 && memcmp(kvs[1].key, "/t/m/3", 6) == 0);
		CHECK_STR(kvs[1].value, "three");
		CHECK(kvs[1].key[kvs[1].klen] == '\0');
	}
	etcdkv_kvs_free(kvs, n);
}

/* Limits, past revisions, counts, keys only, min_mod_rev, to the end. */
static void
test_range(etcdkv *kv)
{
	struct etcdkv_range r = range_of("/t/r/", "/t/r0");
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t revs[5], upd, rev = 0;
	int more, i;
	char key[16], *err = NULL;

	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof key, "/t/r/%d", i);
		revs[i] = put1(kv, key, key + 3);
	}
	upd = put1(kv, "/t/r/0", "changed");
	r.limit = 2;
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 2 && more == 1 && rev == upd);
	if (n == 2) {
		CHECK_STR(kvs[0].key, "/t/r/0");
		CHECK_STR(kvs[0].value, "changed");
		CHECK_STR(kvs[1].key, "/t/r/1");
		CHECK_STR(kvs[1].value, "r/1");
	}
	etcdkv_kvs_free(kvs, n);
	/* At a past revision: the value then, and the keys there were. */
	r.limit = 0;
	r.rev = revs[2];
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 3 && more == 0);
	if (n == 3)
		CHECK_STR(kvs[0].value, "r/0");
	etcdkv_kvs_free(kvs, n);
	r.rev = 0;
	r.count_only = 1;
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 5 && kvs == NULL);
	etcdkv_kvs_free(kvs, 0);
	r.count_only = 0;
	r.keys_only = 1;
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 5);
	for (i = 0; i < (int)n; i++)
		CHECK(kvs[i].value == NULL && kvs[i].klen == 6);
	etcdkv_kvs_free(kvs, n);
	r.keys_only = 0;
	r.min_mod_rev = revs[3];
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n == 3);	/* 0 (updated), 3, 4 */
	if (n == 3) {
		CHECK_STR(kvs[0].key, "/t/r/0");
		CHECK_STR(kvs[1].key, "/t/r/3");
		CHECK_STR(kvs[2].key, "/t/r/4");
	}
	etcdkv_kvs_free(kvs, n);
	r = range_of("/t/r/3", NULL);
	r.end = "\0";
	r.elen = 1;
	CHECK(etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more, &err) == 0);
	CHECK(n >= 2);
	if (n >= 2) {
		CHECK_STR(kvs[0].key, "/t/r/3");
		CHECK_STR(kvs[1].key, "/t/r/4");
	}
	etcdkv_kvs_free(kvs, n);
	CHECK(current_rev(kv) == upd);
}

/* etcdkv_range's answer, as the test gets it. */
struct range_res {
	int done;
	struct etcdkv_kv *kvs;
	size_t n;
	int64_t rev;
	int more;
	char err[128];
};

static void
on_range(void *arg, struct etcdkv_kv *kvs, size_t n, int64_t rev, int more,
    const char *err)
{
	struct range_res *r = arg;

	r->done = 1;
	r->kvs = kvs;
	r->n = n;
	r->rev = rev;
	r->more = more;
	snprintf(r->err, sizeof r->err, "%s", err ? err : "");
}

/* The same ranges without blocking: values, counts, a past revision
   and, below the compaction, "compacted" (after test_compaction). */
static void
test_range_async(etcdkv *kv)
{
	struct etcdkv_range r = range_of("/t/r/", "/t/r0");
	struct range_res a;
	int64_t now = current_rev(kv);

	memset(&a, 0, sizeof a);
	r.limit = 2;
	etcdkv_range(kv, &r, on_range, &a);
	CHECK(a.done == 0);	/* the loop has not run: nothing blocked */
	CHECK(wait_for(&a.done, 5000));
	CHECK(a.n == 2 && a.more == 1 && a.rev == now);
	if (a.n == 2) {
		CHECK_STR(a.kvs[0].key, "/t/r/0");
		CHECK_STR(a.kvs[0].value, "changed");
	}
	etcdkv_kvs_free(a.kvs, a.n);
	memset(&a, 0, sizeof a);
	r.limit = 0;
	r.count_only = 1;
	etcdkv_range(kv, &r, on_range, &a);
	CHECK(wait_for(&a.done, 5000));
	CHECK(a.n == 5 && a.kvs == NULL && a.rev == now);
	memset(&a, 0, sizeof a);
	r = range_of("/t/c", NULL);
	r.rev = 1;
	etcdkv_range(kv, &r, on_range, &a);
	CHECK(wait_for(&a.done, 5000));
	CHECK(a.rev == -1 && strcmp(a.err, "compacted") == 0);
	etcdkv_kvs_free(a.kvs, a.n);
}

/* Events in order with the values before deletions; progress. */
static void
test_watch(etcdkv *kv)
{
	struct watcher x, y;
	struct etcdkv_op o;
	int64_t from = current_rev(kv) + 1, last = 0;
	int i;

	memset(&x, 0, sizeof x);
	watch(kv, &x, "/t/w/", from);
	put1(kv, "/t/w/a", "1");
	put1(kv, "/t/w/b", "2");
	put1(kv, "/t/x", "outside");
	put1(kv, "/t/w/a", "3");
	o = del("/t/w/b", -1);
	CHECK(txn(kv, &o, 1, &last) == ETCDKV_OK);
	CHECK(wait_events(&x, 4, 5000));
	CHECK(x.n == 4);
	for (i = 1; i < x.n; i++)
		CHECK(x.ev[i].rev > x.ev[i - 1].rev);
	CHECK(x.ev[0].rev == from);
	CHECK_STR(x.ev[0].key, "/t/w/a");
	CHECK_STR(x.ev[0].value, "1");
	CHECK_STR(x.ev[2].value, "3");
	CHECK(x.ev[3].del && x.ev[3].rev == last);
	CHECK_STR(x.ev[3].key, "/t/w/b");
	CHECK(x.ev[3].has_prev);
	CHECK_STR(x.ev[3].prev, "2");
	/* Progress: nothing more to say up to at least the deletion. */
	for (i = 0; i < 50 && x.progress < last; i++)
		spin(100);
	CHECK(x.nprogress > 0 && x.progress >= last);
	CHECK(!x.ended);
	/* The same history again, from its first revision. */
	memset(&y, 0, sizeof y);
	watch(kv, &y, "/t/w/", from);
	CHECK(wait_events(&y, 4, 5000));
	CHECK(y.n == 4 && y.ev[3].rev == last && y.ev[3].has_prev);
	unwatch(&x);
	unwatch(&y);
	spin(100);
	CHECK(x.late == 0 && y.late == 0);
}

/* Below the compaction: a range says "compacted", a watch ends. */
static void
test_compaction(etcdkv *kv)
{
	struct etcdkv_range r = range_of("/t/c", NULL);
	struct etcdkv_kv *kvs;
	struct watcher x;
	size_t n;
	int64_t c1, c2, rev;
	int more, i, rc = 0;
	char *err = NULL;

	c1 = put1(kv, "/t/c", "1");
	c2 = put1(kv, "/t/c", "2");
	etcdkv_compact(kv, c2);
	r.rev = c1;
	for (i = 0; i < 50; i++) {
		if ((rc = etcdkv_range_sync(kv, &r, &kvs, &n, &rev, &more,
		    &err)) != 0)
			break;
		etcdkv_kvs_free(kvs, n);
		spin(100);
	}
	CHECK(rc == -1 && err != NULL && strstr(err, "compacted") != NULL);
	if (err != NULL)
		fprintf(stderr, "(below the compaction: \"%s\")\n", err);
	free(err);
	memset(&x, 0, sizeof x);
	watch(kv, &x, "/t/", c1);
	CHECK(wait_for(&x.ended, 5000));
	CHECK(x.compacted > 0 && x.n == 0);
	spin(100);
	CHECK(x.late == 0);
}

/* A dead endpoint first: ranges go on to the next, a transaction fails
   once, then goes there too, and so does a watch. */
static void
test_failover(void)
{
	const char *eps[2] = { dead_url, live_url };
	struct etcdkv_op o = put("/t/f", "1", -1);
	struct watcher x;
	etcdkv *kv;
	int64_t rev = 0;
	char v[32];

	kv = client(eps, 2);
	CHECK_STR(etcdkv_endpoint(kv), dead_url);
	CHECK(get(kv, "/t/r/1", 0, v, sizeof v) == 1);
	CHECK_STR(etcdkv_endpoint(kv), live_url);
	etcdkv_free(kv);

	kv = client(eps, 2);
	CHECK(txn(kv, &o, 1, &rev) == ETCDKV_ERROR);
	CHECK_STR(etcdkv_endpoint(kv), live_url);
	CHECK(txn(kv, &o, 1, &rev) == ETCDKV_OK);
	etcdkv_free(kv);

	kv = client(eps, 2);
	memset(&x, 0, sizeof x);
	watch(kv, &x, "/t/f", rev);
	CHECK(wait_events(&x, 1, 5000));
	CHECK(x.n >= 1 && x.ev[0].rev == rev);
	put1(kv, "/t/f", "2");
	CHECK(wait_events(&x, 2, 5000));
	CHECK(x.n == 2 && x.ev[1].has_prev);
	CHECK_STR(x.ev[1].prev, "1");
	unwatch(&x);
	etcdkv_free(kv);
}

/* Stopped mid-stream, from its callback and from outside: no callback
   after. */
static void
test_stop(etcdkv *kv)
{
	struct watcher x, y;
	struct txn_res t[20];
	char key[16];
	int i, all;

	memset(&x, 0, sizeof x);
	memset(&y, 0, sizeof y);
	x.stop_after = 3;
	watch(kv, &x, "/t/s/", current_rev(kv) + 1);
	watch(kv, &y, "/t/s/", current_rev(kv) + 1);
	memset(t, 0, sizeof t);
	for (i = 0; i < 20; i++) {
		struct etcdkv_op o;

		snprintf(key, sizeof key, "/t/s/%02d", i);
		o = put(key, "v", -1);
		etcdkv_txn(kv, &o, 1, on_txn, &t[i]);
	}
	CHECK(wait_events(&y, 1, 5000));
	unwatch(&y);
	for (i = 0, all = 1; i < 20; i++)
		all &= wait_for(&t[i].done, 5000) && t[i].out == ETCDKV_OK;
	CHECK(all);
	spin(300);
	CHECK(x.n == 3 && x.late == 0 && y.late == 0);
}

/* etcd killed and started again under a watch: it goes on from the
   revision after the last event, nothing lost and nothing twice. */
static void
test_resume(etcdkv *kv, const char *bin)
{
	struct watcher x;
	struct etcdkv_op o = put("/t/z/2", "2", -1);
	int64_t r1, r2 = 0, r3;
	int i;

	memset(&x, 0, sizeof x);
	watch(kv, &x, "/t/z/", current_rev(kv) + 1);
	r1 = put1(kv, "/t/z/1", "1");
	CHECK(wait_events(&x, 1, 5000));
	kill(etcd_pid, SIGKILL);
	waitpid(etcd_pid, NULL, 0);
	spin(300);
	etcd_pid = etcd_spawn(bin, etcd_port, etcd_peer, 0);
	for (i = 0; i < 100 && txn(kv, &o, 1, &r2) != ETCDKV_OK; i++)
		spin(200);
	r3 = put1(kv, "/t/z/3", "3");
	CHECK(wait_events(&x, 3, 10000));
	CHECK(x.n == 3 && !x.ended);
	if (x.n == 3) {
		CHECK(x.ev[0].rev == r1);
		CHECK(x.ev[1].rev == r2);
		CHECK(x.ev[2].rev == r3);
	}
	unwatch(&x);
}

/* Over TLS: the server's certificate checked against the CA file, the
   client's presented; without them, nothing goes through. */
static void
test_tls(const char *bin)
{
	char *cmd, *url, v[32];
	const char *eps[1];
	etcdkv *kv;
	struct etcdkv_op o = put("/t/tls", "secret", 0);
	int64_t rev = 0;
	int i, ok = 0;

	cmd = util_printf("openssl req -x509 -newkey ec -pkeyopt "
	    "ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=etcd -addext "
	    "subjectAltName=IP:127.0.0.1 -keyout %s/tls.key -out %s/tls.crt "
	    ">/dev/null 2>&1", tmpdir, tmpdir);
	i = system(cmd);
	free(cmd);
	if (i != 0) {
		fprintf(stderr, "test-etcdkv: no openssl: TLS not tested\n");
		return;
	}
	i = free_port();
	tls_pid = etcd_spawn(bin, i, free_port(), 1);
	url = util_printf("https://127.0.0.1:%d", i);
	eps[0] = url;
	kv = client_tls(eps, 1, 1, 1);
	for (i = 0; i < 100 && !ok; i++) {
		ok = txn(kv, &o, 1, &rev) == ETCDKV_OK;
		if (!ok)
			spin(200);
	}
	CHECK(ok && rev > 0);
	CHECK(get(kv, "/t/tls", 0, v, sizeof v) == 1);
	CHECK_STR(v, "secret");
	etcdkv_free(kv);
	/* No client certificate; then no CA to trust the server by. */
	kv = client_tls(eps, 1, 1, 0);
	CHECK(get(kv, "/t/tls", 0, v, sizeof v) == -1);
	etcdkv_free(kv);
	kv = client_tls(eps, 1, 0, 0);
	CHECK(get(kv, "/t/tls", 0, v, sizeof v) == -1);
	etcdkv_free(kv);
	free(url);
}

/* Freed with a watch running and a transaction in flight: no callback
   after, and every handle closed (uv_loop_close says so at the end). */
static void
test_free_running(void)
{
	const char *eps[1] = { live_url };
	struct etcdkv_op o = put("/t/free", "x", -1);
	struct txn_res t;
	struct watcher x;
	etcdkv *kv = client(eps, 1);

	memset(&x, 0, sizeof x);
	watch(kv, &x, "/t/free", current_rev(kv) + 1);
	put1(kv, "/t/free", "1");
	CHECK(wait_events(&x, 1, 5000));
	memset(&t, 0, sizeof t);
	etcdkv_txn(kv, &o, 1, on_txn, &t);
	x.stopped = 1;
	etcdkv_free(kv);
	spin(300);
	CHECK(x.late == 0 && !t.done);
}

static void
print_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	fprintf(stderr, "test-etcdkv: still open: a %s handle\n",
	    uv_handle_type_name(uv_handle_get_type(h)));
}

struct freer {
	etcdkv *kv;
	int done;
};

static void
on_txn_free(void *arg, int outcome, int64_t rev, const char *err)
{
	struct freer *f = arg;

	f->done = 1;
	etcdkv_free(f->kv);
}

/* Freed from a callback: a transaction's, with a watch running; a
   watch's own on_event, with a transaction in flight. */
static void
test_free_in_callback(void)
{
	const char *eps[1] = { live_url };
	struct etcdkv_op o = put("/t/cb", "x", -1);
	struct freer f;
	struct txn_res t;
	struct watcher x;

	memset(&x, 0, sizeof x);
	f.kv = client(eps, 1);
	f.done = 0;
	watch(f.kv, &x, "/t/cb", current_rev(f.kv) + 1);
	etcdkv_txn(f.kv, &o, 1, on_txn_free, &f);
	CHECK(wait_for(&f.done, 5000));
	x.stopped = 1;
	spin(200);
	CHECK(x.late == 0);

	memset(&x, 0, sizeof x);
	memset(&t, 0, sizeof t);
	x.free_kv = client(eps, 1);
	watch(x.free_kv, &x, "/t/cb", current_rev(x.free_kv) + 1);
	etcdkv_txn(x.free_kv, &o, 1, on_txn, &t);
	etcdkv_txn(x.free_kv, &o, 1, on_txn, &t);
	CHECK(wait_events(&x, 1, 5000));
	spin(200);
	CHECK(x.n == 1 && x.late == 0 && x.free_kv == NULL);
}

int
main(void)
{
	char *bin;
	etcdkv *kv;
	const char *eps[1];

	if ((bin = find_etcd()) == NULL) {
		/* The black-box tests' form, which scripts/check.sh lists. */
		printf("SKIP: test-etcdkv: no etcd binary ($ETCD, or etcd "
		    "on PATH: apt-get install etcd-server)\n");
		return 77;
	}
	log_set_level(getenv("VERBOSE") ? LOG_DEBUG : LOG_ERROR);
	signal(SIGALRM, on_alarm);
	alarm(180);
	CHECK(mkdtemp(tmpdir) != NULL);
	uv_loop_init(&loop);
	uv_timer_init(&loop, &tick);
	uv_timer_start(&tick, on_tick, 10, 10);
	if (!etcd_start(bin)) {
		fprintf(stderr, "test-etcdkv: etcd did not start (%s/etcd.log)\n",
		    tmpdir);
		CHECK(0);
		etcd_pid = -1;
		return check_result("test-etcdkv");
	}
	dead_url = util_printf("http://127.0.0.1:%d", free_port());
	eps[0] = live_url;
	kv = client(eps, 1);
	test_txn(kv);
	test_txn_multi(kv);
	test_range(kv);
	test_watch(kv);
	test_compaction(kv);
	test_range_async(kv);
	test_failover();
	test_stop(kv);
	test_resume(kv, bin);
	etcdkv_free(kv);
	test_free_running();
	test_free_in_callback();
	test_tls(bin);

	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_walk(&loop, print_handle, NULL);
	CHECK(uv_loop_close(&loop) == 0);
	etcd_kill();
	free(bin);
	free(live_url);
	free(dead_url);
	return check_result("test-etcdkv");
}
