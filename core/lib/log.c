/*
 * Logging to stderr. Each line: ISO-8601 UTC time, level, message. Lines are
 * written with one write(2) so concurrent threads never interleave a line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static enum log_level min_level = LOG_INFO;
static const char *names[] = {"debug", "info", "warn", "error"};

void
log_set_level(enum log_level l)
{
	min_level = l;
}

static void
vlog(const char *level, const char *fmt, va_list ap)
{
	char line[4096];
	struct timeval tv;
	struct tm tm;
	int n;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(tv.tv_usec / 1000), level);
	n += vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	(void)!write(2, line, n);
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	va_list ap;

	if (l < min_level)
		return;
	va_start(ap, fmt);
	vlog(names[l], fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal", fmt, ap);
	va_end(ap);
	abort();
}
