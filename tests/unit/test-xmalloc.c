/*
 * xgrow, the growable-array helper: capacity doubles from 16 to the first
 * power of two that holds what is asked, never shrinks, and the elements
 * already there survive each growth.
 */
#include <stdlib.h>

#include "check.h"
#include "lib/xmalloc.h"

int
main(void)
{
	size_t cap = 0, i, n;
	int *v = NULL;
	char *s;

	XGROW(v, cap, 1);
	CHECK(v != NULL && cap == 16);
	XGROW(v, cap, 16);
	CHECK(cap == 16);
	for (n = 0; n < 1000; n++) {
		XGROW(v, cap, n + 1);
		v[n] = (int)n * 3;
	}
	CHECK(cap == 1024);
	for (i = 0; i < n; i++)
		if (v[i] != (int)i * 3)
			break;
	CHECK(i == n);
	XGROW(v, cap, 10);
	CHECK(cap == 1024);
	XGROW(v, cap, 1025);
	CHECK(cap == 2048);
	free(v);
	s = xstrndup("volray", 3);
	CHECK_STR(s, "vol");
	free(s);
	s = xstrdup("");
	CHECK_STR(s, "");
	free(s);
	v = xcalloc(4, sizeof *v);
	CHECK(v[0] == 0 && v[3] == 0);
	free(v);
	return check_result("test-xmalloc");
}
