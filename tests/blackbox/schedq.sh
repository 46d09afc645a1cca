#!/bin/sh
# The scheduler's queues and policies, through the real daemon on
# simulated nodes: two queues share a node by weight (proportion); a job
# whose minResources exceed its queue's capability stays Pending while
# another queue's job runs (enqueue); minTaskMember gates a gang
# (NotEnoughPodsOfTask); the PodGroup's phase and the Queue's allocated
# follow; a closed queue admits nothing.
. "$(dirname "$0")/lib.sh"
start_daemon
VR="$top_builddir/volray"

queue() { # name weight [capability-cpu]
	cap=""
	[ -n "${3:-}" ] && cap="capability: {cpu: \"$3\"}"
	k apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec: {weight: $2, reclaimable: true, $cap}
YAML
}
bare() { # name queue cpu
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {scheduling.volcano.sh/queue-name: $2, volray.io/sim-duration: 1h}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "$3", memory: 100Mi}}}]
YAML
}
bound_count() { # prefix
	k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
		awk -v p="$1" 'index($1, p) == 1 && $2 != "" {n++} END {print n+0}'
}

# --- weights: 1 : 3 of an 8-cpu node ---------------------------------
queue light 1
queue heavy 3
for i in 0 1 2 3 4 5 6 7; do
	bare light-$i light 1
	bare heavy-$i heavy 1
done
"$VR" node add --virtual --count 1 --cpu 8 --memory 32Gi --name-prefix share >/dev/null ||
	fail "node add"
wait_eq 8 "pods bound on the shared node" bound_count ""
expect_eq 2 "$(bound_count light-)" "the weight-1 queue got a quarter"
expect_eq 6 "$(bound_count heavy-)" "the weight-3 queue got three quarters"
alloc() { k get queue "$1" -o jsonpath='{.status.allocated.cpu}'; }
wait_eq 6 "heavy's allocated" alloc heavy
pass "two queues share a node by weight (proportion)"
k delete pods --all --wait=true >/dev/null
k delete node share-0 >/dev/null

# --- capability and enqueue ------------------------------------------
"$VR" node add --virtual --count 2 --cpu 4 --memory 16Gi --name-prefix cap >/dev/null
queue small 1 2
pg() { # name queue minMember min-cpu
	k apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec: {minMember: $3, queue: $2, minResources: {cpu: "$4"}}
YAML
}
member() { # name group cpu [role]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {scheduling.k8s.io/group-name: $2, volcano.sh/task-spec: "${4:-worker}", volray.io/sim-duration: 1h}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "$3"}}}]
YAML
}
pg big small 3 3
for i in 0 1 2; do member big-$i big 1; done
pg fits light 2 2
for i in 0 1; do member fits-$i fits 1; done
phase() { k get podgroup "$1" -o jsonpath='{.status.phase}'; }
wait_eq Running "the other queue's job runs" phase fits
expect_eq 2 "$(bound_count fits-)" "both of its pods bound"
expect_eq Pending "$(phase big)" "the job over its queue's capability is not admitted"
expect_eq 0 "$(bound_count big-)" "none of its pods bound"
why() { k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
case "$(why big-0)" in
*"is Pending"*) ;;
*) fail "pending pod's reason: $(why big-0)" ;;
esac
pass "a job over its queue's capability stays Pending while another queue's job runs"

# Raise the capability: the job is admitted and runs.
k patch queue small --type merge -p '{"spec":{"capability":{"cpu":"4"}}}' >/dev/null
wait_eq Running "admitted after the capability grew" phase big
expect_eq 3 "$(bound_count big-)" "all three bound"
pass "enqueue admits it once the capability allows"
k delete pods --all --wait=true >/dev/null
k delete podgroups --all >/dev/null

# --- minTaskMember -----------------------------------------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: roles}
spec: {minMember: 2, minTaskMember: {ps: 1, worker: 1}}
YAML
member roles-w0 roles 1 worker
member roles-w1 roles 1 worker
cond() { k get podgroup roles -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].reason}'; }
msg() { why roles-w0 | cut -c1-61; }
wait_eq "NotEnoughPodsOfTask: Not enough valid pods of each task for g" "the missing role keeps the gang out" msg
expect_eq 0 "$(bound_count roles-)" "no pod bound without its ps"
member roles-ps roles 1 ps
wait_eq 3 "bound once the ps exists" bound_count roles-
pass "minTaskMember: every role reaches its minimum or nothing runs"
k delete pods --all --wait=true >/dev/null
k delete podgroups --all >/dev/null

# --- a closed queue ----------------------------------------------------
queue shut 1
k patch queue shut --subresource=status --type merge -p '{"status":{"state":"Closed"}}' >/dev/null
pg late shut 1 1
member late-0 late 1
# Two whole scheduling cycles later, still nothing may have happened.
cycles() { curl -s "$API/metrics" | awk '/^volray_scheduler_cycles_total/ {print $2}'; }
c0=$(cycles)
at_least() { [ "$(cycles)" -ge $((c0 + 2)) ] && echo yes || echo no; }
wait_eq yes "two cycles" at_least
expect_eq Pending "$(phase late)" "a closed queue admits no PodGroup"
expect_eq 0 "$(bound_count late-)" "and binds none of its pods"
pass "a closed queue admits nothing"
