/*
 * Watch: fan-out of store events to HTTP watch streams. Each resource keeps a
 * bounded ring of recent events so a watch can resume from a
 * resourceVersion (older than the ring -> 410 Expired). A watch may instead
 * start with the current objects as ADDED events (rv "" or "0", or
 * sendInitialEvents), ended, for a watch-list (client-go's streaming list),
 * by a BOOKMARK annotated k8s.io/initial-events-end. An event is encoded
 * once per encoding and the same buffer is queued to every watcher; a
 * watcher whose unsent output passes a byte budget is closed and must
 * re-list, so a slow client cannot grow memory without bound.
 */
#ifndef VOLRAY_WATCH_H
#define VOLRAY_WATCH_H

#include <stdint.h>
#include <uv.h>

#include "lib/selector.h"
#include "net/http.h"
#include "registry/resource.h"
#include "store/store.h"

typedef struct watch_hub watch_hub;

struct watch_opts {
	const resource *r;
	const char *ns;          /* NULL: all namespaces */
	selector *labels;        /* taken over; NULL matches all */
	selector *fields;        /* taken over; NULL matches all */
	uint64_t rv;             /* resume after this revision */
	int initial;             /* send ADDED for current objects first */
	int initial_end;         /* then the initial-events-end bookmark */
	uint64_t min_rev;        /* initial: the state at least this new */
	int bookmarks;           /* allowWatchBookmarks */
	int timeout_s;           /* timeoutSeconds (0: none) */
	int table;               /* encode objects as one-row Tables */
	int table_include;       /* 0 None, 1 Metadata, 2 Object */
};

watch_hub *watch_hub_new(uv_loop_t *, store *);
void watch_hub_free(watch_hub *);
/*
 * Start a watch on req (which the hub then owns and finishes). Answers 410
 * itself when rv is too old; an initial state asked at least as new as a
 * min_rev past the store's is one ERROR event (504 Timeout, "Too large
 * resource version"). Returns 0, or -1 if it answered with an error.
 */
int watch_open(watch_hub *, http_req *, struct watch_opts *);
/* Ring size per resource (tests make it small). */
void watch_set_history(watch_hub *, int events);

struct watch_stats {
	uint64_t watchers;
	uint64_t events_sent;
	uint64_t closed_slow;
	uint64_t expired;
	uint64_t lists;          /* watch-lists: initial-events-end sent */
};
void watch_get_stats(const watch_hub *, struct watch_stats *);

#endif
