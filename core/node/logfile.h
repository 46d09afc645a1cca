/*
 * A container's log file read back as the kubelet's ReadLogs does, onto
 * an HTTP request: the API server's pods/log for a pod of a node this
 * process runs, and the node endpoint's /containerLogs for the API
 * server of another machine. The local node's shims write
 * DATA_DIR/pods/NS/NAME/CONTAINER.log (and .previous.log) in the CRI
 * format (lib/crilog.h).
 *
 * tail counts the file's records from the end; since_ns drops records
 * older than that; each record's text is written (a full one with its
 * newline, a partial one without, stdout and stderr interleaved as they
 * were written), prefixed by its timestamp in RFC3339Nano and a space
 * when timestamps is set (only at the start of a line); limit cuts the
 * output, the last record included, at that many bytes. follow goes on
 * with what the file gains, polled every 200 ms, until the pod ends or
 * is gone, the log is rotated (the container restarted) or the limit is
 * reached.
 */
#ifndef VOLRAY_LOGFILE_H
#define VOLRAY_LOGFILE_H

#include <stdint.h>
#include <uv.h>

#include "net/http.h"
#include "store/store.h"

struct logfile_opts {
	int		timestamps;
	int64_t		since_ns;	/* 0: all */
	long long	limit;		/* bytes; -1: no limit */
	long long	tail;		/* records; -1: all */
	int		follow;
};

/* The pod ns/name as src has it now (a store, a client's cache). */
typedef const store_obj *(*logfile_get_fn)(const void *src, const char *ns,
    const char *name);

/*
 * Answer req with the log at path (a missing file is an empty log) of
 * pod, a stored version; with follow, a chunked stream that ends once
 * get(src, ...) says the pod is gone (or another of its name), or it has
 * Succeeded or Failed and the file has nothing more.
 */
void logfile_serve(uv_loop_t *, http_req *, const char *path,
    const struct logfile_opts *, const store_obj *pod, logfile_get_fn get,
    const void *src);

/*
 * The options of a /containerLogs query as the kubelet reads them
 * (sinceSeconds, sinceTime, tailLines, limitBytes, timestamps, follow),
 * already validated by the API server: a malformed one is ignored.
 */
void logfile_opts_query(const char *query, struct logfile_opts *);

#endif
