#!/usr/bin/env bash
# The scheduler at scale (issue 7's benchmark). NODES simulated nodes (32
# cpu, 128 Gi), QUEUES weighted queues (weight 1..QUEUES), PODS pending
# pods in gang PodGroups of GANG members (minMember GANG, 1 cpu / 1 Gi
# each). Everything is created while the scheduler's policy has only the
# enqueue action (PodGroups are admitted, nothing is bound); then the
# policy file is swapped and reloaded and the clock starts: time until
# every pod is bound, pods/s, the longest session, the share of session
# time spent in Lua, RSS, and the p99 of GET /readyz from a client polling
# it meanwhile (the loop must stay responsive), and the CPU seconds the
# daemon and its loop thread spent meanwhile (steadier than the wall
# clock on a shared machine); then running_s and running_loop_cpu_s, the
# same until the simulated kubelets have written every pod's status (a
# bind's whole cost on the loop, wherever the clock stops). Run twice in the same
# script: the default plugins (priority, gang, conformance; overcommit,
# drf, predicates, proportion, nodeorder) and the floor, a plain greedy
# first fit in C (actions: firstfit). Figures only.
# REMOTE=1: operator mode. One volrayd serves the API and runs the
# simulated nodes (--roles api,nodes); the scheduler runs in a second one
# against it (--roles scheduler --kubeconfig, KUBE_QPS / KUBE_BURST, by
# default 5000 / 10000), whose figures (CPU, RSS, the informer mirror's
# objects) are then the ones printed; the policy is reloaded by SIGHUP.
#   bash bench/sched.sh                       NODES=5000 PODS=50000
#   SMALL=1 bash bench/sched.sh               a quick run
#   REMOTE=1 ONLY=plugins bash bench/sched.sh operator mode
# METRICS_OUT=PREFIX: the API process's /metrics at the end in PREFIX.api
# (and the scheduler's in PREFIX.sched, REMOTE=1).
# SCHED_ARGS: more flags for the daemon that schedules, e.g.
# --explain-sessions=0 (explain_share: the share of session time spent
# recording why jobs wait, for volray explain).
# ONLY=a,b,...: the runs to make, of
#   plugins   the default configuration (above)
#   floor     first fit in C (above)
#   capacity  the default with capacity in place of proportion, each queue
#             deserving an equal part of the cluster
#   topology  the default plus network-topology-aware, nodes in a 3-tier
#             topology (TOPOLOGY=16,8,4: racks of 16 nodes, spines of 8
#             racks, blocks of 4 spines, as HyperNodes the hypernode
#             controller makes from node labels), every PodGroup hard
#             mode within a spine (highestTierAllowed 2), gangs of
#             GANGS=8,16,32,64 pods in turn
#   topofull  hard mode's worst case: the same topology with nodes of
#             NODE_CPU=3 cpus and pods of POD_CPU=2, so a node holds one
#             pod and every rack's free cpu (48) adds up to a gang of 24
#             (GANGS=24) that its 16 nodes cannot hold: each gang is tried
#             in every rack, and undone, before a spine holds it;
#             PODS=4680 (195 gangs, 5 in each of the 39 whole spines;
#             SMALL=1: 96). Run twice: the default
#             configuration on that cluster (topofull-default), then with
#             network-topology-aware (topofull)
#   arrive    the default configuration, its actions on from the start,
#             the pods (and PodGroups, queues) created first with no node
#             at all, then the clock: the NODES nodes created (WRITERS
#             writers) while the scheduler binds, until the last bind
#             (the pods' create rate is setup's "pods at"): the path of a
#             cluster whose nodes come up after its work is queued
#   ONLY=plugins,topology bash bench/sched.sh   topology against default
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${NODES:=100}" "${PODS:=1000}"
else
	: "${NODES:=5000}" "${PODS:=50000}"
fi
: "${GANG:=10}" "${QUEUES:=10}" "${WRITERS:=16}" "${ARRIVE:=}"

bench_init
POL="$RUN_DIR/policy"
mkdir -p "$POL"
echo "# sched: NODES=$NODES PODS=$PODS GANG=$GANG QUEUES=$QUEUES"

cat >"$RUN_DIR/drive.py" <<'PY'
import http.client, json, os, signal, sys, threading, time, urllib.request
port, token = int(os.environ["VR_PORT"]), os.environ["VR_TOKEN"]
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
nodes, pods, gang, queues, writers = (int(os.environ[k]) for k in
    ("NODES", "PODS", "GANG", "QUEUES", "WRITERS"))
node_cpu, pod_cpu = int(os.environ.get("NODE_CPU") or 32), int(os.environ.get("POD_CPU") or 1)

def conn():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=300)

def request(c, method, path, body=None):
    c.request(method, path, json.dumps(body) if body is not None else None, H)
    r = c.getresponse()
    return r.status, r.read()

def create_all(path, n, make):
    errors = []
    def work(t):
        c = conn()
        for i in range(t, n, writers):
            code, data = request(c, "POST", path(i) if callable(path) else path, make(i))
            if code != 201:
                errors.append((code, data[:200]))
                return
    ts = [threading.Thread(target=work, args=(t,)) for t in range(writers)]
    t0 = time.time()
    for t in ts: t.start()
    for t in ts: t.join()
    if errors:
        sys.exit("create failed: %r" % (errors[0],))
    return time.time() - t0

SCHED_METRICS = os.environ.get("SCHED_METRICS")

def metric(name, absent=0.0):
    if SCHED_METRICS and name.startswith(("volray_scheduler_", "volray_remote_")):
        data = urllib.request.urlopen(SCHED_METRICS, timeout=30).read()
    else:
        c = conn()
        code, data = request(c, "GET", "/metrics")
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return absent

TOPOLOGY = [int(x) for x in os.environ.get("TOPOLOGY", "").split(",") if x]
GANGS = [int(x) for x in os.environ.get("GANGS", "").split(",") if x] or [gang]

def node_labels(i):
    labels, size = {"volray.io/runtime": "virtual"}, 1
    for t, n in enumerate(TOPOLOGY):
        size *= n
        labels["volray.io/hypernode-tier%d" % (t + 1)] = "t%d-%d" % (t + 1, i // size)
    return labels

ARRIVE = os.environ.get("ARRIVE") == "1"

def create_nodes():
    return create_all("/api/v1/nodes", nodes, lambda i: {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "vn-%05d" % i, "labels": node_labels(i),
                     "annotations": {"volray.io/cpu": str(node_cpu), "volray.io/memory": "128Gi",
                                     "volray.io/pods": "110"}}})

def setup():
    # ARRIVE: the nodes come in run(), after the pods.
    if not ARRIVE:
        create_nodes()
    # An equal part of the cluster each (capacity reads it; proportion
    # shares by weight).
    create_all("/apis/scheduling.volcano.sh/v1beta1/queues", queues, lambda i: {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
        "metadata": {"name": "q%d" % i},
        "spec": {"weight": i + 1, "deserved": {"cpu": str(nodes * node_cpu // queues),
                                               "memory": "%dGi" % (nodes * 128 // queues)}}})
    # Gangs of the GANGS sizes in turn, until PODS pods.
    sizes, n = [], 0
    while n < pods:
        g = min(GANGS[len(sizes) % len(GANGS)], pods - n)
        sizes.append(g)
        n += g
    owner = []
    for k, g in enumerate(sizes):
        owner += [k] * g
    def group(i):
        g = sizes[i]
        spec = {"minMember": g, "queue": "q%d" % (i % queues),
                "minResources": {"cpu": str(g * pod_cpu), "memory": "%dGi" % g}}
        if TOPOLOGY:
            spec["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
        return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": "pg-%05d" % i}, "spec": spec}
    create_all("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
               len(sizes), group)
    secs = create_all("/api/v1/namespaces/default/pods", pods, lambda i: {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p-%06d" % i,
                     "annotations": {"scheduling.k8s.io/group-name": "pg-%05d" % owner[i],
                                     "volray.io/sim-duration": "1h"}},
        "spec": {"schedulerName": "volcano",
                 "containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": str(pod_cpu), "memory": "1Gi"}}}]}})
    if TOPOLOGY:
        # The hypernode controller makes them from the node labels.
        want, size = 0, 1
        for n in TOPOLOGY:
            size *= n
            want += (nodes + size - 1) // size
        t0 = time.time()
        while True:
            c = conn()
            code, data = request(c, "GET", "/apis/topology.volcano.sh/v1alpha1/hypernodes")
            have = len(json.loads(data).get("items", [])) if code == 200 else 0
            if have >= want:
                break
            if time.time() - t0 > 300:
                sys.exit("only %d of %d HyperNodes after 300 s" % (have, want))
            time.sleep(0.5)
        print("%d HyperNodes in %d tiers" % (want, len(TOPOLOGY)))
    print("created %d nodes, %d queues, %d podgroups, %d pods (pods at %.0f/s)"
          % (0 if ARRIVE else nodes, queues, len(sizes), pods, pods / secs))

def session_seconds():
    # The last session that bound pods (the last one of any kind from a
    # daemon without that gauge: a later idle session can hide it).
    s = metric("volray_scheduler_last_binding_cycle_seconds", None)
    return s if s is not None else metric("volray_scheduler_last_cycle_seconds")

def cpu(path):
    # utime + stime of a process or one of its threads, in seconds
    f = open(path).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

SCHED_PID = os.environ.get("SCHED_PID") or os.environ["VR_PID"]

def cpus():
    pid = SCHED_PID
    return cpu("/proc/%s/stat" % pid), cpu("/proc/%s/task/%s/stat" % (pid, pid))

def api_cpu():
    # the API process's CPU in operator mode (its own figures; 0 embedded)
    return cpu("/proc/%s/stat" % os.environ["VR_PID"]) if os.environ.get("SCHED_PID") else 0.0

def faults():
    # minor page faults of the process (first touches of fresh memory)
    return int(open("/proc/%s/stat" % SCHED_PID).read().rsplit(")", 1)[1].split()[7])

def run():
    lat, stop = [], threading.Event()
    def poll():
        c = conn()
        while not stop.is_set():
            t = time.time()
            request(c, "GET", "/readyz")
            lat.append(time.time() - t)
            time.sleep(0.01)
    b0, lua0, cyc0, ex0 = (metric("volray_scheduler_" + m, 0) for m in
        ("binds_total", "lua_seconds_total", "cycle_seconds_total",
         "explain_seconds_total"))
    w0 = metric("volray_node_pod_status_writes_total")
    p = threading.Thread(target=poll, daemon=True)
    p.start()
    c = conn()
    path = os.environ["POLICY_FILE"]
    conf = open(path).read().replace('actions: "enqueue"',
                                     'actions: "%s"' % os.environ["ACTIONS"])
    t0 = time.time()
    cpu0, loop0 = cpus()
    api0 = api_cpu()
    flt0 = faults()
    if ARRIVE:
        # The policy schedules already; the clock starts with the nodes.
        nodes_s = []
        maker = threading.Thread(target=lambda: nodes_s.append(create_nodes()),
                                 daemon=True)
        maker.start()
    else:
        open(path, "w").write(conf)
        if os.environ.get("SCHED_PID"):
            os.kill(int(SCHED_PID), signal.SIGHUP)
        else:
            code, data = request(c, "POST", "/apis/volray.io/v1/policy/reload", {})
            if code >= 300:
                sys.exit("reload: %d %s" % (code, data[:300]))
    longest = 0.0
    # BIND_TARGET: stop there (a cluster too small for PODS keeps a
    # backlog of pending gangs, which every session then goes through).
    target = int(os.environ.get("BIND_TARGET", pods))
    while True:
        b = metric("volray_scheduler_binds_total") - b0
        longest = max(longest, session_seconds())
        if b >= target:
            break
        if time.time() - t0 > float(os.environ.get("TIMEOUT", "600")):
            code, data = request(c, "GET", "/api/v1/namespaces/default/pods/p-000000")
            st = json.loads(data).get("status", {})
            code, data = request(c, "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg-00000")
            sys.exit("only %d of %d bound after %s s; p-000000: %s; pg-00000: %s"
                     % (b, pods, os.environ.get("TIMEOUT", "600"), st.get("conditions"),
                        json.loads(data).get("status")))
        time.sleep(0.05)
    secs = time.time() - t0
    cpu1, loop1 = cpus()
    api1 = api_cpu()
    flt1 = faults()
    # Then until the simulated kubelets have written every pod's first
    # status (Running): the work a bind sets off on the loop, counted too
    # (a daemon without the metric: at once).
    while (metric("volray_node_pod_status_writes_total", w0 + target) - w0 < target and
           time.time() - t0 < float(os.environ.get("TIMEOUT", "600"))):
        time.sleep(0.05)
    run_secs = time.time() - t0
    cpu2, loop2 = cpus()
    stop.set()
    # The binding session's own figures land when all its writes are
    # done (after the binds): wait for the cycle count to move.
    c_end, t_end = metric("volray_scheduler_cycles_total"), time.time()
    while metric("volray_scheduler_cycles_total") <= c_end and time.time() - t_end < 30:
        time.sleep(0.05)
    longest = max(longest, session_seconds())
    lua = metric("volray_scheduler_lua_seconds_total") - lua0
    cyc = metric("volray_scheduler_cycle_seconds_total") - cyc0
    explain = metric("volray_scheduler_explain_seconds_total", 0) - ex0
    lat.sort()
    p99 = lat[int(len(lat) * 0.99)] * 1000 if lat else 0
    print("RESULT bound=%d seconds=%.2f pods_per_s=%.0f longest_session_s=%.2f "
          "lua_share=%.0f%% readyz_p99_ms=%.1f readyz_samples=%d cpu_s=%.2f loop_cpu_s=%.2f "
          "minor_faults=%d running_s=%.2f running_loop_cpu_s=%.2f explain_share=%.1f%%"
          % (target, secs, target / secs, longest, 100 * lua / cyc if cyc else 0, p99, len(lat),
             cpu1 - cpu0, loop1 - loop0, flt1 - flt0, run_secs, loop2 - loop0,
             100 * explain / cyc if cyc else 0))
    if os.environ.get("METRICS_OUT"):
        # Both processes' /metrics at the end, for a closer look.
        c = conn()
        code, data = request(c, "GET", "/metrics")
        open(os.environ["METRICS_OUT"] + ".api", "wb").write(data)
        if SCHED_METRICS:
            open(os.environ["METRICS_OUT"] + ".sched", "wb").write(
                urllib.request.urlopen(SCHED_METRICS, timeout=30).read())
    if os.environ.get("SCHED_PID"):
        print("API cpu_s=%.2f (the API process, serving the scheduler and the nodes, to the last bind)"
              % (api1 - api0))
    if ARRIVE:
        # The last bind can come before the last node.
        maker.join()
        print("NODES created_s=%.2f (the nodes' creates, while binding)" % nodes_s[0])
    if SCHED_METRICS:
        data = urllib.request.urlopen(SCHED_METRICS, timeout=30).read().decode()
        objs = sum(float(l.split()[1]) for l in data.splitlines()
                   if l.startswith("volray_remote_mirror_objects{"))
        print("MIRROR objects=%d" % objs)

{"setup": setup, "run": run}[sys.argv[1]]()
PY

rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

one_run() { # label actions
	cp "$SHARE_DIR/policies/scheduler.yaml" "$POL/scheduler.yaml"
	[ "$1" = arrive ] || sed -i 's/^actions: .*/actions: "enqueue"/' "$POL/scheduler.yaml"
	case $1 in
	capacity) sed -i 's/name: proportion/name: capacity/' "$POL/scheduler.yaml"
		grep -q "name: capacity" "$POL/scheduler.yaml" || die "no capacity conf" ;;
	topology | topofull) sed -i 's/^\( *\)- name: proportion$/&\n\1- name: network-topology-aware/' "$POL/scheduler.yaml"
		grep -q "name: network-topology-aware" "$POL/scheduler.yaml" || die "no topology conf" ;;
	esac
	SCHED_PID="" SCHED_METRICS=""
	if [ "${REMOTE:-0}" = 1 ]; then
		VR_EXTRA_ARGS="--roles api,nodes" start_volrayd
		local mp
		mp=$(free_port)
		"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/sched" \
		    --kubeconfig "$RUN_DIR/vr/kubeconfig" --roles scheduler \
		    --leader-elect=false --policy-dir "$POL" --share-dir "$SHARE_DIR" \
		    --kube-api-qps "${KUBE_QPS:-5000}" --kube-api-burst "${KUBE_BURST:-10000}" \
		    --metrics-listen "127.0.0.1:$mp" ${SCHED_ARGS:-} >"$RUN_DIR/sched.log" 2>&1 &
		SCHED_PID=$!
		PIDS="$PIDS $SCHED_PID"
		SCHED_METRICS="http://127.0.0.1:$mp/metrics"
		wait_http "http://127.0.0.1:$mp/readyz" 60 ok || die "the scheduler did not start"
	else
		VR_EXTRA_ARGS="--policy-dir $POL ${SCHED_ARGS:-}" start_volrayd
	fi
	export METRICS_OUT VR_PORT VR_TOKEN VR_PID NODES PODS GANG QUEUES WRITERS SCHED_PID SCHED_METRICS ARRIVE \
	    TOPOLOGY GANGS NODE_CPU POD_CPU
	VR_TOKEN=$(cat "$RUN_DIR/vr/pki/admin.token")
	python3 "$RUN_DIR/drive.py" setup || die "setup"
	# PERF=FILE: profile the daemon during the run (perf record -g).
	[ -z "${PERF:-}" ] || { perf record -F 999 ${PERF_ARGS:--g} -p "$VR_PID" -o "$PERF.$1" >/dev/null 2>&1 & PERF_PID=$!; }
	sleep 3	# let enqueue admit the PodGroups (a few cycles)
	# PERF_STAT=FILE: CPU time per thread during the run (perf stat
	# task-clock; the loop is the main thread).
	[ -z "${PERF_STAT:-}" ] || { perf stat -e task-clock --per-thread -p "$VR_PID" -o "$PERF_STAT.$1" >/dev/null 2>&1 & STAT_PID=$!; }
	echo "== $1 (actions: $2)"
	POLICY_FILE="$POL/scheduler.yaml" ACTIONS="$2" python3 "$RUN_DIR/drive.py" run ||
		die "run"
	[ -z "${PERF:-}" ] || { kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true; }
	[ -z "${PERF_STAT:-}" ] || { kill -INT "$STAT_PID"; wait "$STAT_PID" 2>/dev/null || true; }
	if [ -n "$SCHED_PID" ]; then
		echo "RSS $(rss_mb "$VR_PID") MB, the scheduler $(rss_mb "$SCHED_PID") MB"
	else
		echo "RSS $(rss_mb "$VR_PID") MB"
	fi
	# VERBOSE=1: the sessions of the run, as volrayd logged them.
	[ "${VERBOSE:-0}" = 0 ] || grep -E "scheduler: cycle|loop: stalled" "$RUN_DIR/volrayd.log" | tail -n 12
	stop_volrayd
	[ -z "$SCHED_PID" ] || { kill "$SCHED_PID" 2>/dev/null; wait "$SCHED_PID" 2>/dev/null || true; }
}
for run in $(echo "${ONLY:-plugins,floor}" | tr ',' ' '); do
	case $run in
	plugins | capacity) TOPOLOGY="" GANGS="" one_run "$run" "enqueue, allocate, backfill" ;;
	topology) TOPOLOGY=${TOPOLOGY:-16,8,4} GANGS=${GANGS:-8,16,32,64} \
	    one_run topology "enqueue, allocate, backfill" ;;
	topofull)
		full_pods=4680
		[ "$SMALL" = 0 ] || full_pods=96	# 100 nodes: one spine, 4 gangs
		TOPOLOGY=${TOPOLOGY:-16,8,4} GANGS=${FULL_GANGS:-24} NODE_CPU=3 POD_CPU=2 \
		    PODS=$full_pods BIND_TARGET=$full_pods one_run topofull-default "enqueue, allocate, backfill"
		TOPOLOGY=${TOPOLOGY:-16,8,4} GANGS=${FULL_GANGS:-24} NODE_CPU=3 POD_CPU=2 \
		    PODS=$full_pods BIND_TARGET=$full_pods one_run topofull "enqueue, allocate, backfill" ;;
	floor) TOPOLOGY="" GANGS="" one_run floor "firstfit" ;;
	arrive) TOPOLOGY="" GANGS="" ARRIVE=1 one_run arrive "enqueue, allocate, backfill" ;;
	*) die "ONLY: $run is not a run (plugins, floor, capacity, topology, topofull, arrive)" ;;
	esac
done
