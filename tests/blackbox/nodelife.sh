#!/bin/sh
# Node lifecycle: every new pod gets the DefaultTolerationSeconds
# tolerations; a virtual node whose heartbeat stops (volray.io/sim-fail)
# turns Ready=Unknown after --node-monitor-grace-period and gets the
# unreachable taints; its pods are evicted after their tolerationSeconds
# (the default, their own shorter one) or never (no limit); a Node that
# never had a Lease is marked too; the heartbeat coming back makes the node
# Ready without the taints; a NoExecute taint added by hand evicts what
# does not tolerate it at once; cordon / drain / uncordon with the
# unschedulable taint.
. "$(dirname "$0")/lib.sh"
start_daemon --node-monitor-grace-period 3s --node-lease-duration-seconds 2 \
	--default-unreachable-toleration-seconds 4

ms() { echo $(($(date +%s%N) / 1000000)); }
taints() { kubectl get node "$1" -o jsonpath='{range .spec.taints[*]}{.key}:{.effect} {end}'; }

k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: vn1
  labels: {volray.io/runtime: virtual}
---
apiVersion: v1
kind: Node
metadata:
  name: vn2
  labels: {volray.io/runtime: virtual}
---
apiVersion: v1
kind: Node
metadata: {name: plain}
YAML
k wait --for=condition=Ready node/vn1 node/vn2 --timeout=10s >/dev/null || fail "virtual nodes not Ready"

pod() { # name node [tolerations yaml]
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  containers: [{name: c, image: busybox}]
${3:-}
YAML
}
pod dflt vn1
pod short vn1 '  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 1}]'
pod forever vn1 '  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}]'
expect_eq "node.kubernetes.io/not-ready:Exists:NoExecute:300 node.kubernetes.io/unreachable:Exists:NoExecute:4 " \
	"$(k get pod dflt -o jsonpath='{range .spec.tolerations[*]}{.key}:{.operator}:{.effect}:{.tolerationSeconds} {end}')" \
	"default tolerations"
expect_eq "node.kubernetes.io/unreachable:1 node.kubernetes.io/not-ready:300 " \
	"$(k get pod short -o jsonpath='{range .spec.tolerations[*]}{.key}:{.tolerationSeconds} {end}')" \
	"a pod's own unreachable toleration is kept, not-ready added"
k wait --for=condition=Ready pod/dflt pod/short pod/forever --timeout=10s >/dev/null || fail "pods not Ready"
pass "DefaultTolerationSeconds: not-ready 300 s, unreachable from the flag"

# The heartbeat stops: Unknown after the grace period, not before.
[ -n "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}')" ] || fail "vn1 has no Lease"
t0=$(ms)
k annotate node vn1 volray.io/sim-fail=true >/dev/null
k wait --for=condition=Ready=Unknown node/vn1 --timeout=15s >/dev/null || fail "vn1 not Unknown"
t1=$(ms)
[ $((t1 - t0)) -ge 2000 ] || fail "vn1 Unknown after $((t1 - t0)) ms, before the 3 s grace"
expect_eq "NodeStatusUnknown Kubelet stopped posting node status." \
	"$(k get node vn1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].message}')" \
	"Ready's reason and message"
expect_eq "Unknown Unknown Unknown" \
	"$(k get node vn1 -o jsonpath='{.status.conditions[?(@.type=="MemoryPressure")].status} {.status.conditions[?(@.type=="DiskPressure")].status} {.status.conditions[?(@.type=="PIDPressure")].status}')" \
	"the other conditions"
wait_eq "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoExecute " \
	"unreachable taints" taints vn1
[ -n "$(k get node vn1 -o jsonpath='{.spec.taints[?(@.effect=="NoExecute")].timeAdded}')" ] ||
	fail "no timeAdded on the NoExecute taint"
renew=$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}')
expect_eq NotReady "$(k get node vn1 --no-headers | awk '{print $2}')" "kubectl's STATUS"
pass "no heartbeat: Ready=Unknown after the grace period, unreachable taints"

# Evictions: 1 s (its own), then 4 s (the default), never (no limit).
k wait --for=delete pod/short --timeout=10s >/dev/null || fail "short not evicted"
k get pod dflt >/dev/null 2>&1 || fail "dflt evicted together with short (4 s vs 1 s)"
expect_eq "" "$(k get pod dflt -o jsonpath='{.metadata.deletionTimestamp}')" "dflt not yet marked"
k wait --for=delete pod/dflt --timeout=10s >/dev/null || fail "dflt not evicted after 4 s"
expect_eq "forever:" "$(k get pod forever -o jsonpath='{.metadata.name}:{.metadata.deletionTimestamp}')" \
	"a pod tolerating unreachable without a limit stays"
expect_contains "$(k get events -o jsonpath='{range .items[*]}{.reason}={.message};{end}')" \
	"TaintManagerEviction=Marking for deletion Pod default/short" "eviction Event"
# Seconds of failure later (renewals are every 0.5 s), still the same.
expect_eq "$renew" "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}')" \
	"a failing node's Lease is not renewed"
pass "evictions after tolerationSeconds: own 1 s, then the default 4 s; never without a limit"

# A Node without a runtime never posts status or a Lease: marked too.
k wait --for=condition=Ready=Unknown node/plain --timeout=10s >/dev/null || fail "plain not Unknown"
expect_eq NodeStatusNeverUpdated "$(k get node plain -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" \
	"never-updated reason"
wait_eq "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoExecute " \
	"plain's taints" taints plain
pass "a Node that never had a Lease is Unknown after the grace period"

# The heartbeat comes back: Ready, the taints go, the Lease is renewed.
k annotate node vn1 volray.io/sim-fail- >/dev/null
k wait --for=condition=Ready node/vn1 --timeout=10s >/dev/null || fail "vn1 not Ready again"
wait_eq "" "taints after recovery" taints vn1
[ "$(k get lease -n kube-node-lease vn1 -o jsonpath='{.spec.renewTime}')" != "$renew" ] ||
	fail "the Lease was not renewed on recovery"
expect_eq "forever:Running" "$(k get pod forever -o jsonpath='{.metadata.name}:{.status.phase}')" "forever after recovery"
pass "heartbeat back: Ready, taints removed"

# A NoExecute taint by hand: what does not tolerate it goes at once.
pod bare vn2
pod tol vn2 '  tolerations: [{key: example.com/maint, operator: Equal, value: "now", effect: NoExecute}]'
k wait --for=condition=Ready pod/bare pod/tol --timeout=10s >/dev/null || fail "vn2 pods not Ready"
k taint node vn2 example.com/maint=now:NoExecute >/dev/null
k wait --for=delete pod/bare --timeout=10s >/dev/null || fail "bare not evicted"
expect_eq "tol:" "$(k get pod tol -o jsonpath='{.metadata.name}:{.metadata.deletionTimestamp}')" "tolerating pod stays"
k taint node vn2 example.com/maint- >/dev/null
pass "an untolerated NoExecute taint evicts at once"

# cordon / drain / uncordon.
k cordon vn2 >/dev/null
expect_eq true "$(k get node vn2 -o jsonpath='{.spec.unschedulable}')" "cordoned"
wait_eq "node.kubernetes.io/unschedulable:NoSchedule " "unschedulable taint" taints vn2
k drain vn2 --force --grace-period=1 --timeout=20s >"$WORK/drain.out" 2>&1 || fail "drain: $(cat "$WORK/drain.out")"
grep -q "pod/tol evicted" "$WORK/drain.out" || fail "drain did not evict tol: $(cat "$WORK/drain.out")"
k get pod tol >/dev/null 2>&1 && fail "drained pod still there"
k uncordon vn2 >/dev/null
expect_eq "" "$(k get node vn2 -o jsonpath='{.spec.unschedulable}')" "uncordoned"
wait_eq "" "unschedulable taint removed" taints vn2
expect_eq Ready "$(k get node vn2 --no-headers | awk '{print $2}')" "vn2 status after uncordon"
pass "cordon adds the unschedulable taint, drain evicts, uncordon removes it"
