#!/bin/sh
# The RayJob controller (lua/controllers/rayjob.lua) with stock kubectl:
# each submission mode to Complete (HTTPMode and InteractiveMode on
# simulated nodes; K8sJobMode's submitter and SidecarMode's head on the
# local node, where KubeRay's own `ray job submit` line runs unchanged),
# cleanup with shutdownAfterJobFinishes and its TTL, a failing entrypoint,
# backoffLimit retries with fresh clusters, activeDeadlineSeconds, created
# suspended, invalid specs, clusterSelector, deletion rules, deletion with
# a stop of the Ray job, the upstream samples, the Volcano PodGroup, and a
# kill -9 of volrayd mid-Initializing that leaves one cluster and one
# submission.
. "$(dirname "$0")/lib.sh"
need_samples
LOCAL_NODE=1
start_daemon
"$top_builddir/volray" node add --virtual --count 6 --cpu 16 --memory 64Gi >/dev/null
node=$(hostname | tr 'A-Z' 'a-z')
[ -n "$node" ] || fail "no local node"

jst() { k get rayjob "$1" -o jsonpath="{.status.$2}"; }
# wait_state JOB STATE [SECONDS]: until jobDeploymentStatus is STATE.
wait_state() {
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'="$2" "rayjob/$1" --timeout="${3:-30}s" >/dev/null ||
		fail "$1 did not reach $2: $(k get rayjob "$1" -o jsonpath='{.status}')"
}
# jobs_on CLUSTER: the submission ids its head knows, through the proxy.
jobs_on() {
	k get --raw "/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/" |
		python3 -c 'import json,sys; print(" ".join(sorted(j["submission_id"] for j in json.load(sys.stdin))))'
}

# rayjob NAME MODE 'EXTRA SPEC LINES' [HEAD-NODE-SELECTOR]: a RayJob with a
# head and one worker; the entrypoint is simulated from spec.metadata.
rayjob() {
	sel=${4:-"volray.io/runtime: virtual"}
	k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: $1}
spec:
  submissionMode: $2
  entrypoint: python -c "print('hello')"
$3
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          nodeSelector: {$sel}
          containers: [{name: ray-head, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    workerGroupSpecs:
    - groupName: small
      replicas: 1
      template:
        spec:
          nodeSelector: {volray.io/runtime: virtual}
          containers: [{name: ray-worker, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "${WORKER_CPU:-1}", memory: 1Gi}}}]
YAML
}

# Every RayCluster the retry job ever gets.
k get rayclusters -l ray.io/originated-from-cr-name=retry -w --output-watch-events \
	-o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$WORK/retry.out" 2>/dev/null &
retry_watch=$!
wait_watchers 1

rayjob http-ok HTTPMode '  metadata: {volray.io/sim-duration: 1s}
  shutdownAfterJobFinishes: true
  ttlSecondsAfterFinished: 4'
rayjob k8s-ok K8sJobMode "  metadata: {volray.io/sim-duration: 1s}
  shutdownAfterJobFinishes: true
  submitterPodTemplate:
    spec:
      nodeSelector: {kubernetes.io/hostname: $node}
      restartPolicy: Never
      containers: [{name: ray-job-submitter, image: rayproject/ray:2.46.0}]"
rayjob int-ok InteractiveMode ''
rayjob fail HTTPMode '  metadata: {volray.io/sim-duration: 500ms, volray.io/sim-exit-code: "3"}'
rayjob retry HTTPMode '  metadata: {volray.io/sim-duration: 500ms, volray.io/sim-exit-code: "1"}
  backoffLimit: 1'
rayjob deadline HTTPMode '  metadata: {volray.io/sim-duration: 60s}
  activeDeadlineSeconds: 4
  backoffLimit: 2'
rayjob susp HTTPMode '  metadata: {volray.io/sim-duration: 500ms}
  suspend: true
  shutdownAfterJobFinishes: true'
rayjob stopme HTTPMode '  metadata: {volray.io/sim-duration: 60s}'

# --- HTTPMode: Complete, one submission, the cluster kept for its TTL
wait_state http-ok Complete
expect_eq "SUCCEEDED 1 0" "$(jst http-ok jobStatus) $(jst http-ok succeeded) $(jst http-ok failed)" "http-ok status"
c=$(jst http-ok rayClusterName)
case "$c" in http-ok-?????) ;; *) fail "cluster name '$c'" ;; esac
id=$(jst http-ok jobId)
case "$id" in http-ok-?????) ;; *) fail "job id '$id'" ;; esac
expect_eq "$c-head-svc.default.svc.cluster.local:8265" "$(jst http-ok dashboardURL)" "dashboardURL"
[ -n "$(jst http-ok startTime)" ] && [ -n "$(jst http-ok endTime)" ] && [ -n "$(jst http-ok rayJobInfo.endTime)" ] || fail "times"
expect_eq "$id" "$(jobs_on "$c")" "one submission with the RayJob's id"
expect_eq "RayJob http-ok RayJob" "$(k get raycluster "$c" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.labels.ray\.io/originated-from-cr-name} {.metadata.labels.ray\.io/originated-from-crd}')" "cluster owner and labels"
k wait --for=delete "raycluster/$c" --timeout=15s >/dev/null || fail "cluster $c not deleted after the TTL"
[ -n "$(k get rayjob http-ok -o name)" ] || fail "the RayJob itself stays"
pass "HTTPMode: Complete with one submission, cluster deleted after ttlSecondsAfterFinished"

# --- K8sJobMode: KubeRay's submitter Job on the local node
wait_state k8s-ok Complete
expect_eq "SUCCEEDED" "$(jst k8s-ok jobStatus)" "k8s-ok jobStatus"
args=$(k get job k8s-ok -o jsonpath='{.spec.template.spec.containers[0].args[0]}')
expect_contains "$args" "ray job submit --address http://$(jst k8s-ok rayClusterName)-head-svc.default.svc.cluster.local:8265" "submitter command"
expect_contains "$args" "--no-wait --submission-id $(jst k8s-ok jobId) -- python -c" "submitter command"
expect_contains "$args" "ray job logs --address" "submitter follows the logs"
env=$(k get job k8s-ok -o jsonpath='{range .spec.template.spec.containers[0].env[*]}{.name}={.value} {end}')
expect_contains "$env" "RAY_JOB_SUBMISSION_ID=$(jst k8s-ok jobId)" "submitter env"
expect_contains "$env" "RAY_DASHBOARD_ADDRESS=$(jst k8s-ok dashboardURL)" "submitter env"
expect_eq "2 RayJob" "$(k get job k8s-ok -o jsonpath='{.spec.backoffLimit} {.metadata.ownerReferences[0].kind}')" "submitter Job"
k wait --for=condition=complete job/k8s-ok --timeout=20s >/dev/null || fail "submitter Job not complete"
expect_contains "$(k logs job/k8s-ok)" "submitted successfully" "submitter logs"
k wait --for=delete "raycluster/$(jst k8s-ok rayClusterName)" --timeout=15s >/dev/null || fail "k8s-ok cluster not deleted"
[ -n "$(k get job k8s-ok -o name)" ] || fail "the submitter Job stays after cleanup"
pass "K8sJobMode: the submitter's ray job submit, Complete, cluster cleaned up, submitter kept"

# --- InteractiveMode: Waiting until the user names the job
wait_state int-ok Waiting
ic=$(jst int-ok rayClusterName)
k get --raw "/api/v1/namespaces/default/services/$ic-head-svc:8265/proxy/api/jobs/" >/dev/null
python3 - "$ic" <<'PY' || fail "submitting to the interactive cluster"
import json, sys, vrtest
c = vrtest.https()
body = json.dumps({"entrypoint": "echo hi", "submission_id": "mine-1",
                   "metadata": {"volray.io/sim-duration": "500ms"}})
c.request("POST", f"/api/v1/namespaces/default/services/{sys.argv[1]}-head-svc:8265/proxy/api/jobs/",
          body, {**vrtest.HEADERS, "Content-Type": "application/json"})
r = c.getresponse(); r.read()
sys.exit(0 if r.status == 200 else 1)
PY
k patch rayjob int-ok --type=merge -p '{"spec":{"jobId":"mine-1"}}' >/dev/null
wait_state int-ok Complete
expect_eq "mine-1 SUCCEEDED" "$(jst int-ok jobId) $(jst int-ok jobStatus)" "interactive job"
pass "InteractiveMode: Waiting, then the user's job id to Complete"

# --- a failing entrypoint
wait_state fail Failed
expect_eq "AppFailed FAILED 1" "$(jst fail reason) $(jst fail jobStatus) $(jst fail failed)" "failed job"
pass "a failing entrypoint: Failed with AppFailed"

# --- backoffLimit: a fresh cluster per attempt
wait_state retry Failed 40
expect_eq "AppFailed 2" "$(jst retry reason) $(jst retry failed)" "retry counters"
kill $retry_watch 2>/dev/null; wait $retry_watch 2>/dev/null || true
expect_eq 2 "$(grep '^ADDED' "$WORK/retry.out" | sort -u | grep -c .)" "two clusters for two attempts"
expect_eq 2 "$(sed -n 's/^ADDED //p' "$WORK/retry.out" | sort -u | grep -c .)" "two distinct cluster names"
pass "backoffLimit 1: two attempts on two clusters, then Failed"

# --- activeDeadlineSeconds (not retried)
wait_state deadline Failed 20
expect_eq "DeadlineExceeded 1" "$(jst deadline reason) $(jst deadline failed)" "deadline"
expect_contains "$(jst deadline message)" "activeDeadlineSeconds" "deadline message"
pass "activeDeadlineSeconds: Failed with DeadlineExceeded, no retry"

# --- created suspended: no cluster until resumed
wait_state susp Suspended
expect_eq "" "$(k get rayclusters -l ray.io/originated-from-cr-name=susp -o name)" "no cluster while suspended"
k patch rayjob susp --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
wait_state susp Complete
pass "created suspended: Suspended with no cluster, resumed to Complete"

# --- deletion rules: workers first, then the RayJob itself
rayjob rules HTTPMode '  metadata: {volray.io/sim-duration: 500ms}
  deletionStrategy:
    deletionRules:
    - {policy: DeleteWorkers, condition: {jobStatus: SUCCEEDED}}
    - {policy: DeleteSelf, condition: {jobStatus: SUCCEEDED, ttlSeconds: 4}}'
wait_state rules Complete
rc=$(jst rules rayClusterName)
k wait --for=jsonpath='{.spec.workerGroupSpecs[0].suspend}'=true "raycluster/$rc" --timeout=10s >/dev/null ||
	fail "DeleteWorkers did not suspend the workers"
k wait --for=delete rayjob/rules --timeout=15s >/dev/null || fail "DeleteSelf did not delete the RayJob"
pass "deletionRules: DeleteWorkers at once, DeleteSelf after its ttlSeconds"

# --- deleting a running RayJob stops its Ray job
wait_state stopme Running
sc=$(jst stopme rayClusterName)
k wait --for=jsonpath='{.status.jobStatus}'=RUNNING rayjob/stopme --timeout=20s >/dev/null || fail "stopme RUNNING"
expect_eq "ray.io/rayjob-finalizer" "$(k get rayjob stopme -o jsonpath='{.metadata.finalizers[0]}')" "finalizer"
k delete rayjob stopme --wait=true --timeout=20s >/dev/null || fail "deleting stopme"
expect_eq StoppedJob "$(k get events --field-selector involvedObject.name=stopme,reason=StoppedJob -o jsonpath='{.items[0].reason}')" "stop event"
pass "deleting a running RayJob stops the Ray job, then the finalizer goes"

# --- invalid specs
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: bad-suspend}
spec:
  entrypoint: echo
  suspend: true
  rayClusterSpec: {headGroupSpec: {template: {spec: {containers: [{name: h, image: r}]}}}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: bad-env}
spec:
  entrypoint: echo
  runtimeEnvYAML: "pip: [requests"
  rayClusterSpec: {headGroupSpec: {template: {spec: {containers: [{name: h, image: r}]}}}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: bad-interactive}
spec:
  submissionMode: InteractiveMode
  backoffLimit: 2
  rayClusterSpec: {headGroupSpec: {template: {spec: {containers: [{name: h, image: r}]}}}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: a-rayjob-name-that-is-much-too-long-for-kuberay-x}
spec:
  entrypoint: echo
  rayClusterSpec: {headGroupSpec: {template: {spec: {containers: [{name: h, image: r}]}}}}
YAML
for j in bad-suspend:shouldSuspend bad-env:RuntimeEnvYAML bad-interactive:InteractiveMode \
    a-rayjob-name-that-is-much-too-long-for-kuberay-x:"no more than 47 characters"; do
	name=${j%%:*} want=${j#*:}
	wait_state "$name" ValidationFailed 10
	expect_eq ValidationFailed "$(jst "$name" reason)" "$name reason"
	expect_contains "$(jst "$name" message)" "$want" "$name message"
	expect_eq "" "$(k get rayclusters -l ray.io/originated-from-cr-name="$name" -o name)" "$name has no cluster"
done
expect_eq Warning "$(k get events --field-selector involvedObject.name=bad-env -o jsonpath='{.items[0].type}')" "Warning event"
pass "invalid specs: ValidationFailed with the reason, a Warning Event, no cluster"

# --- clusterSelector: an existing cluster, kept afterwards
k apply -f - >/dev/null <<'YAML'
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: shared}
spec:
  headGroupSpec:
    template: {spec: {nodeSelector: {volray.io/runtime: virtual}, containers: [{name: ray-head, image: rayproject/ray}]}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: selected}
spec:
  submissionMode: HTTPMode
  entrypoint: echo
  metadata: {volray.io/sim-duration: 500ms}
  clusterSelector: {ray.io/cluster: shared}
YAML
wait_state selected Complete
expect_eq shared "$(jst selected rayClusterName)" "selected cluster"
[ -n "$(k get raycluster shared -o name)" ] || fail "the selected cluster stays"
pass "clusterSelector: the job runs on the existing cluster, which stays"

# --- the upstream samples are accepted and start
ns=upstream
k create namespace $ns >/dev/null
for f in "$SAMPLES"/kuberay/ray-job.*.yaml; do
	out=$(k apply -n $ns -f "$f" 2>&1) || fail "upstream $(basename "$f") refused: $out"
done
for j in $(k get rayjobs -n $ns -o jsonpath='{.items[*].metadata.name}'); do
	k wait -n $ns --for=jsonpath='{.status.jobDeploymentStatus}'=Initializing rayjob/$j --timeout=10s >/dev/null 2>&1 ||
	k get rayjob -n $ns $j -o jsonpath='{.status.jobDeploymentStatus}' | grep -Eq 'Running|Waiting|Complete' ||
		fail "upstream RayJob $j did not start: $(k get rayjob -n $ns $j -o jsonpath='{.status}')"
done
pass "every upstream RayJob sample is accepted and starts"

# --- Volcano: the RayJob's PodGroup counts the submitter in resources only
vj=$(k get rayjobs -n $ns -l volcano.sh/queue-name -o jsonpath='{.items[0].metadata.name}')
wait_eq "ray-$vj-pg" "RayJob PodGroup" k get podgroup -n $ns "ray-$vj-pg" -o jsonpath='{.metadata.name}'
workers=$(k get rayjob -n $ns "$vj" -o jsonpath='{.spec.rayClusterSpec.workerGroupSpecs[0].replicas}')
expect_eq "$((workers + 1)) RayJob $vj" "$(k get podgroup -n $ns "ray-$vj-pg" -o jsonpath='{.spec.minMember} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')" "minMember excludes the submitter"
# Read the PodGroup first: a job that has ended since (a simulated one runs
# for 1 s) may have had its PodGroup describe the cluster left.
pgjson=$(k get podgroup -n $ns "ray-$vj-pg" -o json)
python3 - "$(k get rayjob -n $ns "$vj" -o json)" "$pgjson" <<'PY' || fail "minResources"
import json, sys
job, pg = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ended = job.get("status", {}).get("jobDeploymentStatus") in ("Complete", "Failed")
def cpu(q):
    q = str(q); return float(q[:-1]) / 1000 if q.endswith("m") else float(q)
spec = job["spec"]["rayClusterSpec"]
def req(t):
    return sum(cpu(c.get("resources", {}).get("requests", c.get("resources", {}).get("limits", {})).get("cpu", 0))
               for c in t["spec"]["containers"])
want = req(spec["headGroupSpec"]["template"]) + sum(
    req(g["template"]) * g.get("replicas", 0) * g.get("numOfHosts", 1) for g in spec.get("workerGroupSpecs", []))
want += 0.5  # the default submitter's request
got = cpu(pg["spec"]["minResources"]["cpu"])
if ended and abs(got - (want - 0.5)) <= 1e-6:
    sys.exit(0)  # the cluster left, without the submitter
if abs(got - want) > 1e-6:
    sys.exit(f"minResources.cpu {got}, want {want}")
PY
expect_eq "kuberay-test-queue" "$(k get podgroup -n $ns "ray-$vj-pg" -o jsonpath='{.spec.queue}')" "queue"
vc=$(k get rayjob -n $ns "$vj" -o jsonpath='{.status.rayClusterName}')
wait_eq "volcano ray-$vj-pg" "cluster pods join the RayJob's PodGroup" \
	k get pods -n $ns -l ray.io/cluster="$vc",ray.io/node-type=head -o jsonpath='{.items[0].spec.schedulerName} {.items[0].metadata.annotations.scheduling\.k8s\.io/group-name}'
expect_eq "" "$(k get podgroup -n $ns "ray-$vc-pg" -o name 2>/dev/null)" "no second PodGroup for the cluster"
k delete namespace $ns --wait=false >/dev/null
pass "Volcano: the RayJob's PodGroup, submitter in minResources only"

# --- SidecarMode: a real entrypoint (python prints hello) beside a local head
rayjob side-ok SidecarMode '' "kubernetes.io/hostname: $node"
wait_state side-ok Complete 40
hp=$(k get pods -l ray.io/cluster="$(jst side-ok rayClusterName)",ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
expect_eq "ray-head ray-job-submitter" "$(k get pod "$hp" -o jsonpath='{.spec.containers[*].name}')" "sidecar container"
logs=$(k logs "$hp" -c ray-job-submitter)
expect_contains "$logs" "submitted successfully" "the sidecar submits"
expect_contains "$logs" "hello" "the sidecar follows the real entrypoint's output"
pass "SidecarMode: the head's submitter container runs the job to Complete"

# --- kill -9 mid-Initializing: one cluster, one submission
# Its worker fits nowhere yet, so the cluster is not ready.
WORKER_CPU=40 rayjob crash HTTPMode '  metadata: {volray.io/sim-duration: 1s}'
wait_state crash Initializing
c1=$(jst crash rayClusterName)
id1=$(jst crash jobId)
k wait --for=jsonpath='{.metadata.name}'="$c1" "raycluster/$c1" --timeout=10s >/dev/null || fail "crash cluster"
stop_daemon KILL
start_daemon
"$top_builddir/volray" node add --virtual --count 1 --cpu 64 --memory 64Gi --name-prefix big >/dev/null
wait_state crash Running 30
stop_daemon KILL
start_daemon
wait_state crash Complete 30
expect_eq "$c1 $id1" "$(jst crash rayClusterName) $(jst crash jobId)" "the same names after two kill -9"
expect_eq "$c1" "$(k get rayclusters -l ray.io/originated-from-cr-name=crash -o jsonpath='{.items[*].metadata.name}')" "one cluster"
expect_eq "$id1" "$(jobs_on "$c1")" "one submission"
pass "kill -9 while Initializing and Running: one cluster, one submission"
