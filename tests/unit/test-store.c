/*
 * Unit tests for the store: versions and revisions, ordered and namespaced
 * lists, the uid and owner indexes, events delivered only once durable, and
 * recovery of everything after close and reopen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "store/store.h"

static int events, durable_calls;
static enum store_event_type last_type;

static void
on_event(void *arg, const store_event *e)
{
	(void)arg;
	events++;
	last_type = e->type;
}

static void
on_durable(void *arg)
{
	(void)arg;
	durable_calls++;
}

/* A store filter: is the pod in namespace "a"? */
static int
in_a(void *arg, const cJSON *tree)
{
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(tree, "metadata"), "namespace");

	(*(int *)arg)++;
	return cJSON_IsString(ns) && strcmp(ns->valuestring, "a") == 0;
}

static int
not_a(void *arg, const cJSON *tree)
{
	return !in_a(arg, tree);
}

static cJSON *
obj(const char *ns, const char *name, const char *uid, const char *owner)
{
	char buf[1024];

	snprintf(buf, sizeof buf, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
	    "\"labels\":{\"app\":\"x\"}%s%s%s}}", name, ns, uid,
	    owner ? ",\"ownerReferences\":[{\"uid\":\"" : "",
	    owner ? owner : "", owner ? "\",\"kind\":\"ReplicaSet\","
	    "\"name\":\"rs\",\"controller\":true}]" : "");
	return cJSON_Parse(buf);
}

static void
put(store *st, const char *ns, const char *name, const char *uid,
    const char *owner)
{
	cJSON *o = obj(ns, name, uid, owner);

	store_put(st, "pods", ns, name, o);
	cJSON_Delete(o);
}

static void
put_labels(store *st, const char *ns, const char *name, const char *labels)
{
	char buf[512];
	cJSON *o;

	snprintf(buf, sizeof buf, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
	    "\"labels\":%s}}", name, ns, labels);
	o = cJSON_Parse(buf);
	store_put(st, "pods", ns, name, o);
	cJSON_Delete(o);
}

/* The names store_list_selected gives for sel in ns, comma-separated. */
static const char *
selected(store *st, const char *ns, const char *sel)
{
	static char out[256];
	selector *s = selector_parse_labels(sel, NULL);
	store_obj **objs;
	ssize_t n, i;

	n = store_list_selected(st, "pods", ns, s, &objs);
	selector_free(s);
	if (n < 0)
		return "scan";
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, objs[i]->name);
	}
	free(objs);
	return out;
}

/* The index of labels: sets kept as labels change, the smallest chosen. */
static void
labels_index(store *st)
{
	put_labels(st, "l", "z", "{\"c\":\"rc1\",\"t\":\"head\"}");
	put_labels(st, "l", "y", "{\"c\":\"rc1\",\"t\":\"worker\"}");
	put_labels(st, "l", "x", "{\"c\":\"rc2\",\"t\":\"worker\"}");
	put_labels(st, "m", "w", "{\"c\":\"rc1\",\"t\":\"head\"}");
	CHECK_STR(selected(st, "l", "c=rc1"), "y,z");
	CHECK_STR(selected(st, "l", "c=rc1,t=head"), "z");
	CHECK_STR(selected(st, "l", "t in (worker),c!=rc2"), "y");
	CHECK_STR(selected(st, "m", "c=rc1"), "w");
	CHECK_STR(selected(st, "l", "c=rc3"), "");
	CHECK_STR(selected(st, "l", "c=rc1,t=none"), "");
	/* No requirement of one exact value: the caller scans. */
	CHECK_STR(selected(st, "l", "c!=rc1"), "scan");
	CHECK_STR(selected(st, "l", "t in (head,worker)"), "scan");
	/* A relabelled object moves between sets; a deleted one leaves. */
	put_labels(st, "l", "y", "{\"c\":\"rc2\",\"t\":\"worker\"}");
	CHECK_STR(selected(st, "l", "c=rc1"), "z");
	CHECK_STR(selected(st, "l", "c=rc2"), "x,y");
	put_labels(st, "l", "y", "{}");
	CHECK_STR(selected(st, "l", "c=rc2"), "x");
	{
		cJSON *last = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":"
		    "\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":\"l\"}}");

		store_delete(st, "pods", "l", "x", last);
		cJSON_Delete(last);
	}
	CHECK_STR(selected(st, "l", "c=rc2"), "");
	CHECK_STR(selected(st, "l", "t=worker"), "");
	put_labels(st, "l", "x", "{\"c\":\"rc2\"}");
	CHECK_STR(selected(st, "l", "c=rc2"), "x");
}

int
main(void)
{
	char dir[] = "/tmp/volray-test-store.XXXXXX";
	uv_loop_t *loop = uv_default_loop();
	store *st;
	char *cause = NULL;
	store_obj *const *objs;
	const store_obj *o;
	const char **keys;
	uint64_t rev;
	size_t n;
	cJSON *t;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(store_open(loop, dir, &st, &cause) == 0);
	store_subscribe(st, on_event, NULL);
	CHECK(store_rev(st) == 0);

	put(st, "b", "p2", "u2", NULL);
	put(st, "a", "p1", "u1", NULL);
	put(st, "b", "p1", "u3", "u1");
	rev = store_rev(st);
	CHECK(rev == 3);
	/* Nothing is observed before the log says durable. */
	CHECK(events == 0);
	store_when_durable(st, rev, on_durable, NULL);
	while (durable_calls == 0)
		uv_run(loop, UV_RUN_ONCE);
	CHECK(events == 3);
	CHECK(last_type == STORE_ADDED);

	n = store_list(st, "pods", NULL, &objs);
	CHECK(n == 3);
	CHECK(n == 3 && strcmp(objs[0]->key, "pods/a/p1") == 0);
	CHECK(n == 3 && strcmp(objs[1]->key, "pods/b/p1") == 0);
	CHECK(n == 3 && strcmp(objs[2]->key, "pods/b/p2") == 0);
	n = store_list(st, "pods", "b", &objs);
	CHECK(n == 2);
	CHECK(store_list(st, "pods", "c", &objs) == 0);

	o = store_get(st, "pods", "b", "p2");
	CHECK(o != NULL && o->rev == 1);
	t = o ? store_obj_tree(o) : NULL;
	CHECK(t != NULL && strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(t,
	    "metadata"), "resourceVersion")->valuestring, "1") == 0);
	cJSON_Delete(t);
	CHECK(store_get_uid(st, "u3") == store_get(st, "pods", "b", "p1"));
	CHECK(store_dependents(st, "u1", &keys) == 1);
	CHECK(strcmp(keys[0], "pods/b/p1") == 0);
	CHECK(o != NULL && o->labels != NULL);

	/* Replace and delete. */
	put(st, "b", "p2", "u2", NULL);
	CHECK(store_get(st, "pods", "b", "p2")->rev == 4);
	t = obj("b", "p1", "u3", "u1");
	store_delete(st, "pods", "b", "p1", t);
	cJSON_Delete(t);
	CHECK(store_get(st, "pods", "b", "p1") == NULL);
	CHECK(store_dependents(st, "u1", &keys) == 0);
	CHECK(store_get_uid(st, "u3") == NULL);
	durable_calls = 0;
	store_when_durable(st, store_rev(st), on_durable, NULL);
	while (durable_calls == 0)
		uv_run(loop, UV_RUN_ONCE);
	CHECK(events == 5);
	CHECK(last_type == STORE_DELETED);
	store_close(st);
	uv_run(loop, UV_RUN_NOWAIT);

	/* Reopen: the same state and revision come back. */
	CHECK(store_open(loop, dir, &st, &cause) == 0);
	CHECK(store_rev(st) == 5);
	CHECK(store_count(st, "pods") == 2);
	CHECK(store_get(st, "pods", "b", "p1") == NULL);
	CHECK(store_get(st, "pods", "b", "p2") != NULL &&
	    store_get(st, "pods", "b", "p2")->rev == 4);
	CHECK(store_get_uid(st, "u1") != NULL);
	{
		/* Filters judge versions written after them, from the
		   writer's tree; a loaded version is not known. */
		int calls = 0, id = store_filter_add(st, "pods", in_a, &calls),
		    i;

		CHECK(id == 0);
		CHECK(store_obj_filtered(store_get(st, "pods", "b", "p2"), id) ==
		    -1);
		put(st, "a", "p9", "u9", NULL);
		put(st, "b", "p8", "u8", NULL);
		CHECK(calls == 2);
		CHECK(store_obj_filtered(store_get(st, "pods", "a", "p9"), id) ==
		    1);
		CHECK(store_obj_filtered(store_get(st, "pods", "b", "p8"), id) ==
		    0);
		store_filter_remove(st, id);
		put(st, "a", "p7", "u7", NULL);
		CHECK(calls == 2);
		CHECK(store_obj_filtered(store_get(st, "pods", "a", "p7"), id) ==
		    -1);
		/* Past STORE_MAX_FILTERS in use, -1. */
		for (i = 1; i < STORE_MAX_FILTERS; i++)
			CHECK(store_filter_add(st, "nodes", in_a, &calls) == i);
		CHECK(store_filter_count(st) == STORE_MAX_FILTERS - 1);
		CHECK(store_filter_add(st, "nodes", in_a, &calls) >= 0);
		CHECK(store_filter_add(st, "nodes", in_a, &calls) == -1);
		CHECK(store_filter_count(st) == STORE_MAX_FILTERS);
	}
	{
		/* A slot given back is taken again, many times over (a
		   controller reloaded); what an earlier filter of the slot
		   said of a version is not believed by the new filter. */
		int calls = 0, id = STORE_MAX_FILTERS - 1, nid, i;

		for (i = 0; i < 3 * STORE_MAX_FILTERS; i++) {
			store_filter_remove(st, id);
			nid = store_filter_add(st, "pods", in_a, &calls);
			CHECK(nid >= 0 && nid != id);
			id = nid;
		}
		CHECK(store_filter_count(st) == STORE_MAX_FILTERS);
		put(st, "a", "p6", "u6", NULL);
		CHECK(calls == 1);
		CHECK(store_obj_filtered(store_get(st, "pods", "a", "p6"), id) ==
		    1);
		store_filter_remove(st, id);
		/* A stale handle removes nothing. */
		nid = store_filter_add(st, "pods", not_a, &calls);
		store_filter_remove(st, id);
		CHECK(store_filter_count(st) == STORE_MAX_FILTERS);
		CHECK(store_obj_filtered(store_get(st, "pods", "a", "p6"),
		    nid) == -1);
		put(st, "a", "p5", "u5", NULL);
		CHECK(store_obj_filtered(store_get(st, "pods", "a", "p5"),
		    nid) == 0);
	}
	CHECK(store_rev(st) == 10);
	{
		/* The index by node: a pod is listed once bound, and no
		   longer when deleted. */
		cJSON *t = obj("a", "onnode", "u40", NULL);
		const char **keys;

		CHECK(store_on_node(st, "n1", &keys) == 0);
		store_put(st, "pods", "a", "onnode", t);
		CHECK(store_on_node(st, "n1", &keys) == 0);
		cJSON_AddItemToObject(t, "spec", cJSON_Parse(
		    "{\"nodeName\":\"n1\"}"));
		store_put(st, "pods", "a", "onnode", t);
		store_put(st, "pods", "a", "onnode", t);	/* a status write */
		CHECK(store_on_node(st, "n1", &keys) == 1 &&
		    strcmp(keys[0], "pods/a/onnode") == 0);
		store_delete(st, "pods", "a", "onnode", t);
		CHECK(store_on_node(st, "n1", &keys) == 0);
		cJSON_Delete(t);
	}
	CHECK(store_rev(st) == 14);
	labels_index(st);
	store_close(st);
	uv_run(loop, UV_RUN_NOWAIT);
	{
		char cmd[256];

		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		CHECK(system(cmd) == 0);
	}
	return check_result("test-store");
}
