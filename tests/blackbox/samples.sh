#!/bin/sh
# Every manifest in samples/ does what its comment says, on the local node
# and simulated nodes (the demo's real-Ray RayJob only accepted, a dry
# run): the Queue, the PodGroup's pods placed together, the
# RayCluster ready, the word count RayJob's real output (the demo's job),
# the HTTPMode RayJob Complete and cleaned up, the SidecarMode job's real
# entrypoint, the InteractiveMode job Waiting, the RayService serving (a
# request to /echo through its serve Service answered by the echo app).
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null
S="$top_srcdir/samples"
for f in "$S"/*.yaml; do
	# The demo's real-Ray RayJob needs Ray installed and a node of its
	# own to itself (scripts/demo.sh runs it; rayreal.sh covers real Ray).
	case $f in *-real.yaml) continue ;; esac
	out=$(k apply -f "$f" 2>&1) || fail "$(basename "$f") refused: $out"
done
out=$(k apply --dry-run=server -f "$S/rayjob-wordcount-real.yaml" 2>&1) ||
	fail "rayjob-wordcount-real.yaml refused: $out"
pass "every sample is accepted"

expect_eq ray-demo "$(k get queue ray-demo -o jsonpath='{.metadata.name}')" "queue"
k wait --for=jsonpath='{.status.phase}'=Running pod/pair-0 pod/pair-1 --timeout=20s >/dev/null ||
	fail "the PodGroup's pods did not run"
pass "podgroup.yaml: both pods run"

k wait --for=jsonpath='{.status.state}'=ready raycluster/sample-cluster --timeout=20s >/dev/null ||
	fail "sample-cluster not ready"
expect_eq "ray-demo 3" "$(k get podgroup ray-sample-cluster-pg -o jsonpath='{.spec.queue} {.spec.minMember}')" "sample-cluster PodGroup"
pass "raycluster.yaml: ready, gang-scheduled through ray-demo"

k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/wordcount --timeout=60s >/dev/null ||
	fail "wordcount did not complete: $(k get rayjob wordcount -o jsonpath='{.status}')"
logs=$(k logs job/wordcount)
expect_contains "$logs" "counts: [2, 3, 1]" "word count output"
expect_contains "$logs" "total: 6" "word count total"
pass "rayjob-wordcount.yaml: the real word count prints counts and total"

k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/sample-http --timeout=30s >/dev/null ||
	fail "sample-http did not complete"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/sample-sidecar --timeout=40s >/dev/null ||
	fail "sample-sidecar did not complete: $(k get rayjob sample-sidecar -o jsonpath='{.status}')"
hp=$(k get pods -l ray.io/cluster="$(k get rayjob sample-sidecar -o jsonpath='{.status.rayClusterName}')",ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
expect_contains "$(k logs "$hp" -c ray-job-submitter)" "hello from the sidecar" "sidecar output"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Waiting rayjob/sample-interactive --timeout=20s >/dev/null ||
	fail "sample-interactive not Waiting"
pass "rayjob-http.yaml, rayjob-sidecar.yaml Complete; rayjob-interactive.yaml Waiting"

k wait --for=jsonpath='{.status.serviceStatus}'=Running rayservice/sample-service --timeout=30s >/dev/null ||
	fail "sample-service not serving"
expect_eq RUNNING "$(k get rayservice sample-service -o jsonpath='{.status.activeServiceStatus.applicationStatuses.echo.status}')" "echo app"
# Serving is answering: a request to /echo through the API server's
# service proxy to the serve Service's port 8000 reaches the echo
# application on the active cluster.
active=$(k get rayservice sample-service -o jsonpath='{.status.activeServiceStatus.rayClusterName}')
echo_answer() {
	curl -fsS "$API/api/v1/namespaces/default/services/sample-service-serve-svc:8000/proxy/echo" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["application"]+"|"+d["route_prefix"]+"|"+d["cluster"])'
}
wait_eq "echo|/echo|$active" "the answer of /echo on sample-service-serve-svc:8000" echo_answer
pass "rayservice.yaml: serving (/echo answered through sample-service-serve-svc:8000)"

k wait --for=delete "raycluster/$(k get rayjob sample-http -o jsonpath='{.status.rayClusterName}')" --timeout=20s >/dev/null ||
	fail "sample-http cluster not cleaned up"
pass "rayjob-http.yaml: cluster deleted after its TTL"
