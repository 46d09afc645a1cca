/*
 * The registry of metric sources (metrics.h): a fixed table of print
 * functions, filled at start-up on the loop thread and read at scrape time.
 */
#include <stdio.h>

#include "lib/log.h"
#include "lib/metrics.h"

#define MAX_SOURCES 16

struct source {
	void (*fn)(FILE *, void *);
	void *arg;
};
static struct source sources[MAX_SOURCES];
static int nsources;

void
metrics_add_source(void (*fn)(FILE *, void *), void *arg)
{
	if (nsources == MAX_SOURCES)
		fatal("metrics: more than %d sources", MAX_SOURCES);
	sources[nsources].fn = fn;
	sources[nsources++].arg = arg;
}

void
metrics_print_sources(FILE *f)
{
	int i;

	for (i = 0; i < nsources; i++)
		sources[i].fn(f, sources[i].arg);
}
