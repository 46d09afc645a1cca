# bench/anchors.sh sched (sourced by anchors.sh, which says what it
# measures): volray's scheduler against Volcano's vc-scheduler, each alone
# on a fresh volrayd with the same simulated nodes and the same gangs.

if [ "$SMALL" = 1 ]; then
	: "${NODES:=100}" "${PODS:=1000}" "${RUNS_SCHED:=1}"
else
	: "${NODES:=5000}" "${PODS:=50000}" "${RUNS_SCHED:=3}"
fi
: "${GANG:=10}" "${SCHED_WRITERS:=16}" "${VC_PERIOD:=1s}"
VC_CONF_DIR="$TOP/../shared/upstream-samples/volcano-1.15"
VC_CONF=volcano-scheduler.conf
have_vc=1
"$ANCHORS" path vc-scheduler >/dev/null 2>&1 || have_vc=0
[ -f "$VC_CONF_DIR/$VC_CONF" ] || have_vc=0

# HTTPS with volrayd's CA: vc-scheduler's client-go sends no token over
# plain HTTP.
TLS=1
bench_init
RESULTS="$RUN_DIR/results"
: >"$RESULTS"
VC_PID=""
trap 'rc=$?; [ -z "$VC_PID" ] || kill "$VC_PID" 2>/dev/null; (exit $rc); bench_cleanup' EXIT

cat >"$RUN_DIR/gangs.py" <<'PY'
"""Nodes, then gangs of pods, then wait until every pod is bound."""
import http.client, json, os, ssl, sys, threading, time
port, token = int(os.environ["VR_PORT"]), os.environ["VR_TOKEN"]
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
nodes, pods, gang, writers = (int(os.environ[k]) for k in
    ("NODES", "PODS", "GANG", "SCHED_WRITERS"))
step = sys.argv[1]

CTX = ssl.create_default_context(cafile=os.environ["VR_CA"])

def conn():
    return http.client.HTTPSConnection("127.0.0.1", port, timeout=600, context=CTX)

def create_all(path, n, make):
    errors = []
    def work(t):
        c = conn()
        for i in range(t, n, writers):
            c.request("POST", path, json.dumps(make(i)), H)
            r = c.getresponse()
            data = r.read()
            if r.status != 201:
                errors.append((r.status, data[:200]))
                return
    ts = [threading.Thread(target=work, args=(t,)) for t in range(writers)]
    t0 = time.time()
    for t in ts: t.start()
    for t in ts: t.join()
    if errors:
        sys.exit("create failed: %r" % (errors[0],))
    return time.time() - t0

if step == "nodes":
    create_all("/api/v1/nodes", nodes, lambda i: {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "vn-%05d" % i, "labels": {"volray.io/runtime": "virtual"},
                     "annotations": {"volray.io/cpu": "32", "volray.io/memory": "128Gi",
                                     "volray.io/pods": "110"}}})
    # Until every node is Ready (the schedulers skip the others).
    while True:
        c = conn()
        c.request("GET", "/api/v1/nodes", None, H)
        items = json.loads(c.getresponse().read())["items"]
        ready = sum(1 for n in items for k in n.get("status", {}).get("conditions", [])
                    if k["type"] == "Ready" and k["status"] == "True")
        if ready >= nodes:
            break
        time.sleep(0.5)
    sys.exit(0)

# step "gangs": the watch of bound pods first, then the creates.
bound, done = set(), threading.Event()
t_last = [None]
def watch():
    c = conn()
    c.request("GET", "/api/v1/namespaces/default/pods?watch=1&fieldSelector=spec.nodeName!%3D", None, H)
    r = c.getresponse()
    while True:
        line = r.readline()
        if not line:
            break
        e = json.loads(line)
        if e["type"] in ("ADDED", "MODIFIED"):
            bound.add(e["object"]["metadata"]["name"])
            if len(bound) >= pods:
                t_last[0] = time.time()
                done.set()
                return
threading.Thread(target=watch, daemon=True).start()
time.sleep(0.5)
groups = (pods + gang - 1) // gang
t0 = time.time()
create_all("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", groups, lambda i: {
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "pg-%05d" % i},
    "spec": {"minMember": min(gang, pods - i * gang), "queue": "default",
             "minResources": {"cpu": str(min(gang, pods - i * gang)),
                              "memory": "%dGi" % min(gang, pods - i * gang)}}})
secs = create_all("/api/v1/namespaces/default/pods", pods, lambda i: {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p-%06d" % i,
                 "annotations": {"scheduling.k8s.io/group-name": "pg-%05d" % (i // gang),
                                 "volray.io/sim-duration": "1h"}},
    "spec": {"schedulerName": "volcano",
             "containers": [{"name": "c", "image": "busybox",
                             "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})
created = time.time() - t0
if not done.wait(float(os.environ.get("SCHED_TIMEOUT", "1800"))):
    sys.exit("only %d of %d pods bound after %s s" % (len(bound), pods,
             os.environ.get("SCHED_TIMEOUT", "1800")))
total = t_last[0] - t0
print("RESULT seconds=%.2f pods_per_s=%.0f created_s=%.2f create_per_s=%.0f tail_s=%.2f"
      % (total, pods / total, created, pods / created, max(total - created, 0)))
PY

# one SCHEDULER RUN: a fresh volrayd (and vc-scheduler), nodes, then gangs.
one() {
	local who=$1 r=$2 out line
	if [ "$who" = volray ]; then
		VR_EXTRA_ARGS=""
	else
		VR_EXTRA_ARGS="--roles api,controllers,nodes"
	fi
	start_volrayd
	export VR_PORT VR_TOKEN VR_CA NODES PODS GANG SCHED_WRITERS
	VR_TOKEN=$(cat "$RUN_DIR/vr/pki/admin.token")
	VR_CA=$RUN_DIR/vr/pki/ca.crt
	python3 "$RUN_DIR/gangs.py" nodes || die "$who: the nodes"
	if [ "$who" = volcano ]; then
		mkdir -p "$RUN_DIR/vcconf"
		cp "$VC_CONF_DIR/$VC_CONF" "$RUN_DIR/vcconf/"
		KUBE_FEATURE_WatchListClient=false "$ANCHORS" vc-scheduler start "$RUN_DIR/vc" \
		    --kubeconfig "$RUN_DIR/vr/kubeconfig" \
		    --scheduler-conf "$RUN_DIR/vcconf/$VC_CONF" \
		    --schedule-period "$VC_PERIOD" >"$RUN_DIR/vc.log" 2>&1 &
		VC_PID=$!
		PIDS="$PIDS $VC_PID"
		sleep 3
		kill -0 "$VC_PID" 2>/dev/null || { tail -20 "$RUN_DIR/vc.log"; die "vc-scheduler exited"; }
	fi
	wait_quiet
	out=$(python3 "$RUN_DIR/gangs.py" gangs) || {
		echo "$out"
		[ -z "$VC_PID" ] || tail -20 "$RUN_DIR/vc.log"
		die "$who run $r failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-8s run %s: %d pods bound in %6.2f s: %7.0f pods/s (the creates took %6.2f s, %6.0f/s; the last bind %6.2f s after the last create; idle before: %s%%)\n' \
	    "$who" "$r" "$PODS" "$(result_field "$line" seconds)" \
	    "$(result_field "$line" pods_per_s)" "$(result_field "$line" created_s)" \
	    "$(result_field "$line" create_per_s)" "$(result_field "$line" tail_s)" "$IDLE"
	echo "$(result_field "$line" pods_per_s) $(result_field "$line" seconds)" >>"$RUN_DIR/sched-$who"
	if [ -n "$VC_PID" ]; then
		kill "$VC_PID" 2>/dev/null || true
		wait "$VC_PID" 2>/dev/null || true
		VC_PID=""
		rm -rf "$RUN_DIR/vc"
	fi
	stop_volrayd
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# anchors sched: NODES=$NODES (32 CPUs, 128Gi, simulated) PODS=$PODS GANG=$GANG," \
    "SCHED_WRITERS=$SCHED_WRITERS, RUNS_SCHED=$RUNS_SCHED"
echo "# volray $commit ($VOLRAYD, --no-local-node, HTTPS on loopback): its scheduler in volrayd," \
    "policies/scheduler.yaml"
if [ $have_vc = 1 ]; then
	echo "# anchor: vc-scheduler $(basename "$(dirname "$(dirname "$("$ANCHORS" path vc-scheduler)")")")" \
	    "--scheduler-conf $VC_CONF (volcano-1.15 samples) --schedule-period $VC_PERIOD," \
	    "against volrayd --roles api,controllers,nodes"
else
	echo "# vc-scheduler or the Volcano samples missing: volray alone"
fi
for r in $(seq 1 "$RUNS_SCHED"); do
	one volray "$r"
	[ $have_vc = 0 ] || one volcano "$r"
done
echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
read -r vm vlo vhi <<<"$(stats "$RUN_DIR/sched-volray" 1)"
printf 'volray scheduler: %7.0f pods/s (%.0f-%.0f)\n' "$vm" "$vlo" "$vhi"
if [ $have_vc = 1 ]; then
	read -r km klo khi <<<"$(stats "$RUN_DIR/sched-volcano" 1)"
	printf 'vc-scheduler:     %7.0f pods/s (%.0f-%.0f)\n' "$km" "$klo" "$khi"
	echo
	echo "ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", a / b }') volray=$(printf '%.0f' "$vm") anchor=$(printf '%.0f' "$km") unit=pods/s anchor_name=vc-scheduler what=$NODES-nodes-$PODS-gang-pods"
fi
