/*
 * Unit tests for the CRI log format: RFC3339Nano out (trailing zeros
 * trimmed, as Go's time.RFC3339Nano) and in (fractions, offsets), and the
 * parse of records, full, partial and empty.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/crilog.h"

static void
check_format(int64_t ns, const char *want)
{
	char out[CRILOG_TIME_MAX];

	CHECK(crilog_time_format(ns, out) == strlen(want));
	CHECK_STR(out, want);
}

int
main(void)
{
	const int64_t t = 1796133600LL * 1000000000;	/* 2026-12-01T14:00:00Z */
	struct crilog_rec r;
	int64_t ns;
	const char *line;

	check_format(t, "2026-12-01T14:00:00Z");
	check_format(t + 123456789, "2026-12-01T14:00:00.123456789Z");
	check_format(t + 500000000, "2026-12-01T14:00:00.5Z");
	check_format(t + 1000, "2026-12-01T14:00:00.000001Z");

	CHECK(crilog_time_parse("2026-12-01T14:00:00Z", 20, &ns) == 0 &&
	    ns == t);
	CHECK(crilog_time_parse("2026-12-01T14:00:00.5Z", 22, &ns) == 0 &&
	    ns == t + 500000000);
	CHECK(crilog_time_parse("2026-12-01T16:00:00.000000001+02:00", 35,
	    &ns) == 0 && ns == t + 1);
	CHECK(crilog_time_parse("2026-12-01 14:00:00Z", 20, &ns) == -1);
	CHECK(crilog_time_parse("2026-12-01T14:00:00", 19, &ns) == -1);
	CHECK(crilog_time_parse("2026-13-01T14:00:00Z", 20, &ns) == -1);

	line = "2026-12-01T14:00:00.5Z stderr F hello world";
	CHECK(crilog_parse(line, strlen(line), &r) == 0);
	CHECK(r.ns == t + 500000000 && r.stderr_stream && !r.partial);
	CHECK(r.len == 11 && memcmp(r.text, "hello world", 11) == 0);
	line = "2026-12-01T14:00:00Z stdout P part";
	CHECK(crilog_parse(line, strlen(line), &r) == 0);
	CHECK(!r.stderr_stream && r.partial && r.len == 4);
	line = "2026-12-01T14:00:00Z stdout F ";
	CHECK(crilog_parse(line, strlen(line), &r) == 0 && r.len == 0);
	line = "2026-12-01T14:00:00Z stdout F";
	CHECK(crilog_parse(line, strlen(line), &r) == 0 && r.len == 0);
	line = "2026-12-01T14:00:00Z stdin F x";
	CHECK(crilog_parse(line, strlen(line), &r) == -1);
	line = "2026-12-01T14:00:00Z stdout X x";
	CHECK(crilog_parse(line, strlen(line), &r) == -1);
	line = "hello from an old log";
	CHECK(crilog_parse(line, strlen(line), &r) == -1);
	return check_result("test-crilog");
}
