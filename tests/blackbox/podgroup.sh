#!/bin/sh
# The PodGroup controller (lua/controllers/podgroup.lua): a pod for the
# volcano scheduler without a PodGroup gets the one Volcano's controller
# makes (podgroup-<controller owner uid>, or podgroup-<pod uid> for a bare
# pod, owned by that owner, minMember, queue, priorityClassName and
# minResources from the pod and its annotations) and is annotated with
# its name; pods of a ReplicaSet share one group; pods for another
# scheduler or already in a group are left alone; a PodGroup without a
# phase gets Pending. Volcano's upstream Deployment and Queue samples run.
. "$(dirname "$0")/lib.sh"
need_samples
# A token for the controller's user, to ask what its role allows.
echo 'pg-token,system:controller:podgroup-controller,9001,""' >"$WORK/tokens.csv"
start_daemon --token-auth-file "$WORK/tokens.csv"
VR="$top_builddir/volray"

"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=10s >/dev/null

k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: bare
  annotations: {volray.io/sim-duration: 1h, scheduling.volcano.sh/queue-name: default}
spec:
  schedulerName: volcano
  priorityClassName: high
  initContainers:
  - {name: init, image: busybox, resources: {requests: {cpu: "1"}}}
  containers:
  - {name: a, image: busybox, resources: {requests: {cpu: 250m, memory: 1Gi}}}
  - {name: b, image: busybox, resources: {requests: {cpu: 250m, memory: 512Mi}}}
YAML
uid=$(k get pod bare -o jsonpath='{.metadata.uid}')
pg="podgroup-$uid"
group_of() { # pod
	k get pod "$1" -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}'
}
wait_eq "$pg" "bare pod's group annotation" group_of bare
got=$(k get podgroup "$pg" -o jsonpath='{.spec.minMember} {.spec.queue} {.spec.priorityClassName} {.spec.minResources.cpu} {.spec.minResources.memory} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')
expect_eq "1 default high 1 1536Mi Pod/bare true" "$got" "the bare pod's PodGroup"
phase=$(k get podgroup "$pg" -o jsonpath='{.status.phase}')
case "$phase" in Pending|Inqueue|Running) ;; *) fail "PodGroup phase '$phase'" ;; esac
pass "a bare volcano pod gets podgroup-<pod uid> (minResources: max of init and the sum of containers), and its annotation"

k delete pod bare --wait=false >/dev/null
k wait --for=delete "podgroup/$pg" --timeout=20s >/dev/null || fail "the bare pod's PodGroup outlived it"
pass "the PodGroup goes with the pod that owns it"

k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: pair
  annotations: {volray.io/sim-duration: 1h, scheduling.volcano.sh/group-min-member: "2",
    scheduling.volcano.sh/queue-name: nosuch}
spec:
  schedulerName: volcano
  containers: [{name: a, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, annotations: {volray.io/sim-duration: 1h}}
spec:
  containers: [{name: a, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata:
  name: member
  annotations: {volray.io/sim-duration: 1h, scheduling.k8s.io/group-name: mine}
spec:
  schedulerName: volcano
  containers: [{name: a, image: busybox}]
YAML
pg=podgroup-$(k get pod pair -o jsonpath='{.metadata.uid}')
wait_eq "$pg" "pair's group" group_of pair
expect_eq "2 nosuch 200m" "$(k get podgroup "$pg" -o jsonpath='{.spec.minMember} {.spec.queue} {.spec.minResources.cpu}')" \
	"group-min-member and queue-name annotations"
# The controller has seen every pod by the time pair's group exists;
# the other two stay without one.
expect_eq "" "$(group_of plain)" "a default-scheduler pod gets no group"
expect_eq "mine" "$(group_of member)" "a pod in a group keeps it"
expect_eq "1" "$(k get podgroups -o name | wc -l | tr -d ' ')" "only pair's PodGroup exists"
pass "minMember and queue from annotations; other schedulers' pods and grouped pods are left alone"

k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: handmade}
spec: {minMember: 3}
YAML
# kubectl wait for a jsonpath without a value: until the field exists.
k wait --for=jsonpath='{.status.phase}' podgroup/handmade --timeout=10s >/dev/null ||
	fail "handmade PodGroup got no phase"
phase=$(k get podgroup handmade -o jsonpath='{.status.phase}')
case "$phase" in Pending|Inqueue) ;; *) fail "handmade phase $phase" ;; esac
expect_eq default "$(k get podgroup handmade -o jsonpath='{.spec.queue}')" "a PodGroup's queue defaults to default"
pass "a PodGroup without a phase is made Pending"

# Volcano's upstream samples: a queue, then a Deployment whose pods ask
# for volcano and that queue.
k apply -f "$SAMPLES/volcano/deployment_queue.yaml" >/dev/null
k apply -f "$SAMPLES/volcano/deployment_deployment.yaml" >/dev/null
k wait --for=jsonpath='{.status.availableReplicas}'=1 deploy/deploy-with-volcano --timeout=30s >/dev/null ||
	fail "the sample Deployment's pod did not run"
rs=$(k get rs -l app=nginx -o jsonpath='{.items[0].metadata.name}')
rsuid=$(k get rs "$rs" -o jsonpath='{.metadata.uid}')
pod=$(k get pods -l app=nginx -o jsonpath='{.items[0].metadata.name}')
wait_eq "podgroup-$rsuid" "the sample pod's group" group_of "$pod"
expect_eq "1 test 300m ReplicaSet/$rs" \
	"$(k get podgroup "podgroup-$rsuid" -o jsonpath='{.spec.minMember} {.spec.queue} {.spec.minResources.cpu} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" \
	"the ReplicaSet's PodGroup"
k scale deploy/deploy-with-volcano --replicas=2 >/dev/null
k wait --for=jsonpath='{.status.availableReplicas}'=2 deploy/deploy-with-volcano --timeout=30s >/dev/null ||
	fail "the second replica did not run"
groups=$(k get pods -l app=nginx -o jsonpath='{range .items[*]}{.metadata.annotations.scheduling\.k8s\.io/group-name}{"\n"}{end}' | sort -u)
expect_eq "podgroup-$rsuid" "$groups" "both replicas in the ReplicaSet's group"
wait_eq 1 "queue test counts the group" sh -c "kubectl get queue test -o jsonpath='{.status.pending} {.status.inqueue} {.status.running}' | awk '{print \$1 + \$2 + \$3}'"
pass "upstream deployment samples: the ReplicaSet's pods share podgroup-<rs uid> in queue test"

# A batch/v1 Job's annotation sets its pods' minMember.
k create -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: gang
  annotations: {scheduling.volcano.sh/group-min-member: "2"}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {annotations: {volray.io/sim-duration: 1h}}
    spec:
      schedulerName: volcano
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 200m}}}]
YAML
juid=$(k get job gang -o jsonpath='{.metadata.uid}')
k wait --for=jsonpath='{.spec.minMember}'=2 "podgroup/podgroup-$juid" --timeout=10s >/dev/null ||
	fail "no PodGroup with minMember 2 for the Job"
expect_eq "400m Job/gang" \
	"$(k get podgroup "podgroup-$juid" -o jsonpath='{.spec.minResources.cpu} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" \
	"the Job's PodGroup: two pods' requests, owned by the Job"
pass "a Job's group-min-member annotation is its pods' PodGroup's minMember"

desc=$("$VR" describe podgroup "podgroup-$rsuid") || fail "describe podgroup exit $?"
expect_contains "$desc" "Min Member:" "describe podgroup shows the spec"
expect_contains "$desc" "Pods:" "describe podgroup has a Pods section"
expect_contains "$(echo "$desc" | tr -s ' ')" "$pod Running vnode-" "describe podgroup lists a member"
head=$(k get podgroup | head -1 | tr -s ' ')
expect_eq "NAME STATUS MINMEMBER RUNNINGS AGE" "$head" "kubectl get podgroup columns"
pass "volray describe podgroup lists its pods; kubectl get podgroup prints Volcano's columns"

may() { k --token=pg-token auth can-i "$@" || true; }
expect_eq "yes no yes no" \
	"$(may create podgroups) $(may delete podgroups) $(may patch pods) $(may delete pods)" \
	"the podgroup controller's rights"
if grep -q "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log"; then
	grep "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log" | head -n 3
	fail "a controller was refused something"
fi
pass "the podgroup controller has a least-privilege role, and needed nothing more"
