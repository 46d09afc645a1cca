#!/bin/sh
# The shuffle action with the rescheduling plugin on the daemon: a
# Deployment's pods all on one node; a second, empty node joins; the
# plugin's lowNodeUtilization names the pods the crowded node must lose
# to come under its target, the shuffle action evicts them (event
# Preempted with the plugin's reason), the ReplicaSet makes them again
# and they land on the new node; then nothing more moves (both nodes
# within their thresholds), interval after interval.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: rescheduling
    arguments:
      interval: 2s
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 20, memory: 20, pods: 20}
          targetThresholds: {cpu: 50, memory: 50, pods: 50}
YAML
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"
"$VR" node add --virtual --count 1 --cpu 4 --memory 16Gi --name-prefix crowded >/dev/null ||
	fail "add the first node"
node0=$(k get nodes -o jsonpath='{.items[0].metadata.name}')

k apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {volray.io/sim-duration: 1h}}
    spec:
      schedulerName: volcano
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
running() { k get pods -l app=web --field-selector=status.phase=Running -o name | wc -l | tr -d ' '; }
on() { k get pods -l app=web --field-selector="spec.nodeName=$1,status.phase=Running" -o name | wc -l | tr -d ' '; }
wait_eq 3 "the Deployment's pods run" running
expect_eq 3 "$(on "$node0")" "pods on $node0 (its only node)"
evictions() { curl -fs "$API/metrics" | sed -n 's/^volray_scheduler_evictions_total //p'; }
metric() { curl -fs "$API/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
sessions() { echo $(($(metric volray_scheduler_cycles_total) - $(metric volray_scheduler_cycles_skipped_total))); }
# interval_session: a session that runs more than one interval (2 s)
# after the call, so that the plugin has had at least one pass since
# the call. The scheduler runs a session only when its input changes:
# the time passes, then a node annotation (an input the plugin does not
# measure) makes one run.
tick=0
tick() {
	tick=$((tick + 1))
	k annotate node "$node0" --overwrite "volray.test/tick=$tick" >/dev/null || fail "annotate $node0"
}
interval_session() {
	_t=$(($(date +%s) + 3))
	while [ "$(date +%s)" -lt $_t ]; do sleep 0.2; done	# the interval itself
	_s=$(sessions)
	tick
	_i=0
	until [ "$(sessions)" -gt "$_s" ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "no session after the annotation"
		sleep 0.1
	done
}
# 75% of its cpu but no low node to move to: nothing is evicted, after
# two of the plugin's intervals.
interval_session
interval_session
expect_eq 0 "$(evictions)" "evictions with one node, two intervals on"
pass "three pods on the only node, none evicted while no node is low"

"$VR" node add --virtual --count 1 --cpu 4 --memory 16Gi --name-prefix spare >/dev/null ||
	fail "add the second node"
node1=$(k get nodes -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -v "^$node0\$")
# crowded at 75% is over its 50% target: pods go until it is under it
# (two: at 50% it is still at the target), the room on spare (50% of 4
# cpus) allowing; the ReplicaSet's new pods are placed by nodeorder (the
# first on the empty node, the second on either: the nodes tie).
# (A session runs when the input changes: a tick a second keeps them
# coming while the plugin's interval passes.)
settled() { echo "$(evictions) $(running) $(on "$node1")"; }
t0=$(date +%s) t1=$t0
while :; do
	case "$(settled)" in "2 3 1" | "2 3 2") break ;; esac
	[ $(($(date +%s) - t0)) -lt 30 ] ||
		fail "the pods never moved (evictions, running, on $node1: $(settled)): $(k get pods -l app=web -o wide 2>&1)"
	[ "$(date +%s)" = "$t1" ] || { tick; t1=$(date +%s); }
	sleep 0.2
done
msgs=$(k get events --field-selector reason=Preempted -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
case "$msgs" in
*"shuffle: lowNodeUtilization: node $node0 (cpu 75%, memory 19%, pods "*") is over its target utilization (cpu 50%, memory 50%, pods 50%) (plugin rescheduling)"*) ;;
*) fail "the eviction's event names the strategy and the node: '$msgs'" ;;
esac
spread=$(on "$node0")/$(on "$node1")
pass "two pods evicted from the crowded node, with the plugin's reason; now $spread"

# Nothing more moves: no node is over its 50% target (and with 1/2 none
# is low either). Three intervals of the plugin pass without eviction.
for n in 1 2 3; do
	interval_session
	expect_eq 2 "$(evictions)" "evictions after the nodes settled, interval $n"
done
expect_eq "$spread" "$(on "$node0")/$(on "$node1")" "the spread after three intervals"
pass "no eviction once both nodes are within their thresholds"
