#!/bin/sh
# Limits that keep the API up for everyone: a write flood past
# --max-mutating-requests-inflight gets 429 with Retry-After while reads
# and health checks go on; a token-file user past --user-qps/--user-burst
# gets 429 and the admin does not; a user's watches past
# --max-watches-per-user are refused, and freed when they end.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/tokens.csv" <<'CSV'
alice-token-0123456789abcdef,alice,1001
bob-token-0123456789abcdef,bob,1002
carol-token-0123456789abcdef,carol,1003
CSV
start_daemon --token-auth-file "$WORK/tokens.csv" --authorization-mode=AlwaysAllow \
	--max-mutating-requests-inflight 2 --user-qps 1 --user-burst 3 \
	--max-watches-per-user 2

# --- a write flood: 48 creates at once on their own connections
cat >"$WORK/flood.py" <<'PY'
import json, sys, threading, vrtest
codes, retry = {}, set()
lock = threading.Lock()
def one(rnd, i, barrier):
    c = vrtest.https()
    c.connect()
    barrier.wait()
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "f%d-%d" % (rnd, i)}})
    c.request("POST", "/api/v1/namespaces/default/configmaps", body,
              dict(vrtest.HEADERS, **{"Content-Type": "application/json"}))
    r = c.getresponse()
    data = r.read()
    with lock:
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.status == 429:
            retry.add(r.getheader("Retry-After"))
            assert b'"reason":"TooManyRequests"' in data, data
# Up to five rounds: the flood must overrun two slots at least once.
for rnd in range(5):
    barrier = threading.Barrier(48)
    ts = [threading.Thread(target=one, args=(rnd, i, barrier)) for i in range(48)]
    for t in ts: t.start()
    for t in ts: t.join()
    if codes.get(429):
        break
print(json.dumps({"codes": codes, "retry": sorted(r or "" for r in retry)}))
assert codes.get(429, 0) > 0, codes
assert codes.get(201, 0) > 0, codes
assert set(codes) <= {201, 429}, codes
assert retry == {"1"}, retry
PY
python3 "$WORK/flood.py" >"$WORK/flood.out" 2>&1 || { cat "$WORK/flood.out"; fail "write flood"; }
curl -fs "$API/api/v1/namespaces/default/configmaps" >/dev/null || fail "reads during the flood"
curl -fs "$API/readyz" >/dev/null || fail "daemon unhealthy after the flood"
rejected=$(curl -fs "$API/metrics" | sed -n 's/^volray_apiserver_rejected_requests_total //p')
[ "${rejected:-0}" -gt 0 ] || fail "rejections not counted in /metrics"
pass "write flood: 429 + Retry-After past the mutating in-flight limit ($(cat "$WORK/flood.out"))"

# --- per-user request rate: a burst of 3, then 429; the admin is exempt
codes=""
for i in 1 2 3 4 5 6 7 8; do
	codes="$codes $(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
		-H "Authorization: Bearer alice-token-0123456789abcdef" "$API/api/v1/namespaces")"
done
case "$codes" in
" 200 200 200 429"*) ;;
*) fail "alice's burst of 3 at 1 qps: got$codes" ;;
esac
for i in 1 2 3 4 5 6 7 8; do
	curl -fs -o /dev/null "$API/api/v1/namespaces" || fail "admin rate-limited"
done
pass "per-user rate: burst 3 then 429; the admin goes on"

# --- watches per user: bob may hold two
for i in 1 2; do
	command curl -s -N --cacert "$CA" -H "Authorization: Bearer bob-token-0123456789abcdef" \
		"$API/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30" \
		>"$WORK/watch$i.out" &
	eval "W$i=\$!"
done
wait_watchers 2
code=$(command curl -s -o "$WORK/third" -w '%{http_code}' --cacert "$CA" \
	-H "Authorization: Bearer bob-token-0123456789abcdef" \
	"$API/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
expect_eq 429 "$code" "bob's third watch"
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	-H "Authorization: Bearer carol-token-0123456789abcdef" -m 5 \
	"$API/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
expect_eq 200 "$code" "carol's watch while bob holds two"
kill "$W1" "$W2" 2>/dev/null || true
wait "$W1" "$W2" 2>/dev/null || true
i=0
while [ "$(watchers)" -gt 0 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "watches not released"; sleep 0.05
done
# Bob's bucket (1 qps) refills while we wait for a token.
i=0
until code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
    -H "Authorization: Bearer bob-token-0123456789abcdef" -m 5 \
    "$API/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1") &&
    [ "$code" = 200 ]; do
	i=$((i + 1)); [ $i -lt 40 ] || fail "bob's watch after his others ended: $code"
	sleep 0.25
done
pass "watches per user: the third refused, freed when the others end"
