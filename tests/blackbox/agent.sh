#!/bin/sh
# Agent mode (issue 21): a second volrayd runs this machine's node, a
# simulated node and the Ray heads (--roles nodes,ray --kubeconfig) for a
# volrayd that serves the API alone, as a kubelet does for kube-apiserver.
# Agent A runs this machine alone (--no-virtual-nodes): it mirrors only
# the kinds its roles read, and only its Node and the pods bound to it
# (field selectors). Agent B runs the virtual nodes but those labelled
# for agent C (--virtual-node-selector), C runs those: each node's
# address is its own agent's endpoint.
# What lives only on the agent is reached through the API server's node
# proxy to the agent's endpoint (status.daemonEndpoints): kubectl exec and
# port-forward (the upgraded connection relayed), kubectl logs
# (--tail, --timestamps, -f to the pod's end, -c, -p refused as on a
# cluster), the service proxy to a Ray head on the simulated node (a job
# submitted and followed), the pod proxy to a server in a pod of the
# agent's local node (at the pod's address), nodes/NAME/proxy. The endpoint serves only the
# API server: no client certificate is 401, a certificate of the same CA
# for another user 403.
. "$(dirname "$0")/lib.sh"

AGENT="" AGENTS=""
# agent() runs in $(...), a subshell: its daemons' pids go to a file.
# Local containers outlive their agent (by design): their shims go too,
# and the containers themselves (a shim killed with -9 leaves its
# container running: each run left its pods' servers behind), found by
# their working directories under $WORK.
stop_all() {
	for p in $AGENT $AGENTS $(cat "$WORK/agents.pids" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null || true
	done
	pkill -9 -f "volray-shim -d $WORK/" 2>/dev/null || true
	for d in /proc/[0-9]*; do
		case "$(readlink "$d/cwd" 2>/dev/null)" in
		"$WORK"/*) kill -9 "${d#/proc/}" 2>/dev/null || true ;;
		esac
	done
}
trap 'rc=$?; stop_all; (exit $rc); cleanup' EXIT INT TERM

start_daemon --roles api
MA=$(free_port)
# --ray-emulated as lib.sh's daemons: the agent's pods share the host's
# network (the pod network is on by default only for real Ray).
"$VOLRAYD" --data-dir "$WORK/agent" --kubeconfig "$DATA/kubeconfig" --roles nodes,ray \
	--ray-emulated --no-virtual-nodes --node-listen 127.0.0.1:0 --metrics-listen "127.0.0.1:$MA" \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} >>"$WORK/agent.log" 2>&1 &
AGENT=$!
# agent NAME FLAGS...: another agent, of virtual nodes only.
agent() {
	name=$1; shift
	"$VOLRAYD" --data-dir "$WORK/$name" --kubeconfig "$DATA/kubeconfig" --no-local-node \
		--node-listen 127.0.0.1:0 ${SHARE_DIR:+--share-dir "$SHARE_DIR"} "$@" \
		>>"$WORK/$name.log" 2>&1 &
	AGENTS="$AGENTS $!"
	echo $! >>"$WORK/agents.pids"
	i=0
	until grep -q "the nodes. endpoint on" "$WORK/$name.log"; do
		i=$((i + 1)); [ $i -lt 200 ] || { tail -5 "$WORK/$name.log"; fail "agent $name did not start"; }
		sleep 0.05
	done
	sed -n 's/.*the nodes. endpoint on 127.0.0.1:\([0-9]*\),.*/\1/p' "$WORK/$name.log"
}
BPORT=$(agent b --roles nodes,ray --virtual-node-selector 'volray.io/agent!=c')
CPORT=$(agent c --roles nodes --virtual-node-selector 'volray.io/agent=c')
NODE=$(hostname | tr 'A-Z' 'a-z')
i=0
until k get node "$NODE" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || { tail -5 "$WORK/agent.log"; fail "the agent registered no node"; }
	kill -0 "$AGENT" 2>/dev/null || { tail -5 "$WORK/agent.log"; fail "the agent exited"; }
	sleep 0.05
done
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "the agent's node not Ready"
EPORT=$(sed -n 's/.*the nodes. endpoint on 127.0.0.1:\([0-9]*\),.*/\1/p' "$WORK/agent.log")
[ -n "$EPORT" ] || fail "the agent logged no endpoint"
expect_eq "127.0.0.1 $EPORT" "$(k get node "$NODE" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address} {.status.daemonEndpoints.kubeletEndpoint.Port}')" \
	"the node's address and endpoint port"
pass "the agent registered $NODE with its endpoint 127.0.0.1:$EPORT"

# --- kubectl logs through the node proxy
k apply -f - >/dev/null <<YAML || fail "create pods"
apiVersion: v1
kind: Pod
metadata: {name: talk}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'for i in 1 2 3 4 5; do echo line \$i; done; echo err >&2']}
---
apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - {name: a, image: busybox, command: [sh, -c, 'for i in 1 2 3; do echo tick \$i; sleep 0.4; done']}
  - {name: b, image: busybox, command: [sh, -c, 'echo from b']}
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/talk --timeout=20s >/dev/null || fail "talk did not succeed"
expect_eq "line 1
line 2
line 3
line 4
line 5
err" "$(k logs talk)" "kubectl logs"
expect_eq "line 5
err" "$(k logs talk --tail=2)" "kubectl logs --tail=2"
k logs talk --timestamps --tail=1 | grep -Eq '^20[0-9-]+T[0-9:.]+Z err$' || fail "kubectl logs --timestamps"
err=$(k logs talk -p 2>&1) && fail "logs -p of a pod that never restarted"
expect_contains "$err" 'previous terminated container "c" in pod "talk" not found' "logs -p"
# -f follows the running container to its end, through the proxy.
out=$(k logs -f slow -c a) || fail "kubectl logs -f"
expect_eq "tick 1
tick 2
tick 3" "$out" "kubectl logs -f"
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/slow --timeout=20s >/dev/null || fail "slow did not succeed"
expect_eq "from b" "$(k logs slow -c b)" "kubectl logs -c b"
pass "kubectl logs, --tail, --timestamps, -f, -c of the agent's pods through the API server"

expect_eq ok "$(k get --raw "/api/v1/nodes/$NODE/proxy/healthz")" "nodes/proxy/healthz"
expect_eq "line 5" "$(k get --raw "/api/v1/nodes/$NODE/proxy/containerLogs/default/talk/c?tailLines=2" | head -1)" \
	"nodes/proxy/containerLogs"
pass "nodes/NAME/proxy reaches the agent's endpoint"

# --- the pod proxy to a server of a pod of the agent's local node: through
# the agent's endpoint to the pod's address (node/podproxy.c)
WPORT=$(free_port)
k apply -f - >/dev/null <<YAML || fail "create pod web"
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: python
    command: [python3, -c, 'import http.server as h; h.ThreadingHTTPServer(("127.0.0.1", $WPORT), type("H", (h.BaseHTTPRequestHandler,), {"do_GET": lambda s: (s.send_response(200), s.send_header("Content-Type", "text/plain"), s.end_headers(), s.wfile.write(b"web " + s.path.encode()))})).serve_forever()']
YAML
k wait --for=condition=Ready pod/web --timeout=20s >/dev/null || fail "web did not start"
wait_eq "web /hello?x=1" "the pod proxy to the agent's pod" \
	kubectl get --raw "/api/v1/namespaces/default/pods/web:$WPORT/proxy/hello?x=1"
out=$(k get --raw "/api/v1/namespaces/default/pods/web:$((WPORT + 1))/proxy/" 2>&1) &&
	fail "a port nothing serves answered: $out"
expect_contains "$out" "dial tcp 127.0.0.1:$((WPORT + 1)): connect: connection refused" \
	"the pod proxy to a port nothing serves"
k delete pod web --grace-period=0 >/dev/null 2>&1 || true
pass "the pod proxy reaches a server of the agent's pod at its address"

# --- the endpoint serves the API server only
code=$(command curl -sk -o "$WORK/body" -w '%{http_code}' "https://127.0.0.1:$EPORT/containerLogs/default/talk/c")
expect_eq 401 "$code" "no client certificate"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$WORK/alice.key" -subj "/CN=alice/O=dev" -out "$WORK/alice.csr" 2>/dev/null
openssl x509 -req -in "$WORK/alice.csr" -CA "$DATA/pki/ca.crt" -CAkey "$DATA/pki/ca.key" \
	-CAcreateserial -days 1 -out "$WORK/alice.crt" 2>/dev/null || fail "sign alice"
code=$(command curl -sk --cert "$WORK/alice.crt" --key "$WORK/alice.key" -o "$WORK/body" \
	-w '%{http_code}' "https://127.0.0.1:$EPORT/containerLogs/default/talk/c")
expect_eq 403 "$code" "another user's certificate"
expect_contains "$(cat "$WORK/body")" "user=alice" "the 403 names the user"
pass "the endpoint: 401 without a certificate, 403 for another user"

# --- virtual nodes shared out between agents B and C
"$top_builddir/volray" node add --virtual --count 1 --cpu 8 --memory 16Gi \
	--name-prefix av >/dev/null || fail "volray node add"
k apply -f - >/dev/null <<'YAML' || fail "create node cv-0"
apiVersion: v1
kind: Node
metadata:
  name: cv-0
  labels: {volray.io/runtime: virtual, volray.io/agent: c}
YAML
k wait --for=condition=Ready node/av-0 node/cv-0 --timeout=10s >/dev/null || fail "the simulated nodes not Ready"
ep() { k get node "$1" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address} {.status.daemonEndpoints.kubeletEndpoint.Port}'; }
expect_eq "127.0.0.1 $BPORT" "$(ep av-0)" "av-0 is agent B's"
expect_eq "127.0.0.1 $CPORT" "$(ep cv-0)" "cv-0 is agent C's (--virtual-node-selector)"
expect_eq "127.0.0.1 $EPORT" "$(ep "$NODE")" "$NODE is still agent A's"
grep -q "node cv-0: managed" "$WORK/b.log" && fail "agent B took agent C's node"
grep -q "node av-0: managed" "$WORK/agent.log" && fail "agent A (--no-virtual-nodes) took a virtual node"
pass "virtual nodes shared out by --virtual-node-selector; --no-virtual-nodes takes none"

# --- a Ray head on agent B's simulated node, through the service proxy
k apply -f - >/dev/null <<'YAML' || fail "create the head"
apiVersion: v1
kind: Pod
metadata:
  name: vhead
  labels: {ray.io/node-type: head, ray.io/cluster: vhead}
spec:
  nodeName: av-0
  containers:
  - name: ray-head
    image: rayproject/ray:2.46.0
    command: [/bin/sh, -c, "ray start --head --dashboard-host=0.0.0.0 --block"]
    ports: [{name: dashboard, containerPort: 8265}, {name: gcs, containerPort: 6379}]
---
apiVersion: v1
kind: Service
metadata: {name: vhead-svc}
spec:
  selector: {ray.io/node-type: head, ray.io/cluster: vhead}
  ports: [{name: dashboard, port: 8265, targetPort: dashboard}]
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/vhead --timeout=15s >/dev/null || fail "head not Running"
SVC="$API/api/v1/namespaces/default/services/vhead-svc:dashboard/proxy"
out=$(curl -fsS -X POST -H 'Content-Type: application/json' \
	-d '{"entrypoint": "python job.py", "submission_id": "agent-1", "metadata": {"volray.io/sim-duration": "300ms"}}' \
	"$SVC/api/jobs/") || fail "submit through the service proxy"
expect_contains "$out" '"submission_id":"agent-1"' "submission answer"
st() { curl -fs "$SVC/api/jobs/agent-1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
wait_eq SUCCEEDED "the job's status through the proxy" st
code=$(curl -s -o "$WORK/body" -w '%{http_code}' "$SVC/api/jobs/nope")
expect_eq 404 "$code" "an unknown job through the proxy"
code=$(curl -s -o "$WORK/body" -w '%{http_code}' "$API/api/v1/namespaces/default/pods/vhead:8265/proxy/api/jobs/agent-1")
expect_eq 200 "$code" "the pod proxy to the head"
pass "a Ray head on the agent: jobs submitted and followed through the service and pod proxies"

# --- agent A mirrors only what it reads: its own Node and pods
metric() { command curl -s "http://127.0.0.1:$MA/metrics" | sed -n "s/^volray_remote_mirror_objects{resource=\"$1\"} //p"; }
expect_eq 1 "$(metric nodes)" "agent A's mirrored Nodes (of $(k get nodes --no-headers | wc -l | tr -d ' '))"
expect_eq 2 "$(metric pods)" "agent A's mirrored pods (of $(k get pods --no-headers | wc -l | tr -d ' '))"
expect_eq "" "$(metric deployments.apps)" "agent A mirrors no Deployments"
expect_eq "" "$(metric replicasets.apps)" "agent A mirrors no ReplicaSets"
pass "agent A mirrors its Node and its pods only, and only the kinds it reads"

# --- exec and port-forward into the agent's pods, relayed by the API server
WEB=$(free_port)
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: busybox, command: [sleep, "3600"], env: [{name: WHERE, value: agent}]}
  - {name: web, image: python, command: [python3, -m, http.server, "$WEB", --bind, 127.0.0.1],
     readinessProbe: {tcpSocket: {port: $WEB}, periodSeconds: 1}}
YAML
k wait --for=condition=Ready pod/shell --timeout=30s >/dev/null || fail "pod shell not Ready"
rc=0
out=$(printf 'in\n' | k exec -i shell -c c -- sh -c 'echo "$WHERE $(cat)"; exit 4' 2>"$WORK/err") || rc=$?
expect_eq "agent in" "$out" "exec through the agent: output, stdin"
expect_eq 4 "$rc" "exec through the agent: exit code"
/usr/bin/python3 - "$WEB" <<'PY' || fail "port-forward through the agent"
import os, sys
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
port = int(sys.argv[1])
pf = portforward(client.CoreV1Api().connect_get_namespaced_pod_portforward,
                 "shell", "default", ports=str(port))
s = pf.socket(port)
s.setblocking(True)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
if not data.startswith(b"HTTP/1.0 200"):
    sys.exit("through the agent: %r" % data[:100])
PY
pass "exec and port-forward into the agent's pods, relayed by the API server"

# The agent gone: the API server says it cannot reach the node.
kill -9 "$AGENT"; wait "$AGENT" 2>/dev/null || true; AGENT=""
err=$(k logs talk 2>&1) && fail "logs with the agent gone"
expect_contains "$err" "containerLogs/default/talk/c" "the error names the node's URL"
pass "the agent gone: logs fail with the node's URL, the API server lives"
