#!/bin/sh
# Simulated nodes: a Node labelled volray.io/runtime=virtual turns Ready
# with its capacity and renews a Lease; pods bound to it go through the
# kubelet's lifecycle per volray.io/sim-duration and sim-exit-code
# (Succeeded, Failed, restarts with the back-off and CrashLoopBackOff),
# init containers first, admission (OutOfcpu, OutOfpods, NodeAffinity),
# graceful deletion that kubectl waits out, a deleted node's pods removed,
# a restart of volrayd that picks its pods up again, and a node that
# appears after pods were bound to it runs them.
. "$(dirname "$0")/lib.sh"
start_daemon

k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: vn1
  labels: {volray.io/runtime: virtual, zone: a}
  annotations: {volray.io/cpu: "4", volray.io/memory: 8Gi, volray.io/pods: "5"}
YAML
k wait --for=condition=Ready node/vn1 --timeout=10s >/dev/null || fail "vn1 not Ready"
expect_eq 4 "$(k get node vn1 -o jsonpath='{.status.allocatable.cpu}')" "allocatable cpu"
expect_eq 8388608Ki "$(k get node vn1 -o jsonpath='{.status.capacity.memory}')" "capacity memory"
# The heartbeat: a Lease that is renewed (the first within a period).
wait_lease() {
	i=0
	until [ -n "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}' 2>/dev/null)" ]; do
		i=$((i + 1)); [ $i -lt 150 ] || fail "no Lease for vn1"; sleep 0.1
	done
}
wait_lease
t1=$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}')
expect_eq vn1 "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.holderIdentity}')" "lease holder"
expect_eq 40 "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.leaseDurationSeconds}')" "lease duration"
pass "a virtual node is Ready with its capacity and a Lease"

pod() { # name duration exit-code restartPolicy [extra spec yaml]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {volray.io/sim-duration: "$2", volray.io/sim-exit-code: "$3"}
spec:
  nodeName: vn1
  restartPolicy: $4
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
${5:-}
YAML
}

pod ok 300ms 0 Never
pod bad 300ms 7 Never
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/ok --timeout=10s >/dev/null || fail "ok did not succeed"
k wait --for=jsonpath='{.status.phase}'=Failed pod/bad --timeout=10s >/dev/null || fail "bad did not fail"
expect_eq "0 Completed" "$(k get pod ok -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}')" "ok's end"
expect_eq "7 Error" "$(k get pod bad -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}')" "bad's end"
for c in Initialized PodScheduled; do
	expect_eq True "$(k get pod ok -o jsonpath="{.status.conditions[?(@.type==\"$c\")].status}")" "ok $c"
done
expect_eq PodCompleted "$(k get pod ok -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" "ok Ready reason"
[ -n "$(k get pod ok -o jsonpath='{.status.startTime}')" ] || fail "no startTime"
expect_contains "$(k get pod ok -o jsonpath='{.status.podIP} {.status.hostIP}')" "10.0.0.1" "hostIP"
pass "Pending -> Running -> Succeeded / Failed with the exit code"

pod runner "" 0 Always
k wait --for=condition=Ready pod/runner --timeout=10s >/dev/null || fail "runner not Ready"
expect_eq Running "$(k get pod runner -o jsonpath='{.status.phase}')" "runner phase"
[ -n "$(k get pod runner -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}')" ] ||
	fail "no running.startedAt"
pass "a container without a duration runs until stopped"

# OnFailure: restarted at once the first time, then after the back-off.
pod crashy 100ms 1 OnFailure
k wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=CrashLoopBackOff \
	pod/crashy --timeout=10s >/dev/null || fail "no CrashLoopBackOff"
expect_eq 1 "$(k get pod crashy -o jsonpath='{.status.containerStatuses[0].restartCount}')" "first restart at once"
expect_eq 1 "$(k get pod crashy -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode}')" "lastState"
expect_contains "$(k get pod crashy -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')" \
	"back-off 10s restarting failed container=c" "back-off message"
k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=2 pod/crashy --timeout=20s >/dev/null ||
	fail "no restart after the 10 s back-off"
backoff_msg() {
	kubectl get pod crashy -o jsonpath='{.status.containerStatuses[0].state.waiting.message}'
}
wait_eq "back-off 20s restarting failed container=c pod=crashy_default($(k get pod crashy -o jsonpath='{.metadata.uid}'))" \
	"the back-off doubles" backoff_msg
pass "restarts: at once, then CrashLoopBackOff 10 s, 20 s"

# OnFailure and exit 0: done, no restart.
pod fine 100ms 0 OnFailure
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/fine --timeout=10s >/dev/null || fail "fine"
expect_eq 0 "$(k get pod fine -o jsonpath='{.status.containerStatuses[0].restartCount}')" "no restart on 0"

# Init containers run first, in order.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: inits
  annotations: {volray.io/sim-duration.i1: 200ms, volray.io/sim-duration.main: 100ms}
spec:
  nodeName: vn1
  restartPolicy: Never
  initContainers: [{name: i1, image: busybox}, {name: i2, image: busybox}]
  containers: [{name: main, image: busybox}]
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/inits --timeout=10s >/dev/null || fail "inits"
i2=$(k get pod inits -o jsonpath='{.status.initContainerStatuses[1].state.terminated.finishedAt}')
mn=$(k get pod inits -o jsonpath='{.status.containerStatuses[0].state.terminated.startedAt}')
i1=$(k get pod inits -o jsonpath='{.status.initContainerStatuses[0].state.terminated.finishedAt}')
i2s=$(k get pod inits -o jsonpath='{.status.initContainerStatuses[1].state.terminated.startedAt}')
[ "$i1" \< "$i2s" ] || [ "$i1" = "$i2s" ] || fail "i2 started before i1 ended ($i1 / $i2s)"
[ "$i2" \< "$mn" ] || [ "$i2" = "$mn" ] || fail "main started before the init containers ended"
pass "init containers in order, then the main ones"

# Admission on the node.
pod steady "" 0 Never
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: toobig}
spec:
  nodeName: vn1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "5"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: wrongzone}
spec:
  nodeName: vn1
  nodeSelector: {zone: b}
  containers: [{name: c, image: busybox}]
YAML
k wait --for=jsonpath='{.status.reason}'=OutOfcpu pod/toobig --timeout=10s >/dev/null || fail "OutOfcpu"
expect_eq Failed "$(k get pod toobig -o jsonpath='{.status.phase}')" "OutOfcpu phase"
expect_contains "$(k get pod toobig -o jsonpath='{.status.message}')" "didn't have enough resource: cpu" "OutOfcpu message"
k wait --for=jsonpath='{.status.reason}'=NodeAffinity pod/wrongzone --timeout=10s >/dev/null || fail "NodeAffinity"
# pods: 5 allowed; runner, crashy, steady hold three; two more fit, then OutOfpods.
for i in 1 2 3; do pod "fill$i" "" 0 Always; done
k wait --for=jsonpath='{.status.reason}'=OutOfpods pod/fill3 --timeout=10s >/dev/null || fail "OutOfpods"
pass "admission: OutOfcpu, NodeAffinity, OutOfpods"

# Graceful deletion: marked, stopped, removed; kubectl waits for it.
k delete pod runner --timeout=20s >/dev/null || fail "delete runner"
k get pod runner >/dev/null 2>&1 && fail "runner still there"
# A finalizer holds a stopped pod until it is removed.
k patch pod fill1 --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
k delete pod fill1 --wait=false >/dev/null
k wait --for=jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}'=143 pod/fill1 --timeout=10s >/dev/null ||
	fail "the terminating pod's container was not stopped"
[ -n "$(k get pod fill1 -o jsonpath='{.metadata.deletionTimestamp}')" ] || fail "no deletionTimestamp"
# Stopped: the node's final delete (grace 0) leaves it to the finalizer.
expect_eq 0 "$(k get pod fill1 -o jsonpath='{.metadata.deletionGracePeriodSeconds}')" "grace after the stop"
expect_eq Failed "$(k get pod fill1 -o jsonpath='{.status.phase}')" "terminal phase after the stop"
k patch pod fill1 --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
k wait --for=delete pod/fill1 --timeout=10s >/dev/null || fail "fill1 not removed after its finalizer"
k delete pod fill2 --grace-period=0 --force >/dev/null 2>&1 || fail "force delete"
k get pod fill2 >/dev/null 2>&1 && fail "force-deleted pod still there"
pass "graceful deletion: stopped, then removed; finalizers hold; --force at once"

# A restart picks the pods up again.
stop_daemon
start_daemon
k wait --for=condition=Ready node/vn1 --timeout=10s >/dev/null || fail "vn1 after restart"
pod after 200ms 0 Never
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/after --timeout=10s >/dev/null || fail "pods after restart"
k delete pod crashy --timeout=20s >/dev/null || fail "delete a pod from before the restart"
pass "after a restart the node and its pods are managed again"

# A deleted node's pods are removed.
k delete node vn1 >/dev/null
k wait --for=delete pod/ok pod/steady --timeout=10s >/dev/null || fail "pods of a deleted node remain"
pass "a deleted node's pods are removed"

# A node that appears after pods were bound to it runs them.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: early
  annotations: {volray.io/sim-duration: 1h}
spec:
  nodeName: late
  containers: [{name: c, image: busybox}]
YAML
expect_eq Pending "$(k get pod early -o jsonpath='{.status.phase}')" "a pod bound to a node that does not exist yet"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: late
  labels: {volray.io/runtime: virtual}
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/early --timeout=10s >/dev/null ||
	fail "the pod bound before its node existed does not run"
pass "a node that appears after its pods were bound runs them"
