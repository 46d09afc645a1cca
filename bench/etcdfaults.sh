#!/usr/bin/env bash
# Faults under load on the etcd backend (issue 22), as a benchmark: the
# totals are figures, never a CI gate; a lost write fails the script.
# Each trial: a fresh 3-member etcd (Debian's etcd-server, loopback
# ports, data under $BENCH_WORK), two volrayd --roles api on it (plain
# HTTP, the admin token), and WRITERS writer threads (python3, stdlib),
# half on each server, each POSTing ConfigMaps of unique names (never
# retrying one) and recording every 201 with its uid and time; a thread
# whose server fails goes on with the other one. WARMUP seconds into the
# run, one fault:
#   member       kill -9 an etcd member that is not the leader, restart
#                it DOWN seconds later on its data directory
#   leader       kill -9 the etcd leader, the same
#   server       kill -9 one volrayd, restart it DOWN seconds later
#   allservers   kill -9 both volrayd, restart both DOWN seconds later
# Afterwards every acknowledged name must be in etcd under
# /registry/configmaps/default/ with the uid its 201 carried (lost: 0;
# acknowledged twice, an object whose uid changed or a name 201'd twice:
# 0), and the script prints per trial: writes acknowledged, lost, twice,
# the first 201 after the fault and after the restart, the longest gap
# between two 201s, and the stall: the longest time without a 201 from
# the fault to the end of writing; at the end the totals and the medians
# and maxima per scenario.
#   bash bench/etcdfaults.sh                    TRIALS=20, every scenario
#   TRIALS=1 SCENARIOS=leader bash bench/etcdfaults.sh
# Knobs: TRIALS (20), SCENARIOS ("member leader server allservers"),
# WRITERS (64), SECONDS_RUN (10: writing), WARMUP (2), DOWN (3), VOLRAYD,
# ETCD, SHARE_DIR, BENCH_WORK, KEEP=1 (keep each trial's directory).
set -eu
. "$(dirname "$0")/lib.sh"

: "${TRIALS:=20}" "${SCENARIOS:=member leader server allservers}"
: "${WRITERS:=64}" "${SECONDS_RUN:=10}" "${WARMUP:=2}"
: "${DOWN:=3}" "${KEEP:=0}"
command -v "$ETCD" >/dev/null 2>&1 || have_etcd || die "no etcd (etcd-server)"
command -v etcdctl >/dev/null 2>&1 || die "no etcdctl (etcd-client)"
[ -x "$VOLRAYD" ] || die "no volrayd at $VOLRAYD"
bench_init
cp "$VOLRAYD" "$RUN_DIR/vrfault-volrayd"
VRD=$RUN_DIR/vrfault-volrayd

cat >"$RUN_DIR/writer.py" <<'PY'
# writer.py OUT SECONDS NTHREADS URL_A URL_B TOKEN_FILE
import http.client, json, sys, threading, time, urllib.parse
out, secs, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
urls = [urllib.parse.urlsplit(u) for u in sys.argv[4:6]]
token = open(sys.argv[6]).read().strip()
H = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
lock = threading.Lock()
log = open(out, "w")
stop = time.time() + secs
def worker(t):
    srv, i, c = t % 2, 0, None
    while time.time() < stop:
        name = "w%d-%d" % (t, i)
        i += 1
        try:
            if c is None:
                c = http.client.HTTPConnection(urls[srv].hostname, urls[srv].port, timeout=15)
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"v": name * 8}})
            c.request("POST", "/api/v1/namespaces/default/configmaps", body, H)
            r = c.getresponse()
            data = r.read()
            if r.status == 201:
                uid = json.loads(data)["metadata"]["uid"]
                with lock:
                    log.write("ack %s %s %.3f %d\n" % (name, uid, time.time(), srv))
                    log.flush()
            else:
                with lock:
                    log.write("err %s %d %.3f %d\n" % (name, r.status, time.time(), srv))
                    log.flush()
                if r.status >= 500:
                    c.close(); c = None; srv = 1 - srv
        except Exception as e:
            with lock:
                log.write("exc %s %s %.3f %d\n" % (name, type(e).__name__, time.time(), srv))
                log.flush()
            try:
                c.close()
            except Exception:
                pass
            c = None
            srv = 1 - srv        # the other server, for the next name
            time.sleep(0.05)
ts = [threading.Thread(target=worker, args=(t,)) for t in range(n)]
for t in ts: t.start()
for t in ts: t.join()
PY

cat >"$RUN_DIR/check.py" <<'PY'
# check.py WRITER_LOG ETCD_JSON FAULT_T RESTART_T STOP_T: one line of
# figures. The stall: the longest time without a 201 from the fault to
# the end of writing (a stall that lasts to the end counts whole).
import base64, json, sys
import collections
acks, twice, times = {}, 0, []
errs, kinds = 0, collections.Counter()
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "ack":
        if f[1] in acks: twice += 1
        acks[f[1]] = f[2]
        times.append(float(f[3]))
    else:
        errs += 1
        kinds[f[2]] += 1
stored = {}
for kv in json.load(open(sys.argv[2])).get("kvs", []):
    key = base64.b64decode(kv["key"]).decode()
    obj = json.loads(base64.b64decode(kv["value"]))
    stored[key.rsplit("/", 1)[1]] = obj["metadata"]["uid"]
lost = [n for n in acks if n not in stored]
changed = [n for n in acks if n in stored and stored[n] != acks[n]]
fault, restart = float(sys.argv[3]), float(sys.argv[4])
times.sort()
after_fault = next((t - fault for t in times if t > fault), -1)
after_restart = next((t - restart for t in times if t > restart), -1)
gap = max((b - a for a, b in zip(times, times[1:])), default=0)
stop = float(sys.argv[5])
after = [fault] + [t for t in times if t > fault] + [stop]
stall = max(b - a for a, b in zip(after, after[1:]))
print("acked=%d lost=%d twice=%d unacked_present=%d errors=%d "
      "first_after_fault_s=%.2f resume_after_restart_s=%.2f longest_gap_s=%.2f "
      "stall_s=%.2f error_kinds=%s"
      % (len(acks), len(lost), twice + len(changed),
         len([n for n in stored if n not in acks]), errs,
         after_fault, after_restart, gap, stall,
         ",".join("%s:%d" % kv for kv in kinds.most_common(3)) or "-"))
if lost or changed:
    print("LOST", " ".join(sorted(lost + changed)[:20]))
PY

now() { python3 -c 'import time; print("%.3f" % time.time())'; }

# etcd_up I: start member I of the trial's cluster (new or existing).
etcd_up() {
	local i=$1 state=$2
	"$ETCD" --name "e$i" --data-dir "$T/etcd$i" \
	    --listen-client-urls "http://127.0.0.1:${CP[$i]}" \
	    --advertise-client-urls "http://127.0.0.1:${CP[$i]}" \
	    --listen-peer-urls "http://127.0.0.1:${PP[$i]}" \
	    --initial-advertise-peer-urls "http://127.0.0.1:${PP[$i]}" \
	    --initial-cluster "$CLUSTER" --initial-cluster-state "$state" \
	    --initial-cluster-token "vrfault-$K" --logger zap --log-level warn \
	    >>"$T/etcd$i.log" 2>&1 &
	EP[$i]=$!
	PIDS="$PIDS $!"
	disown $!	# no "Killed" notice from the shell
}

# server_up S: start volrayd S (0 or 1) on the trial's etcd.
server_up() {
	local s=$1
	"$VRD" --data-dir "$T/vr$s" --listen "127.0.0.1:${VP[$s]}" --plain-http \
	    --no-local-node --roles api --share-dir "$SHARE_DIR" \
	    --etcd-servers "$ENDPOINTS" >>"$T/volrayd$s.log" 2>&1 &
	SP[$s]=$!
	PIDS="$PIDS $!"
	disown $!
	wait_http "http://127.0.0.1:${VP[$s]}/readyz" 60 ok ||
	    die "volrayd $s did not start (trial $K): $(tail -3 "$T/volrayd$s.log")"
}

etcd_leader() {
	ETCDCTL_API=3 etcdctl --endpoints="$ENDPOINTS" endpoint status -w json |
	    python3 -c 'import json,sys
for i, e in enumerate(json.load(sys.stdin)):
    if e["Status"]["leader"] == e["Status"]["header"]["member_id"]: print(i + 1)'
}

trial() { # scenario K
	local sc=$1 i victim fault_t restart_t line
	K=$2
	T=$RUN_DIR/t$K
	mkdir -p "$T"
	declare -gA CP PP EP VP SP
	CLUSTER="" ENDPOINTS=""
	for i in 1 2 3; do
		CP[$i]=$(free_port); PP[$i]=$(free_port)
		CLUSTER="${CLUSTER:+$CLUSTER,}e$i=http://127.0.0.1:${PP[$i]}"
		ENDPOINTS="${ENDPOINTS:+$ENDPOINTS,}http://127.0.0.1:${CP[$i]}"
	done
	for i in 1 2 3; do etcd_up "$i" new; done
	for i in $(seq 1 100); do
		ETCDCTL_API=3 etcdctl --endpoints="$ENDPOINTS" --command-timeout=2s \
		    put /vrfault/ping x >/dev/null 2>&1 && break
		sleep 0.1
	done
	VP[0]=$(free_port); VP[1]=$(free_port)
	server_up 0
	server_up 1
	local wstart
	wstart=$(now)
	python3 "$RUN_DIR/writer.py" "$T/writes" "$SECONDS_RUN" "$WRITERS" \
	    "http://127.0.0.1:${VP[0]}" "http://127.0.0.1:${VP[1]}" \
	    "$T/vr0/pki/admin.token" &
	local wpid=$!
	sleep "$WARMUP"
	case $sc in
	member | leader)
		local leader
		leader=$(etcd_leader)
		victim=$leader
		[ "$sc" = leader ] || victim=$((leader % 3 + 1))
		fault_t=$(now)
		kill -9 "${EP[$victim]}"
		sleep "$DOWN"
		restart_t=$(now)
		etcd_up "$victim" existing ;;
	server)
		fault_t=$(now)
		kill -9 "${SP[1]}"
		sleep "$DOWN"
		restart_t=$(now)
		server_up 1 ;;
	allservers)
		fault_t=$(now)
		kill -9 "${SP[0]}" "${SP[1]}"
		sleep "$DOWN"
		restart_t=$(now)
		server_up 0 &
		server_up 1
		wait $! 2>/dev/null || true ;;
	esac
	wait "$wpid" || true
	ETCDCTL_API=3 etcdctl --endpoints="$ENDPOINTS" --command-timeout=30s get \
	    --prefix /registry/configmaps/default/ -w json >"$T/etcd.json"
	line=$(python3 "$RUN_DIR/check.py" "$T/writes" "$T/etcd.json" "$fault_t" \
	    "$restart_t" "$(python3 -c "print($wstart + $SECONDS_RUN)")")
	printf '%-10s trial %2d: %s\n' "$sc" "$K" "$line" | head -1
	echo "$sc $line" | head -1 >>"$RUN_DIR/results"
	if echo "$line" | grep -q LOST; then
		echo "$line" | tail -1
		cp -r "$T" "/tmp/etcdfaults-finding-$K"
		echo "# logs kept in /tmp/etcdfaults-finding-$K"
		FOUND=1
	fi
	for i in 0 1; do kill -9 "${SP[$i]}" 2>/dev/null || true; done
	for i in 1 2 3; do kill -9 "${EP[$i]}" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ "$KEEP" = 1 ] || rm -rf "$T"
}

FOUND=0
: >"$RUN_DIR/results"
echo "# etcdfaults: TRIALS=$TRIALS WRITERS=$WRITERS SECONDS=$SECONDS_RUN DOWN=$DOWN," \
    "$("$ETCD" --version | head -1), $("$VRD" --version 2>/dev/null | head -1)"
k=0
for sc in $SCENARIOS; do
	for n in $(seq 1 "$TRIALS"); do
		k=$((k + 1))
		trial "$sc" "$k"
	done
done
echo
python3 - "$RUN_DIR/results" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    sc, *kv = line.split()
    d = dict(x.split("=") for x in kv if "=" in x)
    rows.setdefault(sc, []).append(d)
print("| scenario | trials | acknowledged | lost | twice | errors seen by writers | first 201 after the fault, median / max s | longest stall after the fault, median / max s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for sc, ds in rows.items():
    f = lambda k: [float(d[k]) for d in ds]
    s = lambda k: sum(int(d[k]) for d in ds)
    print("| %s | %d | %d | %d | %d | %d | %.2f / %.2f | %.2f / %.2f |" % (
        sc, len(ds), s("acked"), s("lost"), s("twice"), s("errors"),
        statistics.median(f("first_after_fault_s")), max(f("first_after_fault_s")),
        statistics.median(f("stall_s")), max(f("stall_s"))))
PY
[ "$FOUND" = 0 ] || die "acknowledged writes were lost (see above)"
