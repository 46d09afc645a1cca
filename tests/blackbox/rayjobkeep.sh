#!/bin/sh
# Beyond KubeRay: a RayJob whose retries keep its cluster
# (volray.io/retry-keeps-cluster, ray#64105) and a running RayJob scaled
# with `volray ray scale job` (kuberay#4819), on simulated nodes with
# emulated heads and stock kubectl:
# - backoffLimit 2 with the annotation: three submissions with distinct
#   ids on one RayCluster whose head and workers are never replaced,
#   RetryingOnCluster events, status.failed 3;
# - scale job: the worker group's replicas raised past maxReplicas (which
#   follows, said in the output) in the RayJob's spec and on its cluster,
#   the new workers Running, the Ray job untouched; a group that does not
#   exist and a clusterSelector job refused with nothing changed;
# - a retry without the annotation builds its new cluster at the scaled
#   size.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null
vr() { "$top_builddir/volray" "$@"; }

jst() { k get rayjob "$1" -o jsonpath="{.status.$2}"; }
wait_state() {
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'="$2" "rayjob/$1" --timeout="${3:-30}s" >/dev/null ||
		fail "$1 did not reach $2: $(k get rayjob "$1" -o jsonpath='{.status}')"
}
jobs_on() {
	k get --raw "/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/" |
		python3 -c 'import json,sys; print(" ".join(sorted(j["submission_id"] for j in json.load(sys.stdin))))'
}
# rayjob NAME 'ANNOTATIONS' 'EXTRA SPEC LINES' [REPLICAS] [MAX]
rayjob() {
	k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: $1, annotations: {$2}}
spec:
  submissionMode: HTTPMode
  entrypoint: python -c "print('hello')"
$3
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    workerGroupSpecs:
    - groupName: small
      replicas: ${4:-2}
      minReplicas: 0
      maxReplicas: ${5:-2}
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
}
# uids CLUSTER: the uids of its pods, sorted.
uids() {
	k get pods -l "ray.io/cluster=$1" -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort | tr '\n' ' '
}

k get rayclusters -l ray.io/originated-from-cr-name=keep -w --output-watch-events \
	-o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$WORK/keep.out" 2>/dev/null &
keep_watch=$!
wait_watchers 1

# --- retries on the same cluster
rayjob keep 'volray.io/retry-keeps-cluster: "true"' '  metadata: {volray.io/sim-duration: 1500ms, volray.io/sim-exit-code: "1"}
  backoffLimit: 2'
wait_state keep Running
c=$(jst keep rayClusterName)
first_id=$(jst keep jobId)
k wait --for=jsonpath='{.status.readyWorkerReplicas}'=2 "raycluster/$c" --timeout=30s >/dev/null ||
	fail "cluster $c: workers not ready"
pods=$(uids "$c")
expect_eq 3 "$(echo "$pods" | wc -w | tr -d ' ')" "head and two workers"
wait_state keep Failed 60
expect_eq "AppFailed 3" "$(jst keep reason) $(jst keep failed)" "three attempts counted"
expect_eq "$c" "$(jst keep rayClusterName)" "the same cluster after the retries"
expect_eq "$pods" "$(uids "$c")" "no pod of the cluster replaced"
ids=$(jobs_on "$c")
expect_eq 3 "$(echo "$ids" | wc -w | tr -d ' ')" "three submissions on the one head: $ids"
expect_contains " $ids " " $first_id " "the first submission"
expect_contains "$ids" "keep-retry1-" "the first retry's submission id"
expect_contains "$ids" "keep-retry2-" "the second retry's submission id"
wait_event keep RetryingOnCluster "attempt 3) on the same RayCluster default/$c"
kill $keep_watch 2>/dev/null; wait $keep_watch 2>/dev/null || true
expect_eq "ADDED $c" "$(grep '^ADDED' "$WORK/keep.out" | sort -u)" "one cluster ever"
pass "retry-keeps-cluster: three submissions on one cluster, no pod replaced, failed 3"

# --- scale a running RayJob past its maxReplicas
rayjob grow '' '  metadata: {volray.io/sim-duration: 120s}' 1 2
wait_state grow Running
c=$(jst grow rayClusterName)
id=$(jst grow jobId)
out=$(vr ray scale job grow -w small -r 4 2>&1) || fail "scale job: $out"
expect_contains "$out" "Updated worker group small in RayJob grow in namespace default (Raised maxReplicas: 2 to 4, Scaled Replicas: 1 to 4)" "scale job output"
expect_contains "$out" "Updated worker group small in Ray cluster $c in namespace default (Raised maxReplicas: 2 to 4, Scaled Replicas: 1 to 4)" "scale job output, cluster"
expect_eq "4 4" "$(k get rayjob grow -o jsonpath='{.spec.rayClusterSpec.workerGroupSpecs[0].replicas} {.spec.rayClusterSpec.workerGroupSpecs[0].maxReplicas}')" "the RayJob's spec records it"
expect_eq "4 4" "$(k get raycluster "$c" -o jsonpath='{.spec.workerGroupSpecs[0].replicas} {.spec.workerGroupSpecs[0].maxReplicas}')" "the cluster follows"
k wait --for=jsonpath='{.status.readyWorkerReplicas}'=4 "raycluster/$c" --timeout=30s >/dev/null ||
	fail "four workers not ready: $(k get raycluster "$c" -o jsonpath='{.status}')"
expect_eq "Running $id $c" "$(jst grow jobDeploymentStatus) $(jst grow jobId) $(jst grow rayClusterName)" "the Ray job goes on"
out=$(vr ray scale job grow -w small -r 4 2>&1) || fail "scale job again: $out"
expect_contains "$out" "already matches" "nothing to change"
pass "scale job: replicas 1 to 4 past maxReplicas 2 in the RayJob and its cluster, the job untouched"

# --- what scale job refuses
rv=$(k get rayjob grow -o jsonpath='{.metadata.resourceVersion}')
if out=$(vr ray scale job grow -w big -r 2 2>&1); then fail "an unknown group accepted: $out"; fi
expect_contains "$out" "worker group big not found in RayJob grow in namespace default. Available worker groups: small" "unknown group"
if out=$(vr ray scale job grow -w small 2>&1); then fail "no count accepted: $out"; fi
expect_contains "$out" "must specify at least one of" "no count"
expect_eq "$rv" "$(k get rayjob grow -o jsonpath='{.metadata.resourceVersion}')" "nothing written"
k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: sel}
spec:
  submissionMode: HTTPMode
  entrypoint: python -c "print('hello')"
  clusterSelector: {ray.io/cluster: $c}
YAML
if out=$(vr ray scale job sel -w small -r 2 2>&1); then fail "a clusterSelector job scaled: $out"; fi
expect_contains "$out" "clusterSelector" "clusterSelector refused"
pass "scale job refuses an unknown group, no count, and a cluster it does not own"

# --- a retry without the annotation: a new cluster at the scaled size
rayjob regrow '' '  metadata: {volray.io/sim-duration: 8s, volray.io/sim-exit-code: "1"}
  backoffLimit: 1' 1 1
wait_state regrow Running
c1=$(jst regrow rayClusterName)
out=$(vr ray scale job regrow -w small -r 2 2>&1) || fail "scale regrow: $out"
k wait --for=jsonpath='{.status.failed}'=1 rayjob/regrow --timeout=40s >/dev/null || fail "regrow: no first failure"
wait_state regrow Running 40
c2=$(jst regrow rayClusterName)
[ "$c2" != "$c1" ] || fail "regrow: the retry kept cluster $c1 without the annotation"
expect_eq "2 2" "$(k get raycluster "$c2" -o jsonpath='{.spec.workerGroupSpecs[0].replicas} {.spec.workerGroupSpecs[0].maxReplicas}')" "the retry's cluster has the scaled size"
pass "a retry's new cluster keeps the size scale job set"
