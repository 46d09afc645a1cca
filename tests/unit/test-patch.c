/*
 * Tests for patch.c: JSON merge patch (including the RFC 7386 examples),
 * every JSON patch operation and its failures, and strategic merge patch as
 * kubectl sends it for built-in kinds. Every case also checks that the
 * target and the patch are unchanged afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "registry/patch.h"

enum which { MERGE, JSON, STRATEGIC };

/*
 * Applies a patch given as JSON text and returns the compact result, or
 * "error: <cause>", in a static buffer.
 */
static const char *
apply(enum which w, const char *kind, const char *target, const char *patch)
{
	static char	 buf[8192];
	cJSON		*t, *p, *res;
	char		*t0, *p0, *t1, *p1, *out, *cause = NULL;

	t = cJSON_Parse(target);
	p = cJSON_Parse(patch);
	if (t == NULL || p == NULL) {
		fprintf(stderr, "bad test JSON: %s / %s\n", target, patch);
		CHECK(0);
		cJSON_Delete(t);
		cJSON_Delete(p);
		return ("bad test JSON");
	}
	t0 = cJSON_PrintUnformatted(t);
	p0 = cJSON_PrintUnformatted(p);

	switch (w) {
	case MERGE:
		res = patch_merge(t, p, &cause);
		break;
	case JSON:
		res = patch_json(t, p, &cause);
		break;
	default:
		res = patch_strategic(t, p, kind, &cause);
		break;
	}

	t1 = cJSON_PrintUnformatted(t);
	p1 = cJSON_PrintUnformatted(p);
	CHECK_STR(t1, t0);
	CHECK_STR(p1, p0);

	if (res == NULL) {
		CHECK(cause != NULL);
		snprintf(buf, sizeof buf, "error: %s", cause ? cause : "?");
	} else {
		CHECK(cause == NULL);
		out = cJSON_PrintUnformatted(res);
		snprintf(buf, sizeof buf, "%s", out);
		free(out);
	}
	free(cause);
	free(t0);
	free(p0);
	free(t1);
	free(p1);
	cJSON_Delete(res);
	cJSON_Delete(t);
	cJSON_Delete(p);
	return (buf);
}

static void
test_merge(void)
{
	/* Null deletion and nested objects. */
	CHECK_STR(apply(MERGE, NULL,
	    "{\"a\":1,\"b\":{\"c\":2,\"d\":3}}",
	    "{\"b\":{\"c\":null,\"e\":4},\"f\":[1]}"),
	    "{\"a\":1,\"b\":{\"d\":3,\"e\":4},\"f\":[1]}");
	CHECK_STR(apply(MERGE, NULL,
	    "{\"metadata\":{\"labels\":{\"app\":\"x\",\"tier\":\"web\"}}}",
	    "{\"metadata\":{\"labels\":{\"tier\":null,\"env\":\"prod\"}}}"),
	    "{\"metadata\":{\"labels\":{\"app\":\"x\",\"env\":\"prod\"}}}");

	/* RFC 7386 appendix A. */
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"b\"}", "{\"a\":\"c\"}"),
	    "{\"a\":\"c\"}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"b\"}", "{\"b\":\"c\"}"),
	    "{\"a\":\"b\",\"b\":\"c\"}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"b\"}", "{\"a\":null}"), "{}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"b\",\"b\":\"c\"}",
	    "{\"a\":null}"), "{\"b\":\"c\"}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":[\"b\"]}", "{\"a\":\"c\"}"),
	    "{\"a\":\"c\"}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"c\"}", "{\"a\":[\"b\"]}"),
	    "{\"a\":[\"b\"]}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":{\"b\":\"c\"}}",
	    "{\"a\":{\"b\":\"d\",\"c\":null}}"), "{\"a\":{\"b\":\"d\"}}");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":[{\"b\":\"c\"}]}",
	    "{\"a\":[1]}"), "{\"a\":[1]}");
	CHECK_STR(apply(MERGE, NULL, "[\"a\",\"b\"]", "[\"c\",\"d\"]"),
	    "[\"c\",\"d\"]");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"b\"}", "[\"c\"]"), "[\"c\"]");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"foo\"}", "null"), "null");
	CHECK_STR(apply(MERGE, NULL, "{\"a\":\"foo\"}", "\"bar\""), "\"bar\"");
	CHECK_STR(apply(MERGE, NULL, "{\"e\":null}", "{\"a\":1}"),
	    "{\"e\":null,\"a\":1}");
	CHECK_STR(apply(MERGE, NULL, "[1,2]", "{\"a\":\"b\",\"c\":null}"),
	    "{\"a\":\"b\"}");
	CHECK_STR(apply(MERGE, NULL, "{}",
	    "{\"a\":{\"bb\":{\"ccc\":null}}}"), "{\"a\":{\"bb\":{}}}");
}

static void
test_json(void)
{
	const char	*doc;

	doc = "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\"]}}";

	/* add */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/paused\",\"value\":true}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\"],"
	    "\"paused\":true}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/replicas\",\"value\":3}]"),
	    "{\"spec\":{\"replicas\":3,\"list\":[\"a\",\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/list/1\",\"value\":\"x\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"x\",\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/list/-\",\"value\":\"z\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\",\"z\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/list/2\",\"value\":\"z\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\",\"z\"]}}");
	CHECK_STR(apply(JSON, NULL, "[1,2,3]",
	    "[{\"op\":\"add\",\"path\":\"/0\",\"value\":0},"
	    "{\"op\":\"add\",\"path\":\"/2\",\"value\":9},"
	    "{\"op\":\"replace\",\"path\":\"/0\",\"value\":8}]"),
	    "[8,1,9,2,3]");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"\",\"value\":{\"x\":1}}]"),
	    "{\"x\":1}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/spec/list/3\",\"value\":\"z\"}]"),
	    "error: jsonpatch add operation does not apply: "
	    "index out of bounds: /spec/list/3");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"add\",\"path\":\"/nope/x\",\"value\":1}]"),
	    "error: jsonpatch add operation does not apply: "
	    "doc is missing path: /nope/x");

	/* remove */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"remove\",\"path\":\"/spec/replicas\"}]"),
	    "{\"spec\":{\"list\":[\"a\",\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"remove\",\"path\":\"/spec/list/0\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"remove\",\"path\":\"/spec/foo\"}]"),
	    "error: jsonpatch remove operation does not apply: "
	    "doc is missing path: /spec/foo");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"remove\",\"path\":\"/spec/list/2\"}]"),
	    "error: jsonpatch remove operation does not apply: "
	    "index out of bounds: /spec/list/2");

	/* replace */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":5}]"),
	    "{\"spec\":{\"replicas\":5,\"list\":[\"a\",\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/spec/list/1\",\"value\":\"c\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"c\"]}}");
	/* A member missing from an existing object is set (json-patch v4). */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/spec/foo\",\"value\":1}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\"],\"foo\":1}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/nope/foo\",\"value\":1}]"),
	    "error: jsonpatch replace operation does not apply: "
	    "doc is missing path: /nope/foo");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/spec/list/-\",\"value\":1}]"),
	    "error: jsonpatch replace operation does not apply: "
	    "doc is missing path: /spec/list/-");

	/* move */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"move\",\"from\":\"/spec/replicas\","
	    "\"path\":\"/replicas\"}]"),
	    "{\"spec\":{\"list\":[\"a\",\"b\"]},\"replicas\":1}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"move\",\"from\":\"/spec/list/0\","
	    "\"path\":\"/spec/list/-\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"b\",\"a\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"move\",\"from\":\"/spec\",\"path\":\"/spec/x\"}]"),
	    "error: jsonpatch move operation does not apply: "
	    "cannot move /spec into its own child /spec/x");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"move\",\"from\":\"/spec/nope\",\"path\":\"/x\"}]"),
	    "error: jsonpatch move operation does not apply: "
	    "doc is missing from path: /spec/nope");

	/* copy */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"copy\",\"from\":\"/spec/list\",\"path\":\"/l\"}]"),
	    "{\"spec\":{\"replicas\":1,\"list\":[\"a\",\"b\"]},"
	    "\"l\":[\"a\",\"b\"]}");

	/* test */
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"test\",\"path\":\"/spec\",\"value\":"
	    "{\"list\":[\"a\",\"b\"],\"replicas\":1}},"
	    "{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}]"),
	    "{\"spec\":{\"replicas\":2,\"list\":[\"a\",\"b\"]}}");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2},"
	    "{\"op\":\"test\",\"path\":\"/spec/list\","
	    "\"value\":[\"b\",\"a\"]}]"),
	    "error: jsonpatch test operation does not apply: "
	    "testing value /spec/list failed");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"test\",\"path\":\"/spec/replicas\",\"value\":\"1\"}]"),
	    "error: jsonpatch test operation does not apply: "
	    "testing value /spec/replicas failed");

	/* JSON pointer escapes. */
	CHECK_STR(apply(JSON, NULL, "{\"a/b\":1,\"m~n\":2}",
	    "[{\"op\":\"replace\",\"path\":\"/a~1b\",\"value\":3},"
	    "{\"op\":\"remove\",\"path\":\"/m~0n\"}]"), "{\"a/b\":3}");
	CHECK_STR(apply(JSON, NULL, "{\"a\":1}",
	    "[{\"op\":\"add\",\"path\":\"/x~2\",\"value\":3}]"),
	    "error: jsonpatch add operation does not apply: "
	    "invalid path: /x~2");
	CHECK_STR(apply(JSON, NULL, "{\"l\":[1]}",
	    "[{\"op\":\"add\",\"path\":\"/l/01\",\"value\":3}]"),
	    "error: jsonpatch add operation does not apply: "
	    "index out of bounds: /l/01");

	/* Malformed operations. */
	CHECK_STR(apply(JSON, NULL, doc, "{\"op\":\"add\"}"),
	    "error: jsonpatch: patch must be an array of operations");
	CHECK_STR(apply(JSON, NULL, doc, "[1]"),
	    "error: jsonpatch: operation is not an object");
	CHECK_STR(apply(JSON, NULL, doc,
	    "[{\"op\":\"frob\",\"path\":\"/a\"}]"),
	    "error: jsonpatch: unexpected kind: frob");
	CHECK_STR(apply(JSON, NULL, doc, "[{\"op\":\"add\",\"path\":\"/a\"}]"),
	    "error: jsonpatch add operation: missing \"value\"");
	CHECK_STR(apply(JSON, NULL, doc, "[]"), doc);
}

static void
test_strategic_containers(void)
{
	const char	*deploy;

	deploy = "{\"kind\":\"Deployment\",\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},"
	    "{\"name\":\"b\",\"image\":\"b:1\",\"ports\":"
	    "[{\"containerPort\":80,\"protocol\":\"TCP\"}]}]}}}}";

	/* Change one container's image; the other is untouched. */
	CHECK_STR(apply(STRATEGIC, "Deployment", deploy,
	    "{\"spec\":{\"template\":{\"spec\":{\"containers\":"
	    "[{\"name\":\"a\",\"image\":\"a:2\"}]}}}}"),
	    "{\"kind\":\"Deployment\",\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"a:2\"},"
	    "{\"name\":\"b\",\"image\":\"b:1\",\"ports\":"
	    "[{\"containerPort\":80,\"protocol\":\"TCP\"}]}]}}}}");

	/* A new container is appended; container ports merge by port. */
	CHECK_STR(apply(STRATEGIC, "Deployment", deploy,
	    "{\"spec\":{\"template\":{\"spec\":{\"containers\":"
	    "[{\"name\":\"b\",\"ports\":[{\"containerPort\":80,"
	    "\"name\":\"http\"},{\"containerPort\":443}]},"
	    "{\"name\":\"c\",\"image\":\"c:1\"}]}}}}"),
	    "{\"kind\":\"Deployment\",\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},"
	    "{\"name\":\"b\",\"image\":\"b:1\",\"ports\":"
	    "[{\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"http\"},"
	    "{\"containerPort\":443}]},"
	    "{\"name\":\"c\",\"image\":\"c:1\"}]}}}}");

	/* $patch: delete on a container. */
	CHECK_STR(apply(STRATEGIC, "Deployment", deploy,
	    "{\"spec\":{\"template\":{\"spec\":{\"containers\":"
	    "[{\"name\":\"a\",\"$patch\":\"delete\"}]}}}}"),
	    "{\"kind\":\"Deployment\",\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"b\",\"image\":\"b:1\",\"ports\":"
	    "[{\"containerPort\":80,\"protocol\":\"TCP\"}]}]}}}}");

	/* $setElementOrder/containers, with a merge in the same patch. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},"
	    "{\"name\":\"c\"}]}}",
	    "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},"
	    "{\"name\":\"a\"}],\"containers\":[{\"name\":\"a\","
	    "\"image\":\"new\"}]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"a\","
	    "\"image\":\"new\"},{\"name\":\"b\"}]}}");

	/* A list element $patch: replace replaces the whole list. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	    "{\"spec\":{\"containers\":[{\"$patch\":\"replace\"},"
	    "{\"name\":\"z\"}]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"z\"}]}}");

	/* A CronJob's pod template sits deeper and still merges by name. */
	CHECK_STR(apply(STRATEGIC, "CronJob",
	    "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},"
	    "{\"name\":\"b\"}]}}}}}}",
	    "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"2\"}]}}}}}}"),
	    "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"a\",\"image\":\"2\"},"
	    "{\"name\":\"b\"}]}}}}}}");

	/* A list element without its merge key is an error. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	    "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}"),
	    "error: map does not contain declared merge key: name");
}

static void
test_strategic_lists(void)
{
	/* env merges by name, with null deletion inside an element. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
	    "{\"name\":\"X\",\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"2\"}]"
	    "}]}}",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
	    "{\"name\":\"Y\",\"value\":\"3\"},{\"name\":\"Z\",\"value\":\"4\"},"
	    "{\"name\":\"X\",\"value\":null}]}]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
	    "{\"name\":\"X\"},{\"name\":\"Y\",\"value\":\"3\"},"
	    "{\"name\":\"Z\",\"value\":\"4\"}]}]}}");

	/* $deleteFromPrimitiveList/finalizers. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"z\"]}}",
	    "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"y\"]}}"),
	    "{\"metadata\":{\"finalizers\":[\"x\",\"z\"]}}");

	/* finalizers merge as a set: existing order kept, new appended. */
	CHECK_STR(apply(STRATEGIC, "Deployment",
	    "{\"metadata\":{\"finalizers\":[\"x\",\"y\"]}}",
	    "{\"metadata\":{\"finalizers\":[\"y\",\"w\"]}}"),
	    "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"w\"]}}");
	CHECK_STR(apply(STRATEGIC, "Deployment",
	    "{\"metadata\":{\"finalizers\":[\"x\",\"y\"]}}",
	    "{\"metadata\":{\"finalizers\":[\"w\"],"
	    "\"$deleteFromPrimitiveList/finalizers\":[\"x\"]}}"),
	    "{\"metadata\":{\"finalizers\":[\"y\",\"w\"]}}");

	/* $setElementOrder on a primitive list. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"z\"]}}",
	    "{\"metadata\":{\"$setElementOrder/finalizers\":[\"z\",\"x\"]}}"),
	    "{\"metadata\":{\"finalizers\":[\"z\",\"x\",\"y\"]}}");

	/* Service ports merge by port. */
	CHECK_STR(apply(STRATEGIC, "Service",
	    "{\"spec\":{\"ports\":[{\"name\":\"http\",\"port\":80,"
	    "\"targetPort\":8080},{\"name\":\"https\",\"port\":443}]}}",
	    "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":9090},"
	    "{\"port\":53,\"protocol\":\"UDP\"}]}}"),
	    "{\"spec\":{\"ports\":[{\"name\":\"http\",\"port\":80,"
	    "\"targetPort\":9090},{\"name\":\"https\",\"port\":443},"
	    "{\"port\":53,\"protocol\":\"UDP\"}]}}");

	/* Pod conditions by type; ownerReferences by uid. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\","
	    "\"name\":\"rs\"}]},\"status\":{\"conditions\":["
	    "{\"type\":\"Ready\",\"status\":\"False\"},"
	    "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
	    "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\","
	    "\"controller\":true}]},\"status\":{\"conditions\":["
	    "{\"type\":\"Ready\",\"status\":\"True\"}]}}"),
	    "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\","
	    "\"name\":\"rs\",\"controller\":true}]},"
	    "\"status\":{\"conditions\":["
	    "{\"type\":\"Ready\",\"status\":\"True\"},"
	    "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}");

	/* Node taints by key. */
	CHECK_STR(apply(STRATEGIC, "Node",
	    "{\"spec\":{\"taints\":[{\"key\":\"a\","
	    "\"effect\":\"NoSchedule\"}]}}",
	    "{\"spec\":{\"taints\":[{\"key\":\"b\","
	    "\"effect\":\"NoExecute\"}]}}"),
	    "{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"b\",\"effect\":\"NoExecute\"}]}}");

	/* Lists outside the table are replaced, as are all unknown kinds'. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}",
	    "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}"),
	    "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}");
	CHECK_STR(apply(STRATEGIC, "Widget",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
	    "\"x\":1},\"metadata\":{\"finalizers\":[\"f\"]}}",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i\"}]},"
	    "\"metadata\":{\"finalizers\":[\"g\"]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i\"}],"
	    "\"x\":1},\"metadata\":{\"finalizers\":[\"g\"]}}");
	CHECK_STR(apply(STRATEGIC, NULL,
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	    "{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}");

	/* A Service's spec.ports is not a container port list elsewhere. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"ports\":[{\"port\":1}]}}",
	    "{\"spec\":{\"ports\":[{\"port\":2}]}}"),
	    "{\"spec\":{\"ports\":[{\"port\":2}]}}");
}

static void
test_strategic_maps(void)
{
	/* Maps merge recursively; null deletes. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
	    "\"name\":\"p\"}}",
	    "{\"metadata\":{\"labels\":{\"b\":null,\"c\":\"3\"}}}"),
	    "{\"metadata\":{\"labels\":{\"a\":\"1\",\"c\":\"3\"},"
	    "\"name\":\"p\"}}");

	/* $retainKeys keeps only the listed keys. */
	CHECK_STR(apply(STRATEGIC, "Deployment",
	    "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\","
	    "\"rollingUpdate\":{\"maxSurge\":1}},\"replicas\":2}}",
	    "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],"
	    "\"type\":\"Recreate\"}}}"),
	    "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"},\"replicas\":2}}");

	/* $patch: replace on a map. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
	    "\"name\":\"p\"}}",
	    "{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"c\":\"3\"}}}"),
	    "{\"metadata\":{\"labels\":{\"c\":\"3\"},\"name\":\"p\"}}");

	/* $patch: delete on a map removes it. */
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"metadata\":{\"labels\":{\"a\":\"1\"},\"name\":\"p\"}}",
	    "{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}"),
	    "{\"metadata\":{\"name\":\"p\"}}");

	/* Directives never reach the result, even on new subtrees. */
	CHECK_STR(apply(STRATEGIC, "Pod", "{}",
	    "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"}],"
	    "\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"X\","
	    "\"$patch\":\"delete\"}]}]}}"),
	    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[]}]}}");

	/* Malformed directives. */
	CHECK_STR(apply(STRATEGIC, "Pod", "{\"metadata\":{}}",
	    "{\"metadata\":{\"$patch\":\"foo\"}}"),
	    "error: unknown patch type: foo");
	CHECK_STR(apply(STRATEGIC, "Pod",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	    "{\"spec\":{\"containers\":[{\"name\":\"a\","
	    "\"$patch\":\"bar\"}]}}"),
	    "error: unknown patch type: bar");
	CHECK_STR(apply(STRATEGIC, "Pod", "{\"spec\":{}}",
	    "{\"spec\":{\"$retainKeys\":\"x\"}}"),
	    "error: invalid patch: $retainKeys must be a list of strings");
	CHECK_STR(apply(STRATEGIC, "Pod", "{}", "[1]"),
	    "error: strategic merge patch must be a JSON object");
}

int
main(void)
{
	test_merge();
	test_json();
	test_strategic_containers();
	test_strategic_lists();
	test_strategic_maps();
	return (check_result("test-patch"));
}
