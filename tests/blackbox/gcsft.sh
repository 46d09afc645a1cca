#!/bin/sh
# GCS fault tolerance and head recovery (issue 24; lua/lib/raygcsft.lua,
# core/ray/gcsstore.c, core/ray/raylet.c) on simulated nodes, with a real
# redis-server and redis-cli, and stock kubectl:
# - gcsFaultToleranceOptions puts KubeRay's annotations, env and
#   rayStartParams on the head and the reconnect timeout on workers, and
#   the cluster carries the Redis cleanup finalizer; the head's job table
#   is in Redis under RAY<storage namespace>@KV;
# - the embedded backend (rocksdb): the claim, env and volume KubeRay
#   makes, and a new head recovers the jobs from the claim's storage;
# - the head pod deleted: a new head recovers the jobs from Redis; a job
#   whose driver ran on a worker is still RUNNING and then SUCCEEDED, one
#   whose driver ran on the head FAILED ("failed to get job supervisor");
#   the workers are kept (no restart);
# - without fault tolerance a new head is a new cluster: its workers'
#   Ray containers restart and the old jobs are gone;
# - a K8sJobMode RayJob on a fault-tolerant cluster survives a head loss
#   (its submitter's retry follows the same job); a SidecarMode RayJob's
#   cluster gets no new head and the RayJob fails "Ray head pod not found.";
# - a RayService on GCS FT keeps its Serve applications (as deployed, not
#   deployed again) and ready serve endpoints through a head loss;
# - deleting the cluster runs KubeRay's cleanup Job, which empties the
#   storage namespace in Redis, then the finalizer goes;
# - KubeRay's validation: annotation and options together are refused.
. "$(dirname "$0")/lib.sh"
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
	skip "no redis-server/redis-cli (Debian's redis-server and redis-tools; scripts/deps.sh installs them)"

RPORT=$(free_port)
RPASS=volray-test-5241590000000000
mkdir -p "$WORK/redis"
redis-server --port "$RPORT" --bind 127.0.0.1 --requirepass "$RPASS" \
	--dir "$WORK/redis" --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
rcli() { redis-cli -p "$RPORT" -a "$RPASS" --no-auth-warning "$@"; }
i=0
until [ "$(rcli ping 2>/dev/null)" = PONG ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "redis-server did not start: $(cat "$WORK/redis.log")"
	sleep 0.1
done

start_daemon
"$top_builddir/volray" node add --virtual --count 6 --cpu 8 --memory 32Gi >/dev/null ||
	fail "volray node add"

# The Redis outside the cluster, as a Service without a selector.
k apply -f - >/dev/null <<YAML || fail "Redis Service, Endpoints, Secret"
apiVersion: v1
kind: Service
metadata: {name: redis}
spec:
  ports: [{name: redis, port: 6379, targetPort: $RPORT}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: redis}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: redis, port: $RPORT}]
---
apiVersion: v1
kind: Secret
metadata: {name: redis-password-secret}
stringData: {password: $RPASS}
YAML

# cluster NAME 'FT OPTIONS YAML (or {})' WORKERS [WORKER RECONNECT TIMEOUT]
cluster() {
	if [ "$2" = "{}" ]; then ft=""; else ft="  gcsFaultToleranceOptions: $2"; fi
	wenv="[]"
	[ -n "${4:-}" ] && wenv="[{name: RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S, value: \"$4\"}]"
	k apply -f - >/dev/null <<YAML || fail "create RayCluster $1"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $1}
spec:
  rayVersion: "2.52.0"
$ft
  headGroupSpec:
    rayStartParams: {num-cpus: "0"}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
          resources: {limits: {cpu: "1", memory: 2Gi}}
  workerGroupSpecs:
  - groupName: small
    replicas: $3
    minReplicas: 0
    maxReplicas: 4
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
          env: $wenv
          resources: {limits: {cpu: "2", memory: 4Gi}}
YAML
}
ready() { k get raycluster "$1" -o jsonpath='{.status.state}'; }
wait_ready() {
	i=0
	until [ "$(ready "$1")" = ready ]; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "RayCluster $1 not ready: $(k get raycluster "$1" -o yaml)"
		sleep 0.1
	done
}
head_pod() { k get pods -l "ray.io/cluster=$1,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name}'; }
# submit CLUSTER ID DURATION [ENTRYPOINT CPUS]
submit() {
	cpus=""
	[ -n "${4:-}" ] && cpus=", \"entrypoint_num_cpus\": $4"
	out=$(curl -fsS -X POST -H 'Content-Type: application/json' \
		"$API/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/" \
		-d "{\"entrypoint\": \"python work.py\", \"submission_id\": \"$2\",
		     \"metadata\": {\"volray.io/sim-duration\": \"$3\"}$cpus}") ||
		fail "submit $2 to $1: $out"
}
job_field() {	# job_field CLUSTER ID FIELD
	k get --raw "/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/$2" |
		python3 -c "import json,sys; print(json.load(sys.stdin)['$3'])"
}
wait_job() {	# wait_job CLUSTER ID STATUS
	i=0
	until [ "$(job_field "$1" "$2" status 2>/dev/null)" = "$3" ]; do
		i=$((i + 1)); [ $i -lt 400 ] || fail "job $2 on $1 is $(job_field "$1" "$2" status 2>&1), not $3"
		sleep 0.1
	done
}
restarts() {	# the workers' names and restart counts, "none" for no count
	k get pods -l "ray.io/cluster=$1,ray.io/node-type=worker" -o json | python3 -c 'import json,sys
out = []
for p in json.load(sys.stdin)["items"]:
    cs = p.get("status", {}).get("containerStatuses") or [{}]
    n = cs[0].get("restartCount")
    out.append("%s=%s" % (p["metadata"]["name"], n if isinstance(n, int) else "none"))
print(" ".join(sorted(out)))'
}
# all_restarted N 'name=count ...': N workers, each with a count of 1 or more.
all_restarted() {
	python3 - "$1" "$2" <<'PY'
import sys
ws = sys.argv[2].split()
sys.exit(0 if len(ws) == int(sys.argv[1]) and
         all(w.rpartition("=")[2].isdigit() and int(w.rpartition("=")[2]) >= 1 for w in ws) else 1)
PY
}

# --- a fault-tolerant cluster --------------------------------------------
cluster ft '{redisAddress: "redis:6379", redisPassword: {valueFrom: {secretKeyRef: {name: redis-password-secret, key: password}}}}' 2
wait_ready ft
uid=$(k get raycluster ft -o jsonpath='{.metadata.uid}')
expect_eq "ray.io/gcs-ft-redis-cleanup-finalizer" "$(k get raycluster ft -o jsonpath='{.metadata.finalizers[*]}')" "finalizer"
head=$(head_pod ft)
expect_eq true "$(k get pod "$head" -o jsonpath='{.metadata.annotations.ray\.io/ft-enabled}')" "head's ray.io/ft-enabled"
expect_eq "$uid" "$(k get pod "$head" -o jsonpath='{.metadata.annotations.ray\.io/external-storage-namespace}')" \
	"storage namespace (the cluster's uid)"
env=$(k get pod "$head" -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value}{.valueFrom.secretKeyRef.name} {end}')
expect_contains "$env" "RAY_REDIS_ADDRESS=redis:6379" "head env"
expect_contains "$env" "REDIS_PASSWORD=redis-password-secret" "head env"
expect_contains "$env" "RAY_external_storage_namespace=$uid" "head env"
expect_contains "$(k get pod "$head" -o jsonpath='{.spec.containers[0].args[0]}')" \
	'--redis-password=$REDIS_PASSWORD' "head's ray start"
wenv=$(k get pods -l ray.io/cluster=ft,ray.io/node-type=worker -o jsonpath='{.items[0].spec.containers[0].env}')
expect_contains "$wenv" '"name":"RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S","value":"600"' "worker's reconnect timeout"
pass "fault-tolerant RayCluster: finalizer, annotations, env, ray start"

submit ft on-worker 25s 1
submit ft on-head 25s
wait_job ft on-worker RUNNING
wait_job ft on-head RUNNING
key="RAY${uid}@KV"
expect_eq 1 "$(rcli hexists "$key" "@namespace_job:_ray_internal_job_info_on-worker")" "job table in Redis"
session=$(rcli hget "$key" "@namespace_session:session_name")
expect_contains "$session" "session_" "session name in Redis"
started=$(job_field ft on-worker start_time)
before=$(restarts ft)
case "$before" in *=0" "*=0) ;; *) fail "ft's two workers with their restart counts (0): '$before'" ;; esac
pass "the head's jobs are in Redis under $key"

k delete pod "$head" >/dev/null || fail "delete head pod"
i=0
while :; do
	h2=$(head_pod ft 2>/dev/null || true)
	[ -n "$h2" ] && [ "$h2" != "$head" ] && [ "$(ready ft)" = ready ] &&
		job_field ft on-worker status >/dev/null 2>&1 && break
	i=$((i + 1)); [ $i -lt 300 ] || fail "no new head serving after the head was deleted"
	sleep 0.1
done
expect_eq RUNNING "$(job_field ft on-worker status)" "job with its driver on a worker, after the head loss"
expect_eq "$started" "$(job_field ft on-worker start_time)" "the same job (start time)"
expect_eq FAILED "$(job_field ft on-head status)" "job with its driver on the head"
expect_contains "$(job_field ft on-head message)" "failed to get job supervisor" "its message"
expect_eq "$before" "$(restarts ft)" "workers kept, not restarted"
wait_job ft on-worker SUCCEEDED
pass "new head $h2 recovered the jobs from Redis; workers kept"

# --- the embedded backend: the tables on the head's claim -----------------------
cluster emb '{backend: rocksdb, storage: {size: 1Gi}}' 1
wait_ready emb
eh=$(head_pod emb)
expect_eq "emb-gcs-pvc|1Gi" "$(k get pvc emb-gcs-pvc -o jsonpath='{.metadata.name}|{.spec.resources.requests.storage}')" \
	"the embedded backend's claim"
expect_eq "RayCluster" "$(k get pvc emb-gcs-pvc -o jsonpath='{.metadata.ownerReferences[0].kind}')" "the claim's owner"
expect_eq "emb-gcs-pvc" "$(k get pod "$eh" -o jsonpath='{.spec.volumes[?(@.name=="gcs-storage")].persistentVolumeClaim.claimName}')" \
	"the head's gcs-storage volume"
expect_contains "$(k get pod "$eh" -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value} {end}')" \
	"RAY_gcs_storage=rocksdb RAY_gcs_storage_path=/data/gcs" "the head's env"
expect_eq "" "$(k get raycluster emb -o jsonpath='{.metadata.finalizers}')" "no Redis cleanup finalizer"
submit emb emb-job 25s 1
wait_job emb emb-job RUNNING
estart=$(job_field emb emb-job start_time)
k delete pod "$eh" >/dev/null || fail "delete the embedded head"
i=0
until h2=$(head_pod emb 2>/dev/null) && [ -n "$h2" ] && [ "$h2" != "$eh" ] &&
	[ "$(job_field emb emb-job status 2>/dev/null)" = RUNNING ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the embedded head did not recover its job: $(job_field emb emb-job status 2>&1)"
	sleep 0.1
done
expect_eq "$estart" "$(job_field emb emb-job start_time)" "the same job on the new head"
k delete raycluster emb --timeout=60s >/dev/null || fail "delete the embedded cluster"
k wait --for=delete pvc/emb-gcs-pvc --timeout=30s >/dev/null || fail "the claim outlived its cluster"
i=0
while [ -n "$(ls "$DATA/gcs-storage" 2>/dev/null)" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the embedded storage outlived its claim: $(ls "$DATA/gcs-storage")"
	sleep 0.1
done
pass "embedded backend: claim, env, volume; a new head recovers the job from the claim's storage"

# --- without fault tolerance: a new head is a new cluster ------------------
cluster plain '{}' 2 5
wait_ready plain
submit plain old-job 60s 1
wait_job plain old-job RUNNING
head=$(head_pod plain)
k delete pod "$head" >/dev/null || fail "delete plain head pod"
i=0
while :; do
	r=$(restarts plain)
	all_restarted 2 "$r" && break
	i=$((i + 1)); [ $i -lt 300 ] || fail "workers were not restarted after a head loss without FT: $r"
	sleep 0.1
done
wait_ready plain
code=$(curl -s -o /dev/null -w '%{http_code}' \
	"$API/api/v1/namespaces/default/services/plain-head-svc:8265/proxy/api/jobs/old-job")
expect_eq 404 "$code" "old job on the new head without FT"
pass "without FT the workers restart (raylets lost their cluster: $r) and the jobs are gone"

# ft_spec WORKERS: a fault-tolerant cluster spec, indented for a RayJob's
# rayClusterSpec or a RayService's rayClusterConfig.
ft_spec() {
	cat <<YAML
    gcsFaultToleranceOptions:
      redisAddress: "redis:6379"
      redisPassword: {valueFrom: {secretKeyRef: {name: redis-password-secret, key: password}}}
    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
      template:
        spec:
          containers:
          - {name: ray-head, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 2Gi}}}
    workerGroupSpecs:
    - groupName: small
      replicas: $1
      rayStartParams: {}
      template:
        spec:
          containers:
          - {name: ray-worker, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "2", memory: 4Gi}}}
YAML
}

# --- RayJobs across a head loss --------------------------------------------
k apply -f - >/dev/null <<YAML || fail "create RayJobs"
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: ftjob
  annotations: {volray.io/sim-duration: 20s}
spec:
  entrypoint: python work.py
  entrypointNumCpus: 1
  rayClusterSpec:
$(ft_spec 1)
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: sidejob
  annotations: {volray.io/sim-duration: 60s}
spec:
  entrypoint: python work.py
  submissionMode: SidecarMode
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - {name: ray-head, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 2Gi}}}
YAML
for j in ftjob sidejob; do
	k wait --for=jsonpath='{.status.jobStatus}'=RUNNING "rayjob/$j" --timeout=60s >/dev/null ||
		fail "RayJob $j not RUNNING: $(k get rayjob "$j" -o yaml)"
done
ftc=$(k get rayjob ftjob -o jsonpath='{.status.rayClusterName}')
sidec=$(k get rayjob sidejob -o jsonpath='{.status.rayClusterName}')
expect_eq true "$(k get raycluster "$sidec" -o jsonpath='{.metadata.annotations.ray\.io/disable-provisioned-head-restart}')" \
	"SidecarMode cluster's annotation"
ftstart=$(job_field "$ftc" "$(k get rayjob ftjob -o jsonpath='{.status.jobId}')" start_time)
k delete pod "$(head_pod "$ftc")" "$(head_pod "$sidec")" >/dev/null || fail "delete the RayJobs' heads"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Failed rayjob/sidejob --timeout=60s >/dev/null ||
	fail "SidecarMode RayJob did not fail: $(k get rayjob sidejob -o yaml)"
expect_eq "AppFailed|Ray head pod not found." \
	"$(k get rayjob sidejob -o jsonpath='{.status.reason}|{.status.message}')" "SidecarMode RayJob's reason"
expect_eq "" "$(head_pod "$sidec" 2>/dev/null || true)" "no new head for the SidecarMode cluster"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/ftjob --timeout=90s >/dev/null ||
	fail "K8sJobMode RayJob on an FT cluster did not complete: $(k get rayjob ftjob -o yaml)"
expect_eq SUCCEEDED "$(k get rayjob ftjob -o jsonpath='{.status.jobStatus}')" "its Ray job"
expect_eq "$ftstart" "$(job_field "$ftc" "$(k get rayjob ftjob -o jsonpath='{.status.jobId}')" start_time)" \
	"the same Ray job, followed again by the submitter's retry"
[ "$(k get job ftjob -o jsonpath='{.status.failed}')" -ge 1 ] ||
	fail "the submitter's first pod should have failed with its head: $(k get job ftjob -o yaml)"
pass "K8sJobMode RayJob survived the head loss on GCS FT; SidecarMode failed without a new head"

# --- a RayService on GCS FT keeps serving through a head loss ---------------
k apply -f - >/dev/null <<YAML || fail "create RayService"
apiVersion: ray.io/v1
kind: RayService
metadata: {name: ftsvc}
spec:
  serveConfigV2: |
    applications:
    - name: fruit
      import_path: fruit.deployment_graph
      route_prefix: /fruit
      deployments: [{name: FruitMarket, num_replicas: 1}]
  rayClusterConfig:
$(ft_spec 2)
YAML
k wait --for=condition=Ready rayservice/ftsvc --timeout=60s >/dev/null ||
	fail "RayService ftsvc not Ready: $(k get rayservice ftsvc -o jsonpath='{.status}')"
svcc=$(k get rayservice ftsvc -o jsonpath='{.status.activeServiceStatus.rayClusterName}')
apps() {
	k get --raw "/api/v1/namespaces/default/services/ftsvc-head-svc:8265/proxy/api/serve/applications/" |
		python3 -c 'import json,sys; a=json.load(sys.stdin)["applications"]["fruit"]; print(a["status"], a["last_deployed_time_s"])'
}
deployed=$(apps)
case "$deployed" in "RUNNING "*) ;; *) fail "fruit app: $deployed" ;; esac
w0=$(watchers)
k get endpoints ftsvc-serve-svc -w \
	-o jsonpath='n={range .subsets[*].addresses[*]}{.ip},{end}{"\n"}' >"$WORK/serve.watch" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
wait_watchers $((w0 + 1))
k delete pod "$(head_pod "$svcc")" >/dev/null || fail "delete the RayService's head"
i=0
until [ "$(apps 2>/dev/null)" = "$deployed" ] && [ "$(head_pod "$svcc")" != "" ] &&
	[ "$(k get pod "$(head_pod "$svcc")" -o jsonpath='{.status.phase}')" = Running ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the new head does not serve fruit as deployed before: $(apps 2>&1)"
	sleep 0.1
done
grep -q '^n=$' "$WORK/serve.watch" && fail "the serve Service had no ready endpoint during the head loss: $(cat "$WORK/serve.watch")"
expect_eq "$svcc" "$(k get rayservice ftsvc -o jsonpath='{.status.activeServiceStatus.rayClusterName}')" \
	"the RayService kept its cluster"
pass "RayService on GCS FT: Serve applications recovered as deployed, serve endpoints never empty"

# --- deletion: the Redis cleanup Job ---------------------------------------
[ -n "$(rcli --scan --pattern "RAY${uid}@*")" ] || fail "no keys of $uid in Redis before the deletion"
# The Job is the cluster's: it goes with it, so a watch sees it run.
w0=$(watchers)
k get jobs -l ray.io/node-type=redis-cleanup --watch \
	-o jsonpath='{.metadata.name} {.status.conditions[*].type}{"\n"}' >"$WORK/cleanup.watch" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
wait_watchers $((w0 + 1))
k delete raycluster ft --wait=false >/dev/null || fail "delete RayCluster ft"
k wait --for=delete raycluster/ft --timeout=60s >/dev/null ||
	fail "RayCluster ft was not deleted: $(k get raycluster ft -o yaml)"
grep -Eq "^ft-redis-cleanup (.* )?Complete" "$WORK/cleanup.watch" ||
	fail "the cleanup Job did not complete before the cluster went: $(cat "$WORK/cleanup.watch")"
expect_eq "" "$(rcli --scan --pattern "RAY${uid}@*")" "storage namespace left in Redis"
[ -n "$(rcli --scan --pattern "RAY*@*")" ] || fail "the RayJob cluster's keys should still be there"
k get events --field-selector reason=CreatedRedisCleanupJob -o jsonpath='{.items[*].message}' |
	grep -q "Created Redis cleanup Job default/ft-redis-cleanup" || fail "no CreatedRedisCleanupJob event"
pass "deletion: cleanup Job emptied RAY${uid}@* in Redis, then the finalizer went"

# --- validation ------------------------------------------------------------
k apply -f - >/dev/null <<'YAML' || fail "create invalid RayCluster"
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: both
  annotations: {ray.io/ft-enabled: "true"}
spec:
  gcsFaultToleranceOptions: {redisAddress: "redis:6379"}
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: "rayproject/ray:2.52.0"}]
YAML
wait_event both InvalidRayClusterSpec "annotation and GcsFaultToleranceOptions are both set"
expect_eq "" "$(head_pod both 2>/dev/null || true)" "no pods for an invalid cluster"
pass "validation: annotation and options together refused"
