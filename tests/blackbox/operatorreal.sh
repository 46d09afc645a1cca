#!/bin/sh
# volray's roles against the real kube-apiserver (issue 39): the anchor
# (scripts/anchors.sh: Debian's etcd and kube-apiserver 1.34.4) is the API
# server; two replicas of volrayd --roles controllers,scheduler elect
# their leaders on real coordination.k8s.io Leases and install volray's
# CRDs, which become Established; a volrayd --roles nodes,ray runs
# simulated nodes (--no-local-node) as a kubelet would. A Volcano Queue,
# then a K8sJobMode and an HTTPMode RayJob (batch scheduler volcano) go
# to Complete / SUCCEEDED gang-scheduled through the queue: a PodGroup,
# pods bound by volray's scheduler, the queue's status. kill -9 of the
# controllers' leader: the standby takes the Lease and a third RayJob
# completes; KubeRay's RayService sample serves (when ../shared has it).
# The controllers reach the emulated heads through kube-apiserver's node
# proxy to the agent (its service proxy dials the pod IP, where a
# simulated head does not listen). The wall time from create to Complete
# of each mode is printed.
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh

"$anchors" path kube-apiserver >/dev/null 2>&1 ||
	skip "kube-apiserver is not built (scripts/anchors.sh build kube-apiserver needs the Go module proxy)"
command -v etcd >/dev/null 2>&1 ||
	skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"

# kube-apiserver's node proxy refuses loopback addresses, so the agent's
# endpoint (the kubelet's port of its simulated Nodes) listens on the
# address the default route leaves by.
IP=$(ip -4 route get 192.0.2.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
case "$IP" in
""|127.*) skip "no address but loopback found (ip route get): kube-apiserver's node proxy refuses loopback, and the Ray heads are reached through it" ;;
esac

A=$WORK/anchor
EXTRA=""
trap 'rc=$?; set +e; for p in $EXTRA; do kill -9 $p 2>/dev/null; done
"$anchors" kube-apiserver stop "$A" >/dev/null 2>&1
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
	for f in "$WORK"/w1.log "$WORK"/w2.log "$WORK"/n1.log; do
		[ -f "$f" ] && { echo "---- $f (last 30 lines)"; tail -n 30 "$f"; }
	done
fi
(exit $rc); cleanup' EXIT INT TERM

"$anchors" kube-apiserver start "$A" >"$WORK/start.log" 2>&1 ||
	fail "kube-apiserver start: $(cat "$WORK/start.log")"
export KUBECONFIG="$A/kubeconfig"

# role NAME FLAGS...: a volrayd of those roles against kube-apiserver.
role() {
	name=$1; shift
	"$VOLRAYD" --data-dir "$WORK/$name" --kubeconfig "$KUBECONFIG" \
		--no-local-node ${SHARE_DIR:+--share-dir "$SHARE_DIR"} "$@" \
		>>"$WORK/$name.log" 2>&1 &
	EXTRA="$EXTRA $!"
	eval "PID_$name=$!"
}
ELECT="--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms"
role w1 --roles controllers,scheduler $ELECT --batch-scheduler volcano --scheduler-listen 127.0.0.1:0
role w2 --roles controllers,scheduler $ELECT --batch-scheduler volcano --scheduler-listen 127.0.0.1:0
role n1 --roles nodes,ray --node-listen "$IP:0"
holder() {
	k get lease -n kube-system "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true
}
i=0
until [ -n "$(holder volray-controllers)" ] && [ -n "$(holder volray-scheduler)" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no leaders elected"
	sleep 0.1
done
for l in volray-controllers volray-scheduler; do
	got=$(k get --raw "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/$l") ||
		fail "lease $l through coordination.k8s.io/v1"
	expect_contains "$got" '"kind":"Lease"' "lease $l"
	expect_contains "$got" '"holderIdentity":"' "lease $l"
done
pass "leaders elected on kube-apiserver's Leases: $(holder volray-controllers), $(holder volray-scheduler)"

n=0
for f in "$top_srcdir"/crds/*.yaml; do
	name=$(sed -n 's/^  name: //p' "$f" | head -n 1)
	k wait --for=condition=Established "crd/$name" --timeout=30s >/dev/null ||
		fail "crd/$name not installed by volrayd or not Established"
	n=$((n + 1))
done
pass "volrayd installed volray's $n CRDs on kube-apiserver; all Established"

"$top_builddir/volray" node add --virtual --count 3 --cpu 8 --memory 32Gi >/dev/null ||
	fail "volray node add"
nodes=$(k get nodes -l volray.io/runtime=virtual -o name)
expect_eq 3 "$(echo "$nodes" | wc -l | tr -d ' ')" "virtual Nodes on kube-apiserver"
for nd in $nodes; do
	k wait --for=condition=Ready "$nd" --timeout=30s >/dev/null ||
		fail "$nd not Ready: $(k get "$nd" -o jsonpath='{.status.conditions}')"
done
pass "the nodes role keeps 3 simulated Nodes Ready on kube-apiserver"

k apply -f - >/dev/null <<'YAML' || fail "create the queue"
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: ml}
spec: {weight: 1, reclaimable: true, capability: {cpu: "12", memory: 48Gi}}
YAML
k wait --for=jsonpath='{.status.state}'=Open queue/ml --timeout=30s >/dev/null ||
	fail "queue ml not Open: $(k get queue ml -o jsonpath='{.status}')"

# rayjob NAME MODE: a RayJob in the queue ml with a head and two workers
# on the simulated nodes; what its job does is simulated (volray.io/sim-*
# in spec.metadata).
rayjob() {
	k apply -f - >/dev/null <<YAML || fail "rayjob $1"
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: $1
  labels: {ray.io/scheduler-name: volcano, volcano.sh/queue-name: ml}
spec:
  submissionMode: $2
  entrypoint: python -c "print('hello')"
  metadata: {volray.io/sim-duration: 1s}
  shutdownAfterJobFinishes: false
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    workerGroupSpecs:
    - groupName: small
      replicas: 2
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray:2.46.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
}
now_ms() { date +%s%3N; }
# complete NAME MODE: create it, wait for Complete, print the wall time.
complete() {
	t0=$(now_ms)
	rayjob "$1" "$2"
	k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete "rayjob/$1" --timeout=120s >/dev/null ||
		fail "$1 ($2) not Complete: $(k get rayjob "$1" -o jsonpath='{.status}')"
	t1=$(now_ms)
	expect_eq SUCCEEDED "$(k get rayjob "$1" -o jsonpath='{.status.jobStatus}')" "$1's job status"
	echo "time: $2 RayJob $1 create to Complete against kube-apiserver: $((t1 - t0)) ms"
}
complete k8s K8sJobMode
complete http HTTPMode

# Gang-scheduled through the queue: a PodGroup per RayJob in queue ml with
# the head and both workers as its minimum, Running; every Ray pod of
# schedulerName volcano bound to a simulated node by volray's scheduler
# (no other scheduler runs against this kube-apiserver; the leader's log
# counts its binds), and the queue's status counts them.
for j in k8s http; do
	pg=ray-$j-pg
	expect_eq "ml 3" "$(k get podgroup "$pg" -o jsonpath='{.spec.queue} {.spec.minMember}')" "$pg's queue and minMember"
	expect_eq Running "$(k get podgroup "$pg" -o jsonpath='{.status.phase}')" "$pg's phase"
	rc=$(k get rayjob "$j" -o jsonpath='{.status.rayClusterName}')
	got=$(k get pods -l "ray.io/cluster=$rc" -o jsonpath='{range .items[*]}{.spec.schedulerName} {.metadata.annotations.scheduling\.k8s\.io/group-name} {.spec.nodeName}{"\n"}{end}')
	expect_eq 3 "$(echo "$got" | grep -c "^volcano $pg vnode-")" "$j's Ray pods bound in $pg: $got"
done
sched=$(holder volray-scheduler)
grep -l "$sched: became leader of lease kube-system/volray-scheduler" "$WORK"/w1.log "$WORK"/w2.log >/dev/null ||
	fail "no replica says it leads the scheduler"
cat "$WORK"/w1.log "$WORK"/w2.log | grep -q "[1-9][0-9]* binds" || fail "volray's scheduler logged no binds"
qst() { k get queue ml -o jsonpath='{.status.allocated.cpu} {.status.running}'; }
wait_eq "6 2" "queue ml's allocated cpu and running PodGroups" qst
q=$(qst)
pass "both RayJobs gang-scheduled through queue ml by volray's scheduler (queue: $q)"

# The dashboards the controllers used: kube-apiserver's node proxy to the
# agent's endpoint, /volray/proxy/NS/POD/8265 (volray.pod_url).
rc=$(k get rayjob http -o jsonpath='{.status.rayClusterName}')
set -- $(k get pods -l "ray.io/cluster=$rc,ray.io/node-type=head" -o jsonpath='{.items[0].metadata.name} {.items[0].spec.nodeName}')
id=$(k get rayjob http -o jsonpath='{.status.jobId}')
got=$(k get --raw "/api/v1/nodes/$2/proxy/volray/proxy/default/$1/8265/api/jobs/$id") ||
	fail "the HTTPMode job through the node proxy"
expect_contains "$got" '"status":"SUCCEEDED"' "the head's job $id"
grep -q "not volrayd: the Ray heads of volray's nodes are reached through its node proxy" "$WORK/w1.log" ||
	fail "w1 did not find kube-apiserver foreign"
# kubectl logs: kube-apiserver to the agent's /containerLogs, as to a kubelet.
out=$(k logs "$1" 2>&1) || fail "kubectl logs $1 through kube-apiserver: $out"
out=$(k logs job/k8s 2>&1) || fail "kubectl logs job/k8s through kube-apiserver: $out"
# volray rayjob logs goes the same way (kube-apiserver's /version is not
# volrayd's).
out=$("$top_builddir/volray" rayjob logs http 2>&1) || fail "volray rayjob logs http: $out"
[ -n "$out" ] || fail "volray rayjob logs http printed nothing"
pass "the head's Jobs API, pods' logs and volray rayjob logs through kube-apiserver to the agent"

# kill -9 of the controllers' leader: the standby takes the Lease (and the
# scheduler's, if the same process held it) and a third RayJob completes.
old=$(holder volray-controllers)
if grep -q "$old: became leader of lease kube-system/volray-controllers" "$WORK/w1.log"; then
	kill -9 "$PID_w1"; standby=w2
else
	kill -9 "$PID_w2"; standby=w1
fi
complete after K8sJobMode
new=$(holder volray-controllers)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the Lease is still held by $old"
grep -q "$new: became leader of lease kube-system/volray-controllers" "$WORK/$standby.log" ||
	fail "the new holder $new is not the standby"
pass "kill -9 of the leader: $standby took kube-apiserver's Lease over and a RayJob completed"

# KubeRay's RayService sample: the Serve applications PUT to the head and
# read back through the same node proxy until they run.
if [ -d "$SAMPLES" ]; then
	svc=rayservice-sample
	t0=$(now_ms)
	k apply -f "$SAMPLES/kuberay/ray-service.sample.yaml" >/dev/null || fail "apply the RayService sample"
	k wait --for=jsonpath='{.status.serviceStatus}'=Running "rayservice/$svc" --timeout=60s >/dev/null ||
		fail "the RayService sample did not start serving: $(k get rayservice $svc -o jsonpath='{.status}')"
	t1=$(now_ms)
	expect_eq RUNNING "$(k get rayservice $svc -o jsonpath='{.status.activeServiceStatus.applicationStatuses.fruit_app.status}')" "fruit_app"
	echo "time: RayService sample create to Running against kube-apiserver: $((t1 - t0)) ms"
	pass "KubeRay's RayService sample serves on the simulated nodes"
fi
