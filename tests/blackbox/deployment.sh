#!/bin/sh
# The Deployment controller (lua/controllers/deployment.lua) with stock
# kubectl: a ReplicaSet per template named by its pod-template-hash,
# scaling, a rolling update that stays within maxSurge/maxUnavailable at
# every step (pods are marked Ready by the test, there is no kubelet),
# rollout status, rollout undo, pause, revisionHistoryLimit, Recreate
# (which waits for a pod held by a finalizer) and progressDeadlineSeconds.
. "$(dirname "$0")/lib.sh"
start_daemon

# ready SELECTOR: every Pending pod it selects becomes Running and Ready.
ready() {
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	for p in $(k get pods -l "$1" -o jsonpath='{range .items[?(@.status.phase=="Pending")]}{.metadata.name}{" "}{end}'); do
		k patch pod "$p" --subresource=status --type=merge -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"'"$now"'"}]}}' >/dev/null
	done
}

# rs_for DEPLOY IMAGE: the ReplicaSet of DEPLOY whose template runs IMAGE.
rs_for() {
	k get rs -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image}{"\n"}{end}' |
		awk -v img="$2" '$2 == img { print $1 }'
}

# rs_with DEPLOY IMAGE: how many ReplicaSets of DEPLOY run IMAGE.
rs_with() { rs_for "$1" "$2" | wc -l | tr -d ' '; }
rs_spec() { k get rs "$1" -o jsonpath='{.spec.replicas}'; }
rs_count() { k get rs -l "app=$1" -o name | wc -l | tr -d ' '; }
pod_count() { k get pods -l "$1" -o name | wc -l | tr -d ' '; }
ready_count() {
	k get pods -l "$1" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true
}
dstatus() { k get deploy "$1" -o jsonpath="{.status.$2}"; }

deploy() { # deploy NAME REPLICAS STRATEGY-YAML
	k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  strategy: $3
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers: [{name: c, image: "img:1"}]
YAML
}

# --- a ReplicaSet named <deploy>-<hash> and its pods
deploy web 3 '{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}'
wait_eq 1 "one ReplicaSet" rs_count web
rs1=$(rs_for web img:1)
hash=$(k get rs "$rs1" -o jsonpath='{.metadata.labels.pod-template-hash}')
[ -n "$hash" ] || fail "pod-template-hash label on the ReplicaSet"
expect_eq "web-$hash" "$rs1" "ReplicaSet name"
expect_eq "$hash" "$(k get rs "$rs1" -o jsonpath='{.spec.selector.matchLabels.pod-template-hash}')" "hash in the selector"
expect_eq web "$(k get rs "$rs1" -o jsonpath='{.metadata.ownerReferences[0].name}')" "owner"
expect_eq 1 "$(k get rs "$rs1" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "RS revision"
expect_eq 1 "$(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "deployment revision"
wait_eq 3 "three pods" pod_count "app=web,pod-template-hash=$hash"
wait_eq 3 "status.replicas" dstatus web replicas
expect_eq 3 "$(dstatus web updatedReplicas)" "updatedReplicas"
expect_eq 3 "$(dstatus web unavailableReplicas)" "unavailableReplicas"
expect_eq False "$(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" "not yet Available"
k get events --field-selector involvedObject.name=web -o jsonpath='{.items[*].message}' |
	grep -q "Scaled up replica set $rs1 to 3" || fail "ScalingReplicaSet event"
pass "creates a ReplicaSet per template with its pods"

ready app=web
wait_eq 3 "availableReplicas" dstatus web availableReplicas
expect_eq MinimumReplicasAvailable "$(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="Available")].reason}')" "Available reason"
k rollout status deploy/web --timeout=10s | grep -q "successfully rolled out" || fail "rollout status"
expect_eq NewReplicaSetAvailable "$(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}')" "Progressing reason"
pass "status, conditions and rollout status"

# --- scale up and down
k scale deploy web --replicas=5 >/dev/null
wait_eq 5 "scaled up ReplicaSet" rs_spec "$rs1"
wait_eq 5 "pods after scale up" pod_count app=web
k scale deploy web --replicas=3 >/dev/null
wait_eq 3 "scaled down ReplicaSet" rs_spec "$rs1"
wait_eq 3 "pods after scale down" pod_count app=web
ready app=web
wait_eq 3 "available after scaling" dstatus web availableReplicas
pass "kubectl scale up and down"

# --- rolling update, surge 1 / unavailable 0: never more than 4 pods,
# never fewer than 3 ready; the old ReplicaSet shrinks one at a time.
k set image deploy/web c=img:2 >/dev/null
wait_eq 1 "new ReplicaSet" rs_with web img:2
rs2=$(rs_for web img:2)
[ -n "$rs2" ] && [ "$rs2" != "$rs1" ] || fail "a second ReplicaSet for the new template"
expect_eq 2 "$(k get rs "$rs2" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "new RS revision"
for step in 1 2 3; do
	wait_eq "$step" "new RS size at step $step" rs_spec "$rs2"
	wait_eq "$((3 - step + 1))" "old RS size at step $step" rs_spec "$rs1"
	wait_eq 4 "pods at step $step" pod_count app=web
	expect_eq 3 "$(ready_count app=web)" "ready pods at step $step"
	if [ $step -eq 1 ]; then
		k rollout status deploy/web --timeout=1s >/dev/null 2>&1 && fail "rollout status finished early"
	fi
	ready app=web
done
wait_eq 0 "old RS emptied" rs_spec "$rs1"
wait_eq 3 "pods after rollout" pod_count app=web
k rollout status deploy/web --timeout=10s >/dev/null || fail "rollout status after update"
expect_eq 3 "$(dstatus web updatedReplicas)" "all updated"
pass "rolling update with maxSurge=1 maxUnavailable=0"

# --- surge 0 / unavailable 1: never more than 3 pods, never fewer than 2 ready.
k patch deploy web --type=merge -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}' >/dev/null
k set image deploy/web c=img:3 >/dev/null
for step in 1 2 3; do
	wait_eq 1 "third ReplicaSet" rs_with web img:3
	rs3=$(rs_for web img:3)
	wait_eq "$step" "new RS size at step $step" rs_spec "$rs3"
	wait_eq "$((3 - step))" "old RS size at step $step" rs_spec "$rs2"
	wait_eq 3 "pods at step $step" pod_count app=web
	expect_eq 2 "$(ready_count app=web)" "ready pods at step $step"
	ready app=web
done
k rollout status deploy/web --timeout=10s >/dev/null || fail "rollout status after second update"
pass "rolling update with maxSurge=0 maxUnavailable=1"

# --- rollout undo: back to img:2 through its old ReplicaSet, revision 4.
k rollout undo deploy/web >/dev/null || fail "rollout undo"
expect_eq img:2 "$(k get deploy web -o jsonpath='{.spec.template.spec.containers[0].image}')" "template after undo"
rs_rev() { k get rs "$1" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}'; }
wait_eq 4 "reused RS gets a new revision" rs_rev "$rs2"
expect_eq 2 "$(k get rs "$rs2" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision-history}')" "revision history"
expect_eq 3 "$(rs_count web)" "no new ReplicaSet on undo"
i=0
until [ "$(rs_spec "$rs3")" = 0 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "undo did not empty the img:3 ReplicaSet"
	ready app=web
	sleep 0.1
done
ready app=web
k rollout status deploy/web --timeout=10s >/dev/null || fail "rollout status after undo"
expect_eq 3 "$(rs_spec "$rs2")" "undone ReplicaSet scaled up"
expect_eq 4 "$(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "deployment revision after undo"
pass "rollout undo reuses the old ReplicaSet"

# --- revisionHistoryLimit: only one old ReplicaSet is kept.
k patch deploy web --type=merge -p '{"spec":{"revisionHistoryLimit":1}}' >/dev/null
wait_eq 2 "ReplicaSets kept with revisionHistoryLimit=1" rs_count web
k get rs "$rs1" >/dev/null 2>&1 && fail "the oldest ReplicaSet should be gone"
k get rs "$rs3" >/dev/null 2>&1 || fail "the newest old ReplicaSet should be kept"
pass "revisionHistoryLimit"

# --- pause: a template change creates nothing until resume.
k rollout pause deploy/web >/dev/null
k set image deploy/web c=img:4 >/dev/null
gen=$(k get deploy web -o jsonpath='{.metadata.generation}')
wait_eq "$gen" "paused deployment observed" dstatus web observedGeneration
expect_eq DeploymentPaused "$(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}')" "paused condition"
expect_eq "" "$(rs_for web img:4)" "no ReplicaSet while paused"
k rollout resume deploy/web >/dev/null
wait_eq 1 "ReplicaSet after resume" rs_with web img:4
pass "pause and resume"

# --- Recreate: old pods go first; a pod held by a finalizer holds the new
# ReplicaSet back until it is gone.
deploy rec 2 '{type: Recreate}'
wait_eq 2 "Recreate pods" pod_count app=rec
ready app=rec
held=$(k get pods -l app=rec -o jsonpath='{.items[0].metadata.name}')
k patch pod "$held" --type=merge -p '{"metadata":{"finalizers":["test.volray.io/hold"]}}' >/dev/null
r1=$(rs_for rec img:1)
k set image deploy/rec c=img:2 >/dev/null
wait_eq 0 "old ReplicaSet scaled to zero" rs_spec "$r1"
gen=$(k get deploy rec -o jsonpath='{.metadata.generation}')
wait_eq "$gen" "Recreate observed" dstatus rec observedGeneration
wait_eq 1 "only the held pod left" pod_count app=rec
[ -n "$(k get pod "$held" -o jsonpath='{.metadata.deletionTimestamp}')" ] || fail "held pod terminating"
expect_eq "" "$(rs_for rec img:2)" "no new ReplicaSet while an old pod exists"
k patch pod "$held" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait_eq 2 "new pods after the old ones are gone" pod_count app=rec
r2=$(rs_for rec img:2)
expect_eq 2 "$(rs_spec "$r2")" "new ReplicaSet at full size at once"
ready app=rec
k rollout status deploy/rec --timeout=10s >/dev/null || fail "rollout status for Recreate"
pass "Recreate"

# --- a rollout that makes no progress for progressDeadlineSeconds fails.
k apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: slow}
spec:
  replicas: 1
  progressDeadlineSeconds: 2
  minReadySeconds: 5
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec:
      containers: [{name: c, image: "img:1"}]
YAML
wait_eq 1 "slow ReplicaSet" rs_count slow
expect_eq 5 "$(k get rs "$(rs_for slow img:1)" -o jsonpath='{.spec.minReadySeconds}')" "minReadySeconds copied"
out=$(k rollout status deploy/slow --timeout=15s 2>&1) && fail "rollout status of a stuck rollout succeeded"
expect_contains "$out" "exceeded its progress deadline" "rollout status on a stuck rollout"
expect_eq "False ProgressDeadlineExceeded" "$(k get deploy slow -o jsonpath='{.status.conditions[?(@.type=="Progressing")].status} {.status.conditions[?(@.type=="Progressing")].reason}')" "Progressing after the deadline"
pass "progressDeadlineSeconds"

k delete deploy web rec slow >/dev/null
all_rs() { k get rs -o name | wc -l | tr -d ' '; }
wait_eq 0 "ReplicaSets collected with their Deployment" all_rs
pass "deleting a Deployment removes its ReplicaSets"

# Names as kube-apiserver takes them: a Deployment of 53 characters has
# a ReplicaSet of 64 (a DNS-1123 subdomain, 253 at most) and its pods;
# a Service is a DNS-1123 label (63 at most).
LONG=$(printf 'd%.0s' $(seq 1 53))
k create deployment "$LONG" --image=busybox --replicas=1 >/dev/null || fail "a Deployment of 53 characters"
wait_eq 1 "the long Deployment's ReplicaSet" rs_count "$LONG"
[ "$(k get rs -o name | grep -c "$LONG-")" = 1 ] || fail "no ReplicaSet named after the long Deployment"
k delete deploy "$LONG" >/dev/null
err=$(k create service clusterip "$(printf 's%.0s' $(seq 1 64))" --tcp=80 2>&1) &&
	fail "a Service name of 64 characters was taken"
expect_contains "$err" "RFC 1123 label" "a Service name over 63"
pass "a 53-character Deployment gets its 64-character ReplicaSet; a Service keeps the 63 limit"

if grep -q "controller deployment: reconcile" "$WORK/volrayd.log"; then
	grep "controller deployment: reconcile" "$WORK/volrayd.log" | head -n 3
	fail "reconcile errors in the log"
fi
pass "no reconcile errors"
