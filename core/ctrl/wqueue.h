/*
 * Work queue for controllers, with client-go's workqueue semantics on one
 * libuv loop: a key is queued once however often it is added, is never handed
 * out twice at the same time, can be added after a delay, and can be added
 * through a rate limiter (per-key exponential backoff combined with an
 * overall token bucket, the larger delay wins). The loop thread owns the
 * queue; there are no locks.
 */
#ifndef VOLRAY_WQUEUE_H
#define VOLRAY_WQUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct wqueue wqueue;

/* A clock in milliseconds; tests use a fake one to check delays exactly. */
typedef uint64_t (*wqueue_clock_fn)(void *arg);
/* Called from the loop when keys are waiting; drain some with wqueue_get. */
typedef void (*wqueue_ready_cb)(wqueue *, void *arg);

struct wqueue_stats {
	uint64_t adds;           /* keys queued (duplicates not counted) */
	uint64_t retries;        /* wqueue_add_rate_limited calls */
	size_t depth;            /* waiting to be handed out */
	size_t delayed;          /* waiting for their delay to pass */
	size_t processing;       /* handed out, not yet done */
	uint64_t max_wait_ms;    /* longest add-to-get wait so far */
	uint64_t oldest_wait_ms; /* how long the oldest waiting key has waited */
};

/* A queue on loop whose delays follow uv_now(loop). */
wqueue *wqueue_new(uv_loop_t *);
/* The same, with delays measured by now_fn(arg) instead. */
wqueue *wqueue_new_clock(uv_loop_t *, wqueue_clock_fn now_fn, void *arg);
/*
 * Close the queue's handles and free it once they are closed (the loop must
 * run once more). Keys handed out by wqueue_get become invalid at once.
 */
void wqueue_free(wqueue *);

/* Queue a copy of key unless it is already waiting; no-op after shutdown. */
void wqueue_add(wqueue *, const char *key);
/*
 * The next key, or NULL when none is waiting: namespaces take turns (the
 * part of a key before '/'; keys without one are the namespace ""), FIFO
 * within a namespace, so that a burst in one namespace does not hold up
 * the keys of another (kuberay#2646). The key is
 * marked processing (valid until wqueue_done) and is not handed out again
 * before wqueue_done, even if it is added meanwhile.
 */
const char *wqueue_get(wqueue *);
/* Finish processing key; if it was added meanwhile, queue it again. */
void wqueue_done(wqueue *, const char *key);
/*
 * The same, and key is not handed out again before hold_ms have passed:
 * an add meanwhile (or before it) waits for the end of the hold. A
 * controller holds a key whose work took long, so that a key that every
 * change of thousands of objects brings back cannot take the whole loop.
 */
void wqueue_done_hold(wqueue *, const char *key, uint64_t hold_ms);
/* Keys waiting to be handed out (not counting delayed ones). */
size_t wqueue_len(const wqueue *);

/*
 * Call cb(q, arg) from the loop, never from inside wqueue_add, whenever keys
 * are waiting. It is called again on the next loop iteration while keys are
 * left and the last call took at least one; a call that takes none waits for
 * the next add or done. NULL turns it off.
 */
void wqueue_set_ready_cb(wqueue *, wqueue_ready_cb cb, void *arg);

/*
 * Add key once delay_ms has passed (0: now). A key already waiting for a
 * later time is moved to the earlier one; an earlier wait is kept.
 */
void wqueue_add_after(wqueue *, const char *key, uint64_t delay_ms);
/*
 * Move every delayed key whose time has come onto the queue and return how
 * many moved. A timer does this; tests with a fake clock call it by hand.
 */
size_t wqueue_poll(wqueue *);

/* Add key after the rate limiter's delay for it (wqueue_when). */
void wqueue_add_rate_limited(wqueue *, const char *key);
/*
 * The rate limiter's delay for key, counting one more failure of key and
 * taking one token: the larger of the per-key backoff, base * 2^failures up
 * to max, and the wait for a token from the overall bucket.
 */
uint64_t wqueue_when(wqueue *, const char *key);
/* Forget key's failures: its next backoff starts from base again. */
void wqueue_forget(wqueue *, const char *key);
/* How many failures of key the rate limiter has counted. */
unsigned wqueue_num_requeues(const wqueue *, const char *key);
/* Per-key backoff: base_ms * 2^failures, capped at max_ms (5 ms, 1000 s). */
void wqueue_set_backoff(wqueue *, uint64_t base_ms, uint64_t max_ms);
/* Overall bucket: qps tokens a second up to burst (10, 100); qps 0: none. */
void wqueue_set_bucket(wqueue *, unsigned qps, unsigned burst);

/*
 * Stop taking keys: adds are ignored, delayed keys are dropped and the ready
 * callback stops; wqueue_get still hands out the waiting keys, then NULL.
 */
void wqueue_shutdown(wqueue *);
int wqueue_shutting_down(const wqueue *);

void wqueue_get_stats(const wqueue *, struct wqueue_stats *);

/* A namespace's share of the queue, counted since the queue was made. */
struct wqueue_flow_stats {
	const char *ns;          /* "" for keys without a namespace */
	size_t depth;            /* its keys waiting to be handed out */
	uint64_t gets;           /* its keys handed out */
	uint64_t wait_sum_ms;    /* their add-to-get waits, summed */
	uint64_t wait_max_ms;    /* the longest of them */
};
typedef void (*wqueue_flow_fn)(const struct wqueue_flow_stats *, void *arg);
/* Call fn for each namespace the queue has seen a key of. */
void wqueue_each_flow(const wqueue *, wqueue_flow_fn fn, void *arg);

#endif
