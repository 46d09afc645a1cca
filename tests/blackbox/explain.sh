#!/bin/sh
# volray explain and volray queue pending: why a job waits, from the
# scheduler's last sessions, for a gang that does not fit, a job kept
# Pending by its queue's capability, a pod no node's predicates pass, a
# Volcano Job and a bare PodGroup whose pods are not created yet, a
# preemption that no victim allows; the same record as JSON at the API's
# explain path; a queue's waiting jobs in line; a clear 404 for a job
# that does not wait; --explain-sessions=0 turns it off (503); a Volcano
# Job named as vcjob/NAME, vcjob NAME, with -n.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: guard
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
# guard: a pod named "guarded" is never a victim.
cat >"$POL/guard.lua" <<'LUA'
local G = {}
function G.preemptable(ssn, preemptor, candidates)
  local out = {}
  for _, v in ipairs(candidates) do
    if v.name ~= "guarded" then out[#out + 1] = v end
  end
  return out
end
return G
LUA
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"
"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi --name-prefix n >/dev/null ||
	fail "add nodes"
# field JSON-PATH: read a field of the explain record on stdin.
field() {
	python3 -c 'import json,sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v.get(k) if v is not None else None
print("" if v is None else v)' "$1"
}
explained() { # kind/name field
	"$VR" explain "$1" -o json 2>/dev/null | field "$2"
}

# --- a gang that does not fit ------------------------------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: big}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: big-0, annotations: {scheduling.k8s.io/group-name: big}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 3}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big-1, annotations: {scheduling.k8s.io/group-name: big}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 5}}}]}
YAML
wait_eq NotEnoughResources "the gang's reason" explained podgroup/big reason
case "$(explained podgroup/big message)" in
*"tasks in gang unschedulable"*"(plugin gang)"*"0/2 nodes are available: 2 Insufficient cpu."*) ;;
*) fail "the gang's message: $(explained podgroup/big message)" ;; esac
expect_eq "discarded: not ready" "$(explained podgroup/big steps.1.result)" "allocate's step"
expect_eq gang "$(explained podgroup/big steps.1.plugin)" "the plugin that found it not ready"
expect_eq default/big "$(explained pod/big-1 job)" "a pod explains through its PodGroup"
out=$("$VR" explain podgroup/big)
for want in "Reason:    NotEnoughResources" "Steps:" "allocate" "Pending pods:" \
    "Insufficient cpu" "Queue default (Open" "Cluster:   2 nodes"; do
	case "$out" in *"$want"*) ;; *) fail "the screen lacks '$want': $out" ;; esac
done
# The API path serves the same record to any client.
doc=$(curl -fs "$API/apis/volray.io/v1/explain/namespaces/default/podgroups/big") ||
	fail "GET the explain path"
expect_eq JobExplanation "$(echo "$doc" | field kind)" "the API's kind"
pass "a gang that does not fit: gang's reason, the FitError, the steps, the screen"

# --- a queue over its capability keeps a job Pending ---------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: small}
spec: {weight: 1, capability: {cpu: "1"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: capped}
spec: {minMember: 2, queue: small, minResources: {cpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata: {name: capped-0, annotations: {scheduling.k8s.io/group-name: capped}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: capped-1, annotations: {scheduling.k8s.io/group-name: capped}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
YAML
wait_eq NotEnqueued "the capped job's reason" explained podgroup/capped reason
expect_eq refused "$(explained podgroup/capped steps.0.result)" "enqueue's step"
expect_eq proportion "$(explained podgroup/capped steps.0.plugin)" "the plugin whose vote said no"
expect_eq 1 "$(explained podgroup/capped queueState.capability.cpu)" "the queue's capability beside it"
pass "a job kept Pending by its queue's capability: enqueue refused by proportion"

# --- a pod whose predicates no node passes --------------------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: picky}
spec:
  schedulerName: volcano
  nodeSelector: {disk: ssd}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]
YAML
wait_eq Unschedulable "the picky pod's reason" explained pod/picky reason
case "$(explained pod/picky message)" in
*"0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector"*) ;;
*) fail "the predicates' message: $(explained pod/picky message)" ;; esac
pass "a pod no node's predicates pass: the FitError by reason and node count"

# --- jobs whose pods are not created yet ----------------------------------
# A Volcano Job's PodGroup waits in its queue like any other job, pods or
# not: over the small queue's capability it stays Pending, and its
# controller creates no pod; a bare PodGroup admitted before its pods
# exist waits for them.
k apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: big}
spec:
  minAvailable: 2
  schedulerName: volcano
  queue: small
  tasks:
  - replicas: 2
    name: w
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: empty}
spec: {minMember: 2}
YAML
big_pg() {
	k get podgroups -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.ownerReferences[0].name}{"\n"}{end}' |
	    awk '$2 == "big" { print $1 }'
}
i=0
until pg=$(big_pg) && [ -n "$pg" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the vcjob big has no PodGroup"; sleep 0.1
done
wait_eq NotEnqueued "the podless vcjob's reason" explained "podgroup/$pg" reason
expect_eq 0 "$(explained "podgroup/$pg" tasks.total)" "its pods"
expect_eq "" "$(k get pods -l volcano.sh/job-name=big -o name)" "the vcjob's pods"
out=$("$VR" queue pending small)
case "$out" in *"default/$pg"*NotEnqueued*) ;; *) fail "queue pending small: $out" ;; esac
wait_eq NotEnoughTasks "the empty PodGroup's reason" explained podgroup/empty reason
case "$(explained podgroup/empty message)" in
*"pod group empty is Inqueue with 0 of its 2 pods"*) ;;
*) fail "the empty PodGroup's message: $(explained podgroup/empty message)" ;; esac
k delete podgroup empty >/dev/null
k delete vcjob big >/dev/null
pass "a vcjob with no pods and a bare PodGroup without its pods wait in their queues, explained"

# --- a preemption no victim allows ----------------------------------------
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
k delete podgroup big >/dev/null
k delete pod big-0 big-1 --wait=true >/dev/null
# keep-0 is not preemptable; guarded is, but the guard plugin keeps it.
for p in keep-0:false guarded:true; do
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ${p%:*}, annotations: {volray.io/sim-duration: 1h, volcano.sh/preemptable: "${p#*:}"}}
spec: {schedulerName: volcano, priorityClassName: low, containers: [{name: c, image: busybox, resources: {requests: {cpu: 3}}}]}
YAML
done
k wait --for=jsonpath='{.status.phase}'=Running pod/keep-0 pod/guarded --timeout=30s >/dev/null ||
	fail "the low-priority pods run"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec: {schedulerName: volcano, priorityClassName: high, containers: [{name: c, image: busybox, resources: {requests: {cpu: 2}}}]}
YAML
preempt_step() {
	"$VR" explain pod/urgent -o json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin)["steps"]:
    if "candidates" in s: print(s["result"], s["candidates"] > 0, s["allowed"])'
}
wait_eq "no victim allowed True 0" "the preemption step" preempt_step
expect_eq "" "$(k get pod keep-0 -o jsonpath='{.metadata.deletionTimestamp}')" "keep-0 stays"
expect_eq "" "$(k get pod guarded -o jsonpath='{.metadata.deletionTimestamp}')" "guarded stays"
# Each victim with its verdict, and the plugin that kept it.
victims() {
	"$VR" explain pod/urgent -o json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin)["steps"]:
    for v in s.get("victims", []):
        print(s["action"], v["pod"], v["node"] != "", v["verdict"], v.get("plugin", "-"))' | sort | tr '\n' ';'
}
expect_eq "preempt default/guarded True refused guard;preempt default/keep-0 True notPreemptable -;" \
	"$(victims)" "the victims' verdicts"
out=$("$VR" explain pod/urgent)
case "$out" in *"Victims considered (preempt):"*"refused"*"default/guarded on n-"*"(plugin guard)"*) ;;
*) fail "explain's victims for a person: $out" ;; esac
pass "a preemption no victim allows: candidates considered, none allowed, each victim's verdict"

# The same session replayed with a guard that keeps nothing: guarded is
# evicted for urgent, and the replay says so, every time.
"$VR" session record "$WORK/rec.json" || fail "session record"
mkdir -p "$WORK/open"
printf 'return { preemptable = function(ssn, p, c) return c end }\n' >"$WORK/open/guard.lua"
replayed() {
	"$VR" session replay "$WORK/rec.json" --policy-dir "$WORK/open" -o json | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(sorted(d["evicted"]), [sorted(w["victims"].items()) for w in d["waiting"].values() if "victims" in w])'
}
r1=$(replayed) || fail "replay"
expect_eq "['default/guarded'] [[('default/guarded', 'evicted'), ('default/keep-0', 'notPreemptable')]]" \
	"$r1" "the replayed victims"
expect_eq "$r1" "$(replayed)" "the replay again"
pass "a replay with another guard: the victim evicted, the verdicts in the decisions"

# --- a queue's line; a job that does not wait; off ------------------------
out=$("$VR" queue pending default)
case "$out" in *POSITION*JOB*REASON*"default/"*Unschedulable*) ;;
*) fail "queue pending default: $out" ;; esac
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: easy, annotations: {volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "100m"}}}]}
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/easy --timeout=30s >/dev/null ||
	fail "the easy pod runs"
if out=$("$VR" explain pod/easy 2>&1); then fail "a running pod explained: $out"; fi
case "$out" in *"no record in the scheduler's last sessions"*"does not wait"*) ;;
*) fail "the 404 says why: $out" ;; esac
stop_daemon
start_daemon --policy-dir "$POL" --explain-sessions=0
if out=$("$VR" explain pod/picky 2>&1); then fail "explained with --explain-sessions=0"; fi
case "$out" in *"keeps no sessions"*) ;; *) fail "the 503 says why: $out" ;; esac
pass "queue pending lists the line; a running pod is not explained; --explain-sessions=0 turns it off"

# --- a Volcano Job, named the ways a user names it ------------------------
# Its PodGroup is NAME-UID; three pods of 2.5 cpu pass enqueue on two
# 4-cpu nodes but only two fit, so the gang waits.
stop_daemon
start_daemon --policy-dir "$POL"
"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi --name-prefix n >/dev/null ||
	fail "add nodes"
k create namespace other >/dev/null
k apply -n other -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: wide}
spec:
  minAvailable: 3
  tasks:
  - name: w
    replicas: 3
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: 2500m}}}]
YAML
uid=$(k get vcjob wide -n other -o jsonpath='{.metadata.uid}')
[ -n "$uid" ] || fail "the Volcano Job's uid"
vcjob_job() { "$VR" explain vcjob/wide -n other -o json | field job; }
wait_eq "other/wide-$uid" "explain vcjob/wide -n other" vcjob_job
expect_eq NotEnoughResources "$("$VR" explain vcjob wide -n other -o json | field reason)" \
	"explain vcjob NAME (two words, as kubectl takes them)"
expect_eq "other/wide-$uid" "$("$VR" -n other explain jobs.batch.volcano.sh/wide -o json | field job)" \
	"explain jobs.batch.volcano.sh/NAME with -n before the verb"
out=$("$VR" explain vcjob/wide -n other) || fail "explain vcjob/wide for a person"
case "$out" in *"Job:       other/wide-$uid"*"Reason:    NotEnoughResources"*) ;;
*) fail "explain vcjob/wide's screen: $out" ;; esac
if out=$("$VR" explain vcjob/wide 2>&1); then fail "vcjob/wide found outside its namespace"; fi
case "$out" in *NotFound*|*"not found"*) ;; *) fail "vcjob/wide in default: $out" ;; esac
if out=$("$VR" explain vcjob/wide/x -n other 2>&1); then fail "explain vcjob/wide/x: $out"; fi
case "$out" in *"KIND/NAME or KIND NAME"*) ;; *) fail "explain vcjob/wide/x says why: $out" ;; esac
# A RayJob's PodGroup path is built the same way (none waits here: 404).
if out=$("$VR" explain rayjob nosuch -n other 2>&1); then fail "explain rayjob nosuch: $out"; fi
case "$out" in *"job other/ray-nosuch-pg: no record"*) ;;
*) fail "explain rayjob nosuch asks for other/ray-nosuch-pg: $out" ;; esac
pass "explain vcjob/NAME, vcjob NAME, -n NS: the Volcano Job's PodGroup NAME-UID"
