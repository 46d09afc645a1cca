/*
 * Slots are doubly linked lists indexed by due tick modulo the wheel size;
 * a timer further away than one revolution waits in its slot until the
 * tick that is really its own. The libuv timer fires every tick while
 * timers are armed and is stopped when the wheel is empty; after a loop
 * stall, the ticks that were missed are caught up one by one, so nothing
 * fires early and nothing is skipped.
 */
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "node/wheel.h"

#define SLOTS 1024

struct wheel {
	uv_loop_t	*loop;
	uv_timer_t	 timer;
	wheel_timer	*slot[SLOTS];
	uint64_t	 now;		/* last tick processed */
	uint64_t	 t0;		/* loop time of tick 0, ms */
	size_t		 count;
	int		 running;
};

static uint64_t
tick_now(wheel *w)
{
	return (uv_now(w->loop) - w->t0) / WHEEL_TICK_MS;
}

static void on_tick(uv_timer_t *);

wheel *
wheel_new(uv_loop_t *loop)
{
	wheel *w = xcalloc(1, sizeof *w);

	w->loop = loop;
	uv_timer_init(loop, &w->timer);
	w->timer.data = w;
	w->t0 = uv_now(loop);
	return w;
}

void
wheel_free(wheel *w)
{
	if (w == NULL)
		return;
	uv_timer_stop(&w->timer);
	uv_close((uv_handle_t *)&w->timer, (uv_close_cb)free);
}

static void
unlink_timer(wheel *w, wheel_timer *t)
{
	wheel_timer **head = &w->slot[t->due % SLOTS];

	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		*head = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	t->prev = t->next = NULL;
	t->armed = 0;
	w->count--;
}

void
wheel_cancel(wheel *w, wheel_timer *t)
{
	if (t->armed)
		unlink_timer(w, t);
	if (w->count == 0 && w->running) {
		uv_timer_stop(&w->timer);
		w->running = 0;
	}
}

void
wheel_add(wheel *w, wheel_timer *t, uint64_t ms, wheel_cb cb, void *data)
{
	wheel_timer **head;
	uint64_t ticks = (ms + WHEEL_TICK_MS - 1) / WHEEL_TICK_MS;

	if (t->armed)
		unlink_timer(w, t);
	if (!w->running)
		w->now = tick_now(w);
	t->cb = cb;
	t->data = data;
	/*
	 * From the loop's time, not the last tick processed: a timer set
	 * while the loop stalled (at start-up, say) must not fire early
	 * when the missed ticks are caught up.
	 */
	t->due = tick_now(w) + (ticks > 0 ? ticks : 1);
	head = &w->slot[t->due % SLOTS];
	t->prev = NULL;
	t->next = *head;
	if (*head != NULL)
		(*head)->prev = t;
	*head = t;
	t->armed = 1;
	w->count++;
	if (!w->running) {
		w->running = 1;
		uv_timer_start(&w->timer, on_tick, WHEEL_TICK_MS, WHEEL_TICK_MS);
	}
}

size_t
wheel_count(const wheel *w)
{
	return w->count;
}

/* Fire what is due in every tick up to now; callbacks may add or cancel. */
static void
on_tick(uv_timer_t *h)
{
	wheel *w = h->data;
	uint64_t target = tick_now(w);
	wheel_timer *t, *next;

	while (w->now < target && w->count > 0) {
		w->now++;
		for (t = w->slot[w->now % SLOTS]; t != NULL; t = next) {
			next = t->next;
			if (t->due > w->now)
				continue;
			unlink_timer(w, t);
			t->cb(t);
			/* The callback may have changed this slot. */
			next = w->slot[w->now % SLOTS];
			while (next != NULL && next->due > w->now)
				next = next->next;
		}
	}
	if (w->count == 0) {
		uv_timer_stop(&w->timer);
		w->running = 0;
	}
}
