/*
 * Fuzz target: the CRI container log format (lib/crilog.c), what pods/log
 * reads from files the shim wrote and a crash may have cut. Input: a log
 * file, one record per line. A record that parses has its text inside
 * the line and running to its end; its timestamp, printed in RFC3339Nano
 * and parsed again, is the same instant; and the first field alone, when
 * it parses as a time, gives the record's.
 */
#include <string.h>

#include "fuzz.h"
#include "lib/crilog.h"

static void
one(const char *line, size_t len)
{
	struct crilog_rec r;
	char buf[CRILOG_TIME_MAX];
	int64_t again;
	size_t n;

	if (crilog_parse(line, len, &r) != 0)
		return;
	FUZZ_ASSERT(r.text >= line && r.text <= line + len);
	FUZZ_ASSERT(r.text + r.len == line + len);
	n = crilog_time_format(r.ns, buf);
	FUZZ_ASSERT(n > 0 && n < CRILOG_TIME_MAX && buf[n] == '\0');
	FUZZ_ASSERT(crilog_time_parse(buf, n, &again) == 0);
	FUZZ_ASSERT(again == r.ns);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	fuzz_quiet();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl != NULL ? nl : end;

		one(p, (size_t)(stop - p));
		p = stop + 1;
	}
	return 0;
}
