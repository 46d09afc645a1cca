#!/usr/bin/env bash
# Autoscaling one RayCluster to WORKERS one-CPU workers (issue 43, ray#57624:
# Ray's autoscaler v2 cannot bring up 1,000): a cluster with in-tree
# autoscaling (upscalingMode Default, idleTimeoutSeconds IDLE, a head of
# num-cpus 0, one group of one-CPU workers, maxReplicas 20,000) on NODES
# simulated nodes of 16 CPUs, then one simulated Ray job through the head's
# Jobs API whose bundles are WORKERS x {"CPU": 1}, running DURATION once
# placed. Prints the curve (seconds since the submission, Running workers,
# worker pods, volrayd's CPU seconds) every STEP seconds, the time to the
# first worker, to half, to all of them, to the job's start, and, after the
# job, to the last worker gone after the idle timeout; the loop's worst lag
# (volray_loop_lag_seconds). Fails when the workers are not all Running in
# LIMIT seconds or not gone in LIMIT more, never on a figure.
#   bash bench/autoscale10k.sh                  WORKERS=10000 NODES=800
#   SMALL=1 bash bench/autoscale10k.sh          WORKERS=500 NODES=40 (CI)
# Environment: WORKERS, NODES, DURATION (30s), IDLE (20), STEP (1), LIMIT
# (300), VOLRAYD, BENCH_WORK.
set -eu
. "$(dirname "$0")/lib.sh"

if [ "${SMALL:-0}" = 1 ]; then
	: "${WORKERS:=500}" "${NODES:=40}" "${DURATION:=5s}" "${IDLE:=5}"
fi
: "${WORKERS:=10000}" "${NODES:=800}" "${DURATION:=30s}" "${IDLE:=20}"
: "${STEP:=1}" "${LIMIT:=300}"

bench_init
start_volrayd
VOLRAY=$(dirname "$VOLRAYD")/volray
KUBECONFIG=$RUN_DIR/vr/kubeconfig "$VOLRAY" node add --virtual \
    --count "$NODES" --cpu 16 --memory 64Gi >/dev/null ||
	die "volray node add failed"
echo "autoscale10k: $WORKERS one-CPU bundles, $NODES simulated nodes of 16 CPUs," \
    "job $DURATION, idle timeout ${IDLE}s; commit $(git -C "$TOP" rev-parse --short HEAD)," \
    "$(nproc) cores"
BASE=$VR_BASE AUTH=$VR_AUTH PID=$VR_PID python3 - "$WORKERS" "$NODES" \
    "$DURATION" "$IDLE" "$STEP" "$LIMIT" <<'PY'
import http.client, json, os, sys, time, urllib.parse
workers, nodes, duration, idle, step, limit = int(sys.argv[1]), int(sys.argv[2]), \
    sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
u = urllib.parse.urlparse(os.environ["BASE"])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
auth = dict([os.environ["AUTH"].split(": ", 1)])
pid = int(os.environ["PID"])

def call(method, path, body=None):
    h = dict(auth, **{"Content-Type": "application/json"})
    conn.request(method, path, json.dumps(body) if body is not None else None, h)
    r = conn.getresponse(); data = r.read()
    if r.status >= 300: raise SystemExit("%s %s: %d %s" % (method, path, r.status, data[:300]))
    return json.loads(data) if data else None

def cpu():
    f = open("/proc/%d/stat" % pid).read().split(")")[-1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def ready_nodes():
    return sum(1 for nd in call("GET", "/api/v1/nodes")["items"]
               if any(c["type"] == "Ready" and c["status"] == "True" for c in nd.get("status", {}).get("conditions", [])))

def workers_now():
    """Running workers and all worker pods, from the pods' Table (kubectl's
    STATUS column, no objects): a tenth of a list's bytes."""
    h = dict(auth, Accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    conn.request("GET", "/api/v1/namespaces/default/pods?includeObject=None&labelSelector=" +
                 urllib.parse.quote("ray.io/node-type=worker"), headers=h)
    r = conn.getresponse(); t = json.loads(r.read())
    col = [c["name"] for c in t["columnDefinitions"]].index("Status")
    rows = t.get("rows") or []
    return sum(1 for row in rows if row["cells"][col] == "Running"), len(rows)

def job_status():
    return call("GET", "/api/v1/namespaces/default/services/big-head-svc:8265/proxy/api/jobs/j1")["status"]

while ready_nodes() < nodes: time.sleep(0.2)
c = lambda n, cpu_: {"spec": {"containers": [{"name": n, "image": "rayproject/ray:2.52.0",
    "resources": {"limits": {"cpu": cpu_, "memory": "1Gi"}}}]}}
call("POST", "/apis/ray.io/v1/namespaces/default/rayclusters", {
    "apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "big"},
    "spec": {"rayVersion": "2.52.0", "enableInTreeAutoscaling": True,
             "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": idle},
             "headGroupSpec": {"rayStartParams": {"num-cpus": "0"}, "template": c("ray-head", "1")},
             "workerGroupSpecs": [{"groupName": "w", "replicas": 0, "minReplicas": 0, "maxReplicas": 20000,
                                   "rayStartParams": {}, "template": c("ray-worker", "1")}]}})
while True:
    rc = call("GET", "/apis/ray.io/v1/namespaces/default/rayclusters/big")
    if rc.get("status", {}).get("state") == "ready": break
    time.sleep(0.2)

c0 = cpu()
t0 = time.time()
call("POST", "/api/v1/namespaces/default/services/big-head-svc:8265/proxy/api/jobs/", {
    "entrypoint": "python work.py", "submission_id": "j1", "metadata": {
        "volray.io/sim-bundles": json.dumps([{"CPU": 1, "count": workers}]),
        "volray.io/sim-duration": duration}})
print("%8s %8s %8s %8s" % ("seconds", "running", "pods", "cpu_s"))
first = half = full = started = None
while full is None or started is None:
    r, n = workers_now()
    t = time.time() - t0
    print("%8.1f %8d %8d %8.1f" % (t, r, n, cpu() - c0), flush=True)
    if first is None and r > 0: first = t
    if half is None and r >= workers / 2: half = t
    if full is None and r >= workers: full = t
    if started is None and full is not None and job_status() == "RUNNING": started = time.time() - t0
    if t > limit: raise SystemExit("autoscale10k: %d of %d workers Running after %.0f s" % (r, workers, t))
    time.sleep(step)
up_cpu = cpu() - c0
while job_status() not in ("SUCCEEDED", "FAILED", "STOPPED"): time.sleep(0.5)
ended = time.time()
while True:
    r, n = workers_now()
    if n == 0: break
    if time.time() - ended > limit: raise SystemExit("autoscale10k: %d workers left %.0f s after the job" % (n, time.time() - ended))
    time.sleep(step)
gone = time.time() - ended
conn.request("GET", "/metrics", headers=auth); m = conn.getresponse().read().decode()
# The worst lag: the smallest bucket holding every sample.
tot = [float(l.split()[-1]) for l in m.splitlines() if l.startswith("volray_loop_lag_seconds_count")]
buckets = [(l.split('le="')[1].split('"')[0], float(l.split()[-1])) for l in m.splitlines()
           if l.startswith("volray_loop_lag_seconds_bucket")]
worst = next((le for le, cnt in buckets if tot and cnt >= tot[0]), "?")
print("first worker %.1f s, half %.1f s, all %d Running %.1f s, job running %.1f s after the submission;"
      " volrayd CPU %.1f s to scale up" % (first, half, workers, full, started, up_cpu))
print("after the job: every worker gone %.1f s after it ended (idle timeout %d s)" % (gone, idle))
print("loop lag: every late timer within le=%s s" % worst)
print("result workers=%d nodes=%d all_running_s=%.1f first_s=%.1f half_s=%.1f gone_after_job_s=%.1f cpu_s=%.1f"
      % (workers, nodes, full, first, half, gone, up_cpu))
PY
