#!/bin/sh
# Durability: many concurrent clients create objects; volrayd is killed
# with SIGKILL mid-stream; after a restart every write that was
# acknowledged (201) is present and intact.
. "$(dirname "$0")/lib.sh"
start_daemon

cat >"$WORK/writer.py" <<'PY'
import json, sys, threading, time, vrtest
port, out, nthreads, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lock = threading.Lock()
acked = open(out, "w")
stop = time.time() + seconds
def worker(t):
    i = 0
    try:
        c = vrtest.https(timeout=10)
        while True:
            name = "cm-%d-%d" % (t, i)
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"payload": name * 20}})
            c.request("POST", "/api/v1/namespaces/default/configmaps", body,
                      dict(vrtest.HEADERS, **{"Content-Type": "application/json"}))
            r = c.getresponse()
            r.read()
            if r.status == 201:
                with lock:
                    acked.write(name + "\n")
                    acked.flush()
            i += 1
    except Exception:
        pass  # the daemon was killed
threads = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
for t in threads: t.start()
for t in threads: t.join()
PY
: >"$WORK/acked"
python3 "$WORK/writer.py" "$PORT" "$WORK/acked" 16 60 &
WRITER=$!
# Kill once a good number of writes have been acknowledged.
i=0
until [ "$(wc -l <"$WORK/acked" 2>/dev/null || echo 0)" -ge 2000 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "writer made no progress"
	sleep 0.05
done
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=""
wait "$WRITER" || true
acked=$(wc -l <"$WORK/acked")
pass "killed volrayd after $acked acknowledged writes"

start_daemon
curl -fs "$API/api/v1/namespaces/default/configmaps" >"$WORK/list.json"
python3 - "$WORK/acked" "$WORK/list.json" <<'PY' || fail "acknowledged writes lost"
import json, sys
acked = [l.strip() for l in open(sys.argv[1]) if l.strip()]
items = {i["metadata"]["name"]: i for i in json.load(open(sys.argv[2]))["items"]}
missing = [n for n in acked if n not in items]
bad = [n for n in acked if n in items and items[n]["data"]["payload"] != n * 20]
print("acked %d, stored %d, missing %d, corrupt %d" % (len(acked), len(items), len(missing), len(bad)))
sys.exit(1 if missing or bad else 0)
PY
pass "every acknowledged write survived kill -9"
# The store keeps working after recovery.
k create -f - <<'YAML' >/dev/null || fail "write after recovery"
apiVersion: v1
kind: ConfigMap
metadata: {name: after-crash}
YAML
stop_daemon TERM
start_daemon
k get cm after-crash >/dev/null || fail "write after recovery lost on clean restart"
pass "writes after recovery persist"
