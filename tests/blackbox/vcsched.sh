#!/bin/sh
# Volcano's own scheduler against volrayd (issue 39): volrayd runs with
# --roles api,controllers,nodes (no volray scheduler) and two simulated
# nodes of 4 CPUs; Volcano's real vc-scheduler (the anchor,
# scripts/anchors.sh, v1.14.1) schedules with the helm chart's
# volcano-scheduler.conf of ../shared/upstream-samples/volcano-1.15
# (enqueue, allocate, backfill; priority, gang, conformance, overcommit,
# drf, predicates, proportion, nodeorder, binpack).
# Volcano's sample job.yaml (minAvailable 3, six pods of 1 CPU), applied
# unchanged, is admitted by Volcano's enqueue (the vcjob controller makes
# its pods then) and placed whole: every pod bound by Volcano (a
# Scheduled event from "volcano"), its PodGroup Running, the job Running,
# the default queue's allocated CPU 6 as Volcano writes it. The sample
# PodGroup test-pg with a pod of its own is placed too. A gang too big for
# what is left (three pods of 1 CPU, 1.5 CPUs free) is not placed at all:
# no pod bound, its PodGroup Inqueue with Volcano's Unschedulable
# condition (NotEnoughResources, "... 3 minAvailable ..."), the pods'
# PodScheduled False and an Unschedulable event; once the sample job is
# deleted, the gang is placed whole.
#
# What volrayd did differently, and the fixes:
# - Volcano's informers list StorageClasses, CSINodes, CSIDrivers,
#   CSIStorageCapacities, VolumeAttachments, ResourceClaims,
#   ResourceSlices, DeviceClasses and Numatopologies and wait for every
#   list: volrayd served none of them (storagekinds.sh; the Numatopology
#   CRD is in crds/).
# - Volcano writes a PodGroup's status (phase, conditions) with a plain
#   update: upstream's PodGroup CRD has no status subresource. volrayd's
#   has one, and dropped the status of such an update, as kube-apiserver
#   does for a kind with /status, so no PodGroup left Pending. A PodGroup
#   write now keeps its status, and /status stays served for volray's
#   own writers (resource_status_in_main).
# - client-go 0.34's typed clients send built-in kinds in protobuf, and
#   volrayd's decoder read a Pod's status as an opaque message: Volcano's
#   pods/status update (its PodScheduled condition) emptied the pod's
#   status, phase included, and Volcano then counted the gang's tasks
#   Unknown. PodStatus is now decoded in full (registry/kinds/protobuf_msgs.c).
# Not volrayd's: Volcano watches the directory of --scheduler-conf and
# reloads on any write there, so the conf is in a directory of its own
# (beside a log it reloads in a loop). volrayd does not answer
# sendInitialEvents; client-go 0.34 (Volcano 1.14.1) does not ask for it
# unless told to (the test passes without the variable too), and the
# scheduler runs with KUBE_FEATURE_WatchListClient=false so that an anchor
# on client-go 0.35, which asks, lists as before.
#
# VCSCHED_CONF names another conf of the samples: the CI one
# (volcano-scheduler-ci.conf: reclaim and preempt, sla, predicates with
# DynamicResourceAllocationEnable, network-topology-aware) passes as well;
# vcdra.sh places ResourceClaims with it.
# Skips without ../shared or the vc-scheduler anchor
# (scripts/anchors.sh build vc-scheduler).
. "$(dirname "$0")/lib.sh"
need_samples
VC=$SAMPLES/volcano-1.15
CONF=${VCSCHED_CONF:-volcano-scheduler.conf}
[ -f "$VC/$CONF" ] || skip "no $VC/$CONF"
anchors=$top_srcdir/scripts/anchors.sh
"$anchors" path vc-scheduler >/dev/null 2>&1 ||
	skip "vc-scheduler is not built (scripts/anchors.sh build vc-scheduler needs the Go module proxy)"

start_daemon --roles api,controllers,nodes
"$top_builddir/volray" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=20s >/dev/null || fail "nodes not Ready"

mkdir -p "$WORK/conf"
cp "$VC/$CONF" "$WORK/conf/"
KUBE_FEATURE_WatchListClient=false "$anchors" vc-scheduler start "$WORK/vc" \
	--kubeconfig "$DATA/kubeconfig" --scheduler-conf "$WORK/conf/$CONF" \
	--schedule-period 200ms -v 3 >"$WORK/vc-scheduler.log" 2>&1 &
VCPID=$!
KILL_PIDS="$KILL_PIDS $VCPID"
show_vc() {
	echo "---- vc-scheduler log (errors and warnings, last 20)"
	grep -E '^[EW]' "$WORK/vc-scheduler.log" | tail -n 20
}
# set +e: under -e the (exit $rc) that hands cleanup the status would end
# the trap there, leaving the daemon and the scheduler running.
trap 'rc=$?; set +e; [ $rc -eq 0 ] || [ $rc -eq 77 ] || show_vc; (exit $rc); cleanup' EXIT INT TERM

# bound NAME...: how many of the pods have a node.
bound() {
	n=0
	for p in "$@"; do
		[ -z "$(k get pod "$p" -o jsonpath='{.spec.nodeName}' 2>/dev/null)" ] || n=$((n + 1))
	done
	echo $n
}
pgphase() { k get podgroup "$1" -o jsonpath='{.status.phase}'; }

# --- Volcano's sample job, unchanged: placed whole by Volcano
k create -f "$VC/job.yaml" >/dev/null || fail "create the sample job"
pods="test-job-default-nginx-0 test-job-default-nginx-1 test-job-default-nginx-2 test-job-default-nginx-3 test-job-default-nginx-4 test-job-default-nginx-5"
i=0
until [ "$(bound $pods)" = 6 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "the sample job's pods: $(bound $pods) of 6 bound; its PodGroup: $(k get podgroup -o jsonpath='{.items[*].status}')"
	kill -0 "$VCPID" 2>/dev/null || fail "vc-scheduler exited"
	sleep 0.1
done
for p in $pods; do
	node=$(k get pod "$p" -o jsonpath='{.spec.nodeName}')
	expect_eq volcano "$(k get pod "$p" -o jsonpath='{.spec.schedulerName}')" "$p's schedulerName"
	wait_eq "volcano Successfully assigned default/$p to $node" "$p's Scheduled event" \
		k get events --field-selector "involvedObject.name=$p,reason=Scheduled" \
		-o jsonpath='{.items[0].source.component} {.items[0].message}'
done
# The job's PodGroup (test-job-<uid>), the only one yet.
pg=$(k get podgroup -o jsonpath='{.items[0].metadata.name}')
case "$pg" in test-job-*) ;; *) fail "the job's PodGroup is '$pg'" ;; esac
k wait --for=jsonpath='{.status.phase}'=Running "podgroup/$pg" --timeout=20s >/dev/null ||
	fail "the job's PodGroup: $(pgphase "$pg")"
k wait --for=jsonpath='{.status.state.phase}'=Running vcjob/test-job --timeout=20s >/dev/null ||
	fail "the job: $(k get vcjob test-job -o jsonpath='{.status.state.phase}')"
wait_eq 6 "the default queue's allocated CPU (Volcano's queue status)" \
	k get queue default -o jsonpath='{.status.allocated.cpu}'
pass "Volcano's sample job is admitted and placed whole by vc-scheduler, its PodGroup Running"

# --- the sample PodGroup with a pod of its own
k create -f "$VC/apis-artifacts_podgroup.yaml" >/dev/null || fail "create test-pg"
k create -f - >/dev/null <<'YAML' || fail "create test-pg's pod"
apiVersion: v1
kind: Pod
metadata:
  name: pg-pod
  annotations: {scheduling.k8s.io/group-name: test-pg}
spec:
  schedulerName: volcano
  containers:
  - {name: c, image: busybox, resources: {requests: {cpu: 500m, memory: 2G}}}
YAML
wait_eq 1 "test-pg's pod bound" bound pg-pod
k wait --for=jsonpath='{.status.phase}'=Running podgroup/test-pg --timeout=20s >/dev/null ||
	fail "test-pg: $(pgphase test-pg)"
pass "the sample PodGroup's pod is placed, the group Running"

# --- a gang too big for what is left (1.5 CPUs): not placed at all
k create -f - >/dev/null <<'YAML' || fail "create the big gang"
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: big}
spec: {minMember: 3, queue: default}
---
apiVersion: v1
kind: Pod
metadata: {name: big-0, annotations: {scheduling.k8s.io/group-name: big}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big-1, annotations: {scheduling.k8s.io/group-name: big}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big-2, annotations: {scheduling.k8s.io/group-name: big}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
unsched() {
	k get podgroup big -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Unschedulable")].status} {.status.conditions[?(@.type=="Unschedulable")].reason}'
}
wait_eq "Inqueue True NotEnoughResources" "the big gang's PodGroup" unsched
expect_contains "$(k get podgroup big -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}')" \
	"tasks in gang unschedulable: pod group is not ready" "the Unschedulable condition's message"
expect_contains "$(k get podgroup big -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}')" \
	"3 minAvailable" "the Unschedulable condition's message"
wait_event big Unschedulable "3 minAvailable"
for p in big-0 big-1 big-2; do
	wait_eq "False Pending" "$p's PodScheduled condition and phase" \
		k get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.phase}'
done
# Volcano has looked at the gang again since (its Unschedulable event
# counted twice), and still none is bound.
again() {
	c=$(k get events --field-selector involvedObject.name=big,reason=Unschedulable -o jsonpath='{.items[*].count}')
	for n in $c; do [ "$n" -lt 2 ] || { echo yes; return; }; done
	[ "$(echo $c | wc -w)" -lt 2 ] || echo yes
}
wait_eq yes "a later session's word on the big gang" again
expect_eq 0 "$(bound big-0 big-1 big-2)" "pods of the big gang bound"
expect_eq "Burstable" "$(k get pod big-0 -o jsonpath='{.status.qosClass}')" "big-0's status kept through Volcano's update"
pass "a gang too big for the nodes is not placed at all; Volcano's Unschedulable condition and events"

# --- room made: the gang is placed whole
k delete vcjob test-job --wait=false >/dev/null || fail "delete the sample job"
i=0
until [ "$(bound big-0 big-1 big-2)" = 3 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "the big gang once room was made: $(bound big-0 big-1 big-2) of 3 bound"
	sleep 0.1
done
k wait --for=jsonpath='{.status.phase}'=Running podgroup/big --timeout=20s >/dev/null ||
	fail "big: $(pgphase big)"
pass "once the sample job is gone the big gang is placed whole"

kill -0 "$VCPID" 2>/dev/null || fail "vc-scheduler exited"
