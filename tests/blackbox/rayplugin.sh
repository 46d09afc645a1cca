#!/bin/sh
# volray ray (cli/cli_ray.c): what KubeRay's kubectl ray plugin does, on
# simulated nodes: create cluster (--dry-run's object, the plugin's
# defaults, --wait until provisioned), get cluster|workergroup|node with
# the plugin's columns, create workergroup, scale cluster (bounds checked,
# the plugin's messages), get token, session (kubectl port-forward to the
# head Service), job submit in InteractiveMode (the
# RayJob gets the submission id, the job runs and the command exits 0;
# a failing job exits 1), log into a directory, delete with and without
# confirmation.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"
vr() { "$top_builddir/volray" "$@"; }

# --- create cluster --------------------------------------------------------
out=$(vr ray create cluster demo --dry-run --worker-replicas 2 --worker-cpu 1 \
	--labels team=a --head-ray-start-params num-cpus=0) || fail "create --dry-run: $out"
expect_contains "$out" "kind: RayCluster" "dry-run object"
expect_contains "$out" "rayVersion: 2.52.0" "plugin's default Ray version"
expect_contains "$out" "image: rayproject/ray:2.52.0" "plugin's default image"
expect_contains "$out" "groupName: default-group" "plugin's worker group name"
expect_contains "$out" "num-cpus: \"0\"" "head rayStartParams"
k get raycluster demo >/dev/null 2>&1 && fail "--dry-run created the cluster"

out=$(vr ray create cluster demo --worker-replicas 2 --worker-cpu 1 --wait --timeout 60s) ||
	fail "create cluster --wait: $out"
expect_contains "$out" "Created Ray cluster: demo" "create's message"
expect_contains "$out" "Ray cluster demo is provisioned" "--wait's message"
expect_eq "2|4Gi|1|ray-head" "$(k get raycluster demo -o jsonpath='{.spec.workerGroupSpecs[0].replicas}|{.spec.headGroupSpec.template.spec.containers[0].resources.requests.memory}|{.spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu}|{.spec.headGroupSpec.template.spec.containers[0].name}')" \
	"the cluster as the plugin makes it"
vr ray create cluster bad --worker-cpu lots >/dev/null 2>&1 && fail "a bad quantity was accepted"
pass "create cluster: --dry-run, defaults, --wait"

# --file: the plugin's cluster config, strict, and not with the flags.
cat >"$WORK/cfg.yaml" <<'YAML'
name: filecl
labels: {team: b}
ray-version: "2.51.0"
head: {cpu: "1", memory: 2Gi, ray-start-params: {num-cpus: "0"}}
worker-groups:
- {name: cpu-group, replicas: 2, cpu: "1", memory: 1Gi}
- {replicas: 1, gpu: "1", node-selectors: {gpu: "yes"}}
autoscaler: {version: v2}
YAML
out=$(vr ray create cluster --file "$WORK/cfg.yaml" --dry-run) || fail "create --file --dry-run: $out"
for want in "name: filecl" "team: b" "image: rayproject/ray:2.51.0" "groupName: cpu-group" \
	"groupName: default-group-1" "nvidia.com/gpu: \"1\"" "gpu: \"yes\"" "enableInTreeAutoscaling: true" \
	"num-cpus: \"0\""; do
	expect_contains "$out" "$want" "create --file"
done
out=$(vr ray create cluster --file "$WORK/cfg.yaml") || fail "create --file: $out"
expect_eq "b|2" "$(k get raycluster filecl -o jsonpath='{.metadata.labels.team}|{.spec.workerGroupSpecs[0].replicas}')" \
	"the cluster from the file"
echo "bogus: 1" >>"$WORK/cfg.yaml"
out=$(vr ray create cluster --file "$WORK/cfg.yaml" --dry-run 2>&1) && fail "an unknown field was accepted"
expect_contains "$out" 'unknown field "bogus"' "strict config"
out=$(vr ray create cluster other --file "$WORK/cfg.yaml" --worker-cpu 1 2>&1) && fail "--file with --worker-cpu"
expect_contains "$out" "--file cannot be used with" "flags with --file"
sed -i '/^bogus/d' "$WORK/cfg.yaml"
out=$(vr ray create cluster other --file "$WORK/cfg.yaml" 2>&1) && fail "a name not the file's"
expect_contains "$out" "does not match the cluster name" "name mismatch"
vr ray delete filecl -y >/dev/null || fail "delete filecl"
pass "create cluster --file: groups, selectors, autoscaler; strict; not with flags; names agree"

# --- get -------------------------------------------------------------------
out=$(vr ray get cluster)
expect_contains "$(echo "$out" | head -1)" "NAME   NAMESPACE   DESIRED WORKERS   AVAILABLE WORKERS   CPUS   GPUS   TPUS   MEMORY   CONDITION" "get cluster header"
row=$(echo "$out" | grep '^demo ')
expect_contains "$row" "default" "get cluster row"
expect_contains "$row" "ready" "get cluster status"
set -- $row
expect_eq "2|2|4|0|12Gi" "$3|$4|$5|$6|$8" "desired, available, CPUs, GPUs, memory"
out=$(vr ray get workergroup -c demo)
expect_contains "$(echo "$out" | head -1)" "NAME            MIN   MAX" "get workergroup header"
set -- $(echo "$out" | grep '^default-group')
expect_eq "default-group|0|2147483647|2/2|2|0|0|8Gi|demo" "$1|$2|$3|$4|$5|$6|$7|$8|$9" "get workergroup row"
out=$(vr ray get node -c demo)
expect_eq 3 "$(echo "$out" | grep -c 'demo')" "get node: head and 2 workers"
expect_contains "$(echo "$out" | grep head)" "headgroup" "head's group"
vr ray get cluster nosuch >/dev/null 2>&1 && fail "get of a missing cluster succeeded"
pass "get cluster, workergroup, node"

# --- create workergroup, scale ---------------------------------------------
out=$(vr ray create workergroup gpu -c demo --worker-replicas 1 --worker-max-replicas 3) ||
	fail "create workergroup: $out"
expect_contains "$out" "Updated Ray cluster default/demo with new worker group" "create workergroup's message"
expect_eq "gpu|1|3" "$(k get raycluster demo -o jsonpath='{.spec.workerGroupSpecs[1].groupName}|{.spec.workerGroupSpecs[1].replicas}|{.spec.workerGroupSpecs[1].maxReplicas}')" "new group"
out=$(vr ray scale cluster demo -w gpu -r 3) || fail "scale: $out"
expect_eq "Updated worker group gpu in Ray cluster demo in namespace default (Scaled Replicas: 1 to 3)" "$out" "scale's message"
out=$(vr ray scale cluster demo -w gpu -r 3)
expect_contains "$out" "already matches the requested configuration. Skipping." "scale to the same size"
out=$(vr ray scale cluster demo -w gpu -r 4 2>&1) && fail "scaled past maxReplicas: $out"
expect_contains "$out" "cannot set --replicas (4) greater than --max-replicas (3)" "bound's message"
out=$(vr ray scale cluster demo -w nosuch -r 1 2>&1) && fail "scaled a missing group"
expect_contains "$out" "Available worker groups: default-group, gpu" "missing group's message"
i=0
until [ "$(k get pods -l ray.io/cluster=demo,ray.io/group=gpu -o name | wc -l)" -eq 3 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "gpu group did not grow to 3 pods"
	sleep 0.1
done
pass "create workergroup and scale cluster"

# --- get token -------------------------------------------------------------
vr ray get token demo >/dev/null 2>&1 && fail "token of a cluster without auth"
k apply -f - >/dev/null <<'YAML' || fail "create auth cluster"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: secure}
spec:
  authOptions: {mode: token}
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 1Gi}}}]
YAML
i=0
until k get secret secure >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no token Secret"
	sleep 0.1
done
want=$(k get secret secure -o jsonpath='{.data.auth_token}' | base64 -d)
expect_eq "$want" "$(vr ray get token secure)" "get token"
pass "get token"

# --- job submit ------------------------------------------------------------
out=$(vr ray job submit --name wc --worker-replicas 1 --worker-cpu 1 --submission-id raysubmit_plugintest1 \
	--metadata-json '{"volray.io/sim-duration": "1s"}' --timeout 90s -- python wc.py) ||
	fail "job submit: $out"
expect_contains "$out" "Submitted RayJob wc." "job submit's RayJob"
expect_contains "$out" "Ray job submitted with ID raysubmit_plugintest1" "job submit's id"
expect_contains "$out" "Job raysubmit_plugintest1 finished with status SUCCEEDED." "job submit's end"
expect_eq "InteractiveMode|raysubmit_plugintest1|SUCCEEDED" \
	"$(k get rayjob wc -o jsonpath='{.spec.submissionMode}|{.status.jobId}|{.status.jobStatus}')" "the RayJob"
out=$(vr ray job submit --name wcfail --worker-replicas 0 --timeout 90s \
	--metadata-json '{"volray.io/sim-duration": "1s", "volray.io/sim-exit-code": "3"}' -- python wc.py 2>&1) &&
	fail "a failing job exited 0: $out"
expect_contains "$out" "Generated submission ID for Ray job: raysubmit_" "generated id"
expect_contains "$out" "failed" "failing job's message"
vr ray job submit -- python x.py >/dev/null 2>&1 && fail "job submit without --name"
mkdir -p "$WORK/app" && echo 'print(1)' >"$WORK/app/main.py"
out=$(vr ray job submit --name wd --worker-replicas 0 --working-dir "$WORK/app" --timeout 90s \
	--metadata-json '{"volray.io/sim-duration": "1s"}' -- python main.py) || fail "job submit --working-dir: $out"
expect_contains "$out" "Uploading package gcs://_ray_pkg_" "--working-dir upload"
expect_contains "$(k get rayjob wd -o jsonpath='{.status.jobStatus}')" "SUCCEEDED" "--working-dir job on simulated nodes"
pass "job submit: InteractiveMode RayJob, submitted, followed, exit status"

# --- log -------------------------------------------------------------------
out=$(vr ray log demo --out-dir "$WORK/logs" --node-type head) || fail "log: $out"
expect_contains "$out" "Downloading log for Ray Node demo-head-" "log's message"
[ "$(ls "$WORK/logs/demo" | wc -l)" -eq 1 ] || fail "log --node-type head wrote $(ls "$WORK/logs/demo")"
ls "$WORK"/logs/demo/demo-head-*/ray-head.log >/dev/null || fail "no head container log file"
pass "log into a directory"

# --- session ---------------------------------------------------------------
# kubectl port-forward to the head Service, as the plugin runs it. Local
# port 8265 is also the local-node tests' heads': take their turn.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${TMPDIR:-/tmp}/volray-test-localnode.lock"
	flock -w 1200 9 || fail "waited 20 minutes for the local-node lock"
fi
"$top_builddir/volray" ray session demo -v >"$WORK/session.out" 2>&1 9>&- &
spid=$!
KILL_PIDS="$KILL_PIDS $spid"
i=0
until out=$(command curl -fsS http://127.0.0.1:8265/api/version 2>&1); do
	i=$((i + 1)); [ $i -lt 200 ] || fail "no dashboard on localhost:8265: $out $(cat "$WORK/session.out")"
	kill -0 $spid 2>/dev/null || fail "session exited: $(cat "$WORK/session.out")"
	sleep 0.1
done
expect_contains "$out" "ray_version" "the head's dashboard through the session"
so=$(cat "$WORK/session.out")
expect_contains "$so" "Forwarding ports to service demo-head-svc" "session's message"
expect_contains "$so" "Ray Dashboard: http://localhost:8265" "session's message"
expect_contains "$so" "Ray Interactive Client: http://localhost:10001" "session's message"
expect_contains "$so" "Running: kubectl port-forward -n default service/demo-head-svc 8265:8265 10001:10001" "-v"
kill -TERM $spid
wait $spid || fail "session did not exit 0 on SIGTERM"
command curl -fs http://127.0.0.1:8265/api/version >/dev/null 2>&1 && fail "the forward outlived the session"
exec 9>&-
wcc=$(k get rayjob wc -o jsonpath='{.status.rayClusterName}')
out=$(PATH=/nonexistent vr ray session rayjob/wc 2>&1) && fail "session without kubectl exited 0"
expect_contains "$out" "Forwarding ports to service $wcc-head-svc" "a RayJob's session"
expect_contains "$out" "kubectl not found on PATH" "without kubectl"
pass "session: kubectl port-forward to the head Service, ended by SIGTERM"

# --- delete ----------------------------------------------------------------
out=$(echo n | vr ray delete demo)
expect_contains "$out" "Canceled deletion." "answering no"
k get raycluster demo >/dev/null || fail "deleted after no"
out=$(vr ray delete demo rayjob/wc -y) || fail "delete -y: $out"
expect_contains "$out" "Deleted raycluster demo" "delete's message"
expect_contains "$out" "Deleted rayjob wc" "delete's message"
k wait --for=delete raycluster/demo --timeout=30s >/dev/null || fail "demo still there"
vr ray delete pod/x -y >/dev/null 2>&1 && fail "deleted an unsupported type"
pass "delete with confirmation"
