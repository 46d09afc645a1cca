/*
 * The registry of metric sources: a subsystem (controllers, scheduler,
 * node runtimes, the loop's lag) registers a function that prints its own
 * series in the Prometheus text format, and the API's /metrics prints them
 * all at scrape time. It lives here, below every subsystem, so that none
 * of them reaches up into api/ to be scraped.
 */
#ifndef VOLRAY_METRICS_H
#define VOLRAY_METRICS_H

#include <stdio.h>

/* A subsystem that prints its own series at scrape time. */
void metrics_add_source(void (*fn)(FILE *, void *), void *arg);
/* Print every registered source's series to f, in registration order. */
void metrics_print_sources(FILE *f);

#endif
