#!/bin/sh
# Preemption against a remote API (issue 40): the scheduler's evictions
# go without waiting on its loop. One volrayd serves the API and runs the
# nodes; a second runs the controllers and the scheduler (with the
# preempt action) against it (--kubeconfig). A low-priority pod fills the
# one node; a high-priority one preempts it: the victim gets a Preempted
# Event and goes, the eviction's answer is counted
# (volray_scheduler_evictions_total, counted only once the API said
# yes), and the preemptor runs in its place.
. "$(dirname "$0")/lib.sh"

EXTRA=""
trap 'rc=$?; for p in $EXTRA; do kill -9 $p 2>/dev/null || true; done; (exit $rc); cleanup' EXIT INT TERM
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
start_daemon --roles api,nodes
M=$(free_port)
"$VOLRAYD" --data-dir "$WORK/w1" --kubeconfig "$DATA/kubeconfig" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles controllers,scheduler --leader-elect=false \
	--policy-dir "$POL" --metrics-listen "127.0.0.1:$M" >>"$WORK/w1.log" 2>&1 &
EXTRA="$!"
i=0
until command curl -fs "http://127.0.0.1:$M/readyz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || { tail -5 "$WORK/w1.log"; fail "the scheduler's process is not ready"; }
	sleep 0.1
done
"$top_builddir/volray" node add --virtual --count 1 --cpu 4 --memory 8Gi --name-prefix n >/dev/null ||
	fail "volray node add"
k apply -f - >/dev/null <<'YAML' || fail "create the priority classes and the low pod"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: low, annotations: {volray.io/sim-duration: 1h, volcano.sh/preemptable: "true"}}
spec: {schedulerName: volcano, priorityClassName: low, containers: [{name: c, image: busybox, resources: {requests: {cpu: 3}}}]}
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/low --timeout=30s >/dev/null || fail "low does not run"
evictions() {
	command curl -fs "http://127.0.0.1:$M/metrics" | sed -n 's/^volray_scheduler_evictions_total //p'
}
expect_eq 0 "$(evictions)" "evictions before the preemptor"
k apply -f - >/dev/null <<'YAML' || fail "create urgent"
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec: {schedulerName: volcano, priorityClassName: high, containers: [{name: c, image: busybox, resources: {requests: {cpu: 3}}}]}
YAML
k wait --for=delete pod/low --timeout=60s >/dev/null || { tail -20 "$WORK/w1.log"; fail "low not preempted"; }
k wait --for=jsonpath='{.status.phase}'=Running pod/urgent --timeout=60s >/dev/null ||
	{ k get pods -o wide; tail -20 "$WORK/w1.log"; fail "urgent does not run"; }
expect_eq 1 "$(evictions)" "evictions counted once answered"
expect_contains "$(k get events --field-selector reason=Preempted -o jsonpath='{range .items[*]}{.involvedObject.name};{end}')" \
	"low;" "the victim's Preempted Event"
pass "a preemption against a remote API: the victim evicted without waiting, the preemptor runs"
