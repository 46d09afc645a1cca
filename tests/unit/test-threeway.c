/*
 * Tests for the client-side apply of volray(1): the last-applied
 * annotation is encoded as Go's encoding/json writes it (sorted keys,
 * HTML-safe escapes, a trailing newline), and the three-way patch
 * (cli_threeway.c) equals what kubectl 1.32 sent for the same original,
 * file and live object: a ConfigMap and Deployments (strategic merge,
 * with $setElementOrder, $patch: delete, $retainKeys) and a Volcano
 * Queue (JSON merge patch). kubectl's patches were captured with
 * `kubectl apply -v=8` against volrayd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli_lastapplied.h"
#include "cli_threeway.h"
#include "lib/json.h"

/* The patch for (original, file, current) is kubectl's (compared as JSON
 * values: key order aside). */
static void
same_patch(const char *what, const char *original, const char *file,
    const char *current, const char *kind, const char *want)
{
	cJSON *o = cJSON_Parse(original), *f = cJSON_Parse(file);
	cJSON *c = cJSON_Parse(current), *w = cJSON_Parse(want), *m, *p;
	char *cause = NULL, *got;

	CHECK(f != NULL && c != NULL && w != NULL);
	m = cli_lastapplied_modified(f);
	p = cli_threeway_patch(o, m, c, kind, &cause);
	CHECK(p != NULL);
	got = p != NULL ? cJSON_PrintUnformatted(p) : strdup("(null)");
	if (!json_equal(p, w)) {
		fprintf(stderr, "%s:\n   got: %s\n  want: %s\n", what, got, want);
		CHECK(0);
	}
	free(got);
	free(cause);
	cJSON_Delete(o);
	cJSON_Delete(f);
	cJSON_Delete(c);
	cJSON_Delete(w);
	cJSON_Delete(m);
	cJSON_Delete(p);
}

static void
test_encode(void)
{
	cJSON *v = cJSON_Parse("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
	    "\"data\":{\"b\":\"<&>\",\"a\":\"x\\ny\\u2028\"},\"n\":[1,2.5,"
	    "true,null,1e21,0.000001]}");
	char *s = cli_lastapplied_encode(v);

	CHECK_STR(s, "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"x\\ny\\u2028\","
	    "\"b\":\"\\u003c\\u0026\\u003e\"},\"kind\":\"ConfigMap\","
	    "\"n\":[1,2.5,true,null,1e+21,0.000001]}\n");
	free(s);
	cJSON_Delete(v);
}

static void
test_modified(void)
{
	cJSON *f = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	    "\"metadata\":{\"name\":\"c\"}}"), *m;
	const cJSON *a;

	m = cli_lastapplied_modified(f);
	a = cJSON_GetObjectItemCaseSensitive(json_at(m, "metadata.annotations"),
	    CLI_LASTAPPLIED);
	CHECK(cJSON_IsString(a));
	CHECK_STR(a != NULL ? a->valuestring : NULL, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},"
	    "\"name\":\"c\"}}\n");
	cJSON_Delete(f);
	cJSON_Delete(m);
}

/* kubectl apply -v=8's patches: cm2.yaml over cm.yaml with an annotation
 * added by kubectl annotate; d2.yaml (a container added before main,
 * side and env B removed, replicas dropped, a finalizer added) over
 * d.yaml after kubectl set env C=3; q2.yaml over q.yaml after kubectl
 * label; v2.yaml over v.yaml (strategy RollingUpdate to Recreate, a
 * volume's configMap to a secret: $retainKeys). */
static void
test_kubectl_patches(void)
{
	same_patch("cm",
	    "{\"apiVersion\":\"v1\",\"data\":{\"num\":\"3\",\"x\":\"1\"},"
	    "\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"la"
	    "bels\":{\"team\":\"a\",\"tier\":\"gold\"},\"name\":\"cm1\","
	    "\"namespace\":\"default\"}}\n",
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	    "\"name\":\"cm1\",\"labels\":{\"team\":\"a\"},\"namespace\":"
	    "\"default\"},\"data\":{\"x\":\"2\",\"extra\":\"e\"}}",
	    "{\"apiVersion\":\"v1\",\"data\":{\"num\":\"3\",\"x\":\"1\"},"
	    "\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{\"kube"
	    "ctl.kubernetes.io/last-applied-configuration\":\"{\\\"apiVer"
	    "sion\\\":\\\"v1\\\",\\\"data\\\":{\\\"num\\\":\\\"3\\\",\\\""
	    "x\\\":\\\"1\\\"},\\\"kind\\\":\\\"ConfigMap\\\",\\\"metadata"
	    "\\\":{\\\"annotations\\\":{},\\\"labels\\\":{\\\"team\\\":"
	    "\\\"a\\\",\\\"tier\\\":\\\"gold\\\"},\\\"name\\\":\\\"cm1"
	    "\\\",\\\"namespace\\\":\\\"default\\\"}}\\n\",\"owner\":\"x"
	    "\"},\"creationTimestamp\":\"2026-12-01T14:49:06Z\",\"generat"
	    "ion\":1,\"labels\":{\"team\":\"a\",\"tier\":\"gold\"},\"name"
	    "\":\"cm1\",\"namespace\":\"default\",\"resourceVersion\":\"6"
	    "2\",\"uid\":\"b8d174e1-0ac7-4796-8944-ecf148c3ec99\"}}",
	    "ConfigMap",
	    "{\"data\":{\"extra\":\"e\",\"num\":null,\"x\":\"2\"},\"metad"
	    "ata\":{\"annotations\":{\"kubectl.kubernetes.io/last-applied"
	    "-configuration\":\"{\\\"apiVersion\\\":\\\"v1\\\",\\\"data"
	    "\\\":{\\\"extra\\\":\\\"e\\\",\\\"x\\\":\\\"2\\\"},\\\"kind"
	    "\\\":\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"annotations\\\""
	    ":{},\\\"labels\\\":{\\\"team\\\":\\\"a\\\"},\\\"name\\\":"
	    "\\\"cm1\\\",\\\"namespace\\\":\\\"default\\\"}}\\n\"},\"labe"
	    "ls\":{\"tier\":null}}}");
	same_patch("d",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"de"
	    "fault\"},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabel"
	    "s\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels"
	    "\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"env\":[{"
	    "\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\""
	    "2\"}],\"image\":\"busybox\",\"name\":\"main\"},{\"image\":\""
	    "busybox\",\"name\":\"side\"}]}}}}\n",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"name\":\"web\",\"finalizers\":[\"example.com/f\"],\""
	    "namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabe"
	    "ls\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels"
	    "\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\""
	    "first\",\"image\":\"busybox\"},{\"name\":\"main\",\"image\":"
	    "\"busybox:2\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}]}}"
	    "}}",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"annotations\":{\"deployment.kubernetes.io/revision\""
	    ":\"2\",\"kubectl.kubernetes.io/last-applied-configuration\":"
	    "\"{\\\"apiVersion\\\":\\\"apps/v1\\\",\\\"kind\\\":\\\"Deplo"
	    "yment\\\",\\\"metadata\\\":{\\\"annotations\\\":{},\\\"name"
	    "\\\":\\\"web\\\",\\\"namespace\\\":\\\"default\\\"},\\\"spec"
	    "\\\":{\\\"replicas\\\":2,\\\"selector\\\":{\\\"matchLabels"
	    "\\\":{\\\"app\\\":\\\"web\\\"}},\\\"template\\\":{\\\"metada"
	    "ta\\\":{\\\"labels\\\":{\\\"app\\\":\\\"web\\\"}},\\\"spec"
	    "\\\":{\\\"containers\\\":[{\\\"env\\\":[{\\\"name\\\":\\\"A"
	    "\\\",\\\"value\\\":\\\"1\\\"},{\\\"name\\\":\\\"B\\\",\\\"va"
	    "lue\\\":\\\"2\\\"}],\\\"image\\\":\\\"busybox\\\",\\\"name"
	    "\\\":\\\"main\\\"},{\\\"image\\\":\\\"busybox\\\",\\\"name"
	    "\\\":\\\"side\\\"}]}}}}\\n\"},\"creationTimestamp\":\"2026-1"
	    "2-01T14:49:08Z\",\"generation\":2,\"name\":\"web\",\"namespa"
	    "ce\":\"default\",\"resourceVersion\":\"87\",\"uid\":\"7536be"
	    "16-3d3a-4d00-8135-b5b4a1cf59da\"},\"spec\":{\"progressDeadli"
	    "neSeconds\":600,\"replicas\":2,\"revisionHistoryLimit\":10,"
	    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"strategy"
	    "\":{\"rollingUpdate\":{\"maxSurge\":\"25%\",\"maxUnavailable"
	    "\":\"25%\"},\"type\":\"RollingUpdate\"},\"template\":{\"meta"
	    "data\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers"
	    "\":[{\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B"
	    "\",\"value\":\"2\"},{\"name\":\"C\",\"value\":\"3\"}],\"imag"
	    "e\":\"busybox\",\"imagePullPolicy\":\"Always\",\"name\":\"ma"
	    "in\",\"resources\":{},\"terminationMessagePath\":\"/dev/term"
	    "ination-log\",\"terminationMessagePolicy\":\"File\"},{\"imag"
	    "e\":\"busybox\",\"imagePullPolicy\":\"Always\",\"name\":\"si"
	    "de\",\"resources\":{},\"terminationMessagePath\":\"/dev/term"
	    "ination-log\",\"terminationMessagePolicy\":\"File\"}],\"dnsP"
	    "olicy\":\"ClusterFirst\",\"restartPolicy\":\"Always\",\"sche"
	    "dulerName\":\"default-scheduler\",\"securityContext\":{},\"t"
	    "erminationGracePeriodSeconds\":30}}},\"status\":{\"condition"
	    "s\":[{\"lastTransitionTime\":\"2026-12-01T14:49:08Z\",\"last"
	    "UpdateTime\":\"2026-12-01T14:49:08Z\",\"message\":\"ReplicaS"
	    "et \\\"web-75d587c947\\\" is progressing.\",\"reason\":\"Rep"
	    "licaSetUpdated\",\"status\":\"True\",\"type\":\"Progressing"
	    "\"},{\"lastTransitionTime\":\"2026-12-01T14:49:08Z\",\"lastU"
	    "pdateTime\":\"2026-12-01T14:49:08Z\",\"message\":\"Deploymen"
	    "t does not have minimum availability.\",\"reason\":\"Minimum"
	    "ReplicasUnavailable\",\"status\":\"False\",\"type\":\"Availa"
	    "ble\"}],\"observedGeneration\":2,\"replicas\":3,\"unavailabl"
	    "eReplicas\":3,\"updatedReplicas\":1}}",
	    "Deployment",
	    "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last"
	    "-applied-configuration\":\"{\\\"apiVersion\\\":\\\"apps/v1"
	    "\\\",\\\"kind\\\":\\\"Deployment\\\",\\\"metadata\\\":{\\\"a"
	    "nnotations\\\":{},\\\"finalizers\\\":[\\\"example.com/f\\\"]"
	    ",\\\"name\\\":\\\"web\\\",\\\"namespace\\\":\\\"default\\\"}"
	    ",\\\"spec\\\":{\\\"selector\\\":{\\\"matchLabels\\\":{\\\"ap"
	    "p\\\":\\\"web\\\"}},\\\"template\\\":{\\\"metadata\\\":{\\\""
	    "labels\\\":{\\\"app\\\":\\\"web\\\"}},\\\"spec\\\":{\\\"cont"
	    "ainers\\\":[{\\\"image\\\":\\\"busybox\\\",\\\"name\\\":\\\""
	    "first\\\"},{\\\"env\\\":[{\\\"name\\\":\\\"A\\\",\\\"value"
	    "\\\":\\\"1\\\"}],\\\"image\\\":\\\"busybox:2\\\",\\\"name"
	    "\\\":\\\"main\\\"}]}}}}\\n\"},\"finalizers\":[\"example.com/"
	    "f\"]},\"spec\":{\"replicas\":null,\"template\":{\"spec\":{\""
	    "$setElementOrder/containers\":[{\"name\":\"first\"},{\"name"
	    "\":\"main\"}],\"containers\":[{\"image\":\"busybox\",\"name"
	    "\":\"first\"},{\"$setElementOrder/env\":[{\"name\":\"A\"}],"
	    "\"env\":[{\"$patch\":\"delete\",\"name\":\"B\"}],\"image\":"
	    "\"busybox:2\",\"name\":\"main\"},{\"$patch\":\"delete\",\"na"
	    "me\":\"side\"}]}}}}");
	same_patch("q",
	    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
	    "\"Queue\",\"metadata\":{\"annotations\":{},\"labels\":{\"tea"
	    "m\":\"a\"},\"name\":\"q1\"},\"spec\":{\"capability\":{\"cpu"
	    "\":\"4\",\"memory\":\"8Gi\"},\"weight\":3}}\n",
	    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
	    "\"Queue\",\"metadata\":{\"name\":\"q1\"},\"spec\":{\"weight"
	    "\":4,\"capability\":{\"cpu\":\"4\"}}}",
	    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
	    "\"Queue\",\"metadata\":{\"annotations\":{\"kubectl.kubernete"
	    "s.io/last-applied-configuration\":\"{\\\"apiVersion\\\":\\\""
	    "scheduling.volcano.sh/v1beta1\\\",\\\"kind\\\":\\\"Queue\\\""
	    ",\\\"metadata\\\":{\\\"annotations\\\":{},\\\"labels\\\":{"
	    "\\\"team\\\":\\\"a\\\"},\\\"name\\\":\\\"q1\\\"},\\\"spec"
	    "\\\":{\\\"capability\\\":{\\\"cpu\\\":\\\"4\\\",\\\"memory"
	    "\\\":\\\"8Gi\\\"},\\\"weight\\\":3}}\\n\"},\"creationTimesta"
	    "mp\":\"2026-12-01T14:49:09Z\",\"generation\":1,\"labels\":{"
	    "\"extra\":\"kept\",\"team\":\"a\"},\"name\":\"q1\",\"resourc"
	    "eVersion\":\"116\",\"uid\":\"72304b82-2ae5-4345-a630-e9e2031"
	    "69843\"},\"spec\":{\"capability\":{\"cpu\":\"4\",\"memory\":"
	    "\"8Gi\"},\"reclaimable\":true,\"weight\":3},\"status\":{\"co"
	    "mpleted\":0,\"inqueue\":0,\"pending\":0,\"running\":0,\"stat"
	    "e\":\"Open\",\"unknown\":0}}",
	    NULL,
	    "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last"
	    "-applied-configuration\":\"{\\\"apiVersion\\\":\\\"schedulin"
	    "g.volcano.sh/v1beta1\\\",\\\"kind\\\":\\\"Queue\\\",\\\"meta"
	    "data\\\":{\\\"annotations\\\":{},\\\"name\\\":\\\"q1\\\"},"
	    "\\\"spec\\\":{\\\"capability\\\":{\\\"cpu\\\":\\\"4\\\"},"
	    "\\\"weight\\\":4}}\\n\"},\"labels\":null},\"spec\":{\"capabi"
	    "lity\":{\"memory\":null},\"weight\":4}}");
	same_patch("v",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"annotations\":{},\"name\":\"vol\",\"namespace\":\"de"
	    "fault\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\""
	    "vol\"}},\"strategy\":{\"rollingUpdate\":{\"maxSurge\":1},\"t"
	    "ype\":\"RollingUpdate\"},\"template\":{\"metadata\":{\"label"
	    "s\":{\"app\":\"vol\"}},\"spec\":{\"containers\":[{\"image\":"
	    "\"busybox\",\"name\":\"c\"}],\"volumes\":[{\"configMap\":{\""
	    "name\":\"cm\"},\"name\":\"a\"},{\"emptyDir\":{},\"name\":\"b"
	    "\"}]}}}}\n",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"name\":\"vol\",\"namespace\":\"default\"},\"spec\":{"
	    "\"selector\":{\"matchLabels\":{\"app\":\"vol\"}},\"strategy"
	    "\":{\"type\":\"Recreate\"},\"template\":{\"metadata\":{\"lab"
	    "els\":{\"app\":\"vol\"}},\"spec\":{\"containers\":[{\"name\""
	    ":\"c\",\"image\":\"busybox\"}],\"volumes\":[{\"name\":\"a\","
	    "\"secret\":{\"secretName\":\"s\"}},{\"name\":\"b\",\"emptyDi"
	    "r\":{}}]}}}}",
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metada"
	    "ta\":{\"annotations\":{\"deployment.kubernetes.io/revision\""
	    ":\"1\",\"kubectl.kubernetes.io/last-applied-configuration\":"
	    "\"{\\\"apiVersion\\\":\\\"apps/v1\\\",\\\"kind\\\":\\\"Deplo"
	    "yment\\\",\\\"metadata\\\":{\\\"annotations\\\":{},\\\"name"
	    "\\\":\\\"vol\\\",\\\"namespace\\\":\\\"default\\\"},\\\"spec"
	    "\\\":{\\\"selector\\\":{\\\"matchLabels\\\":{\\\"app\\\":"
	    "\\\"vol\\\"}},\\\"strategy\\\":{\\\"rollingUpdate\\\":{\\\"m"
	    "axSurge\\\":1},\\\"type\\\":\\\"RollingUpdate\\\"},\\\"templ"
	    "ate\\\":{\\\"metadata\\\":{\\\"labels\\\":{\\\"app\\\":\\\"v"
	    "ol\\\"}},\\\"spec\\\":{\\\"containers\\\":[{\\\"image\\\":"
	    "\\\"busybox\\\",\\\"name\\\":\\\"c\\\"}],\\\"volumes\\\":[{"
	    "\\\"configMap\\\":{\\\"name\\\":\\\"cm\\\"},\\\"name\\\":"
	    "\\\"a\\\"},{\\\"emptyDir\\\":{},\\\"name\\\":\\\"b\\\"}]}}}}"
	    "\\n\"},\"creationTimestamp\":\"2026-12-01T15:14:13Z\",\"gene"
	    "ration\":1,\"name\":\"vol\",\"namespace\":\"default\",\"reso"
	    "urceVersion\":\"131\",\"uid\":\"49c57a85-95af-45ce-a018-c441"
	    "a3bad825\"},\"spec\":{\"progressDeadlineSeconds\":600,\"repl"
	    "icas\":1,\"revisionHistoryLimit\":10,\"selector\":{\"matchLa"
	    "bels\":{\"app\":\"vol\"}},\"strategy\":{\"rollingUpdate\":{"
	    "\"maxSurge\":1,\"maxUnavailable\":\"25%\"},\"type\":\"Rollin"
	    "gUpdate\"},\"template\":{\"metadata\":{\"labels\":{\"app\":"
	    "\"vol\"}},\"spec\":{\"containers\":[{\"image\":\"busybox\","
	    "\"imagePullPolicy\":\"Always\",\"name\":\"c\",\"resources\":"
	    "{},\"terminationMessagePath\":\"/dev/termination-log\",\"ter"
	    "minationMessagePolicy\":\"File\"}],\"dnsPolicy\":\"ClusterFi"
	    "rst\",\"restartPolicy\":\"Always\",\"schedulerName\":\"defau"
	    "lt-scheduler\",\"securityContext\":{},\"terminationGracePeri"
	    "odSeconds\":30,\"volumes\":[{\"configMap\":{\"name\":\"cm\"}"
	    ",\"name\":\"a\"},{\"emptyDir\":{},\"name\":\"b\"}]}}},\"stat"
	    "us\":{\"conditions\":[{\"lastTransitionTime\":\"2026-12-01T1"
	    "5:14:13Z\",\"lastUpdateTime\":\"2026-12-01T15:14:13Z\",\"mes"
	    "sage\":\"ReplicaSet \\\"vol-6bf68444d9\\\" is progressing.\""
	    ",\"reason\":\"ReplicaSetUpdated\",\"status\":\"True\",\"type"
	    "\":\"Progressing\"},{\"lastTransitionTime\":\"2026-12-01T15:"
	    "14:13Z\",\"lastUpdateTime\":\"2026-12-01T15:14:13Z\",\"messa"
	    "ge\":\"Deployment does not have minimum availability.\",\"re"
	    "ason\":\"MinimumReplicasUnavailable\",\"status\":\"False\","
	    "\"type\":\"Available\"}],\"observedGeneration\":1,\"replicas"
	    "\":1,\"unavailableReplicas\":1,\"updatedReplicas\":1}}",
	    "Deployment",
	    "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last"
	    "-applied-configuration\":\"{\\\"apiVersion\\\":\\\"apps/v1"
	    "\\\",\\\"kind\\\":\\\"Deployment\\\",\\\"metadata\\\":{\\\"a"
	    "nnotations\\\":{},\\\"name\\\":\\\"vol\\\",\\\"namespace\\\""
	    ":\\\"default\\\"},\\\"spec\\\":{\\\"selector\\\":{\\\"matchL"
	    "abels\\\":{\\\"app\\\":\\\"vol\\\"}},\\\"strategy\\\":{\\\"t"
	    "ype\\\":\\\"Recreate\\\"},\\\"template\\\":{\\\"metadata\\\""
	    ":{\\\"labels\\\":{\\\"app\\\":\\\"vol\\\"}},\\\"spec\\\":{"
	    "\\\"containers\\\":[{\\\"image\\\":\\\"busybox\\\",\\\"name"
	    "\\\":\\\"c\\\"}],\\\"volumes\\\":[{\\\"name\\\":\\\"a\\\","
	    "\\\"secret\\\":{\\\"secretName\\\":\\\"s\\\"}},{\\\"emptyDir"
	    "\\\":{},\\\"name\\\":\\\"b\\\"}]}}}}\\n\"}},\"spec\":{\"stra"
	    "tegy\":{\"$retainKeys\":[\"type\"],\"rollingUpdate\":null,\""
	    "type\":\"Recreate\"},\"template\":{\"spec\":{\"$setElementOr"
	    "der/volumes\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"volumes"
	    "\":[{\"$retainKeys\":[\"name\",\"secret\"],\"configMap\":nul"
	    "l,\"name\":\"a\",\"secret\":{\"secretName\":\"s\"}}]}}}}");
}

int
main(void)
{
	test_encode();
	test_modified();
	test_kubectl_patches();
	return (check_result("test-threeway"));
}
