#!/bin/sh
# kube-scheduler against volrayd (issue 39): volrayd with --roles
# api,controllers,nodes (no volray scheduler) and two simulated nodes of
# 4 CPUs; the real kube-scheduler (the anchor, scripts/anchors.sh,
# v1.34.4) with its default profile. Its informers sync (the storage and
# DRA kinds are served: storagekinds.sh); a pod is bound to a node with
# kube-scheduler's Scheduled event and runs; a pod too big for the nodes
# stays Pending with kube-scheduler's PodScheduled False, Unschedulable,
# "0/2 nodes are available: 2 Insufficient cpu." and a FailedScheduling
# event; a pod whose claim does not exist waits with VolumeBinding's
# words; a claim for a device only one node has (a ResourceSlice) is
# allocated there by kube-scheduler's DRA plugin (allocation, node
# selector, reservedFor, finalizer written) and its pod bound there; a
# Deployment's pods are all placed.
#
# What volrayd did differently: kube-scheduler's client-go sends the pod's
# Binding and its core/v1 Events in protobuf, which volrayd's decoder did
# not know ("protobuf decoding of kind Binding is not supported"): no pod
# was ever bound. Binding and Event (with MicroTime) are decoded now
# (registry/kinds/protobuf_msgs.c), and the ResourceClaim it updates (finalizer,
# then status) in full, a driver's opaque parameters (a RawExtension)
# included: before, the DRA plugin's write was refused the same way. It runs with KUBE_FEATURE_WatchListClient=false
# as vcsched.sh does (volrayd does not answer sendInitialEvents; client-go
# 0.34 does not ask for it unless told to). Skips when kube-scheduler is
# not built (scripts/anchors.sh build kube-scheduler).
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh
"$anchors" path kube-scheduler >/dev/null 2>&1 ||
	skip "kube-scheduler is not built (scripts/anchors.sh build kube-scheduler needs the Go module proxy)"

start_daemon --roles api,controllers,nodes
"$top_builddir/volray" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=20s >/dev/null || fail "nodes not Ready"

KUBE_FEATURE_WatchListClient=false "$anchors" kube-scheduler start "$WORK/ks" \
	--kubeconfig "$DATA/kubeconfig" -v 2 >"$WORK/kube-scheduler.log" 2>&1 &
KSPID=$!
KILL_PIDS="$KILL_PIDS $KSPID"
show_ks() {
	echo "---- kube-scheduler log (errors and warnings, last 20)"
	grep -E '^[EW]' "$WORK/kube-scheduler.log" | tail -n 20
}
# set +e: under -e the (exit $rc) that hands cleanup the status would end
# the trap there, leaving the daemon and the scheduler running.
trap 'rc=$?; set +e; [ $rc -eq 0 ] || [ $rc -eq 77 ] || show_ks; (exit $rc); cleanup' EXIT INT TERM

# --- a pod that fits: bound by kube-scheduler, running
k run fits --image=busybox --overrides='{"spec":{"containers":[{"name":"fits","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}}' >/dev/null ||
	fail "create pod fits"
k wait --for=condition=PodScheduled pod/fits --timeout=30s >/dev/null ||
	fail "fits not scheduled: $(k get pod fits -o jsonpath='{.status.conditions}')"
node=$(k get pod fits -o jsonpath='{.spec.nodeName}')
case "$node" in vnode-[01]) ;; *) fail "fits on '$node'" ;; esac
expect_eq default-scheduler "$(k get pod fits -o jsonpath='{.spec.schedulerName}')" "fits' schedulerName"
wait_eq "default-scheduler Successfully assigned default/fits to $node" "fits' Scheduled event" \
	k get events --field-selector involvedObject.name=fits,reason=Scheduled \
	-o jsonpath='{.items[0].source.component} {.items[0].message}'
k wait --for=condition=Ready pod/fits --timeout=30s >/dev/null || fail "fits not Ready"
pass "kube-scheduler binds a pod that fits, with its Scheduled event"

# --- a pod too big: kube-scheduler's words
k run huge --image=busybox --overrides='{"spec":{"containers":[{"name":"huge","image":"busybox","resources":{"requests":{"cpu":"9"}}}]}}' >/dev/null ||
	fail "create pod huge"
cond() { k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.phase}'; }
wait_eq "False Unschedulable Pending" "huge's PodScheduled condition" cond huge
expect_contains "$(k get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')" \
	"0/2 nodes are available: 2 Insufficient cpu." "huge's condition message"
expect_eq Burstable "$(k get pod huge -o jsonpath='{.status.qosClass}')" "huge's status kept through kube-scheduler's update"
wait_event huge FailedScheduling "2 Insufficient cpu"
expect_eq "" "$(k get pod huge -o jsonpath='{.spec.nodeName}')" "huge's node"
pass "a pod too big waits with kube-scheduler's condition and FailedScheduling event"

# --- a claim that does not exist: VolumeBinding's words
k apply -f - >/dev/null <<'YAML' || fail "create pod claims"
apiVersion: v1
kind: Pod
metadata: {name: claims}
spec:
  containers: [{name: c, image: busybox, volumeMounts: [{name: d, mountPath: /d}]}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: nowhere}}]
YAML
wait_eq "False Unschedulable Pending" "claims' PodScheduled condition" cond claims
expect_contains "$(k get pod claims -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')" \
	'persistentvolumeclaim "nowhere" not found' "claims' condition message"
pass "a pod whose claim does not exist waits with VolumeBinding's words"

# --- dynamic resource allocation: a claim for a device only vnode-1 has
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
    config: [{opaque: {driver: gpu.example.com, parameters: {sharing: {strategy: TimeSlicing}}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: drapod}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
YAML
k wait --for=condition=PodScheduled pod/drapod --timeout=30s >/dev/null ||
	fail "drapod not scheduled: $(k get pod drapod -o jsonpath='{.status.conditions}')"
expect_eq vnode-1 "$(k get pod drapod -o jsonpath='{.spec.nodeName}')" "drapod's node (the device's)"
expect_eq "gpu.example.com vnode-1 gpu-0 drapod" \
	"$(k get resourceclaim gpu -o jsonpath='{.status.allocation.devices.results[0].driver} {.status.allocation.devices.results[0].pool} {.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}')" \
	"the claim's allocation, written by kube-scheduler"
expect_eq "vnode-1" "$(k get resourceclaim gpu -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}')" "the allocation's node selector"
expect_eq "TimeSlicing resource.kubernetes.io/delete-protection" \
	"$(k get resourceclaim gpu -o jsonpath='{.spec.devices.config[0].opaque.parameters.sharing.strategy} {.metadata.finalizers[0]}')" \
	"the claim's opaque parameters kept through kube-scheduler's update, its finalizer"
expect_eq "gpu allocated,reserved" "$(k get resourceclaim gpu --no-headers | tr -s ' ' | cut -d' ' -f1-2)" "the claim's STATE"
pass "kube-scheduler allocates a ResourceClaim on the node with the device and binds its pod there"

# --- a Deployment (volray's controllers) placed by kube-scheduler
k create deployment web --image=busybox --replicas=4 >/dev/null || fail "create deployment"
k rollout status deployment/web --timeout=60s >/dev/null || fail "web not rolled out: $(k get pods -l app=web -o wide)"
expect_eq 4 "$(k get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c vnode-)" "web's pods with a node"
kill -0 "$KSPID" 2>/dev/null || fail "kube-scheduler exited"
pass "a Deployment's pods are all placed by kube-scheduler"
