#!/bin/sh
# Reconciles wait for their writes without holding the loop (issue 40):
# a controller in operator mode (--kubeconfig) against an API whose
# requests each arrive half a second late (a relay that delays what the
# client sends) keeps many reconciles in flight at once, each a plain
# script whose writes read as calls; a key is never reconciled twice at
# once; errors come back across the wait as they did (a Conflict is nil,
# message, 409, "Conflict"); the loop never waits for a write (its lag
# stays under the relay's delay); a reload with writes in flight drops
# none of the keys.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL/controllers"
cat >"$POL/controllers/probe.lua" <<'LUA'
-- Test controller: three patches per ConfigMap with data.probe, one at a
-- time; counts the reconciles in flight in the script's own upvalues,
-- which every reconcile shares.
local v = volray
local inflight, peak, busy = 0, 0, {}
local c = { primary = "v1/configmaps" }
function c.reconcile(req)
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  if cm == nil or cm.data == nil or cm.data.probe == nil then return nil end
  if busy[req.key] then v.log("error", "TWICE " .. req.key) end
  busy[req.key] = true
  inflight = inflight + 1
  if inflight > peak then peak = inflight end
  local ann = cm.metadata.annotations or {}
  local n = tonumber(ann.n or "0")
  if cm.data.probe == "conflict" and ann.code == nil then
    local stale = v.deepcopy(cm)
    stale.metadata.resourceVersion = "1"
    stale.data.extra = "x"
    local obj, msg, code, reason = v.update(stale)
    v.patch("v1/configmaps", req.namespace, req.name, { metadata = {
      annotations = { code = tostring(code) .. " " .. tostring(reason) ..
        " " .. tostring(obj == nil and msg ~= nil) } } })
  elseif n < 3 then
    local obj, msg = v.patch("v1/configmaps", req.namespace, req.name,
      { metadata = { annotations = { n = tostring(n + 1),
        peak = tostring(peak) } } })
    if obj == nil then error("patch: " .. tostring(msg)) end
    if obj.metadata.annotations.n ~= tostring(n + 1) then
      error("patch answered " .. tostring(obj.metadata.annotations.n))
    end
  end
  inflight = inflight - 1
  busy[req.key] = nil
  return nil
end
return c
LUA
start_daemon --roles api
k create clusterrole probe --verb=get,list,watch,patch,update,create \
	--resource=configmaps,events >/dev/null
k create clusterrolebinding probe --clusterrole=probe \
	--user=system:controller:probe-controller >/dev/null

# The relay: every chunk the client sends waits DELAY before it goes on.
RELAY=$(free_port)
cat >"$WORK/relay.py" <<'PY'
import socket, sys, threading, time
listen, target, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
def pipe(src, dst, wait):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            if wait:
                time.sleep(delay)
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", listen))
srv.listen(128)
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pipe, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c, False), daemon=True).start()
PY
python3 "$WORK/relay.py" "$RELAY" "$PORT" 0.5 &
KILL_PIDS="$KILL_PIDS $!"
sed "s|server: https://127.0.0.1:$PORT\$|server: https://127.0.0.1:$RELAY|" \
	"$DATA/kubeconfig" >"$WORK/slow.kubeconfig"
grep -q "127.0.0.1:$RELAY" "$WORK/slow.kubeconfig" || fail "no relay in the kubeconfig"

N=40
for i in $(seq 1 $N); do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p%s}\ndata: {probe: "yes"}\n---\n' "$i"
done >"$WORK/cms.yaml"
k create -f "$WORK/cms.yaml" >/dev/null || fail "create the ConfigMaps"

M=$(free_port)
"$VOLRAYD" --data-dir "$WORK/ops" --kubeconfig "$WORK/slow.kubeconfig" \
	--roles controllers --controllers probe --leader-elect=false \
	--policy-dir "$POL" --share-dir "$SHARE_DIR" \
	--metrics-listen "127.0.0.1:$M" >>"$WORK/ops.log" 2>&1 &
OPS=$!
KILL_PIDS="$KILL_PIDS $OPS"
metric() {
	command curl -s "http://127.0.0.1:$M/metrics" | sed -n "s/^$1 //p"
}
# Three round trips of a second or more per ConfigMap (the relay's
# half-second on the request, the TLS records of a new connection more):
# one at a time that is two minutes; in flight together, seconds.
t0=$(date +%s)
for i in $(seq 1 $N); do
	k wait --for=jsonpath='{.metadata.annotations.n}'=3 "cm/p$i" \
		--timeout=60s >/dev/null || { tail -20 "$WORK/ops.log"; fail "p$i not patched three times"; }
done
t1=$(date +%s)
pass "$N ConfigMaps patched three times each through a slow API in $((t1 - t0)) s"
peak=$(metric volray_reconciles_in_flight_peak)
[ "${peak:-0}" -ge 10 ] || fail "at most $peak reconciles in flight at once (want >= 10)"
speak=$(k get cm -o jsonpath='{range .items[*]}{.metadata.annotations.peak}{"\n"}{end}' | sort -n | tail -1)
[ "${speak:-0}" -ge 10 ] || fail "the script saw at most $speak of its reconciles in flight"
pass "reconciles in flight at once: $peak (the script counted $speak)"
! grep -q "TWICE" "$WORK/ops.log" || fail "a key was reconciled twice at once: $(grep TWICE "$WORK/ops.log" | head -3)"
pass "no key reconciled twice at once"
lag=$(metric volray_loop_lag_max_seconds)
[ -n "$lag" ] || fail "no volray_loop_lag_max_seconds"
python3 -c "import sys; sys.exit(0 if float('$lag') < 0.4 else 1)" ||
	fail "the loop lagged $lag s with writes in flight (the relay delays 0.5 s)"
pass "the loop's worst lag $lag s while writes waited 0.5 s each"

# A Conflict comes back across the wait as it did: nil, message, 409.
k create configmap clash --from-literal=probe=conflict >/dev/null || fail "create clash"
k wait --for=jsonpath='{.metadata.annotations.code}'='409 Conflict true' cm/clash \
	--timeout=30s >/dev/null ||
	fail "conflict not delivered: $(k get cm clash -o jsonpath='{.metadata.annotations.code}')"
pass "a conflict reaches the script as nil, message, 409, Conflict"

# A reload while writes wait: the keys in flight are reconciled again by
# the new scripts, none is lost.
for i in $(seq 1 $N); do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q%s}\ndata: {probe: "yes"}\n---\n' "$i"
done >"$WORK/cms2.yaml"
k create -f "$WORK/cms2.yaml" >/dev/null || fail "create the second ConfigMaps"
i=0
until [ "$(metric 'volray_reconciles_in_flight{controller="probe"}')" -gt 0 ] 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "no reconcile in flight to reload under"; sleep 0.05
done
kill -HUP $OPS
for i in $(seq 1 $N); do
	k wait --for=jsonpath='{.metadata.annotations.n}'=3 "cm/q$i" \
		--timeout=60s >/dev/null || { tail -20 "$WORK/ops.log"; fail "q$i lost in the reload"; }
done
[ "$(grep -c "controllers: loaded" "$WORK/ops.log")" -ge 2 ] || fail "no reload logged"
kill -0 $OPS || fail "the operator died"
pass "a reload with writes in flight loses no key"
