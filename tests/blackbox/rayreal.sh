#!/bin/sh
# Real Ray on the local node (volrayd(8), "REAL RAY"): with an install of
# Ray 2.52.0 (scripts/ray.sh) and as root, the pod network is on
# (--pod-network auto) and the local Node lists the install in
# status.images. A RayCluster of image rayproject/ray:2.52.0, a head and a
# worker, runs KubeRay's `ray start` commands with that Ray, each pod at
# its own IP; KubeRay's probes (which the controller adds) make it Ready
# when Ray is, and the worker's wait-gcs-ready init container waits for
# the head's GCS; ray.nodes() and ray status see both nodes; the
# dashboard the API's service proxy reaches is real Ray's (no emulated
# head). A RayJob in HTTPMode runs tasks on both nodes and an actor, its
# logs read through the dashboard and volray rayjob logs; in K8sJobMode
# and in SidecarMode the submitters run Ray's own `ray job submit` (to
# the head Service by DNS name, or beside Ray in the head pod); KubeRay's
# quick start works verbatim (kubectl port-forward svc/real-head-svc then
# Ray's ray job submit from this machine). Deleting the cluster leaves
# no Ray process and no /tmp of its pods, nor does stopping volrayd. A
# pod whose image names a Ray not installed waits with ErrImagePull and
# says how to install it; a pod's port that nothing serves is the pod
# proxy's 503. Skips (77) without the install or as non-root. Prints the
# head's apply-to-ready time and its processes' RSS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clilib.sh"
LOCAL_NODE=1
REAL_RAY=1
RAY_DIR=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
[ -x "$RAY_DIR/2.52.0/bin/ray" ] ||
	skip "no Ray 2.52.0 in $RAY_DIR (scripts/ray.sh installs it)"
[ "$(id -u)" = 0 ] || skip "not root: the local node's cgroups keep Ray's processes"
start_daemon --ray-dir "$RAY_DIR"
NODE=$(hostname | tr 'A-Z' 'a-z')

# job_done NAME WHAT MORE: until RayJob NAME is Complete (3 minutes at
# most; Failed ends it), then its Ray job SUCCEEDED; MORE is a command
# whose output the failure shows.
job_done() {
	i=0
	while :; do
		st=$(k get rayjob "$1" -o jsonpath='{.status.jobDeploymentStatus}')
		[ "$st" != Complete ] || break
		i=$((i + 1))
		[ $i -lt 900 ] && [ "$st" != Failed ] ||
			fail "the $2 RayJob is $st: $(k get rayjob "$1" -o jsonpath='{.status.message}'); $($3 2>&1)"
		sleep 0.2
	done
	expect_eq SUCCEEDED "$(k get rayjob "$1" -o jsonpath='{.status.jobStatus}')" "the $2 job's status"
}

# The Node's images: the install under the names that map to it.
imgs=$(k get node "$NODE" -o jsonpath='{range .status.images[*]}{.names}{" "}{.sizeBytes}{"\n"}{end}')
expect_contains "$imgs" '"rayproject/ray:2.52.0"' "status.images"
expect_contains "$imgs" '"rayproject/ray-ml:2.52.0-cpu"' "status.images (ray-ml)"
size=$(k get node "$NODE" -o jsonpath='{.status.images[0].sizeBytes}')
[ "$size" -gt 100000000 ] || fail "the install's sizeBytes: $size"
pass "the local Node lists Ray 2.52.0 in status.images ($size bytes)"

# A Ray that is not installed: the container waits as an unpullable image.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: old}
spec:
  nodeName: $NODE
  containers:
  - {name: ray, image: "rayproject/ray:2.0.1-py310", command: [ray, start, --head, --block]}
YAML
wait_eq ErrImagePull "the missing Ray's reason" \
	k get pod old -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}'
msg=$(k get pod old -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')
expect_contains "$msg" "Ray 2.0.1 is not installed on the local node" "the waiting message"
expect_contains "$msg" "scripts/ray.sh 2.0.1" "the waiting message"
wait_event old Failed "Failed to pull image \"rayproject/ray:2.0.1-py310\": Ray 2.0.1 is not installed"
expect_eq 0 "$(k get pod old -o jsonpath='{.status.containerStatuses[0].restartCount}')" "restartCount"
k delete pod old --wait=false >/dev/null
pass "rayproject/ray:2.0.1-py310 waits with ErrImagePull and how to install it"

# A local pod's port that nothing serves: kube-apiserver's 503.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: quiet}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: busybox, command: [sleep, "600"]}
YAML
k wait --for=condition=Ready pod/quiet --timeout=20s >/dev/null || fail "pod quiet"
QPORT=$(free_port)
out=$(k get --raw "/api/v1/namespaces/default/pods/quiet:$QPORT/proxy/" 2>&1) &&
	fail "a port nothing serves answered: $out"
QIP=$(k get pod quiet -o jsonpath='{.status.podIP}')
expect_contains "$out" "dial tcp $QIP:$QPORT: connect: connection refused" "the pod proxy"
k delete pod quiet --wait=false >/dev/null
pass "the pod proxy to a local port nothing serves: 503, connection refused"

# A head-only cluster, kept small; the controller gives it KubeRay's own
# probes of a Ray head (Ray before 2.53: wget of the raylet's and the
# GCS's health), so that it is Ready when Ray is.
probe='wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success && wget --tries 1 -T 10 -q -O- http://localhost:8265/api/gcs_healthz | grep success'
t0=$(date +%s)
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: real}
spec:
  rayVersion: "2.52.0"
  enableInTreeAutoscaling: true
  headGroupSpec:
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $NODE
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
  workerGroupSpecs:
  - groupName: w
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $NODE
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
YAML
i=0
until [ "$(k get raycluster real -o jsonpath='{.status.state}')" = ready ]; do
	i=$((i + 1))
	[ $i -lt 900 ] || fail "the RayCluster is not ready after 180 s: $(k get pods -o wide 2>&1)"
	sleep 0.2
done
ready_s=$(($(date +%s) - t0))
HEAD=$(k get pods -l ray.io/cluster=real,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
expect_eq "$probe" "$(k get pod "$HEAD" -o jsonpath='{.spec.containers[0].readinessProbe.exec.command[2]}')" \
	"KubeRay's readiness probe of a head"
expect_eq "10 5 5 10" "$(k get pod "$HEAD" -o jsonpath='{.spec.containers[0].readinessProbe.initialDelaySeconds} {.spec.containers[0].readinessProbe.timeoutSeconds} {.spec.containers[0].readinessProbe.periodSeconds} {.spec.containers[0].readinessProbe.failureThreshold}')" \
	"the readiness probe's timing"
expect_eq "$RAY_DIR/2.52.0/bin/ray" "$(k exec "$HEAD" -c ray-head -- sh -c 'command -v ray')" "the pod's ray"
# KubeRay's autoscaler sidecar runs Ray's own autoscaler on the pod
# network (rayautoscalereal.sh), volray's ray while pods share the host's.
if grep -q "podnet: the node's namespace" "$WORK/volrayd.log"; then
	sidecar_ray=$RAY_DIR/2.52.0/bin/ray
else
	sidecar_ray=$top_builddir/libexec/ray
fi
expect_eq "$sidecar_ray" "$(k exec "$HEAD" -c autoscaler -- sh -c 'command -v ray')" \
	"the autoscaler sidecar's ray"
WORKER=$(k get pods -l ray.io/cluster=real,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')
expect_eq "wait-gcs-ready" "$(k get pod "$WORKER" -o jsonpath='{.spec.initContainers[0].name}')" \
	"KubeRay's init container of a worker"
HIP=$(k get pod "$HEAD" -o jsonpath='{.status.podIP}')
WIP=$(k get pod "$WORKER" -o jsonpath='{.status.podIP}')
[ -n "$HIP" ] && [ -n "$WIP" ] && [ "$HIP" != "$WIP" ] || fail "pod IPs: head $HIP, worker $WIP"
out=$(k exec "$HEAD" -c ray-head -- python -c 'import ray; ray.init(); print("nodes", sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]), ray.__version__)' 2>&1) ||
	fail "ray.init in the head: $out"
expect_contains "$out" "nodes $(python3 -c "print(sorted(['$HIP', '$WIP']))") 2.52.0" "ray.nodes() in the head"
out=$(k exec "$HEAD" -c ray-head -- ray status 2>&1) || fail "ray status: $out"
expect_contains "$out" "/2.0 CPU" "ray status"
expect_contains "$out" "1 headgroup" "ray status"
expect_contains "$out" "1 w" "ray status"
pass "RayCluster real ready with real Ray in ${ready_s} s: head $HIP and worker $WIP in ray.nodes()"

# The dashboard behind the head Service is real Ray's, not volrayd's.
ver=$(k get --raw "/api/v1/namespaces/default/services/real-head-svc:8265/proxy/api/version")
expect_contains "$ver" '"ray_version": "2.52.0"' "the dashboard's /api/version"
grep -q "ray: default/$HEAD: dashboard on" "$WORK/volrayd.log" &&
	fail "volrayd emulated the head's dashboard"
pass "the service proxy reaches real Ray's dashboard; no emulated head"

# The head's Ray processes: how much memory one Ray node takes.
HUID=$(k get pod "$HEAD" -o jsonpath='{.metadata.uid}')
UID8=$(echo "$HUID" | cut -c1-8)
ray_pids() {
	for c in /proc/[0-9]*/cgroup; do
		grep -q "/$HUID/ray-head\$" "$c" 2>/dev/null &&
			{ p=${c#/proc/}; echo "${p%/cgroup}"; }
	done
	return 0
}
rss=0 n=0
for p in $(ray_pids); do
	kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$p/status" 2>/dev/null)
	[ -z "$kb" ] || { rss=$((rss + kb)); n=$((n + 1)); }
done
[ $n -gt 3 ] || fail "found $n Ray processes of the head"
echo "note: the head's Ray: $n processes, $((rss / 1024)) MiB RSS in all; ready in ${ready_s} s"

# A RayJob in HTTPMode on that cluster: tasks and an actor.
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: sq}
spec:
  submissionMode: HTTPMode
  clusterSelector: {ray.io/cluster: real}
  entrypoint: |
    python -c '
    import ray
    ray.init()
    @ray.remote
    def sq(x): return x * x
    @ray.remote(num_cpus=1)
    def where():
        import time
        time.sleep(1)
        return ray.get_runtime_context().get_node_id()
    @ray.remote(num_cpus=0)
    class Sum:
        def __init__(self): self.n = 0
        def add(self, k):
            self.n += k
            return self.n
    s = Sum.remote()
    print("squares", sum(ray.get([sq.remote(i) for i in range(10)])))
    print("actor", ray.get([s.add.remote(i) for i in range(5)])[-1])
    print("spread over", len(set(ray.get([where.remote() for _ in range(4)]))), "nodes")
    '
YAML
job_done sq HTTPMode "k get rayjob sq -o jsonpath={.status}"
id=$(k get rayjob sq -o jsonpath='{.status.jobId}')
logs=$(k get --raw "/api/v1/namespaces/default/services/real-head-svc:8265/proxy/api/jobs/$id/logs")
expect_contains "$logs" "squares 285" "the job's logs (tasks)"
expect_contains "$logs" "actor 10" "the job's logs (actor)"
expect_contains "$logs" "spread over 2 nodes" "the job's logs (tasks on both nodes)"
logs=$(vr rayjob logs sq 2>&1) || fail "volray rayjob logs: $logs"
expect_contains "$logs" "squares 285" "volray rayjob logs"
pass "a RayJob in HTTPMode ran tasks over both nodes and an actor on real Ray"

# K8sJobMode: the submitter Job runs Ray's own `ray job submit` to the
# head Service by its DNS name, over the pod network.
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: sqk}
spec:
  clusterSelector: {ray.io/cluster: real}
  entrypoint: |-
    python -c '
    import ray
    ray.init()
    @ray.remote
    def inc(x): return x + 1
    print("k8s job", sum(ray.get([inc.remote(i) for i in range(4)])))
    '
YAML
job_done sqk K8sJobMode "k logs -l job-name=sqk --tail=20"
SUB=$(k get pods -l job-name=sqk -o jsonpath='{.items[0].metadata.name}')
out=$(k logs "$SUB")
expect_contains "$out" "k8s job 10" "the submitter's log"
expect_contains "$out" "Job submission server address" "the submitter's log (Ray's own ray job)"
expect_contains "$out" "Job '$(k get rayjob sqk -o jsonpath='{.status.jobId}')' succeeded" "the submitter's log"
pass "a RayJob in K8sJobMode: its submitter ran Ray's ray job submit to the head Service"

# SidecarMode: a head of its own whose submitter container, beside Ray in
# the head pod's network, runs Ray's ray job submit to 127.0.0.1:8265.
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: side}
spec:
  submissionMode: SidecarMode
  entrypoint: |-
    python -c "import ray; ray.init(); print('sidecar job', ray.get(ray.remote(lambda: 6 * 7).remote()))"
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
      template:
        spec:
          nodeName: $NODE
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
YAML
job_done side SidecarMode "k get pods -o wide"
SH=$(k get pods -l ray.io/cluster="$(k get rayjob side -o jsonpath='{.status.rayClusterName}')",ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
# The RayJob is Complete once the Ray job is; the sidecar then prints the
# job's last logs and ends.
wait_eq Completed "the sidecar's end" k get pod "$SH" \
	-o jsonpath='{.status.containerStatuses[?(@.name=="ray-job-submitter")].state.terminated.reason}'
out=$(k logs "$SH" -c ray-job-submitter)
expect_contains "$out" "sidecar job 42" "the sidecar's log"
expect_contains "$out" "Job submission server address" "the sidecar's log (Ray's own ray job)"
k delete rayjob side --wait=false >/dev/null
pass "a RayJob in SidecarMode: the head's submitter ran Ray's ray job submit beside it"

# KubeRay's quick start, verbatim: port-forward the head Service's
# dashboard, then Ray's own `ray job submit` from this machine.
LP=$(free_port)
k port-forward svc/real-head-svc "$LP:8265" >"$WORK/pf.out" 2>&1 &
PF=$!
wait_eq yes "the port-forward" sh -c "curl -fs http://127.0.0.1:$LP/api/version >/dev/null && echo yes"
out=$("$RAY_DIR/2.52.0/bin/ray" job submit --address "http://127.0.0.1:$LP" -- \
	python -c 'import ray; ray.init(); print("quick start", ray.cluster_resources()["CPU"])' 2>&1) ||
	fail "ray job submit through port-forward: $out"
expect_contains "$out" "quick start 2.0" "ray job submit through port-forward"
kill $PF 2>/dev/null; wait $PF 2>/dev/null || true
pass "kubectl port-forward svc/real-head-svc then ray job submit: KubeRay's quick start"

# Deleting the cluster leaves no Ray process.
k delete raycluster real >/dev/null
k wait --for=delete "pod/$HEAD" --timeout=60s >/dev/null 2>&1 ||
	fail "the head pod is still there"
i=0
while [ -n "$(ray_pids)" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "Ray processes left: $(ray_pids | tr '\n' ' ')"
	sleep 0.1
done
wait_eq gone "the head's /tmp" sh -c "test -e /tmp/volray-ray/$UID8 || echo gone"
pass "deleting the RayCluster left no Ray process, and no session in /tmp"

# volrayd stopping kills its containers: their Ray sessions go too.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: last}
spec:
  nodeName: $NODE
  containers:
  - {name: ray, image: "rayproject/ray:2.52.0", command: [sh, -c, 'touch /tmp/mine; exec sleep 600']}
YAML
k wait --for=condition=Ready pod/last --timeout=20s >/dev/null || fail "pod last"
LAST=$(k get pod last -o jsonpath='{.metadata.uid}' | cut -c1-8)
wait_eq yes "pod last's /tmp" sh -c "test -e /tmp/volray-ray/$LAST/mine && echo yes"
stop_daemon
[ ! -e "/tmp/volray-ray/$LAST" ] || fail "/tmp/volray-ray/$LAST outlived volrayd"
pass "volrayd stopped: no Ray session left in /tmp"
