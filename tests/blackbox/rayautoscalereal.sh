#!/bin/sh
# Ray's own autoscaler on real Ray (volrayd(8), "REAL RAY"): as root with
# Ray 2.52.0 installed, the pod network on, a RayCluster with
# enableInTreeAutoscaling gets KubeRay's autoscaler sidecar, which runs
# Ray's `ray kuberay-autoscaler` (autoscaler v2) in the head pod against
# volrayd's API with in-cluster config: the kubernetes Service, the head
# pod's service-account token and CA (kube-api-access volume), and the
# Role KubeRay grants it. Tasks that need CPUs the head does not have
# (num-cpus 0) make Ray's autoscaler patch the worker group's replicas
# (volray's own autoscaler controller stands back: the head's dashboard is
# real); the workers join and run the tasks; once idle past
# idleTimeoutSeconds the autoscaler names them in workersToDelete and
# lowers replicas, and they go. The head's Ray sees its container's
# cgroup limits (its object store sized within the 2Gi limit), gets the
# 64Mi /dev/shm a container runtime gives (an event says Ray's object
# store goes to /tmp), and `volray ray log` fetches every node's Ray
# session logs through the dashboard's log API. Prints the time from the tasks' submission
# to their results (scale-up included) and to the workers' removal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clilib.sh"
LOCAL_NODE=1
REAL_RAY=1
RAY_DIR=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
[ -x "$RAY_DIR/2.52.0/bin/ray" ] ||
	skip "no Ray 2.52.0 in $RAY_DIR (scripts/ray.sh installs it)"
[ "$(id -u)" = 0 ] || skip "not root: no pod network, so no in-cluster API for Ray's autoscaler"
PATH=$PATH:/usr/sbin:/sbin
for t in ip nft; do
	command -v $t >/dev/null 2>&1 || skip "no $t (Debian's iproute2, nftables): no pod network"
done
start_daemon --ray-dir "$RAY_DIR"
grep -q "podnet: the node's namespace" "$WORK/volrayd.log" ||
	skip "the pod network did not come up (see volrayd's log)"

k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: auto}
spec:
  rayVersion: "2.52.0"
  enableInTreeAutoscaling: true
  autoscalerOptions:
    upscalingMode: Default
    idleTimeoutSeconds: 15
  headGroupSpec:
    rayStartParams: {num-cpus: "0"}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
          resources:
            limits: {cpu: "1", memory: 2Gi}
            requests: {cpu: 500m, memory: 2Gi}
  workerGroupSpecs:
  - groupName: small
    replicas: 0
    minReplicas: 0
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
          resources:
            limits: {cpu: "1", memory: 1Gi}
            requests: {cpu: 500m, memory: 1Gi}
YAML
k wait --for=condition=Ready pod -l ray.io/node-type=head --timeout=180s >/dev/null ||
	fail "the head is not Ready: $(k get pods -o wide 2>&1)"
HEAD=$(k get pod -l ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
expect_eq "auto" "$(k get pod "$HEAD" -o jsonpath='{.spec.serviceAccountName}')" "the head's service account"
i=0
until k logs "$HEAD" -c autoscaler 2>/dev/null | grep -q "Starting the autoscaler"; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "Ray's autoscaler did not start: $(k logs "$HEAD" -c autoscaler --tail=20 2>&1)"
	sleep 0.2
done
i=0
until k logs "$HEAD" -c autoscaler 2>/dev/null | grep -q "Fetched pod data at resource version"; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "Ray's autoscaler lists no pods: $(k logs "$HEAD" -c autoscaler --tail=20 2>&1)"
	sleep 0.2
done
pass "the sidecar runs Ray's autoscaler, which lists the cluster's pods through the API with the head's token"

# The container's limits, as Ray reads them (cgroup v1 or v2).
lim=$(k exec "$HEAD" -c ray-head -- sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max')
expect_eq 2147483648 "$lim" "the memory limit the head's container reads"
osm=$(k exec "$HEAD" -c ray-head -- python -c '
import ray; ray.init(); print("OSM", int(ray.cluster_resources()["object_store_memory"]))' 2>&1 | sed -n 's/^OSM //p')
[ -n "$osm" ] && [ "$osm" -gt 0 ] && [ "$osm" -lt 1073741824 ] ||
	fail "the head's object store: '$osm' bytes (its limit is 2Gi)"
expect_eq 65536 "$(k exec "$HEAD" -c ray-head -- df -k /dev/shm | awk 'NR==2 {print $2}')" "/dev/shm's size (KiB)"
wait_event "$HEAD" SharedMemory "Container ray-head runs Ray with /dev/shm of 64Mi"
k get events --field-selector "involvedObject.name=$HEAD,reason=SharedMemory" -o jsonpath='{.items[*].message}' |
	grep -q "Container autoscaler" && fail "a SharedMemory event about the autoscaler sidecar"
pass "Ray sees its container's limits: memory.limit 2Gi, object store $osm bytes; /dev/shm 64Mi, said in an event"

# Demand from real tasks: two one-CPU tasks on a head with no CPU.
t0=$(date +%s)
out=$(timeout 240 kubectl exec "$HEAD" -c ray-head -- python -c '
import ray, socket, time
ray.init()
@ray.remote(num_cpus=1)
def where():
    time.sleep(1)
    return socket.gethostname()
print("ON", " ".join(sorted(ray.get([where.remote() for _ in range(2)]))))
' 2>&1) || fail "the tasks did not run: $out"
t1=$(date +%s)
hosts=$(echo "$out" | sed -n 's/^ON //p')
case "$hosts" in
auto-small-worker-?????" "auto-small-worker-?????) ;;
*) fail "the tasks ran on: '$hosts' ($out)" ;;
esac
expect_eq 2 "$(k get raycluster auto -o jsonpath='{.spec.workerGroupSpecs[0].replicas}')" "replicas"
grep -q "autoscaler default/auto: group small" "$WORK/volrayd.log" &&
	fail "volray's own autoscaler scaled the real cluster"
k logs "$HEAD" -c autoscaler | grep -q "Submitting a scale request" ||
	fail "no scale request in Ray's autoscaler's log"
pass "two one-CPU tasks brought up two workers by Ray's autoscaler, and ran there ($((t1 - t0)) s)"

# Ray's session logs of every node, through the head's log API.
vr ray log auto --out-dir "$WORK/logs" >"$WORK/raylog.out" || fail "volray ray log: $(cat "$WORK/raylog.out")"
for d in "$WORK/logs/auto/$HEAD" $(for h in $hosts; do echo "$WORK/logs/auto/$h"; done); do
	[ -s "$d/ray/raylet.out" ] || fail "no raylet.out in $d/ray: $(ls "$d" "$d/ray" 2>&1 | tr '\n' ' ')"
done
[ -s "$WORK/logs/auto/$HEAD/ray/gcs_server.out" ] || fail "no gcs_server.out of the head"
[ -s "$WORK/logs/auto/$HEAD/ray-head.log" ] || fail "no container log of the head"
pass "volray ray log wrote each node's container logs and Ray session logs (raylet.out, gcs_server.out)"

# Idle past idleTimeoutSeconds: Ray's autoscaler takes them away.
k wait --for=delete pod -l ray.io/node-type=worker --timeout=180s >/dev/null 2>&1 ||
	fail "the idle workers are still there: $(k get pods 2>&1)"
t2=$(date +%s)
expect_eq 0 "$(k get raycluster auto -o jsonpath='{.spec.workerGroupSpecs[0].replicas}')" "replicas after idle"
del=$(k get raycluster auto -o jsonpath='{.spec.workerGroupSpecs[0].scaleStrategy.workersToDelete}')
for h in $hosts; do
	expect_contains "$del" "$h" "workersToDelete"
done
pass "the idle workers went after idleTimeoutSeconds ($((t2 - t1)) s after the tasks ended), named in workersToDelete"

k delete raycluster auto >/dev/null
k wait --for=delete "pod/$HEAD" --timeout=60s >/dev/null 2>&1 || fail "the head pod is still there"
pass "the cluster is gone"
