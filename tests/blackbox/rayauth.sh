#!/bin/sh
# Ray token authentication (authOptions, KubeRay 1.5+; issue 24) with the
# upstream 1.7 samples on simulated nodes: KubeRay's Secret with a random
# token and the RAY_AUTH_* env on every Ray container (head, workers,
# autoscaler); the head's dashboard answers 401 without the token, 403 with
# a wrong one, and works with it, in X-Ray-Authorization through the API's
# proxy or in Authorization straight to the head (kubectl port-forward and
# `ray job submit`); RayJobs in K8sJobMode (the submitter gets the token)
# and HTTPMode (the controller sends it) complete on an authenticated
# cluster; authOptions.secretName uses the named Secret.
. "$(dirname "$0")/lib.sh"
need_samples
K17="$SAMPLES/kuberay-1.7"
[ -d "$K17" ] || skip "no $K17: the KubeRay 1.7 samples are not here"
start_daemon
"$top_builddir/volray" node add --virtual --count 6 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"
PFS=""
trap 'rc=$?; for p in $PFS; do kill $p 2>/dev/null || true; done; (exit $rc); cleanup' EXIT INT TERM

k apply -f "$K17/ray-cluster.auth.yaml" >/dev/null || fail "apply ray-cluster.auth.yaml"
k wait --for=condition=Ready pod -l ray.io/cluster=ray-cluster-with-auth,ray.io/node-type=head --timeout=30s >/dev/null ||
	fail "the head is not ready"
wait_eq 1 "the Secret" sh -c "kubectl get secret ray-cluster-with-auth -o name 2>/dev/null | wc -l | tr -d ' '"
tok=$(k get secret ray-cluster-with-auth -o jsonpath='{.data.auth_token}' | base64 -d)
[ ${#tok} -ge 32 ] || fail "a token of ${#tok} characters"
expect_eq "RayCluster" "$(k get secret ray-cluster-with-auth -o jsonpath='{.metadata.ownerReferences[0].kind}')" "the Secret's owner"
head=$(k get pods -l ray.io/cluster=ray-cluster-with-auth,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
for c in 0 1; do
	expect_eq "token|ray-cluster-with-auth|auth_token" \
		"$(k get pod "$head" -o jsonpath="{.spec.containers[$c].env[?(@.name=='RAY_AUTH_MODE')].value}|{.spec.containers[$c].env[?(@.name=='RAY_AUTH_TOKEN')].valueFrom.secretKeyRef.name}|{.spec.containers[$c].env[?(@.name=='RAY_AUTH_TOKEN')].valueFrom.secretKeyRef.key}")" \
		"container $c of the head"
done
wait_eq 1 "a worker" sh -c "kubectl get pods -l ray.io/cluster=ray-cluster-with-auth,ray.io/node-type=worker -o name | wc -l | tr -d ' '"
expect_eq "token" "$(k get pods -l ray.io/cluster=ray-cluster-with-auth,ray.io/node-type=worker \
	-o jsonpath="{.items[0].spec.containers[0].env[?(@.name=='RAY_AUTH_MODE')].value}")" "the worker's RAY_AUTH_MODE"
pass "KubeRay's token Secret and RAY_AUTH_* env on the head, its autoscaler and the workers"

# --- the dashboard through the API's service proxy
proxy="$API/api/v1/namespaces/default/services/ray-cluster-with-auth-head-svc:8265/proxy"
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
expect_eq 401 "$(code "$proxy/api/jobs/")" "no token"
expect_eq "Unauthorized: Missing authentication token" "$(cat "$WORK/body")" "the 401's text"
expect_eq 403 "$(code -H "X-Ray-Authorization: Bearer nope" "$proxy/api/jobs/")" "a wrong token"
expect_eq "Forbidden: Invalid authentication token" "$(cat "$WORK/body")" "the 403's text"
expect_eq 200 "$(code -H "X-Ray-Authorization: Bearer $tok" "$proxy/api/jobs/")" "the token"
expect_eq 200 "$(code "$proxy/api/gcs_healthz")" "the health check, open"
expect_contains "$(curl -s "$proxy/api/authentication_mode")" '"token"' "the authentication mode"
pass "the dashboard: 401 without the token, 403 with a wrong one, 200 with it (X-Ray-Authorization)"

# --- ray job submit straight to the head (Authorization), as Ray's SDK
P=$(free_port)
kubectl port-forward svc/ray-cluster-with-auth-head-svc "$P:8265" >"$WORK/pf.log" 2>&1 &
PFS="$PFS $!"
i=0
until grep -q "^Forwarding from 127.0.0.1" "$WORK/pf.log"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "kubectl port-forward: $(cat "$WORK/pf.log")"
	sleep 0.05
done
out=$(RAY_AUTH_TOKEN="$tok" "$top_builddir/libexec/ray" job submit --address "http://127.0.0.1:$P" \
	--submission-id with-token --metadata-json '{"volray.io/sim-duration": "1s"}' -- python hello.py 2>&1) ||
	fail "ray job submit with RAY_AUTH_TOKEN: $out"
expect_contains "$out" "Job 'with-token' succeeded" "ray job submit with the token"
out=$("$top_builddir/libexec/ray" job submit --address "http://127.0.0.1:$P" \
	--submission-id without -- python hello.py 2>&1) && fail "ray job submit without the token passed: $out"
expect_contains "$out" "401" "ray job submit without the token"
pass "ray job submit with RAY_AUTH_TOKEN works, without it 401"

# --- RayJobs on an authenticated cluster
rayjob() {	# rayjob NAME MODE
	k apply -f - >/dev/null <<YAML || fail "create RayJob $1"
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: $1}
spec:
  submissionMode: $2
  entrypoint: python job.py
  metadata: {volray.io/sim-duration: 1s}
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    authOptions: {mode: token}
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.53.0, resources: {requests: {cpu: "1"}}}]}}
YAML
}
rayjob auth-k8s K8sJobMode
rayjob auth-http HTTPMode
for j in auth-k8s auth-http; do
	k wait --for=jsonpath='{.status.jobStatus}'=SUCCEEDED "rayjob/$j" --timeout=60s >/dev/null ||
		fail "$j: $(k get rayjob "$j" -o jsonpath='{.status}')"
done
expect_eq "token" "$(k get job auth-k8s -o jsonpath="{.spec.template.spec.containers[0].env[?(@.name=='RAY_AUTH_MODE')].value}")" \
	"the submitter Job's RAY_AUTH_MODE"
pass "RayJobs in K8sJobMode and HTTPMode complete on a cluster with token authentication"

# --- authOptions.secretName: the user's Secret
k create namespace ref >/dev/null
k apply -n ref -f "$K17/ray-cluster.auth.secret-ref.yaml" >/dev/null || fail "apply ray-cluster.auth.secret-ref.yaml"
k wait -n ref --for=condition=Ready pod -l ray.io/node-type=head --timeout=30s >/dev/null || fail "ref's head"
rproxy="$API/api/v1/namespaces/ref/services/ray-cluster-with-auth-head-svc:8265/proxy"
expect_eq 200 "$(code -H "X-Ray-Authorization: Bearer super-secret-example-token" "$rproxy/api/jobs/")" "the named Secret's token"
expect_eq 403 "$(code -H "X-Ray-Authorization: Bearer $tok" "$rproxy/api/jobs/")" "another cluster's token"
expect_eq "" "$(k get secret -n ref ray-cluster-with-auth -o name 2>/dev/null)" "no generated Secret with secretName"
pass "authOptions.secretName: the named Secret's token, none generated"
