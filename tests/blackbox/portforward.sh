#!/bin/sh
# Port-forward into the local node's pods, as a kubelet serves it: kubectl
# port-forward (SPDY/3.1, inside a WebSocket as kubectl 1.31+ tries first,
# else after an HTTP upgrade) to a pod and through a Service's port, the
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
	fail "python3-kubernetes is not installed (scripts/deps.sh installs it)"
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
