/* The event loop's lateness, measured by a 100 ms timer (looplag.c). */
#ifndef VOLRAY_LOOPLAG_H
#define VOLRAY_LOOPLAG_H

#include <uv.h>

void looplag_start(uv_loop_t *);

#endif
