#!/bin/sh
# --controllers in kube-controller-manager's syntax: with '*,-rayjob' the
# rayjob controller does not run (a RayJob gets no status and no
# RayCluster) while the others do (a Deployment gets its ReplicaSet, a
# RayCluster its head pod); a name that is no controller's stops volrayd
# at start naming the known ones, a malformed list exits 2.
. "$(dirname "$0")/lib.sh"

out=$("$VOLRAYD" --data-dir "$WORK/never" --controllers='a,,b' 2>&1) &&
	fail "volrayd --controllers='a,,b' started"
rc=$?
expect_eq 2 "$rc" "exit status of a malformed --controllers"
expect_contains "$out" "an empty item" "a malformed --controllers"
[ ! -e "$WORK/never" ] || fail "a malformed --controllers created the data dir"

# An unknown name is found once the scripts are: at start, before serving.
"$VOLRAYD" --data-dir "$WORK/nosuch" --listen 127.0.0.1:0 --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --controllers='*,nosuch' \
	>"$WORK/nosuch.log" 2>&1 &
pid=$!
KILL_PIDS="$KILL_PIDS $pid"
i=0
while kill -0 "$pid" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "volrayd --controllers='*,nosuch' still runs after 20 s"
	sleep 0.1
done
rc=0
wait "$pid" || rc=$?
[ "$rc" -ne 0 ] || fail "volrayd --controllers='*,nosuch' exited 0"
expect_contains "$(cat "$WORK/nosuch.log")" \
	"nosuch is not a controller (known: " "the unknown controller's message"
expect_contains "$(cat "$WORK/nosuch.log")" "rayjob, rayservice" \
	"the known controllers in the message"
pass "--controllers: a malformed list exits 2, an unknown name stops volrayd naming the known ones"

start_daemon --controllers='*,-rayjob'
list=$("$top_builddir/volray" policy list 2>&1) || fail "volray policy list: $list"
expect_contains "$list" deployment "the running controllers"
case "$list" in
*rayjob*) fail "rayjob runs with --controllers='*,-rayjob': $list" ;;
esac

k apply -f - >/dev/null <<'YAML' || fail "apply the RayJob"
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: left}
spec:
  entrypoint: python -c "print('hello')"
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray:2.46.0}]
YAML
k apply -f - >/dev/null <<'YAML' || fail "apply the Deployment and RayCluster"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: kept}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray:2.46.0}]
YAML
wait_eq 1 "the Deployment's ReplicaSets" sh -c \
	"kubectl get rs -l app=web -o name | wc -l"
wait_eq 1 "the RayCluster's head pods" sh -c \
	"kubectl get pods -l ray.io/cluster=kept,ray.io/node-type=head -o name | wc -l"
pass "the other controllers run: a Deployment's ReplicaSet, a RayCluster's head"

# Created before both, the RayJob would have its status by now.
expect_eq "" "$(k get rayjob left -o jsonpath='{.status}')" "the RayJob's status"
expect_eq "kept" "$(k get raycluster -o jsonpath='{.items[*].metadata.name}')" \
	"the RayClusters (none for the RayJob)"
pass "--controllers='*,-rayjob': a RayJob gets no status"
