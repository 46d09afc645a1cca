#!/bin/sh
# --roles: a volrayd runs only the parts it is given. With api alone it
# serves the API and the store, and nothing reconciles: a Deployment
# gets no ReplicaSet, a virtual Node never turns Ready, no scheduler,
# controller or node metrics are registered. Bad role lists and flag
# combinations exit 2 with a message. --metrics-listen serves /readyz and
# /metrics in plain HTTP. A --roles scheduler against it with
# --scheduler-name default-scheduler takes the plain pods. With api,controllers,scheduler,nodes (no ray) a
# Deployment's pods are bound to a virtual node and run.
. "$(dirname "$0")/lib.sh"

# Refused before anything starts.
bad_flags() {
	want=$1; shift
	out=$("$VOLRAYD" --data-dir "$WORK/never" "$@" 2>&1) && fail "volrayd $* started"
	rc=$?
	expect_eq 2 "$rc" "exit status of volrayd $*"
	expect_contains "$out" "$want" "volrayd $*"
	[ ! -e "$WORK/never" ] || fail "volrayd $* created its data dir"
}
bad_flags "want a comma-separated list" --roles api,bogus
bad_flags "need an API server" --roles scheduler
bad_flags "ray serves the heads" --roles api,ray
bad_flags "retry period < renew deadline" --leader-elect-renew-deadline 20s
bad_flags "loopback" --metrics-listen 10.1.2.3:9000
bad_flags "the scheduler role's" --roles api --scheduler-listen 127.0.0.1:0
bad_flags "want HOST:PORT or off" --scheduler-listen nowhere
pass "bad role lists and flags exit 2 with a message"

MPORT=$(free_port)
start_daemon --roles api --metrics-listen "127.0.0.1:$MPORT"
expect_eq ok "$(command curl -s "http://127.0.0.1:$MPORT/readyz")" "/readyz on --metrics-listen"
expect_contains "$(command curl -s "http://127.0.0.1:$MPORT/metrics")" \
	volray_loop_lag_max_seconds "/metrics on --metrics-listen"
# The loop's lateness as a histogram, counted every 100 ms.
i=0
until command curl -s "http://127.0.0.1:$MPORT/metrics" |
    grep -Eq '^volray_loop_lag_seconds_count [1-9]'; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "volray_loop_lag_seconds counts nothing"; sleep 0.1
done
expect_contains "$(command curl -s "http://127.0.0.1:$MPORT/metrics")" \
	'volray_loop_lag_seconds_bucket{le="0.1"}' "the loop lag histogram's 100 ms bucket"
m=$(curl -s "$API/metrics")
case "$m" in
*volray_scheduler_*|*volray_node_managed*|*volray_controller_reconciles*)
	fail "--roles api registered a worker's metrics" ;;
esac
grep -q "roles api;" "$WORK/volrayd.log" || fail "the log does not name the roles"
k create deployment web --image=busybox >/dev/null || fail "create deployment"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: vn1
  labels: {volray.io/runtime: virtual}
  annotations: {volray.io/cpu: "4", volray.io/memory: 8Gi}
YAML
# A later write the API has answered: whatever a controller would have
# done with the first ones in this process it has had the chance to do.
k create configmap fence >/dev/null || fail "create configmap"
expect_eq "" "$(k get rs -o name)" "ReplicaSets with --roles api"
expect_eq "" "$(k get node vn1 -o jsonpath='{.status.conditions}')" "vn1's conditions with --roles api"
pass "--roles api serves the API and reconciles nothing"

# Against this API (a cluster without kube-scheduler), a scheduler told
# --scheduler-name default-scheduler takes the plain pods, and only the
# names it was given: volcano's pod, created first, is left alone.
k apply -f - >/dev/null <<'YAML' || fail "create the pods"
apiVersion: v1
kind: Pod
metadata: {name: vc}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: c, image: busybox}]}
YAML
"$VOLRAYD" --data-dir "$WORK/s" --kubeconfig "$DATA/kubeconfig" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles scheduler --leader-elect=false \
	--scheduler-listen off --scheduler-name default-scheduler >>"$WORK/s.log" 2>&1 &
SPID=$!
KILL_PIDS="$KILL_PIDS $SPID"
podsched() {
	k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'
}
wait_eq Unschedulable "the plain pod is the scheduler's (vn1 is not Ready)" podsched plain
expect_eq "" "$(podsched vc)" "volcano's pod, not named, has no word from the scheduler"
kill "$SPID"
wait "$SPID" 2>/dev/null || true
k delete pod vc plain --wait=false >/dev/null
pass "--scheduler-name default-scheduler against a remote API places the plain pods"
stop_daemon

# The same data dir with every role but ray: the Deployment is
# reconciled, its pod bound to vn1 and running.
start_daemon --roles api,controllers,scheduler,nodes
k wait --for=condition=Ready node/vn1 --timeout=20s >/dev/null || fail "vn1 not Ready"
i=0
until [ "$(k get pods -l app=web -o jsonpath='{.items[0].status.phase}' 2>/dev/null)" = Running ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "web's pod not Running"; sleep 0.1
done
expect_eq vn1 "$(k get pods -l app=web -o jsonpath='{.items[0].spec.nodeName}')" "web's pod's node"
pass "--roles api,controllers,scheduler,nodes runs a Deployment on a virtual node"
