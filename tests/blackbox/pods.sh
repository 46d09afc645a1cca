#!/bin/sh
# Pod admission and pod subresources: priorityClassName -> spec.priority
# (and the global default), default schedulerName and restartPolicy,
# pods/binding (201, then 409), pods/log (empty before any runtime writes,
# then the file's content with tailLines), chunked lists, and status.qosClass
# on create (init containers, pod-level resources, LimitRange defaults).
. "$(dirname "$0")/lib.sh"
start_daemon
P="$API/api/v1/namespaces/default/pods"

k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: normal}
value: 10
globalDefault: true
---
apiVersion: v1
kind: Pod
metadata: {name: hi}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox:1.36}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers: [{name: c, image: busybox}]
YAML
expect_eq 1000 "$(k get pod hi -o jsonpath='{.spec.priority}')" "priority from class"
expect_eq "10 normal" "$(k get pod plain -o jsonpath='{.spec.priority} {.spec.priorityClassName}')" "global default class"
expect_eq "default-scheduler Always ClusterFirst IfNotPresent" \
	"$(k get pod hi -o jsonpath='{.spec.schedulerName} {.spec.restartPolicy} {.spec.dnsPolicy} {.spec.containers[0].imagePullPolicy}')" \
	"pod defaults"
expect_eq Pending "$(k get pod hi -o jsonpath='{.status.phase}')" "created Pending"
pass "admission: priority classes, scheduler name, pod defaults"

# QoS class on create, before any node: kube-apiserver's ComputePodQOS.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: q-req}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q-guar}
spec:
  initContainers: [{name: i, image: busybox, resources: {limits: {cpu: "1", memory: 64Mi}}}]
  containers:
  - {name: a, image: busybox, resources: {limits: {cpu: 500m, memory: 64Mi}}}
  - {name: b, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: 1000m, memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: q-init}
spec:
  initContainers: [{name: i, image: busybox, resources: {requests: {cpu: 100m}}}]
  containers: [{name: a, image: busybox, resources: {limits: {cpu: 500m, memory: 64Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q-podlevel}
spec:
  resources: {limits: {cpu: "2", memory: 1Gi}}
  containers: [{name: a, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: q-podlevel-req}
spec:
  resources: {limits: {cpu: "2", memory: 1Gi}}
  containers: [{name: a, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Namespace
metadata: {name: qlr}
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: qlr}
spec:
  limits: [{type: Container, default: {cpu: 200m, memory: 128Mi}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q-lr, namespace: qlr}
spec:
  containers: [{name: c, image: busybox}]
YAML
for pq in q-req:Burstable q-guar:Guaranteed q-init:Burstable \
    q-podlevel:Guaranteed q-podlevel-req:Burstable plain:BestEffort; do
	expect_eq "${pq#*:}" "$(k get pod "${pq%%:*}" -o jsonpath='{.status.qosClass}')" "qosClass of ${pq%%:*}"
done
expect_eq Guaranteed "$(k -n qlr get pod q-lr -o jsonpath='{.status.qosClass}')" "qosClass after LimitRange defaults"
pass "qosClass computed on create: Burstable, Guaranteed, BestEffort"

bind() {
	curl -s -o "$WORK/bind.json" -w '%{http_code}' -XPOST "$P/$1/binding" \
		-H 'Content-Type: application/json' \
		-d "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\"},\"target\":{\"kind\":\"Node\",\"name\":\"$2\"}}"
}
expect_eq 201 "$(bind hi n1)" "binding"
expect_eq n1 "$(k get pod hi -o jsonpath='{.spec.nodeName}')" "nodeName set"
expect_eq True "$(k get pod hi -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')" "PodScheduled"
expect_eq 409 "$(bind hi n2)" "second binding"
expect_eq n1 "$(k get pod hi -o jsonpath='{.spec.nodeName}')" "nodeName unchanged"
expect_eq hi "$(k get pods --field-selector spec.nodeName=n1 -o jsonpath='{.items[*].metadata.name}')" "spec.nodeName field selector"
pass "pods/binding sets the node once"

expect_eq "" "$(k logs plain)" "logs before any runtime"
mkdir -p "$DATA/pods/default/plain"
printf 'one\ntwo\nthree\n' >"$DATA/pods/default/plain/c.log"
expect_eq "one
two
three" "$(k logs plain)" "logs"
expect_eq "three" "$(k logs plain --tail=1)" "tailLines"
k logs nope 2>&1 | grep -q NotFound || fail "logs of a missing pod"
k logs -f plain >"$WORK/follow.out" 2>&1 &
FPID=$!
i=0
until grep -q three "$WORK/follow.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "follow: no initial content"; sleep 0.05
done
printf 'four\n' >>"$DATA/pods/default/plain/c.log"
i=0
until grep -q four "$WORK/follow.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "follow: appended line not streamed"; sleep 0.05
done
k patch pod plain --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
wait $FPID || fail "logs -f did not end cleanly"
pass "pods/log, with tailLines and follow"

for i in 1 2 3 4 5; do
	k create -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: page$i}
YAML
done
expect_eq 5 "$(k get cm --chunk-size=2 -o name | grep -c page)" "chunked list"
first=$(curl -fs "$API/api/v1/namespaces/default/configmaps?limit=2")
echo "$first" | grep -q '"continue":"' || fail "no continue token"
pass "limit and continue"

# kubectl drain evicts (pods/eviction) what runs on a cordoned node.
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
YAML
k drain n1 --ignore-daemonsets --force --timeout=20s >"$WORK/drain.out" 2>&1 || fail "drain: $(cat "$WORK/drain.out")"
grep -q "pod/hi evicted" "$WORK/drain.out" || fail "drain did not evict hi: $(cat "$WORK/drain.out")"
k get pod hi >/dev/null 2>&1 && fail "evicted pod still there"
expect_eq true "$(k get node n1 -o jsonpath='{.spec.unschedulable}')" "cordoned"
pass "kubectl drain: cordon and eviction"
