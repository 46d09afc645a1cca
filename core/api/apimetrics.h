/*
 * Prometheus metrics: request counts and latency histograms by verb,
 * resource and code, plus gauges read from the store, log and watch hub at
 * scrape time, with every registered source's series (lib/metrics.h).
 */
#ifndef VOLRAY_APIMETRICS_H
#define VOLRAY_APIMETRICS_H

#include <stdint.h>
#include <stdio.h>

#include "api/watch.h"
#include "store/store.h"

void apimetrics_request(const char *verb, const char *resource, int code,
    uint64_t usec);
/* The whole exposition text (malloc'd). */
char *apimetrics_render(store *, watch_hub *, int connections);

#endif
