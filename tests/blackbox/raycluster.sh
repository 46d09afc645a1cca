#!/bin/sh
# The RayCluster controller (lua/controllers/raycluster.lua) with stock
# kubectl on simulated nodes: KubeRay's upstream sample reaches ready with
# its head Service, labels, `ray start` command lines, env and status; a
# deleted worker is recreated; replicas are clamped to min/max; pods named
# in workersToDelete go first; a multi-host group moves in whole replicas;
# a head that exits is replaced; suspend and resume in two steps; a bad
# spec gets a Warning Event and no pods; and with a Volcano queue label
# the PodGroup is made first and every pod joins it.
. "$(dirname "$0")/lib.sh"
need_samples
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null

rc=raycluster-kuberay
workers() { # workers CLUSTER [GROUP]: names of its live worker pods
	k get pods -l "ray.io/cluster=$1,ray.io/node-type=worker${2:+,ray.io/group=$2}" \
		-o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{end}{range .items[*]}{.metadata.deletionTimestamp}{"|"}{.metadata.name}{"\n"}{end}' |
		sed -n 's/^|//p'
}
nworkers() { workers "$@" | grep -c . || true; }
state() { k get raycluster "$1" -o jsonpath='{.status.state}'; }
rstatus() { k get raycluster "$1" -o jsonpath="{.status.$2}"; }
rcond() { k get raycluster "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"; }
head_pod() { k get pods -l "ray.io/cluster=$1,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name}'; }

# Record every worker pod name ever created (expectations: no extra pods).
k get pods -l "ray.io/cluster=$rc,ray.io/node-type=worker" -w --output-watch-events \
	-o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$WORK/watch.out" 2>/dev/null &
watch_pid=$!
wait_watchers 1

# --- the upstream sample reaches ready
k apply -f "$SAMPLES/kuberay/ray-cluster.sample.yaml" >/dev/null
k wait --for=jsonpath='{.status.state}'=ready "raycluster/$rc" --timeout=20s >/dev/null ||
	fail "the sample did not become ready: $(k get raycluster $rc -o yaml)"
head=$(head_pod $rc)
case "$head" in "$rc-head-"?????) ;; *) fail "head pod name '$head'" ;; esac
w=$(workers $rc)
case "$w" in "$rc-workergroup-worker-"?????) ;; *) fail "worker pod name '$w'" ;; esac
expect_eq "yes $rc head headgroup $rc-head kuberay-operator" \
	"$(k get pod "$head" -o jsonpath='{.metadata.labels.ray\.io/is-ray-node} {.metadata.labels.ray\.io/cluster} {.metadata.labels.ray\.io/node-type} {.metadata.labels.ray\.io/group} {.metadata.labels.ray\.io/identifier} {.metadata.labels.app\.kubernetes\.io/created-by}')" \
	"head pod labels"
expect_eq "RayCluster $rc true" "$(k get pod "$head" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')" "head pod owner"
args=$(k get pod "$head" -o jsonpath='{.spec.containers[0].command} {.spec.containers[0].args[0]}')
expect_contains "$args" '["/bin/bash","-c","--"]' "head command"
expect_contains "$args" "ulimit -n 65536; ray start --head --block" "head args"
expect_contains "$args" "--dashboard-host=0.0.0.0" "head args"
expect_contains "$args" "--metrics-export-port=8080" "head args"
expect_contains "$args" "--num-cpus=1" "num-cpus from the container's limits"
expect_contains "$args" "--memory=5368709120" "memory from the container's limits"
env=$(k get pod "$head" -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value}{"\n"}{end}')
expect_contains "$env" "RAY_ADDRESS=127.0.0.1:6379" "head RAY_ADDRESS"
expect_contains "$env" "RAY_CLUSTER_NAME=$rc" "head RAY_CLUSTER_NAME"
expect_contains "$env" "KUBERAY_GEN_RAY_START_CMD=ray start --head" "head KUBERAY_GEN_RAY_START_CMD"
expect_contains "$(k get pod "$head" -o jsonpath='{range .spec.containers[0].ports[*]}{.name}:{.containerPort} {end}')" \
	"gcs-server:6379 dashboard:8265 client:10001 metrics:8080" "head container ports (metrics added)"
wargs=$(k get pod "$w" -o jsonpath='{.spec.containers[0].args[0]}')
expect_contains "$wargs" "ray start --address=$rc-head-svc.default.svc.cluster.local:6379 --block" "worker args"
wenv=$(k get pod "$w" -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value}{"\n"}{end}')
expect_contains "$wenv" "RAY_ADDRESS=$rc-head-svc.default.svc.cluster.local:6379" "worker RAY_ADDRESS"
expect_contains "$wenv" "FQ_RAY_IP=$rc-head-svc.default.svc.cluster.local" "worker FQ_RAY_IP"
pass "the upstream sample is ready: pods with KubeRay's names, labels, ray start lines, env and ports"

svc="$rc-head-svc"
expect_eq "None" "$(k get svc "$svc" -o jsonpath='{.spec.clusterIP}')" "head service is headless"
expect_eq "$rc head" "$(k get svc "$svc" -o jsonpath='{.spec.selector.ray\.io/cluster} {.spec.selector.ray\.io/node-type}')" "head service selector"
expect_eq "gcs-server:6379 dashboard:8265 client:10001 metrics:8080 " \
	"$(k get svc "$svc" -o jsonpath='{range .spec.ports[*]}{.name}:{.port} {end}')" "head service ports"
expect_eq "1 1 1 5 2 6Gi" "$(k get raycluster $rc -o jsonpath='{.status.desiredWorkerReplicas} {.status.readyWorkerReplicas} {.status.minWorkerReplicas} {.status.maxWorkerReplicas} {.status.desiredCPU} {.status.desiredMemory}')" "status counts"
expect_eq "$head $svc 8265" "$(k get raycluster $rc -o jsonpath='{.status.head.podName} {.status.head.serviceName} {.status.endpoints.dashboard}')" "status head and endpoints"
[ -n "$(rstatus $rc head.podIP)" ] || fail "status.head.podIP"
expect_eq "True HeadPodRunningAndReady" "$(rcond $rc HeadPodReady status) $(rcond $rc HeadPodReady reason)" "HeadPodReady"
expect_eq "True AllPodRunningAndReadyFirstTime" "$(rcond $rc RayClusterProvisioned status) $(rcond $rc RayClusterProvisioned reason)" "RayClusterProvisioned"
k get raycluster $rc | grep -q "^$rc *1 *1 .*ready" || fail "printer columns: $(k get raycluster $rc)"
pass "head Service, status fields and conditions"

# --- a deleted worker is recreated
k delete pod "$w" --wait=false >/dev/null
i=0
until [ "$(workers $rc | grep -v "^$w\$" | grep -c .)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no replacement for deleted worker $w"; sleep 0.1
done
k get events --field-selector involvedObject.name=$rc -o jsonpath='{.items[*].reason}' | grep -q CreatedWorkerPod ||
	fail "no CreatedWorkerPod event"
pass "a deleted worker is recreated"

# --- scale up and down, clamped to [minReplicas, maxReplicas]
k patch raycluster $rc --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":9}]' >/dev/null
wait_eq 5 "replicas 9 clamped to maxReplicas 5" nworkers $rc
k wait --for=jsonpath='{.status.desiredWorkerReplicas}'=5 raycluster/$rc --timeout=10s >/dev/null || fail "desiredWorkerReplicas 5"
k patch raycluster $rc --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":0}]' >/dev/null
wait_eq 1 "replicas 0 clamped to minReplicas 1" nworkers $rc
pass "scale up and down clamped to min and max"

# --- workersToDelete: the named pods go, not others
k patch raycluster $rc --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}]' >/dev/null
wait_eq 3 "three workers" nworkers $rc
victim=$(workers $rc | sed -n 2p)
others=$(workers $rc | grep -v "^$victim\$" | sort | tr '\n' ' ')
k patch raycluster $rc --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":2},{"op":"add","path":"/spec/workerGroupSpecs/0/scaleStrategy","value":{"workersToDelete":["'"$victim"'"]}}]' >/dev/null
wait_eq 2 "two workers after workersToDelete" nworkers $rc
expect_eq "$others" "$(workers $rc | sort | tr '\n' ' ')" "workersToDelete removed exactly $victim"
pass "workersToDelete removes the named worker"

# Every worker pod ever made: 1 + replacement + 4 scale-up + 2 = 8, and
# never more pods than asked for at once.
kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null || true
made=$(grep -c '^ADDED' "$WORK/watch.out" || true)
expect_eq 8 "$made" "worker pods created in all (no extra pods)"
pass "no extra pods were created"

# --- suspend and resume
k patch raycluster $rc --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
k wait --for=jsonpath='{.status.state}'=suspended raycluster/$rc --timeout=20s >/dev/null ||
	fail "suspended state: $(k get raycluster $rc -o yaml)"
expect_eq "" "$(k get pods -l ray.io/cluster=$rc -o name)" "no pods while suspended"
expect_eq "True False" "$(rcond $rc RayClusterSuspended status) $(rcond $rc RayClusterSuspending status)" "suspension conditions"
k patch raycluster $rc --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
k wait --for=jsonpath='{.status.state}'=ready raycluster/$rc --timeout=20s >/dev/null || fail "ready after resume"
expect_eq 2 "$(nworkers $rc)" "workers after resume"
expect_eq "False" "$(rcond $rc RayClusterSuspended status)" "RayClusterSuspended after resume"
pass "suspend deletes every pod, resume brings them back"

# --- a multi-host group moves in whole replicas
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: multi}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray}]}}
  workerGroupSpecs:
  - groupName: tpu
    replicas: 2
    numOfHosts: 2
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray}]}}
YAML
wait_eq 4 "2 replicas x 2 hosts" nworkers multi
expect_eq 2 "$(k get pods -l ray.io/cluster=multi,ray.io/node-type=worker -o jsonpath='{range .items[*]}{.metadata.labels.ray\.io/worker-group-replica-name}{"\n"}{end}' | sort -u | grep -c .)" "distinct replicas"
k patch raycluster multi --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":1}]' >/dev/null
wait_eq 2 "1 replica x 2 hosts" nworkers multi
expect_eq 1 "$(k get pods -l ray.io/cluster=multi,ray.io/node-type=worker -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{end}{range .items[*]}{.metadata.labels.ray\.io/worker-group-replica-name}{"\n"}{end}' | sort -u | grep -c .)" "one replica left"
k delete raycluster multi >/dev/null
pass "numOfHosts: replicas of several pods created and removed whole"

# --- a head whose Ray container exits is replaced
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: flaky}
spec:
  headGroupSpec:
    template:
      metadata: {annotations: {volray.io/sim-duration: 1s}}
      spec:
        restartPolicy: Never
        containers: [{name: ray-head, image: rayproject/ray}]
YAML
first=""
i=0
until [ -n "$first" ]; do first=$(head_pod flaky 2>/dev/null || true); i=$((i+1)); [ $i -lt 100 ] || fail "no head for flaky"; sleep 0.1; done
i=0
until now=$(head_pod flaky 2>/dev/null || true); [ -n "$now" ] && [ "$now" != "$first" ]; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "the exited head $first was not replaced"; sleep 0.1
done
k get events --field-selector involvedObject.name=flaky -o jsonpath='{.items[*].reason}' | grep -q DeletedHeadPod ||
	fail "no DeletedHeadPod event"
k delete raycluster flaky >/dev/null
pass "a head that exited is deleted and recreated"

# --- validation: a Warning Event and nothing made
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: badrange}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray}]}}
  workerGroupSpecs:
  - {groupName: g, replicas: 1, minReplicas: 3, maxReplicas: 2,
     template: {spec: {containers: [{name: w, image: rayproject/ray}]}}}
YAML
wait_eq "InvalidRayClusterSpec" "Warning event" k get events --field-selector involvedObject.name=badrange,type=Warning -o jsonpath='{.items[0].reason}'
expect_contains "$(k get events --field-selector involvedObject.name=badrange -o jsonpath='{.items[0].message}')" \
	"worker group g has minReplicas 3 greater than maxReplicas 2" "validation message"
expect_eq "" "$(k get pods -l ray.io/cluster=badrange -o name)" "no pods for an invalid cluster"
long=$(printf 'a%.0s' $(seq 1 54))
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $long}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray}]}}
YAML
wait_eq "InvalidRayClusterMetadata" "Warning event for a long name" k get events --field-selector involvedObject.name=$long -o jsonpath='{.items[0].reason}'
pass "invalid specs get a Warning Event and no pods"

# --- Volcano: the upstream queue sample. The revisions at which the
# PodGroup and the pods were added tell which came first.
k get podgroups -w --output-watch-events -o jsonpath='{.type} {.object.metadata.resourceVersion}{"\n"}' >"$WORK/pg.out" 2>/dev/null &
pgw=$!
k get pods -l volcano.sh/queue-name=kuberay-test-queue -w --output-watch-events -o jsonpath='{.type} {.object.metadata.resourceVersion}{"\n"}' >"$WORK/pods.out" 2>/dev/null &
podw=$!
wait_watchers 2
k apply -f "$SAMPLES/kuberay/ray-cluster.volcano-scheduler-queue.yaml" >/dev/null
vc=$(k get raycluster -l volcano.sh/queue-name=kuberay-test-queue -o jsonpath='{.items[0].metadata.name}')
[ -n "$vc" ] || fail "the volcano sample has no RayCluster with a queue label"
pg="ray-$vc-pg"
wait_eq "$pg" "PodGroup" k get podgroup "$pg" -o jsonpath='{.metadata.name}'
want=$(k get raycluster "$vc" -o jsonpath='{.spec.workerGroupSpecs[0].replicas}')
expect_eq "$((want + 1)) kuberay-test-queue RayCluster $vc" \
	"$(k get podgroup "$pg" -o jsonpath='{.spec.minMember} {.spec.queue} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')" "PodGroup spec"
[ -n "$(k get podgroup "$pg" -o jsonpath='{.spec.minResources.cpu}')" ] || fail "PodGroup minResources.cpu"
[ -n "$(k get podgroup "$pg" -o jsonpath='{.spec.minResources.memory}')" ] || fail "PodGroup minResources.memory"
i=0
until [ "$(k get pods -l ray.io/cluster=$vc -o name | grep -c .)" = "$((want + 1))" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "volcano cluster pods"; sleep 0.1
done
for p in $(k get pods -l ray.io/cluster=$vc -o name); do
	got=$(k get "$p" -o jsonpath='{.spec.schedulerName} {.metadata.annotations.scheduling\.k8s\.io/group-name} {.metadata.labels.volcano\.sh/queue-name}')
	expect_eq "volcano $pg kuberay-test-queue" "$got" "$p gang annotations"
done
hp=$(head_pod "$vc")
expect_eq headgroup "$(k get pod "$hp" -o jsonpath='{.metadata.annotations.volcano\.sh/task-spec}')" "head task-spec"
kill $pgw $podw 2>/dev/null; wait $pgw $podw 2>/dev/null || true
pg_rev=$(sed -n 's/^ADDED //p' "$WORK/pg.out" | head -n 1)
pod_rev=$(sed -n 's/^ADDED //p' "$WORK/pods.out" | sort -n | head -n 1)
[ -n "$pg_rev" ] && [ -n "$pod_rev" ] || fail "no ADDED events seen (pg '$pg_rev', pods '$pod_rev')"
[ "$pg_rev" -lt "$pod_rev" ] || fail "the PodGroup (revision $pg_rev) was not created before the pods ($pod_rev)"
pass "Volcano: PodGroup first, pods annotated, schedulerName volcano"

k delete raycluster $rc >/dev/null
wait_eq "" "pods collected with the cluster" k get pods -l ray.io/cluster=$rc -o name
pass "deleting the RayCluster takes its pods"

# --- volrayd --batch-scheduler=volcano: every Ray object gets a PodGroup
stop_daemon
start_daemon --batch-scheduler=volcano
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: plain}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}
  workerGroupSpecs:
  - {groupName: g, replicas: 2, template: {spec: {containers: [{name: w, image: rayproject/ray, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}}
YAML
wait_eq "3 2500m 3Gi" "PodGroup of a RayCluster without labels" \
	k get podgroup ray-plain-pg -o jsonpath='{.spec.minMember} {.spec.minResources.cpu} {.spec.minResources.memory}'
k wait --for=jsonpath='{.status.state}'=ready raycluster/plain --timeout=20s >/dev/null || fail "plain cluster ready"
expect_eq "volcano ray-plain-pg" "$(k get pod "$(head_pod plain)" -o jsonpath='{.spec.schedulerName} {.metadata.annotations.scheduling\.k8s\.io/group-name}')" "plain head pod"
pass "--batch-scheduler=volcano: a RayCluster without labels is gang-scheduled"
