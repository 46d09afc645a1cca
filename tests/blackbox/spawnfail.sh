#!/bin/sh
# Containers whose command does not exist on the local node: uv_spawn
# fails, the container ends in RunContainerError (OnFailure backs off),
# and deleting the pods, some in back-off, with their namespace leaves the
# daemon whole, round after round. A failed spawn used to free a process
# handle that libuv still kept in its loop's list of handles: the next
# handles opened or closed wrote into freed memory, and volrayd died of a
# corrupted heap (munmap_chunk(), corrupted size vs. prev_size, out of
# memory) within a round or two.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"

for round in 1 2 3; do
	ns=nocmd$round
	k create namespace $ns >/dev/null
	for i in 1 2 3 4; do
		pol=Never
		[ $((i % 2)) = 1 ] || pol=OnFailure
		cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: p$i, namespace: $ns}
spec:
  nodeName: $NODE
  restartPolicy: $pol
  containers: [{name: c, image: busybox, command: [/no/such/program$i]}]
---
YAML
	done | k apply -f - >/dev/null
	k wait -n $ns --for=jsonpath='{.status.containerStatuses[0].state.terminated.reason}'=RunContainerError \
		pod/p1 --timeout=10s >/dev/null || fail "round $round: no RunContainerError"
	k wait -n $ns --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=CrashLoopBackOff \
		pod/p2 --timeout=10s >/dev/null || fail "round $round: OnFailure did not back off"
	if [ $round = 1 ]; then
		expect_contains "$(k get pod -n $ns p1 -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')" \
			"exec /no/such/program1: no such file or directory" "the message"
		expect_eq Failed "$(k get pod -n $ns p1 -o jsonpath='{.status.phase}')" "restartPolicy Never: phase"
	fi
	k delete pod -n $ns p1 p2 --timeout=20s >/dev/null || fail "round $round: deleting pods"
	k delete namespace $ns --wait=false >/dev/null
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "volrayd died in round $round"
done
pass "a missing command: RunContainerError, back-off, deletion in back-off, three rounds"

# The daemon still runs real processes, and stops cleanly.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: after}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: [sh, -c, 'echo fine']}]
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/after --timeout=10s >/dev/null || fail "a pod after the failed spawns"
expect_eq fine "$(k logs after)" "its log"
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=""
expect_eq 0 "$rc" "volrayd's exit status on SIGTERM"
pass "a process runs after them; SIGTERM stops volrayd cleanly"
