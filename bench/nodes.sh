#!/usr/bin/env bash
# Simulated nodes at scale. Starts volrayd (plain HTTP on loopback, the
# admin's token), creates NODES virtual Nodes, waits until every one is
# Ready and has renewed its Lease, then measures volrayd's CPU and RSS at
# idle over IDLE_S seconds (the targets: under 5% of one core and 200 MB
# for 5,000 nodes). Then creates PODS pods with spec.nodeName spread over
# the nodes from WRITERS connections and, through a watch opened before
# the first create, times how long until every pod has been reported
# Running: pods/s to Running against the API's create rate in the same
# run (the target: at least half). Figures only; it fails only when
# something does not work. With SCHED=1 the pods have no nodeName and
# requests of 1 cpu: volray's scheduler places them (nodes of 64 cpu), and
# the time to Running includes scheduling.
# REMOTE=1: agent mode, kwok's use. One volrayd serves the API (--roles
# api); a second runs the simulated nodes against it (--roles nodes
# --kubeconfig, KUBE_QPS / KUBE_BURST, by default 2000 / 4000: 5,000
# nodes renew 500 Leases a second). CPU and RSS are then both processes'.
# REMOTE=kwok: the same with kwok (the anchor, scripts/anchors.sh) in the
# agent's place: the nodes are annotated kwok.x-k8s.io/node=fake instead
# of labelled volray.io/runtime=virtual, and kwok (its default stages, as
# kwokctl's) keeps them Ready and runs their pods.
#   NODES=5000 PODS=50000 bash bench/nodes.sh      SMALL=1 for a quick run
#   REMOTE=1 NODES=5000 PODS=50000 bash bench/nodes.sh
#   REMOTE=kwok NODES=5000 PODS=50000 bash bench/nodes.sh
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${NODES:=50}" "${PODS:=500}" "${IDLE_S:=3}"
else
	: "${NODES:=5000}" "${PODS:=50000}" "${IDLE_S:=30}"
fi
: "${WRITERS:=16}"

bench_init
AGENT_PID=""
if [ "${REMOTE:-0}" = kwok ]; then
	# HTTPS: kwok's client-go sends no token over plain HTTP.
	TLS=1
	VR_EXTRA_ARGS="--roles api" start_volrayd
	# Node Leases as volray's nodes keep them (40 s); kwok has no QPS
	# flags (its client's limits are its own).
	"$TOP/scripts/anchors.sh" kwok start "$RUN_DIR/kwok" --kubeconfig "$RUN_DIR/vr/kubeconfig" \
	    --node-lease-duration-seconds 40 >"$RUN_DIR/agent.log" 2>&1 &
	AGENT_PID=$!
	PIDS="$PIDS $AGENT_PID"
	sleep 2
	kill -0 "$AGENT_PID" 2>/dev/null || { tail -20 "$RUN_DIR/agent.log"; die "kwok did not start"; }
elif [ "${REMOTE:-0}" = 1 ]; then
	VR_EXTRA_ARGS="--roles api" start_volrayd
	"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/agent" --kubeconfig "$RUN_DIR/vr/kubeconfig" \
	    --roles nodes --no-local-node --node-listen 127.0.0.1:0 --share-dir "$SHARE_DIR" \
	    --kube-api-qps "${KUBE_QPS:-2000}" --kube-api-burst "${KUBE_BURST:-4000}" \
	    >"$RUN_DIR/agent.log" 2>&1 &
	AGENT_PID=$!
	PIDS="$PIDS $AGENT_PID"
	i=0
	until grep -q "the nodes' endpoint on" "$RUN_DIR/agent.log"; do
		i=$((i + 1)); [ $i -lt 300 ] || die "the agent did not start"
		sleep 0.1
	done
else
	start_volrayd
fi
# TLS=1: the writers verify volrayd's certificate (kwok's runs are HTTPS).
if [ "$TLS" = 1 ]; then
	VR_CA=$RUN_DIR/vr/pki/ca.crt
	export VR_CA
fi
echo "# nodes: NODES=$NODES PODS=$PODS WRITERS=$WRITERS IDLE_S=$IDLE_S SCHED=${SCHED:-0} REMOTE=${REMOTE:-0}"
export SCHED REMOTE

rss_mb() { # PID...: summed
	local p
	for p in "$@"; do cat "/proc/$p/status"; done |
	    awk '/^VmRSS:/ { t += $2 } END { printf "%.0f", t / 1024 }'
}

cat >"$RUN_DIR/drive.py" <<'PY'
import http.client, json, os, ssl, sys, threading, time
port, token = int(os.environ["VR_PORT"]), os.environ["VR_TOKEN"]
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
mode, n, writers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 0
CA = os.environ.get("VR_CA")

def conn():
    if CA:
        return http.client.HTTPSConnection("127.0.0.1", port, timeout=120,
            context=ssl.create_default_context(cafile=CA))
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)

def request(c, method, path, body=None):
    c.request(method, path, json.dumps(body) if body is not None else None, H)
    r = c.getresponse()
    data = r.read()
    return r.status, data

def create_all(path, make):
    errors = []
    def work(t):
        c = conn()
        for i in range(t, n, writers):
            code, data = request(c, "POST", path, make(i))
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

KWOK = os.environ.get("REMOTE") == "kwok"

def node(i):
    if KWOK:
        # kwok's own node, as its docs write one: capacity in status.
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "vn-%05d" % i,
                             "labels": {"type": "kwok"},
                             "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                           "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "vn-%05d" % i,
                         "labels": {"volray.io/runtime": "virtual"},
                         "annotations": {"volray.io/cpu": "64",
                                         "volray.io/memory": "256Gi",
                                         "volray.io/pods": "110"}}}

def pod(i):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "p-%06d" % i},
         "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    if os.environ.get("SCHED") == "1":
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    else:
        p["spec"]["nodeName"] = "vn-%05d" % (i % nodes)
    return p

def count_ready():
    c = conn()
    code, data = request(c, "GET", "/api/v1/nodes")
    ready = 0
    for it in json.loads(data)["items"]:
        for cond in it.get("status", {}).get("conditions", []):
            if cond["type"] == "Ready" and cond["status"] == "True":
                ready += 1
    code, data = request(c, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")
    return ready, len(json.loads(data)["items"])

if mode == "nodes":
    secs = create_all("/api/v1/nodes", node)
    print("created %d nodes in %.2f s (%.0f/s)" % (n, secs, n / secs))
    deadline = time.time() + 60
    while True:
        ready, leases = count_ready()
        if ready == n and (leases == n or KWOK):
            break
        if time.time() > deadline:
            sys.exit("only %d Ready, %d leases after 60 s" % (ready, leases))
        time.sleep(0.5)
    print("all %d Ready%s" % (n, "" if KWOK else " with a Lease"))
elif mode == "pods":
    c = conn()
    code, data = request(c, "GET", "/api/v1/namespaces/default/pods?limit=1")
    rv = json.loads(data)["metadata"]["resourceVersion"]
    w = conn()
    w.request("GET", "/api/v1/namespaces/default/pods?watch=true&resourceVersion=%s" % rv,
              headers=H)
    wr = w.getresponse()
    running, done = set(), threading.Event()
    t_last = [0.0]
    def watch():

        while not done.is_set():
            chunk = wr.readline()
            if not chunk:
                break
            line = chunk.strip()
            if not line.startswith(b"{"):
                continue
            ev = json.loads(line)
            o = ev["object"]
            if o.get("status", {}).get("phase") == "Running":
                running.add(o["metadata"]["name"])
                if len(running) == n:
                    t_last[0] = time.time()
                    done.set()
    wt = threading.Thread(target=watch, daemon=True)
    wt.start()
    t0 = time.time()
    secs = create_all("/api/v1/namespaces/default/pods", pod)
    if not done.wait(300):
        sys.exit("only %d of %d pods Running after 300 s" % (len(running), n))
    run_secs = t_last[0] - t0
    print("created %d pods in %.2f s: %.0f creates/s" % (n, secs, n / secs))
    print("all %d Running %.2f s after the first create: %.0f pods/s to Running"
          % (n, run_secs, n / run_secs))
    print("RESULT creates_per_s=%.0f running_per_s=%.0f ratio=%.2f"
          % (n / secs, n / run_secs, (n / run_secs) / (n / secs)))
PY

export VR_PORT VR_TOKEN
VR_TOKEN=$(cat "$RUN_DIR/vr/pki/admin.token")
python3 "$RUN_DIR/drive.py" nodes "$NODES" "$WRITERS" || die "creating nodes"
# Let every node renew at least once more, then measure idle.
sleep 11
c0=$(cpu_of $VR_PID $AGENT_PID)
sleep "$IDLE_S"
c1=$(cpu_of $VR_PID $AGENT_PID)
[ -z "$AGENT_PID" ] || echo "the agent alone: RSS $(rss_mb "$AGENT_PID") MB"
awk -v a="$c0" -v b="$c1" -v s="$IDLE_S" -v n="$NODES" -v r="$(rss_mb $VR_PID $AGENT_PID)" \
    'BEGIN { printf "idle with %d Ready nodes: %.1f%% of one core, RSS %d MB\n", n, (b - a) * 100 / s, r }'
python3 "$RUN_DIR/drive.py" pods "$PODS" "$WRITERS" "$NODES" || die "running pods"
echo "after $PODS pods: RSS $(rss_mb $VR_PID $AGENT_PID) MB${AGENT_PID:+ (the agent $(rss_mb "$AGENT_PID") MB)}"
stop_volrayd
[ -z "$AGENT_PID" ] || { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null || true; }
