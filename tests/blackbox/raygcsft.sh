#!/bin/sh
# GCS fault tolerance with real Ray on the local node (volrayd(8), "REAL
# RAY"): Debian's redis-server runs as a pod behind a Service `redis`, as
# in KubeRay's ray-cluster.external-redis.yaml, and a RayCluster of
# rayproject/ray:2.52.0 (head + 1 worker) keeps its GCS there through
# gcsFaultToleranceOptions (RAY_REDIS_ADDRESS=redis:6379 and the
# password's Secret). A detached actor keeps a counter and a job runs;
# the head pod is killed: the controller makes a new head, whose GCS
# reloads the tables from Redis; the worker's raylet (the same node, not
# restarted) reconnects to it, the actor answers with its counter kept,
# and the job table still lists the job. Deleting the cluster runs the
# Redis cleanup Job to completion: no key of the cluster's storage
# namespace is left, nor any Ray process. Redis down, meanwhile: a
# second fault-tolerant cluster on a Redis whose pod was deleted first
# has a head that is never ready, and the RayCluster says why
# (HeadPodReady, a RedisUnavailable event); the daemon keeps answering;
# deleting that cluster ends (its cleanup Job fails after Ray's retries,
# and the finalizer goes as KubeRay's does, with a RedisCleanupJobFailed
# event) with no Ray process left. Three Ray nodes at most at once.
# Skips (77) without Ray 2.52.0, as non-root, or without redis-server.
# Prints the time the controller took to replace the killed head, the
# new head's time to ready, and how long the deletion without Redis took.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
REAL_RAY=1
RAY_DIR=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
[ -x "$RAY_DIR/2.52.0/bin/ray" ] ||
	skip "no Ray 2.52.0 in $RAY_DIR (scripts/ray.sh installs it)"
[ "$(id -u)" = 0 ] || skip "not root: real Ray pods need their own network namespaces"
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
	skip "no redis-server and redis-cli (Debian's redis-server; scripts/deps.sh installs it)"
start_daemon --ray-dir "$RAY_DIR"
NODE=$(hostname | tr 'A-Z' 'a-z')
PW=5241590000000000

# Every pod uid the test saw of a Ray cluster; ray_pids lists the
# processes in those pods' cgroups.
UIDS=""
note_uids() {	# note_uids SELECTOR
	for u in $(k get pods -l "$1" -o jsonpath='{.items[*].metadata.uid}'); do
		case " $UIDS " in *" $u "*) ;; *) UIDS="$UIDS $u" ;; esac
	done
}
ray_pids() {
	[ -n "$UIDS" ] || return 0
	grep -lE "/($(echo $UIDS | tr ' ' '|'))/" /proc/[0-9]*/cgroup 2>/dev/null |
		sed 's|^/proc/\([0-9]*\)/cgroup$|\1|'
	return 0
}
no_ray_left() {	# no_ray_left WHAT
	_i=0
	while [ -n "$(ray_pids)" ]; do
		_i=$((_i + 1))
		[ $_i -lt 150 ] || fail "$1: Ray processes left: $(for p in $(ray_pids); do tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-80; echo; done)"
		sleep 0.2
	done
}
rcli() {
	k exec redis -- redis-cli --no-auth-warning -a "$PW" "$@"
}
head_pod() {
	k get pods -l "ray.io/cluster=$1,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name}'
}
pod_ready() {
	[ "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
# in_head POD PYTHON: a Python program run by the head's Ray.
in_head() {
	k exec "$1" -c ray-head -- python -c "$2"
}

# redis_pod NAME: Debian's redis-server as pod NAME behind a Service NAME
# (the sample's Redis, with its password), Ready when it answers.
redis_pod() {
	k apply -f - >/dev/null <<YAML || fail "create Redis $1"
apiVersion: v1
kind: Service
metadata: {name: $1, labels: {app: $1}}
spec:
  selector: {app: $1}
  ports: [{name: redis, port: 6379}]
---
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  nodeName: $NODE
  containers:
  - name: redis
    image: redis:7.4.0
    command: [redis-server, --port, "6379", --bind, 0.0.0.0, --protected-mode, "no",
      --save, "", --appendonly, "no", --requirepass, "$PW"]
    ports: [{containerPort: 6379, name: redis}]
    readinessProbe:
      exec: {command: [redis-cli, --no-auth-warning, -a, "$PW", ping]}
      periodSeconds: 1
YAML
}
k apply -f - >/dev/null <<YAML || fail "create the Secret"
apiVersion: v1
kind: Secret
metadata: {name: redis-password-secret}
type: Opaque
data: {password: NTI0MTU5MDAwMDAwMDAwMA==}
YAML
redis_pod redis
redis_pod redis-b
for r in redis redis-b; do
	k wait --for=condition=Ready "pod/$r" --timeout=30s >/dev/null ||
		fail "the $r pod is not ready: $(k get pod "$r" -o jsonpath='{.status}')"
done
expect_eq PONG "$(rcli ping)" "redis-cli ping"
# The second one goes down before its cluster comes.
k delete pod redis-b --grace-period=0 --force >/dev/null 2>&1 || fail "delete the redis-b pod"
k wait --for=delete pod/redis-b --timeout=30s >/dev/null || fail "the redis-b pod is still there"
pass "redis-server runs as pod redis behind Service redis; redis-b is down"

# cluster NAME REDIS WORKERS: a GCS fault-tolerant RayCluster, as the
# sample's but small.
cluster() {
	k apply -f - >/dev/null <<YAML || fail "create RayCluster $1"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $1}
spec:
  rayVersion: "2.52.0"
  gcsFaultToleranceOptions:
    redisAddress: "$2:6379"
    redisPassword: {valueFrom: {secretKeyRef: {name: redis-password-secret, key: password}}}
  headGroupSpec:
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $NODE
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
  workerGroupSpecs:
  - groupName: small
    replicas: $3
    minReplicas: 0
    maxReplicas: 1
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $NODE
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
YAML
}

# Both clusters at once (three Ray nodes at most: ft's head and worker,
# down's head, which never starts its GCS); the Redis cleanup Job of
# down, which fails only after Ray's two minutes of retries, runs while
# ft is tested.
t0=$(date +%s)
cluster ft redis 1
cluster down redis-b 0

# --- Redis down: the head waits, and the cluster says why -------------------
i=0
until HD=$(head_pod down 2>/dev/null) && [ -n "$HD" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no head pod for RayCluster down"
	sleep 0.2
done
note_uids ray.io/cluster=down
why="Head Pod $HD is not ready: GCS fault tolerance's Redis redis-b:6379: Service default/redis-b has no ready endpoint"
wait_eq "HeadPodNotReady|$why" "down's HeadPodReady" \
	k get raycluster down -o jsonpath='{.status.conditions[?(@.type=="HeadPodReady")].reason}|{.status.conditions[?(@.type=="HeadPodReady")].message}'
wait_event down RedisUnavailable "$why"

# --- a fault-tolerant cluster ----------------------------------------------
i=0
until [ "$(k get raycluster ft -o jsonpath='{.status.state}')" = ready ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "RayCluster ft is not ready after 120 s: $(k get pods -o wide 2>&1)"
	sleep 0.2
done
ready_s=$(($(date +%s) - t0))
note_uids ray.io/cluster=ft
UID_FT=$(k get raycluster ft -o jsonpath='{.metadata.uid}')
HEAD=$(head_pod ft)
WORKER=$(k get pods -l ray.io/cluster=ft,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')
expect_eq "ray.io/gcs-ft-redis-cleanup-finalizer" "$(k get raycluster ft -o jsonpath='{.metadata.finalizers[*]}')" \
	"the cluster's finalizer"
# GCS keeps its tables in Redis under the storage namespace (the uid).
key="RAY${UID_FT}@KV"
expect_contains "$(rcli hget "$key" "@namespace_session:session_name")" "session_" "the session name in Redis"
# Both nodes; the worker's is the one without the head's resource.
nodes='
import ray
ray.init()
for n in ray.nodes():
    print("node", n["NodeID"], "alive" if n["Alive"] else "dead",
          "head" if "node:__internal_head__" in n["Resources"] else "worker")
'
ts=$(date +%s)
out=$(in_head "$HEAD" "$nodes" 2>&1) || fail "ray.nodes() in the head: $out (after $(($(date +%s) - ts)) s; $(k get pods -o wide; k get pod "$HEAD" -o jsonpath='{.status}'))"
WNODE=$(echo "$out" | sed -n 's/^node \([0-9a-f]*\) alive worker$/\1/p')
[ -n "$WNODE" ] && [ "$(echo "$out" | grep -c ' alive ')" = 2 ] ||
	fail "ray.nodes(): want a head and a worker alive, got: $out"
pass "RayCluster ft ready on GCS FT in ${ready_s} s; its session in Redis under $key; worker node $WNODE"

# Meanwhile down's head is still not ready: its GCS retries Redis.
expect_eq "Running False" "$(k get pod "$HD" -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Ready")].status}')" \
	"down's head"
expect_contains "$(k logs "$HD" -c ray-head 2>&1)" "Failed to connect to Redis" "down's head's log"
expect_eq "" "$(k get raycluster down -o jsonpath='{.status.state}')" "down's state"
t1=$(date +%s)
k get rayclusters,pods >/dev/null || fail "kubectl get while a head waits for Redis"
[ $(($(date +%s) - t1)) -le 3 ] || fail "kubectl get took $(($(date +%s) - t1)) s"
w0=$(watchers)
# (kubectl itself: k's request timeout would end the watch in 20 s)
kubectl get jobs -l ray.io/node-type=redis-cleanup --watch \
	-o jsonpath='{.metadata.name} {.status.conditions[*].type}{"\n"}' >"$WORK/cleanup.watch" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
wait_watchers $((w0 + 1))
k delete raycluster down --wait=false >/dev/null || fail "delete RayCluster down"
t_down=$(date +%s)
pass "Redis down: down's head not ready, HeadPodReady and a RedisUnavailable event say why; the API answers"

# A detached actor on the worker, holding a counter at 3.
out=$(in_head "$HEAD" "
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init(namespace='ft')
@ray.remote(num_cpus=0)
class Counter:
    def __init__(self): self.n = 0
    def inc(self):
        self.n += 1
        return self.n
c = Counter.options(name='counter', lifetime='detached',
    scheduling_strategy=NodeAffinitySchedulingStrategy('$WNODE', soft=False)).remote()
for _ in range(3): v = ray.get(c.inc.remote())
print('counter', v)
" 2>&1) || fail "the detached actor: $out"
expect_contains "$out" "counter 3" "the detached actor's counter"
# A job, through the dashboard's Jobs API behind the head Service.
JOBS=/api/v1/namespaces/default/services/ft-head-svc:8265/proxy/api/jobs/
out=$(curl -fsS -X POST -H 'Content-Type: application/json' "$API$JOBS" \
	-d '{"entrypoint": "python -c \"print(6 * 7)\"", "submission_id": "ft-job"}' 2>&1) ||
	fail "submit a job: $out"
job_status() {
	k get --raw "${JOBS}ft-job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'
}
i=0
until [ "$(job_status 2>/dev/null)" = SUCCEEDED ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "the job is $(job_status 2>&1), not SUCCEEDED"
	sleep 0.2
done
pass "a detached actor on the worker counts to 3; job ft-job SUCCEEDED"

# --- the head dies ----------------------------------------------------------
WRESTARTS=$(k get pod "$WORKER" -o jsonpath='{.status.containerStatuses[0].restartCount}')
now() { python3 -c 'import time; print(time.time())'; }
since() { python3 -c "import time; print('%.1f' % (time.time() - $1))"; }
t0=$(now)
k delete pod "$HEAD" --grace-period=0 --force >/dev/null 2>&1 || fail "kill the head pod"
i=0
until H2=$(head_pod ft 2>/dev/null) && [ -n "$H2" ] && [ "$H2" != "$HEAD" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "no new head 60 s after the head was killed"
	sleep 0.1
done
detect_s=$(since "$t0")
i=0
until pod_ready "$H2"; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the new head $H2 is not ready after 120 s: $(k get pod "$H2" -o jsonpath='{.status}')"
	sleep 0.2
done
restart_s=$(since "$t0")
note_uids ray.io/cluster=ft
echo "note: the killed head replaced by $H2 in ${detect_s} s; the new head ready ${restart_s} s after the kill"

# The worker's raylet joined the new GCS: the same node, alive, its pod
# not restarted.
i=0
until out=$(in_head "$H2" "$nodes" 2>&1) && echo "$out" | grep -q "^node $WNODE alive worker\$"; do
	i=$((i + 1))
	[ $i -lt 30 ] || fail "the worker node $WNODE is not alive on the new head: $out"
	sleep 1
done
expect_eq "$WORKER $WRESTARTS" \
	"$(k get pods -l ray.io/cluster=ft,ray.io/node-type=worker -o jsonpath='{.items[*].metadata.name} {.items[*].status.containerStatuses[0].restartCount}')" \
	"the worker pod and its restarts"
out=$(in_head "$H2" "
import ray
ray.init(namespace='ft')
c = ray.get_actor('counter')
print('counter', ray.get(c.inc.remote()))
" 2>&1) || fail "the detached actor after the head loss: $out"
expect_contains "$out" "counter 4" "the detached actor's counter after the head loss"
list=$(k get --raw "$JOBS")
expect_contains "$list" '"submission_id": "ft-job"' "the job table after the head loss"
expect_eq SUCCEEDED "$(job_status)" "the job's status after the head loss"
pass "new head $H2: worker node $WNODE reconnected, the actor's counter kept (4), the job listed"

# --- deletion: the Redis cleanup Job ----------------------------------------
[ -n "$(rcli --scan --pattern "RAY${UID_FT}@*")" ] || fail "no keys of $UID_FT in Redis before the deletion"
k delete raycluster ft --wait=false >/dev/null || fail "delete RayCluster ft"
i=0
while k get raycluster ft >/dev/null 2>&1; do
	note_uids ray.io/cluster=ft
	i=$((i + 1))
	[ $i -lt 300 ] || fail "RayCluster ft is still there 60 s after its deletion: $(k get raycluster ft -o yaml)"
	sleep 0.2
done
grep -q "^ft-redis-cleanup .*Complete" "$WORK/cleanup.watch" ||
	fail "ft's cleanup Job did not complete before the cluster went: $(cat "$WORK/cleanup.watch")"
expect_eq "" "$(rcli --scan --pattern "RAY${UID_FT}@*")" "the storage namespace's keys left in Redis"
no_ray_left "after deleting RayCluster ft"
pass "deleting ft: the cleanup Job emptied RAY${UID_FT}@* in Redis; no Ray process left"

# --- down's deletion ends: its cleanup Job fails, the finalizer goes ---------
i=0
while k get raycluster down >/dev/null 2>&1; do
	note_uids ray.io/cluster=down
	note_uids job-name=down-redis-cleanup
	i=$((i + 1))
	[ $i -lt 1000 ] || fail "RayCluster down is still there 200 s after its deletion: $(cat "$WORK/cleanup.watch"; k get raycluster down -o yaml)"
	sleep 0.2
done
echo "note: deleting down took $(($(date +%s) - t_down)) s (its head's grace period, then the cleanup Job's retries)"
grep -q "^down-redis-cleanup .*Failed" "$WORK/cleanup.watch" ||
	fail "down's cleanup Job did not fail before the cluster went: $(cat "$WORK/cleanup.watch")"
wait_event down RedisCleanupJobFailed "Redis cleanup Job default/down-redis-cleanup failed (BackoffLimitExceeded)"
no_ray_left "after deleting RayCluster down"
t1=$(date +%s)
k get rayclusters,pods >/dev/null || fail "kubectl get after down's deletion"
[ $(($(date +%s) - t1)) -le 3 ] || fail "kubectl get took $(($(date +%s) - t1)) s"
pass "deleting down: its cleanup Job failed, the finalizer went with a RedisCleanupJobFailed event; no Ray process left"
