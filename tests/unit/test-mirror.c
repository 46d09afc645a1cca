/*
 * Unit tests for the mirror (store_mirror.c): versions kept at the remote
 * resourceVersion and delivered at once, stale versions and deletions
 * ignored, a re-list delivering exactly the difference, and the indexes
 * (uid, owner, node) and lists of a store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "store/store.h"

#define MAXEV 64
/* A literal as the (bytes, length) pair the mirror takes. */
#define BYTES(s) (s), (sizeof (s) - 1)

static struct ev {
	enum store_event_type type;
	char key[64];
	uint64_t rev, old_rev;
	char uid[16];
	int same;		/* obj == old */
} evs[MAXEV];
static int nev, flushes, durables, derived, dropped;
static store *mirror;

static void
on_event(void *arg, const store_event *e)
{
	struct ev *v;

	(void)arg;
	if (nev == MAXEV)
		return;
	v = &evs[nev++];
	v->type = e->type;
	snprintf(v->key, sizeof v->key, "%s", e->obj->key);
	snprintf(v->uid, sizeof v->uid, "%s", e->obj->uid);
	v->rev = e->obj->rev;
	v->old_rev = e->old ? e->old->rev : 0;
	v->same = e->obj == e->old;
	/* A subscriber that writes while events are delivered (as a client
	   fed with its own write's response may): its event follows. */
	if (e->type == STORE_ADDED && strcmp(e->obj->key, "pods/r/trigger") ==
	    0)
		store_mirror_put(mirror, "pods", "r", "echo", BYTES(
		    "{\"metadata\":{\"name\":\"echo\",\"namespace\":\"r\","
		    "\"uid\":\"echo\",\"resourceVersion\":\"71\"}}"), 71);
}

static void
on_flush(void *arg)
{
	(void)arg;
	flushes++;
}

static void
on_durable(void *arg)
{
	(void)arg;
	durables++;
}

static void *
make(const cJSON *tree)
{
	(void)tree;
	derived++;
	return malloc(1);
}

static void
drop(void *p)
{
	dropped++;
	free(p);
}

/* A store filter: is the pod's phase Running? */
static int
running(void *arg, const cJSON *tree)
{
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(tree, "status"), "phase");

	(void)arg;
	return cJSON_IsString(ph) && strcmp(ph->valuestring, "Running") == 0;
}

/* A pod's bytes at rv, with an owner, a node and a phase if given. */
static const char *
pod(const char *ns, const char *name, const char *uid, uint64_t rv,
    const char *owner, const char *node, const char *phase)
{
	static char buf[4][1024];
	static int i;
	char *b = buf[i++ % 4];
	int n;

	n = snprintf(b, sizeof buf[0], "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
	    "\"resourceVersion\":\"%llu\",\"labels\":{\"app\":\"x\"}",
	    name, ns, uid, (unsigned long long)rv);
	if (owner != NULL)
		n += snprintf(b + n, sizeof buf[0] - n, ",\"ownerReferences\":"
		    "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		    "\"name\":\"rs\",\"uid\":\"%s\",\"controller\":true}]",
		    owner);
	n += snprintf(b + n, sizeof buf[0] - n, "},\"spec\":{%s%s%s},"
	    "\"status\":{%s%s%s}}", node ? "\"nodeName\":\"" : "",
	    node ? node : "", node ? "\"" : "", phase ? "\"phase\":\"" : "",
	    phase ? phase : "", phase ? "\"" : "");
	return b;
}

static int
mput(const char *ns, const char *name, const char *uid, uint64_t rv,
    const char *owner, const char *node, const char *phase)
{
	const char *j = pod(ns, name, uid, rv, owner, node, phase);

	return store_mirror_put(mirror, "pods", ns, name, j, strlen(j), rv);
}

static int
ev_is(int i, enum store_event_type type, const char *key, uint64_t rev,
    uint64_t old_rev)
{
	return i < nev && evs[i].type == type && strcmp(evs[i].key, key) == 0 &&
	    evs[i].rev == rev && evs[i].old_rev == old_rev;
}

static size_t
on_node(const char *node)
{
	const char **keys;

	return store_on_node(mirror, node, &keys);
}

static size_t
dependents(const char *uid)
{
	const char **keys;

	return store_dependents(mirror, uid, &keys);
}

int
main(void)
{
	uv_loop_t *loop = uv_default_loop();
	store_obj *const *objs;
	store_obj **refs;
	const store_obj *o;
	cJSON *t;
	size_t n, i;
	int id;

	store_derive("pods", make, drop);
	CHECK(store_mirror_open(loop, &mirror) == 0);
	store_subscribe(mirror, on_event, NULL);
	store_subscribe_flush(mirror, on_flush, NULL);
	id = store_filter_add(mirror, "pods", running, NULL);
	CHECK(store_rev(mirror) == 0);
	CHECK(store_wal(mirror) == NULL);

	/* A put is delivered at once: ADDED, then MODIFIED with the old. */
	CHECK(mput("a", "p1", "u1", 10, "rs1", "n1", "Pending") == 1);
	CHECK(nev == 1 && ev_is(0, STORE_ADDED, "pods/a/p1", 10, 0));
	CHECK(flushes == 1);
	CHECK(store_rev(mirror) == 10);
	o = store_get(mirror, "pods", "a", "p1");
	CHECK(o != NULL && o->rev == 10 && strcmp(o->phase, "Pending") == 0 &&
	    o->labels != NULL && o->nowners == 1 && o->derived == NULL);
	CHECK(o != NULL && store_obj_filtered(o, id) == 0);
	CHECK(store_get_uid(mirror, "u1") == o);
	CHECK(dependents("rs1") == 1);
	CHECK(on_node("n1") == 1);
	CHECK(mput("a", "p1", "u1", 12, "rs1", "n1", "Running") == 1);
	CHECK(nev == 2 && ev_is(1, STORE_MODIFIED, "pods/a/p1", 12, 10));
	o = store_get(mirror, "pods", "a", "p1");
	CHECK(o != NULL && strcmp(o->phase, "Running") == 0 &&
	    store_obj_filtered(o, id) == 1);
	t = o ? store_obj_tree(o) : NULL;
	CHECK_STR(t ? cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"),
	    "resourceVersion")->valuestring : NULL, "12");
	cJSON_Delete(t);
	CHECK(store_get_uid(mirror, "u1") == o);
	CHECK(dependents("rs1") == 1 && on_node("n1") == 1);
	CHECK(flushes == 2);

	/* Not newer than the version held: ignored, nothing delivered. */
	CHECK(mput("a", "p1", "u1", 11, "rs1", "n1", "Pending") == 0);
	CHECK(mput("a", "p1", "u1", 12, "rs1", "n1", "Running") == 0);
	CHECK(nev == 2 && flushes == 2);
	CHECK(store_get(mirror, "pods", "a", "p1")->rev == 12);
	CHECK(store_rev(mirror) == 12);
	/* Bad bytes change nothing. */
	CHECK(store_mirror_put(mirror, "pods", "a", "p1", BYTES("{\"x\":"),
	    13) == -EINVAL);
	CHECK(store_mirror_put(mirror, "pods", "a", "p1", BYTES("[1]"), 13) ==
	    -EINVAL);
	CHECK(nev == 2 && store_get(mirror, "pods", "a", "p1")->rev == 12);

	/* Versions of other kinds and keys come in any order; store_rev is
	   the largest seen. */
	CHECK(mput("b", "p2", "u2", 5, NULL, "n1", NULL) == 1);
	CHECK(store_rev(mirror) == 13);	/* the bad put's 13 was seen */
	CHECK(mput("c", "p0", "u3", 14, "rs1", NULL, NULL) == 1);
	t = cJSON_Parse(pod("a", "p0", "u4", 9, NULL, "n2", NULL));
	CHECK(store_mirror_put_tree(mirror, "pods", "a", "p0", t, 9) == 1);
	cJSON_Delete(t);
	CHECK(store_mirror_put(mirror, "nodes", NULL, "n1",
	    BYTES("{\"metadata\":{\"name\":\"n1\",\"uid\":\"un1\"}}"), 3) ==
	    1);
	CHECK(nev == 6 && ev_is(3, STORE_ADDED, "pods/c/p0", 14, 0) &&
	    ev_is(5, STORE_ADDED, "nodes//n1", 3, 0));
	CHECK(store_rev(mirror) == 14);
	CHECK(on_node("n1") == 2 && on_node("n2") == 1);
	CHECK(dependents("rs1") == 2);
	CHECK(store_get_key(mirror, "nodes//n1") == store_get_uid(mirror,
	    "un1"));
	n = store_list(mirror, "pods", NULL, &objs);
	CHECK(n == 4);
	CHECK(n == 4 && strcmp(objs[0]->key, "pods/a/p0") == 0 &&
	    strcmp(objs[1]->key, "pods/a/p1") == 0 &&
	    strcmp(objs[2]->key, "pods/b/p2") == 0 &&
	    strcmp(objs[3]->key, "pods/c/p0") == 0);
	CHECK(store_list(mirror, "pods", "a", &objs) == 2);
	n = store_list_refs(mirror, "pods", &refs);
	CHECK(n == 4);
	store_sort(refs, n);
	CHECK(n == 4 && refs[3] == store_get(mirror, "pods", "c", "p0"));
	for (i = 0; i < n; i++)
		store_obj_unref(refs[i]);
	free(refs);

	/* A mirror has nothing to wait for. */
	store_when_durable(mirror, store_rev(mirror), on_durable, NULL);
	store_when_durable(mirror, 1000, on_durable, NULL);
	CHECK(durables == 2);

	/* Delete: DELETED with the final state held, indexes cleared. */
	nev = 0;
	CHECK(store_mirror_delete(mirror, "pods", "a", "p1", NULL, 0, 15) ==
	    1);
	CHECK(nev == 1 && ev_is(0, STORE_DELETED, "pods/a/p1", 12, 12) &&
	    evs[0].same);
	CHECK(store_get(mirror, "pods", "a", "p1") == NULL);
	CHECK(store_get_uid(mirror, "u1") == NULL);
	CHECK(dependents("rs1") == 1 && on_node("n1") == 1);
	CHECK(store_rev(mirror) == 15);
	/* An event from before the deletion does not bring it back; an
	   absent key's deletion is ignored; an older deletion too. */
	CHECK(mput("a", "p1", "u1", 14, "rs1", "n1", "Running") == 0);
	CHECK(store_mirror_delete(mirror, "pods", "a", "p1", NULL, 0, 15) ==
	    0);
	CHECK(store_mirror_delete(mirror, "pods", "z", "none", NULL, 0, 15) ==
	    0);
	CHECK(store_mirror_delete(mirror, "pods", "c", "p0", NULL, 0, 13) ==
	    0);
	CHECK(nev == 1 && store_get(mirror, "pods", "a", "p1") == NULL);
	/* Recreated after its deletion: ADDED. */
	CHECK(mput("a", "p1", "u5", 16, NULL, NULL, NULL) == 1);
	CHECK(nev == 2 && ev_is(1, STORE_ADDED, "pods/a/p1", 16, 0));
	/* The final state given as bytes, at the deletion's revision. */
	{
		const char *j = pod("c", "p0", "u3", 17, "rs1", NULL,
		    "Succeeded");

		CHECK(store_mirror_delete(mirror, "pods", "c", "p0", j,
		    strlen(j), 17) == 1);
		CHECK(nev == 3 && ev_is(2, STORE_DELETED, "pods/c/p0", 17,
		    14));
		CHECK(dependents("rs1") == 0);
	}
	/* A new uid under a held name: the old object DELETED, the new
	   ADDED (a deletion this mirror missed). */
	CHECK(mput("a", "p1", "u6", 18, NULL, "n3", NULL) == 1);
	CHECK(nev == 5 && ev_is(3, STORE_DELETED, "pods/a/p1", 16, 16) &&
	    ev_is(4, STORE_ADDED, "pods/a/p1", 18, 0) &&
	    strcmp(evs[4].uid, "u6") == 0);
	CHECK(store_get_uid(mirror, "u5") == NULL &&
	    store_get_uid(mirror, "u6") != NULL && on_node("n3") == 1);

	/*
	 * Held now: a/p0 (9), a/p1 (18), b/p2 (5). Add f/p7 (8), g/p8 (40,
	 * newer than the list), and delete e/p6 at 35 (a tombstone newer
	 * than the list's version of it).
	 */
	CHECK(mput("f", "p7", "u7", 8, NULL, NULL, NULL) == 1);
	CHECK(mput("e", "p6", "u8", 21, NULL, NULL, NULL) == 1);
	CHECK(store_mirror_delete(mirror, "pods", "e", "p6", NULL, 0, 35) ==
	    1);
	CHECK(mput("g", "p8", "u9", 40, NULL, NULL, NULL) == 1);
	nev = 0;
	flushes = 0;
	derived = 0;
	{
		/* The re-list at 30: a/p0 unchanged, a/p1 changed, d/p5 new,
		   e/p6 deleted since, f/p7 unreadable (kept), b/p2 gone,
		   g/p8 newer than the list (kept). */
		const char *j[3];
		cJSON *tree = cJSON_Parse(pod("d", "p5", "u10", 25, "rs2",
		    "n4", NULL));
		struct store_mirror_item items[5];

		j[0] = pod("a", "p0", "u4", 9, NULL, "n2", NULL);
		j[1] = pod("a", "p1", "u6", 20, NULL, "n3", "Running");
		j[2] = pod("e", "p6", "u8", 28, NULL, NULL, NULL);
		memset(items, 0, sizeof items);
		items[0] = (struct store_mirror_item){ "a", "p0", j[0],
		    strlen(j[0]), NULL, 9 };
		items[1] = (struct store_mirror_item){ "a", "p1", j[1],
		    strlen(j[1]), NULL, 20 };
		items[2] = (struct store_mirror_item){ "d", "p5", NULL, 0,
		    tree, 25 };
		items[3] = (struct store_mirror_item){ "e", "p6", j[2],
		    strlen(j[2]), NULL, 28 };
		items[4] = (struct store_mirror_item){ "f", "p7", "{bad", 4,
		    NULL, 29 };
		CHECK(store_mirror_replace(mirror, "pods", items, 5, 30) == 3);
		CHECK(nev == 3);
		CHECK(ev_is(0, STORE_MODIFIED, "pods/a/p1", 20, 18));
		CHECK(ev_is(1, STORE_ADDED, "pods/d/p5", 25, 0));
		CHECK(ev_is(2, STORE_DELETED, "pods/b/p2", 5, 5));
		CHECK(flushes == 1);
		CHECK(derived == 2);
		CHECK(store_get(mirror, "pods", "d", "p5")->derived != NULL);
		CHECK(store_get(mirror, "pods", "e", "p6") == NULL);
		CHECK(store_get(mirror, "pods", "f", "p7") != NULL &&
		    store_get(mirror, "pods", "f", "p7")->rev == 8);
		CHECK(store_get(mirror, "pods", "g", "p8") != NULL);
		CHECK(store_get(mirror, "pods", "b", "p2") == NULL);
		CHECK(on_node("n1") == 0 && on_node("n4") == 1);
		CHECK(dependents("rs2") == 1);
		CHECK(store_get_uid(mirror, "u10") ==
		    store_get(mirror, "pods", "d", "p5"));
		CHECK(store_rev(mirror) == 40);

		/* The same list again (a resync): nothing delivered. */
		nev = 0;
		CHECK(store_mirror_replace(mirror, "pods", items, 5, 30) == 0);
		CHECK(nev == 0 && flushes == 2);
		cJSON_Delete(tree);
	}
	n = store_list(mirror, "pods", NULL, &objs);
	CHECK(n == 5);
	CHECK(n == 5 && strcmp(objs[0]->key, "pods/a/p0") == 0 &&
	    strcmp(objs[1]->key, "pods/a/p1") == 0 &&
	    strcmp(objs[2]->key, "pods/d/p5") == 0 &&
	    strcmp(objs[3]->key, "pods/f/p7") == 0 &&
	    strcmp(objs[4]->key, "pods/g/p8") == 0);
	/* An empty list at 0 is all there is: everything goes, sorted. */
	nev = 0;
	CHECK(store_mirror_replace(mirror, "nodes", NULL, 0, 0) == 1);
	CHECK(nev == 1 && ev_is(0, STORE_DELETED, "nodes//n1", 3, 3));
	CHECK(store_count(mirror, "nodes") == 0);

	/* The tombstone of e/p6 (35) holds until the watch passes it. */
	CHECK(mput("e", "p6", "u8", 33, NULL, NULL, NULL) == 0);
	store_mirror_progress(mirror, "pods", 35);
	CHECK(mput("e", "p6", "u8", 33, NULL, NULL, NULL) == 1);
	store_mirror_progress(mirror, "pods", 50);
	CHECK(store_rev(mirror) == 50);

	/* A subscriber's own put during a delivery is delivered after. */
	nev = 0;
	CHECK(store_mirror_put(mirror, "pods", "r", "trigger",
	    BYTES("{\"metadata\":{\"name\":\"trigger\"}}"), 70) == 1);
	CHECK(nev == 2 && ev_is(0, STORE_ADDED, "pods/r/trigger", 70, 0) &&
	    ev_is(1, STORE_ADDED, "pods/r/echo", 71, 0));

	/* store_put still works on a mirror: next revision, at once. */
	nev = 0;
	t = cJSON_Parse(pod("h", "local", "u11", 0, NULL, NULL, NULL));
	CHECK(store_put(mirror, "pods", "h", "local", t) == 72);
	CHECK(nev == 1 && ev_is(0, STORE_ADDED, "pods/h/local", 72, 0));
	CHECK(store_delete(mirror, "pods", "h", "local", t) == 73);
	CHECK(nev == 2 && ev_is(1, STORE_DELETED, "pods/h/local", 73, 72));
	cJSON_Delete(t);

	/* Versions built apart (store_mirror_version, as the remote
	   client's decoding thread builds them): put, the filters run on
	   the loop's side; a stale one dropped (and freed); deleted with
	   its final state. */
	nev = 0;
	t = cJSON_Parse(pod("v", "built", "u12", 80, NULL, "n9", "Running"));
	{
		store_obj *b = store_mirror_version("pods", "v", "built", t, 80);

		CHECK(b != NULL && b->rev == 80 && strcmp(b->node_name, "n9")
		    == 0 && b->fknown == 0 && b->derived == NULL);
		CHECK(store_mirror_put_version(mirror, b) == 1);
	}
	cJSON_Delete(t);
	CHECK(nev == 1 && ev_is(0, STORE_ADDED, "pods/v/built", 80, 0));
	o = store_get(mirror, "pods", "v", "built");
	CHECK(o != NULL && store_obj_filtered(o, id) == 1 &&
	    on_node("n9") == 1);
	t = cJSON_Parse(pod("v", "built", "u12", 79, NULL, "n9", "Pending"));
	CHECK(store_mirror_put_version(mirror,
	    store_mirror_version("pods", "v", "built", t, 79)) == 0);
	cJSON_Delete(t);
	CHECK(nev == 1 && store_get(mirror, "pods", "v", "built")->rev == 80);
	t = cJSON_Parse(pod("v", "built", "u12", 81, NULL, "n9", "Succeeded"));
	CHECK(store_mirror_delete_version(mirror,
	    store_mirror_version("pods", "v", "built", t, 81)) == 1);
	cJSON_Delete(t);
	CHECK(nev == 2 && ev_is(1, STORE_DELETED, "pods/v/built", 81, 80));
	CHECK(store_get(mirror, "pods", "v", "built") == NULL);
	/* Older than the deletion: the tombstone keeps it out. */
	t = cJSON_Parse(pod("v", "built", "u12", 80, NULL, "n9", "Running"));
	CHECK(store_mirror_put_version(mirror,
	    store_mirror_version("pods", "v", "built", t, 80)) == 0);
	cJSON_Delete(t);
	CHECK(nev == 2 && store_get(mirror, "pods", "v", "built") == NULL);
	CHECK(store_mirror_version("pods", "v", "x", NULL, 1) == NULL);

	/* A write's answer, text and tree: the text kept as it came, the
	   fields from the tree, stale ones ignored as any put. */
	{
		const char *j = pod("v", "ans", "u14", 95, NULL, "nb", "Running");
		char *spaced = malloc(strlen(j) + 3);

		sprintf(spaced, " %s\n", j);
		t = cJSON_Parse(j);
		nev = 0;
		CHECK(store_mirror_put_parsed(mirror, "pods", "v", "ans", spaced,
		    strlen(spaced), t, 95) == 1);
		o = store_get(mirror, "pods", "v", "ans");
		CHECK(o != NULL && o->rev == 95 && o->json->len ==
		    strlen(spaced) && strcmp(o->json->data, spaced) == 0 &&
		    strcmp(o->uid, "u14") == 0 &&
		    strcmp(o->node_name, "nb") == 0 &&
		    store_obj_filtered(o, id) == 1);
		CHECK(nev == 1 && ev_is(0, STORE_ADDED, "pods/v/ans", 95, 0));
		CHECK(store_mirror_put_parsed(mirror, "pods", "v", "ans", spaced,
		    strlen(spaced), t, 95) == 0);
		cJSON_Delete(t);
		free(spaced);
	}
	store_filter_remove(mirror, id);

	store_close(mirror);
	CHECK(dropped == 2);
	return check_result("test-mirror");
}
