/*
 * The scheduler's assumed pods (core/sched/assume.c): a pod whose bind is
 * on its way reads as on its node until the cache holds it bound or
 * deleted, or its bind fails; another pod of the same name (a new uid)
 * is not assumed; the nodes handed to a session are copies.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/assume.h"
#include "check.h"

static store_obj
pod(const char *name, const char *uid, const char *node)
{
	store_obj o;

	memset(&o, 0, sizeof o);
	o.res = "pods";
	o.ns = "default";
	o.name = name;
	o.uid = uid;
	o.node_name = node;
	return o;
}

static void
event(assume *a, enum store_event_type type, store_obj *o)
{
	store_event ev = { type, o, NULL };

	assume_event(a, &ev);
}

int
main(void)
{
	assume *a = assume_new();
	store_obj p[4], other;
	store_obj *objs[4];
	const char **nodes;
	int i;

	p[0] = pod("a", "u-a", "");
	p[1] = pod("b", "u-b", "");
	p[2] = pod("c", "u-c", "n9");	/* bound already */
	p[3] = pod("d", "u-d", "");
	for (i = 0; i < 4; i++)
		objs[i] = &p[i];

	/* Nothing assumed: no array. */
	CHECK(assume_nodes(a, objs, 4) == NULL);

	assume_add(a, "u-a", "n1");
	assume_add(a, "u-c", "n2");
	assume_add(a, "u-d", "n3");
	assume_add(a, "u-d", "n4");	/* the later bind's node */
	CHECK(assume_count(a) == 3);
	nodes = assume_nodes(a, objs, 4);
	CHECK(nodes != NULL);
	if (nodes != NULL) {
		CHECK_STR(nodes[0], "n1");
		CHECK(nodes[1] == NULL);
		CHECK(nodes[2] == NULL);	/* the cache's node wins */
		CHECK_STR(nodes[3], "n4");
	}

	/* The copies outlive the entries (a session reads them while
	   the loop forgets). */
	assume_forget(a, "u-a");
	CHECK(nodes == NULL || strcmp(nodes[0], "n1") == 0);
	free(nodes);
	CHECK(assume_count(a) == 2);

	/* A status write without a node keeps it; the bound version, or
	   the deletion, ends it. Another resource's event is not a pod's. */
	p[3] = pod("d", "u-d", "");
	event(a, STORE_MODIFIED, &p[3]);
	CHECK(assume_count(a) == 2);
	other = pod("x", "u-d", "n4");
	other.res = "configmaps";
	event(a, STORE_MODIFIED, &other);
	CHECK(assume_count(a) == 2);
	p[3] = pod("d", "u-d", "n4");
	event(a, STORE_MODIFIED, &p[3]);
	CHECK(assume_count(a) == 1);
	p[2] = pod("c", "u-c", "");
	event(a, STORE_DELETED, &p[2]);
	CHECK(assume_count(a) == 0);

	/* A pod made again under the same name is another uid: not
	   assumed. */
	assume_add(a, "u-b", "n5");
	p[1] = pod("b", "u-b2", "");
	CHECK(assume_nodes(a, objs, 4) == NULL);
	p[1] = pod("b", "u-b", "");
	nodes = assume_nodes(a, objs, 4);
	CHECK(nodes != NULL && nodes[0] == NULL && nodes[1] != NULL &&
	    strcmp(nodes[1], "n5") == 0);
	free(nodes);

	assume_free(a);
	return check_result("test-assume");
}
