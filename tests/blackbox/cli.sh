#!/bin/sh
# The volray client against a real volrayd: tables laid out as kubectl lays
# them, resource names resolved through discovery, apply (created,
# unchanged, configured), create, get in its output forms and with label
# selectors, logs, wait on a condition and on deletion, delete, version,
# policy reload, and the server's error message with exit status 1.
. "$(dirname "$0")/lib.sh"
VR="$top_builddir/volray"
[ -x "$VR" ] || fail "no volray binary at $VR"
start_daemon

# vr ARGS: volray with a bound on each request.
vr() {
	"$VR" --request-timeout 20s "$@"
}

# fails WHAT ARGS: volray must exit 1; its stderr is left in $err.
fails() {
	what=$1
	shift
	rc=0
	vr "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	err=$(cat "$WORK/err")
	[ "$rc" -eq 1 ] || fail "$what: want exit 1, got $rc ($err)"
}

# json_field FILE EXPR: a Python expression over the document d.
json_field() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

out=$(vr version)
expect_contains "$out" "Client Version: v" "client version"
expect_contains "$out" "Server Version: v1." "server version"
expect_contains "$(vr --version)" "volray " "--version"
pass "version"

# --- tables: capitals, columns three spaces apart, as kubectl prints them
expect_eq "NAME STATUS AGE" "$(vr get namespaces | head -n 1 | tr -s ' ')" \
	"namespace table header"
vr get ns | grep -Eq '^default {3,}Active {3,}[0-9]+[smhd]' ||
	fail "default row: $(vr get ns)"
expect_eq "$(k get ns --no-headers | awk '{print $1, $2}')" \
	"$(vr get ns | tail -n +2 | awk '{print $1, $2}')" "same rows as kubectl"
expect_eq "$(k get ns default | head -n 1)" "$(vr get ns default | head -n 1)" \
	"header spacing as kubectl"
out=$(vr get nodes 2>&1)
expect_eq "No resources found" "$out" "no nodes yet"
cat >"$WORK/node.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: vnode-1
  labels: {zone: a}   # no runtime serves it: pods stay Pending
YAML
expect_eq "node/vnode-1 created" "$(vr apply -f "$WORK/node.yaml")" "apply node"
expect_eq "$(k get nodes | head -n 1)" "$(vr get nodes | head -n 1)" \
	"node header"
expect_eq vnode-1 "$(vr get no | tail -n +2 | awk '{print $1}')" "node row"
pass "tables of namespaces and nodes"

# --- apply: created, unchanged, configured; create refuses a duplicate
cat >"$WORK/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: web}
  annotations:
    note: "two\nlines"
    version: "1.10"
spec:
  containers:
  - name: c
    image: busybox
    command: ["sleep", "1000"]
    env:
    - {name: A, value: "a: b"}
---
apiVersion: v1
kind: Pod
metadata:
  name: p2
  labels: {app: db}
spec:
  containers:
  - {name: c, image: busybox}
YAML
out=$(vr apply -f "$WORK/pod.yaml")
expect_eq "pod/p1 created
pod/p2 created" "$out" "apply creates"
out=$(vr apply -f "$WORK/pod.yaml")
expect_eq "pod/p1 unchanged
pod/p2 unchanged" "$out" "apply again"
sed 's/app: db/app: cache/' "$WORK/pod.yaml" >"$WORK/pod2.yaml"
out=$(vr apply -f "$WORK/pod2.yaml")
expect_eq "pod/p1 unchanged
pod/p2 configured" "$out" "apply a change"
expect_eq cache "$(k get pod p2 -o jsonpath='{.metadata.labels.app}')" \
	"applied label"
fails "create duplicate" create -f "$WORK/node.yaml"
expect_eq 'Error from server (AlreadyExists): nodes "vnode-1" already exists' \
	"$err" "create duplicate message"
pass "apply and create"

# --- resource names through discovery, and output forms
for r in pods pod po Pod; do
	expect_eq "pod/p1
pod/p2" "$(vr get "$r" -o name)" "get $r -o name"
done
expect_eq "pod/p1" "$(vr get pod/p1 -o name)" "TYPE/NAME"
vr get pods -o json >"$WORK/pods.json"
expect_eq "List 2" "$(json_field "$WORK/pods.json" 'd["kind"], len(d["items"])' |
	tr -d "(),'")" "list as json"
vr get pod p1 -o json >"$WORK/p1.json"
expect_eq web "$(json_field "$WORK/p1.json" 'd["metadata"]["labels"]["app"]')" \
	"label in json"
expect_eq "a: b" "$(json_field "$WORK/p1.json" 'd["spec"]["containers"][0]["env"][0]["value"]')" \
	"env in json"
expect_eq None "$(json_field "$WORK/p1.json" 'd["metadata"].get("managedFields")')" \
	"managedFields hidden"
expect_eq Always "$(vr get pod p1 -o jsonpath='{.spec.containers[0].imagePullPolicy}')" \
	"jsonpath"
expect_eq "p1 p2" "$(vr get pods -o 'jsonpath={.items[*].metadata.name}')" \
	"jsonpath over a list"
# YAML out: what PyYAML (if present) and volray itself read back.
vr get pod p1 -o yaml >"$WORK/p1.yaml"
grep -q '^  name: p1$' "$WORK/p1.yaml" || fail "yaml: $(cat "$WORK/p1.yaml")"
grep -q '^    version: "1.10"$' "$WORK/p1.yaml" || fail "yaml quoting of 1.10"
grep -q '^      value: .a: b.$' "$WORK/p1.yaml" || fail "yaml quoting of a: b"
if python3 -c 'import yaml' 2>/dev/null; then
	python3 -c 'import json, sys, yaml
a = json.load(open(sys.argv[1])); b = yaml.safe_load(open(sys.argv[2]))
sys.exit(a != b)' "$WORK/p1.json" "$WORK/p1.yaml" || fail "yaml != json"
fi
sed -e '/^  resourceVersion:/d' "$WORK/p1.yaml" >"$WORK/p1-again.yaml"
vr apply -f "$WORK/p1-again.yaml" >/dev/null || fail "apply yaml output"
expect_eq "pod/p1 unchanged" "$(vr apply -f "$WORK/p1-again.yaml")" \
	"yaml output applied twice"
expect_eq "two
lines" "$(vr get pod p1 -o jsonpath='{.metadata.annotations.note}')" \
	"multi-line string survives yaml"
expect_eq "$(k get pods -o wide | head -n 1)" \
	"$(vr get pods -o wide | head -n 1)" "wide header as kubectl"
expect_eq "NAMESPACE NAME READY STATUS RESTARTS AGE" \
	"$(vr get pods -A | head -n 1 | tr -s ' ')" "all-namespaces header"
expect_eq "default p1" "$(vr get pods -A | awk 'NR == 2 {print $1, $2}')" \
	"all-namespaces row"
pass "names, -o name|json|yaml|jsonpath|wide, -A"

# --- label and field selectors
expect_eq "pod/p1" "$(vr get pods -l app=web -o name)" "get -l"
expect_eq "pod/p2" "$(vr get pods -l 'app in (cache)' -o name)" "get -l set"
expect_eq "p2" "$(vr get pods -l app!=web | tail -n +2 | awk '{print $1}')" \
	"get -l table"
out=$(vr get pods -l app=nothing 2>&1)
expect_eq "No resources found in default namespace." "$out" "empty selection"
expect_eq "pod/p2" "$(vr get pods --field-selector metadata.name=p2 -o name)" \
	"field selector"
pass "selectors"

# --- custom resources by plural.group, singular and kind
expect_eq "queue.scheduling.volcano.sh/default
queue.scheduling.volcano.sh/root" \
	"$(vr get queues.scheduling.volcano.sh -o name)" "queues by plural.group"
expect_eq "$(vr get queues.scheduling.volcano.sh -o name)" \
	"$(vr get queue -o name)" "queue by singular"
cat >"$WORK/rayjob.yaml" <<'YAML'
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
spec:
  entrypoint: python -c "print(1)"
YAML
expect_eq "rayjob.ray.io/rj created" "$(vr apply -f "$WORK/rayjob.yaml")" \
	"apply RayJob"
for r in rayjobs.ray.io rayjob RayJob rayjobs.v1.ray.io; do
	expect_eq "rayjob.ray.io/rj" "$(vr get "$r" -o name)" "get $r"
done
expect_eq "$(k get rayjobs | head -n 1)" "$(vr get rayjobs | head -n 1)" \
	"printer columns header as kubectl"
vr api-resources | grep -Eq '^rayjobs +ray.io/v1 +true +RayJob$' ||
	fail "api-resources: $(vr api-resources | grep rayjob)"
vr api-resources | grep -Eq '^pods +po +v1 +true +Pod$' ||
	fail "api-resources pods"
vr api-resources -o name | grep -qx 'rayjobs.ray.io' || fail "api-resources -o name"
fails "unknown type" get frobs
expect_eq 'error: the server doesn'"'"'t have a resource type "frobs"' "$err" \
	"unknown type message"
pass "custom resources and discovery"

# --- logs (the pod never ran: an empty log) and wait
out=$(vr logs p1)
expect_eq "" "$out" "empty log"
vr logs pod/p1 -c c --tail 5 >/dev/null || fail "logs -c --tail"
fails "logs of a missing container" logs p1 -c nope
expect_contains "$err" "Error from server (BadRequest)" "bad container"
fails "wait times out" wait pod/p1 --for=condition=Ready --timeout 1s
expect_eq "error: timed out waiting for the condition on pods/p1" "$err" \
	"wait timeout message"
n0=$(watchers)
vr wait pod/p1 --for=condition=Ready --timeout 20s >"$WORK/wait.out" 2>&1 &
WAITER=$!
wait_watchers $((n0 + 1))
curl -fs -X PATCH -H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' \
	"$API/api/v1/namespaces/default/pods/p1/status" >/dev/null ||
	fail "status patch"
wait $WAITER || fail "wait for Ready: $(cat "$WORK/wait.out")"
expect_eq "pod/p1 condition met" "$(cat "$WORK/wait.out")" "wait output"
expect_eq "pod/p1 condition met" \
	"$(vr wait pods p1 --for=condition=ready=true)" "already met"
pass "logs and wait"

# --- delete by name, by selector and by file; wait for deletion
n0=$(watchers)
vr wait pod/p2 --for=delete --timeout 20s >"$WORK/wait.out" 2>&1 &
WAITER=$!
wait_watchers $((n0 + 1))
expect_eq 'pod "p2" deleted' "$(vr delete pod p2)" "delete by name"
wait $WAITER || fail "wait for delete: $(cat "$WORK/wait.out")"
expect_eq "pod/p2 deleted" "$(cat "$WORK/wait.out")" "wait --for=delete"
fails "get deleted" get pod p2
expect_eq 'Error from server (NotFound): pods "p2" not found' "$err" \
	"NotFound message"
[ -z "$(cat "$WORK/out")" ] || fail "nothing on stdout for an error"
fails "delete again" delete pod p2
expect_eq 'Error from server (NotFound): pods "p2" not found' "$err" \
	"delete NotFound"
vr delete pod p2 --ignore-not-found >/dev/null || fail "--ignore-not-found"
expect_eq 'pod "p1" deleted' "$(vr delete pods -l app=web)" "delete -l"
expect_eq 'rayjob.ray.io "rj" deleted' "$(vr delete -f "$WORK/rayjob.yaml")" \
	"delete -f"
k get rayjob rj 2>&1 | grep -q NotFound || fail "rayjob still there"
pass "delete"

# --- namespaces, errors, reload
fails "apply into a missing namespace" apply -n nowhere -f "$WORK/node.yaml" \
	-f "$WORK/rayjob.yaml"
expect_eq 'Error from server (NotFound): namespaces "nowhere" not found' \
	"$err" "missing namespace"
expect_contains "$(cat "$WORK/out")" "node/vnode-1 " \
	"the other document still applied"
fails "no kubeconfig" --kubeconfig "$WORK/none" get ns
expect_contains "$err" "kubeconfig" "kubeconfig error"
expect_eq "namespace/default" "$(KUBECONFIG= vr --kubeconfig /dev/null \
	--server "$API" --certificate-authority "$CA" --token "$TOKEN" \
	get ns default -o name)" "--server, --certificate-authority, --token"
fails "no token" --kubeconfig /dev/null --server "$API" \
	--certificate-authority "$CA" get ns default
expect_contains "$err" "Unauthorized" "no token: 401"
fails "wrong CA" --kubeconfig /dev/null --server "$API" --token "$TOKEN" \
	--certificate-authority /etc/ssl/certs/ca-certificates.crt get ns default
expect_eq "namespace/default" "$(KUBECONFIG= vr --kubeconfig /dev/null \
	--server "$API" --insecure-skip-tls-verify --token "$TOKEN" \
	get ns default -o name)" "--insecure-skip-tls-verify"
rc=0; vr get ns -o bogus >/dev/null 2>&1 || rc=$?
expect_eq 2 "$rc" "a bad -o is a usage error"
vr policy reload >"$WORK/out" 2>"$WORK/err" || fail "policy reload: $(cat "$WORK/err")"
expect_contains "$(cat "$WORK/out")" "reloaded" "policy reload"
# Once at start, once for the request.
[ "$(grep -c "reloaded Lua scripts" "$WORK/volrayd.log")" -ge 2 ] || fail "daemon did not reload"
pass "errors and policy reload"

# node add --virtual: simulated nodes in one request each.
vr node add --virtual --count 3 --cpu 8 --memory 32Gi --pods 20 --name-prefix sim \
	--labels zone=a,tier=gpu --taints gpu=true:NoSchedule >"$WORK/out" ||
	fail "node add"
expect_eq 3 "$(grep -c ' created$' "$WORK/out")" "node add output"
k wait --for=condition=Ready node/sim-0 node/sim-2 --timeout=10s >/dev/null ||
	fail "added nodes not Ready"
expect_eq "8 20" "$(k get node sim-1 -o jsonpath='{.status.allocatable.cpu} {.status.allocatable.pods}')" "allocatable"
expect_eq "a gpu" "$(k get node sim-1 -o jsonpath='{.metadata.labels.zone} {.metadata.labels.tier}')" "labels"
expect_eq "gpu true NoSchedule" "$(k get node sim-1 -o jsonpath='{.spec.taints[0].key} {.spec.taints[0].value} {.spec.taints[0].effect}')" "taints"
vr node add --virtual --count 2 --cpu 1 --memory 1Gi --name-prefix sim >/dev/null || fail "node add again"
k get node sim-3 sim-4 >/dev/null || fail "a second add does not continue the names"
rc=0; vr node add --virtual --count 2 --cpu 1 >/dev/null 2>&1 || rc=$?
expect_eq 2 "$rc" "node add without --memory is a usage error"
rc=0; vr node add --virtual --count 1 --cpu 1 --memory 1Gi --taints gpu:Sometimes >/dev/null 2>&1 || rc=$?
expect_eq 2 "$rc" "a bad taint effect is a usage error"
pass "node add --virtual"
