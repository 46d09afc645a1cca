#!/bin/sh
# The StatefulSet controller (lua/controllers/statefulset.lua) with stock
# kubectl: pods <set>-0..N-1 with their hostname, subdomain, identity
# labels and claim volumes; OrderedReady makes the next pod only once the
# one before is Running and Ready (the test marks them, its pods have no
# node) while Parallel makes them all at once; on a simulated node, a
# rolling update goes from the highest ordinal down and stops at the
# partition, scale down removes the highest first, kubectl scale and
# rollout status work, and kubectl get shows READY.
. "$(dirname "$0")/lib.sh"
start_daemon

sts() { # sts NAME REPLICAS POLICY NODESELECTOR
	k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1}
spec:
  serviceName: $1-svc
  replicas: $2
  podManagementPolicy: $3
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: $4
      containers: [{name: c, image: "img:1"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
YAML
}
pods_of() { k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort | tr '\n' ' ' | sed 's/ $//'; }
ststatus() { k get sts "$1" -o jsonpath="{.status.$2}"; }
mark_ready() {
	k patch pod "$1" --subresource=status --type=merge -p \
		'{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
}

# --- OrderedReady: one pod at a time, each ready before the next
sts ord 3 OrderedReady '{nowhere: "true"}'
k wait --for=jsonpath='{.status.replicas}'=1 sts/ord --timeout=10s >/dev/null || fail "first pod"
expect_eq "ord-0" "$(pods_of ord)" "only ord-0 before it is ready"
mark_ready ord-0
k wait --for=jsonpath='{.status.replicas}'=2 sts/ord --timeout=10s >/dev/null || fail "second pod"
expect_eq "ord-0 ord-1" "$(pods_of ord)" "ord-1 once ord-0 is ready"
mark_ready ord-1
k wait --for=jsonpath='{.status.replicas}'=3 sts/ord --timeout=10s >/dev/null || fail "third pod"
mark_ready ord-2
k wait --for=jsonpath='{.status.readyReplicas}'=3 sts/ord --timeout=10s >/dev/null || fail "readyReplicas"
expect_eq "ord-1 ord-svc 1 ord" "$(k get pod ord-1 -o jsonpath='{.spec.hostname} {.spec.subdomain} {.metadata.labels.apps\.kubernetes\.io/pod-index} {.metadata.ownerReferences[0].name}')" "hostname, subdomain, pod-index, owner"
expect_eq "ord-1" "$(k get pod ord-1 -o jsonpath='{.metadata.labels.statefulset\.kubernetes\.io/pod-name}')" "pod-name label"
expect_eq "data data-ord-1" "$(k get pod ord-1 -o jsonpath='{.spec.volumes[0].name} {.spec.volumes[0].persistentVolumeClaim.claimName}')" "claim volume from volumeClaimTemplates"
expect_eq "1Gi|ord|Pending" "$(k get pvc data-ord-1 -o jsonpath='{.spec.resources.requests.storage}|{.metadata.labels.app}|{.status.phase}')" "the claim made from volumeClaimTemplates"
rev=$(ststatus ord updateRevision)
expect_eq "$rev" "$(k get pod ord-2 -o jsonpath='{.metadata.labels.controller-revision-hash}')" "controller-revision-hash is the revision's name"
expect_eq "$rev" "$(ststatus ord currentRevision)" "current = update revision"
k get controllerrevision "$rev" >/dev/null || fail "ControllerRevision $rev"
pass "OrderedReady creates one ready pod after another, with stable identities"

expect_eq "NAME READY AGE" "$(k get sts ord | head -1 | tr -s ' ')" "kubectl get sts columns"
expect_eq "ord 3/3" "$(k get sts ord --no-headers | tr -s ' ' | cut -d' ' -f1-2)" "kubectl get sts row"
k get all | grep -q '^statefulset.apps/ord' || fail "kubectl get all lists the StatefulSet"
pass "kubectl get sts and get all"

# --- scale down with OrderedReady: from the highest ordinal
w0=$(watchers)
k get pods -l app=ord -w --output-watch-events -o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$WORK/ordev" 2>/dev/null &
watcher=$!
wait_watchers $((w0 + 1))
k scale sts ord --replicas=1 >/dev/null || fail "kubectl scale sts"
wait_eq "ord-0" "scaled down to ord-0" pods_of ord
kill $watcher 2>/dev/null || true
wait $watcher 2>/dev/null || true
expect_eq "ord-2 ord-1" "$(awk '$1 == "DELETED" { print $2 }' "$WORK/ordev" | tr '\n' ' ' | sed 's/ $//')" "deletion order"
expect_eq 1 "$(k get sts ord -o jsonpath='{.spec.replicas}')" "scale subresource wrote spec.replicas"
pass "kubectl scale sts removes the highest ordinal first"

# --- Parallel: all at once, ready or not
sts par 3 Parallel '{nowhere: "true"}'
k wait --for=jsonpath='{.status.replicas}'=3 sts/par --timeout=10s >/dev/null || fail "parallel pods"
expect_eq "par-0 par-1 par-2" "$(pods_of par)" "Parallel creates every pod without waiting"
k delete sts ord par >/dev/null
wait_eq "" "pods go with their StatefulSet" pods_of par
pass "Parallel"

# --- on a simulated node: rolling update with a partition
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {volray.io/runtime: virtual}}
YAML
sts db 3 OrderedReady '{}'
k rollout status sts/db --timeout=30s >"$WORK/rs" || fail "rollout status of a new StatefulSet"
grep -q 'partitioned roll out complete: 3 new pods have been updated' "$WORK/rs" || fail "rollout status: $(cat "$WORK/rs")"
rev1=$(ststatus db currentRevision)
k patch sts db --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}' >/dev/null
k set image sts/db c=img:2 >/dev/null
k rollout status sts/db --timeout=30s >/dev/null || fail "partitioned rollout"
wait_eq 1 "updatedReplicas with partition 2" ststatus db updatedReplicas
images() { k get pods -l app=db -o jsonpath='{range .items[*]}{.metadata.name}={.spec.containers[0].image}{" "}{end}' | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
expect_eq "db-0=img:1 db-1=img:1 db-2=img:2" "$(images)" "only ordinals >= partition updated"
expect_eq "$rev1" "$(ststatus db currentRevision)" "currentRevision stays while partitioned"
pass "RollingUpdate stops at the partition"

w0=$(watchers)
k get pods -l app=db -w --output-watch-events -o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$WORK/dbev" 2>/dev/null &
watcher=$!
wait_watchers $((w0 + 1))
k patch sts db --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}' >/dev/null
k rollout status sts/db --timeout=30s >/dev/null || fail "rollout to the end"
wait_eq "db-0=img:2 db-1=img:2 db-2=img:2" "every pod updated" images
kill $watcher 2>/dev/null || true
wait $watcher 2>/dev/null || true
expect_eq "db-1 db-0" "$(awk '$1 == "DELETED" { print $2 }' "$WORK/dbev" | tr '\n' ' ' | sed 's/ $//')" "update order, highest first"
wait_eq "$(ststatus db updateRevision)" "currentRevision after the update" ststatus db currentRevision
[ "$(ststatus db currentRevision)" != "$rev1" ] || fail "revision did not change"
pass "RollingUpdate from the highest ordinal down; currentRevision follows"

k rollout history sts/db | grep -q '^2 ' || fail "rollout history: $(k rollout history sts/db)"
k rollout undo sts/db >/dev/null || fail "rollout undo"
k rollout status sts/db --timeout=30s >/dev/null || fail "rollout status after undo"
wait_eq "db-0=img:1 db-1=img:1 db-2=img:1" "every pod back on the old image" images
pass "rollout history and undo through the ControllerRevisions"
