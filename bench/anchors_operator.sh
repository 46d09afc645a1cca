# bench/anchors.sh operator (sourced by anchors.sh, which says what it
# measures): volray's roles against the real kube-apiserver, and KubeRay's
# operator with Volcano's vc-scheduler against the same kind of fresh
# kube-apiserver (scripts/anchors.sh kube-apiserver start: Debian's etcd,
# one member), RAYJOBS gang-scheduled RayJobs end to end.
#
# Each run starts a fresh kube-apiserver and, common to both sides and
# as tests/blackbox/operatorreal.sh runs them (volrayd --kubeconfig, each
# a process):
#   - volray's controllers but the Ray ones (--roles controllers
#     --controllers '*,-raycluster,-rayjob,-rayservice': Jobs, Endpoints,
#     the garbage collector, Queues' status... what kube-controller-manager
#     and vc-controller-manager would do; it installs volray's CRDs),
#   - the nodes and ray roles (--roles nodes,ray): NODES simulated nodes
#     (16 CPUs, 64Gi), their pods and the emulated Ray heads, its endpoint
#     on the address of the default route (kube-apiserver proxies to no
#     loopback address),
# both at lifted client limits (COMMON_QPS/COMMON_BURST, 2000/4000); then
#   volray:  volrayd --roles controllers --controllers raycluster,rayjob,
#            rayservice --batch-scheduler volcano (KUBE_QPS/KUBE_BURST) and
#            volrayd --roles scheduler (SCHED_QPS/SCHED_BURST, 2000/2000,
#            vc-scheduler's defaults, which it gets too), which reach the heads
#            through kube-apiserver's node proxy to the agent;
#   anchor:  KubeRay's ray-operator --use-kubernetes-proxy
#            --batch-scheduler=volcano (--qps KUBE_QPS --burst KUBE_BURST)
#            and vc-scheduler with the helm chart's volcano-scheduler.conf
#            (volcano-1.15 samples; its own client defaults), which reach
#            the heads through kube-apiserver's service proxy: that dials
#            the head pod's IP, where nothing of a simulated pod listens,
#            so the simulated pods' range (10.64.0.0/10) is routed to this
#            machine (ip route add local ... dev lo, root; removed at exit)
#            and bench/headrelay.py takes the dashboard's port there and
#            relays each request to the agent's endpoint, where the head
#            is (its CPU is printed; volray's side pays the node proxy).
# KUBE_QPS/KUBE_BURST default to KubeRay's defaults (100/200). Then
# RAYJOBS RayJobs (head + 2 workers of 1 CPU, HTTPMode, a simulated
# DURATION entrypoint, shutdownAfterJobFinishes, labelled for Volcano and
# two queues, so that each is a PodGroup placed whole) are created by 16
# writers; the wall time runs from the first create until every RayJob is
# Complete and no RayCluster is left (its deletion is the operator's last
# write: no garbage collector runs against kube-apiserver here, it is
# kube-controller-manager's, and volray's runs in its api role, so the
# pods of deleted RayClusters stay, on both sides), and kube-apiserver's
# apiserver_request_total over the run, every client's but the relay's
# lookups (a pod by IP, a node), is divided by RAYJOBS. Runs alternate
# (RUNS_OPERATOR); OP_TIMEOUT (1800 s) bounds a run; SIDES=volray or
# SIDES=kuberay runs one side alone.

if [ "$SMALL" = 1 ]; then
	: "${RAYJOBS:=10}" "${NODES:=10}" "${DURATION:=1s}" "${RUNS_OPERATOR:=1}"
else
	: "${RAYJOBS:=1000}" "${NODES:=500}" "${DURATION:=10s}" "${RUNS_OPERATOR:=3}"
fi
: "${KUBE_QPS:=100}" "${KUBE_BURST:=200}" "${COMMON_QPS:=2000}" "${COMMON_BURST:=4000}"
# Both schedulers at vc-scheduler's defaults.
: "${SCHED_QPS:=2000}" "${SCHED_BURST:=2000}"
: "${OP_TIMEOUT:=1800}"
VC_CONF_DIR="$TOP/../shared/upstream-samples/volcano-1.15"
VC_CONF=volcano-scheduler.conf
SIM_RANGE=10.64.0.0/10
HEAD_PORT=8265
VOLRAY=$(dirname "$VOLRAYD")/volray

# SIDES=volray runs volray's side alone (no anchor but kube-apiserver).
: "${SIDES:=volray kuberay}"
anchor=0
case " $SIDES " in *" kuberay "*) anchor=1 ;; esac
for a in kube-apiserver kuberay-operator vc-scheduler; do
	[ $anchor = 1 ] || [ $a = kube-apiserver ] || continue
	"$ANCHORS" path "$a" >/dev/null 2>&1 || die "$a is not built: scripts/anchors.sh build $a"
done
[ $anchor = 0 ] || [ -f "$VC_CONF_DIR/$VC_CONF" ] || die "no $VC_CONF_DIR/$VC_CONF (the Volcano 1.15 samples)"
[ -x "$VOLRAY" ] || die "no volray beside $VOLRAYD"
command -v etcd >/dev/null 2>&1 || die "no etcd on PATH (Debian's etcd-server)"
IP=$(ip -4 route get 192.0.2.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
case "$IP" in
"" | 127.*) die "no address but loopback (ip route get): kube-apiserver proxies to no loopback address" ;;
esac
if [ $anchor = 1 ]; then
	[ "$(id -u)" = 0 ] || die "the anchor's side routes $SIM_RANGE to this machine: run as root"
	if ip route show table local | grep -q "^local $SIM_RANGE "; then
		die "$SIM_RANGE is routed locally already (another run?): ip route del local $SIM_RANGE dev lo"
	fi
	if ip route show | grep -q "^10\.64\.\|^10\.0\.0\.0/8"; then
		die "$SIM_RANGE or a range holding it is routed on this machine; the relay would take its traffic"
	fi
fi

TLS=1
bench_init
OP_PIDS=""
ROUTED=0
KA=""
op_stop() {
	local p
	for p in $OP_PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $OP_PIDS; do wait "$p" 2>/dev/null || true; done
	OP_PIDS=""
	[ -z "$KA" ] || "$ANCHORS" kube-apiserver stop "$KA" >/dev/null 2>&1 || true
	KA=""
}
trap 'rc=$?; set +e; op_stop; [ $ROUTED = 0 ] || ip route del local $SIM_RANGE dev lo 2>/dev/null; (exit $rc); bench_cleanup' EXIT
cp "$VOLRAYD" "$RUN_DIR/vrbench-server"

# vr NAME ARGS...: a volrayd against kube-apiserver, its log RUN_DIR/NAME.log.
vr() {
	local name=$1
	shift
	"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/$name" --kubeconfig "$KA/kubeconfig" \
	    --no-local-node --share-dir "$SHARE_DIR" --leader-elect=false "$@" \
	    >"$RUN_DIR/$name.log" 2>&1 &
	OP_PIDS="$OP_PIDS $!"
}

# until_ok SECONDS WHAT CMD...: run CMD until it succeeds.
until_ok() {
	local n=$(($1 * 10)) what=$2 i=0
	shift 2
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt $n ] || die "$what: not in $((n / 10)) s"
		sleep 0.1
	done
}

cat >"$RUN_DIR/rayjobs.py" <<'PY'
"""RAYJOBS RayJobs through two queues, then until all are Complete and
no RayCluster is left; prints RESULT seconds= requests=."""
import http.client, json, os, ssl, sys, threading, time
host, port = os.environ["KA_HOST"], int(os.environ["KA_PORT"])
n, duration = int(os.environ["RAYJOBS"]), os.environ["DURATION"]
ctx = ssl.create_default_context(cafile=os.environ["KA_CA"])
H = {"Authorization": "Bearer " + os.environ["KA_TOKEN"], "Content-Type": "application/json"}

def conn():
    return http.client.HTTPSConnection(host, port, context=ctx, timeout=120)

def get(c, path):
    c.request("GET", path, None, H)
    r = c.getresponse()
    body = r.read()
    if r.status != 200:
        sys.exit("GET %s: %d %s" % (path, r.status, body[:200]))
    return body

def requests():
    total = 0.0
    for line in get(conn(), "/metrics").decode().splitlines():
        if line.startswith("apiserver_request_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total

def pod(name):
    return {"spec": {"containers": [{"name": name, "image": "rayproject/ray:2.46.0",
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}

errors = []
def work(t, nt):
    c = conn()
    for i in range(t, n, nt):
        body = json.dumps({"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": "job-%d" % i, "labels": {"volcano.sh/queue-name": "q%d" % (1 + i % 2),
                                                           "ray.io/scheduler-name": "volcano"}},
            "spec": {"submissionMode": "HTTPMode", "entrypoint": "python work.py",
                     "metadata": {"volray.io/sim-duration": duration},
                     "shutdownAfterJobFinishes": True,
                     "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {}, "template": pod("ray-head")},
                                        "workerGroupSpecs": [{"groupName": "w", "replicas": 2, "minReplicas": 2,
                                                              "maxReplicas": 2,
                                                              "rayStartParams": {}, "template": pod("ray-worker")}]}}})
        c.request("POST", "/apis/ray.io/v1/namespaces/default/rayjobs", body, H)
        r = c.getresponse()
        data = r.read()
        if r.status != 201:
            errors.append((r.status, data[:300]))
            return

q0 = requests()
t0 = time.time()
ts = [threading.Thread(target=work, args=(t, 16)) for t in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
if errors:
    sys.exit("create failed: %r" % (errors[0],))
t_sub = time.time()
c = conn()
deadline = t0 + float(os.environ.get("OP_TIMEOUT", "1800"))
while True:
    jobs = json.loads(get(c, "/apis/ray.io/v1/namespaces/default/rayjobs"))["items"]
    done = sum(1 for j in jobs if j.get("status", {}).get("jobDeploymentStatus") == "Complete")
    clusters = len(json.loads(get(c, "/apis/ray.io/v1/namespaces/default/rayclusters?limit=500"))["items"])
    pods = len(json.loads(get(c, "/api/v1/namespaces/default/pods?limit=500"))["items"])
    # No garbage collector runs here: the pods stay (see the header).
    if done == n and clusters == 0:
        break
    sys.stderr.write("\r  complete %5d/%d  clusters %5d  pods %5d " % (done, n, clusters, pods))
    if time.time() > deadline:
        states = {}
        for j in jobs:
            s = "%s/%s" % (j.get("status", {}).get("jobDeploymentStatus"), j.get("status", {}).get("jobStatus"))
            states[s] = states.get(s, 0) + 1
        sys.exit("\nnot done after %s s: %d of %d Complete (%r), %d clusters, %d pods left"
                 % (os.environ.get("OP_TIMEOUT"), done, n, states, clusters, pods))
    time.sleep(1)
t1 = time.time()
sys.stderr.write("\n")
print("RESULT seconds=%.2f submit_s=%.2f requests=%.0f" % (t1 - t0, t_sub - t0, requests() - q0))
PY

# one WHO RUN: a fresh kube-apiserver, the common roles, WHO's side, the RayJobs.
one() {
	local who=$1 r=$2 out line cpu0 cpu1 rpid="" p
	KA=$RUN_DIR/ka
	rm -rf "$KA" "$RUN_DIR"/g "$RUN_DIR"/n "$RUN_DIR"/rc "$RUN_DIR"/s "$RUN_DIR"/op "$RUN_DIR"/vc
	"$ANCHORS" kube-apiserver start "$KA" >"$RUN_DIR/ka-start.log" 2>&1 || {
		cat "$RUN_DIR/ka-start.log"
		die "kube-apiserver did not start"
	}
	export KUBECONFIG=$KA/kubeconfig
	vr g --roles controllers --controllers '*,-raycluster,-rayjob,-rayservice' \
	    --kube-api-qps "$COMMON_QPS" --kube-api-burst "$COMMON_BURST"
	until_ok 60 "volray's CRDs on kube-apiserver" kubectl wait --for=condition=Established \
	    crd/rayjobs.ray.io crd/rayclusters.ray.io crd/podgroups.scheduling.volcano.sh \
	    crd/queues.scheduling.volcano.sh --timeout=1s
	vr n --roles nodes,ray --node-listen "$IP:0" \
	    --kube-api-qps "$COMMON_QPS" --kube-api-burst "$COMMON_BURST"
	"$VOLRAY" node add --virtual --count "$NODES" --cpu 16 --memory 64Gi >/dev/null ||
	    die "volray node add"
	kubectl wait --for=condition=Ready node --all --timeout=120s >/dev/null ||
	    die "the simulated nodes are not Ready"
	kubectl apply -f - >/dev/null <<'YAML' || die "the queues"
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
	until_ok 30 "the queues Open" sh -c \
	    "[ \"\$(kubectl get queue q1 q2 -o jsonpath='{.items[*].status.state}')\" = 'Open Open' ]"
	if [ "$who" = volray ]; then
		local m1 m2
		m1=$(free_port)
		m2=$(free_port)
		vr rc --roles controllers --controllers raycluster,rayjob,rayservice \
		    --batch-scheduler volcano --kube-api-qps "$KUBE_QPS" --kube-api-burst "$KUBE_BURST" \
		    --metrics-listen "127.0.0.1:$m1"
		vr s --roles scheduler --scheduler-listen 127.0.0.1:0 \
		    --kube-api-qps "$SCHED_QPS" --kube-api-burst "$SCHED_BURST" \
		    --metrics-listen "127.0.0.1:$m2"
		until_ok 60 "volray's Ray controllers ready" curl -fs "http://127.0.0.1:$m1/readyz"
		until_ok 60 "volray's scheduler ready" curl -fs "http://127.0.0.1:$m2/readyz"
	else
		python3 "$BENCH_DIR/headrelay.py" "$HEAD_PORT" \
		    "$(sed -n 's/^ *server: //p' "$KA/kubeconfig" | head -1)" "$KA/ca.crt" \
		    "$(cat "$KA/token")" "$KA/kubelet-client.crt" "$KA/kubelet-client.key" \
		    >"$RUN_DIR/relay.log" 2>&1 &
		rpid=$!
		OP_PIDS="$OP_PIDS $rpid"
		local i=0
		until grep -q '^headrelay: watching' "$RUN_DIR/relay.log" 2>/dev/null; do
			i=$((i + 1))
			if [ $i -ge 300 ] || ! kill -0 "$rpid" 2>/dev/null; then
				tail -n 20 "$RUN_DIR/relay.log"
				die "the head relay did not start"
			fi
			sleep 0.1
		done
		mkdir -p "$RUN_DIR/vcconf"
		cp "$VC_CONF_DIR/$VC_CONF" "$RUN_DIR/vcconf/"
		"$ANCHORS" vc-scheduler start "$RUN_DIR/vc" --kubeconfig "$KA/kubeconfig" \
		    --scheduler-conf "$RUN_DIR/vcconf/$VC_CONF" \
		    --kube-api-qps "$SCHED_QPS" --kube-api-burst "$SCHED_BURST" >"$RUN_DIR/vc.log" 2>&1 &
		OP_PIDS="$OP_PIDS $!"
		"$ANCHORS" kuberay-operator start "$RUN_DIR/op" --kubeconfig "$KA/kubeconfig" \
		    --batch-scheduler=volcano --qps "$KUBE_QPS" --burst "$KUBE_BURST" \
		    >"$RUN_DIR/op.log" 2>&1 &
		OP_PIDS="$OP_PIDS $!"
		until_ok 120 "KubeRay's operator's workers" sh -c \
		    "[ \$(grep -c 'Starting workers' '$RUN_DIR/op.log') -ge 3 ]"
	fi
	for p in $OP_PIDS; do
		kill -0 "$p" 2>/dev/null || die "$who: a process exited before the run (logs in $RUN_DIR)"
	done
	wait_quiet
	[ -z "$rpid" ] || cpu0=$(cpu_of "$rpid")
	export KA_HOST=127.0.0.1 KA_CA=$KA/ca.crt KA_TOKEN RAYJOBS DURATION OP_TIMEOUT KA_PORT
	KA_TOKEN=$(cat "$KA/token")
	KA_PORT=$(sed -n 's/^ *server: https:\/\/127.0.0.1://p' "$KA/kubeconfig" | head -1)
	out=$(python3 "$RUN_DIR/rayjobs.py") || {
		echo "$out"
		for f in "$RUN_DIR"/*.log; do echo "---- $f"; grep -v '^	' "$f" | tail -n 8; done
		die "$who run $r failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	local relay="" req lookups=0
	if [ -n "$rpid" ]; then
		cpu1=$(cpu_of "$rpid")
		lookups=$(grep -c '^lookup ' "$RUN_DIR/relay.log" || true)
		relay=$(awk -v a="$cpu0" -v b="$cpu1" -v l="$lookups" \
		    'BEGIN { printf "; the relay used %.1f s of CPU and made %d requests (not counted)", b - a, l }')
	fi
	req=$(awk -v q="$(result_field "$line" requests)" -v l="$lookups" -v n="$RAYJOBS" \
	    'BEGIN { printf "%.1f", (q - l) / n }')
	printf '  %-8s run %s: %d RayJobs Complete, their RayClusters deleted, in %7.1f s (created in %.1f s); %6.1f API requests per RayJob%s (idle before: %s%%)\n' \
	    "$who" "$r" "$RAYJOBS" "$(result_field "$line" seconds)" "$(result_field "$line" submit_s)" \
	    "$req" "$relay" "$IDLE"
	echo "$(result_field "$line" seconds) $req" >>"$RUN_DIR/op-$who"
	op_stop
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
ver() { basename "$(dirname "$(dirname "$("$ANCHORS" path "$1")")")"; }
echo "# anchors operator: RAYJOBS=$RAYJOBS (head + 2 workers, HTTPMode, $DURATION simulated, gangs in 2 Volcano queues)" \
    "NODES=$NODES (16 CPUs, 64Gi, simulated) RUNS_OPERATOR=$RUNS_OPERATOR"
echo "# API server: kube-apiserver $(ver kube-apiserver) on $(etcd --version 2>/dev/null | head -1), fresh each run (scripts/anchors.sh kube-apiserver start)"
echo "# both: volrayd $commit --roles controllers --controllers '*,-raycluster,-rayjob,-rayservice' and --roles nodes,ray" \
    "(--node-listen $IP:0), --kube-api-qps $COMMON_QPS --kube-api-burst $COMMON_BURST"
echo "# volray: volrayd --roles controllers --controllers raycluster,rayjob,rayservice --batch-scheduler volcano" \
    "--kube-api-qps $KUBE_QPS --kube-api-burst $KUBE_BURST; volrayd --roles scheduler --kube-api-qps $SCHED_QPS --kube-api-burst $SCHED_BURST"
[ $anchor = 0 ] || echo "# anchor: KubeRay ray-operator $(ver kuberay-operator) --use-kubernetes-proxy --batch-scheduler=volcano" \
    "--qps $KUBE_QPS --burst $KUBE_BURST; vc-scheduler $(ver vc-scheduler) --scheduler-conf $VC_CONF (volcano-1.15 samples)" \
    "--kube-api-qps $SCHED_QPS --kube-api-burst $SCHED_BURST;" \
    "bench/headrelay.py at the heads' IPs in $SIM_RANGE, port $HEAD_PORT"
if [ $anchor = 1 ]; then
	ip route add local "$SIM_RANGE" dev lo || die "ip route add local $SIM_RANGE dev lo"
	ROUTED=1
fi
for r in $(seq 1 "$RUNS_OPERATOR"); do
	# Who goes first alternates run by run.
	for who in $( ([ $((r % 2)) = 1 ] && echo $SIDES) || echo $SIDES | awk '{ for (i = NF; i; i--) print $i }'); do
		one "$who" "$r"
	done
done

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
row() {
	[ -f "$RUN_DIR/op-$1" ] || return 0
	local m lo hi
	read -r m lo hi <<<"$(stats "$RUN_DIR/op-$1" 1)"
	printf '%-44s | %7.1f s (%.1f-%.1f) | %6.1f API requests per RayJob\n' "$2" "$m" "$lo" "$hi" \
	    "$(stats "$RUN_DIR/op-$1" 2 | cut -d' ' -f1)"
}
row volray "volray (its Ray controllers and scheduler)"
row kuberay "KubeRay operator + vc-scheduler"
[ -f "$RUN_DIR/op-volray" ] && [ -f "$RUN_DIR/op-kuberay" ] || exit 0
vm=$(stats "$RUN_DIR/op-volray" 1 | cut -d' ' -f1)
km=$(stats "$RUN_DIR/op-kuberay" 1 | cut -d' ' -f1)
vq=$(stats "$RUN_DIR/op-volray" 2 | cut -d' ' -f1)
kq=$(stats "$RUN_DIR/op-kuberay" 2 | cut -d' ' -f1)
echo
echo "ratio=$(awk -v a="$vq" -v b="$kq" 'BEGIN { printf "%.2f", b / a }') volray=$vq anchor=$kq unit=requests/RayJob anchor_name=kuberay-operator+vc-scheduler what=$RAYJOBS-rayjobs-on-kube-apiserver-requests"
echo "ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", b / a }') volray=$vm anchor=$km unit=s anchor_name=kuberay-operator+vc-scheduler what=$RAYJOBS-rayjobs-on-kube-apiserver"
