/*
 * Uids, timestamps and random names. Randomness comes from a xorshift
 * generator seeded once from getrandom(2): uids need to be unique, not
 * secret.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "lib/util.h"
#include "lib/xmalloc.h"

static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t x;

	if (rng_state == 0) {
		if (getrandom(&rng_state, sizeof rng_state, 0) !=
		    sizeof rng_state || rng_state == 0)
			rng_state = (uint64_t)time(NULL) * 2654435761u + 1;
	}
	x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

void
util_uuid(char out[37])
{
	uint64_t a = rng(), b = rng();

	a = (a & ~0xf000ULL) | 0x4000ULL;
	b = (b & ~(3ULL << 62)) | (2ULL << 62);
	snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx",
	    (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xffff),
	    (unsigned)(a & 0xffff), (unsigned)(b >> 48),
	    (unsigned long long)(b & 0xffffffffffffULL));
}

void
util_time_format(time_t t, char out[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The second's text is kept per thread: a burst of writes stamps
   thousands of conditions in the same second (gmtime_r and strftime were
   2% of the loop binding 50,000 pods). */
void
util_now(char out[32])
{
	static __thread time_t last = -1;
	static __thread char text[32];
	time_t now = time(NULL);

	if (now != last) {
		util_time_format(now, text);
		last = now;
	}
	memcpy(out, text, 32);
}

time_t
util_time_parse(const char *s)
{
	struct tm tm;
	const char *p;
	int oh = 0, om = 0;
	time_t t;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	t = timegm(&tm);
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%d:%d", &oh, &om) >= 1)
		t -= (*p == '+' ? 1 : -1) * (oh * 3600 + om * 60);
	return t;
}

void
util_random_suffix(char *out, size_t n)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = alphabet[rng() % (sizeof alphabet - 1)];
	out[n] = '\0';
}

uint64_t
util_random(uint64_t n)
{
	return rng() % n;
}

uint64_t
util_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint64_t
util_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
util_age(time_t since, char out[16])
{
	long d = (long)(time(NULL) - since);

	if (d < 0)
		d = 0;
	if (d < 120)
		snprintf(out, 16, "%lds", d);
	else if (d < 600)
		snprintf(out, 16, d % 60 ? "%ldm%lds" : "%ldm", d / 60, d % 60);
	else if (d < 3 * 3600)
		snprintf(out, 16, "%ldm", d / 60);
	else if (d < 8 * 3600)
		snprintf(out, 16, (d % 3600) / 60 ? "%ldh%ldm" : "%ldh",
		    d / 3600, (d % 3600) / 60);
	else if (d < 48 * 3600)
		snprintf(out, 16, "%ldh", d / 3600);
	else if (d < 8 * 86400)
		snprintf(out, 16, (d % 86400) / 3600 ? "%ldd%ldh" : "%ldd",
		    d / 86400, (d % 86400) / 3600);
	else
		snprintf(out, 16, "%dd", (int)(d / 86400 % 1000000));
}

int
util_strf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

char *
util_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int64_t
util_duration_ms(const char *s)
{
	static const struct { const char *unit; double ms; } units[] = {
		{ "ms", 1 }, { "us", 1e-3 }, { "ns", 1e-6 }, { "h", 3600e3 },
		{ "m", 60e3 }, { "s", 1e3 }, { NULL, 0 } };
	double total = 0;
	char *end;
	int i;

	if (s == NULL || *s == '\0')
		return -1;
	if (strcmp(s, "0") == 0)
		return 0;
	while (*s != '\0') {
		double v = strtod(s, &end);

		if (end == s || v < 0)
			return -1;
		s = end;
		for (i = 0; units[i].unit != NULL; i++) {
			size_t n = strlen(units[i].unit);

			if (strncmp(s, units[i].unit, n) == 0 &&
			    !(n == 1 && s[0] == 'm' && s[1] == 's')) {
				total += v * units[i].ms;
				s += n;
				break;
			}
		}
		if (units[i].unit == NULL)
			return -1;
	}
	return (int64_t)(total + 0.5);
}

void
util_now_micro(char out[40])
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	if (snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)tv.tv_usec) >= 40)
		out[0] = '\0';
}

int
util_base64_decode(const char *s, char **out, size_t *len)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned acc = 0;
	int bits = 0, pad = 0;
	size_t n = 0, chars = 0;
	const char *p;
	char *buf;

	buf = xmalloc(strlen(s) / 4 * 3 + 4);
	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s))
			continue;
		if (*s == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (p = strchr(alpha, *s)) == NULL)
			goto bad;
		chars++;
		acc = (acc << 6) | (unsigned)(p - alpha);
		if ((bits += 6) >= 8) {
			bits -= 8;
			buf[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	/* One character alone cannot end a group; padding completes one. */
	if (chars % 4 == 1 || pad > 2 || (pad > 0 && (chars + pad) % 4 != 0))
		goto bad;
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
bad:
	free(buf);
	return -1;
}

uint64_t
util_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n-- > 0)
		h = (h ^ *c++) * 1099511628211ULL;
	return h;
}

int
util_mkdirs(const char *path, unsigned mode)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST ? -1 : 0;
}

char *
util_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n < 0) {
		fclose(f);
		return NULL;
	}
	buf = xmalloc((size_t)n + 1);
	n = (long)fread(buf, 1, (size_t)n, f);
	buf[n] = '\0';
	fclose(f);
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

int
util_cidr4(const char *s, uint32_t *net, int *plen, int min, int max)
{
	char buf[32], *slash, *end;
	struct in_addr a;
	long l;

	if (strlen(s) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", s);
	if ((slash = strchr(buf, '/')) == NULL)
		return -1;
	*slash = '\0';
	l = strtol(slash + 1, &end, 10);
	if (*end != '\0' || slash[1] == '\0' || l < min || l > max ||
	    l < 0 || l > 32 || inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	if (l > 0 && (ntohl(a.s_addr) & ~(0xffffffffu << (32 - l))) != 0)
		return -1;		/* host bits set */
	*net = ntohl(a.s_addr);
	*plen = (int)l;
	return 0;
}
