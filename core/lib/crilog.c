/*
 * The CRI log format (crilog.h): timestamps in and out of RFC3339Nano,
 * and the parse of one record. Go's RFC3339Nano trims trailing zeros of
 * the fraction (".5Z", or no fraction at all), and the kubelet writes the
 * timestamps of `kubectl logs --timestamps` that way, so we do too.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/crilog.h"

size_t
crilog_time_format(int64_t ns, char out[CRILOG_TIME_MAX])
{
	time_t sec = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;
	size_t n;
	int digits = 9;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	gmtime_r(&sec, &tm);
	n = strftime(out, CRILOG_TIME_MAX, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac != 0) {
		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		n += (size_t)snprintf(out + n, CRILOG_TIME_MAX - n, ".%0*ld",
		    digits, frac);
	}
	out[n++] = 'Z';
	out[n] = '\0';
	return n;
}

/* n decimal digits at s into *v; -1 unless they are all digits. */
static int
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

int
crilog_time_parse(const char *s, size_t len, int64_t *ns)
{
	struct tm tm;
	int y, mo, d, h, mi, se, oh, om;
	int64_t frac = 0, scale = 100000000, off = 0, secs;
	size_t i = 19;

	if (len < 20 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
	    digits(s + 17, 2, &se) || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h > 23 || mi > 59 || se > 60)
		return -1;
	if (s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			frac += (s[i] - '0') * scale;
			scale /= 10;
		}
	}
	if (i < len && (s[i] == 'Z' || s[i] == 'z'))
		i++;
	else if (i + 6 <= len && (s[i] == '+' || s[i] == '-') &&
	    digits(s + i + 1, 2, &oh) == 0 && s[i + 3] == ':' &&
	    digits(s + i + 4, 2, &om) == 0) {
		off = (s[i] == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
		i += 6;
	} else
		return -1;
	if (i != len)
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	secs = (int64_t)timegm(&tm) - off;
	/* Nanoseconds in 64 bits reach from 1677 to 2262. */
	if (secs >= INT64_MAX / 1000000000 || secs <= INT64_MIN / 1000000000)
		return -1;
	*ns = secs * 1000000000 + frac;
	return 0;
}

int64_t
crilog_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
crilog_parse(const char *line, size_t len, struct crilog_rec *out)
{
	const char *sp1 = memchr(line, ' ', len), *sp2, *sp3;
	const char *end = line + len;

	if (sp1 == NULL || crilog_time_parse(line, (size_t)(sp1 - line),
	    &out->ns) != 0)
		return -1;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (sp2 == NULL)
		return -1;
	if (sp2 - sp1 - 1 == 6 && memcmp(sp1 + 1, "stdout", 6) == 0)
		out->stderr_stream = 0;
	else if (sp2 - sp1 - 1 == 6 && memcmp(sp1 + 1, "stderr", 6) == 0)
		out->stderr_stream = 1;
	else
		return -1;
	/* The tag, then a space before the text (absent when it is empty). */
	sp3 = sp2 + 2;
	if (sp3 > end || (sp2[1] != 'F' && sp2[1] != 'P') ||
	    (sp3 < end && *sp3 != ' '))
		return -1;
	out->partial = sp2[1] == 'P';
	out->text = sp3 < end ? sp3 + 1 : end;
	out->len = (size_t)(end - out->text);
	return 0;
}
