#!/bin/sh
# The resourceclaim controller against the real kube-apiserver (the
# anchor, 1.34.4, on Debian's etcd): volrayd --roles controllers
# --controllers resourceclaim --kubeconfig, so kube-apiserver's own
# validation judges every write (the claim made from a template, the
# pod's status.resourceClaimStatuses, reservedFor, the allocation
# cleared and the finalizer removed) and its bootstrap RBAC has kube's
# system:controller:resource-claim-controller role. The scheduler's part
# (the delete-protection finalizer, the allocation, the binding) is
# written by hand, as in resourceclaim.sh.
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh

"$anchors" path kube-apiserver >/dev/null 2>&1 ||
	skip "kube-apiserver is not built (scripts/anchors.sh build kube-apiserver needs the Go module proxy)"
command -v etcd >/dev/null 2>&1 ||
	skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"

A=$WORK/anchor
CPID=""
trap 'rc=$?; set +e; [ -z "$CPID" ] || kill -9 $CPID 2>/dev/null
"$anchors" kube-apiserver stop "$A" >/dev/null 2>&1
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
	echo "---- volrayd (last 30 lines)"; tail -n 30 "$WORK/ctrl.log"
fi
(exit $rc); cleanup' EXIT INT TERM

"$anchors" kube-apiserver start "$A" >"$WORK/start.log" 2>&1 ||
	fail "kube-apiserver start: $(cat "$WORK/start.log")"
export KUBECONFIG="$A/kubeconfig"
"$VOLRAYD" --data-dir "$WORK/ctrl" --kubeconfig "$KUBECONFIG" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles controllers \
	--controllers resourceclaim --leader-elect=false >"$WORK/ctrl.log" 2>&1 &
CPID=$!
wait_eq yes "volrayd's controllers loaded" sh -c \
	"grep -q 'controllers: loaded 1' '$WORK/ctrl.log' && echo yes"

# No kube-controller-manager: the namespace's ServiceAccount by hand.
k create serviceaccount default >/dev/null || fail "create the ServiceAccount"
k apply -f - >/dev/null <<'YAML' || fail "create the template and the pod"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  metadata:
    labels: {team: a}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: tpod}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
YAML
wait_eq yes "tpod's status.resourceClaimStatuses, on kube-apiserver" sh -c \
	"kubectl get pod tpod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -q tpod-gpu- && echo yes"
claim=$(k get pod tpod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
expect_eq '[{"name":"gpu","resourceClaimName":"'"$claim"'"}]' \
	"$(k get pod tpod -o jsonpath='{.status.resourceClaimStatuses}')" "tpod's status.resourceClaimStatuses"
expect_eq "Pod tpod true true gpu a" \
	"$(k get resourceclaim "$claim" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller} {.metadata.ownerReferences[0].blockOwnerDeletion} {.metadata.annotations.resource\.kubernetes\.io/pod-claim-name} {.metadata.labels.team}')" \
	"the claim's owner, annotation and label"
pass "kube-apiserver takes the claim made from the template and the pod's status"

alloc='{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}'
k patch resourceclaim "$claim" --type=merge \
	-p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' >/dev/null ||
	fail "add the finalizer"
k patch resourceclaim "$claim" --subresource=status --type=merge \
	-p "{\"status\":{\"allocation\":$alloc}}" >/dev/null || fail "allocate by hand"
k create --raw /api/v1/namespaces/default/pods/tpod/binding -f - >/dev/null <<'JSON' || fail "bind tpod"
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"tpod"},"target":{"kind":"Node","name":"n1"}}
JSON
state() {
	k get resourceclaim "$1" -o jsonpath='{.status.reservedFor[*].name}|{.status.allocation.devices.results[0].device}|{.metadata.finalizers}'
}
wait_eq 'tpod|gpu-0|["resource.kubernetes.io/delete-protection"]' \
	"the bound pod's claim, reserved for it" state "$claim"
pass "kube-apiserver takes the reservation for the bound pod"

k patch pod tpod --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null ||
	fail "tpod Succeeded"
wait_eq "" "the finished pod's claim, released and deleted" sh -c \
	"kubectl get resourceclaim '$claim' -o name 2>/dev/null"
pass "kube-apiserver takes the release (reservedFor, allocation, finalizer) and the deletion"
if grep -E "controller resourceclaim: .*(failed|403|Forbidden)" "$WORK/ctrl.log" >/dev/null; then
	fail "the controller failed on kube-apiserver: $(grep -E 'controller resourceclaim' "$WORK/ctrl.log" | head -3)"
fi
