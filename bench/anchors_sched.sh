# bench/anchors.sh sched (sourced by anchors.sh, which says what it
# measures): volray's scheduler against Volcano's vc-scheduler, each alone
# on a fresh volrayd with the same simulated nodes and the same gangs; and
# volray's scheduler against kube-scheduler, each alone the same way, on
# the same number of plain pods (no PodGroup, schedulerName
# default-scheduler), which is what kube-scheduler schedules. For each
# size NODES/PODS of SIZES.

if [ -n "${NODES:-}" ] || [ -n "${PODS:-}" ]; then
	: "${SIZES:=${NODES:-5000}/${PODS:-50000}}"
fi
if [ "$SMALL" = 1 ]; then
	: "${SIZES:=100/1000 20/200}" "${RUNS_SCHED:=1}"
else
	: "${SIZES:=5000/50000 500/5000}" "${RUNS_SCHED:=3}"
fi
: "${GANG:=10}" "${SCHED_WRITERS:=16}" "${VC_PERIOD:=1s}"
# kube-scheduler's client at client-go's defaults (QPS 50, burst 100:
# 1,000 s of binds for 50,000 pods) would measure its token bucket alone;
# lifted, as vc-scheduler's are by its defaults (QPS 2000, burst 2000).
: "${KS_QPS:=5000}" "${KS_BURST:=10000}" "${PLAIN:=1}"
VC_CONF_DIR="$TOP/../shared/upstream-samples/volcano-1.15"
VC_CONF=volcano-scheduler.conf
have_vc=1
"$ANCHORS" path vc-scheduler >/dev/null 2>&1 || have_vc=0
[ -f "$VC_CONF_DIR/$VC_CONF" ] || have_vc=0
have_ks=$PLAIN
"$ANCHORS" path kube-scheduler >/dev/null 2>&1 || have_ks=0

# HTTPS with volrayd's CA: vc-scheduler's client-go sends no token over
# plain HTTP.
TLS=1
bench_init
RESULTS="$RUN_DIR/results"
: >"$RESULTS"
VC_PID=""
trap 'rc=$?; set +e; [ -z "$VC_PID" ] || kill "$VC_PID" 2>/dev/null; (exit $rc); bench_cleanup' EXIT
export PLAIN_PODS=0

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
plain = os.environ.get("PLAIN_PODS") == "1"
t0 = time.time()
if not plain:
    create_all("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", groups, lambda i: {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "pg-%05d" % i},
        "spec": {"minMember": min(gang, pods - i * gang), "queue": "default",
                 "minResources": {"cpu": str(min(gang, pods - i * gang)),
                                  "memory": "%dGi" % min(gang, pods - i * gang)}}})
def pod(i):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "p-%06d" % i,
                      "annotations": {"scheduling.k8s.io/group-name": "pg-%05d" % (i // gang),
                                      "volray.io/sim-duration": "1h"}},
         "spec": {"schedulerName": "volcano",
                  "containers": [{"name": "c", "image": "busybox",
                                  "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
    if plain:
        del p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
        del p["spec"]["schedulerName"]
    return p
secs = create_all("/api/v1/namespaces/default/pods", pods, pod)
created = time.time() - t0
if not done.wait(float(os.environ.get("SCHED_TIMEOUT", "1800"))):
    sys.exit("only %d of %d pods bound after %s s" % (len(bound), pods,
             os.environ.get("SCHED_TIMEOUT", "1800")))
total = t_last[0] - t0
print("RESULT seconds=%.2f pods_per_s=%.0f created_s=%.2f create_per_s=%.0f tail_s=%.2f"
      % (total, pods / total, created, pods / created, max(total - created, 0)))
PY

# one WHO RUN: a fresh volrayd (and vc-scheduler or kube-scheduler),
# NODES nodes, then PODS pods: gangs for volray and volcano, plain pods
# for volray-plain and kube-scheduler.
one() {
	local who=$1 r=$2 out line
	case $who in
	volray | volray-plain) VR_EXTRA_ARGS="" ;;
	*) VR_EXTRA_ARGS="--roles api,controllers,nodes" ;;
	esac
	PLAIN_PODS=0
	case $who in volray-plain | kube-scheduler) PLAIN_PODS=1 ;; esac
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
	elif [ "$who" = kube-scheduler ]; then
		KUBE_FEATURE_WatchListClient=false "$ANCHORS" kube-scheduler start "$RUN_DIR/vc" \
		    --kubeconfig "$RUN_DIR/vr/kubeconfig" \
		    --kube-api-qps "$KS_QPS" --kube-api-burst "$KS_BURST" >"$RUN_DIR/vc.log" 2>&1 &
		VC_PID=$!
	fi
	if [ -n "$VC_PID" ]; then
		PIDS="$PIDS $VC_PID"
		sleep 3
		kill -0 "$VC_PID" 2>/dev/null || { tail -20 "$RUN_DIR/vc.log"; die "$who exited"; }
	fi
	wait_quiet
	out=$(python3 "$RUN_DIR/gangs.py" gangs) || {
		echo "$out"
		[ -z "$VC_PID" ] || tail -20 "$RUN_DIR/vc.log"
		die "$who run $r failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-14s run %s: %d %s bound in %6.2f s: %7.0f pods/s (the creates took %6.2f s, %6.0f/s; the last bind %6.2f s after the last create; idle before: %s%%)\n' \
	    "$who" "$r" "$PODS" "$([ $PLAIN_PODS = 1 ] && echo "plain pods" || echo "gang pods")" \
	    "$(result_field "$line" seconds)" \
	    "$(result_field "$line" pods_per_s)" "$(result_field "$line" created_s)" \
	    "$(result_field "$line" create_per_s)" "$(result_field "$line" tail_s)" "$IDLE"
	echo "$(result_field "$line" pods_per_s) $(result_field "$line" seconds)" >>"$RUN_DIR/sched-$who-$NODES"
	if [ -n "$VC_PID" ]; then
		kill "$VC_PID" 2>/dev/null || true
		wait "$VC_PID" 2>/dev/null || true
		VC_PID=""
		rm -rf "$RUN_DIR/vc"
	fi
	stop_volrayd
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# anchors sched: SIZES=\"$SIZES\" (NODES/PODS; nodes of 32 CPUs, 128Gi, simulated; pods of 1 CPU, 1Gi)" \
    "GANG=$GANG, SCHED_WRITERS=$SCHED_WRITERS, RUNS_SCHED=$RUNS_SCHED"
echo "# volray $commit ($VOLRAYD, --no-local-node, HTTPS on loopback): its scheduler in volrayd," \
    "policies/scheduler.yaml"
if [ $have_vc = 1 ]; then
	echo "# anchor: vc-scheduler $(basename "$(dirname "$(dirname "$("$ANCHORS" path vc-scheduler)")")")" \
	    "--scheduler-conf $VC_CONF (volcano-1.15 samples) --schedule-period $VC_PERIOD," \
	    "against volrayd --roles api,controllers,nodes"
else
	echo "# vc-scheduler or the Volcano samples missing: no Volcano runs"
fi
if [ $have_ks = 1 ]; then
	echo "# anchor on plain pods: kube-scheduler $(basename "$(dirname "$(dirname "$("$ANCHORS" path kube-scheduler)")")")" \
	    "(its default profile) --kube-api-qps $KS_QPS --kube-api-burst $KS_BURST," \
	    "against volrayd --roles api,controllers,nodes; volray-plain: volray's scheduler on the same plain pods"
else
	echo "# kube-scheduler missing (or PLAIN=0): no plain-pod runs"
fi
for size in $SIZES; do
	NODES=${size%/*} PODS=${size#*/}
	echo "## $NODES nodes, $PODS pods"
	for r in $(seq 1 "$RUNS_SCHED"); do
		one volray "$r"
		[ $have_vc = 0 ] || one volcano "$r"
		if [ $have_ks = 1 ]; then
			one volray-plain "$r"
			one kube-scheduler "$r"
		fi
	done
done
echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s | %-24s | %-24s | %-24s | %-24s\n' "nodes/pods" "volray, gangs" "vc-scheduler, gangs" \
    "volray, plain pods" "kube-scheduler, plain"
lines=()
last=""
fig() {
	local f=$RUN_DIR/sched-$1-$NODES m lo hi
	if [ -f "$f" ]; then
		read -r m lo hi <<<"$(stats "$f" 1)"
		printf '%7.0f/s (%.0f-%.0f)' "$m" "$lo" "$hi"
	else
		printf -- '-'
	fi
}
med() { stats "$RUN_DIR/sched-$1-$NODES" 1 | cut -d' ' -f1; }
for size in $SIZES; do
	NODES=${size%/*} PODS=${size#*/}
	printf '%-14s | %-24s | %-24s | %-24s | %-24s\n' "$size" "$(fig volray)" "$(fig volcano)" \
	    "$(fig volray-plain)" "$(fig kube-scheduler)"
	if [ $have_ks = 1 ]; then
		vm=$(med volray-plain) km=$(med kube-scheduler)
		lines+=("ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", a / b }') volray=$(printf '%.0f' "$vm") anchor=$(printf '%.0f' "$km") unit=pods/s anchor_name=kube-scheduler what=$NODES-nodes-$PODS-plain-pods")
	fi
	if [ $have_vc = 1 ]; then
		vm=$(med volray) km=$(med volcano)
		line="ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", a / b }') volray=$(printf '%.0f' "$vm") anchor=$(printf '%.0f' "$km") unit=pods/s anchor_name=vc-scheduler what=$NODES-nodes-$PODS-gang-pods"
		# The headline: the first size against vc-scheduler, printed last.
		if [ -z "$last" ]; then last=$line; else lines+=("$line"); fi
	fi
done
echo
for l in ${lines[@]+"${lines[@]}"} ${last:+"$last"}; do
	echo "$l"
done
