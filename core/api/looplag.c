/*
 * How late the event loop runs: a timer due every 100 ms measures how much
 * after its time it fires. The worst lateness since start and a count of
 * turns over 100 ms go to /metrics; a stall over a second is logged with
 * its length, so it can be matched with the log lines around it. A loop
 * that stays responsive keeps both near zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "api/looplag.h"
#include "lib/log.h"
#include "lib/metrics.h"

#define TICK_MS		100
#define SLOW_MS		100
#define STALL_MS	1000

static uv_timer_t timer;
static uint64_t due_ms, worst_ms, slow_turns;

static void
on_tick(uv_timer_t *h)
{
	uint64_t now, late;

	uv_update_time(h->loop);
	now = uv_now(h->loop);
	late = now > due_ms ? now - due_ms : 0;
	if (late > worst_ms)
		worst_ms = late;
	if (late > SLOW_MS)
		slow_turns++;
	if (late > STALL_MS)
		log_warn("loop: stalled for %llu ms", (unsigned long long)late);
	due_ms = now + TICK_MS;
}

static void
print_metrics(FILE *f, void *arg)
{
	(void)arg;
	fprintf(f, "# TYPE volray_loop_lag_max_seconds gauge\n"
	    "volray_loop_lag_max_seconds %.3f\n"
	    "# TYPE volray_loop_slow_turns_total counter\n"
	    "volray_loop_slow_turns_total %llu\n",
	    (double)worst_ms / 1000, (unsigned long long)slow_turns);
}

void
looplag_start(uv_loop_t *loop)
{
	uv_timer_init(loop, &timer);
	uv_unref((uv_handle_t *)&timer);
	due_ms = uv_now(loop) + TICK_MS;
	uv_timer_start(&timer, on_tick, TICK_MS, TICK_MS);
	metrics_add_source(print_metrics, NULL);
}
