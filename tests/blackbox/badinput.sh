#!/bin/sh
# Bad input gets the right Status code and changes nothing: malformed JSON
# and YAML, unknown resources, wrong namespace scope, oversized bodies,
# header floods, invalid names, unknown patch types, slowloris clients.
. "$(dirname "$0")/lib.sh"
start_daemon --request-timeout 1
CM="$API/api/v1/namespaces/default/configmaps"

code() { # expected method url content-type body
	got=$(curl -s -o "$WORK/body" -w '%{http_code}' -X "$2" "$3" -H "Content-Type: $4" --data-binary "$5")
	[ "$got" = "$1" ] || fail "$2 $3 ($5): want $1, got $got: $(cat "$WORK/body")"
	grep -q '"kind":"Status"' "$WORK/body" || fail "$2 $3: no Status body"
}
# The start's own writes are over before the revision is read: the last
# is the scheduler's first status of the Queues (on etcd it lands after
# /readyz, and after the queue controller's if both were in flight).
k wait --for=jsonpath='{.status.allocated.cpu}'=0 queue/root queue/default \
    --timeout=30s >/dev/null || fail "the Queues' status from the scheduler"
before=$(curl -fs "$CM" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
rev0=$(curl -fs "$API/metrics" | sed -n 's/^volray_store_revision //p')

code 400 POST "$CM" application/json '{"apiVersion":"v1",'
code 400 POST "$CM" application/json '[1,2]'
code 400 POST "$CM" application/yaml 'metadata: {name: [unclosed'
code 404 POST "$API/api/v1/namespaces/default/widgets" application/json '{}'
code 404 POST "$API/apis/nope.io/v1/things" application/json '{}'
code 404 POST "$API/api/v1/namespaces/default/nodes" application/json '{"metadata":{"name":"n"}}'
code 400 POST "$CM" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}'
code 400 POST "$CM" application/json '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}'
code 422 POST "$CM" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}'
code 422 POST "$CM" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'
code 404 POST "$API/api/v1/namespaces/nowhere/configmaps" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}'
code 422 POST "$API/api/v1/namespaces/default/pods" application/json '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}}'
grep -q 'spec.containers\[0\].image' "$WORK/body" || fail "422 field path"
curl -fs -XPOST "$CM" -H 'Content-Type: application/json' -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"real"}}' >/dev/null
code 415 PATCH "$CM/real" text/plain '{}'
code 422 PATCH "$CM/real" application/merge-patch+json '{"metadata":{"labels":{"a":1}}}'
code 422 POST "$API/api/v1/namespaces/default/pods" application/json '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2"},"spec":true}'
curl -fs -XPOST "$API/api/v1/namespaces/default/pods" -H 'Content-Type: application/json' \
	-d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"sp"},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"x"}]}}' >/dev/null
code 422 PATCH "$API/api/v1/namespaces/default/pods/sp/status" application/merge-patch+json '{"status":true}'
code 409 POST "$CM" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"real"}}'
code 409 PUT "$CM/real" application/json '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"real","resourceVersion":"1"}}'
pass "malformed, unknown, mis-scoped, invalid and conflicting writes"

head -c 4000000 /dev/zero | tr '\0' a >"$WORK/big"
got=$(curl -s -o "$WORK/body" -w '%{http_code}' -XPOST "$CM" -H 'Content-Type: application/json' --data-binary @"$WORK/big")
expect_eq 413 "$got" "oversized body"
python3 - <<'PY' || fail "header flood"
import vrtest
s = vrtest.connect()
s.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n" + b"X-Flood: " + b"a" * 100000 + b"\r\n\r\n")
resp = s.recv(100)
assert b" 431 " in resp, resp
PY
python3 - <<'PY' || fail "slowloris"
import time, vrtest
s = vrtest.connect()
s.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")
s.settimeout(10)
t = time.time()
data = s.recv(1000)
while data:
    if b" 408 " in data: break
    data = s.recv(1000)
assert time.time() - t < 8, "connection held open"
PY
pass "413, 431 and request timeouts"

after=$(curl -fs "$CM" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
expect_eq $((before + 1)) "$after" "only the one valid configmap was stored"
rev1=$(curl -fs "$API/metrics" | sed -n 's/^volray_store_revision //p')
expect_eq $((rev0 + 2)) "$rev1" "failed writes did not bump the revision"
curl -fs "$API/readyz" >/dev/null || fail "daemon unhealthy"
pass "bad input changed nothing and the daemon lives"

# A repeated field keeps its last value, as kube-apiserver's decoder; with
# fieldValidation=Strict it is refused and nothing is stored.
code 400 POST "$CM?fieldValidation=Strict" application/json \
	'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2","b":"1","b":"2"}}'
expect_contains "$(cat "$WORK/body")" 'ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"data.a\", duplicate field \"data.b\"' "the strict refusal names the fields"
curl -s -o /dev/null -w '%{http_code}' "$CM/dup" | grep -q 404 || fail "the refused object was stored"
curl -fs -XPOST "$CM" -H 'Content-Type: application/json' -D "$WORK/headers" \
	-d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","b":"x","a":"2"}}' >/dev/null ||
	fail "a repeated field without Strict is accepted"
# Without fieldValidation the server warns (Warn is kube-apiserver's default).
expect_contains "$(cat "$WORK/headers")" 'Warning: 299 - "duplicate field \"data.a\""' "a Warning header names the repeated field"
curl -fs -XPOST "$CM?fieldValidation=Ignore" -H 'Content-Type: application/json' -D "$WORK/headers" \
	-d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup2"},"data":{"a":"1","a":"2"}}' >/dev/null ||
	fail "Ignore"
if grep -qi '^Warning:' "$WORK/headers"; then fail "fieldValidation=Ignore warned"; fi
expect_eq '{"a": "2", "b": "x"}' "$(curl -fs "$CM/dup" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["data"], sort_keys=True))')" "the last value wins, once"
pass "repeated fields: the last wins; Warn says so, Strict refuses them"
