/* Unit tests for the string hash map: put, replace, delete, growth, and
   random churn checked against a plain array. */
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
	{
		/* Churn: puts and removals at random (a removal shifts the
		   run after it back), every key checked after each round. */
		static void *want[3000];
		size_t live = 0;
		int round, bad = 0;

		m = hmap_new();
		srand(7);
		for (round = 0; round < 200; round++) {
			for (i = 0; i < 500; i++) {
				int k = rand() % 3000;

				if (rand() % 3 == 0) {
					CHECK(hmap_del(m, keys[k]) == want[k]);
					live -= want[k] != NULL;
					want[k] = NULL;
				} else {
					CHECK(hmap_put(m, keys[k], &want[k]) ==
					    want[k]);
					live += want[k] == NULL;
					want[k] = &want[k];
				}
			}
			for (i = 0; i < 3000; i++)
				bad += hmap_get(m, keys[i]) != want[i];
			if (hmap_count(m) != live)
				bad++;
		}
		CHECK(bad == 0);
		n = 0;
		hmap_each(m, count, &n);
		CHECK((size_t)n == live);
		hmap_free(m);
	}
	return check_result("test-hmap");
}
