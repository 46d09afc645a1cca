#!/bin/sh
# The resourceclaim controller (lua/controllers/resourceclaim.lua),
# kube-controller-manager's, alone: volrayd --roles api,controllers, no
# scheduler or nodes, so the scheduler's part (allocation, reservedFor,
# the delete-protection finalizer) is written by hand, as vc-scheduler
# writes it (tests/blackbox/vcdra.sh has the scheduler). A pod of a
# ResourceClaimTemplate gets a claim made from the template (generateName
# <pod>-<claim>-, the template's labels and annotations, the annotation
# resource.kubernetes.io/pod-claim-name, owned by the pod) and its
# status.resourceClaimStatuses names it; a pod bound by hand gets its
# allocated claim reserved; a pod that finishes is dropped from
# reservedFor, the allocation and finalizer go and its generated claim is
# deleted; a deleted pod's direct claim is freed the same way and kept; a
# claim deleted while allocated and reserved for no one loses its
# finalizer and goes. The controller runs as
# system:controller:resource-claim-controller, as kube's does.
. "$(dirname "$0")/lib.sh"

start_daemon --roles api,controllers

k apply -f - >/dev/null <<'YAML' || fail "create the template and the pod"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  metadata:
    labels: {team: a}
    annotations: {note: from-template}
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

claim_of() {
	k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].name}={.status.resourceClaimStatuses[0].resourceClaimName}'
}
wait_eq yes "tpod's status.resourceClaimStatuses" sh -c \
	"kubectl get pod tpod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -q . && echo yes"
st=$(claim_of tpod)
claim=${st#gpu=}
expect_eq "gpu=$claim" "$st" "tpod's status.resourceClaimStatuses"
expect_contains "$claim" "tpod-gpu-" "the claim's generated name"
expect_eq '[{"name":"gpu","resourceClaimName":"'"$claim"'"}]' \
	"$(k get pod tpod -o jsonpath='{.status.resourceClaimStatuses}')" "exactly the fields kube writes"
expect_eq "1" "$(k get resourceclaims -o name | wc -l)" "one claim"
expect_eq "Pod tpod $(k get pod tpod -o jsonpath='{.metadata.uid}') true true" \
	"$(k get resourceclaim "$claim" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].uid} {.metadata.ownerReferences[0].controller} {.metadata.ownerReferences[0].blockOwnerDeletion}')" \
	"the claim's owner"
expect_eq "gpu from-template a gpu.example.com" \
	"$(k get resourceclaim "$claim" -o jsonpath='{.metadata.annotations.resource\.kubernetes\.io/pod-claim-name} {.metadata.annotations.note} {.metadata.labels.team} {.spec.devices.requests[0].exactly.deviceClassName}')" \
	"the claim's annotations, labels and spec"
expect_eq "" "$(k get resourceclaim "$claim" -o jsonpath='{.metadata.finalizers}')" "no finalizer at creation (the scheduler adds it)"
pass "a pod of a ResourceClaimTemplate gets its claim, recorded in status.resourceClaimStatuses"

# Changes to the pod (a label, the binding below) make no second claim.
k label pod tpod touched=yes >/dev/null

# The scheduler's part, by hand: the finalizer, the allocation, the
# binding.
alloc='{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}'
k patch resourceclaim "$claim" --type=merge \
	-p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' >/dev/null ||
	fail "add the finalizer"
k patch resourceclaim "$claim" --subresource=status --type=merge \
	-p "{\"status\":{\"allocation\":$alloc}}" >/dev/null || fail "allocate by hand"
curl -fs -X POST -H 'Content-Type: application/json' \
	-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"tpod"},"target":{"kind":"Node","name":"n1"}}' \
	"$API/api/v1/namespaces/default/pods/tpod/binding" >/dev/null || fail "bind tpod"
state() {
	k get resourceclaim "$1" -o jsonpath='{.status.reservedFor[*].name}|{.status.allocation.devices.results[0].device}|{.metadata.finalizers}'
}
wait_eq 'tpod|gpu-0|["resource.kubernetes.io/delete-protection"]' \
	"the allocated claim of a bound pod, reserved for it" state "$claim"
expect_eq "pods $(k get pod tpod -o jsonpath='{.metadata.uid}')" \
	"$(k get resourceclaim "$claim" -o jsonpath='{.status.reservedFor[0].resource} {.status.reservedFor[0].uid}')" \
	"reservedFor's entry"
expect_eq "1" "$(k get resourceclaims -o name | wc -l)" "one claim after the pod changed"
pass "a bound pod's allocated claim is reserved for it"

# The pod finishes: reservation, allocation and finalizer go, and so does
# its generated claim.
k patch pod tpod --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null ||
	fail "tpod Succeeded"
wait_eq "" "the finished pod's generated claim, deleted" sh -c \
	"kubectl get resourceclaim '$claim' -o name 2>/dev/null"
expect_eq "tpod" "$(k get pod tpod -o jsonpath='{.metadata.name}')" "the pod, kept"
pass "a finished pod's generated claim is released and deleted"

# --- a direct claim: its pod deleted, the device is free and the claim
# stays (it is the user's).
k apply -f - >/dev/null <<YAML || fail "create the claim and pod"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, finalizers: [resource.kubernetes.io/delete-protection]}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: dpod}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: shared}]
YAML
k patch resourceclaim shared --subresource=status --type=merge \
	-p "{\"status\":{\"allocation\":$alloc}}" >/dev/null || fail "allocate shared by hand"
wait_eq 'dpod|gpu-0|["resource.kubernetes.io/delete-protection"]' \
	"shared, reserved for dpod (created bound)" state shared
k delete pod dpod --grace-period=0 --force >/dev/null 2>&1 || fail "delete dpod"
wait_eq '||' "shared, free: no reservation, allocation or finalizer" state shared
pass "a deleted pod's claim loses its reservation, allocation and finalizer and stays"

# A claim reserved for a pod that is gone is cleaned up when it is written
# with that reservation (as after a restart), and one deleted while
# allocated but reserved for no one lets go of its finalizer.
k patch resourceclaim shared --type=merge \
	-p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' >/dev/null
k patch resourceclaim shared --subresource=status --type=merge \
	-p "{\"status\":{\"allocation\":$alloc,\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"ghost\",\"uid\":\"0000\"}]}}" >/dev/null
wait_eq '||' "shared, its reservation for a pod that does not exist dropped" state shared
k patch resourceclaim shared --type=merge \
	-p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' >/dev/null
k patch resourceclaim shared --subresource=status --type=merge \
	-p "{\"status\":{\"allocation\":$alloc}}" >/dev/null
expect_eq '|gpu-0|["resource.kubernetes.io/delete-protection"]' "$(state shared)" \
	"an allocated claim reserved for no one keeps its allocation (no transition)"
k delete resourceclaim shared --wait=false >/dev/null
wait_eq "" "shared, deleted once its finalizer went" sh -c \
	"kubectl get resourceclaim shared -o name 2>/dev/null"
pass "a deleted claim reserved for no one loses its allocation and finalizer and goes"

# --- the template's claim deleted by hand is made again; a deleted pod's
# generated claim goes with it (the garbage collector).
k apply -f - >/dev/null <<'YAML' || fail "create tpod2"
apiVersion: v1
kind: Pod
metadata: {name: tpod2}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
YAML
wait_eq yes "tpod2's claim" sh -c \
	"kubectl get pod tpod2 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -q . && echo yes"
c2=$(k get pod tpod2 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k delete resourceclaim "$c2" >/dev/null
wait_eq yes "tpod2's claim made again" sh -c \
	"kubectl get pod tpod2 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -v '^$c2\$' | grep -q . && echo yes"
c3=$(k get pod tpod2 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$c3" >/dev/null || fail "the new claim $c3"
k delete pod tpod2 --grace-period=0 --force >/dev/null 2>&1
wait_eq "" "the deleted pod's generated claim, collected" sh -c \
	"kubectl get resourceclaim '$c3' -o name 2>/dev/null"
pass "a generated claim deleted by hand is made again; it goes with its pod"

# --- a template that does not exist: a Warning Event on the pod, whose
# source is kube-controller-manager's for this controller, resource_claim.
k apply -f - >/dev/null <<'YAML' || fail "create npod"
apiVersion: v1
kind: Pod
metadata: {name: npod}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: nosuch}]
YAML
wait_eq "resource_claim resource_claim" "npod's FailedResourceClaimCreation Event's source" \
	k get events --field-selector involvedObject.name=npod,reason=FailedResourceClaimCreation \
	-o jsonpath='{.items[0].source.component} {.items[0].reportingComponent}'
k delete pod npod --grace-period=0 --force >/dev/null 2>&1
pass "the controller's Events come from resource_claim, as kube's"

# The controller's identity and role, as kube's.
expect_eq "system:controller:resource-claim-controller" \
	"$(k get clusterrolebinding system:controller:resource-claim-controller -o jsonpath='{.subjects[0].name}')" \
	"the controller's user"
expect_eq yes "$(k auth can-i create resourceclaims --as=system:controller:resource-claim-controller)" \
	"the controller may create claims"
expect_eq no "$(k auth can-i delete pods --as=system:controller:resource-claim-controller 2>/dev/null || true)" \
	"the controller may not delete pods"
pass "the controller runs as system:controller:resource-claim-controller"

# --- a pod made while the controller was off (--controllers without it)
# gets its claim when volrayd starts with it: the pods there are at load
# go through its pod watch (initial = true), as an informer's first list.
stop_daemon
start_daemon --roles api,controllers --controllers='*,-resourceclaim'
k apply -f - >/dev/null <<'YAML' || fail "create tpod3"
apiVersion: v1
kind: Pod
metadata: {name: tpod3}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
YAML
expect_eq "" "$(k get pod tpod3 -o jsonpath='{.status.resourceClaimStatuses}')" "tpod3's claims without the controller"
stop_daemon
start_daemon --roles api,controllers
wait_eq yes "tpod3's claim, made after a restart with the controller" sh -c \
	"kubectl get pod tpod3 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' | grep -q tpod3-gpu- && echo yes"
pass "a pod made while the controller was off gets its claim when it starts"
