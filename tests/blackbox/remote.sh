#!/bin/sh
# The roles against a remote API (issue 21): one volrayd serves the API
# alone (--roles api); two replicas of the controllers and the scheduler
# (--kubeconfig, leader election on) and one of the nodes run as its
# clients. The replicas elect one leader per Lease; a Deployment's pods
# (schedulerName volcano) are created by the leading controllers, bound
# by the leading scheduler and run by the nodes process, while a pod of
# the default scheduler is left alone; kill -9 of the controllers' leader hands
# its Lease to the standby, which goes on (a scale-up is carried out).
# kill -9 and a restart of the API: the roles resume by themselves. A
# partition (the API stopped past the renew deadline): the leader steps
# down, supervised replicas take over, one leader per Lease afterwards.
# The CRDs were installed on the API by the first client; with
# --no-install-crds a missing one is named and the process refuses.
. "$(dirname "$0")/lib.sh"

EXTRA=""
trap 'rc=$?; touch "$WORK/stop"; for p in $EXTRA; do kill -9 $p 2>/dev/null || true; done; pkill -9 -f "data-dir $WORK/w" 2>/dev/null || true; (exit $rc); cleanup' EXIT INT TERM

start_daemon --roles api
# role NAME FLAGS...: a volrayd of those roles against the API above.
role() {
	name=$1; shift
	"$VOLRAYD" --data-dir "$WORK/$name" --kubeconfig "$DATA/kubeconfig" \
		--no-local-node ${SHARE_DIR:+--share-dir "$SHARE_DIR"} "$@" \
		>>"$WORK/$name.log" 2>&1 &
	EXTRA="$EXTRA $!"
	eval "PID_$name=$!"
}
ELECT="--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms"
M1=$(free_port)
role w1 --roles controllers,scheduler $ELECT --metrics-listen "127.0.0.1:$M1" --scheduler-listen 127.0.0.1:0
role w2 --roles controllers,scheduler $ELECT --scheduler-listen 127.0.0.1:0
role n1 --roles nodes --node-listen 127.0.0.1:0
holder() {
	k get lease -n kube-system "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true
}
i=0
until [ -n "$(holder volray-controllers)" ] && [ -n "$(holder volray-scheduler)" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || { tail -5 "$WORK"/w1.log; fail "no leaders elected"; }
	sleep 0.1
done
pass "one leader per Lease among the replicas"
for crd in rayjobs.ray.io queues.scheduling.volcano.sh podgroups.scheduling.volcano.sh; do
	k get crd "$crd" >/dev/null 2>&1 || fail "CRD $crd not installed on the API"
done
expect_contains "$(command curl -s "http://127.0.0.1:$M1/metrics")" \
	'volray_leader_is_leader{lease="kube-system/volray-controllers"}' "w1's metrics"
# Its requests by rate-limit bucket: its lists and watches at least.
n=$(command curl -s "http://127.0.0.1:$M1/metrics" |
	sed -n 's/^volray_remote_requests_total{bucket="default"} //p')
[ "${n:-0}" -gt 0 ] || fail "w1's volray_remote_requests_total for its lists and watches: '$n'"
expect_contains "$(command curl -s "http://127.0.0.1:$M1/metrics")" \
	'volray_remote_queued_seconds_total{bucket="events"}' "w1's time in line of its Events"

"$top_builddir/volray" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null ||
	fail "volray node add"
# A pod of the default scheduler is the cluster's, not ours: created
# first, it is still unbound once the scheduler has bound web's pods.
k run other --image=busybox >/dev/null || fail "run other"
k apply -f - >/dev/null <<'YAML' || fail "create deployment"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      schedulerName: volcano
      containers: [{name: c, image: busybox}]
YAML
running() {
	k get pods -l app=web --no-headers 2>/dev/null | grep -c ' Running ' || true
}
wait_running() {
	i=0
	until [ "$(running)" = "$1" ]; do
		i=$((i + 1))
		[ $i -lt "${2:-300}" ] || { k get pods -o wide; k get nodes; tail -n 30 "$WORK/n1.log";
			fail "$1 web pods not Running (have $(running))"; }
		sleep 0.1
	done
}
wait_running 3
for node in $(k get pods -l app=web -o jsonpath='{.items[*].spec.nodeName}'); do
	case "$node" in vnode-*) ;; *) fail "a web pod on '$node'" ;; esac
done
expect_eq "" "$(k get pod other -o jsonpath='{.spec.nodeName}')" "the default scheduler's pod's node"
pass "a Deployment's pods created, bound and run by three client processes"

# What the nodes process and the controllers write goes without waiting
# on their loops (issue 40): each node's Lease (created once
# kube-node-lease is) and Ready status; a NoExecute taint by hand: the
# leading controllers evict the web pods there (the taint manager's
# eviction, with its Event), the nodes process writes their last status
# and deletes them, and their replacements run on the other node.
for node in $(k get nodes -o jsonpath='{.items[*].metadata.name}'); do
	# The first renewal is at the node's own offset in the period.
	i=0
	until [ -n "$(k get lease -n kube-node-lease "$node" -o jsonpath='{.spec.renewTime}' 2>/dev/null)" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || { grep -i lease "$WORK/n1.log" | tail -5; fail "no Lease of node $node"; }
		sleep 0.1
	done
	expect_eq True "$(k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" \
		"node $node's Ready condition"
done
victim=$(k get pods -l app=web -o jsonpath='{.items[0].spec.nodeName}')
on_victim() {
	k get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c "^$victim\$" || true
}
k taint node "$victim" example.com/maint=now:NoExecute >/dev/null || fail "taint $victim"
i=0
until [ "$(on_victim)" = 0 ] && [ "$(running)" = 3 ]; do
	i=$((i + 1))
	[ $i -lt 400 ] || { k get pods -o wide; tail -n 20 "$WORK/n1.log"; fail "web pods still on $victim"; }
	sleep 0.1
done
expect_contains "$(k get events -o jsonpath='{range .items[*]}{.reason};{end}')" \
	"TaintManagerEviction" "the eviction Events"
k taint node "$victim" example.com/maint- >/dev/null || fail "untaint $victim"
pass "Leases and Node statuses from the nodes process; a NoExecute taint's evictions carried out across processes"

# explain through the API: relayed to the leading scheduler's endpoint,
# which its Lease names.
k apply -f - >/dev/null <<'YAML' || fail "create huge"
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "64"}}}]}
YAML
explained() {
	"$top_builddir/volray" explain pod/huge -o json 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["reason"], "Insufficient cpu" in d["message"])' 2>/dev/null || true
}
wait_eq "Unschedulable True" "explain pod/huge through the API" explained
url=$(k get lease -n kube-system volray-scheduler -o jsonpath='{.metadata.annotations.volray\.io/endpoint}')
case "$url" in https://127.0.0.1:[0-9]*) ;; *) fail "the scheduler's Lease advertises '$url'" ;; esac
out=$("$top_builddir/volray" explain pod/web-none 2>&1) && fail "explained a pod that does not exist"
expect_contains "$out" "not found" "explain of a missing pod"
pass "explain through the API from the scheduler of another process ($url)"

# kill -9 the controllers' leader: the standby takes the Lease over.
old=$(holder volray-controllers)
if grep -q "$old: became leader of lease kube-system/volray-controllers" "$WORK/w1.log"; then
	kill -9 "$PID_w1"; standby=w2
else
	kill -9 "$PID_w2"; standby=w1
fi
k scale deployment web --replicas=5 >/dev/null || fail "scale"
wait_running 5 300
new=$(holder volray-controllers)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the Lease is still held by $old"
grep -q "$new: became leader of lease kube-system/volray-controllers" "$WORK/$standby.log" ||
	fail "the new holder $new is not the standby"
expect_eq 5 "$(k get pods -l app=web --no-headers | wc -l | tr -d ' ')" "web pods after the takeover"
pass "kill -9 of the leader: the standby took its Lease and scaled the Deployment"
# The scheduler that leads now (the same or the standby) answers explain.
wait_eq "Unschedulable True" "explain pod/huge after the takeover" explained
k delete pod huge --wait=false >/dev/null

# kill -9 of the API and a restart on the same data dir: the clients'
# watches drop and resume (or list again), and they go on without a
# restart of their own.
stop_daemon KILL
"$VOLRAYD" --data-dir "$DATA" --listen "127.0.0.1:$PORT" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} $STORE_FLAGS --roles api >>"$WORK/volrayd.log" 2>&1 &
DAEMON_PID=$!
i=0
until command curl -fsk "$API/readyz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the API did not come back"; sleep 0.05
done
k scale deployment web --replicas=6 >/dev/null || fail "scale after the restart"
wait_running 6 400
pass "kill -9 and restart of the API: the roles resumed and scaled to 6"

# Partition: the API stopped (SIGSTOP) past the renew deadline, then
# continued. The leader could not renew: it stepped down and exited, as
# kube-scheduler does. Two replicas under a supervisor (a loop that
# starts a volrayd again when it exits) are there to take over: once
# the API is back, each Lease has one holder, that holder is the only
# process that says it leads, and the work goes on.
sup() {
	name=$1; shift
	( while [ ! -e "$WORK/stop" ]; do
		"$VOLRAYD" --data-dir "$WORK/$name" --kubeconfig "$DATA/kubeconfig" \
			--no-local-node ${SHARE_DIR:+--share-dir "$SHARE_DIR"} "$@" || true
	done ) >>"$WORK/$name.log" 2>&1 &
	EXTRA="$EXTRA $!"
}
M3=$(free_port); M4=$(free_port)
sup w3 --roles controllers,scheduler $ELECT --metrics-listen "127.0.0.1:$M3" --scheduler-listen 127.0.0.1:0
sup w4 --roles controllers,scheduler $ELECT --metrics-listen "127.0.0.1:$M4" --scheduler-listen 127.0.0.1:0
eval "old_pid=\$PID_$standby"
i=0
until grep -q "electing on lease" "$WORK/w3.log" 2>/dev/null &&
    grep -q "electing on lease" "$WORK/w4.log" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the supervised replicas did not start"; sleep 0.1
done
kill -STOP "$DAEMON_PID"
sleep 4		# the partition: longer than the renew deadline (2s)
kill -CONT "$DAEMON_PID"
i=0
while kill -0 "$old_pid" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the leader did not step down during the partition"; sleep 0.1
done
leading() {	# how many of w3, w4 say they hold lease $1
	n=0
	for m in $M3 $M4; do
		command curl -s "http://127.0.0.1:$m/metrics" 2>/dev/null |
			grep -q "^volray_leader_is_leader{lease=\"kube-system/$1\"} 1" && n=$((n + 1))
	done
	echo $n
}
i=0
until [ "$(leading volray-controllers)" = 1 ] && [ "$(leading volray-scheduler)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no single leader after the partition"; sleep 0.1
done
k scale deployment web --replicas=7 >/dev/null || fail "scale after the partition"
wait_running 7 400
expect_eq 1 "$(leading volray-controllers)" "holders of volray-controllers"
expect_eq 1 "$(leading volray-scheduler)" "holders of volray-scheduler"
pass "partition: the leader stepped down, one leader per Lease afterwards, work goes on"
touch "$WORK/stop"

# --no-install-crds: a missing CRD is named and nothing starts.
k delete crd queues.scheduling.volcano.sh >/dev/null || fail "delete crd"
out=$("$VOLRAYD" --data-dir "$WORK/x" --kubeconfig "$DATA/kubeconfig" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles scheduler --no-install-crds 2>&1) &&
	fail "--no-install-crds started without the Queue CRD"
expect_contains "$out" "queues.scheduling.volcano.sh" "--no-install-crds's refusal"
pass "--no-install-crds names the missing CRD and refuses"
