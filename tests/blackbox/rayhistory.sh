#!/bin/sh
# The Ray job history (issue 24; core/ray/history.c): a RayJob's Ray job
# and its driver log outlive the cluster that ran it. After the cluster
# is deleted (shutdownAfterJobFinishes), and after the RayJob is deleted
# too, `volray rayjob logs` still prints the log and the Jobs API at
# /apis/volray.io/v1/rayhistory/... still answers; the history survives a
# restart of volrayd and keeps at most --ray-history-max jobs, the oldest
# going first.
. "$(dirname "$0")/lib.sh"
start_daemon --ray-history-max=3
"$top_builddir/volray" node add --virtual --count 4 --cpu 8 --memory 32Gi >/dev/null ||
	fail "volray node add"
vr() { "$top_builddir/volray" "$@"; }

# rayjob NAME: a simulated one-second job whose cluster goes after it.
rayjob() {
	k apply -f - >/dev/null <<YAML || fail "create RayJob $1"
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: $1}
spec:
  submissionMode: HTTPMode
  entrypoint: python history.py --name $1
  metadata: {volray.io/sim-duration: 1s}
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0, resources: {requests: {cpu: "1"}}}]}}
YAML
}
# done NAME: Complete, and its cluster gone.
done_and_gone() {
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete "rayjob/$1" --timeout=60s >/dev/null ||
		fail "$1 did not complete: $(k get rayjob "$1" -o jsonpath='{.status}')"
	cl=$(k get rayjob "$1" -o jsonpath='{.status.rayClusterName}')
	k wait --for=delete "raycluster/$cl" --timeout=60s >/dev/null 2>&1 || true
	[ -z "$(k get raycluster "$cl" -o name 2>/dev/null)" ] || fail "$1's cluster $cl is still there"
}

rayjob h1
done_and_gone h1
cluster=$(k get rayjob h1 -o jsonpath='{.status.rayClusterName}')
id=$(k get rayjob h1 -o jsonpath='{.status.jobId}')
out=$(vr rayjob logs h1 2>&1) || fail "volray rayjob logs h1 after its cluster went: $out"
expect_contains "$out" "simulating entrypoint: python history.py --name h1" "the log after the cluster went"
base="$API/apis/volray.io/v1/rayhistory/namespaces/default/clusters/$cluster/api/jobs"
list=$(curl -fsS "$base/") || fail "the history's job list"
expect_eq "$id SUCCEEDED h1" "$(echo "$list" | python3 -c 'import json,sys
j = json.load(sys.stdin)[0]; print(j["submission_id"], j["status"], j["volray_history"]["rayjob"])')" "the kept job"
expect_contains "$(curl -fsS "$base/$id/logs")" "python history.py --name h1" "the kept log through the Jobs API"
expect_eq 404 "$(curl -s -o /dev/null -w '%{http_code}' "$base/nope")" "an unknown job"
pass "after its cluster is deleted, a RayJob's log and job are still there"

k delete rayjob h1 >/dev/null || fail "delete h1"
out=$(vr rayjob logs h1 2>&1) || fail "volray rayjob logs h1 after the RayJob went: $out"
expect_contains "$out" "python history.py --name h1" "the log after the RayJob went"
pass "after the RayJob is deleted too"

stop_daemon
start_daemon --ray-history-max=3
out=$(vr rayjob logs h1 2>&1) || fail "volray rayjob logs h1 after a restart: $out"
expect_contains "$out" "python history.py --name h1" "the log after a restart"
pass "the history survives a restart"

for j in h2 h3 h4; do rayjob $j; done
for j in h2 h3 h4; do done_and_gone $j; done
out=$(vr rayjob logs h1 2>&1) && fail "h1 still kept past --ray-history-max=3: $out"
expect_contains "$out" "kept in the Ray job history either" "h1 after three newer jobs"
for j in h2 h3 h4; do
	out=$(vr rayjob logs $j 2>&1) || fail "$j: $out"
	expect_contains "$out" "python history.py --name $j" "$j's log"
done
pass "at most --ray-history-max jobs are kept, the oldest go first"
