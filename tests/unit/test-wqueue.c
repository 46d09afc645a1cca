/*
 * Unit tests for the work queue: dedupe, one worker per key, FIFO order,
 * namespaces taking turns, delayed adds (with a fake clock and on a real
 * loop), the rate limiter's
 * exact delays, the ready callback and shutdown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctrl/wqueue.h"

static uint64_t
fake_clock(void *arg)
{
	return *(uint64_t *)arg;
}

/* Free q and run the loop until its handles are closed. */
static void
finish(uv_loop_t *loop, wqueue *q)
{
	wqueue_free(q);
	uv_run(loop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(loop) == 0);
}

/* Get the next key and mark it done at once; a copy is returned. */
static const char *
take(wqueue *q)
{
	static char buf[64];
	const char *k = wqueue_get(q);

	if (k == NULL)
		return NULL;
	snprintf(buf, sizeof buf, "%s", k);
	wqueue_done(q, k);
	return buf;
}

static void
test_dedupe_fifo(void)
{
	uv_loop_t loop;
	wqueue *q;
	struct wqueue_stats st;
	char buf[16] = "ns/a";

	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_add(q, buf);
	buf[3] = 'z';		/* the queue keeps its own copy */
	wqueue_add(q, "ns/a");
	wqueue_add(q, "ns/a");
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "ns/a");
	CHECK(wqueue_get(q) == NULL);

	wqueue_add(q, "a");
	wqueue_add(q, "b");
	wqueue_add(q, "c");
	wqueue_add(q, "a");	/* already waiting: keeps its place */
	CHECK(wqueue_len(q) == 3);
	CHECK_STR(take(q), "a");
	CHECK_STR(take(q), "b");
	CHECK_STR(take(q), "c");
	CHECK(take(q) == NULL);
	wqueue_get_stats(q, &st);
	CHECK(st.adds == 4);
	CHECK(st.depth == 0 && st.processing == 0 && st.delayed == 0);
	finish(&loop, q);
}

static void
test_processing(void)
{
	uv_loop_t loop;
	wqueue *q;
	const char *k;
	struct wqueue_stats st;

	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_add(q, "a");
	wqueue_add(q, "b");
	k = wqueue_get(q);
	CHECK_STR(k, "a");
	wqueue_add(q, "a");	/* dirty, but not handed out twice */
	wqueue_add(q, "a");
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "b");
	CHECK(wqueue_get(q) == NULL);
	wqueue_get_stats(q, &st);
	CHECK(st.processing == 1);
	wqueue_done(q, "a");
	CHECK(wqueue_len(q) == 1);
	k = wqueue_get(q);
	CHECK_STR(k, "a");
	CHECK(wqueue_get(q) == NULL);
	wqueue_done(q, k);
	CHECK(wqueue_len(q) == 0);
	CHECK(wqueue_get(q) == NULL);
	wqueue_done(q, "a");	/* not processing: ignored */
	wqueue_done(q, "nope");
	CHECK(wqueue_len(q) == 0);
	wqueue_get_stats(q, &st);
	CHECK(st.adds == 3);
	CHECK(st.processing == 0);
	finish(&loop, q);
}

static void
test_after_fake(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 1000;
	struct wqueue_stats st;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	wqueue_add_after(q, "a", 30);
	wqueue_add_after(q, "b", 10);
	wqueue_add_after(q, "c", 20);
	wqueue_add_after(q, "d", 10);
	wqueue_add_after(q, "e", 0);	/* now */
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "e");
	wqueue_get_stats(q, &st);
	CHECK(st.delayed == 4);
	t = 1009;
	CHECK(wqueue_poll(q) == 0);
	t = 1010;
	CHECK(wqueue_poll(q) == 2);
	CHECK_STR(take(q), "b");
	CHECK_STR(take(q), "d");
	t = 1025;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "c");
	CHECK(take(q) == NULL);
	t = 1100;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "a");
	wqueue_get_stats(q, &st);
	CHECK(st.delayed == 0);

	/* The earliest deadline wins, whichever came first. */
	t = 2000;
	wqueue_add_after(q, "x", 50);
	wqueue_add_after(q, "x", 20);
	wqueue_add_after(q, "y", 10);
	wqueue_add_after(q, "y", 40);
	wqueue_get_stats(q, &st);
	CHECK(st.delayed == 2);
	t = 2010;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "y");
	t = 2020;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "x");
	t = 2100;
	CHECK(wqueue_poll(q) == 0);
	CHECK(take(q) == NULL);

	/* A delayed add of a waiting key does not queue it twice. */
	wqueue_add(q, "w");
	wqueue_add_after(q, "w", 5);
	t = 2105;
	CHECK(wqueue_poll(q) == 1);
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "w");
	CHECK(take(q) == NULL);
	finish(&loop, q);
}

/* Many random delays, some moved earlier, come out sorted. */
static void
test_after_heap(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0, delay[2000];
	unsigned seed = 12345;
	char key[16];
	const char *k;
	int i, n = 0, sorted = 1, prev = -1, idx;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	for (i = 0; i < 2000; i++) {
		seed = seed * 1103515245 + 12345;
		delay[i] = 1 + (seed >> 8) % 500;
		snprintf(key, sizeof key, "k%d", i);
		wqueue_add_after(q, key, delay[i]);
	}
	for (i = 0; i < 2000; i += 3) {
		seed = seed * 1103515245 + 12345;
		snprintf(key, sizeof key, "k%d", i);
		wqueue_add_after(q, key, 1 + (seed >> 8) % 500);
		if (1 + (seed >> 8) % 500 < delay[i])
			delay[i] = 1 + (seed >> 8) % 500;
	}
	t = 1000;
	CHECK(wqueue_poll(q) == 2000);
	while ((k = wqueue_get(q)) != NULL) {
		idx = atoi(k + 1);
		if (prev >= 0 && delay[idx] < delay[prev])
			sorted = 0;
		prev = idx;
		wqueue_done(q, k);
		n++;
	}
	CHECK(n == 2000);
	CHECK(sorted);
	finish(&loop, q);
}

struct collect {
	char order[16][16];
	int n, calls, per_call, nodone;
	wqueue *free_me;
};

/* A ready callback that takes up to per_call keys and finishes them. */
static void
collect_ready(wqueue *q, void *arg)
{
	struct collect *c = arg;
	const char *k;
	int i;

	c->calls++;
	if (c->free_me != NULL) {
		wqueue_free(c->free_me);
		return;
	}
	for (i = 0; i < c->per_call && (k = wqueue_get(q)) != NULL; i++) {
		if (c->n < 16)
			snprintf(c->order[c->n++], sizeof c->order[0], "%s", k);
		if (!c->nodone)
			wqueue_done(q, k);
	}
}

static void
test_after_loop(void)
{
	uv_loop_t loop;
	wqueue *q;
	struct collect c;
	uint64_t start;

	memset(&c, 0, sizeof c);
	c.per_call = 10;
	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_set_ready_cb(q, collect_ready, &c);
	uv_update_time(&loop);
	start = uv_now(&loop);
	wqueue_add_after(q, "a", 30);
	wqueue_add_after(q, "b", 10);
	wqueue_add_after(q, "c", 20);
	wqueue_add_after(q, "c", 25);	/* later: ignored */
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(c.n == 3);
	CHECK_STR(c.order[0], "b");
	CHECK_STR(c.order[1], "c");
	CHECK_STR(c.order[2], "a");
	CHECK(uv_now(&loop) - start >= 30);
	finish(&loop, q);
}

static void
test_ready_cb(void)
{
	uv_loop_t loop;
	wqueue *q;
	struct collect c;

	/* Called from the loop, a bounded number of keys per call. */
	memset(&c, 0, sizeof c);
	c.per_call = 2;
	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_set_ready_cb(q, collect_ready, &c);
	wqueue_add(q, "a");
	wqueue_add(q, "b");
	wqueue_add(q, "c");
	wqueue_add(q, "d");
	wqueue_add(q, "e");
	CHECK(c.calls == 0);
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 1);
	CHECK(c.n == 2);
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(c.calls == 3);
	CHECK(c.n == 5);
	CHECK_STR(c.order[0], "a");
	CHECK_STR(c.order[4], "e");
	CHECK(wqueue_len(q) == 0);
	finish(&loop, q);

	/* A callback that takes nothing is not called again until woken. */
	memset(&c, 0, sizeof c);
	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_add(q, "a");
	wqueue_add(q, "b");
	wqueue_set_ready_cb(q, collect_ready, &c);
	CHECK(c.calls == 0);
	uv_run(&loop, UV_RUN_NOWAIT);
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 1);
	uv_run(&loop, UV_RUN_DEFAULT);	/* nothing active: returns */
	CHECK(c.calls == 1);
	wqueue_add(q, "c");
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 2);
	c.per_call = 1;
	c.nodone = 1;
	uv_run(&loop, UV_RUN_NOWAIT);	/* asleep: no add, no done */
	CHECK(c.calls == 2);
	wqueue_add(q, "d");
	uv_run(&loop, UV_RUN_NOWAIT);	/* takes a, keeps it */
	CHECK(c.calls == 3);
	uv_run(&loop, UV_RUN_NOWAIT);	/* made progress: called again */
	CHECK(c.calls == 4);
	CHECK(c.n == 2);
	c.per_call = 0;
	uv_run(&loop, UV_RUN_NOWAIT);	/* took b: once more, takes none */
	CHECK(c.calls == 5);
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 5);
	wqueue_done(q, "a");		/* a done wakes it */
	CHECK(c.calls == 5);
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 6);
	CHECK(wqueue_len(q) == 2);
	wqueue_set_ready_cb(q, NULL, NULL);
	wqueue_add(q, "e");
	uv_run(&loop, UV_RUN_NOWAIT);
	CHECK(c.calls == 6);
	finish(&loop, q);

	/* The callback may free the queue. */
	memset(&c, 0, sizeof c);
	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	c.free_me = q;
	wqueue_set_ready_cb(q, collect_ready, &c);
	wqueue_add(q, "a");
	wqueue_add_after(q, "b", 1000);
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(c.calls == 1);
	CHECK(uv_loop_close(&loop) == 0);
}

static void
test_backoff(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0, want = 5;
	int i, ok = 1;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	wqueue_set_bucket(q, 0, 0);
	CHECK(wqueue_when(q, "a") == 5);
	CHECK(wqueue_when(q, "a") == 10);
	CHECK(wqueue_when(q, "a") == 20);
	CHECK(wqueue_when(q, "a") == 40);
	CHECK(wqueue_num_requeues(q, "a") == 4);
	CHECK(wqueue_when(q, "b") == 5);	/* per key */
	for (i = 4, want = 80; i < 18; i++, want *= 2)
		if (wqueue_when(q, "a") != want)
			ok = 0;
	CHECK(ok);
	CHECK(want == 1310720);
	CHECK(wqueue_when(q, "a") == 1000000);	/* 5 ms * 2^18 > 1000 s */
	for (i = 0; i < 100; i++)
		if (wqueue_when(q, "a") != 1000000)
			ok = 0;
	CHECK(ok);
	CHECK(wqueue_num_requeues(q, "a") == 119);
	wqueue_forget(q, "a");
	CHECK(wqueue_num_requeues(q, "a") == 0);
	CHECK(wqueue_when(q, "a") == 5);
	CHECK(wqueue_when(q, "a") == 10);
	wqueue_forget(q, "a");
	wqueue_forget(q, "b");
	wqueue_forget(q, "never");
	CHECK(wqueue_num_requeues(q, "never") == 0);

	wqueue_set_backoff(q, 100, 250);
	CHECK(wqueue_when(q, "c") == 100);
	CHECK(wqueue_when(q, "c") == 200);
	CHECK(wqueue_when(q, "c") == 250);
	finish(&loop, q);
}

static void
test_bucket(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 5000;
	char key[16];
	int i, ok = 1;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	wqueue_set_backoff(q, 0, 0);
	for (i = 0; i < 200; i++) {
		snprintf(key, sizeof key, "k%d", i);
		if (wqueue_when(q, key) != (i < 100 ? 0 : 100u * (i - 99)))
			ok = 0;
	}
	CHECK(ok);
	/* 100 tokens are reserved ahead; in 10 s they exist, none spare. */
	t += 10000;
	CHECK(wqueue_when(q, "x") == 100);
	t += 150;
	CHECK(wqueue_when(q, "x") == 50);
	t += 50;
	CHECK(wqueue_when(q, "x") == 100);
	/* A long pause refills the bucket to its burst, no further. */
	t += 60000;
	for (i = 0; i < 100; i++)
		if (wqueue_when(q, "y") != 0)
			ok = 0;
	CHECK(ok);
	CHECK(wqueue_when(q, "y") == 100);

	wqueue_set_bucket(q, 3, 1);
	CHECK(wqueue_when(q, "z") == 0);
	CHECK(wqueue_when(q, "z") == 334);	/* 1/3 s, rounded up */
	finish(&loop, q);
}

static void
test_max_of(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0;
	char key[16];
	int i;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	CHECK(wqueue_when(q, "x") == 5);
	CHECK(wqueue_when(q, "x") == 10);
	CHECK(wqueue_when(q, "x") == 20);
	for (i = 0; i < 97; i++) {
		snprintf(key, sizeof key, "k%d", i);
		CHECK(wqueue_when(q, key) == 5);
		wqueue_forget(q, key);
	}
	CHECK(wqueue_when(q, "y") == 100);	/* bucket beats 5 ms */
	CHECK(wqueue_when(q, "x") == 200);	/* bucket beats 40 ms */
	t += 20000;
	CHECK(wqueue_when(q, "x") == 80);	/* backoff beats the bucket */
	CHECK(wqueue_num_requeues(q, "x") == 5);
	CHECK(wqueue_num_requeues(q, "y") == 1);
	finish(&loop, q);
}

static void
test_rate_limited(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0;
	const char *k;
	struct wqueue_stats st;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	wqueue_add_rate_limited(q, "a");
	CHECK(wqueue_len(q) == 0);
	t = 4;
	CHECK(wqueue_poll(q) == 0);
	t = 5;
	CHECK(wqueue_poll(q) == 1);
	k = wqueue_get(q);
	CHECK_STR(k, "a");
	wqueue_add_rate_limited(q, "a");	/* while processing: 10 ms */
	t = 15;
	CHECK(wqueue_poll(q) == 1);
	CHECK(wqueue_len(q) == 0);
	wqueue_done(q, k);
	CHECK(wqueue_len(q) == 1);
	wqueue_get_stats(q, &st);
	CHECK(st.retries == 2);
	CHECK(wqueue_num_requeues(q, "a") == 2);
	k = wqueue_get(q);
	wqueue_forget(q, k);
	wqueue_done(q, k);
	CHECK(wqueue_num_requeues(q, "a") == 0);
	finish(&loop, q);
}

/* Collects the flows' counters by namespace. */
struct flows {
	char ns[4][16];
	struct wqueue_flow_stats st[4];
	int n;
};

static void
note_flow(const struct wqueue_flow_stats *st, void *arg)
{
	struct flows *fl = arg;

	if (fl->n == 4)
		return;
	snprintf(fl->ns[fl->n], sizeof fl->ns[0], "%s", st->ns);
	fl->st[fl->n] = *st;
	fl->st[fl->n].ns = fl->ns[fl->n];
	fl->n++;
}

static const struct wqueue_flow_stats *
flow(const struct flows *fl, const char *ns)
{
	int i;

	for (i = 0; i < fl->n; i++)
		if (strcmp(fl->ns[i], ns) == 0)
			return &fl->st[i];
	return NULL;
}

/* A burst in one namespace: a key of another has the next turn. */
static void
test_fair(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0;
	char key[32];
	struct flows fl;
	const struct wqueue_flow_stats *b, *l;
	const char *k;
	int i;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "burst/job-%d", i);
		wqueue_add(q, key);
	}
	CHECK_STR(take(q), "burst/job-0");
	t = 10;
	wqueue_add(q, "lone/job");
	wqueue_add(q, "node-1");	/* cluster-scoped: the flow "" */
	CHECK_STR(take(q), "burst/job-1");
	CHECK_STR(take(q), "lone/job");
	CHECK_STR(take(q), "node-1");
	CHECK_STR(take(q), "burst/job-2");
	/* A key given back while processed keeps its flow's place. */
	wqueue_add(q, "lone/a");
	wqueue_add(q, "lone/b");
	k = wqueue_get(q);
	CHECK_STR(k, "burst/job-3");
	CHECK_STR(take(q), "lone/a");
	wqueue_add(q, "burst/job-3");
	wqueue_done(q, "burst/job-3");
	CHECK_STR(take(q), "burst/job-4");
	CHECK_STR(take(q), "lone/b");
	for (i = 5; i < 1000; i++) {
		snprintf(key, sizeof key, "burst/job-%d", i);
		CHECK_STR(take(q), key);
	}
	CHECK_STR(take(q), "burst/job-3");
	CHECK(wqueue_get(q) == NULL);
	memset(&fl, 0, sizeof fl);
	wqueue_each_flow(q, note_flow, &fl);
	CHECK(fl.n == 3);
	CHECK((b = flow(&fl, "burst")) != NULL && (l = flow(&fl, "lone")) != NULL);
	CHECK(flow(&fl, "") != NULL && flow(&fl, "")->gets == 1);
	CHECK(b->gets == 1001 && b->depth == 0);
	CHECK(l->gets == 3 && l->wait_sum_ms == 0 && l->wait_max_ms == 0);
	CHECK(b->wait_max_ms == 10 && b->wait_sum_ms == 10 * 999);
	finish(&loop, q);
}

static void
test_stats(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 0;
	struct wqueue_stats st;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	wqueue_add(q, "a");
	t = 50;
	CHECK_STR(wqueue_get(q), "a");
	wqueue_add(q, "b");
	wqueue_add_after(q, "c", 100);
	t = 80;
	wqueue_get_stats(q, &st);
	CHECK(st.adds == 2);
	CHECK(st.depth == 1);
	CHECK(st.delayed == 1);
	CHECK(st.processing == 1);
	CHECK(st.max_wait_ms == 50);
	CHECK(st.oldest_wait_ms == 30);
	CHECK(take(q) != NULL);
	wqueue_get_stats(q, &st);
	CHECK(st.oldest_wait_ms == 0);
	CHECK(st.max_wait_ms == 50);
	/* Freed with keys processing, delayed and failed. */
	wqueue_when(q, "d");
	finish(&loop, q);
}

static void
test_shutdown(void)
{
	uv_loop_t loop;
	wqueue *q;
	struct collect c;
	struct wqueue_stats st;
	const char *k;

	memset(&c, 0, sizeof c);
	c.per_call = 10;
	uv_loop_init(&loop);
	q = wqueue_new(&loop);
	wqueue_set_ready_cb(q, collect_ready, &c);
	wqueue_add(q, "a");
	wqueue_add(q, "b");
	wqueue_add_after(q, "c", 10);
	k = wqueue_get(q);
	CHECK_STR(k, "a");
	wqueue_add(q, "a");
	CHECK(!wqueue_shutting_down(q));
	wqueue_shutdown(q);
	CHECK(wqueue_shutting_down(q));
	wqueue_add(q, "d");
	wqueue_add_after(q, "e", 5);
	wqueue_add_rate_limited(q, "f");
	wqueue_get_stats(q, &st);
	CHECK(st.delayed == 0);
	CHECK(st.retries == 0);
	uv_run(&loop, UV_RUN_DEFAULT);	/* nothing left to wait for */
	CHECK(c.calls == 0);
	CHECK_STR(take(q), "b");	/* waiting keys still come out */
	wqueue_done(q, k);		/* added before shutdown: queued */
	CHECK_STR(take(q), "a");
	CHECK(wqueue_get(q) == NULL);
	CHECK(c.calls == 0);
	finish(&loop, q);
}

/* A key done with a hold is not handed out before the hold ends, whether
   it was added while processed, after, or with a shorter delay; a key
   without a hold is not held; a hold that has passed holds nothing. */
static void
test_hold(void)
{
	uv_loop_t loop;
	wqueue *q;
	uint64_t t = 1000;
	const char *k;

	uv_loop_init(&loop);
	q = wqueue_new_clock(&loop, fake_clock, &t);
	/* Added while processed: after the hold. */
	wqueue_add(q, "a");
	k = wqueue_get(q);
	CHECK_STR(k, "a");
	wqueue_add(q, "a");
	wqueue_done_hold(q, k, 50);
	CHECK(wqueue_len(q) == 0);
	t = 1049;
	CHECK(wqueue_poll(q) == 0);
	t = 1050;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "a");
	/* Added after it was done: still after the hold, and a shorter
	   delay does not get around it. */
	wqueue_add(q, "b");
	k = wqueue_get(q);
	wqueue_done_hold(q, k, 30);
	wqueue_add(q, "b");
	wqueue_add_after(q, "b", 5);
	wqueue_add(q, "c");
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "c");
	t = 1055;
	wqueue_poll(q);
	CHECK(take(q) == NULL);
	t = 1080;
	CHECK(wqueue_poll(q) == 1);
	CHECK_STR(take(q), "b");
	/* Once the hold has passed, an add is queued at once. */
	wqueue_add(q, "d");
	k = wqueue_get(q);
	wqueue_done_hold(q, k, 10);
	t = 1200;
	wqueue_add(q, "d");
	CHECK(wqueue_len(q) == 1);
	CHECK_STR(take(q), "d");
	wqueue_add(q, "d");
	CHECK_STR(take(q), "d");
	finish(&loop, q);
}

int
main(void)
{
	test_dedupe_fifo();
	test_processing();
	test_after_fake();
	test_hold();
	test_after_heap();
	test_after_loop();
	test_ready_cb();
	test_backoff();
	test_bucket();
	test_max_of();
	test_rate_limited();
	test_fair();
	test_stats();
	test_shutdown();
	return check_result("test-wqueue");
}
