/*
 * How late the event loop runs: a timer due every 100 ms measures how much
 * after its time it fires. /metrics has the lateness as a histogram
 * (volray_loop_lag_seconds), the worst since start and a count of turns
 * over 100 ms; a turn over 100 ms late is logged with its length (at most
 * one line every 10 s, with how many more there were), so a stall can be
 * matched with the log lines around it. A loop that stays responsive
 * keeps all of them near zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "api/looplag.h"
#include "lib/log.h"
#include "lib/metrics.h"

#define TICK_MS		100
#define SLOW_MS		100
#define WARN_EVERY_MS	10000

/* Upper bounds of the histogram's buckets, in milliseconds. */
static const unsigned bounds_ms[] = { 1, 5, 10, 25, 50, 100, 250, 500,
	1000, 2500, 5000, 10000 };
#define NBOUNDS	(sizeof bounds_ms / sizeof *bounds_ms)

static uv_timer_t timer;
static uint64_t due_ms, worst_ms, slow_turns, last_warn_ms, unsaid;
static uint64_t buckets[NBOUNDS], count, sum_ms;

static void
on_tick(uv_timer_t *h)
{
	uint64_t now, late;
	size_t i;

	uv_update_time(h->loop);
	now = uv_now(h->loop);
	late = now > due_ms ? now - due_ms : 0;
	if (late > worst_ms)
		worst_ms = late;
	for (i = 0; i < NBOUNDS; i++)
		if (late <= bounds_ms[i])
			buckets[i]++;
	count++;
	sum_ms += late;
	if (late > SLOW_MS) {
		slow_turns++;
		if (last_warn_ms == 0 || now - last_warn_ms >= WARN_EVERY_MS) {
			log_warn("loop: %llu ms late (over %d ms%s)",
			    (unsigned long long)late, SLOW_MS, unsaid > 0 ?
			    ", and more since the last such line" : "");
			last_warn_ms = now;
			unsaid = 0;
		} else
			unsaid++;
	}
	due_ms = now + TICK_MS;
}

static void
print_metrics(FILE *f, void *arg)
{
	size_t i;

	(void)arg;
	fprintf(f, "# TYPE volray_loop_lag_seconds histogram\n");
	for (i = 0; i < NBOUNDS; i++)
		fprintf(f, "volray_loop_lag_seconds_bucket{le=\"%g\"} %llu\n",
		    bounds_ms[i] / 1000.0, (unsigned long long)buckets[i]);
	fprintf(f, "volray_loop_lag_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "volray_loop_lag_seconds_sum %.3f\n"
	    "volray_loop_lag_seconds_count %llu\n",
	    (unsigned long long)count, (double)sum_ms / 1000,
	    (unsigned long long)count);
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
	/* The loop's clock stood still through the start-up (a remote
	   API's CRD checks): the start-up is not lag. */
	uv_update_time(loop);
	due_ms = uv_now(loop) + TICK_MS;
	uv_timer_start(&timer, on_tick, TICK_MS, TICK_MS);
	metrics_add_source(print_metrics, NULL);
}
