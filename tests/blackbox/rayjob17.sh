#!/bin/sh
# RayJob lifecycle as KubeRay 1.7 has it, on simulated nodes
# (lua/controllers/rayjob.lua): the older deletionStrategy onSuccess /
# onFailure policies (and their validation against deletionRules); a
# dashboard that stops answering is remembered in
# status.jobStatusCheckFailureStartTime, cleared once it answers again
# (an HTTPMode job missing on the new head is submitted again).
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 3 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"

# rayjob NAME MODE 'ANNOTATIONS' 'EXTRA SPEC LINES' ['HEAD NODE SELECTOR']
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
  entrypoint: python work.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          nodeSelector: {${5:-}}
          containers: [{name: ray-head, image: "rayproject/ray:2.52.0", resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
}
jst() { k get rayjob "$1" -o jsonpath="{.status.$2}"; }

# --- legacy onSuccess / onFailure --------------------------------------------
rayjob ok K8sJobMode 'volray.io/sim-duration: 1s' '  deletionStrategy:
    onSuccess: {policy: DeleteCluster}
    onFailure: {policy: DeleteNone}'
rayjob bad K8sJobMode 'volray.io/sim-duration: 1s, volray.io/sim-exit-code: "1"' '  deletionStrategy:
    onSuccess: {policy: DeleteCluster}
    onFailure: {policy: DeleteNone}'
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/ok --timeout=60s >/dev/null ||
	fail "ok did not complete: $(jst ok '')"
okc=$(jst ok rayClusterName)
k wait --for=delete "raycluster/$okc" --timeout=30s >/dev/null || fail "onSuccess DeleteCluster left $okc"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Failed rayjob/bad --timeout=60s >/dev/null ||
	fail "bad did not fail: $(jst bad '')"
k get raycluster "$(jst bad rayClusterName)" >/dev/null || fail "onFailure DeleteNone deleted the cluster"
pass "deletionStrategy onSuccess DeleteCluster and onFailure DeleteNone"

rayjob half K8sJobMode '' '  deletionStrategy:
    onSuccess: {policy: DeleteCluster}'
wait_event half InvalidRayJobSpec "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set"
rayjob both K8sJobMode '' '  deletionStrategy:
    onSuccess: {policy: DeleteCluster}
    onFailure: {policy: DeleteNone}
    deletionRules: [{policy: DeleteSelf, condition: {jobStatus: SUCCEEDED}}]'
wait_event both InvalidRayJobSpec "Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously"
pass "validation of the legacy policies"

# --- the dashboard stops answering ---------------------------------------------
rayjob check HTTPMode 'volray.io/sim-duration: 600s' '' 'kubernetes.io/hostname: vnode-2'
k wait --for=jsonpath='{.status.jobStatus}'=RUNNING rayjob/check --timeout=60s >/dev/null ||
	fail "check not RUNNING: $(jst check '')"
[ -z "$(jst check jobStatusCheckFailureStartTime)" ] || fail "a failure time while the head answers"
k delete node vnode-2 >/dev/null || fail "delete the head's node"
i=0
until [ -n "$(jst check jobStatusCheckFailureStartTime)" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no jobStatusCheckFailureStartTime without a head: $(jst check '')"
	sleep 0.1
done
expect_eq Running "$(jst check jobDeploymentStatus)" "still Running while the checks fail (within the timeout)"
"$top_builddir/volray" node add --virtual --count 1 --cpu 16 --memory 64Gi --name-prefix vnode-2x >/dev/null
k label node vnode-2x-0 kubernetes.io/hostname=vnode-2 --overwrite >/dev/null || fail "label the new node"
i=0
until [ -z "$(jst check jobStatusCheckFailureStartTime)" ] && [ "$(jst check jobStatus)" = RUNNING ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "the checks did not recover on a new head: $(jst check '')"
	sleep 0.1
done
pass "jobStatusCheckFailureStartTime set while the dashboard is gone, cleared when a new head answers (HTTPMode submitted again)"
