#!/usr/bin/env bash
# Failover of the controllers and the scheduler in operator mode (issue
# 21, "How to test it"), as a benchmark: figures, never a CI gate.
# TRIALS trials, each on a fresh API volrayd (--roles api,nodes,ray
# --no-local-node) with NODES simulated nodes and two queues, and two
# replicas of --roles controllers,scheduler against it (leader election:
# lease 3s, renew 2s, retry 500ms; --kube-api-qps 2000 --kube-api-burst
# 4000). The first replica is started alone and takes both Leases, the
# second is its standby. A recorder (python3, stdlib only) watches pods,
# RayClusters and Leases from the API before any work: every distinct
# nodeName a pod uid ever had, every RayCluster uid created for a RayJob
# (ownerReferences), every change of a Lease's holder. Then a burst: N
# RayJobs (HTTPMode, head + 2 workers, a DURATION entrypoint,
# shutdownAfterJobFinishes, half in each queue) and PODS gang pods
# (PodGroups of 10, minMember 10, schedulerName volcano, DURATION each)
# at once; kill -9 of the holder of the volray-controllers Lease (found by
# its log line) once a random 20-60% of the RayJobs have a RayCluster.
# Per trial: seconds from the kill to the new holder of each Lease, to
# the first bind the recorder sees after the kill and after the new
# scheduler took its Lease, to every RayJob Complete and every gang pod
# Succeeded (all_complete_s, from the start of the burst); pods bound
# twice (two different nodeNames) and RayJobs with more than one
# RayCluster; rebinds_refused: binds of the new leader that the API
# refused because the pod was bound to another node already (attempted
# double binds; logs kept as for a finding). A trial with either keeps its logs in
# /tmp/failover-finding-K/. A summary line at the end.
#   bash bench/failover.sh                        TRIALS=20 N=200 PODS=5000 NODES=500
#   TRIALS=3 N=50 PODS=500 NODES=100 bash bench/failover.sh   a short run
# Knobs: TRIALS, N, PODS, NODES, DURATION (5s), TIMEOUT (per trial, 900 s),
# KEEP=1 (keep every trial's work directory), VOLRAYD, SHARE_DIR.
set -eu
. "$(dirname "$0")/lib.sh"

: "${TRIALS:=20}" "${N:=200}" "${PODS:=5000}" "${NODES:=500}"
: "${DURATION:=5s}" "${TIMEOUT:=900}" "${KEEP:=0}"
VOLRAY=$(dirname "$VOLRAYD")/volray
[ -x "$VOLRAYD" ] && [ -x "$VOLRAY" ] || die "build volrayd and volray first, or set VOLRAYD"
[ -d "$SHARE_DIR/crds" ] || die "no crds/ in $SHARE_DIR: set SHARE_DIR"
[ $((PODS % 10)) = 0 ] || die "PODS must be a multiple of 10 (PodGroups of 10)"

mkdir -p "$BENCH_WORK"
WORK=$(mktemp -d "$BENCH_WORK/failover.XXXXXX")
# A private copy under another name, as lib.sh's start_volrayd: someone
# else's broad pkill must not end a trial midway.
cp "$VOLRAYD" "$WORK/vrfail-volrayd"
VRD=$WORK/vrfail-volrayd
TPIDS=""	# the current trial's processes
stop_trial() {
	local p
	for p in $TPIDS; do kill -9 "$p" 2>/dev/null || true; done
	for p in $TPIDS; do wait "$p" 2>/dev/null || true; done
	TPIDS=""
}
cleanup() {
	local rc=$?
	trap - EXIT
	stop_trial
	if [ "$KEEP" = 1 ] || [ $rc -ne 0 ]; then
		echo "# work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ulimit -n 8192 2>/dev/null || true

cat >"$WORK/fo.py" <<'PY'
import http.client, json, os, random, signal, ssl, sys, threading, time, urllib.parse

port = int(os.environ["FO_PORT"])
ctx = ssl.create_default_context(cafile=os.environ["FO_CA"])
AUTH = {"Authorization": "Bearer " + os.environ["FO_TOKEN"],
        "Content-Type": "application/json"}

def conn(timeout=60):
    return http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=timeout)

def request(c, method, path, body=None):
    c.request(method, path, json.dumps(body) if body is not None else None, AUTH)
    r = c.getresponse()
    return r.status, r.read()

def get(path):
    c = conn()
    try:
        code, data = request(c, "GET", path)
    finally:
        c.close()
    if code != 200:
        raise RuntimeError("GET %s: %d %s" % (path, code, data[:200]))
    return json.loads(data)

# --- the recorder -------------------------------------------------------
class Recorder:
    def __init__(self, out):
        self.out = out
        self.lock = threading.Lock()
        self.nodes = {}        # pod uid -> [nodeName, ...] in the order seen
        self.names = {}        # pod uid -> namespace/name
        self.binds = []        # (time first seen bound, uid)
        self.clusters = {}     # RayJob uid -> [RayCluster uid, ...]
        self.cnames = {}       # RayCluster uid -> name
        self.jobnames = {}     # RayJob uid -> name (from the ownerReference)
        self.leases = []       # (time, lease name, holder) at each change
        self.holder = {}
        self.relists = 0
        self.reconnects = 0
        self.errors = []

    def pod(self, typ, o, now):
        md = o.get("metadata", {})
        uid, node = md.get("uid"), (o.get("spec") or {}).get("nodeName")
        if not uid or not node:
            return
        seen = self.nodes.setdefault(uid, [])
        if node not in seen:
            seen.append(node)
            self.names[uid] = "%s/%s" % (md.get("namespace"), md.get("name"))
            if len(seen) == 1:
                self.binds.append((now, uid))

    def raycluster(self, typ, o, now):
        md = o.get("metadata", {})
        uid = md.get("uid")
        for ref in md.get("ownerReferences") or []:
            if ref.get("kind") == "RayJob" and uid:
                seen = self.clusters.setdefault(ref.get("uid"), [])
                if uid not in seen:
                    seen.append(uid)
                    self.cnames[uid] = md.get("name")
                    self.jobnames[ref.get("uid")] = ref.get("name")

    def lease(self, typ, o, now):
        name = o.get("metadata", {}).get("name")
        h = (o.get("spec") or {}).get("holderIdentity") or ""
        if typ == "DELETED":
            h = ""
        if self.holder.get(name) != h:
            self.holder[name] = h
            self.leases.append((now, name, h))

    def informer(self, path, handle):
        # list, then watch from the list's resourceVersion; a dropped
        # watch resumes from the last resourceVersion seen, 410 lists again
        rv = None
        while True:
            try:
                if rv is None:
                    lst = get(path)
                    now = time.time()
                    with self.lock:
                        for o in lst.get("items", []):
                            handle("ADDED", o, now)
                        if self.started:
                            self.relists += 1
                    rv = lst["metadata"]["resourceVersion"]
                q = urllib.parse.urlencode({"watch": "1", "resourceVersion": rv,
                                            "allowWatchBookmarks": "true"})
                c = conn(timeout=30)
                c.request("GET", path + "?" + q, None, AUTH)
                r = c.getresponse()
                if r.status == 410:
                    rv = None
                    continue
                if r.status != 200:
                    raise RuntimeError("watch %s: %d" % (path, r.status))
                while True:
                    line = r.readline()
                    if not line:
                        break
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    now = time.time()
                    typ, o = ev.get("type"), ev.get("object") or {}
                    if typ == "ERROR":
                        if o.get("code") == 410:
                            rv = None
                        break
                    nrv = o.get("metadata", {}).get("resourceVersion")
                    if typ != "BOOKMARK":
                        with self.lock:
                            handle(typ, o, now)
                    if nrv:
                        rv = nrv
                c.close()
            except Exception as e:
                with self.lock:
                    self.errors.append("%s: %r" % (path, e))
                    self.errors = self.errors[-20:]
                time.sleep(0.2)
            with self.lock:
                self.reconnects += 1

    def dump(self):
        with self.lock:
            st = {"binds": self.binds, "leases": self.leases,
                  "bound": len(self.nodes),
                  "jobs_with_cluster": len(self.clusters),
                  "double_binds": {self.names[u]: n for u, n in self.nodes.items() if len(n) > 1},
                  "dup_clusters": {self.jobnames.get(j, j): [self.cnames[u] for u in cs]
                                   for j, cs in self.clusters.items() if len(cs) > 1},
                  "relists": self.relists, "reconnects": self.reconnects,
                  "errors": self.errors}
        tmp = self.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(st, f)
        os.rename(tmp, self.out)

    def run(self):
        self.started = False
        ts = [threading.Thread(target=self.informer, args=a, daemon=True) for a in (
            ("/api/v1/pods", self.pod),
            ("/apis/ray.io/v1/rayclusters", self.raycluster),
            ("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", self.lease))]
        for t in ts:
            t.start()
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *a: stop.set())
        time.sleep(0.5)
        self.started = True
        while not stop.wait(0.2):
            self.dump()
        self.dump()

# --- the burst ----------------------------------------------------------
def submit(n, pods, duration):
    def rpod(name):
        return {"spec": {"containers": [{"name": name, "image": "rayproject/ray:2.46.0",
                "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
    def rayjob(i):
        return ("/apis/ray.io/v1/namespaces/default/rayjobs", {
            "apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": "job-%d" % i, "labels": {"volcano.sh/queue-name": "q%d" % (1 + i % 2)}},
            "spec": {"submissionMode": "HTTPMode", "entrypoint": "python work.py",
                     "metadata": {"volray.io/sim-duration": duration},
                     "shutdownAfterJobFinishes": True,
                     "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {}, "template": rpod("ray-head")},
                                        "workerGroupSpecs": [{"groupName": "w", "replicas": 2,
                                                              "rayStartParams": {}, "template": rpod("ray-worker")}]}}})
    def podgroup(g):
        return ("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", {
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg-%05d" % g},
            "spec": {"minMember": 10, "queue": "q%d" % (1 + g % 2),
                     "minResources": {"cpu": "10", "memory": "10Gi"}}})
    def gangpod(i):
        return ("/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "gang-%06d" % i, "labels": {"bench": "gang"},
                         "annotations": {"scheduling.k8s.io/group-name": "pg-%05d" % (i // 10),
                                         "volray.io/sim-duration": duration}},
            "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})
    # interleaved, so that RayJobs and gang pods arrive together; each
    # PodGroup before its pods
    items = []
    for i in range(max(n, pods // 10)):
        if i < n:
            items.append(rayjob(i))
        if i < pods // 10:
            items.append(podgroup(i))
            items.extend(gangpod(i * 10 + k) for k in range(10))
    errors = []
    # chunk so that a PodGroup and its pods stay in one thread's order
    chunks, cur = [], []
    for it in items:
        if it[1]["kind"] in ("RayJob", "PodGroup") and cur:
            chunks.append(cur); cur = []
        cur.append(it)
    chunks.append(cur)
    def work2(t, nt):
        c = conn()
        for ch in chunks[t::nt]:
            for path, body in ch:
                code, data = request(c, "POST", path, body)
                if code != 201:
                    errors.append((code, data[:200]))
                    return
    ts = [threading.Thread(target=work2, args=(t, 16)) for t in range(16)]
    [t.start() for t in ts]; [t.join() for t in ts]
    if errors:
        sys.exit("submit: %r" % (errors[0],))

def progress():
    jobs = get("/apis/ray.io/v1/namespaces/default/rayjobs")["items"]
    gang = get("/api/v1/namespaces/default/pods?labelSelector=bench%3Dgang")["items"]
    done = sum(1 for j in jobs if (j.get("status") or {}).get("jobDeploymentStatus") == "Complete")
    ok = sum(1 for p in gang if (p.get("status") or {}).get("phase") == "Succeeded")
    failed = sum(1 for p in gang if (p.get("status") or {}).get("phase") == "Failed")
    print(done, len(jobs), ok, len(gang), failed)

def setup():
    for q in ("q1", "q2"):
        c = conn()
        code, data = request(c, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues",
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": q}, "spec": {"weight": 1}})
        if code not in (201, 409):
            sys.exit("queue %s: %d %s" % (q, code, data[:200]))

def ready_nodes():
    n = 0
    for o in get("/api/v1/nodes")["items"]:
        for cnd in (o.get("status") or {}).get("conditions") or []:
            if cnd.get("type") == "Ready" and cnd.get("status") == "True":
                n += 1
    print(n)

def holder(name):
    try:
        o = get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + name)
        print((o.get("spec") or {}).get("holderIdentity") or "")
    except Exception:
        print("")

cmd = sys.argv[1]
if cmd == "record":
    Recorder(sys.argv[2]).run()
elif cmd == "submit":
    submit(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
elif cmd == "progress":
    progress()
elif cmd == "setup":
    setup()
elif cmd == "ready":
    ready_nodes()
elif cmd == "holder":
    holder(sys.argv[2])
elif cmd == "field":   # field FILE KEY: a recorder state's value
    print(json.load(open(sys.argv[2]))[sys.argv[3]])
elif cmd == "report":  # report STATE T_KILL T_SUB T_DONE OLD_CTRL OLD_SCHED
    st = json.load(open(sys.argv[2]))
    tk, ts, td = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    old = {"volray-controllers": sys.argv[6], "volray-scheduler": sys.argv[7]}
    def taken(name):   # the first change of the Lease to another holder after the kill
        for t, n, h in st["leases"]:
            if n == name and t >= tk and h and h != old[name]:
                return t
        return None
    tc, tsch = taken("volray-controllers"), taken("volray-scheduler")
    b_kill = next((t for t, u in sorted(st["binds"]) if t >= tk), None)
    b_new = next((t for t, u in sorted(st["binds"]) if tsch and t >= tsch), None)
    f = lambda t: "%.2f" % (t - tk) if t is not None else "-"
    print("ctrl_takeover_s=%s sched_takeover_s=%s first_bind_s=%s first_bind_new_s=%s "
          "all_complete_s=%s double_binds=%d dup_clusters=%d binds=%d relists=%d reconnects=%d"
          % (f(tc), f(tsch), f(b_kill), f(b_new), "%.1f" % (td - ts) if td > 0 else "timeout",
             len(st["double_binds"]), len(st["dup_clusters"]), len(st["binds"]),
             st["relists"], st["reconnects"]))
    for k, v in list(st["double_binds"].items())[:10]:
        print("  bound twice: %s %s" % (k, v))
    for k, v in list(st["dup_clusters"].items())[:10]:
        print("  RayJob %s: RayClusters %s" % (k, v))
PY

FO() { python3 "$WORK/fo.py" "$@"; }
ELECT="--leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms"
now() { date +%s.%N; }

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# failover: TRIALS=$TRIALS N=$N RayJobs (head + 2 workers) PODS=$PODS gang pods (groups of 10)" \
	"NODES=$NODES DURATION=$DURATION; kill -9 of the controllers' leader at 20-60% of the RayJobs with a cluster"

FINDINGS=0; FAILED=0; RESULTS=""
# A new /tmp/failover-finding-K (the first K not taken, across runs).
finding_dir() {
	local n=1
	while ! mkdir /tmp/failover-finding-$n 2>/dev/null; do n=$((n + 1)); done
	echo /tmp/failover-finding-$n
}
trial() {
	local k=$1 T=$WORK/t$k port r1 r2 i old_c old_s victim vpid frac target tk t_sub t_done=0 rc=0
	mkdir -p "$T"
	port=$(free_port)
	"$VRD" --data-dir "$T/data" --listen "127.0.0.1:$port" --no-local-node \
		--share-dir "$SHARE_DIR" --roles api,nodes,ray >"$T/api.log" 2>&1 &
	TPIDS="$TPIDS $!"
	i=0
	until curl -fsk -m 1 "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && [ -f "$T/data/kubeconfig" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "trial $k: the API did not start" >&2; return 1; }
		sleep 0.05
	done
	export FO_PORT=$port FO_CA=$T/data/pki/ca.crt FO_TOKEN
	FO_TOKEN=$(cat "$T/data/pki/admin.token")
	KUBECONFIG=$T/data/kubeconfig "$VOLRAY" node add --virtual --count "$NODES" --cpu 16 --memory 64Gi >/dev/null
	FO setup
	i=0
	until [ "$(FO ready)" -ge "$NODES" ]; do
		i=$((i + 1)); [ $i -lt 240 ] || { echo "trial $k: nodes not Ready" >&2; return 1; }
		sleep 0.5
	done
	# The recorder, before any work (and before the replicas: it sees
	# every Lease holder).
	python3 "$WORK/fo.py" record "$T/state.json" 2>"$T/recorder.log" &
	TPIDS="$TPIDS $!"
	until [ -f "$T/state.json" ]; do sleep 0.1; done
	# r1 alone first: it takes both Leases; r2 is then its standby.
	"$VRD" --data-dir "$T/r1" --kubeconfig "$T/data/kubeconfig" --roles controllers,scheduler \
		--share-dir "$SHARE_DIR" $ELECT --kube-api-qps 2000 --kube-api-burst 4000 >"$T/r1.log" 2>&1 &
	r1=$!; TPIDS="$TPIDS $r1"
	i=0
	until grep -q "became leader of lease kube-system/volray-controllers" "$T/r1.log" 2>/dev/null &&
	    grep -q "became leader of lease kube-system/volray-scheduler" "$T/r1.log" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "trial $k: r1 did not lead" >&2; return 1; }
		sleep 0.1
	done
	"$VRD" --data-dir "$T/r2" --kubeconfig "$T/data/kubeconfig" --roles controllers,scheduler \
		--share-dir "$SHARE_DIR" $ELECT --kube-api-qps 2000 --kube-api-burst 4000 >"$T/r2.log" 2>&1 &
	r2=$!; TPIDS="$TPIDS $r2"
	i=0
	until grep -q "electing on lease kube-system/volray-controllers" "$T/r2.log" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "trial $k: r2 did not start" >&2; return 1; }
		sleep 0.1
	done
	sleep 1	# r2's mirror filled (it starts its roles once every kind is listed)
	old_c=$(FO holder volray-controllers)
	old_s=$(FO holder volray-scheduler)
	if grep -q "$old_c: became leader of lease kube-system/volray-controllers" "$T/r1.log"; then
		victim=r1; vpid=$r1
	elif grep -q "$old_c: became leader of lease kube-system/volray-controllers" "$T/r2.log"; then
		victim=r2; vpid=$r2
	else
		echo "trial $k: no replica logged leading as $old_c" >&2; return 1
	fi
	frac=$((20 + RANDOM % 41))
	target=$(( (N * frac + 99) / 100 ))
	t_sub=$(now)
	python3 "$WORK/fo.py" submit "$N" "$PODS" "$DURATION" &
	local spid=$!
	i=0
	until [ "$(FO field "$T/state.json" jobs_with_cluster)" -ge "$target" ]; do
		i=$((i + 1)); [ $i -lt 6000 ] || { echo "trial $k: no RayClusters" >&2; return 1; }
		sleep 0.05
	done
	tk=$(now)
	kill -9 "$vpid"
	wait "$vpid" 2>/dev/null || true
	wait "$spid" || { echo "trial $k: submit failed" >&2; return 1; }
	# Until every RayJob is Complete and every gang pod Succeeded.
	local p
	while :; do
		p=$(FO progress) || p="0 0 0 0 0"
		set -- $p
		if [ "$1" = "$N" ] && [ "$3" = "$PODS" ]; then t_done=$(now); break; fi
		if awk -v a="$(now)" -v b="$t_sub" -v t="$TIMEOUT" 'BEGIN {exit !(a - b > t)}'; then
			echo "trial $k: timeout: RayJobs Complete $1/$N, gang pods Succeeded $3/$PODS ($5 Failed)" >&2
			rc=2; break
		fi
		printf '\r  trial %d: RayJobs Complete %d/%d, gang pods Succeeded %d/%d ' "$k" "$1" "$N" "$3" "$PODS" >&2
		sleep 1
	done
	echo >&2
	sleep 1	# the recorder's last events
	local line
	line=$(FO report "$T/state.json" "$tk" "$t_sub" "$t_done" "$old_c" "$old_s")
	# Binds of the new leader that the API refused because the pod was
	# on another node already: attempted double binds, stopped by the API.
	local standby=r1 rej first
	[ "$victim" = r2 ] || standby=r2
	rej=$(sed -n 's/.*binding [^ ]* to \([^:]*\): Binding rejected: .*already assigned to node "\([^"]*\)".*/\1 \2/p' "$T/$standby.log" |
		awk '$1 != $2 {n++} END {print n + 0}')
	first="$(echo "$line" | head -1) rebinds_refused=$rej"
	echo "trial $k: killed $victim at $frac% ($first) killed_held_sched=$(grep -q "$old_s: became leader of lease kube-system/volray-scheduler" "$T/$victim.log" && echo yes || echo no)"
	echo "$line" | tail -n +2
	RESULTS="$RESULTS
$first"
	if ! echo "$first" | grep -q "double_binds=0 dup_clusters=0 .*rebinds_refused=0"; then
		FINDINGS=$((FINDINGS + 1))
		local d
		d=$(finding_dir)
		cp "$T"/*.log "$T/state.json" "$d/"
		echo "$line" >"$d/report.txt"
		echo "  logs kept in $d"
	fi
	return $rc
}

for k in $(seq 1 "$TRIALS"); do
	if ! trial "$k"; then
		FAILED=$((FAILED + 1))
		d=$(finding_dir)
		cp "$WORK/t$k"/*.log "$WORK/t$k"/state.json "$d/" 2>/dev/null || true
		echo "  trial $k failed: logs kept in $d"
	fi
	stop_trial
	[ "$KEEP" = 1 ] || rm -rf "$WORK/t$k"
done

echo "$RESULTS" | python3 -c '
import sys, statistics
rows = [dict(kv.split("=") for kv in l.split()) for l in sys.stdin if l.strip()]
def col(k):
    v = [float(r[k]) for r in rows if r.get(k) not in (None, "-", "timeout")]
    return "median %.2f max %.2f" % (statistics.median(v), max(v)) if v else "-"
print("summary: %d trials, %d with a result; controllers takeover %s s; scheduler takeover %s s; "
      "kill to first bind by the new scheduler %s s; all complete (from the burst) %s s; double binds %d; duplicate clusters %d; "
      "refused rebinds %d (in %d trials); trials failed (timeout or error) %s" % (int(sys.argv[1]), len(rows), col("ctrl_takeover_s"),
      col("sched_takeover_s"), col("first_bind_new_s"), col("all_complete_s"),
      sum(int(r["double_binds"]) for r in rows), sum(int(r["dup_clusters"]) for r in rows),
      sum(int(r["rebinds_refused"]) for r in rows), sum(1 for r in rows if r["rebinds_refused"] != "0"), sys.argv[2]))
' "$TRIALS" "$FAILED"
