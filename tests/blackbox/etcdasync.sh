#!/bin/sh
# A controller's writes on etcd do not hold the event loop: with every
# request to etcd delayed (a TCP proxy between volrayd and etcd that holds
# each chunk volrayd sends for DELAY seconds; etcd's answers and the watch
# pass at once), a Deployment made through the API gets its ReplicaSet
# and pods from the Lua controllers, whose writes wait for etcd in their
# coroutines, while /livez keeps answering in far less than one delay.
# A controller write that blocked the loop (store_batch_commit_sync) would
# hold /livez for a whole round trip. Then the proxy goes away while an
# object is written into etcd by hand and etcd compacts past it: the
# watch, resumed below the compaction, ends, and the cache is listed
# again without blocking (the object is served; /livez answered meanwhile).
. "$(dirname "$0")/lib.sh"
VOLRAY_STORE=etcd
DELAY=1.5
etcd_start 1

# The proxy: the delay is read from $WORK/delay (0 while the daemon
# starts: its first listing is synchronous, before the loop runs).
echo 0 >"$WORK/delay"
PPORT=$(free_port)
cat >"$WORK/slowproxy.py" <<'PY'
import socket, sys, threading, time, collections
lport, host, port, delay_file = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
def delay():
    try:
        return float(open(delay_file).read().strip() or 0)
    except Exception:
        return 0.0
def pump(src, dst, slow):
    q, cv, done = collections.deque(), threading.Condition(), [False]
    def send():
        while True:
            with cv:
                while not q and not done[0]:
                    cv.wait()
                if not q:
                    break
                due, data = q.popleft()
            now = time.time()
            if due > now:
                time.sleep(due - now)
            try:
                dst.sendall(data)
            except OSError:
                break
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    t = threading.Thread(target=send, daemon=True)
    t.start()
    while True:
        try:
            data = src.recv(65536)
        except OSError:
            data = b""
        with cv:
            if not data:
                done[0] = True
                cv.notify()
                break
            q.append((time.time() + (delay() if slow else 0), data))
            cv.notify()
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", lport))
l.listen(64)
while True:
    c, _ = l.accept()
    u = socket.create_connection((host, port))
    for s in (c, u):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=pump, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, False), daemon=True).start()
PY
proxy_start() {
	python3 "$WORK/slowproxy.py" "$PPORT" 127.0.0.1 "$ETCD_CPORT_1" \
	    "$WORK/delay" >>"$WORK/proxy.log" 2>&1 &
	PROXY=$!
	KILL_PIDS="$KILL_PIDS $PROXY"
	i=0
	until python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$PPORT" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the proxy did not come up"
		sleep 0.05
	done
}
proxy_start
ETCD_ENDPOINTS="http://127.0.0.1:$PPORT"
start_daemon
k get ns default >/dev/null || fail "the daemon through the proxy"
pass "volrayd on etcd through a delaying proxy"

# /livez every 50 ms from now until $WORK/stop appears: the longest wait.
cat >"$WORK/poll.py" <<'PY'
import os, ssl, sys, time, urllib.request
url, stop, out = sys.argv[1], sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
worst, n = 0.0, 0
while not os.path.exists(stop):
    t0 = time.time()
    try:
        urllib.request.urlopen(url, timeout=30, context=ctx).read()
    except Exception as e:
        print("error", e, file=sys.stderr)
    worst = max(worst, time.time() - t0)
    n += 1
    time.sleep(0.05)
open(out, "w").write("%.3f %d\n" % (worst, n))
PY
echo "$DELAY" >"$WORK/delay"
python3 "$WORK/poll.py" "$API/livez" "$WORK/stop" "$WORK/livez" &
POLL=$!
KILL_PIDS="$KILL_PIDS $POLL"

t0=$(date +%s)
k create deployment web --image=busybox --replicas=3 >/dev/null ||
	fail "create the Deployment"
# The Deployment controller makes the ReplicaSet (one write to etcd),
# the ReplicaSet controller its three pods (three more), each waiting in
# its reconcile's coroutine.
i=0
until [ "$(k get pods -l app=web -o name 2>/dev/null | wc -l)" -ge 3 ]; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "no three pods of the Deployment after 60 s"
	sleep 0.5
done
touch "$WORK/stop"
wait $POLL || true
echo 0 >"$WORK/delay"
read -r worst polls <"$WORK/livez"
t1=$(date +%s)
echo "  /livez: $polls polls, longest ${worst}s; the Deployment's pods in $((t1 - t0)) s with a ${DELAY} s delay on each request to etcd"
[ -n "$(k get rs -l app=web -o name)" ] || fail "no ReplicaSet"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) / 2 else 1)' \
    "$worst" "$DELAY" ||
	fail "/livez waited ${worst}s: a write held the loop for an etcd round trip"
pass "the controllers' writes waited for etcd in their coroutines; /livez answered within ${worst}s"

# --- the garbage collector and RBAC's aggregation do not hold the loop
# either: a dependent of a deleted owner, a ClusterRole aggregated from
# a new one and a namespace's contents are written through the proxy
# (made with no delay first).
k create namespace gone >/dev/null || fail "create the namespace gone"
k create configmap owner -n gone >/dev/null || fail "create the owner"
uid=$(k get configmap owner -n gone -o jsonpath='{.metadata.uid}')
k apply -f - >/dev/null <<EOF || fail "create the dependent and the rest"
apiVersion: v1
kind: ConfigMap
metadata:
  name: dep
  namespace: gone
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$uid"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: gone}
---
apiVersion: v1
kind: Secret
metadata: {name: c, namespace: gone}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: agg-test}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {volray-test/agg: "true"}}]
EOF
rm -f "$WORK/stop"
echo "$DELAY" >"$WORK/delay"
python3 "$WORK/poll.py" "$API/livez" "$WORK/stop" "$WORK/livez3" &
POLL=$!
KILL_PIDS="$KILL_PIDS $POLL"
k delete configmap owner -n gone >/dev/null || fail "delete the owner"
k wait --for=delete configmap/dep -n gone --timeout=60s >/dev/null ||
	fail "the garbage collector did not delete the owner's dependent"
k create clusterrole agg-part --verb=get --resource=configmaps >/dev/null &&
    k label clusterrole agg-part volray-test/agg=true >/dev/null ||
	fail "create the labelled ClusterRole"
i=0
until k get clusterrole agg-test -o jsonpath='{.rules[*].resources}' | grep -q configmaps; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "agg-test did not gather agg-part's rule after 60 s"
	sleep 0.5
done
k delete namespace gone --wait=false >/dev/null || fail "delete the namespace"
k wait --for=delete namespace/gone --timeout=90s >/dev/null ||
	fail "the namespace gone was not drained and removed"
touch "$WORK/stop"
wait $POLL || true
echo 0 >"$WORK/delay"
read -r worst polls <"$WORK/livez3"
echo "  /livez meanwhile: $polls polls, longest ${worst}s"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) / 2 else 1)' \
    "$worst" "$DELAY" ||
	fail "/livez waited ${worst}s: a collector or aggregation write held the loop"
pass "the garbage collector and the ClusterRole aggregation wrote without holding the loop (${worst}s)"

# --- the watch below the compaction: listed again, on the loop's turns.
rm -f "$WORK/stop"
python3 "$WORK/poll.py" "$API/livez" "$WORK/stop" "$WORK/livez2" &
POLL=$!
KILL_PIDS="$KILL_PIDS $POLL"
kill -9 "$PROXY"
ectl() { ETCDCTL_API=3 etcdctl --endpoints="$ETCD_URL_1" "$@"; }
ectl put /registry/configmaps/default/byhand \
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"byhand","namespace":"default","uid":"6f1c1d2e-0000-4000-8000-000000000001","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"a":"1"}}' >/dev/null
# A write outside the prefix after it, and the compaction there: the
# watch resumes from the revision of the object, which is gone.
ectl put /volray-test/after x >/dev/null
rev=$(ectl get /volray-test/after -w json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
ectl compact "$rev" >/dev/null || fail "etcdctl compact $rev"
proxy_start
i=0
until k get configmap byhand >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "the object written by hand was not served after 60 s"
	sleep 0.5
done
touch "$WORK/stop"
wait $POLL || true
read -r worst polls <"$WORK/livez2"
grep -q "the cache is listed again" "$WORK/volrayd.log" ||
	fail "the watch did not end below the compaction"
expect_eq "$(k get configmap byhand -o jsonpath='{.data.a}')" 1 \
	"the object written by hand while the watch was away"
k get deployment web >/dev/null || fail "the Deployment after the listing"
echo "  /livez meanwhile: $polls polls, longest ${worst}s"
pass "the watch fell below the compaction: the cache was listed again and serves etcd's objects"
