#!/bin/sh
# The tdm plugin on the daemon, in the daemon's local time zone (TZ
# JST-9, nine hours from UTC, so that a window read in UTC would be the
# wrong one): a node whose zone's window is open takes the pods that
# opted in (and they prefer it) but not the others, which say why; the
# shuffle action empties a node whose zone's window is closed of its
# preemptable pods, one per job each eviction period (timed: a job's
# two pods go at least one period apart), and leaves the others.
. "$(dirname "$0")/lib.sh"
export TZ=JST-9
h=$(date +%H | sed 's/^0//')
hh() { printf '%02d' $((($1 + 24) % 24)); }
OPEN="$(hh $((h - 1))):00-$(hh $((h + 1))):59"
CLOSED="$(hh $((h + 2))):00-$(hh $((h + 3))):00"
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<YAML
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
  - name: tdm
    arguments:
      tdm.revocable-zone.day: "$OPEN"
      tdm.revocable-zone.night: "$CLOSED"
      tdm.evict.period: 3s
YAML
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"
"$VR" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix plain >/dev/null || fail "plain node"
"$VR" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix day \
	--labels volcano.sh/revocable-zone=day >/dev/null || fail "day node"
"$VR" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix night \
	--labels volcano.sh/revocable-zone=night >/dev/null || fail "night node"
k wait --for=condition=Ready node/plain-0 node/day-0 node/night-0 --timeout=30s >/dev/null ||
	fail "nodes not Ready"

pod() { # name annotations [node]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, annotations: {volray.io/sim-duration: 1h, $2}}
spec:
  schedulerName: volcano
  ${3:+nodeName: $3}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }

# --- an open window: the pods that opted in, and only they -------------
pod spare 'volcano.sh/revocable-zone: "*"'
pod said 'volcano.sh/preemptable: "true"'
wait_eq day-0 "a pod that opted in prefers the open revocable node" node_of spare
wait_eq day-0 "a pod said preemptable prefers it too" node_of said
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: plain, annotations: {volray.io/sim-duration: 1h}}
spec:
  schedulerName: volcano
  nodeSelector: {volcano.sh/revocable-zone: day}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
msg() { k get pod plain -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
i=0
until msg | grep -q "not allow to dispatch to revocable node"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the pod that did not opt in: '$(msg)'"
	sleep 0.1
done
expect_eq "" "$(node_of plain)" "a pod that did not opt in is not placed on the revocable node"
pass "open window ($OPEN in the daemon's JST): opted-in pods go there, the others say why"

# --- a closed window: its preemptable pods are evicted -------------------
pod night-a 'volcano.sh/preemptable: "true"' night-0
pod night-b 'volcano.sh/preemptable: "true"' night-0
pod night-keep 'volcano.sh/preemptable: "false"' night-0
gone() { k get pod "$1" >/dev/null 2>&1 && echo here || echo gone; }
# The scheduler skips a session whose input did not change (but for one
# a minute); tdm asks for one when its eviction period has passed
# (ssn:wake_after), so nothing else need change meanwhile: no write
# here keeps sessions coming.
wait_gone() { # pod what
	t0=$(date +%s)
	while [ "$(gone "$1")" = here ]; do
		[ $(($(date +%s) - t0)) -lt 30 ] || fail "$2: still there after 30 s"
		sleep 0.1
	done
}
wait_gone night-a "night-a evicted from the closed zone"
wait_gone night-b "night-b evicted from the closed zone"
msgs=$(k get events --field-selector reason=Preempted,involvedObject.name=night-a -o jsonpath='{.items[*].message}')
expect_contains "$msgs" "shuffle: tdm: current time beyond revocable zone night:$CLOSED (plugin tdm)" "the eviction's reason"
expect_eq here "$(gone night-keep)" "a pod that is not preemptable stays"
expect_eq "day-0 day-0" "$(node_of spare) $(node_of said)" "the open zone's pods stay"
pass "closed window ($CLOSED): its preemptable pods are evicted with tdm's reason, the rest stay"

# --- pacing: one pod per job each eviction period (3 s) ------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pair}
spec: {minMember: 1}
YAML
for p in pair-0 pair-1; do
	pod "$p" 'volcano.sh/preemptable: "true", scheduling.k8s.io/group-name: pair' night-0
done
# When each goes (to a tenth of a second), with no write meanwhile.
now() { date +%s.%N | cut -c1-12; }
g0="" g1="" t0=$(date +%s)
while [ -z "$g0" ] || [ -z "$g1" ]; do
	[ -n "$g0" ] || [ "$(gone pair-0)" = here ] || g0=$(now)
	[ -n "$g1" ] || [ "$(gone pair-1)" = here ] || g1=$(now)
	[ $(($(date +%s) - t0)) -lt 30 ] || fail "pair's pods not both evicted in 30 s: pair-0 ${g0:-here}, pair-1 ${g1:-here}"
	sleep 0.1
done
gap=$(python3 -c "print('%.1f' % abs($g1 - $g0))")
python3 -c "import sys; sys.exit(0 if $gap >= 1.5 else 1)" ||
	fail "pair's two pods went ${gap} s apart: one per job each period (3 s, counted in whole seconds) wants 1.5 s or more"
pass "one pod of a job each eviction period: pair's two went ${gap} s apart (period 3 s)"
