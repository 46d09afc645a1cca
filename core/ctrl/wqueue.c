/*
 * Controller work queue, after client-go's workqueue, on one libuv loop.
 *
 * Every key the queue knows is one item in a hash map, carrying flags: DIRTY
 * (added, not yet handed out) and PROCESSING (handed out, not yet done). A
 * key sits on the FIFO exactly when it is DIRTY and not PROCESSING, which is
 * what gives the two guarantees: adding a waiting key again changes nothing,
 * and a key added while it is processed only becomes DIRTY, to be put on the
 * FIFO by wqueue_done. So one key is never worked on twice at once.
 *
 * The FIFO is fair between namespaces (lib/fairq.h): a key "ns/name" waits
 * in its namespace's line (a key without '/' in the line ""), and
 * wqueue_get takes from the lines that have keys in turn (round robin),
 * FIFO within one. A burst of thousands of keys in one namespace makes a
 * lone key of another wait for at most one key of each busy namespace, not
 * for the burst (kuberay#2646). With one namespace it is the plain FIFO.
 * Each line counts its keys' waits (add to get) for /metrics.
 *
 * Delayed adds wait in a binary min-heap ordered by ready time (then by
 * arrival, so equal times stay FIFO); each item knows its heap index, so a
 * second add_after with an earlier time moves the key up in place. One
 * uv_timer is armed for the top of the heap and moves due keys to the FIFO.
 *
 * The rate limiter is client-go's default controller limiter: the larger of
 * a per-key exponential backoff (base * 2^failures, capped) and the wait for
 * a token from one bucket shared by all keys. The bucket behaves like Go's
 * rate.Limiter: tokens are kept in thousandths so the arithmetic is exact,
 * and a request with no token left reserves a future one by letting the
 * count go negative; its delay is the time until that token would exist.
 *
 * A consumer either calls wqueue_get itself or sets a ready callback, which
 * a uv_idle handle calls from the loop while keys wait and the consumer
 * keeps taking them. An item lives while it is queued, processing, delayed
 * or has failures counted; after that it is freed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/wqueue.h"
#include "lib/fairq.h"
#include "lib/hmap.h"
#include "lib/xmalloc.h"

#define DIRTY 0x1
#define PROCESSING 0x2

#define NOT_IN_HEAP SIZE_MAX
#define MILLI 1000		/* token fractions */

struct item {
	struct fairq_link link;	/* while queued */
	struct fairq_line *line;	/* its namespace's */
	int flags;
	uint64_t added_at;	/* when it last became DIRTY */
	size_t heap_idx;	/* NOT_IN_HEAP unless delayed */
	uint64_t ready_at;
	uint64_t seq;		/* ties in the heap go by arrival */
	unsigned failures;
	uint64_t hold_until;	/* not handed out before (wqueue_done_hold) */
	char key[];
};

/* What a namespace's waits added up to (its line's data). */
struct waits {
	uint64_t sum, max;	/* milliseconds */
};

struct wqueue {
	uv_loop_t *loop;
	wqueue_clock_fn clock;
	void *clock_arg;
	hmap *items;
	fairq *fifo;		/* a line per namespace */
	size_t processing;

	struct item **heap;
	size_t nheap, heapcap;
	uint64_t seq;
	uv_timer_t timer;

	wqueue_ready_cb ready_cb;
	void *ready_arg;
	uv_idle_t idle;
	uint64_t gets;

	uint64_t base_ms, max_ms;
	unsigned qps, burst;
	int64_t tokens;		/* thousandths; negative: reserved ahead */
	uint64_t last;		/* when tokens was brought up to date */

	int shutting_down;
	int closing;
	int open_handles;

	uint64_t adds, retries, max_wait;
};

static void arm_timer(wqueue *);
static void arm_ready(wqueue *);

static uint64_t
now(const wqueue *q)
{
	if (q->clock != NULL)
		return q->clock(q->clock_arg);
	return uv_now(q->loop);
}

static struct item *
find(const wqueue *q, const char *key)
{
	return hmap_get(q->items, key);
}

/* The line of key's namespace (its part before '/'), made if new. */
static struct fairq_line *
line_of(wqueue *q, const char *key)
{
	const char *slash = strchr(key, '/');
	size_t n = slash != NULL ? (size_t)(slash - key) : 0;
	struct fairq_line *l;
	char ns[256];

	if (n >= sizeof ns)
		n = sizeof ns - 1;
	memcpy(ns, key, n);
	ns[n] = '\0';
	l = fairq_line(q->fifo, ns);
	if (l->data == NULL)
		l->data = xcalloc(1, sizeof(struct waits));
	return l;
}

/* Find key's item, creating an idle one if the queue does not know it. */
static struct item *
make(wqueue *q, const char *key)
{
	struct item *it = find(q, key);
	size_t n;

	if (it != NULL)
		return it;
	n = strlen(key);
	it = xcalloc(1, sizeof *it + n + 1);
	memcpy(it->key, key, n + 1);
	it->line = line_of(q, key);
	it->heap_idx = NOT_IN_HEAP;
	hmap_put(q->items, it->key, it);
	return it;
}

/* Free an item nothing refers to any more (a hold still to come is a
   reference: the next add must see it). */
static void
release(wqueue *q, struct item *it)
{
	if (it->flags != 0 || it->heap_idx != NOT_IN_HEAP || it->failures != 0)
		return;
	if (it->hold_until > now(q))
		return;
	hmap_del(q->items, it->key);
	free(it);
}

static void
push_fifo(wqueue *q, struct item *it)
{
	fairq_push(q->fifo, it->line, &it->link);
	arm_ready(q);
}

static void delay_item(wqueue *, struct item *, uint64_t at);

/* Mark an item DIRTY, and queue it unless it is being processed; an item
   on hold waits in the heap until its hold ends. */
static void
add_item(wqueue *q, struct item *it)
{
	if (it->flags & DIRTY)
		return;
	if (it->hold_until != 0) {
		if (it->hold_until > now(q) && !(it->flags & PROCESSING)) {
			delay_item(q, it, it->hold_until);
			return;
		}
		if (it->hold_until <= now(q))
			it->hold_until = 0;
	}
	it->flags |= DIRTY;
	it->added_at = now(q);
	q->adds++;
	if (!(it->flags & PROCESSING))
		push_fifo(q, it);
}

static int
before(const struct item *a, const struct item *b)
{
	if (a->ready_at != b->ready_at)
		return a->ready_at < b->ready_at;
	return a->seq < b->seq;
}

static void
heap_set(wqueue *q, size_t i, struct item *it)
{
	q->heap[i] = it;
	it->heap_idx = i;
}

static void
sift_up(wqueue *q, size_t i)
{
	struct item *it = q->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(it, q->heap[parent]))
			break;
		heap_set(q, i, q->heap[parent]);
		i = parent;
	}
	heap_set(q, i, it);
}

static void
sift_down(wqueue *q, size_t i)
{
	struct item *it = q->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= q->nheap)
			break;
		if (child + 1 < q->nheap &&
		    before(q->heap[child + 1], q->heap[child]))
			child++;
		if (!before(q->heap[child], it))
			break;
		heap_set(q, i, q->heap[child]);
		i = child;
	}
	heap_set(q, i, it);
}

static void
heap_push(wqueue *q, struct item *it)
{
	XGROW(q->heap, q->heapcap, q->nheap + 1);
	heap_set(q, q->nheap++, it);
	sift_up(q, q->nheap - 1);
}

static struct item *
heap_pop(wqueue *q)
{
	struct item *top = q->heap[0];

	q->nheap--;
	if (q->nheap > 0) {
		heap_set(q, 0, q->heap[q->nheap]);
		sift_down(q, 0);
	}
	top->heap_idx = NOT_IN_HEAP;
	return top;
}

static void
timer_fired(uv_timer_t *t)
{
	wqueue_poll(t->data);
}

/* Point the timer at the earliest delayed key, or stop it. */
static void
arm_timer(wqueue *q)
{
	uint64_t t, at;

	if (q->closing)
		return;
	if (q->nheap == 0) {
		uv_timer_stop(&q->timer);
		return;
	}
	t = now(q);
	at = q->heap[0]->ready_at;
	uv_timer_start(&q->timer, timer_fired, at > t ? at - t : 0, 0);
}

/*
 * Call the ready callback once; keep calling it on later iterations only
 * while keys are left and it made progress, so a consumer that is full does
 * not make the loop spin: its next wqueue_done or a new add wakes it.
 */
static void
ready_fire(uv_idle_t *h)
{
	wqueue *q = h->data;
	uint64_t gets = q->gets;

	uv_idle_stop(h);
	if (q->ready_cb == NULL || q->shutting_down || fairq_len(q->fifo) == 0)
		return;
	q->ready_cb(q, q->ready_arg);
	if (q->closing)
		return;
	if (q->gets != gets)
		arm_ready(q);
}

static void
arm_ready(wqueue *q)
{
	if (q->ready_cb == NULL || q->shutting_down || q->closing ||
	    fairq_len(q->fifo) == 0 || uv_is_active((uv_handle_t *)&q->idle))
		return;
	uv_idle_start(&q->idle, ready_fire);
}

wqueue *
wqueue_new(uv_loop_t *loop)
{
	return wqueue_new_clock(loop, NULL, NULL);
}

wqueue *
wqueue_new_clock(uv_loop_t *loop, wqueue_clock_fn now_fn, void *arg)
{
	wqueue *q = xcalloc(1, sizeof *q);

	q->loop = loop;
	q->clock = now_fn;
	q->clock_arg = arg;
	q->items = hmap_new();
	q->fifo = fairq_new();
	uv_timer_init(loop, &q->timer);
	q->timer.data = q;
	uv_idle_init(loop, &q->idle);
	q->idle.data = q;
	q->open_handles = 2;
	wqueue_set_backoff(q, 5, 1000 * 1000);
	wqueue_set_bucket(q, 10, 100);
	return q;
}

static int
free_item(const char *key, void *value, void *arg)
{
	free(value);
	return 0;
}

static void
handle_closed(uv_handle_t *h)
{
	wqueue *q = h->data;

	if (--q->open_handles == 0)
		free(q);
}

void
wqueue_free(wqueue *q)
{
	if (q == NULL)
		return;
	wqueue_shutdown(q);
	q->closing = 1;
	hmap_each(q->items, free_item, NULL);
	hmap_free(q->items);
	q->items = NULL;
	fairq_free(q->fifo, free);
	q->fifo = NULL;
	free(q->heap);
	q->heap = NULL;
	uv_close((uv_handle_t *)&q->timer, handle_closed);
	uv_close((uv_handle_t *)&q->idle, handle_closed);
}

void
wqueue_add(wqueue *q, const char *key)
{
	if (q->shutting_down)
		return;
	add_item(q, make(q, key));
}

const char *
wqueue_get(wqueue *q)
{
	struct fairq_link *k = q->fifo != NULL ? fairq_pop(q->fifo) : NULL;
	struct item *it;
	struct waits *w;
	uint64_t t, wait;

	if (k == NULL)
		return NULL;
	it = FAIRQ_ITEM(k, struct item, link);
	it->flags = (it->flags & ~DIRTY) | PROCESSING;
	q->processing++;
	q->gets++;
	t = now(q);
	wait = t > it->added_at ? t - it->added_at : 0;
	if (wait > q->max_wait)
		q->max_wait = wait;
	w = it->line->data;
	w->sum += wait;
	if (wait > w->max)
		w->max = wait;
	return it->key;
}

void
wqueue_done(wqueue *q, const char *key)
{
	wqueue_done_hold(q, key, 0);
}

void
wqueue_done_hold(wqueue *q, const char *key, uint64_t hold_ms)
{
	struct item *it = find(q, key);

	if (it == NULL || !(it->flags & PROCESSING))
		return;
	it->flags &= ~PROCESSING;
	q->processing--;
	if (hold_ms > 0) {
		/* The loop's clock stood still through the long run that
		   asks for the hold: bring it up to date first. */
		if (q->clock == NULL)
			uv_update_time(q->loop);
		it->hold_until = now(q) + hold_ms;
	}
	if ((it->flags & DIRTY) && hold_ms > 0) {
		/* Added while processed: after the hold. */
		it->flags &= ~DIRTY;
		delay_item(q, it, it->hold_until);
	} else if (it->flags & DIRTY)
		push_fifo(q, it);
	else
		release(q, it);
	arm_ready(q);
}

size_t
wqueue_len(const wqueue *q)
{
	return fairq_len(q->fifo);
}

void
wqueue_set_ready_cb(wqueue *q, wqueue_ready_cb cb, void *arg)
{
	q->ready_cb = cb;
	q->ready_arg = arg;
	if (cb == NULL)
		uv_idle_stop(&q->idle);
	else
		arm_ready(q);
}

void
wqueue_add_after(wqueue *q, const char *key, uint64_t delay_ms)
{
	struct item *it;
	uint64_t t, at;

	if (q->shutting_down)
		return;
	if (delay_ms == 0) {
		wqueue_add(q, key);
		return;
	}
	it = make(q, key);
	t = now(q);
	at = delay_ms > UINT64_MAX - t ? UINT64_MAX : t + delay_ms;
	delay_item(q, it, at);
}

/* Put it in the heap for time at (a key already there for an earlier
   time keeps it). */
static void
delay_item(wqueue *q, struct item *it, uint64_t at)
{
	if (it->heap_idx != NOT_IN_HEAP) {
		if (at >= it->ready_at)
			return;
		it->ready_at = at;
		it->seq = q->seq++;
		sift_up(q, it->heap_idx);
	} else {
		it->ready_at = at;
		it->seq = q->seq++;
		heap_push(q, it);
	}
	arm_timer(q);
}

size_t
wqueue_poll(wqueue *q)
{
	uint64_t t = now(q);
	size_t n = 0;

	while (q->nheap > 0 && q->heap[0]->ready_at <= t) {
		add_item(q, heap_pop(q));
		n++;
	}
	arm_timer(q);
	return n;
}

/* The per-key backoff after failures failures, without overflowing. */
static uint64_t
backoff(const wqueue *q, unsigned failures)
{
	if (q->base_ms == 0)
		return 0;
	if (failures >= 64 || q->base_ms > (UINT64_MAX >> failures))
		return q->max_ms;
	if ((q->base_ms << failures) > q->max_ms)
		return q->max_ms;
	return q->base_ms << failures;
}

/* Take a token from the bucket and return how long until it exists. */
static uint64_t
reserve(wqueue *q)
{
	int64_t full = (int64_t)q->burst * MILLI, need;
	uint64_t t, elapsed;

	if (q->qps == 0)
		return 0;
	t = now(q);
	if (t > q->last) {
		elapsed = t - q->last;
		need = full - q->tokens;
		if (need <= 0 || elapsed >= (uint64_t)need / q->qps + 1)
			q->tokens = full;
		else
			q->tokens += (int64_t)(elapsed * q->qps);
		if (q->tokens > full)
			q->tokens = full;
		q->last = t;
	}
	q->tokens -= MILLI;
	if (q->tokens >= 0)
		return 0;
	return ((uint64_t)-q->tokens + q->qps - 1) / q->qps;
}

uint64_t
wqueue_when(wqueue *q, const char *key)
{
	struct item *it = make(q, key);
	uint64_t item_ms, bucket_ms;

	item_ms = backoff(q, it->failures);
	if (it->failures < UINT_MAX)
		it->failures++;
	bucket_ms = reserve(q);
	return item_ms > bucket_ms ? item_ms : bucket_ms;
}

void
wqueue_add_rate_limited(wqueue *q, const char *key)
{
	if (q->shutting_down)
		return;
	q->retries++;
	wqueue_add_after(q, key, wqueue_when(q, key));
}

void
wqueue_forget(wqueue *q, const char *key)
{
	struct item *it = find(q, key);

	if (it == NULL)
		return;
	it->failures = 0;
	release(q, it);
}

unsigned
wqueue_num_requeues(const wqueue *q, const char *key)
{
	struct item *it = find(q, key);

	return it != NULL ? it->failures : 0;
}

void
wqueue_set_backoff(wqueue *q, uint64_t base_ms, uint64_t max_ms)
{
	q->base_ms = base_ms;
	q->max_ms = max_ms;
}

void
wqueue_set_bucket(wqueue *q, unsigned qps, unsigned burst)
{
	q->qps = qps;
	q->burst = burst > 0 ? burst : 1;
	q->tokens = (int64_t)q->burst * MILLI;
	q->last = now(q);
}

void
wqueue_shutdown(wqueue *q)
{
	struct item *it;

	q->shutting_down = 1;
	uv_timer_stop(&q->timer);
	uv_idle_stop(&q->idle);
	while (q->nheap > 0) {
		it = heap_pop(q);
		release(q, it);
	}
}

int
wqueue_shutting_down(const wqueue *q)
{
	return q->shutting_down;
}

/* Bring *oldest down to the oldest add among line's keys. */
static void
oldest_in(const struct fairq_line *l, void *arg)
{
	uint64_t *oldest = arg;
	const struct fairq_link *k;

	for (k = l->head; k != NULL; k = k->next) {
		const struct item *it = FAIRQ_ITEM(k, const struct item, link);

		if (it->added_at < *oldest)
			*oldest = it->added_at;
	}
}

void
wqueue_get_stats(const wqueue *q, struct wqueue_stats *st)
{
	uint64_t t = now(q), oldest = t;

	fairq_each_line(q->fifo, oldest_in, &oldest);
	st->adds = q->adds;
	st->retries = q->retries;
	st->depth = fairq_len(q->fifo);
	st->delayed = q->nheap;
	st->processing = q->processing;
	st->max_wait_ms = q->max_wait;
	st->oldest_wait_ms = t - oldest;
}

struct each_flow {
	wqueue_flow_fn fn;
	void *arg;
};

static void
call_flow(const struct fairq_line *l, void *arg)
{
	const struct waits *w = l->data;
	struct each_flow *e = arg;
	struct wqueue_flow_stats st;

	st.ns = l->name;
	st.depth = l->len;
	st.gets = l->served;
	st.wait_sum_ms = w->sum;
	st.wait_max_ms = w->max;
	e->fn(&st, e->arg);
}

void
wqueue_each_flow(const wqueue *q, wqueue_flow_fn fn, void *arg)
{
	struct each_flow e = { fn, arg };

	fairq_each_line(q->fifo, call_flow, &e);
}
