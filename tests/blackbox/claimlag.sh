#!/bin/sh
# The resourceclaim controller in operator mode (--kubeconfig) keeps a
# reservation for a pod its cache has not seen yet, as kube's syncClaim
# does: before dropping a reservedFor entry whose pod is not in the
# informer's cache it asks the API server (volray.get with live = true).
# A relay in front of the API (volrayd --plain-http, so the relay can read
# the request lines) holds back everything the pods' watch sends by
# DELAY seconds; the claims' watch and the live GET go straight through.
# A claim reserved for a pod made a moment before keeps its reservation,
# its allocation and its finalizer once the pod reaches the cache; one
# reserved for a pod the server does not have is released at once.
. "$(dirname "$0")/lib.sh"
DELAY=5

start_daemon --roles api --plain-http
# kubectl sends no bearer token over plain HTTP; volray's client does.
k() { "$top_builddir/volray" "$@"; }
k apply -f - >/dev/null <<'YAML' || fail "create the claims"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, finalizers: [resource.kubernetes.io/delete-protection]}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: ghost, finalizers: [resource.kubernetes.io/delete-protection]}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
YAML
alloc='{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}}'
for c in shared ghost; do
	k patch resourceclaim "$c" --subresource=status --type=merge \
		-p "{\"status\":{\"allocation\":$alloc}}" >/dev/null || fail "allocate $c by hand"
done

# The relay: a connection that has asked for the pods' watch gets what
# the server sends DELAY seconds late, in order; every other goes as is.
RELAY=$(free_port)
cat >"$WORK/relay.py" <<'PY'
import queue, socket, sys, threading, time
listen, target, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
def close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def upstream(c, u, slow):
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            if b.startswith(b"GET /api/v1/pods?") and b"watch=1" in b.split(b"\r\n", 1)[0]:
                slow.set()
            u.sendall(b)
    except OSError:
        pass
    close(c, u)
def downstream(u, c, slow):
    q = queue.Queue()
    def sender():
        while True:
            due, b = q.get()
            if b is None:
                break
            if due > time.time():
                time.sleep(due - time.time())
            try:
                c.sendall(b)
            except OSError:
                break
        close(c, u)
    threading.Thread(target=sender, daemon=True).start()
    try:
        while True:
            b = u.recv(65536)
            if not b:
                break
            q.put((time.time() + (delay if slow.is_set() else 0), b))
    except OSError:
        pass
    q.put((0, None))
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", listen))
srv.listen(128)
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", target))
    slow = threading.Event()
    threading.Thread(target=upstream, args=(c, u, slow), daemon=True).start()
    threading.Thread(target=downstream, args=(u, c, slow), daemon=True).start()
PY
python3 "$WORK/relay.py" "$RELAY" "$PORT" "$DELAY" &
KILL_PIDS="$KILL_PIDS $!"
# volrayd --kubeconfig gives up at once on a server it cannot reach: the
# relay must listen first.
i=0
until python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$RELAY" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the relay did not come up"
	sleep 0.05
done
sed "s|server: http://127.0.0.1:$PORT\$|server: http://127.0.0.1:$RELAY|" \
	"$DATA/kubeconfig" >"$WORK/slow.kubeconfig"
grep -q "127.0.0.1:$RELAY" "$WORK/slow.kubeconfig" || fail "no relay in the kubeconfig"

M=$(free_port)
"$VOLRAYD" --data-dir "$WORK/ops" --kubeconfig "$WORK/slow.kubeconfig" \
	--roles controllers --controllers resourceclaim --leader-elect=false \
	--share-dir "$SHARE_DIR" --metrics-listen "127.0.0.1:$M" \
	>>"$WORK/ops.log" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
mirrored() {
	command curl -s "http://127.0.0.1:$M/metrics" |
		sed -n "s/^volray_remote_mirror_objects{resource=\"$1\"} //p"
}
# Its start lists every kind through the relay: up to 40 s on a loaded
# machine, not wait_eq's 10.
i=0
until [ "$(mirrored resourceclaims.resource.k8s.io)" = 2 ]; do
	i=$((i + 1))
	[ $i -lt 400 ] || { tail -n 20 "$WORK/ops.log"
		fail "the operator's mirror of the claims: want '2', got '$(mirrored resourceclaims.resource.k8s.io)'"; }
	sleep 0.1
done
wait_eq yes "the operator's controller loaded" sh -c \
	"grep -q 'controllers: loaded 1' '$WORK/ops.log' && echo yes"

state() {
	k get resourceclaim "$1" -o jsonpath='{.status.reservedFor[*].name}|{.status.allocation.devices.results[0].device}|{.metadata.finalizers}'
}
# A pod made, and at once the claim reserved for it (a scheduler's
# write): the claim's event reaches the operator DELAY seconds before
# the pod's.
k apply -f - >/dev/null <<'YAML' || fail "create the pod"
apiVersion: v1
kind: Pod
metadata: {name: fresh}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: shared}]
YAML
uid=$(k get pod fresh -o jsonpath='{.metadata.uid}')
k patch resourceclaim shared --subresource=status --type=merge \
	-p "{\"status\":{\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"fresh\",\"uid\":\"$uid\"}]}}" >/dev/null ||
	fail "reserve shared for fresh"
# ghost: reserved for a pod the server never had; released at once,
# which also says the operator is reconciling claims before the pod's
# watch has caught up.
k patch resourceclaim ghost --subresource=status --type=merge \
	-p '{"status":{"reservedFor":[{"resource":"pods","name":"nobody","uid":"0000"}]}}' >/dev/null ||
	fail "reserve ghost for nobody"
wait_eq '||' "ghost, released (no such pod on the server)" state ghost
expect_eq 0 "$(mirrored pods)" "the pod not yet in the operator's mirror (the relay holds its watch back)"
wait_eq 1 "the pod in the operator's mirror, once the relay lets its watch through" mirrored pods
expect_eq 'fresh|gpu-0|["resource.kubernetes.io/delete-protection"]' "$(state shared)" \
	"shared, still reserved for the pod the cache had not seen"
pass "a reservation for a pod the operator's cache has not seen yet is kept (the server asked)"
if grep -E "controller resourceclaim: .*failed" "$WORK/ops.log" >/dev/null; then
	fail "a reconcile failed: $(grep -E 'controller resourceclaim' "$WORK/ops.log" | head -3)"
fi
