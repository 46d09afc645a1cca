/*
 * Identifiers and time: object uids, RFC 3339 timestamps, generateName
 * suffixes, a monotonic clock for latencies, and formatted strings.
 */
#ifndef VOLRAY_UTIL_H
#define VOLRAY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A random version-4 UUID, 36 characters plus NUL. */
void util_uuid(char out[37]);
/* Current UTC time as "2006-01-02T15:04:05Z". */
void util_now(char out[32]);
/* Now as a MicroTime (a Lease's renewTime): RFC 3339 with microseconds. */
void util_now_micro(char out[40]);
/* Format a Unix time the same way. */
void util_time_format(time_t, char out[32]);
/* Parse "2006-01-02T15:04:05Z" (fractions and offsets accepted); -1 on error. */
time_t util_time_parse(const char *);
/* n random characters from Kubernetes' generateName alphabet, plus NUL. */
void util_random_suffix(char *out, size_t n);
/* A pseudo-random number in [0, n), n > 0 (not for secrets). */
uint64_t util_random(uint64_t n);
/* Monotonic microseconds. */
uint64_t util_usec(void);
/* Wall-clock milliseconds since the Unix epoch. */
uint64_t util_now_ms(void);
/* A Go duration ("1h30m", "500ms", "2.5s", "0") in milliseconds; -1 if bad. */
int64_t util_duration_ms(const char *);
/* A human age like kubectl prints it: 5s, 3m, 2m30s, 4h, 3d. */
void util_age(time_t since, char out[16]);
/*
 * snprintf into a fixed buffer where cutting is acceptable or checked:
 * 0, or -1 when the output was cut to fit.
 */
int util_strf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Standard base64 (white space ignored, padding optional) into *out,
   NUL-terminated, *len bytes: 0, or -1 when it is not base64. */
int util_base64_decode(const char *s, char **out, size_t *len);
/* mkdir -p with mode for each directory made: 0, or -1 (errno). */
int util_mkdirs(const char *path, unsigned mode);
/* A whole file, NUL-terminated (malloc'd; *len its size unless NULL),
   or NULL. */
char *util_read_file(const char *path, size_t *len);
/* FNV-1a over n bytes, going on from h (UTIL_FNV_SEED to start): a
   signature of what a record is made from, not a cryptographic hash. */
#define UTIL_FNV_SEED	14695981039346656037ULL
uint64_t util_fnv1a(uint64_t h, const void *p, size_t n);
/* An IPv4 network "A.B.C.D/N" with N within [min, max] and no host bits
   set: its address (host order) and length. 0, or -1. */
int util_cidr4(const char *s, uint32_t *net, int *plen, int min, int max);
/* printf into newly allocated memory (aborts when out of memory). */
char *util_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
