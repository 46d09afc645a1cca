/*
 * IANA time zones for CronJob's timeZone: the UTC offset a zone has at
 * an instant, read from the system's compiled zone files
 * (/usr/share/zoneinfo, the TZif format of RFC 8536). The transition
 * table of the file is searched for the last transition at or before
 * the instant; Debian's files are "fat" (transitions listed through
 * 2037), so the footer's POSIX rule is not needed for any date a
 * CronJob will meet. Nothing is cached: a CronJob asks once per
 * reconcile, and a zone file is a few kilobytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/tz.h"
#include "lib/xmalloc.h"

#define ZONEINFO	"/usr/share/zoneinfo"
#define MAXFILE		(256 * 1024)

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int64_t
be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* A zone name as IANA spells them: no "..", no leading '/'. */
static int
valid_name(const char *zone)
{
	const char *p;

	if (*zone == '\0' || *zone == '/' || strstr(zone, "..") != NULL ||
	    strlen(zone) > 128)
		return 0;
	for (p = zone; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("/_+-", *p) != NULL))
			return 0;
	return 1;
}

/* Counts of one TZif header (RFC 8536 3.1). */
struct counts {
	uint32_t isut, isstd, leap, time, type, chr;
};

static void
counts_read(const unsigned char *h, struct counts *c)
{
	c->isut = be32(h + 20);
	c->isstd = be32(h + 24);
	c->leap = be32(h + 28);
	c->time = be32(h + 32);
	c->type = be32(h + 36);
	c->chr = be32(h + 40);
}

static size_t
block_size(const struct counts *c, int tsize)
{
	return (size_t)c->time * tsize + c->time + c->type * 6 + c->chr +
	    (size_t)c->leap * (tsize + 4) + c->isstd + c->isut;
}

/* The offset in one data block (v1 with 4-byte times, v2 with 8). */
static int
offset_in(const unsigned char *d, size_t len, const struct counts *c,
    int tsize, int64_t t, int *offset)
{
	const unsigned char *times = d, *idx = d + (size_t)c->time * tsize;
	const unsigned char *types = idx + c->time;
	uint32_t i, type = 0;

	if (block_size(c, tsize) > len || c->type == 0)
		return -EINVAL;
	/* Before the first transition: the first non-DST type, else 0. */
	for (i = 0; i < c->type; i++)
		if (types[i * 6 + 4] == 0) {
			type = i;
			break;
		}
	for (i = 0; i < c->time; i++) {
		int64_t at = tsize == 8 ? be64(times + i * 8) :
		    (int64_t)(int32_t)be32(times + i * 4);

		if (at > t)
			break;
		type = idx[i];
	}
	if (type >= c->type)
		return -EINVAL;
	*offset = (int32_t)be32(types + type * 6);
	return 0;
}

int
tz_offset(const char *zone, int64_t t, int *offset)
{
	char path[512];
	unsigned char *buf;
	struct counts c;
	size_t n, skip;
	FILE *f;
	int rc;

	*offset = 0;
	if (zone == NULL || strcasecmp(zone, "Local") == 0 ||
	    !valid_name(zone))
		return -EINVAL;
	if (strcmp(zone, "UTC") == 0)
		return 0;
	snprintf(path, sizeof path, "%s/%s", ZONEINFO, zone);
	if ((f = fopen(path, "rb")) == NULL)
		return -ENOENT;
	buf = xmalloc(MAXFILE);
	n = fread(buf, 1, MAXFILE, f);
	fclose(f);
	rc = -EINVAL;
	if (n < 44 || memcmp(buf, "TZif", 4) != 0)
		goto out;
	counts_read(buf, &c);
	skip = 44 + block_size(&c, 4);
	if (buf[4] >= '2' && skip + 44 <= n &&
	    memcmp(buf + skip, "TZif", 4) == 0) {
		counts_read(buf + skip, &c);
		rc = offset_in(buf + skip + 44, n - skip - 44, &c, 8, t,
		    offset);
	} else
		rc = offset_in(buf + 44, n - 44, &c, 4, t, offset);
out:
	free(buf);
	return rc;
}
