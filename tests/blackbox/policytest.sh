#!/bin/sh
# volray policy test and policy check, offline (no daemon): the built-in
# plugins' spec files pass; a user's policy directory with its own plugin
# and spec runs over the built-in ones; a wrong expectation fails with
# exit 1 and says what was wanted and got; policy check accepts a good
# directory and refuses a bad one with file and line.
. "$(dirname "$0")/lib.sh"
VR="$top_builddir/volray"

out=$("$VR" policy test 2>&1) || fail "built-in specs: $out"
case "$out" in
*"0 failed"*) ;;
*) fail "summary: $out" ;;
esac
n=$(printf '%s\n' "$out" | grep -c '^ok ')
[ "$n" -ge 10 ] || fail "only $n built-in cases"
pass "the built-in plugins' specs pass ($n cases)"

D="$WORK/mine"
mkdir -p "$D"
cat >"$D/scheduler.yaml" <<'YAML'
actions: "allocate"
tiers:
- plugins:
  - name: keep-off
    arguments: {label: broken}
  - name: predicates
YAML
cat >"$D/keep-off.lua" <<'LUA'
-- Test plugin: never on a node whose <label> label is "true".
local P = { arguments = { label = { type = "string", default = "maintenance" } } }
local label
function P.open(ssn, args) label = args.label end
function P.predicate(ssn, task, node)
  if node.labels[label] == "true" then return "node(s) were " .. label end
end
return P
LUA
spec() { # expected-node
	cat >"$D/keep-off.spec.yaml" <<YAML
cases:
- name: the broken node is avoided
  cluster:
  - {kind: Node, metadata: {name: bad, labels: {broken: "true"}}, status: {allocatable: {cpu: "8", memory: 8Gi}}}
  - {kind: Node, metadata: {name: good}, status: {allocatable: {cpu: "1", memory: 8Gi}}}
  - {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  expect:
    binds: {p: $1}
YAML
}
spec good
out=$("$VR" policy test "$D" 2>&1) || fail "the user's spec: $out"
expect_eq "ok   keep-off.spec.yaml: the broken node is avoided" "$(printf '%s\n' "$out" | head -n 1)" "its case line"
spec bad
if out=$("$VR" policy test "$D" 2>&1); then fail "a wrong expectation passed: $out"; fi
case "$out" in
*"FAIL keep-off.spec.yaml: the broken node is avoided"*"binds: want [p=bad], got [p=good]"*) ;;
*) fail "the failure says what was wanted and got: $out" ;;
esac
pass "a policy directory's own plugin and spec; a wrong expectation fails with want/got"

out=$("$VR" policy check "$D" 2>&1) || fail "check a good dir: $out"
case "$out" in *"2 plugins: keep-off predicates"*) ;; *) fail "check output: $out" ;; esac
sed -i 's/label: broken/colour: red/' "$D/scheduler.yaml"
if out=$("$VR" policy check "$D" 2>&1); then fail "a bad argument passed the check"; fi
case "$out" in *"scheduler.yaml:4: plugin keep-off: unknown argument colour"*) ;;
*) fail "check names file and line: $out" ;; esac
echo 'return {' >"$D/keep-off.lua"
if out=$("$VR" policy check "$D" 2>&1); then fail "a syntax error passed the check"; fi
case "$out" in *"keep-off.lua:"*) ;; *) fail "syntax error names the file: $out" ;; esac
pass "policy check: a good directory loads; a bad argument or script is refused with file:line"

# A task view lists every field to pairs() (they are filled on first read).
P="$WORK/pairs"
mkdir -p "$P"
printf 'actions: "allocate"\ntiers:\n- plugins:\n  - name: probe\n' >"$P/scheduler.yaml"
cat >"$P/probe.lua" <<'LUA'
-- Test plugin: refuses every node unless pairs(task) saw the task's fields.
local P = {}
function P.predicate(ssn, task, node)
  local seen = {}
  for k, v in pairs(task) do seen[k] = v end
  for _, k in ipairs({ "name", "namespace", "uid", "priority", "resreq", "job",
      "status", "preemptable", "best_effort", "critical", "creation", "role" }) do
    if seen[k] == nil then return "node(s) saw no " .. k end
  end
  if task.resreq.cpu ~= 1000 or task.job.name == nil then return "node(s) saw wrong values" end
end
return P
LUA
cat >"$P/probe.spec.yaml" <<'YAML'
cases:
- name: pairs over a task view
  cluster:
  - {kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "8", memory: 8Gi}}}
  - {kind: Pod, metadata: {name: p1}, spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  expect:
    binds: {p1: n1}
YAML
out=$("$VR" policy test "$P" 2>&1) || fail "pairs over a task view: $out"
case "$out" in *"ok   probe.spec.yaml: pairs over a task view"*) ;; *) fail "pairs: $out" ;; esac
case "$out" in *"failed in predicate"*) fail "the probe plugin failed: $out" ;; esac
pass "pairs() over a task view lists all its fields"

# A plugin that fails fails the case (its outcome is not the policy's),
# unless the case expects it.
cat >"$P/probe.lua" <<'LUA'
local P = {}
function P.predicate(ssn, task, node) error("boom in the probe") end
return P
LUA
if out=$("$VR" policy test "$P" 2>&1); then fail "a failing plugin passed: $out"; fi
case "$out" in *"boom in the probe"*"FAIL probe.spec.yaml"*"plugin failures: want none, got 1"*) ;;
*) fail "the failure names the plugin's error: $out" ;; esac
sed -i 's/    binds: {p1: n1}/    binds: {p1: n1}\n    plugin_failures: true/' "$P/probe.spec.yaml"
out=$("$VR" policy test "$P" 2>&1) || fail "plugin_failures: true: $out"
pass "a plugin's failure fails its case unless expected (plugin_failures: true)"
