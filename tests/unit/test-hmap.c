/* Unit tests for the string hash map: put, replace, delete, growth. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "lib/hmap.h"

static int
count(const char *k, void *v, void *arg)
{
	(void)k;
	(void)v;
	(*(int *)arg)++;
	return 0;
}

int
main(void)
{
	hmap *m = hmap_new();
	static char keys[5000][16];
	int i, n = 0;

	for (i = 0; i < 5000; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", i);
		CHECK(hmap_put(m, keys[i], keys[i]) == NULL);
	}
	CHECK(hmap_count(m) == 5000);
	CHECK(hmap_get(m, "k1234") == keys[1234]);
	CHECK(hmap_get(m, "nope") == NULL);
	CHECK(hmap_put(m, keys[7], "x") == keys[7]);
	CHECK(hmap_count(m) == 5000);
	for (i = 0; i < 5000; i += 2)
		CHECK(hmap_del(m, keys[i]) != NULL);
	CHECK(hmap_del(m, "k0") == NULL);
	CHECK(hmap_count(m) == 2500);
	CHECK(hmap_get(m, "k1") == keys[1]);
	hmap_each(m, count, &n);
	CHECK(n == 2500);
	hmap_free(m);
	return check_result("test-hmap");
}
