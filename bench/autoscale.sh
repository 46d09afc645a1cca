#!/bin/sh
# Autoscaling RayClusters at scale (issue 24): N clusters (head num-cpus 0,
# one worker group of 2-CPU workers, min 0 max 8, idleTimeoutSeconds
# IDLE) on NODES simulated nodes. In each of ROUNDS rounds every cluster
# gets a simulated Ray job whose bundles need k workers (k = 1..4 in turn)
# for DURATION; the script measures, per cluster and round, the time from
# the job's submission to k Running workers (the autoscaler's scale-up:
# the head's demand read, replicas written, pods made, scheduled and
# started), then waits for the workers to go after the idle timeout.
# Baseline in the same run: as many clusters without the autoscaler whose
# replicas are set to k by a patch (the same path minus the autoscaler).
# Prints scale-up latency (p50/p90/max), RayCluster spec writes and store
# writes per scale event, and volrayd's CPU.
#   sh bench/autoscale.sh                       N=100 NODES=500 ROUNDS=2
#   N=10 NODES=50 ROUNDS=1 sh bench/autoscale.sh   small (CI)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
N=${N:-100}
NODES=${NODES:-500}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5s}
IDLE=${IDLE:-5}
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
VOLRAY=$(dirname "$VOLRAYD")/volray
[ -x "$VOLRAYD" ] && [ -x "$VOLRAY" ] || { echo "autoscale.sh: build volrayd and volray first, or set VOLRAYD" >&2; exit 1; }
work=$(mktemp -d /var/tmp/volray-abench.XXXXXX)
pid=""
trap '[ -z "$pid" ] || kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" --no-local-node \
	--plain-http --share-dir "$top" 2>"$work/log" &
pid=$!
until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && [ -f "$work/data/kubeconfig" ]; do sleep 0.02; done
export KUBECONFIG="$work/data/kubeconfig"
TOKEN=$(cat "$work/data/pki/admin.token")
export TOKEN
"$VOLRAY" node add --virtual --count "$NODES" --cpu 16 --memory 64Gi >/dev/null
echo "autoscale benchmark: $N clusters (+ $N without the autoscaler), $NODES simulated nodes, $ROUNDS rounds, jobs of $DURATION, idle timeout ${IDLE}s ($(nproc) cores)"
NODES=$NODES python3 - "$port" "$N" "$ROUNDS" "$DURATION" "$IDLE" "$pid" <<'PY'
import http.client, json, os, sys, time
port, n, rounds, duration, idle, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
auth = {"Authorization": "Bearer " + os.environ["TOKEN"], "Content-Type": "application/json"}
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

def call(method, path, body=None, ctype=None):
    h = dict(auth)
    if ctype: h["Content-Type"] = ctype
    conn.request(method, path, json.dumps(body) if body is not None else None, h)
    r = conn.getresponse(); data = r.read()
    if r.status >= 300: raise SystemExit("%s %s: %d %s" % (method, path, r.status, data[:300]))
    return json.loads(data) if data else None

def metric(name):
    conn.request("GET", "/metrics", headers=auth)
    r = conn.getresponse(); text = r.read().decode()
    return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith(name))

def cpu():
    f = open("/proc/%d/stat" % pid).read().split(")")[-1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def cluster(name, auto):
    c = lambda n: {"spec": {"containers": [{"name": n, "image": "rayproject/ray:2.52.0",
        "resources": {"limits": {"cpu": "2" if n == "ray-worker" else "1", "memory": "4Gi"}}}]}}
    spec = {"rayVersion": "2.52.0",
            "headGroupSpec": {"rayStartParams": {"num-cpus": "0"}, "template": c("ray-head")},
            "workerGroupSpecs": [{"groupName": "w", "replicas": 0, "minReplicas": 0, "maxReplicas": 8,
                                  "rayStartParams": {}, "template": c("ray-worker")}]}
    if auto:
        spec["enableInTreeAutoscaling"] = True
        spec["autoscalerOptions"] = {"idleTimeoutSeconds": idle}
    call("POST", "/apis/ray.io/v1/namespaces/default/rayclusters",
         {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name}, "spec": spec})

def pods():
    items = call("GET", "/api/v1/namespaces/default/pods")["items"]
    heads, workers = set(), {}
    for p in items:
        l = p["metadata"].get("labels", {})
        if p["metadata"].get("deletionTimestamp") or p.get("status", {}).get("phase") != "Running":
            continue
        if l.get("ray.io/node-type") == "head": heads.add(l.get("ray.io/cluster"))
        elif l.get("ray.io/node-type") == "worker":
            workers[l.get("ray.io/cluster")] = workers.get(l.get("ray.io/cluster"), 0) + 1
    return heads, workers

def generations(names):
    items = call("GET", "/apis/ray.io/v1/namespaces/default/rayclusters")["items"]
    return sum(i["metadata"].get("generation", 1) for i in items if i["metadata"]["name"] in names)

def ready_nodes():
    return sum(1 for nd in call("GET", "/api/v1/nodes")["items"]
               if any(c["type"] == "Ready" and c["status"] == "True" for c in nd.get("status", {}).get("conditions", [])))
while ready_nodes() < int(os.environ["NODES"]): time.sleep(0.2)

auto = ["a%d" % i for i in range(n)]
fixed = ["f%d" % i for i in range(n)]
for name in auto + fixed: cluster(name, name in auto)
while len(pods()[0]) < 2 * n: time.sleep(0.2)

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]

def measure(names, start):
    """start(name, k) asks for k workers; the seconds until each has them."""
    lat = {}
    t0 = {}
    for i, name in enumerate(names):
        k = 1 + i % 4
        t0[name] = (time.time(), k)
        start(name, k)
    while len(lat) < len(names):
        _, w = pods()
        now = time.time()
        for name, (t, k) in t0.items():
            if name not in lat and w.get(name, 0) >= k: lat[name] = now - t
        if now - min(t for t, _ in t0.values()) > 600: raise SystemExit("scale-up not done in 600 s")
        time.sleep(0.1)
    return list(lat.values())

def submit(name, k):
    body = {"entrypoint": "python work.py", "metadata": {
        "volray.io/sim-bundles": json.dumps([{"CPU": 2, "count": k}]), "volray.io/sim-duration": duration}}
    call("POST", "/api/v1/namespaces/default/services/%s-head-svc:8265/proxy/api/jobs/" % name, body)

def patch(name, k):
    call("PATCH", "/apis/ray.io/v1/namespaces/default/rayclusters/" + name,
         [{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": k}], "application/json-patch+json")

ups, base = [], []
g0, w0, c0 = generations(auto), metric("volray_store_writes_total"), cpu()
events = 0
for r in range(rounds):
    ups += measure(auto, submit)
    events += n
    # Scaled down after the jobs end and the idle timeout.
    while sum(pods()[1].get(a, 0) for a in auto) > 0: time.sleep(0.2)
    events += n
    base += measure(fixed, patch)
    for name in fixed: patch(name, 0)
    while sum(pods()[1].get(f, 0) for f in fixed) > 0: time.sleep(0.2)
g1, w1, c1 = generations(auto), metric("volray_store_writes_total"), cpu()
print("scale-up to k workers (k = 1..4), %d events: p50 %.2f s  p90 %.2f s  max %.2f s (autoscaler)" %
      (len(ups), pct(ups, .5), pct(ups, .9), max(ups)))
print("replicas patched to k, same clusters' shape, %d events: p50 %.2f s  p90 %.2f s  max %.2f s (baseline)" %
      (len(base), pct(base, .5), pct(base, .9), max(base)))
print("RayCluster spec writes per scale event (up or down): %.2f; store writes in the run (both sets): %d; volrayd CPU %.1f s" %
      ((g1 - g0) / events, w1 - w0, c1 - c0))
PY
kill $pid; wait $pid 2>/dev/null || true
pid=""
