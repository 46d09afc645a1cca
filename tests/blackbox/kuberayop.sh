#!/bin/sh
# KubeRay's own operator against volrayd (issue 39): volrayd runs every
# controller but its Ray ones (--controllers '*,-raycluster,-rayjob,
# -rayservice') on simulated nodes, and the real ray-operator from
# scripts/anchors.sh (KubeRay v1.6.2, the newest on the Go module proxy;
# client-go 0.35, whose informers list through streaming watch-lists by
# default: KUBE_FEATURE_WatchListClient is left unset) manages the Ray
# kinds, as the ServiceAccount kuberay-operator with the ClusterRole of
# KubeRay's config/rbac/role.yaml (from the module, in the anchors' Go
# module cache; as the admin when it is not there). It reaches the Ray
# dashboards with --use-kubernetes-proxy, through the API server's service
# proxy, where volrayd's simulated nodes emulate the heads.
#
# Checked: the operator's informers sync through watch-lists (the
# initial-events-end bookmarks volrayd counts in
# volray_watch_lists_total) with no failed list or watch and no RBAC
# refusal; KubeRay 1.7's sample RayCluster gets status.state ready, its
# head and worker pods Running on simulated nodes, status.endpoints
# naming the head Service's ports; the service proxy reaches the emulated
# head's dashboard; the cluster's status is not rewritten once ready; the
# sample RayJob (K8sJobMode: KubeRay's submitter Job, whose ray job submit
# the simulated node runs against the head) reaches Complete / SUCCEEDED;
# so do the SidecarMode sample and an HTTPMode RayJob (submitted by the
# operator through the service proxy); the sample RayService gets Ready, its applications RUNNING on the
# emulated head's Serve API and its serve Service answering through the
# service proxy; the operator deletes a worker named in workersToDelete
# and a suspended group's workers; deleting the RayCluster deletes its pods (volrayd's
# garbage collector, KubeRay's ownerReferences).
#
# What differed and was fixed in volrayd:
# - Watch-lists (sendInitialEvents=true, resourceVersionMatch=NotOlderThan,
#   allowWatchBookmarks): volrayd sent the ADDED events but never the
#   k8s.io/initial-events-end bookmark, so client-go 0.35's caches never
#   synced and the operator's controllers never started (it ran only with
#   KUBE_FEATURE_WatchListClient=false). Now served as kube-apiserver 1.34
#   serves them (watchlist.sh).
# - A Service port's targetPort of 0 (client-go's typed clients send an
#   unset IntOrString as 0, as KubeRay's head Service does) was stored as
#   0 where kube-apiserver defaults it to the port: the service proxy had
#   no endpoint for the dashboard (503, so the operator never saw its
#   RayJob's Ray job), and RayCluster status.endpoints stayed empty, which
#   KubeRay took for a status change every reconcile (a status write
#   every 2 s).
# - KubeRay 1.6's SidecarMode submitter container has an empty
#   RAY_DASHBOARD_ADDRESS (its RayJob's dashboardURL, not yet set) and
#   `ray job submit --address http://127.0.0.1:8265`: volrayd's simulated
#   node took only the env variable for the head's address, so the
#   sidecar was never taken for a submitter and ran forever. The command
#   line's literal --address now comes first, as Ray's CLI has it.
# - controller-runtime's client sends built-in kinds in protobuf, and so
#   the DeleteOptions body of its DELETEs: volrayd decoded protobuf
#   objects but read a DELETE's body as JSON only, so every delete of a
#   pod, Service or Job by the operator was a 400 ("invalid DeleteOptions:
#   json parse error"; a worker in workersToDelete, a suspended group, the
#   deletion rules' DeleteWorkers). DeleteOptions are decoded now.
# Left as they are (they stop nothing): the emulated dashboard reports
# its own Ray version (2.46.0) rather than the image's; events.k8s.io/v1
# Events are not served (KubeRay records core v1 Events); a write
# without fieldManager gets no managedFields entry, where kube-apiserver
# names its manager after the User-Agent; the operator logs a few 409
# conflicts while its cache catches up with its own writes, as it does
# against kube-apiserver; an HTTPMode job without volray.io/sim-duration
# in its spec.metadata runs until stopped (the emulated head has only the
# job's metadata; KubeRay's submitter Job, simulated, falls back on the
# RayJob's annotation, else 1 s).
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh
need_samples
K17=$SAMPLES/kuberay-1.7
bin=$("$anchors" path kuberay-operator 2>/dev/null) ||
	skip "kuberay-operator is not built (scripts/anchors.sh build kuberay-operator needs the Go module proxy)"
# DIR/kuberay-operator/VERSION/bin/kuberay-operator; the module's source
# is in DIR/go-mod.
version=$(basename "$(dirname "$(dirname "$bin")")")
role=$(dirname "$(dirname "$(dirname "$(dirname "$bin")")")")/go-mod/github.com/ray-project/kuberay/ray-operator@$version/config/rbac/role.yaml

cat >"$WORK/tokens.csv" <<'EOF'
kuberay-operator-token,system:serviceaccount:default:kuberay-operator,2001,"system:serviceaccounts,system:serviceaccounts:default"
EOF
start_daemon --token-auth-file "$WORK/tokens.csv" \
	--controllers='*,-raycluster,-rayjob,-rayservice'
"$top_builddir/volray" node add --virtual --count 3 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"

opkc=$DATA/kubeconfig
who="the admin"
if [ -r "$role" ]; then
	k create serviceaccount kuberay-operator >/dev/null || fail "the ServiceAccount"
	k apply -f "$role" >/dev/null || fail "KubeRay's ClusterRole ($role)"
	k create clusterrolebinding kuberay-operator --clusterrole=kuberay-operator \
		--serviceaccount=default:kuberay-operator >/dev/null || fail "the ClusterRoleBinding"
	opkc=$WORK/operator.kubeconfig
	sed "s|^\( *token:\).*|\1 kuberay-operator-token|" "$DATA/kubeconfig" >"$opkc"
	chmod 600 "$opkc"
	who="ServiceAccount kuberay-operator (KubeRay's ClusterRole)"
fi

metric() {
	curl -fs "$API/metrics" | sed -n "s/^$1 //p"
}
lists0=$(metric volray_watch_lists_total)
env -u KUBE_FEATURE_WatchListClient "$anchors" kuberay-operator start \
	"$WORK/operator" --kubeconfig "$opkc" >"$WORK/operator.log" 2>&1 &
OP=$!
KILL_PIDS="$KILL_PIDS $OP"
# oplog: the operator's log, without its (long) Go stack traces.
oplog() {
	grep -v '^	\|^sigs.k8s.io\|^k8s.io\|^github.com\|^main\.' "$WORK/operator.log" || true
}
# Each controller logs "Starting workers" once its informers have synced.
i=0
until [ "$(grep -c 'Starting workers' "$WORK/operator.log")" -ge 3 ]; do
	i=$((i + 1))
	kill -0 $OP 2>/dev/null || fail "the operator exited: $(oplog | tail -n 20)"
	[ $i -lt 1200 ] || fail "the operator's caches did not sync in 120 s: $(oplog | tail -n 20)"
	sleep 0.1
done
for c in RayCluster RayJob RayService; do
	grep -q "controllers.$c	Starting workers" "$WORK/operator.log" ||
		fail "the $c controller did not start: $(oplog | tail -n 20)"
done
lists=$(($(metric volray_watch_lists_total) - lists0))
# Pods, Services, Secrets, Jobs, RayClusters, RayJobs, RayServices at least.
[ "$lists" -ge 7 ] || fail "the operator's informers made $lists watch-lists (want 7 or more)"
pass "KubeRay's operator $version as $who: its caches sync through $lists watch-lists"

k apply -f "$K17/ray-cluster.sample.yaml" >/dev/null || fail "apply the sample RayCluster"
k wait --for=jsonpath='{.status.state}'=ready raycluster/raycluster-kuberay --timeout=120s >/dev/null ||
	fail "raycluster-kuberay not ready: $(k get raycluster raycluster-kuberay -o jsonpath='{.status}'); operator: $(oplog | tail -n 20)"
pods=$(k get pods -l ray.io/cluster=raycluster-kuberay \
	-o jsonpath='{range .items[*]}{.metadata.labels.ray\.io/node-type} {.status.phase} {.spec.nodeName}{"\n"}{end}' | sort)
expect_eq 2 "$(echo "$pods" | wc -l)" "the RayCluster's pods ($pods)"
echo "$pods" | while read -r type phase node; do
	[ "$phase" = Running ] || fail "the $type pod is $phase"
	expect_eq virtual "$(k get node "$node" -o jsonpath='{.metadata.labels.volray\.io/runtime}')" \
		"the $type pod's node $node"
done
expect_eq "head
worker" "$(echo "$pods" | cut -d' ' -f1)" "the pods' node types"
expect_eq 8265 "$(k get svc raycluster-kuberay-head-svc -o jsonpath='{.spec.ports[?(@.name=="dashboard")].targetPort}')" \
	"the head Service's dashboard targetPort (0 from KubeRay, defaulted to the port)"
expect_eq 8265 "$(k get raycluster raycluster-kuberay -o jsonpath='{.status.endpoints.dashboard}')" \
	"status.endpoints.dashboard"
pass "the sample RayCluster is ready: head and worker Running on simulated nodes"

proxy=$API/api/v1/namespaces/default/services/raycluster-kuberay-head-svc:dashboard/proxy
out=$(curl -fs "$proxy/api/version") || fail "the service proxy to the dashboard: $out"
expect_contains "$out" '"ray_version"' "the head's /api/version through the service proxy"
out=$(curl -fs "$proxy/api/jobs/") || fail "the service proxy to /api/jobs/: $out"
expect_eq "[]" "$out" "the head's jobs"
pass "the service proxy reaches the emulated head's dashboard"

rv=$(k get raycluster raycluster-kuberay -o jsonpath='{.metadata.resourceVersion}')
k apply -f "$K17/ray-job.sample.yaml" >/dev/null || fail "apply the sample RayJob"
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/rayjob-sample --timeout=120s >/dev/null ||
	fail "rayjob-sample not Complete: $(k get rayjob rayjob-sample -o jsonpath='{.status}'); operator: $(oplog | tail -n 20)"
expect_eq SUCCEEDED "$(k get rayjob rayjob-sample -o jsonpath='{.status.jobStatus}')" "the RayJob's jobStatus"
expect_eq 1 "$(k get job rayjob-sample -o jsonpath='{.status.succeeded}')" "the submitter Job's succeeded"
rc=$(k get rayjob rayjob-sample -o jsonpath='{.status.rayClusterName}')
expect_eq raycluster-kuberay "$(k get raycluster -o jsonpath='{.items[?(@.metadata.name=="raycluster-kuberay")].metadata.name}')" \
	"raycluster-kuberay still there"
expect_eq "$rv" "$(k get raycluster raycluster-kuberay -o jsonpath='{.metadata.resourceVersion}')" \
	"raycluster-kuberay's resourceVersion while the RayJob ran (a status rewritten every reconcile?)"
pass "the sample RayJob reaches Complete / SUCCEEDED on its RayCluster $rc; the ready cluster's status stays unwritten meanwhile"

# SidecarMode (the sample): the submitter is a container of the head pod,
# `ray job submit --address http://127.0.0.1:8265`. HTTPMode: the
# operator submits through the service proxy itself (create on
# services/proxy); the job's spec.metadata says how long it runs.
k apply -f "$K17/ray-job.sidecar-mode.yaml" >/dev/null || fail "apply the SidecarMode RayJob"
k apply -f - >/dev/null <<'YAML' || fail "apply the HTTPMode RayJob"
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: http}
spec:
  submissionMode: HTTPMode
  entrypoint: python -c "print(1)"
  metadata: {volray.io/sim-duration: 1s}
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
            ports: [{containerPort: 8265, name: dashboard}]
            resources: {requests: {cpu: "1", memory: 1Gi}}
YAML
for j in rayjob-sidecar-mode http; do
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete "rayjob/$j" --timeout=120s >/dev/null ||
		fail "$j not Complete: $(k get rayjob "$j" -o jsonpath='{.status}'); operator: $(oplog | tail -n 20)"
	expect_eq SUCCEEDED "$(k get rayjob "$j" -o jsonpath='{.status.jobStatus}')" "$j's jobStatus"
done
pass "a SidecarMode RayJob (the sample) and an HTTPMode one reach Complete / SUCCEEDED"

k apply -f "$K17/ray-service.sample.yaml" >/dev/null || fail "apply the sample RayService"
k wait --for=condition=Ready rayservice/rayservice-sample --timeout=120s >/dev/null ||
	fail "rayservice-sample not Ready: $(k get rayservice rayservice-sample -o jsonpath='{.status}'); operator: $(oplog | tail -n 20)"
expect_eq "RUNNING RUNNING" "$(k get rayservice rayservice-sample -o jsonpath='{.status.activeServiceStatus.applicationStatuses.*.status}')" \
	"the RayService's applications"
out=$(curl -fs -XPOST -d '["MANGO", 2]' \
	"$API/api/v1/namespaces/default/services/rayservice-sample-serve-svc:8000/proxy/fruit/") ||
	fail "the serve Service through the service proxy: $out"
expect_contains "$out" '"application":"fruit_app"' "the fruit app through the serve Service"
pass "the sample RayService is Ready, its applications RUNNING, its serve Service answering"

# The operator's own deletes of built-in kinds carry a protobuf
# DeleteOptions body (controller-runtime's typed client): a worker named in
# scaleStrategy.workersToDelete is deleted (and replaced), a suspended
# worker group's pods are deleted as a collection.
workers() {
	kubectl get pods -l ray.io/cluster=raycluster-kuberay,ray.io/node-type=worker \
		-o jsonpath='{.items[*].metadata.name}'
}
w=$(workers)
k patch raycluster raycluster-kuberay --type=json -p "[{\"op\":\"add\",\"path\":\"/spec/workerGroupSpecs/0/scaleStrategy\",\"value\":{\"workersToDelete\":[\"$w\"]}}]" >/dev/null ||
	fail "patch workersToDelete"
k wait --for=delete "pod/$w" --timeout=60s >/dev/null ||
	fail "$w not deleted: $(oplog | tail -n 20)"
wait_eq 1 "the worker group's pods after $w was deleted" sh -c \
	"kubectl get pods -l ray.io/cluster=raycluster-kuberay,ray.io/node-type=worker -o name | wc -l"
k patch raycluster raycluster-kuberay --type=json \
	-p '[{"op":"add","path":"/spec/workerGroupSpecs/0/suspend","value":true}]' >/dev/null ||
	fail "suspend the worker group"
wait_eq "" "the suspended worker group's pods" workers
wait_event raycluster-kuberay DeletedWorkerPod "Deleted all pods for suspended worker group workergroup"
pass "the operator deletes a worker in workersToDelete and a suspended group's workers"

k delete raycluster raycluster-kuberay --wait=true --timeout=60s >/dev/null ||
	fail "delete raycluster-kuberay"
wait_eq 0 "raycluster-kuberay's pods after its deletion" sh -c \
	"kubectl get pods -l ray.io/cluster=raycluster-kuberay -o name | wc -l"
pass "deleting the RayCluster deletes its pods"

kill -0 $OP 2>/dev/null || fail "the operator exited: $(oplog | tail -n 20)"
bad=$(oplog | grep -i 'forbidden\|failed to list\|failed to watch\|the server could not find' || true)
expect_eq "" "$bad" "RBAC refusals or failed lists and watches in the operator's log"
pass "the operator's log has no RBAC refusal and no failed list or watch"
