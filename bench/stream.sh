#!/bin/sh
# Streaming subresources on the local node (issue 23's benchmark):
#  - exec round trips/s: the official Python client's stream() running
#    `true` in a pod N times one after another (each a new TLS connection,
#    WebSocket upgrade, process start through volray-shim, Status), against
#    the same client's new-connection GET /version (TLS and HTTP alone)
#    and a local fork/exec of `true` (the process alone);
#  - port-forward throughput: a SIZE MB file from an HTTP server in a pod,
#    fetched with curl through `kubectl port-forward` (SPDY in a WebSocket,
#    kubectl 1.31+'s default) and through the Python client's portforward()
#    (the channel protocol), against curl straight to the same port.
#   N=200 SIZE=200 sh bench/stream.sh            SMALL=1 for a quick run
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
N=${N:-200}
SIZE=${SIZE:-200}
[ "${SMALL:-}" = 1 ] && N=20 && SIZE=20
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
[ -x "$VOLRAYD" ] || { echo "stream.sh: no volrayd at $VOLRAYD: build it first, or set VOLRAYD" >&2; exit 1; }
PY=/usr/bin/python3
work=$(mktemp -d /var/tmp/volray-streambench.XXXXXX)
pid="" pf=""
trap '[ -z "$pf" ] || kill $pf 2>/dev/null || true; [ -z "$pid" ] || kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
WEB=$(free_port)
LOCALP=$(free_port)

# Pods on the host's network, as this benchmark measures them (the
# direct baseline dials 127.0.0.1), whatever Ray is installed.
"$VOLRAYD" --data-dir "$work/data" --listen 127.0.0.1:0 --share-dir "$top" \
	--pod-network host >"$work/volrayd.log" 2>&1 &
pid=$!
i=0
until [ -s "$work/data/kubeconfig" ] && curl -fsk "$(sed -n 's/^ *server: //p' "$work/data/kubeconfig")/readyz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || { tail "$work/volrayd.log"; exit 1; }
	sleep 0.05
done
export KUBECONFIG="$work/data/kubeconfig"
NODE=$(hostname | tr 'A-Z' 'a-z')
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: bench}
spec:
  nodeName: $NODE
  containers:
  - {name: sh, image: busybox, command: [sleep, "36000"]}
  - name: web
    image: python
    command: [$PY, -m, http.server, "$WEB", --bind, 127.0.0.1]
    readinessProbe: {tcpSocket: {port: $WEB}, periodSeconds: 1}
YAML
mkdir -p "$work/data/pods/default/bench/root"
head -c $((SIZE * 1024 * 1024)) /dev/urandom >"$work/data/pods/default/bench/root/blob"
kubectl wait --for=condition=Ready pod/bench --timeout=60s >/dev/null

echo "== exec round trips ($N, one after another)"
"$PY" - "$N" <<'PY'
import os, subprocess, sys, time
from kubernetes import client, config
from kubernetes.stream import stream
n = int(sys.argv[1])
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
def rate(what, fn):
    t0 = time.monotonic()
    for _ in range(n):
        fn()
    dt = time.monotonic() - t0
    print("%-44s %8.1f /s  (%.2f ms each)" % (what, n / dt, 1000 * dt / n))
def fresh():
    return client.CoreV1Api(client.ApiClient())
rate("exec `true` (python stream(), v4)", lambda: stream(
    fresh().connect_get_namespaced_pod_exec, "bench", "default",
    container="sh", command=["true"], stdout=True, stderr=True,
    stdin=False, tty=False))
rate("baseline: GET /version, new connection", lambda: fresh().api_client.call_api(
    "/version", "GET", response_type="object", _preload_content=True))
rate("baseline: local fork/exec of `true`", lambda: subprocess.run(["true"]))
PY

echo "== port-forward throughput ($SIZE MB)"
mb() { $PY -c "import sys; print('%.1f' % ($SIZE / float(sys.argv[1])))" "$1"; }
t() { s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); $PY -c "print(max($e - $s, 1e-6))"; }
d=$(t curl -fs -o /dev/null "http://127.0.0.1:$WEB/blob")
echo "direct: curl to 127.0.0.1:$WEB                     $(mb "$d") MB/s"
kubectl port-forward pod/bench "$LOCALP:$WEB" >"$work/pf.log" 2>&1 &
pf=$!
i=0
until grep -q "Forwarding from" "$work/pf.log" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || break
	sleep 0.05
done
if grep -q "Forwarding from" "$work/pf.log"; then
	k=$(t curl -fs -o /dev/null "http://127.0.0.1:$LOCALP/blob")
	echo "kubectl port-forward (SPDY in a WebSocket)       $(mb "$k") MB/s"
else
	echo "kubectl port-forward: not available: $(tail -1 "$work/pf.log")"
fi
kill "$pf" 2>/dev/null || true
pf=""
"$PY" - "$WEB" "$SIZE" <<'PY'
import os, sys, time
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
port, size = int(sys.argv[1]), int(sys.argv[2])
t0 = time.monotonic()
pf = portforward(client.CoreV1Api().connect_get_namespaced_pod_portforward,
                 "bench", "default", ports=str(port))
s = pf.socket(port)
s.setblocking(True)
s.sendall(b"GET /blob HTTP/1.0\r\n\r\n")
got = 0
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    got += len(d)
dt = time.monotonic() - t0
print("python portforward() (channel protocol)         %.1f MB/s  (%d bytes)" % (size / dt, got))
PY
