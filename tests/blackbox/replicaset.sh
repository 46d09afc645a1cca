#!/bin/sh
# The ReplicaSet controller (lua/controllers/replicaset.lua): it creates
# the pods it is asked for, replaces deleted ones, scales both ways through
# kubectl scale, reports ready/available counts, and its pods go with it.
. "$(dirname "$0")/lib.sh"
start_daemon

k apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs1}
spec:
  replicas: 3
  selector: {matchLabels: {app: rs1}}
  template:
    metadata: {labels: {app: rs1}}
    spec:
      containers: [{name: c, image: busybox}]
YAML
k wait --for=jsonpath='{.status.replicas}'=3 rs/rs1 --timeout=10s >/dev/null || fail "3 replicas"
expect_eq 3 "$(k get pods -l app=rs1 -o name | wc -l)" "pod count"
owner=$(k get pods -l app=rs1 -o jsonpath='{.items[0].metadata.ownerReferences[0].name}')
expect_eq rs1 "$owner" "pods owned by the ReplicaSet"
k describe rs rs1 | grep -q 'SuccessfulCreate' || fail "creation events"
pass "creates its pods"

victim=$(k get pods -l app=rs1 -o jsonpath='{.items[0].metadata.name}')
k delete pod "$victim" >/dev/null
i=0
until [ "$(k get pods -l app=rs1 -o name | grep -vc "$victim")" -eq 3 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "deleted pod not replaced"; sleep 0.05
done
pass "replaces a deleted pod"

k scale rs rs1 --replicas=5 >/dev/null
k wait --for=jsonpath='{.status.replicas}'=5 rs/rs1 --timeout=10s >/dev/null || fail "scale up"
k scale rs rs1 --replicas=1 >/dev/null
k wait --for=jsonpath='{.status.replicas}'=1 rs/rs1 --timeout=10s >/dev/null || fail "scale down"
expect_eq 1 "$(k get pods -l app=rs1 -o name | wc -l)" "pods after scale down"
pass "kubectl scale up and down"

pod=$(k get pods -l app=rs1 -o jsonpath='{.items[0].metadata.name}')
k patch pod "$pod" --subresource=status --type=merge -p \
	'{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
k wait --for=jsonpath='{.status.readyReplicas}'=1 rs/rs1 --timeout=10s >/dev/null || fail "ready count"
expect_eq 1 "$(k get rs rs1 -o jsonpath='{.status.availableReplicas}')" "available count"
pass "reports ready and available replicas"

k delete rs rs1 >/dev/null
i=0
until [ -z "$(k get pods -l app=rs1 -o name)" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "pods outlived their ReplicaSet"; sleep 0.05
done
pass "its pods are garbage-collected with it"
