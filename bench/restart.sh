#!/usr/bin/env bash
# The scheduler after a restart (issue 7: "after a restart with 140,000
# existing pods, the time until a new pod is bound"). NODES simulated
# nodes (64 cpu, 256 Gi, 110 pods), PODS pods bound to them at create
# (spec.nodeName) and running for an hour, then `kill -9` of volrayd and
# a restart on the same data dir. Figures: seconds from the restart to
# /readyz 200, and from then to one new pod (no node) being bound by the
# scheduler; RSS after it. Figures only.
#   bash bench/restart.sh                 NODES=1400 PODS=140000
#   SMALL=1 bash bench/restart.sh         a quick run
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${NODES:=20}" "${PODS:=2000}"
else
	: "${NODES:=1400}" "${PODS:=140000}"
fi
: "${WRITERS:=16}"

bench_init
echo "# restart: NODES=$NODES PODS=$PODS"

cat >"$RUN_DIR/drive.py" <<'PY'
import http.client, json, os, sys, threading, time
port, token = int(os.environ["VR_PORT"]), os.environ["VR_TOKEN"]
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
nodes, pods, writers = (int(os.environ[k]) for k in ("NODES", "PODS", "WRITERS"))

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

def setup():
    create_all("/api/v1/nodes", nodes, lambda i: {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "vn-%05d" % i,
                     "labels": {"volray.io/runtime": "virtual"},
                     "annotations": {"volray.io/cpu": "64", "volray.io/memory": "256Gi",
                                     "volray.io/pods": "110"}}})
    secs = create_all("/api/v1/namespaces/default/pods", pods, lambda i: {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p-%06d" % i,
                     "annotations": {"volray.io/sim-duration": "1h"}},
        "spec": {"nodeName": "vn-%05d" % (i % nodes),
                 "containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}}]}})
    print("created %d nodes, %d pods (at %.0f/s)" % (nodes, pods, pods / secs))

def probe():
    # After the restart: one new pod, timed until the scheduler binds it.
    c = conn()
    t0 = time.time()
    code, data = request(c, "POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "newcomer"},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": "100m"}}}]}})
    if code != 201:
        sys.exit("create newcomer: %d %s" % (code, data[:200]))
    while True:
        code, data = request(c, "GET", "/api/v1/namespaces/default/pods/newcomer")
        if json.loads(data).get("spec", {}).get("nodeName"):
            break
        if time.time() - t0 > 300:
            sys.exit("newcomer not bound after 300 s")
        time.sleep(0.01)
    print("RESULT new_pod_bound_s=%.2f" % (time.time() - t0))

{"setup": setup, "probe": probe}[sys.argv[1]]()
PY

rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

start_volrayd
export VR_PORT NODES PODS WRITERS
VR_TOKEN=$(cat "$RUN_DIR/vr/pki/admin.token")
export VR_TOKEN
python3 "$RUN_DIR/drive.py" setup || die "setup"
kill -9 "$VR_PID"
wait "$VR_PID" 2>/dev/null || true
t0=$(date +%s.%N)
"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/vr" \
    --listen "127.0.0.1:$VR_PORT" --no-local-node --plain-http \
    --share-dir "$SHARE_DIR" >>"$RUN_DIR/volrayd.log" 2>&1 &
VR_PID=$!
PIDS="$PIDS $VR_PID"
# PERF=FILE: profile the restarted daemon until the new pod is bound.
[ -z "${PERF:-}" ] || { perf record -F 499 ${PERF_ARGS:--g} -p "$VR_PID" -o "$PERF" >/dev/null 2>&1 & PERF_PID=$!; }
until curl -sf -H "$VR_AUTH" "http://127.0.0.1:$VR_PORT/readyz" >/dev/null 2>&1; do
	kill -0 "$VR_PID" 2>/dev/null || die "volrayd died after the restart"
	sleep 0.05
done
t1=$(date +%s.%N)
echo "RESULT restart_to_ready_s=$(echo "$t1 - $t0" | bc)"
python3 "$RUN_DIR/drive.py" probe || die "probe"
[ -z "${PERF:-}" ] || { kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true; }
echo "RSS $(rss_mb "$VR_PID") MB"
# The restart's milestones as volrayd logged them.
grep -E "wal: |volrayd: store|volrayd: serving|scheduler: cycle" \
    "$RUN_DIR/volrayd.log" | tail -n 8
# HOLD=SECONDS: keep the daemon up that long after the probe (to profile
# its steady state: pid in $RUN_DIR/pid).
if [ -n "${HOLD:-}" ]; then
	echo "$VR_PID" >"$RUN_DIR/pid"
	echo "holding pid $VR_PID for $HOLD s"
	sleep "$HOLD"
fi
stop_volrayd
