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
# Every case in the spec files runs and passes: a case dropped (not read,
# or skipped) fails here. The cases counted by PyYAML (python3-kubernetes
# brings it), else as the spec files write them: "- " at the line's start.
if python3 -c 'import yaml' 2>/dev/null; then
	want=$(python3 - "$top_srcdir"/policies/*.spec.yaml <<'PY'
import sys, yaml
print(sum(len(yaml.safe_load(open(f)).get("cases") or []) for f in sys.argv[1:]))
PY
) || fail "cannot count the cases of policies/*.spec.yaml"
else
	want=$(cat "$top_srcdir"/policies/*.spec.yaml | grep -c '^- ')
fi
[ "$want" -gt 0 ] || fail "no case in policies/*.spec.yaml"
n=$(printf '%s\n' "$out" | grep -c '^ok ')
expect_eq "$want" "$n" "built-in cases passed (ok lines), of the spec files' cases"
expect_contains "$out" "$want cases, 0 failed" "the summary's count"
pass "every case of the built-in plugins' specs runs and passes ($n cases)"

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

# The failure is told once (no scheduler log line besides the case's),
# with the user's file:line and the extension point, not the batch
# trampoline's chunk or the C frames.
cat >"$P/probe.lua" <<'LUA'
local P = {}
local function helper(node) error("boom in the helper") end
function P.predicate(ssn, task, node) helper(node) end
return P
LUA
out=$("$VR" policy test "$P" 2>&1) || fail "plugin_failures: true: $out"
n=$(printf '%s\n' "$out" | grep -c 'boom in the helper')
expect_eq 1 "$n" "the failure is printed once: $out"
case "$out" in *"probe.lua:2: in upvalue 'helper'"*"probe.lua:3: in function 'predicate'"*) ;;
*) fail "the traceback names the user's lines and the extension point: $out" ;; esac
case "$out" in *"volray-batch"*|*"local fn"*|*"[C]"*|*"plugin_fn"*) fail "internal frames: $out" ;; esac
pass "a plugin's traceback: once, the user's file:line and extension point only"

# A case asserts what the session writes and records: the PodGroup's
# condition, the pods' PodScheduled, events, a queue's allocated and a
# plugin's figures (proportion's deserved); it overrides one plugin's
# arguments without the tiers; failurePolicy Fail turns an error in
# job_valid or job_enqueueable into a rejection whose reason is
# PluginFailed with the error; a job_valid message ends with the
# plugin's name even when its words name it; a scheduling.k8s.io
# PodGroup's PodGroupScheduled is SchedulerError when a plugin failed on
# it, Unschedulable with the plugin's words when it refused.
Q="$WORK/quota"
mkdir -p "$Q"
cat >"$Q/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: teamquota
    arguments: {team: blue}
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
cat >"$Q/teamquota.lua" <<'LUA'
-- Test plugin: the team named in its arguments is over its quota; a
-- job of team boom makes it fail, one of team late at enqueue.
local P = { arguments = { team = { type = "string", default = "" } } }
local over
function P.open(ssn, args) over = args.team end
function P.job_valid(ssn, job)
  if job.labels.team == "boom" then error("kaboom") end
  if job.labels.team == over then
    return false, "TeamQuota", "team " .. over .. " is over its quota"
  end
  return true
end
function P.job_enqueueable(ssn, job)
  if job.labels.team == "late" then error("enqueue kaboom") end
  return 0
end
return P
LUA
NODE='{kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}}'
pod() { # name group cpu
	echo "  - {kind: Pod, metadata: {name: $1, annotations: {scheduling.k8s.io/group-name: $2}}, spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: \"$3\", memory: 1Gi}}}]}}"
}
cat >"$Q/teamquota.spec.yaml" <<YAML
cases:
- name: held back with the plugin's reason everywhere
  cluster:
  - $NODE
  - {kind: Queue, metadata: {name: q1}, spec: {weight: 1}}
  - {kind: PodGroup, metadata: {name: pg-blue, labels: {team: blue}}, spec: {minMember: 2, queue: q1}}
  - {kind: PodGroup, metadata: {name: pg-red, labels: {team: red}}, spec: {minMember: 1, queue: q1}}
$(pod blue-0 pg-blue 1)
$(pod blue-1 pg-blue 1)
$(pod red-0 pg-red 2)
  expect:
    binds: {red-0: n1}
    podgroups:
      pg-blue: {phase: Inqueue, condition: Unschedulable, reason: TeamQuota, message: "team blue is over its quota (plugin teamquota)"}
      pg-red: {phase: Running}
    pods:
      blue-0: {status: "False", reason: Unschedulable, message: "TeamQuota: team blue"}
      red-0: {status: "True"}
    events:
    - {object: podgroup/pg-blue, reason: TeamQuota, message: over its quota}
    - {object: pod/blue-1, reason: FailedScheduling, message: TeamQuota}
    queues:
      q1: {allocated: {cpu: "2", memory: 1Gi}}
- name: another team over its quota, by one argument
  arguments: {teamquota: {team: red}}
  cluster:
  - $NODE
  - {kind: PodGroup, metadata: {name: pg-blue, labels: {team: blue}}, spec: {minMember: 1}}
  - {kind: PodGroup, metadata: {name: pg-red, labels: {team: red}}, spec: {minMember: 1}}
$(pod blue-0 pg-blue 1)
$(pod red-0 pg-red 1)
  expect:
    binds: {blue-0: n1}
    podgroups:
      pg-red: {reason: TeamQuota, message: "team red"}
- name: an error in job_valid with failurePolicy Fail holds the job
  config:
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - {name: gang}
      - {name: teamquota, failurePolicy: Fail}
  cluster:
  - $NODE
  - {kind: PodGroup, metadata: {name: pg-boom, labels: {team: boom}}, spec: {minMember: 1}}
$(pod boom-0 pg-boom 1)
  expect:
    binds: {}
    plugin_failures: true
    podgroups:
      pg-boom: {reason: PluginFailed, message: "plugin teamquota failed in job_valid"}
    events:
    - {object: queue/root, reason: PluginFailed, message: kaboom}
- name: a scheduling.k8s.io PodGroup a plugin failed on is SchedulerError
  config:
    actions: "allocate"
    tiers:
    - plugins:
      - {name: gang}
      - {name: teamquota, failurePolicy: Fail}
  cluster:
  - $NODE
  - {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {name: k-boom, labels: {team: boom}},
     spec: {schedulingPolicy: {gang: {minCount: 1}}}}
  - {kind: Pod, metadata: {name: kboom-0}, spec: {schedulerName: volcano, schedulingGroup: {podGroupName: k-boom}, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  expect:
    binds: {}
    plugin_failures: true
    podgroups:
      k-boom: {condition: PodGroupScheduled, reason: SchedulerError, message: "plugin teamquota failed in job_valid"}
- name: a scheduling.k8s.io PodGroup a plugin refused is Unschedulable with its words
  cluster:
  - $NODE
  - {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {name: k-blue, labels: {team: blue}},
     spec: {schedulingPolicy: {basic: {}}}}
  - {kind: Pod, metadata: {name: kblue-0}, spec: {schedulerName: volcano, schedulingGroup: {podGroupName: k-blue}, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  expect:
    binds: {}
    podgroups:
      k-blue: {condition: PodGroupScheduled, reason: Unschedulable, message: "team blue is over its quota (plugin teamquota)"}
    pods:
      kblue-0: {status: "False", reason: Unschedulable, message: "TeamQuota: team blue"}
- name: an error in job_enqueueable with failurePolicy Fail is the refusal
  config:
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - {name: gang}
      - {name: teamquota, failurePolicy: Fail}
  cluster:
  - $NODE
  - {kind: PodGroup, metadata: {name: pg-late, labels: {team: late}}, spec: {minMember: 1, minResources: {cpu: "1"}}}
$(pod late-0 pg-late 1)
  expect:
    binds: {}
    plugin_failures: true
    podgroups:
      pg-late: {phase: Pending, condition: Unschedulable, reason: PluginFailed,
                message: "plugin teamquota failed in job_enqueueable: "}
    pods:
      late-0: {status: "False", reason: Unschedulable,
               message: "pod group pg-late is Pending: PluginFailed: plugin teamquota failed in job_enqueueable"}
    events:
    - {object: podgroup/pg-late, reason: PluginFailed, message: "teamquota.lua:14: enqueue kaboom"}
- name: a message that names the plugin still ends with its name
  arguments: {teamquota: {team: teamquota}}
  cluster:
  - $NODE
  - {kind: PodGroup, metadata: {name: pg-tq, labels: {team: teamquota}}, spec: {minMember: 1}}
$(pod tq-0 pg-tq 1)
  expect:
    binds: {}
    podgroups:
      pg-tq: {reason: TeamQuota, message: "team teamquota is over its quota (plugin teamquota)"}
    pods:
      tq-0: {message: "TeamQuota: team teamquota is over its quota (plugin teamquota)"}
- name: the same error with failurePolicy Ignore (the default) lets it run
  config:
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - {name: gang}
      - {name: teamquota}
  cluster:
  - $NODE
  - {kind: PodGroup, metadata: {name: pg-boom, labels: {team: boom}}, spec: {minMember: 1}}
$(pod boom-0 pg-boom 1)
  expect:
    binds: {boom-0: n1}
    plugin_failures: true
- name: proportion's deserved shares by weight
  cluster:
  - {kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "6", memory: 12Gi, pods: "110"}}}
  - {kind: Queue, metadata: {name: qa}, spec: {weight: 2}}
  - {kind: Queue, metadata: {name: qb}, spec: {weight: 1}}
  - {kind: PodGroup, metadata: {name: ga}, spec: {minMember: 1, queue: qa}}
  - {kind: PodGroup, metadata: {name: gb}, spec: {minMember: 1, queue: qb}}
  - {kind: Pod, metadata: {name: a0, annotations: {scheduling.k8s.io/group-name: ga}}, spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: "6", memory: 12Gi}}}]}}
  - {kind: Pod, metadata: {name: b0, annotations: {scheduling.k8s.io/group-name: gb}}, spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: "6", memory: 12Gi}}}]}}
  expect:
    binds: {}
    queues:
      qa: {deserved: {cpu: "4", memory: 8Gi}}
      qb: {deserved: {cpu: "2", memory: 4Gi}}
YAML
out=$("$VR" policy test "$Q" 2>&1) || fail "the quota spec: $out"
case "$out" in *"9 cases, 0 failed"*) ;; *) fail "the quota spec's summary: $out" ;; esac
# Each kind of expectation can fail, and says what it got.
sed -e 's/reason: TeamQuota, message: "team blue/reason: Other, message: "team blue/' \
    -e 's/red-0: {status: "True"}/red-0: {status: "False"}/' \
    -e 's/message: TeamQuota}/message: NotThere}/' \
    -e 's/q1: {allocated: {cpu: "2"/q1: {allocated: {cpu: "3"/' \
    -e 's/qb: {deserved: {cpu: "2"/qb: {deserved: {cpu: "1"/' \
    -e 's/arguments: {teamquota: {team: red}}/arguments: {teamquota: {team: nobody}}/' \
    "$Q/teamquota.spec.yaml" >"$Q/wrong.yaml"
mv "$Q/wrong.yaml" "$Q/teamquota.spec.yaml"
if out=$("$VR" policy test "$Q" 2>&1); then fail "wrong expectations passed: $out"; fi
for want in 'podgroup pg-blue: reason: want "Other", got "TeamQuota"' \
    'pod red-0: status: want "False", got "True"' \
    'events: none for pod/blue-1 with reason FailedScheduling and a message containing "NotThere"' \
    'queue q1: allocated: cpu: want 3000, got 2000' \
    'queue qb: deserved: cpu: want 1000, got 2000' \
    'FAIL teamquota.spec.yaml: another team over its quota, by one argument'; do
	case "$out" in *"$want"*) ;; *) fail "not said: $want: $out" ;; esac
done
pass "a case asserts conditions, PodScheduled, events, queues; overrides one plugin's arguments; failurePolicy"

# --- an unknown key fails, named with its file and case -------------------
# A misspelt expectation would otherwise pass unchecked.
K="$WORK/keys"
mkdir -p "$K"
keyspec() { # top-key case-key expect-key podgroup-key
	cat >"$K/keys.spec.yaml" <<YAML
$1:
- name: one pod, one node
  config: {actions: "allocate", tiers: [{plugins: [{name: gang}, {name: predicates}]}]}
  cluster:
  - {kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "4", memory: 8Gi}}}
  - {kind: PodGroup, metadata: {name: pg}, spec: {minMember: 1}}
  - {kind: Pod, metadata: {name: p, annotations: {scheduling.k8s.io/group-name: pg}}, spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  $2: "2026-01-01T01:00:00Z"
  expect:
    binds: {p: n1}
    $3: []
    podgroups: {pg: {$4: Running}}
YAML
}
keyspec cases now evicted phase
out=$("$VR" policy test "$K" 2>&1) || fail "the spec with every key known: $out"
case "$out" in *"1 cases, 0 failed"*) ;; *) fail "the known keys' summary: $out" ;; esac
for bad in "cases now evictd phase|FAIL keys.spec.yaml: one pod, one node: expect: unknown key \"evictd\" (want binds, pipelined, evicted, ungated, plugin_failures, podgroups, pods, events, queues or victims)" \
    "cases nowe evicted phase|FAIL keys.spec.yaml: one pod, one node: unknown key \"nowe\" (want name, cluster, config, arguments, now or expect)" \
    "case now evicted phase|FAIL keys.spec.yaml: at the top: unknown key \"case\" (want cases)" \
    "cases now evicted phse|podgroup pg: unknown key \"phse\" (want phase, condition, reason or message)"; do
	keyspec ${bad%%|*}
	if out=$("$VR" policy test "$K" 2>&1); then fail "${bad%%|*}: passed: $out"; fi
	case "$out" in *"${bad#*|}"*"1 failed"*) ;;
	*) fail "${bad%%|*}: want '${bad#*|}': $out" ;; esac
done
pass "an unknown key at the top, in a case, in its expect or a podgroup's fails, named"

# --- session replay names the user's files, not a temporary copy --------
# A record written by hand (volray session record's shape): one node, one
# pod, and a recorded picky plugin that throws.
R="$WORK/replay"
mkdir -p "$R/pol"
cat >"$R/rec.json" <<'JSON'
{"apiVersion": "volray.io/v1", "kind": "SessionRecord", "recorded": "2026-01-01T01:00:00Z",
 "policyFiles": {
  "scheduler.yaml": "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: picky\n  - name: predicates\n",
  "picky.lua": "return {\n  predicate = function() error(\"recorded boom\") end }\n"},
 "cluster": [
  {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}},
  {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"schedulerName": "volcano",
   "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}]}
JSON
cd "$R"
out=$("$VR" session replay rec.json 2>&1) || fail "replay the record: $out"
case "$out" in *"failure   plugin picky failed in predicate (rec.json:policyFiles/picky.lua): rec.json:policyFiles/picky.lua:2: recorded boom"*) ;;
*) fail "a recorded plugin's failure names the record: $out" ;; esac
# The user's picky.lua replaces the recorded one.
printf 'local P = {}\nfunction P.predicate(ssn, t, n)\n  return nil\nend\nreturn P\n' >pol/picky.lua
out=$("$VR" session replay rec.json --policy-dir pol 2>&1) || fail "replay with pol: $out"
expect_eq "bind      default/p -> n1
1 binds, 0 pipelined, 0 evicted, 0 jobs waiting" "$out" "the user's picky.lua over the recorded one"
printf 'local P = {}\nfunction P.predicate(ssn, t, n)\n  error("no node pleases me")\nend\nreturn P\n' >pol/picky.lua
out=$("$VR" session replay rec.json --policy-dir pol 2>&1) || fail "replay with a throwing pol/picky.lua: $out"
case "$out" in *"failure   plugin picky failed in predicate (pol/picky.lua): pol/picky.lua:3: no node pleases me"*) ;;
*) fail "a throwing plugin of --policy-dir is named as the user's file: $out" ;; esac
printf 'local P = {\nfunction P.predicate(ssn, t, n)\nend\nreturn P\n' >pol/picky.lua
if out=$("$VR" session replay rec.json --policy-dir pol 2>&1); then fail "a syntax error replayed: $out"; fi
case "$out" in "volray: session replay: pol/picky.lua:2: '(' expected near 'P'") ;;
*) fail "a syntax error names pol/picky.lua:2: $out" ;; esac
rm pol/picky.lua
printf 'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    arguments: {colour: red}\n' >pol/scheduler.yaml
if out=$("$VR" session replay rec.json --policy-dir pol 2>&1); then fail "a bad argument replayed: $out"; fi
case "$out" in "volray: session replay: pol/scheduler.yaml:4: plugin gang takes no arguments (got colour)") ;;
*) fail "a bad scheduler.yaml names pol/scheduler.yaml:4: $out" ;; esac
if out=$("$VR" session replay rec.json --policy-dir nothere 2>&1); then fail "a missing --policy-dir replayed: $out"; fi
expect_eq "volray: session replay: nothere: cannot read the directory" "$out" "a missing --policy-dir"
cd - >/dev/null
pass "session replay names --policy-dir's files (dir/x.lua:LINE) and the record's (FILE:policyFiles/x.lua)"
