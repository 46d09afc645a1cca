#!/bin/sh
# Port-forward into the local node's pods, as a kubelet serves it: kubectl
# port-forward (SPDY/3.1, inside a WebSocket as kubectl 1.31+ tries first,
# else after an HTTP upgrade) to a pod and through a Service's port, to
# a Ray head's dashboard and `ray job submit` through it, the
# official Python client's portforward() and the JavaScript client's
# PortForward and Exec (the WebSocket channel protocol); a port nothing
# listens on gives the kubelet's error, a simulated node's pod a refusal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jslib.sh"
LOCAL_NODE=1
js_client_setup
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
PY=/usr/bin/python3
"$PY" -c 'import kubernetes' 2>/dev/null ||
	skip "python3-kubernetes is not installed (scripts/deps.sh installs it)"
WEB=$(free_port)

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: python
    command: [$PY, -m, http.server, "$WEB", --bind, 127.0.0.1]
    ports: [{name: http, containerPort: $WEB}]
    readinessProbe: {tcpSocket: {port: $WEB}, periodSeconds: 1}
YAML
mkdir -p "$WORK/data/pods/default/web/root"
echo "hello from the pod" >"$WORK/data/pods/default/web/root/hello.txt"
k wait --for=condition=Ready pod/web --timeout=30s >/dev/null || fail "pod web not Ready"

# kubectl port-forward: LOCAL:REMOTE, the line kubectl prints once it
# listens; pf NAME ARGS... starts one in the background.
PFS=""
trap 'for p in $PFS; do kill $p 2>/dev/null || true; done; cleanup' EXIT INT TERM
pf() {
	name=$1; shift
	kubectl port-forward "$@" >"$WORK/$name.log" 2>&1 &
	PFS="$PFS $!"
	i=0
	until grep -q "^Forwarding from 127.0.0.1" "$WORK/$name.log"; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "kubectl port-forward $*: $(cat "$WORK/$name.log")"
		sleep 0.05
	done
}
P1=$(free_port)
pf pod-ws pod/web "$P1:$WEB"
expect_eq "hello from the pod" "$(command curl -fsS "http://127.0.0.1:$P1/hello.txt")" "through kubectl port-forward"
for i in 1 2 3 4 5; do
	command curl -fsS -o /dev/null "http://127.0.0.1:$P1/hello.txt" || fail "connection $i through one port-forward"
done
pass "kubectl port-forward pod/web (SPDY in a WebSocket): six connections"

k expose pod web --port=80 --target-port=http >/dev/null
P2=$(free_port)
KUBECTL_PORT_FORWARD_WEBSOCKETS=false pf svc-spdy svc/web "$P2:80"
expect_eq "hello from the pod" "$(command curl -fsS "http://127.0.0.1:$P2/hello.txt")" "svc through SPDY"
head -c 5000000 /dev/urandom >"$WORK/data/pods/default/web/root/big.bin"
command curl -fsS -o "$WORK/big.out" "http://127.0.0.1:$P2/big.bin" || fail "5 MB through SPDY"
cmp -s "$WORK/big.out" "$WORK/data/pods/default/web/root/big.bin" || fail "5 MB through SPDY differ"
pass "kubectl port-forward svc/web:80 (SPDY after an upgrade, the fallback): 5 MB intact"

P3=$(free_port)
pf refused pod/web "$P3:1"
command curl -s -m 5 "http://127.0.0.1:$P3/" >/dev/null 2>&1 || true
i=0
until grep -q "error forwarding port 1 to pod default/web" "$WORK/refused.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no error for a refused port: $(cat "$WORK/refused.log")"
	sleep 0.1
done
pass "a port nothing listens on: the kubelet's error through kubectl"

# KubeRay's quick start: port-forward the head's service, submit a job.
DPORT=$(free_port)
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: head
  labels: {ray.io/node-type: head, ray.io/cluster: rc}
spec:
  nodeName: $NODE
  containers:
  - name: ray-head
    image: rayproject/ray:2.46.0
    command: [/bin/sh, -c, "ray start --head --dashboard-host=0.0.0.0 --dashboard-port=$DPORT --block"]
    ports: [{name: dashboard, containerPort: $DPORT}]
---
apiVersion: v1
kind: Service
metadata: {name: rc-head-svc}
spec:
  selector: {ray.io/node-type: head, ray.io/cluster: rc}
  ports: [{name: dashboard, port: 8265, targetPort: dashboard}]
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/head --timeout=30s >/dev/null || fail "head not Running"
P4=$(free_port)
pf head svc/rc-head-svc "$P4:8265"
out=$("$top_builddir/libexec/ray" job submit --address "http://127.0.0.1:$P4" --submission-id pf-1 -- echo hi from the quick start 2>&1) ||
	fail "ray job submit through kubectl port-forward: $out"
expect_contains "$out" "Job 'pf-1' succeeded" "the job through the port-forward"
expect_contains "$out" "hi from the quick start" "its logs followed"
pass "KubeRay's quick start: kubectl port-forward svc/rc-head-svc 8265, ray job submit"

# A head on a simulated node: its dashboard on a loopback port of its own.
"$top_builddir/volray" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix pfv >/dev/null ||
	fail "volray node add"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: vhead
  labels: {ray.io/node-type: head, ray.io/cluster: vc}
spec:
  nodeName: pfv-0
  containers:
  - {name: ray-head, image: rayproject/ray:2.46.0, command: [ray, start, --head], ports: [{name: dashboard, containerPort: 8265}]}
---
apiVersion: v1
kind: Service
metadata: {name: vc-head-svc}
spec:
  selector: {ray.io/node-type: head, ray.io/cluster: vc}
  ports: [{name: dashboard, port: 8265, targetPort: dashboard}]
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/vhead --timeout=30s >/dev/null || fail "vhead not Running"
P5=$(free_port)
pf vhead svc/vc-head-svc "$P5:8265"
out=$("$top_builddir/libexec/ray" job submit --address "http://127.0.0.1:$P5" --submission-id pf-2 \
	--metadata-json '{"volray.io/sim-duration": "300ms"}' -- python job.py 2>&1) ||
	fail "ray job submit to a simulated head through kubectl port-forward: $out"
expect_contains "$out" "Job 'pf-2' succeeded" "a simulated head's job through the port-forward"
P6=$(free_port)
pf vhead-other pod/vhead "$P6:9999"
command curl -s -m 5 "http://127.0.0.1:$P6/" >/dev/null 2>&1 || true
i=0
until grep -q "serves nothing on port 9999" "$WORK/vhead-other.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no error for a simulated pod's other port: $(cat "$WORK/vhead-other.log")"
	sleep 0.1
done
pass "a Ray head on a simulated node: port-forward svc 8265 reaches its dashboard, another port is refused"

# The Python client: portforward() over v4.channel.k8s.io.
"$PY" - "$WEB" <<'PY' || fail "python client port-forward"
import os, sys
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
port = int(sys.argv[1])
pf = portforward(core.connect_get_namespaced_pod_portforward, "web",
                 "default", ports=str(port))
s = pf.socket(port)
s.setblocking(True)
s.sendall(b"GET /hello.txt HTTP/1.0\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
s.close()
if not data.startswith(b"HTTP/1.0 200") or b"hello from the pod" not in data:
    sys.exit("through the tunnel: %r" % data[:200])
if pf.error(port) is not None:
    sys.exit("error channel: %r" % pf.error(port))
pf.close()
# A port nothing listens on: the error channel says so.
pf = portforward(core.connect_get_namespaced_pod_portforward, "web",
                 "default", ports="1")
s = pf.socket(1)
s.setblocking(True)
s.recv(10)
err = pf.error(1) or ""
if "error forwarding port 1 to pod default/web" not in err:
    sys.exit("refused port: %r" % err)
pf.close()
PY
pass "python client: portforward() to a pod's port, and a refused one"

# The JavaScript client: PortForward and Exec.
cat >"$WORK/pf.mjs" <<'JS'
import * as k8s from '@kubernetes/client-node';
import net from 'node:net';
import stream from 'node:stream';
const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const port = Number(process.argv[2]);
function fail(msg) { console.error('FAIL: ' + msg); process.exit(1); }

// Exec: stdout and the Status with the exit code.
let out = '';
const stdout = new stream.Writable({ write(c, e, cb) { out += c; cb(); } });
const st = await new Promise((resolve, reject) => {
    new k8s.Exec(kc).exec('default', 'web', 'c',
        ['sh', '-c', 'echo js-exec; exit 2'], stdout, null, null, false,
        resolve).catch(reject);
});
if (out.trim() !== 'js-exec') fail(`exec stdout: ${JSON.stringify(out)}`);
if (st.status !== 'Failure' || st.reason !== 'NonZeroExitCode' ||
    st.details.causes[0].message !== '2')
    fail(`exec status: ${JSON.stringify(st)}`);

// PortForward behind a local listener, as its documentation shows.
const pf = new k8s.PortForward(kc);
const server = net.createServer((sock) => {
    pf.portForward('default', 'web', [port], sock, null, sock);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const body = await new Promise((resolve, reject) => {
    const c = net.connect(server.address().port, '127.0.0.1', () => {
        c.write('GET /hello.txt HTTP/1.0\r\n\r\n');
    });
    let got = '';
    c.on('data', (d) => { got += d; if (got.includes('hello from the pod')) { resolve(got); c.destroy(); } });
    c.on('error', reject);
    setTimeout(() => reject(new Error('timeout: ' + got)), 10000);
});
if (!body.startsWith('HTTP/1.0 200')) fail(`port-forward: ${body}`);
server.close();
process.exit(0);
JS
(cd "$WORK" && timeout 60 node pf.mjs "$WEB") || fail "javascript client exec and port-forward"
pass "javascript client: Exec and PortForward"
