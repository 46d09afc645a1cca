/*
 * Tests for the event recorder (client/recorder.c) over a real store and
 * registry, through the embedded client: the same event twice is one Event
 * counted twice, and n repeats at once (recorder_event_n) count n; past
 * RECORDER_SIMILAR different messages for one object,
 * type and reason, the rest go to one combined Event whose count grows
 * (and an earlier message still counts on its own Event); another reason
 * or type is another Event; a cluster-scoped object's Events go to
 * "default"; an object without a name records nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "client/embedded.h"
#include "client/recorder.h"
#include "lib/json.h"
#include "registry/resource.h"

#define COMBINED "(combined from similar events): "

static store *st;

/* The Events about name with this reason, as new trees (n of them). */
static size_t
events_of(const char *name, const char *reason, cJSON **out, size_t max)
{
	store_obj *const *objs;
	size_t n = store_list(st, "events", NULL, &objs), i, k = 0;

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);

		if (strcmp(json_str(t, "involvedObject.name"), name) == 0 &&
		    strcmp(json_str(t, "reason"), reason) == 0 && k < max)
			out[k++] = t;
		else
			cJSON_Delete(t);
	}
	return k;
}

static void
free_all(cJSON **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_Delete(v[i]);
}

static double
count_of(const cJSON *ev)
{
	return cJSON_GetNumberValue(json_at(ev, "count"));
}

static struct recorder_obj
pod(const char *name, const char *uid)
{
	struct recorder_obj o = { "v1", "Pod", "default", name, uid, "7" };

	return o;
}

static void
test_repeat(recorder *r)
{
	struct recorder_obj o = pod("p1", "uid-p1");
	cJSON *ev[4];
	size_t n;

	CHECK(recorder_event(r, &o, "Normal", "Started", "started x", NULL) ==
	    201);
	CHECK(recorder_event(r, &o, "Normal", "Started", "started x", NULL) ==
	    200);
	n = events_of("p1", "Started", ev, 4);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(count_of(ev[0]) == 2);
		CHECK_STR(json_str(ev[0], "message"), "started x");
		CHECK_STR(json_str(ev[0], "type"), "Normal");
		CHECK_STR(json_str(ev[0], "metadata.namespace"), "default");
		CHECK_STR(json_str(ev[0], "involvedObject.kind"), "Pod");
		CHECK_STR(json_str(ev[0], "involvedObject.namespace"),
		    "default");
		CHECK_STR(json_str(ev[0], "involvedObject.uid"), "uid-p1");
		CHECK_STR(json_str(ev[0], "involvedObject.resourceVersion"),
		    "7");
		CHECK_STR(json_str(ev[0], "source.component"), "test");
		CHECK_STR(json_str(ev[0], "reportingComponent"), "test");
		CHECK(json_str(ev[0], "firstTimestamp") != NULL);
		CHECK(json_str(ev[0], "lastTimestamp") != NULL);
	}
	free_all(ev, n);
}

static void
test_similar(recorder *r)
{
	struct recorder_obj o = pod("p2", "uid-p2");
	cJSON *ev[RECORDER_SIMILAR + 4];
	char msg[64];
	size_t n, i, ncombined = 0, nplain = 0;
	const cJSON *combined = NULL;

	for (i = 0; i <= RECORDER_SIMILAR; i++) {
		snprintf(msg, sizeof msg, "failed %zu", i);
		CHECK(recorder_event(r, &o, "Warning", "Failed", msg, NULL) ==
		    201);
	}
	n = events_of("p2", "Failed", ev, RECORDER_SIMILAR + 4);
	CHECK(n == RECORDER_SIMILAR + 1);
	for (i = 0; i < n; i++) {
		const char *m = json_str(ev[i], "message");

		if (strncmp(m, COMBINED, strlen(COMBINED)) == 0) {
			ncombined++;
			combined = ev[i];
		} else if (count_of(ev[i]) == 1)
			nplain++;
	}
	CHECK(nplain == RECORDER_SIMILAR);
	CHECK(ncombined == 1);
	if (combined != NULL) {
		snprintf(msg, sizeof msg, COMBINED "failed %d",
		    RECORDER_SIMILAR);
		CHECK_STR(json_str(combined, "message"), msg);
		CHECK(count_of(combined) == 1);
	}
	free_all(ev, n);

	/* Further messages count on the combined Event. */
	CHECK(recorder_event(r, &o, "Warning", "Failed", "failed again",
	    NULL) == 200);
	CHECK(recorder_event(r, &o, "Warning", "Failed", "failed once more",
	    NULL) == 200);
	/* A message seen before the table filled counts on its own Event. */
	CHECK(recorder_event(r, &o, "Warning", "Failed", "failed 0", NULL) ==
	    200);
	n = events_of("p2", "Failed", ev, RECORDER_SIMILAR + 4);
	CHECK(n == RECORDER_SIMILAR + 1);
	ncombined = 0;
	for (i = 0; i < n; i++) {
		const char *m = json_str(ev[i], "message");

		if (strncmp(m, COMBINED, strlen(COMBINED)) == 0) {
			ncombined++;
			CHECK(count_of(ev[i]) == 3);
			CHECK_STR(m, COMBINED "failed once more");
		} else if (strcmp(m, "failed 0") == 0)
			CHECK(count_of(ev[i]) == 2);
		else
			CHECK(count_of(ev[i]) == 1);
	}
	CHECK(ncombined == 1);
	free_all(ev, n);

	/* Another object's messages are counted apart. */
	o = pod("p3", "uid-p3");
	CHECK(recorder_event(r, &o, "Warning", "Failed", "failed 99", NULL) ==
	    201);
	n = events_of("p3", "Failed", ev, 4);
	CHECK(n == 1);
	if (n == 1)
		CHECK_STR(json_str(ev[0], "message"), "failed 99");
	free_all(ev, n);
}

static void
test_other_reason(recorder *r)
{
	struct recorder_obj o = pod("p4", "uid-p4");
	cJSON *ev[4];
	size_t n;

	CHECK(recorder_event(r, &o, "Normal", "Pulled", "same text", NULL) ==
	    201);
	CHECK(recorder_event(r, &o, "Normal", "Created", "same text", NULL) ==
	    201);
	CHECK(recorder_event(r, &o, "Warning", "Created", "same text", NULL) ==
	    201);
	n = events_of("p4", "Pulled", ev, 4);
	CHECK(n == 1);
	if (n == 1)
		CHECK(count_of(ev[0]) == 1);
	free_all(ev, n);
	n = events_of("p4", "Created", ev, 4);
	CHECK(n == 2);
	free_all(ev, n);
}

static void
test_repeats_at_once(recorder *r)
{
	struct recorder_obj o = pod("p9", "uid-p9");
	cJSON *ev[4];
	size_t n;

	CHECK(recorder_event_n(r, &o, "Warning", "Failed", "again", 3, NULL) ==
	    201);
	CHECK(recorder_event_n(r, &o, "Warning", "Failed", "again", 4, NULL) ==
	    200);
	CHECK(recorder_event(r, &o, "Warning", "Failed", "again", NULL) == 200);
	n = events_of("p9", "Failed", ev, 4);
	CHECK(n == 1);
	if (n == 1)
		CHECK(count_of(ev[0]) == 8);
	free_all(ev, n);
}

static void
test_cluster_scoped(recorder *r)
{
	struct recorder_obj o = { "v1", "Node", "", "n1", "uid-n1", NULL };
	struct recorder_obj none = { "v1", "Pod", "default", NULL, NULL, NULL };
	cJSON *ev[4], *t = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":"
	    "\"Node\",\"metadata\":{\"name\":\"n2\",\"uid\":\"u2\"}}");
	struct recorder_obj from;
	size_t n;

	CHECK(recorder_event(r, &o, "Normal", "Ready", "ready", NULL) == 201);
	n = events_of("n1", "Ready", ev, 4);
	CHECK(n == 1);
	if (n == 1) {
		CHECK_STR(json_str(ev[0], "metadata.namespace"), "default");
		CHECK(json_str(ev[0], "involvedObject.namespace") == NULL);
		CHECK(json_str(ev[0], "involvedObject.resourceVersion") ==
		    NULL);
	}
	free_all(ev, n);
	CHECK(recorder_event(r, &none, "Normal", "Ready", "ready", NULL) == 0);
	recorder_obj_of(t, &from);
	CHECK_STR(from.name, "n2");
	CHECK_STR(from.uid, "u2");
	CHECK_STR(from.kind, "Node");
	CHECK(from.ns == NULL);
	cJSON_Delete(t);
}

int
main(void)
{
	char dir[] = "/tmp/volray-test-recorder.XXXXXX";
	char *cause = NULL, cmd[300];
	uv_loop_t *loop = uv_default_loop();
	registry *rg;
	client *cl;
	recorder *r;

	CHECK(mkdtemp(dir) != NULL);
	resource_init();
	CHECK(store_open(loop, dir, &st, &cause) == 0);
	rg = registry_new(st);
	CHECK(registry_bootstrap(rg, NULL, &cause) == 0);
	free(cause);
	cl = embedded_new(st, rg);
	r = recorder_new(cl, "test");

	test_repeat(r);
	test_similar(r);
	test_other_reason(r);
	test_cluster_scoped(r);
	test_repeats_at_once(r);

	recorder_free(r);
	client_free(cl);
	store_close(st);
	uv_run(loop, UV_RUN_NOWAIT);
	registry_free(rg);
	resource_shutdown();
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_result("test-recorder");
}
