#!/bin/sh
# The official Python client (Debian's python3-kubernetes) against the TLS
# and token default, with the generated kubeconfig unchanged: ConfigMap and
# Pod CRUD, APIServices through ApiregistrationV1Api, a RayCluster through
# CustomObjectsApi, paged lists with
# remainingItemCount, and a Watch that sees changes made after it opened
# (the client sends watch=True). Then how query options are read: booleans
# as kube-apiserver reads them, malformed integers 400.
. "$(dirname "$0")/lib.sh"
need_samples

# Debian's package lives in Debian's interpreter, whatever python3 is first
# on PATH. scripts/deps.sh installs it; without it the test is skipped.
PY=/usr/bin/python3
"$PY" -c 'import kubernetes' 2>/dev/null ||
	skip "python3-kubernetes is not installed (scripts/deps.sh installs it)"
start_daemon

cat >"$WORK/kc.py" <<'PY'
"""The official client, configured from the daemon's kubeconfig as is."""
import json, os, sys, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
custom = client.CustomObjectsApi()
T = 20  # every request's timeout, seconds

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def expect(want, got, what):
    if want != got:
        fail("%s: want %r, got %r" % (what, want, got))

def status_of(call, *args, **kw):
    """The HTTP status and Status reason an ApiException carries."""
    try:
        call(*args, _request_timeout=T, **kw)
    except ApiException as e:
        return e.status, json.loads(e.body).get("reason")
    fail("%s succeeded" % call.__name__)
PY

# --- ConfigMaps and Pods: create, read, replace, patch, list, delete
"$PY" - <<'PY' || fail "CRUD through the Python client"
from kc import *

# Discovery as the client asks for it: /version/ and /api/v1/.
v = client.VersionApi().get_code(_request_timeout=T)
expect("1", v.major, "version major")
names = [r.name for r in core.get_api_resources(_request_timeout=T).resources]
if "configmaps" not in names or "pods/status" not in names:
    fail("APIResourceList from /api/v1/: %s" % names)
core.create_namespace({"metadata": {"name": "py"}}, _request_timeout=T)

cm = core.create_namespaced_config_map("py", client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="c1", labels={"app": "py"}),
    data={"k": "v1"}), _request_timeout=T)
expect("c1", cm.metadata.name, "created name")
if not cm.metadata.uid or not cm.metadata.resource_version:
    fail("no uid or resourceVersion on create")
expect((409, "AlreadyExists"), status_of(core.create_namespaced_config_map,
    "py", {"metadata": {"name": "c1"}}), "create twice")

got = core.read_namespaced_config_map("c1", "py", _request_timeout=T)
expect({"k": "v1"}, got.data, "read data")
got.data["k"] = "v2"
rep = core.replace_namespaced_config_map("c1", "py", got, _request_timeout=T)
expect("v2", rep.data["k"], "replaced data")
if int(rep.metadata.resource_version) <= int(cm.metadata.resource_version):
    fail("resourceVersion did not move on replace")
# The old resourceVersion is stale now: 409 Conflict.
got.data["k"] = "stale"
expect((409, "Conflict"), status_of(core.replace_namespaced_config_map,
    "c1", "py", got), "replace with a stale resourceVersion")
pat = core.patch_namespaced_config_map("c1", "py",
    {"data": {"extra": "x"}}, _request_timeout=T)
expect({"k": "v2", "extra": "x"}, pat.data, "strategic-merge-patched data")
pat = core.patch_namespaced_config_map("c1", "py",
    [{"op": "remove", "path": "/data/extra"}], _request_timeout=T)
expect({"k": "v2"}, pat.data, "json-patched data")

lst = core.list_namespaced_config_map("py", label_selector="app=py",
                                      _request_timeout=T)
expect(["c1"], [i.metadata.name for i in lst.items], "list by label")
core.delete_namespaced_config_map("c1", "py", _request_timeout=T)
expect((404, "NotFound"), status_of(core.read_namespaced_config_map,
    "c1", "py"), "read after delete")

# orphan_dependents=True goes in the query (orphanDependents=True): the
# dependent stays, without its owner reference.
parent = core.create_namespaced_config_map("py", {"metadata": {"name": "parent"}},
                                           _request_timeout=T)
core.create_namespaced_config_map("py", {"metadata": {"name": "child",
    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                         "name": "parent", "uid": parent.metadata.uid}]}},
    _request_timeout=T)
core.delete_namespaced_config_map("parent", "py", orphan_dependents=True,
                                  _request_timeout=T)
child = core.read_namespaced_config_map("child", "py", _request_timeout=T)
expect(None, child.metadata.owner_references, "orphaned child's ownerReferences")
core.delete_namespaced_config_map("child", "py", _request_timeout=T)

pod = core.create_namespaced_pod("py", {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p1", "labels": {"app": "py"}},
    "spec": {"containers": [{"name": "main", "image": "busybox",
                             "command": ["sleep", "1"]}]}},
    _request_timeout=T)
expect("Pending", pod.status.phase, "new pod's phase")
expect("main", pod.spec.containers[0].name, "container name")
pod = core.patch_namespaced_pod("p1", "py",
    {"metadata": {"labels": {"tier": "x"}}}, _request_timeout=T)
expect({"app": "py", "tier": "x"}, pod.metadata.labels, "patched labels")
st = core.read_namespaced_pod_status("p1", "py", _request_timeout=T)
expect("Pending", st.status.phase, "pods/status")
pods = core.list_pod_for_all_namespaces(field_selector="metadata.namespace=py",
                                        _request_timeout=T)
expect(["p1"], [p.metadata.name for p in pods.items], "pods by field")
# follow=True (as the client sends it) streams the log until the pod ends.
log = core.read_namespaced_pod_log("p1", "py", follow=True,
                                   _preload_content=False, _request_timeout=T)
expect("chunked", log.headers.get("Transfer-Encoding"), "followed log")
core.delete_namespaced_pod("p1", "py", _request_timeout=T,
                           body=client.V1DeleteOptions(
                               propagation_policy="Background"))
expect(b"", log.read(), "log of a pod without output, to its end")
print("ok")
PY
pass "discovery; ConfigMap and Pod create/read/replace/patch/list/delete, orphan_dependents, log follow, 404/409 as ApiException"

# --- APIServices: ApiregistrationV1Api create, read, list, patch, delete
"$PY" - <<'PY' || fail "APIServices through the Python client"
from kc import *

reg = client.ApiregistrationV1Api()
body = client.V1APIService(
    metadata=client.V1ObjectMeta(name="v1.py.example.com", labels={"py": "y"}),
    spec=client.V1APIServiceSpec(group="py.example.com", version="v1",
                                 group_priority_minimum=100,
                                 version_priority=10))
made = reg.create_api_service(body, _request_timeout=T)
expect("v1.py.example.com", made.metadata.name, "created APIService")
got = reg.read_api_service("v1.py.example.com", _request_timeout=T)
expect([("Available", "True", "Local")],
       [(c.type, c.status, c.reason) for c in got.status.conditions],
       "a Local one's condition")
local = reg.read_api_service("v1.apps", _request_timeout=T)
expect(("apps", "Local"), (local.spec.group, local.status.conditions[0].reason),
       "a served group-version's")
names = [i.metadata.name for i in reg.list_api_service(_request_timeout=T).items]
if "v1.py.example.com" not in names or "v1." not in names:
    fail("list: %s" % names)
sel = reg.list_api_service(label_selector="py=y", _request_timeout=T)
expect(["v1.py.example.com"], [i.metadata.name for i in sel.items], "by label")
pat = reg.patch_api_service("v1.py.example.com",
                            {"spec": {"versionPriority": 20}}, _request_timeout=T)
expect(20, pat.spec.version_priority, "patched")
expect((409, "Conflict"), status_of(reg.delete_api_service, "v1.apps"),
       "a served group-version's cannot be deleted")
expect((422, "Invalid"), status_of(reg.create_api_service, {
    "metadata": {"name": "v1.batch"}, "spec": {"group": "batch",
    "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1}}),
    "nor created")
reg.delete_api_service("v1.py.example.com", _request_timeout=T)
expect((404, "NotFound"), status_of(reg.read_api_service, "v1.py.example.com"),
       "read after delete")
print("ok")
PY
pass "APIServices: create, read (Local ones too), list, patch, delete; served ones refused"

# --- a custom object: the KubeRay sample RayCluster
"$PY" - "$SAMPLES/kuberay/ray-cluster.sample.yaml" <<'PY' || fail "RayCluster through CustomObjectsApi"
import yaml
from kc import *

body = yaml.safe_load(open(sys.argv[1]))
name = body["metadata"]["name"]
G, V, P = "ray.io", "v1", "rayclusters"
rc = custom.create_namespaced_custom_object(G, V, "py", P, body,
                                            _request_timeout=T)
expect(name, rc["metadata"]["name"], "created RayCluster")
expect("RayCluster", rc["kind"], "kind")
rc = custom.get_namespaced_custom_object(G, V, "py", P, name,
                                         _request_timeout=T)
expect(1, rc["spec"]["workerGroupSpecs"][0]["replicas"], "replicas as sent")
rc = custom.patch_namespaced_custom_object(G, V, "py", P, name,
    {"spec": {"workerGroupSpecs": [dict(body["spec"]["workerGroupSpecs"][0],
                                        replicas=2)]}}, _request_timeout=T)
expect(2, rc["spec"]["workerGroupSpecs"][0]["replicas"], "merge-patched replicas")
lst = custom.list_namespaced_custom_object(G, V, "py", P, _request_timeout=T)
expect([name], [i["metadata"]["name"] for i in lst["items"]], "listed RayClusters")
expect("RayClusterList", lst["kind"], "list kind")
custom.delete_namespaced_custom_object(G, V, "py", P, name, _request_timeout=T)
expect((404, "NotFound"), status_of(custom.get_namespaced_custom_object,
    G, V, "py", P, name), "RayCluster after delete")
print("ok")
PY
pass "RayCluster sample created, read, merge-patched, listed and deleted"

# --- paging: limit/continue with remainingItemCount
"$PY" - <<'PY' || fail "paged lists"
from kc import *

core.create_namespace({"metadata": {"name": "pages"}}, _request_timeout=T)
# Its kube-root-ca.crt first (every namespace has one, as in Kubernetes).
for _ in range(100):
    if [c for c in core.list_namespaced_config_map("pages", _request_timeout=T).items
            if c.metadata.name == "kube-root-ca.crt"]:
        break
    time.sleep(0.1)
for i in range(5):
    core.create_namespaced_config_map("pages", {"metadata": {
        "name": "m%d" % i, "labels": {"odd": str(i % 2)}}}, _request_timeout=T)
seen, pages, tok = [], [], None
while True:
    kw = {"_continue": tok} if tok else {}
    lst = core.list_namespaced_config_map("pages", limit=2, _request_timeout=T,
                                          **kw)
    seen += [i.metadata.name for i in lst.items]
    pages.append((len(lst.items), lst.metadata.remaining_item_count))
    tok = lst.metadata._continue
    if not tok:
        break
expect(["kube-root-ca.crt", "m0", "m1", "m2", "m3", "m4"], seen,
       "every item once, in order")
expect([(2, 4), (2, 2), (2, None)], pages, "page sizes and remainingItemCount")
# As kube-apiserver: no count under a selector (it would cost a full scan).
lst = core.list_namespaced_config_map("pages", limit=1, label_selector="odd=0",
                                      _request_timeout=T)
expect(["m0"], [i.metadata.name for i in lst.items], "first selected page")
if not lst.metadata._continue:
    fail("no continue token with a selector")
expect(None, lst.metadata.remaining_item_count, "remainingItemCount with a selector")
print("ok")
PY
# The same count on the raw list and on a Table.
out=$(curl -fs "$API/api/v1/namespaces/pages/configmaps?limit=4" |
	"$PY" -c 'import json,sys; m=json.load(sys.stdin)["metadata"]; print(m.get("remainingItemCount"), bool(m.get("continue")))')
expect_eq "2 True" "$out" "raw list remainingItemCount"
out=$(curl -fs -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
	"$API/api/v1/namespaces/pages/configmaps?limit=3" |
	"$PY" -c 'import json,sys; m=json.load(sys.stdin)["metadata"]; print(m.get("remainingItemCount"), bool(m.get("continue")))')
expect_eq "3 True" "$out" "Table remainingItemCount"
out=$(curl -fs "$API/api/v1/namespaces/pages/configmaps?limit=6" |
	"$PY" -c 'import json,sys; m=json.load(sys.stdin)["metadata"]; print("remainingItemCount" in m, "continue" in m)')
expect_eq "False False" "$out" "last page has neither continue nor count"
pass "limit/continue pages with remainingItemCount (none under a selector)"

# --- Watch: events for changes made after the watch opened
rv=$(curl -fs "$API/api/v1/namespaces/py/configmaps" |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
before=$(watchers)
"$PY" - "$rv" >"$WORK/events" 2>"$WORK/watch.err" <<'PY' &
from kc import *

w = watch.Watch()
for ev in w.stream(core.list_namespaced_config_map, "py",
                   resource_version=sys.argv[1], timeout_seconds=30):
    o = ev["object"]
    if not isinstance(o, client.V1ConfigMap):
        fail("event object is a %s" % type(o).__name__)
    print(ev["type"], o.metadata.name, (o.data or {}).get("k"), flush=True)
    if ev["type"] == "DELETED":
        w.stop()
PY
WATCHER=$!
wait_watchers $((before + 1))
"$PY" - <<'PY' || fail "changes for the watcher"
from kc import *

core.create_namespaced_config_map("py", {"metadata": {"name": "w1"},
                                         "data": {"k": "a"}}, _request_timeout=T)
core.patch_namespaced_config_map("w1", "py", {"data": {"k": "b"}},
                                 _request_timeout=T)
core.delete_namespaced_config_map("w1", "py", _request_timeout=T)
PY
wait "$WATCHER" || fail "watcher failed: $(cat "$WORK/watch.err")"
expect_eq "ADDED w1 a
MODIFIED w1 b
DELETED w1 b" "$(cat "$WORK/events")" "events the Python watch received"
pass "Watch().stream (watch=True) gets ADDED, MODIFIED, DELETED as V1ConfigMap"

# --- query options as kube-apiserver reads them
CMS="$API/api/v1/namespaces/pages/configmaps"
kind() { "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("kind", "event"))'; }
# Each watch lasts its timeoutSeconds: run them side by side.
pids=""
for v in True TRUE t 1 yes maybe; do
	curl -fs -m 10 "$CMS?watch=$v&timeoutSeconds=1" >"$WORK/w-$v" &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
for v in True TRUE t 1 yes maybe; do
	expect_eq event "$(kind <"$WORK/w-$v")" "watch=$v"
done
for v in False FALSE false 0; do
	expect_eq ConfigMapList "$(curl -fs -m 10 "$CMS?watch=$v" | kind)" "watch=$v"
done
for q in limit=maybe limit= timeoutSeconds=1.5 "watch=1&timeoutSeconds=x"; do
	code=$(curl -s -o "$WORK/bad" -w '%{http_code}' -m 10 "$CMS?$q")
	expect_eq 400 "$code" "$q"
	expect_contains "$(cat "$WORK/bad")" '"reason":"BadRequest"' "$q reason"
	expect_contains "$(cat "$WORK/bad")" 'strconv.ParseInt: parsing' "$q message"
done
pass "booleans: 0 and false (any case) false, others true; malformed integers 400"
