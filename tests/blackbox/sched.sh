#!/bin/sh
# The scheduler's first part: pending pods are bound to Ready simulated
# nodes that fit them (requests, nodeSelector, taints, cordon), spread by
# least-requested scoring; a pod that fits nowhere says why in
# kube-scheduler's words; a PodGroup's pods are bound all or nothing
# against minMember; pods for another scheduler are left alone.
. "$(dirname "$0")/lib.sh"
start_daemon
VR="$top_builddir/volray"

"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi --labels zone=a >/dev/null ||
	fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=10s >/dev/null

k create deployment web --image=nginx --replicas=4 >/dev/null
k set resources deployment web --requests=cpu=1 >/dev/null
k wait --for=jsonpath='{.status.availableReplicas}'=4 deploy/web --timeout=30s >/dev/null ||
	fail "the Deployment's pods were not scheduled"
nodes=$(k get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
expect_eq "2 2 " "$nodes" "four pods spread two per node"
pass "a Deployment's pods are bound and spread over the nodes"

pod() { # name extra-spec-yaml
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {volray.io/sim-duration: "1h"}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "${3:-100m}"}}}]
$2
YAML
}
why() {
	kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}

pod huge "" 64
wait_eq "0/2 nodes are available: 2 Insufficient cpu." "Insufficient cpu" why huge
expect_eq Unschedulable "$(k get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" "reason"
pod elsewhere "  nodeSelector: {zone: b}"
wait_eq "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector." \
	"selector message" why elsewhere
pass "a pod that fits nowhere says why (PodScheduled=False, Unschedulable)"

k delete deployment web >/dev/null
k wait --for=delete pod -l app=web --timeout=20s >/dev/null || fail "web pods not gone"
k taint node vnode-0 dedicated=gpu:NoSchedule >/dev/null
pod plain ""
pod tolerant "  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
  nodeSelector: {kubernetes.io/hostname: vnode-0}"
k wait --for=condition=PodScheduled pod/plain pod/tolerant --timeout=10s >/dev/null || fail "taint pods"
expect_eq vnode-1 "$(k get pod plain -o jsonpath='{.spec.nodeName}')" "an untolerated taint keeps a pod away"
expect_eq vnode-0 "$(k get pod tolerant -o jsonpath='{.spec.nodeName}')" "a toleration lets it in"
k cordon vnode-1 >/dev/null
pod nowhere "  nodeSelector: {kubernetes.io/hostname: vnode-1}"
# vnode-0 is still tainted: reported first, in kube-scheduler's filter order.
wait_eq "0/2 nodes are available: 1 node(s) had untolerated taint, 1 node(s) were unschedulable." \
	"cordoned message" why nowhere
k uncordon vnode-1 >/dev/null
k wait --for=condition=PodScheduled pod/nowhere --timeout=10s >/dev/null || fail "uncordon"
k taint node vnode-0 dedicated- >/dev/null
k delete pod plain tolerant nowhere huge elsewhere --wait=true >/dev/null
pass "taints, tolerations, cordon and uncordon"

# Pod (anti-)affinity on the hostname reads the labels and terms of pods
# already bound (the scheduler parses those only when a predicate asks).
labelled() { # name label extra-spec-yaml
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: $2}
  annotations: {volray.io/sim-duration: "1h"}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
$3
YAML
}
term() { # affinity-kind label
	printf '  affinity:\n    %s:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: %s}}}' "$1" "$2"
}
labelled solo-a solo ""
k wait --for=condition=PodScheduled pod/solo-a --timeout=10s >/dev/null || fail "solo-a"
a_node=$(k get pod solo-a -o jsonpath='{.spec.nodeName}')
labelled solo-b other "$(term podAntiAffinity solo)"
labelled near-a other "$(term podAffinity solo)"
k wait --for=condition=PodScheduled pod/solo-b pod/near-a --timeout=10s >/dev/null ||
	fail "affinity pods not bound"
b_node=$(k get pod solo-b -o jsonpath='{.spec.nodeName}')
[ "$b_node" != "$a_node" ] || fail "anti-affinity: solo-b on $b_node beside solo-a"
expect_eq "$a_node" "$(k get pod near-a -o jsonpath='{.spec.nodeName}')" "affinity: near-a beside solo-a"
# Symmetry: solo-b's anti-affinity keeps another app=solo pod off its node
# (least-requested alone would put solo-c there).
labelled solo-c solo ""
k wait --for=condition=PodScheduled pod/solo-c --timeout=10s >/dev/null || fail "solo-c"
expect_eq "$a_node" "$(k get pod solo-c -o jsonpath='{.spec.nodeName}')" \
	"a bound pod's anti-affinity repels a new pod it selects"
labelled solo-d solo "$(term podAntiAffinity solo)"
wait_eq "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules." \
	"anti-affinity message" why solo-d
k delete pod solo-a solo-b near-a solo-c solo-d --wait=true >/dev/null
pass "pod affinity and anti-affinity on the hostname against bound pods"

# Gang: three pods of 3 cpu in a PodGroup of minMember 3; two nodes of 4 cpu.
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: gang}
spec: {minMember: 3}
YAML
for i in 0 1 2; do
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: g$i
  annotations: {scheduling.k8s.io/group-name: gang, volray.io/sim-duration: 1h}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
YAML
done
gang_why() { why g0 | cut -c1-60; }
wait_eq "3/3 tasks in gang unschedulable: pod group is not ready, 3 P" "gang message" gang_why
for i in 0 1 2; do
	expect_eq "" "$(k get pod g$i -o jsonpath='{.spec.nodeName}')" "no gang member bound alone"
done
"$VR" node add --virtual --count 1 --cpu 4 --memory 8Gi >/dev/null
k wait --for=condition=PodScheduled pod/g0 pod/g1 pod/g2 --timeout=10s >/dev/null ||
	fail "the gang was not bound once it fit"
expect_eq 3 "$(k get pods g0 g1 g2 -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l | tr -d ' ')" \
	"one gang member per node"
pass "gang: all or nothing against minMember"

# Another scheduler's pod is not ours.
pod foreign "  schedulerName: someone-else"
pod mine ""
# A cycle that placed "mine" saw "foreign" too (created first).
k wait --for=condition=PodScheduled pod/mine --timeout=10s >/dev/null || fail "mine"
expect_eq "" "$(k get pod foreign -o jsonpath='{.spec.nodeName}{.status.conditions}')" "a foreign pod is left alone"
pass "pods for another scheduler are left alone"
