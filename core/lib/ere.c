/*
 * ECMA/RE2 patterns as POSIX extended regular expressions. One pass copies
 * the pattern, rewriting the escapes ERE lacks: \d \w \s become bracket
 * expressions, character escapes and \xHH/\uXXXX become the characters
 * themselves (UTF-8, backslashed where ERE would read them as operators),
 * and (?: loses its ?:. Inside brackets a backslash is literal to POSIX, so
 * escapes there become characters or classes, and an escaped ']' or '-' is
 * moved to where POSIX reads it literally. Anything without an ERE
 * equivalent (lookaround, named groups, \p classes, backreferences) fails.
 *
 * Nothing grows faster than \W, whose two characters become the thirteen
 * of [^A-Za-z0-9_], so the output is allocated once at seven times the
 * input and written without bounds checks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ere.h"
#include "lib/xmalloc.h"

#define GROWTH	7	/* output bytes per input byte, at most */
/*
 * Repetition, as RE2 allows it and glibc can afford it. RE2 (what the API
 * server runs) refuses a repetition of a repetition ("a**", "a+{2}": an
 * invalid nested repetition operator) and counts over 1000; a lazy "?"
 * after one is only a matching preference, dropped. glibc's regcomp
 * copies the repeated subtree for every "+" and count, so "a++++...+"
 * doubles it each time and (a{1000}){1000} makes a million copies: the
 * product of the bounds along any nesting is kept to MAX_COPIES.
 */
#define MAX_REPEAT	1000
#define MAX_COPIES	1000
#define MAX_DEPTH	64

struct out {
	char	*s;
	size_t	 len;
};

static void
out_putc(struct out *o, char c)
{
	o->s[o->len++] = c;
}

static void
out_putn(struct out *o, const char *s, size_t n)
{
	memcpy(o->s + o->len, s, n);
	o->len += n;
}

static void
out_puts(struct out *o, const char *s)
{
	out_putn(o, s, strlen(s));
}

static void
utf8_put(struct out *o, unsigned long cp)
{
	if (cp < 0x80)
		out_putc(o, (char)cp);
	else if (cp < 0x800) {
		out_putc(o, (char)(0xc0 | (cp >> 6)));
		out_putc(o, (char)(0x80 | (cp & 0x3f)));
	} else {
		out_putc(o, (char)(0xe0 | (cp >> 12)));
		out_putc(o, (char)(0x80 | ((cp >> 6) & 0x3f)));
		out_putc(o, (char)(0x80 | (cp & 0x3f)));
	}
}

/* A literal character outside brackets, escaped if ERE gives it a meaning. */
static void
literal(struct out *o, unsigned long cp)
{
	if (cp < 0x80 && strchr(".[]\\()*+?{}|^$", (int)cp) != NULL &&
	    cp != 0)
		out_putc(o, '\\');
	utf8_put(o, cp);
}

static int
hexval(const char *s, int n, unsigned long *out)
{
	int	i;

	*out = 0;
	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			*out = *out * 16 + (unsigned long)(s[i] - '0');
		else if ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')
			*out = *out * 16 + (unsigned long)((s[i] | 0x20) - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

/*
 * Translate a bracket expression starting after '['; *sp is left on the
 * closing ']'. In POSIX a backslash is literal inside brackets, so ECMA
 * escapes become characters or classes, and an escaped ']' or '-' is moved
 * to where POSIX reads it literally.
 */
static int
translate_bracket(struct out *o, const char **sp)
{
	const char	*s = *sp;
	size_t		 start;
	int		 rbracket = 0, dash = 0;

	if (*s == '^')
		out_putc(o, *s++);
	start = o->len;
	if (*s == ']')
		out_putc(o, *s++);
	for (; *s != '\0' && *s != ']'; s++) {
		if (s[0] == '[' && s[1] == ':') {
			const char *end = strstr(s + 2, ":]");

			if (end == NULL)
				return -1;
			out_putn(o, s, (size_t)(end + 2 - s));
			s = end + 1;
			continue;
		}
		if (*s != '\\') {
			out_putc(o, *s);
			continue;
		}
		switch (*++s) {
		case 'd':
			out_puts(o, "0-9");
			break;
		case 'w':
			out_puts(o, "A-Za-z0-9_");
			break;
		case 's':
			out_puts(o, "[:space:]");
			break;
		case 'n':
			out_putc(o, '\n');
			break;
		case 't':
			out_putc(o, '\t');
			break;
		case 'r':
			out_putc(o, '\r');
			break;
		case ']':
			rbracket = 1;
			break;
		case '-':
			dash = 1;
			break;
		case '\0':
			return -1;
		default:
			if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
				return -1;
			out_putc(o, *s);
			break;
		}
	}
	if (*s != ']')
		return -1;
	if (rbracket) {
		memmove(o->s + start + 1, o->s + start, o->len - start);
		o->s[start] = ']';
		o->len++;
	}
	if (dash)
		out_putc(o, '-');
	*sp = s;
	return 0;
}

/*
 * The copies glibc makes of what a quantifier at s repeats ({n}, {n,},
 * {n,m}: the larger bound; "+" two), and where it ends; 0 if s is no
 * quantifier, -1 if the count is malformed or over MAX_REPEAT.
 */
static long
quantifier(const char *s, const char **end)
{
	long lo = 0, hi;
	const char *p = s + 1;

	*end = s + 1;
	if (*s == '*' || *s == '?')
		return 1;
	if (*s == '+')
		return 2;
	if (*s != '{')
		return 0;
	if (*p < '0' || *p > '9')
		return 0;	/* a literal '{', as RE2 reads it */
	while (*p >= '0' && *p <= '9')
		if ((lo = lo * 10 + (*p++ - '0')) > MAX_REPEAT)
			return -1;
	hi = lo;
	if (*p == ',') {
		p++;
		if (*p >= '0' && *p <= '9') {
			hi = 0;
			while (*p >= '0' && *p <= '9')
				if ((hi = hi * 10 + (*p++ - '0')) > MAX_REPEAT)
					return -1;
		}
	}
	if (*p != '}')
		return 0;	/* not a count: literal */
	*end = p + 1;
	/* {2,1} is regcomp's to refuse, with its own words. */
	return hi > lo ? hi : lo > 0 ? lo : 1;
}

/* Copy the pattern into one allocation, translating as ere.h describes. */
char *
ere_translate(const char *s)
{
	struct out	 o = { 0 };
	unsigned long	 cp;
	size_t		 n = strlen(s);
	/* Per open group: the most copies of anything inside it so far. */
	long		 inner[MAX_DEPTH + 1], last = 1;
	int		 depth = 0, after_quant = 0, lazy_ok = 0;

	if (n > (SIZE_MAX - 1) / GROWTH)
		return NULL;
	o.s = xmalloc(n * GROWTH + 1);
	inner[0] = 1;
	for (; *s != '\0'; s++) {
		const char *qend;
		long q = quantifier(s, &qend);

		if (q < 0)
			goto fail;
		if (q > 0) {
			if (*s == '?' && lazy_ok) {
				lazy_ok = 0;	/* x*? x+? x{n}?: lazy */
				continue;
			}
			if (after_quant)
				goto fail;	/* a repetition repeated */
			/* What it repeats ("last") times q, inside every
			   open group's count. */
			if ((last *= q) > MAX_COPIES)
				goto fail;
			if (last > inner[depth])
				inner[depth] = last;
			out_putn(&o, s, (size_t)(qend - s));
			s = qend - 1;
			after_quant = lazy_ok = 1;
			continue;
		}
		after_quant = lazy_ok = 0;
		if (*s == '(' ) {
			if (depth == MAX_DEPTH)
				goto fail;
			inner[++depth] = 1;
		} else if (*s == ')' && depth > 0) {
			/* The group as an atom: as many copies as its
			   costliest part; a quantifier after it multiplies. */
			last = inner[depth--];
			if (last > inner[depth])
				inner[depth] = last;
			out_putc(&o, ')');
			continue;
		}
		last = 1;
		if (*s == '[') {
			out_putc(&o, *s++);
			if (translate_bracket(&o, &s) != 0)
				goto fail;
			out_putc(&o, ']');
			continue;
		}
		if (s[0] == '(' && s[1] == '?') {
			if (s[2] != ':')
				goto fail;
			out_putc(&o, '(');
			s += 2;
			continue;
		}
		if (*s != '\\') {
			out_putc(&o, *s);
			continue;
		}
		switch (*++s) {
		case 'd':
			out_puts(&o, "[0-9]");
			break;
		case 'D':
			out_puts(&o, "[^0-9]");
			break;
		case 'w':
			out_puts(&o, "[A-Za-z0-9_]");
			break;
		case 'W':
			out_puts(&o, "[^A-Za-z0-9_]");
			break;
		case 's':
			out_puts(&o, "[[:space:]]");
			break;
		case 'S':
			out_puts(&o, "[^[:space:]]");
			break;
		case 'n':
			out_putc(&o, '\n');
			break;
		case 't':
			out_putc(&o, '\t');
			break;
		case 'r':
			out_putc(&o, '\r');
			break;
		case 'f':
			out_putc(&o, '\f');
			break;
		case 'v':
			out_putc(&o, '\v');
			break;
		case 'b':
		case 'B':
			/* glibc knows word boundaries. */
			out_putc(&o, '\\');
			out_putc(&o, *s);
			break;
		case 'x':
			if (hexval(s + 1, 2, &cp) != 0)
				goto fail;
			literal(&o, cp);
			s += 2;
			break;
		case 'u':
			if (hexval(s + 1, 4, &cp) != 0 || cp == 0)
				goto fail;
			literal(&o, cp);
			s += 4;
			break;
		case '\0':
			goto fail;
		default:
			if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9'))
				goto fail;
			literal(&o, (unsigned char)*s);
			break;
		}
	}
	o.s[o.len] = '\0';
	return o.s;
fail:
	free(o.s);
	return NULL;
}
