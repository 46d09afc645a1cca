#!/bin/sh
# RayCluster fields of KubeRay 1.7 (issue 24) on simulated nodes:
# upgradeStrategy Recreate, where a change of the pods' spec deletes every
# pod and makes them again (the head annotated with the spec's hash) while
# scaling does not, and None (the default), where a changed template leaves
# the running pods alone; a group's top-level resources and labels in its
# ray start line and pod labels; each worker's replica index.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 8 --memory 32Gi >/dev/null ||
	fail "volray node add"

cluster() {	# cluster NAME STRATEGY
	k apply -f - >/dev/null <<YAML || fail "create $1"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $1}
spec:
  upgradeStrategy: {type: $2}
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0}]}}
  workerGroupSpecs:
  - groupName: w
    replicas: 1
    minReplicas: 0
    maxReplicas: 4
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.52.0}]}}
YAML
}
uids() {	# the live pods' uids of a cluster, sorted
	k get pods -l "ray.io/cluster=$1" -o json | python3 -c 'import json,sys
print(" ".join(sorted(p["metadata"]["uid"] for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp"))))'
}
ready() {
	k wait --for=jsonpath='{.status.state}'=ready "raycluster/$1" --timeout=60s >/dev/null ||
		fail "$1 is not ready: $(k get raycluster "$1" -o jsonpath='{.status}')"
}

cluster rc Recreate
ready rc
head=$(k get pods -l ray.io/cluster=rc,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
[ -n "$(k get pod "$head" -o jsonpath='{.metadata.annotations.ray\.io/upgrade-strategy-recreate-hash}')" ] ||
	fail "the head has no recreate hash"
before=$(uids rc)
k patch raycluster rc --type=json -p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 2}]' >/dev/null
wait_eq 3 "pods after scaling to 2 workers" sh -c "kubectl get pods -l ray.io/cluster=rc --no-headers | wc -l | tr -d ' '"
for u in $before; do
	expect_contains "$(uids rc)" "$u" "a pod kept while scaling"
done
scaled=$(uids rc)
k patch raycluster rc --type=json -p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/template/spec/containers/0/image", "value": "rayproject/ray:2.53.0"}]' >/dev/null
i=0
until [ "$(k get pods -l ray.io/cluster=rc,ray.io/node-type=worker -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)" = "rayproject/ray:2.53.0" ] &&
    [ "$(k get pods -l ray.io/cluster=rc --no-headers 2>/dev/null | wc -l | tr -d ' ')" = 3 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the workers were not made again with the new image"
	sleep 0.1
done
ready rc
for u in $scaled; do
	case " $(uids rc) " in *" $u "*) fail "pod $u survived a Recreate upgrade" ;; esac
done
expect_eq 1 "$(k get events --field-selector involvedObject.name=rc,reason=DeletedPod -o name | wc -l | tr -d ' ')" "the DeletedPod event"
pass "Recreate: a new pod spec deletes every pod and makes them again; scaling does not"

cluster keep None
ready keep
before=$(uids keep)
k patch raycluster keep --type=json -p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/template/spec/containers/0/image", "value": "rayproject/ray:2.53.0"}]' >/dev/null
k wait --for=jsonpath='{.metadata.generation}'=2 raycluster/keep --timeout=10s >/dev/null
# The controller has seen the change once it reconciled the new generation.
k wait --for=jsonpath='{.status.observedGeneration}'=2 raycluster/keep --timeout=30s >/dev/null ||
	fail "keep's new generation was not reconciled"
expect_eq "$before" "$(uids keep)" "keep's pods after a template change with None"
pass "None: a changed template leaves the running pods alone"

# --- a group's resources and labels; replica indices
k apply -f - >/dev/null <<'YAML' || fail "create g17"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: g17}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0}]}}
  workerGroupSpecs:
  - groupName: w
    replicas: 2
    rayStartParams: {num-cpus: "1"}
    resources: {cpu: "3", memory: 2Gi, accel: "2"}
    labels: {zone: z1, tier: gold}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.52.0}]}}
YAML
ready g17
cmd=$(k get pods -l ray.io/cluster=g17,ray.io/node-type=worker -o jsonpath='{.items[0].spec.containers[0].args[0]}')
expect_contains "$cmd" "--num-cpus=3" "resources.cpu over rayStartParams"
expect_contains "$cmd" "--memory=2147483648" "resources.memory"
expect_contains "$cmd" "--resources='{\"accel\":2}'" "a custom resource"
expect_contains "$cmd" "--labels=tier=gold,zone=z1" "labels in ray start"
expect_eq "z1" "$(k get pods -l ray.io/cluster=g17,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.labels.zone}')" "labels on the pod"
expect_eq "0 1" "$(k get pods -l ray.io/cluster=g17,ray.io/node-type=worker -o jsonpath='{.items[*].metadata.labels.ray\.io/worker-group-replica-index}' | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')" "replica indices"
victim=$(k get pods -l "ray.io/cluster=g17,ray.io/worker-group-replica-index=0" -o jsonpath='{.items[0].metadata.name}')
k delete pod "$victim" --wait=false >/dev/null
i=0
until [ "$(k get pods -l "ray.io/cluster=g17,ray.io/worker-group-replica-index=0" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null | tr ' ' '\n' | grep -v "^$victim\$" | grep -c .)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no new worker with index 0"
	sleep 0.1
done
pass "a group's resources and labels reach ray start and the pods; a lost replica's index is taken again"
