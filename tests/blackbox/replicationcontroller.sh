#!/bin/sh
# The v1 ReplicationController (lua/controllers/replicationcontroller.lua,
# the ReplicaSet's code in lua/lib/replicas.lua) with stock kubectl: its
# equality selector and labels default from the template, a selector the
# template does not satisfy is refused, it creates and replaces its pods,
# kubectl scale rc goes through the scale subresource both ways, and
# kubectl get shows DESIRED CURRENT READY.
. "$(dirname "$0")/lib.sh"
start_daemon

k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata: {name: rc1}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: rc1, tier: web}}
    spec:
      containers: [{name: c, image: busybox}]
YAML
expect_eq "rc1,web" "$(k get rc rc1 -o jsonpath='{.spec.selector.app},{.spec.selector.tier}')" "selector defaulted from the template"
expect_eq "rc1" "$(k get rc rc1 -o jsonpath='{.metadata.labels.app}')" "labels defaulted from the template"
k wait --for=jsonpath='{.status.replicas}'=3 rc/rc1 --timeout=10s >/dev/null || fail "3 replicas"
expect_eq 3 "$(k get pods -l app=rc1 -o name | wc -l | tr -d ' ')" "pod count"
expect_eq "ReplicationController rc1" "$(k get pods -l app=rc1 -o jsonpath='{.items[0].metadata.ownerReferences[0].kind} {.items[0].metadata.ownerReferences[0].name}')" "owner"
expect_eq 3 "$(k get rc rc1 -o jsonpath='{.status.fullyLabeledReplicas}')" "fullyLabeledReplicas"
pass "creates its pods, selector and labels from the template"

victim=$(k get pods -l app=rc1 -o jsonpath='{.items[0].metadata.name}')
k delete pod "$victim" >/dev/null
count_others() { k get pods -l app=rc1 -o name | grep -vc "$victim" || true; }
wait_eq 3 "deleted pod replaced" count_others
pass "replaces a deleted pod"

k scale rc rc1 --replicas=5 >/dev/null || fail "kubectl scale rc"
k wait --for=jsonpath='{.status.replicas}'=5 rc/rc1 --timeout=10s >/dev/null || fail "scale up"
k scale rc rc1 --replicas=1 >/dev/null
k wait --for=jsonpath='{.status.replicas}'=1 rc/rc1 --timeout=10s >/dev/null || fail "scale down"
pods() { k get pods -l app=rc1 -o name | wc -l | tr -d ' '; }
wait_eq 1 "pods after scale down" pods
sel=$(k get --raw /api/v1/namespaces/default/replicationcontrollers/rc1/scale | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["selector"])')
expect_eq "app=rc1,tier=web" "$sel" "Scale status.selector of an equality selector"
pass "kubectl scale rc up and down"

expect_eq "NAME DESIRED CURRENT READY AGE" "$(k get rc | head -1 | tr -s ' ')" "kubectl get rc columns"
expect_eq "rc1 1 1 0" "$(k get rc rc1 --no-headers | tr -s ' ' | cut -d' ' -f1-4)" "kubectl get rc row"
k get all | grep -q '^replicationcontroller/rc1' || fail "kubectl get all lists the ReplicationController"
pass "kubectl get rc and get all"

out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata: {name: bad}
spec:
  selector: {app: other}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers: [{name: c, image: busybox}]
YAML
) && fail "a selector that misses the template was accepted"
expect_contains "$out" '`selector` does not match template `labels`' "refusal message"
pass "a selector the template does not match is refused"

k delete rc rc1 >/dev/null
wait_eq 0 "pods go with their ReplicationController" pods
pass "its pods are garbage-collected with it"
