#!/bin/sh
# The volray verbs that follow things or are volray's own, against a real
# volrayd with the local node: logs -f receiving a line printed after the
# call started, logs -p and the query parameters of --since, --timestamps
# and --limit-bytes; wait --for=jsonpath with a value, without one, and
# timing out (exit 1, kubectl's message); policy list naming gang.lua with
# its file; rayjob logs showing a RayJob's output read from its head;
# kubeconfig --merge keeping an existing context (--set-current); colour
# on a terminal only, never with NO_COLOR or --no-color; bad flags exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clilib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
"$VR" node add --virtual --count 2 --cpu 16 --memory 64Gi >/dev/null
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"

# --- logs -f: a line written after the call started reaches it
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'echo first; while [ ! -e $WORK/go ]; do sleep 0.1; done; echo second; echo third']
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/talker --timeout=15s >/dev/null || fail "talker not Running"
"$VR" logs -f talker >"$WORK/follow" 2>&1 &
follower=$!
i=0
until grep -q first "$WORK/follow"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "logs -f did not print the first line: $(cat "$WORK/follow")"
	sleep 0.1
done
grep -q second "$WORK/follow" && fail "second line before it was written"
# The container waits for this file.
touch "$WORK/go"
wait $follower || fail "logs -f did not end with the container: $(cat "$WORK/follow")"
expect_eq "first
second
third" "$(cat "$WORK/follow")" "logs -f output"
pass "logs -f: lines written after the call started, until the container ends"

expect_eq "third" "$(vr logs talker --tail 1)" "--tail"
ts=$(vr logs talker --timestamps --tail 1)
echo "$ts" | grep -Eq '^20[0-9-]+T[0-9:.]+Z third$' || fail "--timestamps: $ts"
expect_eq "fir" "$(vr logs talker --since 1h --limit-bytes 3)" "--since with --limit-bytes"
vr logs talker --since-time 2020-01-01T00:00:00Z >/dev/null || fail "logs --since-time"
status 2 "--since with --since-time" logs talker --since 1h --since-time 2020-01-01T00:00:00Z
status 2 "--since bogus" logs talker --since bogus
pass "logs --tail, --timestamps, --since, --since-time, --limit-bytes"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: flaky}
spec:
  nodeName: $NODE
  restartPolicy: OnFailure
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'echo "run at \$(date +%s%N)"; exit 1']}
YAML
vr wait pod/flaky --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=CrashLoopBackOff \
	--timeout 15s >/dev/null || fail "no back-off"
prev=$(vr logs flaky -p)
expect_contains "$prev" "run at" "logs -p"
expect_eq "$(k logs flaky -p)" "$prev" "logs -p as kubectl"
pass "logs -p: the previous run's log"

# --- wait --for=jsonpath
expect_eq "pod/talker condition met" \
	"$(vr wait pod/talker --for=jsonpath='{.status.phase}'=Succeeded --timeout 10s)" \
	"wait jsonpath=value"
expect_eq "pod/talker condition met" \
	"$(vr wait pod/talker --for=jsonpath='{.status.startTime}' --timeout 5s)" \
	"wait jsonpath (exists)"
expect_eq "pod/talker condition met" \
	"$(vr wait pod/talker --for=jsonpath=.status.phase=Succeeded --timeout 5s)" \
	"wait jsonpath without braces"
status 1 "wait jsonpath timing out" wait pod/talker --for=jsonpath='{.status.phase}'=Running --timeout 1s
expect_eq "error: timed out waiting for the condition on pods/talker" "$err" \
	"wait jsonpath timeout message (kubectl's)"
status 1 "wait for a path never there" wait pod/talker --for=jsonpath='{.status.nothing}' --timeout 1s
status 2 "wait jsonpath with an empty value" wait pod/talker --for=jsonpath='{.status.phase}'=
status 2 "wait jsonpath unclosed" wait pod/talker --for=jsonpath='{.status.phase'
# A later change reaches a waiting wait through its watch.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: gate}
data: {state: closed}
YAML
vr wait configmap/gate --for=jsonpath='{.data.state}'=open --timeout 15s >"$WORK/wait.out" 2>&1 &
waiter=$!
wait_watchers 1
k patch configmap gate --type=merge -p '{"data":{"state":"open"}}' >/dev/null
wait $waiter || fail "wait did not see the change: $(cat "$WORK/wait.out")"
# --for=create: an object made after the call started.
vr wait configmap/later --for=create --timeout 15s >"$WORK/wait.out" 2>&1 &
waiter=$!
wait_watchers 1
k create configmap later >/dev/null
wait $waiter || fail "wait --for=create: $(cat "$WORK/wait.out")"
expect_eq "configmap/later condition met" "$(cat "$WORK/wait.out")" "wait --for=create"
status 1 "wait --for=create timing out" wait configmap/never --for=create --timeout 1s
pass "wait --for=jsonpath: value, existence, timeout (exit 1), a change seen through the watch; --for=create"

# --- policy list
vr policy list >"$WORK/policies" || fail "policy list"
grep -Eq "^plugin +gang +1 +/.*/policies/gang\.lua +[0-9]+[smh]" "$WORK/policies" ||
	fail "policy list lacks gang.lua with its file: $(cat "$WORK/policies")"
grep -Eq "^controller +rayjob +<none> +/.*/lua/controllers/rayjob\.lua" "$WORK/policies" ||
	fail "policy list lacks the rayjob controller"
grep -Eq "^config +scheduler\.yaml +<none> +/.*/scheduler\.yaml" "$WORK/policies" ||
	fail "policy list lacks scheduler.yaml"
vr policy list -o wide | grep -q '"overcommit-factor":1.2' || fail "policy list -o wide: arguments"
vr policy list -o json | python3 -c 'import json, sys
d = json.load(sys.stdin)
g = [p for p in d["plugins"] if p["name"] == "gang"][0]
assert g["file"].endswith("/policies/gang.lua") and g["loadedAt"].endswith("Z"), g
assert d["config"]["file"].endswith("scheduler.yaml")
assert any(c["name"] == "rayjob" for c in d["controllers"])' || fail "policy list -o json"
status 2 "policy list -o name" policy list -o name
pass "policy list: controllers, plugins (gang.lua), scheduler.yaml with files and load times"

# --- rayjob logs: the Ray job's output from its head
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: hello-ray}
spec:
  submissionMode: HTTPMode
  entrypoint: sh -c 'echo volray-rayjob-line-1; sleep 1; echo volray-rayjob-line-2'
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          nodeSelector: {kubernetes.io/hostname: $NODE}
          containers: [{name: ray-head, image: rayproject/ray:2.46.0, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
YAML
vr wait rayjob/hello-ray --for=jsonpath='{.status.jobDeploymentStatus}'=Running --timeout 30s >/dev/null ||
	fail "hello-ray not Running: $(k get rayjob hello-ray -o jsonpath='{.status}')"
vr rayjob logs hello-ray -f >"$WORK/rj.out" 2>&1 || fail "rayjob logs -f: $(cat "$WORK/rj.out")"
expect_contains "$(cat "$WORK/rj.out")" "volray-rayjob-line-1" "rayjob logs -f"
expect_contains "$(cat "$WORK/rj.out")" "volray-rayjob-line-2" "rayjob logs -f to the end"
vr wait rayjob/hello-ray --for=jsonpath='{.status.jobStatus}'=SUCCEEDED --timeout 20s >/dev/null || fail "hello-ray not SUCCEEDED"
expect_contains "$(vr rayjob logs hello-ray)" "volray-rayjob-line-2" "rayjob logs"
status 1 "rayjob logs of a missing RayJob" rayjob logs nope
expect_contains "$err" "NotFound" "missing RayJob"
status 2 "rayjob without logs" rayjob hello-ray
pass "rayjob logs [-f]: the Ray job's output through the head's Jobs API"

# --- kubeconfig --merge: the daemon's entries added, the user's kept
cat >"$WORK/mine" <<'YAML'
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://prod.example:6443"}
users:
- name: me
  user: {token: abc}
contexts:
- name: prod
  context: {cluster: prod, user: me, namespace: team}
current-context: prod
preferences: {}
YAML
chmod 644 "$WORK/mine"
vr kubeconfig --merge "$WORK/mine" >/dev/null || fail "kubeconfig --merge"
expect_eq "prod" "$(kubectl --kubeconfig "$WORK/mine" config current-context)" "current-context kept"
expect_eq "prod volray" "$(kubectl --kubeconfig "$WORK/mine" config get-contexts -o name | sort | tr '\n' ' ' | sed 's/ $//')" \
	"both contexts"
expect_eq "https://prod.example:6443 abc team" "$(kubectl --kubeconfig "$WORK/mine" config view --raw \
	-o jsonpath='{.clusters[?(@.name=="prod")].cluster.server} {.users[?(@.name=="me")].user.token} {.contexts[?(@.name=="prod")].context.namespace}')" \
	"the user's entries unchanged"
expect_eq 600 "$(stat -c %a "$WORK/mine")" "merged file is private"
vr kubeconfig --merge "$WORK/mine" --set-current >/dev/null || fail "--set-current"
expect_eq "volray" "$(kubectl --kubeconfig "$WORK/mine" config current-context)" "--set-current"
expect_eq "namespace/default" "$(KUBECONFIG="$WORK/mine" vr get ns default -o name)" "the merged context works"
expect_eq 2 "$(kubectl --kubeconfig "$WORK/mine" config get-contexts -o name | wc -l)" "merging twice adds nothing"
HOME="$WORK/home" vr kubeconfig --merge >/dev/null || fail "merge into a new ~/.kube/config"
expect_eq "volray" "$(kubectl --kubeconfig "$WORK/home/.kube/config" config get-contexts -o name)" "new ~/.kube/config"
status 1 "merge into itself" kubeconfig --merge "$KUBECONFIG"
status 2 "--set-current without --merge" kubeconfig --set-current
ls "$WORK"/mine.volray-* 2>/dev/null && fail "a temporary file was left"
pass "kubeconfig --merge: entries added, the user's kept, current-context only with --set-current"

# --- colour only on a terminal, never with NO_COLOR or --no-color
ESC=$(printf '\033')
vr get pods >"$WORK/plain"
grep -q "$ESC" "$WORK/plain" && fail "colour into a file"
script -qec "$VR get pods" /dev/null >"$WORK/tty" </dev/null || fail "script"
grep -q "${ESC}\[32mCompleted" "$WORK/tty" || fail "no colour on a terminal: $(cat -v "$WORK/tty")"
NO_COLOR=1 script -qec "$VR get pods" /dev/null >"$WORK/tty" </dev/null
grep -q "$ESC" "$WORK/tty" && fail "colour with NO_COLOR: $(cat -v "$WORK/tty")"
script -qec "$VR get pods --no-color" /dev/null >"$WORK/tty" </dev/null
grep -q "$ESC" "$WORK/tty" && fail "colour with --no-color"
script -qec "$VR get pods nope" /dev/null >"$WORK/tty" </dev/null || true
grep -q "${ESC}\[31mError from server" "$WORK/tty" || fail "error prefix not red on a terminal: $(cat -v "$WORK/tty")"
NO_COLOR=1 script -qec "$VR get pods nope" /dev/null >"$WORK/tty" </dev/null || true
grep -q "$ESC" "$WORK/tty" && fail "coloured error with NO_COLOR"
script -qec "$VR get frobs" /dev/null >"$WORK/tty" </dev/null || true
grep -q "${ESC}\[31merror${ESC}\[0m: the server doesn't have a resource type" "$WORK/tty" ||
	fail "client error prefix not red on a terminal: $(cat -v "$WORK/tty")"
vr get frobs 2>&1 | grep -q "^error: the server" || fail "plain error prefix off a terminal"
# Columns line up the same with and without colour.
script -qec "$VR get pods" /dev/null </dev/null | sed "s/${ESC}\[[0-9;]*m//g; s/\r//" >"$WORK/tty"
expect_eq "$(awk '{print index($0, "STATUS")}' "$WORK/plain" | head -n 1)" \
	"$(awk '{print index($0, "STATUS")}' "$WORK/tty" | head -n 1)" "columns with colour"
pass "colour: on a terminal only; NO_COLOR and --no-color turn it off"

# --- usage errors of the new flags and verbs
for verb in rayjob kubeconfig policy; do
	status 2 "$verb --no-such-flag" "$verb" --no-such-flag
done
status 2 "logs --limit-bytes x" logs talker --limit-bytes x
status 2 "logs --limit-bytes 0" logs talker --limit-bytes 0
status 2 "policy nothing" policy nothing
pass "bad flags exit 2"
