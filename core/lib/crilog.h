/*
 * The CRI container log format, as containerd writes it and the kubelet
 * reads it: one record per line, "TIMESTAMP STREAM TAG TEXT\n", with
 * TIMESTAMP in Go's RFC3339Nano (UTC, trailing zeros of the fraction
 * trimmed), STREAM "stdout" or "stderr", TAG "F" for a full line and "P"
 * for part of a longer one (TEXT is then continued by the next record).
 * The shim writes it; pods/log reads it. Nothing here allocates or logs,
 * so the shim links this file alone.
 */
#ifndef VOLRAY_CRILOG_H
#define VOLRAY_CRILOG_H

#include <stddef.h>
#include <stdint.h>

#define CRILOG_TIME_MAX 40	/* "2006-01-02T15:04:05.999999999Z" + NUL */
#define CRILOG_LINE_MAX 16384	/* longer lines are split into P records */

/* Nanoseconds since the epoch as RFC3339Nano into out; its length. */
size_t crilog_time_format(int64_t ns, char out[CRILOG_TIME_MAX]);
/*
 * RFC 3339 ("2006-01-02T15:04:05Z", a fraction and an offset allowed) of
 * len bytes into nanoseconds since the epoch; -1 if it is not one.
 */
int crilog_time_parse(const char *s, size_t len, int64_t *ns);
/* The wall clock in nanoseconds since the epoch. */
int64_t crilog_now(void);

struct crilog_rec {
	int64_t ns;			/* its timestamp */
	int stderr_stream;		/* 1 for stderr */
	int partial;			/* tag P: no newline after text */
	const char *text;		/* into the line given */
	size_t len;
};

/* One record (a line without its '\n'); -1 if it is not CRI. */
int crilog_parse(const char *line, size_t len, struct crilog_rec *out);

#endif
