#!/bin/sh
# Reconcile throughput through the whole path: store event -> workqueue ->
# Lua reconcile -> registry writes -> status. Creates N Deployments (or,
# with KIND=replicasets, ReplicaSets) of 3 replicas at once and waits until
# every one reports 3 up-to-date replicas (pods exist; with no simulated
# nodes yet they cannot become available); prints the total time,
# reconciles/s and the CPU split between the Lua VM and C. The same run
# with no-op reconciles (from --policy-dir) shows the host's cost per call.
#   N=1000 sh bench/reconcile.sh        SMALL=1 for a quick run
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
N=${N:-1000}
KIND=${KIND:-deployments}
[ "${SMALL:-}" = 1 ] && N=50
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
[ -x "$VOLRAYD" ] || { echo "reconcile.sh: no volrayd at $VOLRAYD: build it first, or set VOLRAYD" >&2; exit 1; }
work=$(mktemp -d /var/tmp/volray-rbench.XXXXXX)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

start() { # extra flags
	rm -rf "$work/data"
	"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" \
		--no-local-node --plain-http --share-dir "$top" "$@" 2>"$work/log" &
	pid=$!
	until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do sleep 0.02; done
	AUTH="Authorization: Bearer $(cat "$work/data/pki/admin.token")"
	export AUTH
}

# curl: the admin's token on every request.
curl() {
	command curl ${AUTH:+-H "$AUTH"} "$@"
}

metric() {
	curl -fs "http://127.0.0.1:$port/metrics" | sed -n "s/^$1 //p"
}

cpu_seconds() { # utime+stime of pid in seconds
	awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$pid/stat"
}

create_all() {
	python3 - "$port" "$N" "$KIND" <<'PY'
import http.client, json, os, sys, threading
port, n, plural = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
kind = {"deployments": "Deployment", "replicasets": "ReplicaSet"}[plural]
def work(t, nt):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(t, n, nt):
        name = "w-%d" % i
        body = json.dumps({"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
        c.request("POST", "/apis/apps/v1/namespaces/default/" + plural, body,
                  {"Content-Type": "application/json",
                   "Authorization": os.environ["AUTH"].split(": ", 1)[1]})
        r = c.getresponse(); r.read()
        assert r.status == 201, r.status
ts = [threading.Thread(target=work, args=(t, 16)) for t in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
}

run() { # label
	t0=$(date +%s.%N)
	c0=$(cpu_seconds)
	create_all
	if [ "$1" = lua ]; then
		field=replicas
		[ "$KIND" = deployments ] && field=updatedReplicas
		until [ "$(curl -fs "http://127.0.0.1:$port/apis/apps/v1/$KIND" |
		    python3 -c 'import json,sys; f=sys.argv[1]; print(sum(1 for i in json.load(sys.stdin)["items"] if i.get("status",{}).get(f)==3))' "$field")" -ge "$N" ] &&
		    [ "$(metric 'volray_objects{resource="pods"}')" = $((3 * N)) ]; do
			sleep 0.1
		done
	else
		until [ "$(metric volray_reconciles_total)" -ge "$N" ] &&
		    [ "$(curl -fs "http://127.0.0.1:$port/metrics" | grep -c '^volray_workqueue_depth{.*} [1-9]')" = 0 ]; do
			sleep 0.05
		done
	fi
	t1=$(date +%s.%N)
	c1=$(cpu_seconds)
	rec=$(metric volray_reconciles_total)
	lua=$(metric volray_lua_seconds_total)
	api=$(metric volray_lua_api_seconds_total)
	pods=$(metric 'volray_objects{resource="pods"}')
	python3 - "$1" "$t0" "$t1" "$c0" "$c1" "$rec" "$lua" "${pods:-0}" "$api" <<'PY'
import sys
label, t0, t1, c0, c1, rec, lua, pods, api = sys.argv[1], *map(float, sys.argv[2:])
wall, cpu = t1 - t0, c1 - c0
pure = lua - api   # time in the Lua VM itself; api is C called from Lua
print("%-5s wall %5.2f s  reconciles %5d  %6.0f/s  pods %5d  cpu %5.2f s  "
      "in Lua VM %5.2f s (%2.0f%%)  in C %5.2f s  Lua VM per call %6.1f us" %
      (label, wall, rec, rec / wall, pods, cpu, pure, 100 * pure / cpu if cpu else 0,
       cpu - pure, 1e6 * pure / rec if rec else 0))
PY
	kill $pid; wait $pid 2>/dev/null || true
}

echo "reconcile benchmark: $N $KIND x 3 replicas ($(nproc) cores)"
start
run lua
mkdir -p "$work/noop/controllers"
for c in replicaset:apps/v1/replicasets deployment:apps/v1/deployments job:batch/v1/jobs; do
	cat >"$work/noop/controllers/${c%%:*}.lua" <<LUA
-- A no-op controller: measures the host's cost per call.
return { primary = "${c#*:}", reconcile = function(req) return nil end }
LUA
done
start --policy-dir "$work/noop"
run noop
