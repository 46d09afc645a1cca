#!/bin/sh
# A RayJob in KubeRay's default mode on a cluster of simulated nodes only
# (issue 24's first point): the submitter Job's pod lands on a simulated
# node, where nothing runs, so the simulated runtime does what its `ray
# job` command would: submit to the head emulation with the submission id
# (once: a rerun of the pod follows the job it finds), follow it, exit as
# `ray job logs --follow` does. K8sJobMode and SidecarMode complete, a job
# that fails (volray.io/sim-exit-code on the RayJob) makes the RayJob
# Failed, and the runtime env and metadata reach the head.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"

rayjob() {
	k apply -f - >/dev/null <<YAML || fail "rayjob $1"
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: $1
  annotations: {$3}
spec:
  submissionMode: $2
${4:-}
  entrypoint: python -c "print('hello')"
  runtimeEnvYAML: |
    env_vars: {WHO: sim}
  metadata: {team: ml}
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    workerGroupSpecs:
    - groupName: small
      replicas: 1
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
}
rayjob k8s K8sJobMode ""
rayjob sidecar SidecarMode ""
rayjob failing K8sJobMode '"volray.io/sim-exit-code": "3"'
rayjob later K8sJobMode "" '  suspend: true
  shutdownAfterJobFinishes: true'
for j in k8s sidecar; do
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete "rayjob/$j" --timeout=60s >/dev/null ||
		fail "$j not Complete: $(k get rayjob "$j" -o jsonpath='{.status}')"
	expect_eq SUCCEEDED "$(k get rayjob "$j" -o jsonpath='{.status.jobStatus}')" "$j's job status"
done
expect_eq 1 "$(k get job k8s -o jsonpath='{.status.succeeded}')" "the submitter Job completed"
node=$(k get pods -l job-name=k8s -o jsonpath='{.items[0].spec.nodeName}')
expect_eq virtual "$(k get node "$node" -o jsonpath='{.metadata.labels.volray\.io/runtime}')" "the submitter's node"
pass "K8sJobMode and SidecarMode RayJobs complete on simulated nodes"

k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Failed rayjob/failing --timeout=60s >/dev/null ||
	fail "failing not Failed: $(k get rayjob failing -o jsonpath='{.status}')"
expect_eq FAILED "$(k get rayjob failing -o jsonpath='{.status.jobStatus}')" "a failing job's status"
pass "a failing simulated job fails its RayJob"

# What the head got: the id the controller chose, the runtime env and
# metadata of the RayJob (through the head's Jobs API).
id=$(k get rayjob k8s -o jsonpath='{.status.jobId}')
svc=$(k get rayjob k8s -o jsonpath='{.status.rayClusterName}')-head-svc
got=$(curl -fsS "$API/api/v1/namespaces/default/services/$svc:dashboard/proxy/api/jobs/$id") ||
	fail "the job through the service proxy"
expect_contains "$got" '"submission_id":"'"$id"'"' "submission id"
expect_contains "$got" '"WHO":"sim"' "runtime env"
expect_contains "$got" '"team":"ml"' "metadata"
n=$(curl -fsS "$API/api/v1/namespaces/default/services/$svc:dashboard/proxy/api/jobs/" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
expect_eq 1 "$n" "one job on the head"
pass "the submission carries the RayJob's id, runtime env and metadata; one job"

# Suspended, then resumed; shutdownAfterJobFinishes deletes the cluster.
expect_eq Suspended "$(k get rayjob later -o jsonpath='{.status.jobDeploymentStatus}')" "a suspended RayJob"
expect_eq "" "$(k get rayclusters -l ray.io/originated-from-cr-name=later -o name)" "no cluster while suspended"
k patch rayjob later --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/later --timeout=60s >/dev/null ||
	fail "later not Complete after resume: $(k get rayjob later -o jsonpath='{.status}')"
expect_eq SUCCEEDED "$(k get rayjob later -o jsonpath='{.status.jobStatus}')" "the resumed job"
rc=$(k get rayjob later -o jsonpath='{.status.rayClusterName}')
[ -n "$rc" ] || fail "the resumed job named no cluster"
k wait --for=delete "raycluster/$rc" --timeout=30s >/dev/null 2>&1 ||
	fail "the finished job's cluster $rc was not deleted"
pass "suspend, resume, then shutdownAfterJobFinishes on simulated nodes"
