#!/bin/sh
# Scheduler policies from a --policy-dir: a custom Lua plugin (a job order
# by label and a predicate that rejects nodes by label) changes the
# outcome as written; a hot reload (the file changes) swaps it; a broken
# policy is refused and the running one stays; a plugin that throws does
# not stop scheduling; priority preemption spares non-preemptable pods;
# reclaim between queues by deserved share; Volcano's scheduler configs
# load unchanged; the KubeCon task-priority sample orders by priority.
. "$(dirname "$0")/lib.sh"
need_samples
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill, preempt, reclaim"
tiers:
- plugins:
  - name: urgent-first
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: no-dirty
    arguments: {label: dirty}
YAML
cat >"$POL/urgent-first.lua" <<'LUA'
-- Test plugin: jobs whose pods carry urgent=yes go first.
local P = {}
function P.job_order(ssn, a, b)
  local ua, ub = a.labels.urgent == "yes", b.labels.urgent == "yes"
  if ua == ub then return 0 end
  return ua and -1 or 1
end
return P
LUA
write_nodirty() { # label
	cat >"$POL/no-dirty.lua" <<LUA
-- Test plugin: never on a node labelled <label>=true.
local P = { arguments = { label = { type = "string", default = "dirty" } } }
local label
function P.open(ssn, args) label = args.label end
function P.predicate(ssn, task, node)
  if node.labels[label] == "true" then return "node(s) were $1" end
  return nil
end
return P
LUA
}
write_nodirty dirty
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"

bare() { # name cpu [labels-yaml] [annotations-yaml]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {${3:-}}
  annotations: {volray.io/sim-duration: 1h, ${4:-}}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "$2"}}}]
YAML
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
why() { k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }

# --- job order by label, predicate by label ---------------------------
bare plain 2
bare urgent 2 "urgent: \"yes\""
"$VR" node add --virtual --count 1 --cpu 2 --memory 4Gi --name-prefix dirty --labels dirty=true >/dev/null
wait_eq "0/1 nodes are available: 1 node(s) were dirty." "the Lua predicate's reason" why urgent
"$VR" node add --virtual --count 1 --cpu 2 --memory 4Gi --name-prefix clean >/dev/null
wait_eq clean-0 "the urgent job went first" node_of urgent
expect_eq "" "$(node_of plain)" "the plain one waits (the only clean node is full)"
pass "a custom plugin orders jobs by label and rejects nodes by label"

# --- hot reload: the file changes, the new predicate applies ----------
write_nodirty sticky
k label node dirty-0 sticky=true >/dev/null
# dirty-0 is still dirty=true, but the predicate now reads its argument
# (label: dirty) -- swap the argument in scheduler.yaml too.
sed -i 's/arguments: {label: dirty}/arguments: {label: sticky}/' "$POL/scheduler.yaml"
wait_eq "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were sticky." \
	"the reloaded predicate's reason" why plain
pass "editing the policy files reloads them"

# --- a broken policy is refused, the running one stays -----------------
cp "$POL/scheduler.yaml" "$WORK/good.yaml"
sed -i 's/label: sticky/colour: blue/' "$POL/scheduler.yaml"
out=$("$VR" policy reload 2>&1) && fail "a bad argument was accepted: $out"
case "$out" in
*"scheduler.yaml:"*"unknown argument colour"*) ;;
*) fail "refusal names file, line and argument: $out" ;;
esac
expect_eq "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were sticky." "$(why plain)" \
	"the running policy stays"
cp "$WORK/good.yaml" "$POL/scheduler.yaml"
"$VR" policy reload >/dev/null || fail "the good policy reloads"
pass "a broken policy is refused with file and line; the running one stays"
k delete pods --all --wait=true >/dev/null

# --- a throwing plugin does not stop scheduling ------------------------
cat >"$POL/urgent-first.lua" <<'LUA'
-- Test plugin: throws whenever it is asked about a node.
local P = {}
function P.predicate(ssn, task, node) error("boom in predicate") end
return P
LUA
"$VR" policy reload >/dev/null || fail "reload the throwing plugin"
bare after-a 1
bare after-b 1
wait_eq clean-0 "scheduling goes on" node_of after-a
wait_eq clean-0 "both pods" node_of after-b
fails() { curl -s "$API/metrics" | awk '/^volray_scheduler_plugin_failures_total/ {print ($2 > 0) ? "yes" : "no"}'; }
wait_eq yes "the failure is counted" fails
grep -q 'plugin urgent-first failed in predicate (.*urgent-first.lua).*boom in predicate' "$WORK/volrayd.log" ||
	fail "the log names plugin, point, file and error"
pass "a throwing plugin is skipped for the session; scheduling goes on"
k delete pods --all --wait=true >/dev/null
k delete node dirty-0 >/dev/null

# --- priority preemption ------------------------------------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
YAML
prio_pod() { # name class [annotations]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {volray.io/sim-duration: 1h, ${3:-}}
spec:
  schedulerName: volcano
  priorityClassName: $2
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
prio_pod keep low 'volcano.sh/preemptable: "false"'
prio_pod victim low
wait_eq clean-0 "low pods run" node_of victim
prio_pod vip high
wait_eq clean-0 "the high-priority pod is bound after preemption" node_of vip
gone() { k get pod victim -o name 2>/dev/null | wc -l | tr -d ' '; }
expect_eq 0 "$(gone)" "the preemptable low pod was evicted"
expect_eq clean-0 "$(node_of keep)" "the non-preemptable one stays"
pass "priority preemption evicts a lower-priority pod and spares non-preemptable ones"
k delete pods --all --wait=true >/dev/null

# --- reclaim between queues ---------------------------------------------
for q in qa qb; do
	k apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $q}
spec: {weight: 1, reclaimable: true}
YAML
done
for i in 0 1; do bare a-$i 1 "" "scheduling.volcano.sh/queue-name: qa"; done
wait_eq clean-0 "qa takes the whole node" node_of a-1
for i in 0 1; do bare b-$i 1 "" "scheduling.volcano.sh/queue-name: qb"; done
bound_b() { k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | grep -c '^b-.* clean-0'; }
wait_eq 1 "qb reclaims its share" bound_b
left() { k get pods -o name | grep -c 'pod/a-'; }
expect_eq 1 "$(left)" "qa keeps its deserved half"
pass "reclaim: a queue below its deserved share takes it back from one above"
k delete pods --all --wait=true >/dev/null

# --- Volcano's own scheduler configs load unchanged ---------------------
for conf in "$SAMPLES"/volcano/*.conf "$SAMPLES"/volcano-1.15/*.conf; do
	cp "$conf" "$POL/scheduler.yaml"
	out=$("$VR" policy reload 2>&1) || fail "$(basename "$conf") refused: $out"
done
# Every plugin Volcano's shipped files name is one volray has.
grep -q 'no [a-z-]*.lua in the policy directories' "$WORK/volrayd.log" &&
	fail "a plugin of Volcano's files was unknown: $(grep 'no [a-z-]*.lua in the policy' "$WORK/volrayd.log")"
# One volray does not have is skipped with a warning that names it.
{ cat "$SAMPLES/volcano/volcano-scheduler.conf"; printf '  - name: made-up-plugin\n'; } >"$POL/scheduler.yaml"
out=$("$VR" policy reload 2>&1) || fail "a file naming an unknown plugin refused: $out"
grep -q 'plugin made-up-plugin: no made-up-plugin.lua in the policy directories; skipped' "$WORK/volrayd.log" ||
	fail "the unknown plugin was not reported"
pass "Volcano's scheduler configs load unchanged (unknown plugins skipped with a warning)"

# --- the KubeCon task-priority sample ---------------------------------
# Its PriorityClass high-pri (1000): of two pods that both want the only
# free node, the one of higher priority gets it.
k apply -f "$SAMPLES/volcano/kubecon-2019-china_task-priority_high-priority.yaml" >/dev/null ||
	fail "the sample PriorityClass"
k cordon clean-0 >/dev/null
prio_pod normal-pod low
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: high-pod
  annotations: {volray.io/sim-duration: 1h}
spec:
  schedulerName: volcano
  priorityClassName: high-pri
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
YAML
k uncordon clean-0 >/dev/null
wait_eq clean-0 "the high-priority pod gets the node" node_of high-pod
expect_eq "" "$(node_of normal-pod)" "the lower-priority pod waits"
pass "the KubeCon task-priority sample: higher priority goes first"

# --- Volcano 1.15's queue admission gate ------------------------------
# A pod that opts in (annotation) is created with the gate and
# PodScheduled=False SchedulingGated; the scheduler removes the gate once
# its queue has room, then places it. Gates may only be removed later.
k delete pods --all --wait=true >/dev/null
cat >"$WORK/gated.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: gated
  annotations: {scheduling.volcano.sh/queue-allocation-gate: "true", volray.io/sim-duration: 1h}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
dry=$(k create --dry-run=server -o json -f "$WORK/gated.yaml") || fail "dry run"
echo "$dry" | python3 -c '
import json, sys
p = json.load(sys.stdin)
assert p["spec"]["schedulingGates"] == [{"name": "scheduling.volcano.sh/queue-allocation-gate"}], p["spec"]
c = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"][0]
assert c["status"] == "False" and c["reason"] == "SchedulingGated", c' ||
	fail "the gate and its condition at creation"
k create -f "$WORK/gated.yaml" >/dev/null || fail "create gated"
k wait --for=condition=PodScheduled pod/gated --timeout=30s >/dev/null ||
	fail "the gated pod was not placed: $(k get pod gated -o yaml)"
[ -n "$(node_of gated)" ] || fail "PodScheduled without a node"
expect_eq "" "$(k get pod gated -o jsonpath='{.spec.schedulingGates}')" "gates left"
curl -fs "$API/metrics" | grep -q '^volray_scheduler_gates_removed_total [1-9]' ||
	fail "gates removed not counted"
bare plain 1 >/dev/null
out=$(k patch pod plain --type=json -p '[{"op":"add","path":"/spec/schedulingGates","value":[{"name":"example.com/x"}]}]' 2>&1) &&
	fail "a gate was added after creation"
echo "$out" | grep -q "only deletion is allowed" || fail "adding a gate: $out"
pass "queue admission gates: set at creation, removed by the scheduler, never added later"

# --- policy list -o wide: each plugin's failurePolicy -------------------
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    failurePolicy: Fail
- plugins:
  - name: predicates
YAML
"$VR" policy reload >/dev/null || fail "reload a policy with failurePolicy: Fail"
"$VR" policy list -o wide >"$WORK/wide" || fail "policy list -o wide"
head -n 1 "$WORK/wide" | grep -Eq '^KIND +NAME +TIER +FILE +LOADED +FAILUREPOLICY +ARGUMENTS$' ||
	fail "policy list -o wide's columns: $(head -n 1 "$WORK/wide")"
grep -Eq '^plugin +gang +1 +[^ ]+/gang\.lua +[0-9]+[smh] +Fail +\{' "$WORK/wide" ||
	fail "gang's failurePolicy Fail: $(cat "$WORK/wide")"
grep -Eq '^plugin +predicates +2 +[^ ]+ +[0-9]+[smh] +Ignore +\{' "$WORK/wide" ||
	fail "predicates' failurePolicy Ignore (the default): $(cat "$WORK/wide")"
expect_eq "gang=Fail predicates=Ignore priority=Ignore" "$("$VR" policy list -o json | python3 -c 'import json, sys
print(" ".join(sorted(p["name"] + "=" + p["failurePolicy"] for p in json.load(sys.stdin)["plugins"])))')" \
	"policy list -o json: failurePolicy"
pass "policy list -o wide and -o json show each plugin's failurePolicy"
