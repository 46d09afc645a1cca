#!/bin/sh
# Watch semantics over raw HTTP: resume from a resourceVersion, 410 Expired
# past the history window, timeoutSeconds, bookmarks, selector filtering,
# and a slow watcher closed instead of growing the daemon's memory.
. "$(dirname "$0")/lib.sh"
start_daemon --watch-history 50
CM="$API/api/v1/namespaces/default/configmaps"

mkcm() { # name [size]
	python3 -c '
import json, sys
n, size = sys.argv[1], int(sys.argv[2])
print(json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": n, "labels": {"set": "a" if n.startswith("a") else "b"}},
    "data": {"x": "y" * size}}))' "$1" "${2:-1}" |
	curl -fs -XPOST "$CM" -H 'Content-Type: application/json' -d @- >/dev/null ||
		fail "create $1"
}

mkcm a1
rv=$(curl -fs "$CM/a1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
curl -fs -XPATCH "$CM/a1" -H 'Content-Type: application/merge-patch+json' -d '{"data":{"x":"2"}}' >/dev/null
mkcm b1
curl -fs -XPATCH "$CM/a1" -H 'Content-Type: application/merge-patch+json' -d '{"data":{"x":"3"}}' >/dev/null
out=$(curl -fs -m 5 "$CM?watch=1&resourceVersion=$rv&labelSelector=set%3Da&timeoutSeconds=1")
expect_eq 2 "$(echo "$out" | grep -c '"type":"MODIFIED"')" "resumed events"
echo "$out" | grep -q '"name":"b1"' && fail "selector let b1 through"
echo "$out" | grep -q '"x":"3"' || fail "latest change missing"
pass "resume from resourceVersion with a label selector; timeoutSeconds ends it"

all=$(curl -fs -m 5 "$CM?watch=1&timeoutSeconds=1")
# (The namespace's kube-root-ca.crt is there too, as in Kubernetes.)
# (printf, not dash's echo, which would expand the CA's "\n"s.)
expect_eq 2 "$(printf '%s\n' "$all" | grep '"type":"ADDED"' | grep -vc '"name":"kube-root-ca.crt"')" \
	"initial ADDED events"
pass "watch without resourceVersion starts with ADDED for each object"

for i in $(seq 1 60); do mkcm "c$i"; done
code=$(curl -s -o "$WORK/gone.json" -w '%{http_code}' -m 5 "$CM?watch=1&resourceVersion=$rv")
expect_eq 410 "$code" "too old resourceVersion"
grep -q '"reason":"Expired"' "$WORK/gone.json" || fail "Expired reason"
pass "410 Expired past the history window"

now=$(curl -fs "$CM?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
# The watch resumes from $now, so "late" reaches it whenever it is made.
out=$(curl -fs -m 12 "$CM?watch=1&resourceVersion=$now&allowWatchBookmarks=true&timeoutSeconds=7" &
	mkcm late; wait)
echo "$out" | grep -q '"type":"BOOKMARK"' || fail "no bookmark: $out"
echo "$out" | grep -q '"name":"late"' || fail "no event after bookmark request"
pass "bookmarks for watchers that allow them"

# A watcher that never reads is closed once its queue passes the budget
# (16 MB). The client stays connected until it is killed, however long the
# writes take: a client that went away would be closed for another reason.
python3 - "$WORK/slow.ready" <<'PY' &
import socket, sys, time, vrtest
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", vrtest.PORT))
s = vrtest.wrap(s)
s.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n" + vrtest.AUTH + b"\r\n")
open(sys.argv[1], "w").close()
while True:
    time.sleep(3600)
PY
SLOW=$!
KILL_PIDS="$KILL_PIDS $SLOW"
i=0
until [ -f "$WORK/slow.ready" ]; do i=$((i+1)); [ $i -lt 100 ] || fail "slow client"; sleep 0.05; done
# 200 KB objects until the daemon reports the close: at most 60 MB, far past
# the budget and any socket buffer.
python3 - <<'PY' || fail "slow watcher not closed"
import json, re, sys, vrtest
c = vrtest.https(timeout=30)
def closed():
    c.request("GET", "/metrics", headers=vrtest.HEADERS)
    r = c.getresponse()
    m = re.search(rb"^volray_watch_closed_slow_total (\d+)", r.read(), re.M)
    return m is not None and int(m.group(1)) > 0
for i in range(1, 301):
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "big%d" % i}, "data": {"x": "y" * 200000}})
    c.request("POST", "/api/v1/namespaces/default/configmaps", body,
              dict(vrtest.HEADERS, **{"Content-Type": "application/json"}))
    r = c.getresponse()
    r.read()
    if r.status != 201:
        sys.exit("create big%d: %d" % (i, r.status))
    if closed():
        if i * 200000 < 16 << 20:
            sys.exit("closed after %d writes, below the budget" % i)
        sys.exit(0)
sys.exit("still open after 300 writes of 200 KB")
PY
kill $SLOW 2>/dev/null || true
curl -fs "$API/readyz" >/dev/null || fail "daemon unhealthy after slow watcher"
pass "a slow watcher is closed at its byte budget"
