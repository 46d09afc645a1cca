/*
 * Minimal unit-test harness: CHECK records a failure and goes on; a test
 * program returns check_result() from main (0 when every CHECK passed).
 */
#ifndef VOLRAY_CHECK_H
#define VOLRAY_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do {						\
	check_count++;							\
	if (!(cond)) {							\
		check_failures++;					\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n",		\
		    __FILE__, __LINE__, #cond);				\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *check_a_ = (a), *check_b_ = (b);			\
	check_count++;							\
	if (check_a_ == NULL || check_b_ == NULL ||			\
	    strcmp(check_a_, check_b_) != 0) {				\
		check_failures++;					\
		fprintf(stderr, "%s:%d: CHECK_STR failed: %s\n"		\
		    "   got: %s\n  want: %s\n", __FILE__, __LINE__, #a,	\
		    check_a_ ? check_a_ : "(null)",			\
		    check_b_ ? check_b_ : "(null)");			\
	}								\
} while (0)

static inline int
check_result(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count,
	    check_failures);
	return check_failures != 0;
}

#endif
