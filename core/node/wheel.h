/*
 * A hashed timer wheel: one libuv timer drives any number of timeouts
 * (every simulated container's end, every heartbeat, every back-off and
 * grace period) at a 10 ms resolution. Adding and cancelling are O(1);
 * each tick visits one slot. The timer runs only while something is due.
 */
#ifndef VOLRAY_WHEEL_H
#define VOLRAY_WHEEL_H

#include <stdint.h>
#include <uv.h>

typedef struct wheel wheel;
typedef struct wheel_timer wheel_timer;

typedef void (*wheel_cb)(wheel_timer *);

/* Embed one in whatever needs a timeout; zero it before first use. */
struct wheel_timer {
	wheel_cb	 cb;
	void		*data;
	uint64_t	 due;		/* tick */
	wheel_timer	*prev, *next;
	int		 armed;
};

#define WHEEL_TICK_MS 10

wheel *wheel_new(uv_loop_t *);
void wheel_free(wheel *);
/* Run cb after ms milliseconds (re-arms an armed timer). */
void wheel_add(wheel *, wheel_timer *, uint64_t ms, wheel_cb cb, void *data);
void wheel_cancel(wheel *, wheel_timer *);
/* Number of armed timers. */
size_t wheel_count(const wheel *);

#endif
