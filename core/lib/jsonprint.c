/*
 * Printing a cJSON tree compactly: what the store writes for every
 * version, so it is on the path of every write. cJSON_PrintUnformatted
 * grows its buffer by realloc from 256 bytes, formats every number through
 * sprintf and sscanf and copies the result once more into the caller's
 * buffer: 8.6 us for a 2 KB pod, as long as parsing it. This printer writes
 * the same bytes (json_print_reference below is cJSON's, kept for the
 * tests and the fuzz target that compare the two) into a scratch buffer
 * kept per thread, and allocates the result once at its size.
 *
 * Numbers: cJSON prints 15 significant digits whenever those read back
 * within one ulp-sized tolerance, so 9007199254740993 came back as
 * 9007199254740990, and a whole number past INT_MAX came out in exponent
 * form ("1e+15"), which Go refuses to decode into an int64. Here a number
 * prints as its shortest exact form: a whole number below 1e21 as its
 * digits, anything else as the fewest of %.15g, %.16g, %.17g that read back
 * exactly; NaN and infinities as null (as cJSON does).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/rbuf.h"
#include "lib/xmalloc.h"

struct jout {
	char *p;
	size_t len, cap;
};

/* The scratch buffer a thread prints into; a huge one is not kept, and a
   thread that ends frees its own. */
static __thread struct jout scratch;
#define SCRATCH_KEEP (1u << 20)
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_free(void *unused)
{
	(void)unused;
	free(scratch.p);
	scratch.p = NULL;
	scratch.cap = 0;
}

static void
scratch_key_make(void)
{
	if (pthread_key_create(&scratch_key, scratch_free) != 0)
		fatal("pthread_key_create failed");
}

static void
grow(struct jout *o, size_t n)
{
	size_t cap;

	for (cap = o->cap ? o->cap : 4096; cap < o->len + n; cap *= 2)
		;
	o->p = xrealloc(o->p, cap);
	o->cap = cap;
}

static inline void
need(struct jout *o, size_t n)
{
	if (__builtin_expect(o->len + n > o->cap, 0))
		grow(o, n);
}

static inline void
put(struct jout *o, const char *s, size_t n)
{
	need(o, n);
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static inline void
put_char(struct jout *o, char c)
{
	need(o, 1);
	o->p[o->len++] = c;
}

/* Which bytes a JSON string escapes: 0 none, else the letter after \. */
static const char escape[256] = {
	['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
	['\r'] = 'r', ['\t'] = 't',
	[0x01] = 'u', [0x02] = 'u', [0x03] = 'u', [0x04] = 'u', [0x05] = 'u',
	[0x06] = 'u', [0x07] = 'u', [0x0b] = 'u', [0x0e] = 'u', [0x0f] = 'u',
	[0x10] = 'u', [0x11] = 'u', [0x12] = 'u', [0x13] = 'u', [0x14] = 'u',
	[0x15] = 'u', [0x16] = 'u', [0x17] = 'u', [0x18] = 'u', [0x19] = 'u',
	[0x1a] = 'u', [0x1b] = 'u', [0x1c] = 'u', [0x1d] = 'u', [0x1e] = 'u',
	[0x1f] = 'u',
};

/* Does any of 8 bytes need an escape (below 0x20, '"' or '\\')? Exact as
   a yes or no (the bit tricks of "Bit Twiddling Hacks": hasless,
   haszero). */
static inline int
special8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

	return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) |
	    ((b - ones) & ~b)) & high ? 1 : 0;
}

static void
put_string(struct jout *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), i = 0;
	uint64_t x;
	char *w;

	/* Room for the worst case (every byte a \u escape), then no checks. */
	need(o, 6 * n + 2);
	w = o->p + o->len;
	*w++ = '"';
	while (i < n) {
		char e;

		if (i + 8 <= n) {
			/* Eight bytes at a time, one by one only near an
			   escape and in the tail. */
			memcpy(&x, u + i, 8);
			if (!special8(x)) {
				memcpy(w, &x, 8);
				w += 8;
				i += 8;
				continue;
			}
		}
		if ((e = escape[u[i]]) == 0)
			*w++ = (char)u[i];
		else if (e != 'u') {
			*w++ = '\\';
			*w++ = e;
		} else
			w += sprintf(w, "\\u%04x", u[i]);
		i++;
	}
	*w++ = '"';
	o->len = (size_t)(w - o->p);
}

/*
 * The shortest exact form of a finite number (the rules above), into buf
 * (32 bytes); its length. Shared with json_print_reference's make_exact.
 */
static int
exact_number(char *buf, double d)
{
	int n, prec;

	if (d == floor(d) && fabs(d) < 1e21)
		return snprintf(buf, 32, "%.0f", d);
	for (prec = 15;; prec++) {
		n = snprintf(buf, 32, "%.*g", prec, d);
		if (prec == 17 || strtod(buf, NULL) == d)
			return n;
	}
}

static void
put_number(struct jout *o, double d)
{
	char buf[32];

	if (!isfinite(d)) {
		put(o, "null", 4);
		return;
	}
	if (d == floor(d) && d >= INT_MIN && d <= INT_MAX) {
		/* The common case, without printf. */
		long v = (long)d;
		unsigned long m = v < 0 ? 0UL - (unsigned long)v :
		    (unsigned long)v;
		char *e = buf + sizeof buf, *b = e;

		do
			*--b = (char)('0' + m % 10);
		while ((m /= 10) != 0);
		if (v < 0 || signbit(d))
			*--b = '-';	/* -0 too, as %g prints it */
		put(o, b, (size_t)(e - b));
		return;
	}
	put(o, buf, (size_t)exact_number(buf, d));
}

/* 0, or -1 for what cJSON cannot print either (an invalid item, a raw
   item without text). */
static int
put_value(struct jout *o, const cJSON *j)
{
	const cJSON *c;

	switch (j->type & 0xFF) {
	case cJSON_NULL:
		put(o, "null", 4);
		return 0;
	case cJSON_False:
		put(o, "false", 5);
		return 0;
	case cJSON_True:
		put(o, "true", 4);
		return 0;
	case cJSON_Number:
		put_number(o, j->valuedouble);
		return 0;
	case cJSON_Raw:
		if (j->valuestring == NULL)
			return -1;
		put(o, j->valuestring, strlen(j->valuestring));
		return 0;
	case cJSON_String:
		put_string(o, j->valuestring);
		return 0;
	case cJSON_Array:
	case cJSON_Object:
		put_char(o, (j->type & 0xFF) == cJSON_Array ? '[' : '{');
		for (c = j->child; c != NULL; c = c->next) {
			if ((j->type & 0xFF) == cJSON_Object) {
				put_string(o, c->string);
				put_char(o, ':');
			}
			if (put_value(o, c) != 0)
				return -1;
			if (c->next != NULL)
				put_char(o, ',');
		}
		put_char(o, (j->type & 0xFF) == cJSON_Array ? ']' : '}');
		return 0;
	}
	return -1;
}

/* Print into the scratch buffer; its length, or -1. */
static long
print_scratch(const cJSON *j)
{
	struct jout o;
	int rc;

	if (scratch.p == NULL) {
		/* This thread's first print: free the buffer when it ends. */
		pthread_once(&scratch_once, scratch_key_make);
		pthread_setspecific(scratch_key, &scratch);
	}
	o = scratch;	/* a local: no thread-local access inside */
	o.len = 0;
	rc = j == NULL ? -1 : put_value(&o, j);
	scratch = o;
	return rc == 0 ? (long)o.len : -1;
}

static void
scratch_trim(void)
{
	if (scratch.cap > SCRATCH_KEEP) {
		free(scratch.p);
		scratch.p = NULL;
		scratch.cap = 0;
	}
}

char *
json_print(const cJSON *j)
{
	long n = print_scratch(j);
	char *s;

	if (n < 0)
		fatal("json_print: an item cJSON cannot print");
	s = xmalloc((size_t)n + 1);
	memcpy(s, scratch.p, (size_t)n);
	s[n] = '\0';
	scratch_trim();
	return s;
}

/* Sort the members of every object in the tree by key (insertion sort:
   the trees are small). */
static void
sort_keys(cJSON *j)
{
	cJSON *sorted = NULL, *it, *next, **pp;

	for (it = j ? j->child : NULL; it != NULL; it = it->next)
		sort_keys(it);
	if (!cJSON_IsObject(j))
		return;
	for (it = j->child; it != NULL; it = next) {
		next = it->next;
		for (pp = &sorted; *pp != NULL && strcmp((*pp)->string,
		    it->string) <= 0; pp = &(*pp)->next)
			;
		it->next = *pp;
		*pp = it;
	}
	/* cJSON's list: prev links, the head's prev the tail. */
	j->child = sorted;
	for (it = sorted; it != NULL; it = it->next) {
		if (it->next != NULL)
			it->next->prev = it;
		else if (sorted != NULL)
			sorted->prev = it;
	}
}

char *
json_print_sorted(const cJSON *j)
{
	cJSON *copy = cJSON_Duplicate(j, 1);
	char *s;

	if (copy == NULL)
		return xstrdup("null");
	sort_keys(copy);
	s = json_print(copy);
	cJSON_Delete(copy);
	return s;
}

struct rbuf *
json_print_rbuf(const cJSON *j)
{
	long n = print_scratch(j);
	rbuf *b;

	if (n < 0)
		fatal("json_print: an item cJSON cannot print");
	b = rbuf_new(scratch.p, (size_t)n);
	scratch_trim();
	return b;
}

/* ------------------------------------------------------------------ */
/* cJSON's printer with the same number rules, for comparison.         */

static int
number_inexact(double d)
{
	char buf[32];

	if (!isfinite(d))
		return 0;
	if (d == floor(d) && fabs(d) < 1e21)
		return d > INT_MAX || d < INT_MIN;
	snprintf(buf, sizeof buf, "%1.15g", d);
	return strtod(buf, NULL) != d;
}

static int
needs_exact(const cJSON *j)
{
	const cJSON *c;

	if (cJSON_IsNumber(j))
		return number_inexact(j->valuedouble);
	for (c = j->child; c != NULL; c = c->next)
		if (needs_exact(c))
			return 1;
	return 0;
}

static void
make_exact(cJSON *j)
{
	char buf[32];
	cJSON *c, *raw;

	for (c = j->child; c != NULL; c = c->next) {
		if (!cJSON_IsNumber(c) || !number_inexact(c->valuedouble)) {
			make_exact(c);
			continue;
		}
		exact_number(buf, c->valuedouble);
		raw = cJSON_CreateRaw(buf);
		if (c->string != NULL)
			raw->string = xstrdup(c->string);
		/* By pointer: a duplicated key must not hit its twin. */
		cJSON_ReplaceItemViaPointer(j, c, raw);
		c = raw;
	}
}

char *
json_print_reference(const cJSON *o)
{
	cJSON *copy = NULL;
	char *s;

	if (o != NULL && needs_exact(o)) {
		copy = cJSON_Duplicate(o, 1);
		if (cJSON_IsNumber(copy)) {
			/* A bare number: print it through a one-item array. */
			cJSON *a = cJSON_CreateArray();
			size_t n;

			cJSON_AddItemToArray(a, copy);
			make_exact(a);
			s = cJSON_PrintUnformatted(a);
			cJSON_Delete(a);
			if (s == NULL)
				return NULL;
			n = strlen(s);
			memmove(s, s + 1, n - 2);
			s[n - 2] = '\0';
			return s;
		}
		make_exact(copy);
		o = copy;
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(copy);
	return s;
}
