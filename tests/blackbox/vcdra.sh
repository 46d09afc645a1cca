#!/bin/sh
# Volcano's scheduler places ResourceClaims on volrayd (issue 39): volrayd
# with --roles api,controllers,nodes and two simulated nodes, the real
# vc-scheduler (the anchor, v1.14.1) with the predicates plugin's
# predicate.DynamicResourceAllocationEnable (Volcano's CI conf has it). A
# DeviceClass selects a driver's devices and a ResourceSlice offers one
# on vnode-1: a pod with a ResourceClaim for it lands on vnode-1, and
# Volcano writes the claim's status.allocation (the device, a node
# selector for vnode-1) and reservedFor. A second pod whose claim cannot
# be satisfied (the one device is taken) stays Pending with Volcano's
# PodScheduled False, "2 cannot allocate all claims" and a
# FailedScheduling event; once a ResourceSlice offers a device on vnode-0
# it is placed there, its claim allocated there. kube-apiserver 1.34
# (the anchor) with the same objects and the same scheduler answers the
# same.
#
# What volrayd did differently: its /version said 1.32. vc-scheduler
# 1.14 sets its Kubernetes feature gates to the defaults of the server's
# version (cmd/scheduler/app/server.go, setupComponentGlobals: "feature
# gate emulation version to 1.32" in its log), and at 1.32
# DynamicResourceAllocation is a beta off by default: no DRA informers,
# no DRA manager, the DRA filter off, so the pod went to any node and no
# claim was written. Forcing the gate on then stops it at startup
# (DRASchedulingFilterTimeout disabled), and that gate cannot be set at
# 1.32 (PreAlpha). volrayd serves resource.k8s.io/v1, which is 1.34's,
# and now says 1.34 (core/api/discovery.c), as the anchor does.
#
# A pod of a ResourceClaimTemplate gets its claim from volrayd's
# resourceclaim controller (kube-controller-manager's; without it the pod
# waits with "ResourceClaim not created yet.", as on kube-apiserver
# alone) and, both devices taken, waits for one; deleting drapod frees
# its device (the controller drops the gone pod from reservedFor, clears
# the allocation and Volcano's delete-protection finalizer) and the pod
# is placed on it. Skips without the vc-scheduler anchor
# (scripts/anchors.sh build vc-scheduler).
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh
"$anchors" path vc-scheduler >/dev/null 2>&1 ||
	skip "vc-scheduler is not built (scripts/anchors.sh build vc-scheduler needs the Go module proxy)"

start_daemon --roles api,controllers,nodes
"$top_builddir/volray" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=20s >/dev/null || fail "nodes not Ready"

# The helm chart's tiers with DRA on in predicates (in a directory of its
# own: vc-scheduler reloads on any write beside its conf).
mkdir -p "$WORK/conf"
cat >"$WORK/conf/dra.conf" <<'EOF'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
EOF
KUBE_FEATURE_WatchListClient=false "$anchors" vc-scheduler start "$WORK/vc" \
	--kubeconfig "$DATA/kubeconfig" --scheduler-conf "$WORK/conf/dra.conf" \
	--schedule-period 200ms -v 3 >"$WORK/vc-scheduler.log" 2>&1 &
VCPID=$!
KILL_PIDS="$KILL_PIDS $VCPID"
show_vc() {
	echo "---- vc-scheduler log (errors and warnings, last 20)"
	grep -E '^[EFW]' "$WORK/vc-scheduler.log" | tail -n 20
}
# set +e: under -e the (exit $rc) that hands cleanup the status would end
# the trap there, leaving the daemon and the scheduler running.
trap 'rc=$?; set +e; [ $rc -eq 0 ] || [ $rc -eq 77 ] || show_vc; (exit $rc); cleanup' EXIT INT TERM

# Volcano's DRA is on only where the server's version has it on by
# default: its informers list the DRA kinds.
wait_eq yes "vc-scheduler's feature gates at 1.34" sh -c \
	"grep -q 'feature gate emulation version to 1.34' '$WORK/vc-scheduler.log' && echo yes"

k apply -f - >/dev/null <<'YAML' || fail "create the DRA objects"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: vnode-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: vnode-1
  pool: {name: vnode-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: drapod}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
YAML

# allocation CLAIM: driver, pool, device, the node selector's node and
# the pod it is reserved for.
allocation() {
	k get resourceclaim "$1" -o jsonpath='{.status.allocation.devices.results[0].driver} {.status.allocation.devices.results[0].pool} {.status.allocation.devices.results[0].device} {.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]} {.status.reservedFor[0].resource}/{.status.reservedFor[0].name}'
}
k wait --for=condition=PodScheduled pod/drapod --timeout=30s >/dev/null ||
	fail "drapod not scheduled: $(k get pod drapod -o jsonpath='{.status.conditions}')"
expect_eq vnode-1 "$(k get pod drapod -o jsonpath='{.spec.nodeName}')" "drapod's node (the device's)"
wait_eq "gpu.example.com vnode-1 gpu-0 vnode-1 pods/drapod" "the claim gpu's allocation, written by Volcano" allocation gpu
expect_eq "$(k get pod drapod -o jsonpath='{.metadata.uid}')" \
	"$(k get resourceclaim gpu -o jsonpath='{.status.reservedFor[0].uid}')" "reservedFor's uid"
expect_eq "gpu allocated,reserved" "$(k get resourceclaim gpu --no-headers | tr -s ' ' | cut -d' ' -f1-2)" "the claim's STATE"
wait_eq "volcano Successfully assigned default/drapod to vnode-1" "drapod's Scheduled event" \
	k get events --field-selector involvedObject.name=drapod,reason=Scheduled \
	-o jsonpath='{.items[0].source.component} {.items[0].message}'
pass "vc-scheduler places a pod with a ResourceClaim on the ResourceSlice's node and allocates the claim there"

# --- a claim that cannot be satisfied: the one device is taken
k apply -f - >/dev/null <<'YAML' || fail "create drapod2"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu2}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: drapod2}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 500m}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu2}]
YAML
cond() { k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.phase}'; }
wait_eq "False Unschedulable Pending" "drapod2's PodScheduled condition" cond drapod2
expect_contains "$(k get pod drapod2 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')" \
	"0/2 nodes are unavailable: 2 cannot allocate all claims." "drapod2's condition message"
wait_event drapod2 FailedScheduling "2 cannot allocate all claims"
expect_eq "" "$(k get pod drapod2 -o jsonpath='{.spec.nodeName}')" "drapod2's node"
expect_eq "" "$(k get resourceclaim gpu2 -o jsonpath='{.status}')" "the claim gpu2's status"
pass "a pod whose claim cannot be satisfied stays Pending with Volcano's condition and FailedScheduling event"

# --- a device on vnode-0: the pod goes there
k apply -f - >/dev/null <<'YAML' || fail "create the second slice"
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: vnode-0-gpu}
spec:
  driver: gpu.example.com
  nodeName: vnode-0
  pool: {name: vnode-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
YAML
k wait --for=condition=PodScheduled pod/drapod2 --timeout=30s >/dev/null ||
	fail "drapod2 not scheduled: $(k get pod drapod2 -o jsonpath='{.status.conditions}')"
expect_eq vnode-0 "$(k get pod drapod2 -o jsonpath='{.spec.nodeName}')" "drapod2's node (the new device's)"
wait_eq "gpu.example.com vnode-0 gpu-0 vnode-0 pods/drapod2" "the claim gpu2's allocation" allocation gpu2
expect_eq "gpu.example.com vnode-1 gpu-0 vnode-1 pods/drapod" "$(allocation gpu)" "the claim gpu's allocation, kept"
pass "once a ResourceSlice offers a device on vnode-0, the waiting pod is placed there and its claim allocated"

# --- a claim template: the resourceclaim controller (kube-controller-
# manager's, lua/controllers/resourceclaim.lua) makes the pod's claim.
# Both devices are taken, so the pod waits for one; deleting drapod
# frees its claim (reservedFor, then the allocation and Volcano's
# delete-protection finalizer), and the pod gets vnode-1's device.
k apply -f - >/dev/null <<'YAML' || fail "create tpod"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: tpod}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
YAML
wait_eq yes "tpod's claim, recorded in its status" sh -c \
	"kubectl get pod tpod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -q . && echo yes"
tclaim=$(k get pod tpod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
expect_contains "$tclaim" "tpod-gpu-" "tpod's claim's name"
expect_eq "Pod tpod true" "$(k get resourceclaim "$tclaim" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')" \
	"tpod's claim's owner"
wait_eq "False Unschedulable Pending" "tpod's PodScheduled condition" cond tpod
wait_event tpod FailedScheduling "cannot allocate all claims"
pass "a pod of a claim template gets its claim from the resourceclaim controller and waits for a device"

# Volcano's allocation carries kube's delete-protection finalizer, which
# tells the controller the allocation is a scheduler's to undo.
expect_eq '["resource.kubernetes.io/delete-protection"]' \
	"$(k get resourceclaim gpu -o jsonpath='{.metadata.finalizers}')" "the claim gpu's finalizer"
k delete pod drapod --wait=false >/dev/null || fail "delete drapod"
wait_eq "" "the claim gpu, freed (no allocation, reservation or finalizer)" \
	k get resourceclaim gpu -o jsonpath='{.status.allocation}{.status.reservedFor}{.metadata.finalizers}'
k wait --for=condition=PodScheduled pod/tpod --timeout=30s >/dev/null ||
	fail "tpod not scheduled: $(k get pod tpod -o jsonpath='{.status.conditions}')"
expect_eq vnode-1 "$(k get pod tpod -o jsonpath='{.spec.nodeName}')" "tpod's node (the freed device's)"
wait_eq "gpu.example.com vnode-1 gpu-0 vnode-1 pods/tpod" "tpod's claim's allocation" allocation "$tclaim"
pass "a deleted pod's device is freed and the waiting template pod is placed on it"

# The template pod deleted: its claim goes with it.
k delete pod tpod --wait=false >/dev/null || fail "delete tpod"
wait_eq "" "tpod's claim, deleted with its pod" sh -c \
	"kubectl get resourceclaim '$tclaim' -o name 2>/dev/null"
pass "a template pod's claim goes with the pod"

kill -0 "$VCPID" 2>/dev/null || fail "vc-scheduler exited"
