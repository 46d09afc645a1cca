/*
 * The scheduler's free-capacity index (core/sched/capindex.c) against a
 * plain scan: for random nodes, requests and ranges, capindex_next gives
 * the first node in [from, to) whose idle or future idle may hold the
 * request, also after updates, and -1 when none does.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"
#include "check.h"

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int
scan(const struct s_node *nodes, int from, int to,
    const struct podspec_res *req)
{
	int i;

	for (i = from < 0 ? 0 : from; i < to; i++) {
		const struct s_node *n = &nodes[i];
		int64_t cpu = max64(n->idle.cpu, n->idle.cpu + n->releasing.cpu -
		    n->pipelined.cpu);
		int64_t mem = max64(n->idle.memory, n->idle.memory +
		    n->releasing.memory - n->pipelined.memory);
		int64_t pods = max64(n->idle.pods, n->idle.pods +
		    n->releasing.pods - n->pipelined.pods);

		if (req->cpu <= cpu && req->memory <= mem && req->pods <= pods)
			return i;
	}
	return -1;
}

static void
random_node(struct s_node *n)
{
	memset(&n->idle, 0, sizeof n->idle);
	memset(&n->releasing, 0, sizeof n->releasing);
	memset(&n->pipelined, 0, sizeof n->pipelined);
	n->idle.cpu = rand() % 8 * 1000;
	n->idle.memory = rand() % 8;
	n->idle.pods = rand() % 3;
	if (rand() % 4 == 0)
		n->releasing.cpu = rand() % 4 * 1000;
	if (rand() % 4 == 0)
		n->pipelined.cpu = rand() % 4 * 1000;
}

static void
one_size(int count)
{
	struct s_node *nodes = calloc((size_t)count + 1, sizeof *nodes);
	struct capindex cx;
	int round, i;

	for (i = 0; i < count; i++) {
		nodes[i].idx = i;
		random_node(&nodes[i]);
	}
	capindex_build(&cx, nodes, count);
	for (round = 0; round < 2000; round++) {
		struct podspec_res req;
		int from = count ? rand() % (count + 2) - 1 : 0;
		int to = count ? rand() % (count + 1) : 0, got, want;

		memset(&req, 0, sizeof req);
		req.cpu = rand() % 9 * 1000;
		req.memory = rand() % 9;
		req.pods = rand() % 3;
		got = capindex_next(&cx, from, to, &req);
		want = scan(nodes, from, to, &req);
		CHECK(got == want);
		if (got != want)
			fprintf(stderr, "  %d nodes, [%d, %d): got %d, want %d\n",
			    count, from, to, got, want);
		/* A whole scan, node after node, as allocate does. */
		if (round % 50 == 0) {
			int k = capindex_next(&cx, 0, count, &req), w = scan(nodes,
			    0, count, &req);

			while (k >= 0 && k == w) {
				k = capindex_next(&cx, k + 1, count, &req);
				w = scan(nodes, w + 1, count, &req);
			}
			CHECK(k == w);
		}
		if (count > 0 && round % 3 == 0) {
			i = rand() % count;
			random_node(&nodes[i]);
			capindex_update(&cx, &nodes[i]);
		}
	}
	capindex_free(&cx);
	free(nodes);
}

int
main(void)
{
	int sizes[] = { 0, 1, 2, 3, 7, 8, 9, 100, 1000 }, i;

	srand(7);
	for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++)
		one_size(sizes[i]);
	return check_result("test-capindex");
}
