#!/bin/sh
# gRPC probes on the local node, as the kubelet runs them: the gRPC health
# checking protocol's Check (grpc.health.v1.Health) on the pod's address
# and the probe's port, with its service; SERVING passes, anything else
# fails with the kubelet's words in an Unhealthy Event. The server is a
# small Python one (Debian's python3-grpcio) that answers SERVING or
# NOT_SERVING as a file says, NotFound for another service than "" and
# "app", and UNIMPLEMENTED when run without the health service. A pod
# turns Ready, not Ready when its server says NOT_SERVING, Ready again;
# a liveness probe on a wrong service restarts its container; a port
# nothing listens on and a server without the protocol fail as they do
# under a kubelet.
. "$(dirname "$0")/lib.sh"
# Debian's package lives in Debian's interpreter, whatever python3 is first
# on PATH. scripts/deps.sh installs it; a test that cannot run fails.
PY=/usr/bin/python3
"$PY" -c 'import grpc' 2>/dev/null ||
	fail "python3-grpcio is not installed (scripts/deps.sh installs it)"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')

cat >"$WORK/health.py" <<'PY'
"""A gRPC health server without generated code: raw bytes in and out."""
import sys, time
from concurrent import futures
import grpc

port, state, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def check(req, ctx):
    # HealthCheckRequest: field 1 (service), length-delimited; short here.
    svc = req[2:2 + req[1]] if req[:1] == b"\x0a" else b""
    if svc not in (b"", b"app"):
        ctx.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
    try:
        with open(state) as f:
            st = f.read().strip()
    except FileNotFoundError:
        st = "SERVING"
    # HealthCheckResponse: field 1 (status), SERVING 1, NOT_SERVING 2.
    return b"\x08\x01" if st == "SERVING" else b"\x08\x02"

server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
if mode == "health":
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {"Check": grpc.unary_unary_rpc_method_handler(check)}),))
server.add_insecure_port("127.0.0.1:%d" % port)
server.start()
print("serving on", port, flush=True)
server.wait_for_termination()
PY

P1=$(free_port)
P2=$(free_port)
P3=$(free_port)
P4=$(free_port)
STATE="$WORK/state"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: grpc}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: grpc-server
    command: [$PY, "$WORK/health.py", "$P1", "$STATE", health]
    readinessProbe: {grpc: {port: $P1, service: app}, periodSeconds: 1, failureThreshold: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: wrongsvc}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: grpc-server
    command: [$PY, "$WORK/health.py", "$P2", "$WORK/none", health]
    livenessProbe: {grpc: {port: $P2, service: nosuch}, periodSeconds: 1, failureThreshold: 2, initialDelaySeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: nolistener}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sleep, "600"]
    readinessProbe: {grpc: {port: $P3}, periodSeconds: 1, timeoutSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: nohealth}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: grpc-server
    command: [$PY, "$WORK/health.py", "$P4", "$WORK/none", none]
    readinessProbe: {grpc: {port: $P4}, periodSeconds: 1}
YAML
k wait --for=condition=Ready pod/grpc --timeout=20s >/dev/null ||
	fail "pod grpc not Ready: $(k get pod grpc -o jsonpath='{.status}')"
pass "a grpc readiness probe passes on SERVING"

echo NOT_SERVING >"$STATE"
k wait --for=condition=Ready=false pod/grpc --timeout=10s >/dev/null ||
	fail "pod grpc still Ready when its server says NOT_SERVING"
wait_event grpc Unhealthy 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")'
echo SERVING >"$STATE"
k wait --for=condition=Ready pod/grpc --timeout=10s >/dev/null ||
	fail "pod grpc not Ready again on SERVING"
pass "NOT_SERVING: not Ready, with the kubelet's Unhealthy Event; SERVING: Ready again"

k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/wrongsvc --timeout=20s >/dev/null ||
	fail "a liveness probe on a wrong service did not restart: $(k get pod wrongsvc -o jsonpath='{.status.containerStatuses[0]}')"
wait_event wrongsvc Unhealthy 'Liveness probe failed: error: health rpc probe failed: rpc error: code = NotFound desc = unknown service'
wait_event wrongsvc Killing 'Container c failed liveness probe, will be restarted'
pass "a liveness probe on a wrong service restarts the container"

wait_event nolistener Unhealthy "Readiness probe failed: timeout: failed to connect service \"127.0.0.1:$P3\" within 1s: context deadline exceeded"
wait_event nohealth Unhealthy 'Readiness probe failed: error: this server does not implement the grpc health protocol (grpc.health.v1.Health)'
for p in nolistener nohealth; do
	expect_eq False "$(k get pod $p -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" "$p Ready"
done
pass "no listener, no health service: not Ready, in the kubelet's words"

k delete pod grpc wrongsvc nolistener nohealth --grace-period=1 --timeout=20s >/dev/null ||
	fail "deleting the probed pods"
