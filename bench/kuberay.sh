#!/bin/sh
# KubeRay end to end at scale: N RayJobs (head + 2 workers each, a
# simulated 10 s entrypoint, shutdownAfterJobFinishes) submitted at once
# on NODES simulated nodes, half through each of two Volcano queues, so
# every job is gang-scheduled through its PodGroup. HTTPMode: the RayJob
# controller submits to the head's dashboard itself (a submitter pod on a
# simulated node runs nothing). Prints the time until every RayJob is
# Complete and every cluster and pod is gone, the API writes per RayJob
# (store revisions), volrayd's peak RSS and CPU, and the share of that CPU
# spent in Lua (the VM, and C called from it), and the loops' worst lag.
#   sh bench/kuberay.sh                 N=1000 NODES=500
#   N=200 NODES=100 sh bench/kuberay.sh a smaller run
#   REMOTE=1 sh bench/kuberay.sh        operator mode: one volrayd serves
#       the API, the nodes and the Ray heads (--roles api,nodes,ray), a
#       second runs the controllers and the scheduler against it
#       (--kubeconfig, KUBE_QPS/KUBE_BURST, default 100/200 as KubeRay's);
#       CPU and RSS are the two processes', requests per RayJob the API's
#   REMOTE=ray sh bench/kuberay.sh      only volray's Ray controllers in the
#       second volrayd (--roles controllers --controllers raycluster,
#       rayjob,rayservice, KUBE_QPS/KUBE_BURST); the first runs everything
#       else as with KUBERAY=1 (--controllers '*,-raycluster,-rayjob,
#       -rayservice', the scheduler, the nodes): KUBERAY=1 with volray's
#       Ray controllers in KubeRay's place, the like-for-like of
#       bench/anchors.sh rayjobs
#   KUBERAY=1 sh bench/kuberay.sh       the anchor: KubeRay's own operator
#       (scripts/anchors.sh kuberay-operator, --batch-scheduler=volcano,
#       KUBE_QPS/KUBE_BURST, default 100/200, its own defaults) in place
#       of volray's Ray controllers (--controllers '*,-raycluster,-rayjob,
#       -rayservice'); volray's scheduler and nodes as before; CPU and RSS
#       are volrayd's and the operator's
#   VOLRAYD_FLAGS='--controllers=*,-resourceclaim' sh bench/kuberay.sh
#       more flags for the (first) volrayd, e.g. a controller left out to
#       weigh what it costs
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
N=${N:-1000}
NODES=${NODES:-500}
DURATION=${DURATION:-10s}
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
VOLRAY=$(dirname "$VOLRAYD")/volray
[ -x "$VOLRAYD" ] && [ -x "$VOLRAY" ] || { echo "kuberay.sh: build volrayd and volray first, or set VOLRAYD" >&2; exit 1; }
work=$(mktemp -d /var/tmp/volray-kbench.XXXXXX)
pid=""
pid2=""
trap '[ -z "$pid" ] || kill $pid 2>/dev/null || true; [ -z "$pid2" ] || kill $pid2 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

if [ "${REMOTE:-0}" = 1 ]; then
	ROLES="--roles api,nodes,ray"
elif [ "${KUBERAY:-0}" = 1 ] || [ "${REMOTE:-0}" = ray ]; then
	ROLES="--controllers=*,-raycluster,-rayjob,-rayservice"
else
	ROLES=""
fi
"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" --no-local-node \
	--share-dir "$top" $ROLES ${VOLRAYD_FLAGS:-} 2>"$work/log" &
pid=$!
until curl -fsk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && [ -f "$work/data/kubeconfig" ]; do sleep 0.02; done
mport=$port
if [ "${REMOTE:-0}" = 1 ] || [ "${REMOTE:-0}" = ray ]; then
	OPROLES="--roles controllers,scheduler"
	[ "$REMOTE" = 1 ] || OPROLES="--roles controllers --controllers raycluster,rayjob,rayservice"
	mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$VOLRAYD" --data-dir "$work/ops" --kubeconfig "$work/data/kubeconfig" \
		$OPROLES --leader-elect=false --share-dir "$top" \
		--kube-api-qps "${KUBE_QPS:-100}" --kube-api-burst "${KUBE_BURST:-200}" \
		--metrics-listen "127.0.0.1:$mport" 2>"$work/log2" &
	pid2=$!
	until curl -fs "http://127.0.0.1:$mport/readyz" >/dev/null 2>&1; do sleep 0.05; done
fi
if [ "${KUBERAY:-0}" = 1 ]; then
	"$top/scripts/anchors.sh" kuberay-operator start "$work/op" \
		--kubeconfig "$work/data/kubeconfig" --batch-scheduler=volcano \
		--qps "${KUBE_QPS:-100}" --burst "${KUBE_BURST:-200}" >"$work/op.log" 2>&1 &
	pid2=$!
	i=0
	until [ "$(grep -c 'Starting workers' "$work/op.log")" -ge 3 ]; do
		i=$((i + 1))
		kill -0 $pid2 2>/dev/null && [ $i -lt 1200 ] || { tail -20 "$work/op.log"; exit 1; }
		sleep 0.1
	done
fi
CA="$work/data/pki/ca.crt"
export CA
export KUBECONFIG="$work/data/kubeconfig"
TOKEN=$(cat "$work/data/pki/admin.token")
export TOKEN

metric() {
	curl -fs --cacert "$CA" -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$port/metrics" | sed -n "s/^$1 //p"
}
# The Lua figures: the controllers' process's.
lmetric() {
	if [ "$mport" = "$port" ]; then metric "$1"; else
		curl -fs "http://127.0.0.1:$mport/metrics" | sed -n "s/^$1 //p"; fi
}
requests() {
	curl -fs --cacert "$CA" -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$port/metrics" |
		awk '/^apiserver_request_total/ {n += $2} END {print n + 0}'
}
# Writes to the store: puts and deletes.
writes() {
	curl -fs --cacert "$CA" -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$port/metrics" |
		awk '/^volray_store_writes_total/ {n += $2} END {print n + 0}'
}
cpu_seconds() {
	awk -v hz="$(getconf CLK_TCK)" '{t += ($14 + $15) / hz} END {print t}' "/proc/$pid/stat" ${pid2:+"/proc/$pid2/stat"}
}

"$VOLRAY" node add --virtual --count "$NODES" --cpu 16 --memory 64Gi >/dev/null
kubectl wait --for=condition=Ready node --all --timeout=120s >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q2}
spec: {weight: 1}
YAML

echo "kuberay benchmark: $N RayJobs x (head + 2 workers), $DURATION entrypoint, $NODES simulated nodes, 2 queues ($(nproc) cores)"
w0=$(writes)
q0=$(requests)
c0=$(cpu_seconds)
l0=$(lmetric volray_lua_seconds_total)
a0=$(lmetric volray_lua_api_seconds_total)
t0=$(date +%s.%N)
python3 - "$port" "$N" "$DURATION" <<'PY'
import http.client, json, os, ssl, sys, threading
port, n, duration = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=os.environ["CA"])
auth = "Bearer " + os.environ["TOKEN"]
def pod(name):
    return {"spec": {"containers": [{"name": name, "image": "rayproject/ray:2.46.0",
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
def work(t, nt):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
    for i in range(t, n, nt):
        body = json.dumps({"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": "job-%d" % i, "labels": {"volcano.sh/queue-name": "q%d" % (1 + i % 2),
                                                           "ray.io/scheduler-name": "volcano"}},
            "spec": {"submissionMode": "HTTPMode", "entrypoint": "python work.py",
                     "metadata": {"volray.io/sim-duration": duration},
                     "shutdownAfterJobFinishes": True,
                     "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {}, "template": pod("ray-head")},
                                        "workerGroupSpecs": [{"groupName": "w", "replicas": 2,
                                                              "rayStartParams": {}, "template": pod("ray-worker")}]}}})
        c.request("POST", "/apis/ray.io/v1/namespaces/default/rayjobs", body,
                  {"Content-Type": "application/json", "Authorization": auth})
        r = c.getresponse(); r.read()
        assert r.status == 201, (r.status, r.read())
ts = [threading.Thread(target=work, args=(t, 16)) for t in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
t_sub=$(date +%s.%N)
rss=0
# Done: every RayJob Complete, no RayCluster and no pod left.
while :; do
	r=$(awk '/^VmHWM/ {t += $2} END {print t}' "/proc/$pid/status" ${pid2:+"/proc/$pid2/status"})
	[ "$r" -le "$rss" ] || rss=$r
	done_n=$(curl -fs --cacert "$CA" -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$port/apis/ray.io/v1/rayjobs" |
		python3 -c 'import json,sys; print(sum(1 for i in json.load(sys.stdin)["items"] if i.get("status",{}).get("jobDeploymentStatus")=="Complete"))')
	clusters=$(metric 'volray_objects{resource="rayclusters.ray.io"}')
	pods=$(metric 'volray_objects{resource="pods"}')
	[ "$done_n" = "$N" ] && [ "${clusters:-0}" = 0 ] && [ "${pods:-0}" = 0 ] && break
	printf '\r  complete %5d/%d  clusters %5s  pods %5s ' "$done_n" "$N" "${clusters:-0}" "${pods:-0}" >&2
	[ -z "${DEBUG:-}" ] || kubectl get pods,rayjobs,podgroups -o wide >&2
	sleep 1
done
echo >&2
t1=$(date +%s.%N)
# How late the loops' timers fired at worst: the first process's, then
# (operator mode) the second's.
lag="$(metric volray_loop_lag_max_seconds) s"
[ "$mport" = "$port" ] || lag="$lag; the second process's $(lmetric volray_loop_lag_max_seconds) s"
w1=$(writes)
q1=$(requests)
c1=$(cpu_seconds)
l1=$(lmetric volray_lua_seconds_total)
a1=$(lmetric volray_lua_api_seconds_total)
python3 - "$N" "$t0" "$t_sub" "$t1" "$w0" "$w1" "$c0" "$c1" "$l0" "$l1" "$a0" "$a1" "$rss" "$q0" "$q1" <<'PY'
import sys
n = int(sys.argv[1])
t0, ts, t1, w0, w1, c0, c1, l0, l1, a0, a1, rss, q0, q1 = map(float, sys.argv[2:])
cpu, lua, api = c1 - c0, l1 - l0, a1 - a0
print("submitted in %.1f s; all Complete and cleaned up after %.1f s" % (ts - t0, t1 - t0))
print("API writes %d (%.1f per RayJob); API requests %.1f per RayJob; peak RSS %.0f MB" %
      (w1 - w0, (w1 - w0) / n, (q1 - q0) / n, rss / 1024))
print("volrayd CPU %.1f s; in reconciles %.1f s (%.0f%%): Lua VM %.1f s (%.0f%%), C called from Lua %.1f s" %
      (cpu, lua, 100 * lua / cpu if cpu else 0, lua - api, 100 * (lua - api) / cpu if cpu else 0, api))
PY
echo "loop lag max: $lag"
# Operator mode: the second process's requests by rate-limit bucket, their
# time in line, and the least time the limits allow for them: a bucket
# sends its burst at once and then QPS a second. Events are left out of
# that floor: they are written without waiting, and the run's end does
# not wait for them.
if [ -n "$pid2" ] && [ "${KUBERAY:-0}" != 1 ]; then
	curl -fs "http://127.0.0.1:$mport/metrics" | python3 -c '
import re, sys
qps, burst = float(sys.argv[1]), float(sys.argv[2])
req, q = {}, {}
for line in sys.stdin:
    m = re.match(r"volray_remote_(requests_total|queued_seconds_total)\{bucket=\"([^\"]*)\"\} (\S+)", line)
    if m:
        (req if m.group(1) == "requests_total" else q)[m.group(2)] = float(m.group(3))
top = sorted(req, key=lambda b: -req[b])[:5]
floor = max([(r - burst) / qps for b, r in req.items() if b != "events"] + [0])
print("rate-limit buckets (QPS %g, burst %g): %s; the limits allow no less than %.1f s (Events aside)" % (qps, burst,
      ", ".join("%s %d (%.1f s in line)" % (b, req[b], q.get(b, 0)) for b in top), floor))
' "${KUBE_QPS:-100}" "${KUBE_BURST:-200}"
fi
[ -z "$pid2" ] || { kill $pid2; wait $pid2 2>/dev/null || true; pid2=""; }
kill $pid; wait $pid 2>/dev/null || true
pid=""
