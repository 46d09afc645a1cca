#!/bin/sh
# The Ray head's Jobs API through the API server's service proxy: job
# submissions/s and status polls/s over one keep-alive HTTPS connection
# (one curl process, requests one after another), against GET /readyz on
# the same kind of connection as the baseline (what TLS, HTTP and the
# client cost without the proxy, authorization, selector and job table).
# The head is a pod on a virtual node; the jobs are simulated and run for
# 10 s, so the table grows by N running jobs. Then a Lua controller's
# volray.http: M ConfigMaps, each reconciled into one GET of the job's
# status through the service proxy and a patch of the ConfigMap with the
# answer, against the same controller patching without the HTTP call.
#   N=5000 M=1000 sh bench/rayhead.sh        SMALL=1 for a quick run
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
N=${N:-5000}
M=${M:-1000}
[ "${SMALL:-}" = 1 ] && N=200 && M=100
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
[ -x "$VOLRAYD" ] || { echo "rayhead.sh: no volrayd at $VOLRAYD: build it first, or set VOLRAYD" >&2; exit 1; }
VOLRAY=$(dirname "$VOLRAYD")/volray
work=$(mktemp -d /var/tmp/volray-raybench.XXXXXX)
pid=""
trap '[ -z "$pid" ] || kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/pol/controllers"
cat >"$work/pol/controllers/raybench.lua" <<'LUA'
-- Bench controller: a ConfigMap with data.job gets data.status, the Ray
-- job's status read with volray.http (data.http = "1") or a constant.
local v = volray
local c = { primary = "v1/configmaps" }
function c.reconcile(req)
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  local d = cm and cm.data
  if d == nil or d.job == nil or d.status ~= nil then return nil end
  local st = "none"
  if d.http == "1" then
    local resp, err = v.http{ url = v.service_url(req.namespace,
      "bench-head-svc", 8265) .. "/api/jobs/" .. d.job }
    if resp == nil and err == "pending" then return nil end
    st = resp and resp.json and resp.json.status or ("error " .. tostring(err))
  end
  v.patch("v1/configmaps", req.namespace, req.name, { data = { status = st } })
  return nil
end
return c
LUA
"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" --no-local-node \
	--share-dir "$top" --policy-dir "$work/pol" 2>"$work/log" &
pid=$!
until [ -f "$work/data/kubeconfig" ] && command curl -fsk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
	kill -0 $pid 2>/dev/null || { cat "$work/log" >&2; exit 1; }
	sleep 0.05
done
export KUBECONFIG="$work/data/kubeconfig"
API="https://127.0.0.1:$port"
CA="$work/data/pki/ca.crt"
TOKEN=$(cat "$work/data/pki/admin.token")
"$VOLRAY" node add --virtual --count 1 --cpu 64 --memory 256Gi --name-prefix bench >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: bench-head, labels: {ray.io/node-type: head, ray.io/cluster: bench}}
spec:
  nodeName: bench-0
  containers: [{name: ray-head, image: rayproject/ray, ports: [{name: dashboard, containerPort: 8265}]}]
---
apiVersion: v1
kind: Service
metadata: {name: bench-head-svc}
spec:
  selector: {ray.io/node-type: head, ray.io/cluster: bench}
  ports: [{name: dashboard, port: 8265}]
YAML
kubectl wait --for=jsonpath='{.status.phase}'=Running pod/bench-head --timeout=30s >/dev/null
P="$API/api/v1/namespaces/default/services/bench-head-svc:8265/proxy"

# run NAME CONFIG: the requests of a curl config file over one
# connection; prints the rate and checks that every answer was 200.
run() {
	t0=$(date +%s.%N)
	command curl -K "$2" >"$work/codes" || true
	t1=$(date +%s.%N)
	bad=$(grep -vc '^200 ' "$work/codes" || true)
	conns=$(awk '{s += $2} END {print s}' "$work/codes")
	[ "$bad" = 0 ] || { echo "rayhead.sh: $1: $bad answers were not 200" >&2; sort "$work/codes" | uniq -c >&2; exit 1; }
	python3 -c 'import sys; n, t0, t1, c = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[5]; print("%-28s %6d requests %7.3f s %8.0f/s  %6.0f us each  (%s connection(s))" % (sys.argv[4], n, t1 - t0, n / (t1 - t0), (t1 - t0) / n * 1e6, c))' \
		"$N" "$t0" "$t1" "$1" "$conns"
}

# curl config files: one request per block, "next" between blocks.
python3 - "$N" "$API" "$P" "$work" "$CA" "$TOKEN" <<'PY'
import json, sys
n, api, p, work, ca, token = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
# Options do not carry over "next": every block has its own.
common = ('cacert = "%s"\nheader = "Authorization: Bearer %s"\noutput = "/dev/null"\n'
    'write-out = "%%{http_code} %%{num_connects}\\n"\nsilent\n' % (ca, token))
def write(name, blocks):
    with open(work + "/" + name, "w") as f:
        f.write("next\n".join(common + b for b in blocks))
write("readyz", ['url = "%s/readyz"\n' % api] * n)
write("submit", ['url = "%s/api/jobs/"\nheader = "Content-Type: application/json"\ndata = %s\n' %
    (p, json.dumps(json.dumps({"entrypoint": "python job.py", "submission_id": "b-%d" % i,
    "metadata": {"volray.io/sim-duration": "10s"}}))) for i in range(n)])
write("status", ['url = "%s/api/jobs/b-%d"\n' % (p, i % 100) for i in range(n)])
PY
echo "volrayd $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, N=$N"
run "GET /readyz (baseline)" "$work/readyz"
run "POST /api/jobs/ (submit)" "$work/submit"
run "GET /api/jobs/ID (status)" "$work/status"
jobs=$(command curl -fs --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$P/api/jobs/" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$jobs" = "$N" ] || { echo "rayhead.sh: $jobs jobs listed, want $N" >&2; exit 1; }
echo "jobs listed: $jobs; volrayd RSS $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status)"

kubectl create clusterrole raybench --verb=get,list,watch,patch --resource=configmaps >/dev/null
kubectl create clusterrole raybench-proxy --verb=get --resource=services/proxy >/dev/null
kubectl create clusterrolebinding raybench --clusterrole=raybench --user=system:controller:raybench-controller >/dev/null
kubectl create clusterrolebinding raybench-proxy --clusterrole=raybench-proxy --user=system:controller:raybench-controller >/dev/null
# lua NAME HTTP: M ConfigMaps at once, the time until each has its status.
lua() {
	python3 - "$M" "$1" "$2" >"$work/cms.json" <<'PY'
import json, sys
m, name, http = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s-%d" % (name, i),
     "labels": {"run": name}}, "data": {"job": "b-%d" % (i % 100), "http": http}} for i in range(m)]}))
PY
	t0=$(date +%s.%N)
	want=none
	[ "$2" = 0 ] || want='PENDING|RUNNING|SUCCEEDED'
	kubectl create --validate=false -f "$work/cms.json" >/dev/null
	until [ "$(kubectl get cm -l run="$1" -o jsonpath='{range .items[*]}{.data.status}{"\n"}{end}' |
	    grep -cxE "$want")" = "$M" ]; do
		kill -0 $pid 2>/dev/null || { echo "rayhead.sh: volrayd died" >&2; exit 1; }
		sleep 0.2
	done
	t1=$(date +%s.%N)
	python3 -c 'import sys; m, t0, t1 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); print("%-28s %6d objects  %7.3f s %8.0f/s" % (sys.argv[4], m, t1 - t0, m / (t1 - t0)))' \
		"$M" "$t0" "$t1" "$3"
}
lua plain 0 "Lua reconcile + patch"
lua http 1 "+ volray.http GET (proxy)"
