#!/bin/sh
# The local node's pod network (--pod-network=namespaces, volrayd(8) THE
# LOCAL NODE): as root, every pod its own network namespace on a bridge
# in the node's namespace, an address from the Node's spec.podCIDR, and
# one veth pair to the host the only change there. Two pods reach each
# other by IP, the host (the link's end) and the API through the
# kubernetes Service's ClusterIP with a service account's token; probes
# hit the pod's IP, port-forward reaches its loopback; a deleted pod's
# namespace and veth go; a kill -9 of volrayd leaves the pods' namespaces
# for the next one, which removes those of no pod; a second daemon has
# namespaces of its own; a clean stop leaves nothing behind and the
# host's firewall as it was.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: pods share the host's network"
for t in ip nft; do
	PATH=$PATH:/usr/sbin:/sbin command -v $t >/dev/null 2>&1 ||
	    skip "no $t (Debian's iproute2, nftables)"
done
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
PATH=$PATH:/usr/sbin:/sbin
PY=$(command -v python3)

# The other daemons this test starts get a SIGTERM (a clean stop, which
# removes their namespaces) before lib.sh's cleanup kills what is left.
EXTRA=""
stop_extra() {
	for p in $EXTRA; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
	done
	[ -z "${NR:-}" ] || rm -rf "$NR"
}
trap 'rc=$?; stop_extra; set +e; (exit $rc); cleanup' EXIT INT TERM

host_rules=$(nft list ruleset 2>&1)
host_links=$(ip -o link show | grep -v ' vr[0-9a-f]\{8\}h[@:]' | cut -d: -f2 | sort)
echo "podtok,system:serviceaccount:default:default,sa-uid" >"$WORK/tokens.csv"
LOCAL_NODE=1
start_daemon --pod-network=namespaces --pod-cidr 10.251.0.0/24 \
	--token-auth-file "$WORK/tokens.csv"
NODE=$(hostname | tr 'A-Z' 'a-z')
H=$(sed -n 's/.*podnet: the node.s namespace \(vr[0-9a-f]*\).*/\1/p' "$WORK/volrayd.log" | head -n 1)
[ -n "$H" ] || fail "volrayd did not say which namespace is the node's: $(grep -i 'network' "$WORK/volrayd.log")"
ip netns list | grep -q "^$H\b" || fail "no node namespace $H"
expect_eq 10.251.0.0/24 "$(k get node "$NODE" -o jsonpath='{.spec.podCIDR}')" "the Node's spec.podCIDR"
pass "the node's namespace $H; spec.podCIDR from --pod-cidr"

WEB=8080
for p in a b; do
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $p, labels: {app: web}}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: python
    command: [$PY, -m, http.server, "$WEB"]
    ports: [{name: http, containerPort: $WEB}]
    readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 1}
YAML
done
k wait --for=condition=Ready pod/a pod/b --timeout=30s >/dev/null ||
	fail "the pods did not become Ready (their probes hit the pods' IPs)"
A=$(k get pod a -o jsonpath='{.status.podIP}')
B=$(k get pod b -o jsonpath='{.status.podIP}')
case "$A $B" in
10.251.0.*" "10.251.0.*) ;;
*) fail "pod IPs not from the pod range: $A $B" ;;
esac
[ "$A" != "$B" ] || fail "both pods have $A"
expect_eq "$B" "$(k get pod b -o jsonpath='{.status.podIPs[0].ip}')" "podIPs"
[ -n "$(k get pod a -o jsonpath='{.status.hostIP}')" ] || fail "no hostIP"
UA=$(k get pod a -o jsonpath='{.metadata.uid}')
UB=$(k get pod b -o jsonpath='{.metadata.uid}')
ip netns list | grep -q "^$H-$UA\b" || fail "no namespace for pod a"
ip netns list | grep -q "^$H-$UB\b" || fail "no namespace for pod b"
expect_eq "a" "$(k exec a -- hostname)" "pod a's host name"
pass "two pods: their own namespaces and IPs ($A, $B) from spec.podCIDR, probes on their IPs"

fetch() { # POD URL [TOKEN [CAFILE]]: the status code of a GET from inside POD
	k exec "$1" -- "$PY" -c '
import os, ssl, sys, urllib.request, urllib.error
if len(sys.argv) > 3: c = ssl.create_default_context(cafile=sys.argv[3])
else: c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
r = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 2: r.add_header("Authorization", "Bearer " + sys.argv[2])
try: print(urllib.request.urlopen(r, context=c, timeout=5).status)
except urllib.error.HTTPError as e: print(e.code)
except Exception as e: print("error", e)
' "$2" ${3:+"$3"} ${4:+"$4"}
}
expect_eq 200 "$(fetch a "http://$B:$WEB/")" "pod a to pod b by IP"
expect_eq 200 "$(fetch b "http://$A:$WEB/")" "pod b to pod a by IP"

# The host: a server on the host's end of the link (nowhere else).
HOSTIF=$(ip -o link show | sed -n "s/^[0-9]*: \($H\)h[@:].*/\1h/p")
HOSTIP=$(ip -4 -o addr show dev "$HOSTIF" | sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p')
[ -n "$HOSTIP" ] || fail "no address on the host's end $HOSTIF"
HPORT=$(free_port)
"$PY" -m http.server "$HPORT" --bind "$HOSTIP" --directory "$WORK" >/dev/null 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
i=0
until command curl -fs -o /dev/null "http://$HOSTIP:$HPORT/"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the host's server did not start"; sleep 0.1
done
expect_eq 200 "$(fetch a "http://$HOSTIP:$HPORT/")" "pod a to the host"
pass "pods reach each other and the host"

# The API through the kubernetes Service, with a service account's token.
envs=$(k exec a -- sh -c 'echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT')
expect_eq "$(k get svc kubernetes -o jsonpath='{.spec.clusterIP}'):443" "$envs" "KUBERNETES_SERVICE_HOST:PORT"
expect_eq 403 "$(fetch a "https://$envs/api/v1/namespaces/default/pods/a" podtok)" \
	"the API as the service account, before its RoleBinding"
k create rolebinding sa-view --clusterrole=view --serviceaccount=default:default >/dev/null
expect_eq 200 "$(fetch a "https://$envs/api/v1/namespaces/default/pods/a" podtok)" \
	"the API as the service account"
expect_eq 401 "$(fetch a "https://$envs/api/v1/namespaces/default/pods/a" wrong)" \
	"the API with a bad token"
# By name (cluster DNS), the certificate checked against the cluster's CA.
expect_eq 200 "$(fetch a "https://kubernetes.default.svc/api/v1/namespaces/default/pods/a" podtok "$CA")" \
	"https://kubernetes.default.svc, its certificate verified"
pass "the API through the kubernetes Service (KUBERNETES_SERVICE_HOST, kubernetes.default.svc with a verified certificate) with a service account's token"

# kubectl port-forward reaches the pod (in its namespace).
P1=$(free_port)
k port-forward pod/a "$P1:$WEB" >"$WORK/pf.log" 2>&1 &
PF=$!
KILL_PIDS="$KILL_PIDS $PF"
i=0
until grep -q "^Forwarding from 127.0.0.1" "$WORK/pf.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "port-forward did not start"; sleep 0.1
done
command curl -fsS -o /dev/null "http://127.0.0.1:$P1/" || fail "through kubectl port-forward"
kill "$PF"
pass "kubectl port-forward to a pod in its namespace"

# gRPC probes reach the pod's IP too (the connection is made from the
# node's namespace): SERVING makes it Ready; a port nothing listens on
# fails as the kubelet words it.
GPY=/usr/bin/python3	# Debian's python3-grpcio
if "$GPY" -c 'import grpc' 2>/dev/null; then
	cat >"$WORK/health.py" <<'PY'
import sys
from concurrent import futures
import grpc
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "grpc.health.v1.Health",
    {"Check": grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"\x08\x01")}),))
server.add_insecure_port("0.0.0.0:%s" % sys.argv[1])
server.start()
server.wait_for_termination()
PY
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: grpc}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: grpc-server
    command: [$GPY, "$WORK/health.py", "50051"]
    readinessProbe: {grpc: {port: 50051}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: nogrpc}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sleep, "1000"]
    readinessProbe: {grpc: {port: 50052}, periodSeconds: 1, timeoutSeconds: 1}
YAML
	k wait --for=condition=Ready pod/grpc --timeout=30s >/dev/null ||
		fail "the grpc pod did not become Ready"
	k wait --for=jsonpath='{.status.podIP}' pod/nogrpc --timeout=10s >/dev/null 2>&1 || true
	NG=$(k get pod nogrpc -o jsonpath='{.status.podIP}')
	wait_event nogrpc Unhealthy "Readiness probe failed: timeout: failed to connect service \"$NG:50052\" within 1s: context deadline exceeded"
	k delete pod grpc nogrpc --grace-period=0 >/dev/null
	pass "grpc probes of pods in their namespaces (SERVING Ready, no listener unhealthy)"
else
	echo "no python3-grpcio: grpc probes not checked"
fi

# A deleted pod's namespace and veth go.
VB=vp$(printf '%x' "${B##*.}")
ip -n "$H" link show "$VB" >/dev/null 2>&1 || fail "no $VB on the bridge for pod b"
k delete pod b --timeout=30s >/dev/null
! ip netns list | grep -q "^$H-$UB\b" || fail "pod b's namespace outlived it"
! ip -n "$H" link show "$VB" >/dev/null 2>&1 || fail "pod b's veth $VB outlived it"
pass "a deleted pod's namespace and veth go"

# hostNetwork: the host's namespace and address.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hostnet}
spec:
  nodeName: $NODE
  hostNetwork: true
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'hostname; exec sleep 1000']}
YAML
k wait --for=condition=Ready pod/hostnet --timeout=20s >/dev/null || fail "hostnet not Ready"
expect_eq "$(hostname)" "$(k logs hostnet)" "a hostNetwork pod's host name"
UH=$(k get pod hostnet -o jsonpath='{.metadata.uid}')
! ip netns list | grep -q "^$H-$UH\b" || fail "a hostNetwork pod got a namespace"
k delete pod hostnet --grace-period=0 >/dev/null
pass "a hostNetwork pod keeps the host's network"

# A second daemon: namespaces of its own, gone when it stops.
D2="$WORK/data2"
"$VOLRAYD" --data-dir "$D2" --listen 127.0.0.1:0 --pod-network=namespaces \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} >"$WORK/volrayd2.log" 2>&1 &
V2=$!
EXTRA="$EXTRA $V2"
i=0
# Its kubeconfig: it has started, SIGTERM is a clean stop.
until [ -s "$D2/kubeconfig" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the second daemon did not start"; sleep 0.1
done
H2=$(sed -n 's/.*podnet: the node.s namespace \(vr[0-9a-f]*\).*/\1/p' "$WORK/volrayd2.log")
[ -n "$H2" ] || fail "the second daemon made no namespace" 
[ "$H2" != "$H" ] || fail "two daemons share the namespace $H"
ip netns list | grep -q "^$H2\b" || fail "no namespace $H2"
kill "$V2"
wait "$V2" || true
! ip netns list | grep -q "^$H2\b" || fail "the second daemon left $H2"
ip netns list | grep -q "^$H\b" || fail "the second daemon took the first one's namespace"
pass "a second daemon has a namespace of its own ($H2) and removes it"

# A pod range holding an address of the host: said at start, and pods
# share the host's network (nothing made).
D3="$WORK/data3"
"$VOLRAYD" --data-dir "$D3" --listen 127.0.0.1:0 --pod-network=namespaces \
	--pod-cidr 127.0.0.0/16 ${SHARE_DIR:+--share-dir "$SHARE_DIR"} \
	>"$WORK/volrayd3.log" 2>&1 &
V3=$!
EXTRA="$EXTRA $V3"
i=0
until [ -s "$D3/kubeconfig" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the third daemon did not start"; sleep 0.1
done
grep -q "the pod range 127.0.0.0/16 holds the host's address 127.0.0.1 on lo: pods share the host's network" \
	"$WORK/volrayd3.log" || fail "no word of the pod range's clash: $(grep -i podnet "$WORK/volrayd3.log")"
! grep -q "podnet: the node's namespace" "$WORK/volrayd3.log" || fail "a namespace despite the clash"
kill "$V3"
wait "$V3" || true
pass "a pod range on the host's addresses: said, and the host's network shared"

# Not root: said at start, and pods share the host's network.
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
	NR=$(mktemp -d "${TMPDIR:-/tmp}/volray-podnet-nr.XXXXXX")
	chmod 755 "$NR"
	chown nobody "$NR"
	setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
		"$VOLRAYD" --data-dir "$NR/data" --listen 127.0.0.1:0 \
		--pod-network=namespaces ${SHARE_DIR:+--share-dir "$SHARE_DIR"} \
		>"$WORK/volrayd-nr.log" 2>&1 &
	VN=$!
	EXTRA="$EXTRA $VN"
	i=0
	until [ -s "$NR/data/kubeconfig" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "volrayd as nobody did not start"
		sleep 0.1
	done
	grep -q "not root: pods share the host's network" "$WORK/volrayd-nr.log" ||
		fail "not root, and not said: $(grep -i network "$WORK/volrayd-nr.log")"
	podcidr=$(KUBECONFIG="$NR/data/kubeconfig" k get nodes -o jsonpath='{.items[*].spec.podCIDR}')
	kill "$VN"
	wait "$VN" || true
	rm -rf "$NR"
	NR=""
	expect_eq "" "$podcidr" "a podCIDR without the pod network"
	pass "not root: said at start, pods share the host's network"
fi

# kill -9: the pods' namespaces stay for the next volrayd, which takes
# back pod a's (same process, same address) and removes one of no pod.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - {name: c, image: busybox, command: ["true"]}
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/done --timeout=20s >/dev/null || fail "done did not succeed"
UD=$(k get pod done -o jsonpath='{.metadata.uid}')
ip netns list | grep -q "^$H-$UD\b" || fail "no namespace for the ended pod done"
pid=$(cut -d' ' -f1 "$DATA/pods/default/a/c.pid")
stop_daemon KILL
ip netns add "$H-0000-orphan"
start_daemon --pod-network=namespaces --pod-cidr 10.251.0.0/24 \
	--token-auth-file "$WORK/tokens.csv"
k wait --for=condition=Ready pod/a --timeout=20s >/dev/null || fail "a not Ready after the restart"
expect_eq "$pid" "$(cut -d' ' -f1 "$DATA/pods/default/a/c.pid")" "pod a's process after the restart"
expect_eq "$A" "$(k get pod a -o jsonpath='{.status.podIP}')" "pod a's IP after the restart"
! ip netns list | grep -q "^$H-0000-orphan\b" || fail "the orphan namespace was kept"
expect_eq 200 "$(fetch a "http://$A:$WEB/")" "pod a to itself by IP after the restart"
# Forced: a graceful delete of an ended pod after a restart waits for
# ever (the host network's too), which is not this test's business.
k delete pod done --grace-period=0 --force >/dev/null 2>&1
wait_eq "" "the ended pod's namespace after its deletion" sh -c "ip netns list | grep '^$H-$UD'"
! ip netns list | grep -q "^$H-$UD\b" || fail "the ended pod's namespace outlived its deletion after the restart"
pass "kill -9 then restart: the pod's namespace taken back, an orphan removed, an ended pod's removed with it"

# A clean stop leaves nothing: no namespace, no veth, the host's firewall
# and links as they were.
stop_daemon
! ip netns list | grep -q "^$H" || fail "namespaces left: $(ip netns list | grep "^$H")"
! ip link show "${H}h" >/dev/null 2>&1 || fail "the host's end ${H}h left"
expect_eq "$host_rules" "$(nft list ruleset 2>&1)" "the host's nftables ruleset"
expect_eq "$host_links" "$(ip -o link show | grep -v ' vr[0-9a-f]\{8\}h[@:]' | cut -d: -f2 | sort)" "the host's links"
pass "a clean stop leaves nothing behind; the host's firewall is untouched"
