/*
 * Prometheus metrics: request counts and latency histograms by verb,
 * resource and code, plus gauges read from the store, log and watch hub at
 * scrape time.
 */
#ifndef VOLRAY_METRICS_H
#define VOLRAY_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "api/watch.h"
#include "store/store.h"

void metrics_request(const char *verb, const char *resource, int code,
    uint64_t usec);
/* A subsystem that prints its own series at scrape time. */
void metrics_add_source(void (*fn)(FILE *, void *), void *arg);
/* The whole exposition text (malloc'd). */
char *metrics_render(store *, watch_hub *, int connections);

#endif
