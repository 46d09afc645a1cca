#!/bin/sh
# The Lua host: a controller from --policy-dir runs; a reconcile that
# throws, loops forever or allocates without bound fails alone (Warning
# Event, retry) while the daemon keeps serving; a broken reload keeps the
# running scripts and names the file and line; a good reload swaps them.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL/controllers"
write_chaos() { # version
	cat >"$POL/controllers/chaos.lua" <<LUA
-- Test controller: behaves as each ConfigMap's data.mode says.
local v = volray
local c = { primary = "v1/configmaps" }
function c.reconcile(req)
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  if cm == nil or cm.data == nil then return nil end
  local mode = cm.data.mode
  if mode == "throw" then error("boom from " .. req.name) end
  if mode == "loop" then while true do end end
  if mode == "memory" then
    local t = {}
    for i = 1, 100000000 do t[i] = string.rep("x", 1024) .. i end
  end
  if mode == "global" then return undefined_name end
  if mode == "live" then
    -- Read from the server (embedded: the store, at once).
    local me = v.get("v1/configmaps", req.namespace, req.name, { live = true })
    local none, msg, code, reason = v.get("v1/configmaps", req.namespace,
      "no-such", { live = true })
    v.patch("v1/configmaps", req.namespace, req.name, { metadata = {
      annotations = { live = me.metadata.uid .. " " .. tostring(none) ..
        " " .. tostring(code) .. " " .. tostring(reason) .. " " .. msg } } })
  end
  local labels = cm.metadata.labels or {}
  if labels.seen ~= "$1" then
    v.patch("v1/configmaps", req.namespace, req.name,
      { metadata = { labels = { seen = "$1" } } })
  end
  return nil
end
return c
LUA
}
write_chaos v1
start_daemon --policy-dir "$POL" --lua-instructions 20000000 --lua-memory 64
# A controller of one's own acts as system:controller:chaos-controller,
# with no rights until someone binds a role to it (volray-lua(7)); its
# failures reach Events only if it may write them.
k create clusterrole chaos --verb=get,list,watch,patch,create --resource=configmaps,events >/dev/null
k create clusterrolebinding chaos --clusterrole=chaos \
	--user=system:controller:chaos-controller >/dev/null

mkcm() { # name mode
	k create -f - >/dev/null <<YAML || fail "create $1"
apiVersion: v1
kind: ConfigMap
metadata: {name: $1}
data: {mode: $2}
YAML
}
mkcm good ok
k wait --for=jsonpath='{.metadata.labels.seen}'=v1 cm/good --timeout=10s >/dev/null ||
	fail "policy-dir controller did not run"
pass "a controller from --policy-dir reconciles"
mkcm live live
wait_eq "$(k get cm live -o jsonpath='{.metadata.uid}') nil 404 NotFound configmaps \"no-such\" not found" \
	"volray.get with live = true" k get cm live -o jsonpath='{.metadata.annotations.live}'
pass "volray.get with live = true: the object, or nil, message, 404, NotFound"

for mode in throw loop memory global; do
	mkcm "bad-$mode" "$mode"
	i=0
	until k get events --field-selector involvedObject.name="bad-$mode" \
	    -o jsonpath='{.items[*].reason}' 2>/dev/null | grep -q ReconcileError; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "no Warning event for $mode"; sleep 0.05
	done
	curl -fs "$API/readyz" >/dev/null || fail "daemon unhealthy after $mode"
done
msg=$(k get events --field-selector involvedObject.name=bad-loop -o jsonpath='{.items[0].message}')
expect_contains "$msg" "instruction budget" "loop error"
msg=$(k get events --field-selector involvedObject.name=bad-memory -o jsonpath='{.items[0].message}')
expect_contains "$msg" "memory" "memory error"
msg=$(k get events --field-selector involvedObject.name=bad-global -o jsonpath='{.items[0].message}')
expect_contains "$msg" "unknown global 'undefined_name'" "unknown global error"
grep -q "reconcile default/bad-throw failed: .*boom from bad-throw" "$WORK/volrayd.log" ||
	fail "no log line with the error"
grep -q "stack traceback" "$WORK/volrayd.log" || fail "no traceback in the log"
mkcm good2 ok
k wait --for=jsonpath='{.metadata.labels.seen}'=v1 cm/good2 --timeout=10s >/dev/null ||
	fail "controller stopped working after failures"
pass "throw, infinite loop, memory hog and unknown globals fail one reconcile; the daemon lives"

# A broken reload keeps the running scripts and says where the error is.
cat >"$POL/controllers/chaos.lua" <<'LUA'
local c = { primary = "v1/configmaps" }
function c.reconcile(req)
  return nil
-- missing end
return c
LUA
code=$(curl -s -o "$WORK/reload.json" -w '%{http_code}' -XPOST "$API/apis/volray.io/v1/policy/reload")
expect_eq 422 "$code" "broken reload"
grep -q 'chaos.lua:[0-9]' "$WORK/reload.json" || fail "reload error without file:line: $(cat "$WORK/reload.json")"
mkcm good3 ok
k wait --for=jsonpath='{.metadata.labels.seen}'=v1 cm/good3 --timeout=10s >/dev/null ||
	fail "old scripts not kept after a failed reload"
pass "a failed reload keeps the running scripts"

write_chaos v2
kill -HUP "$DAEMON_PID"
k wait --for=jsonpath='{.metadata.labels.seen}'=v2 cm/good --timeout=10s >/dev/null ||
	fail "SIGHUP reload did not swap in the new script"
pass "SIGHUP reloads: every object is reconciled by the new script"

# Events' source: NAME-controller, or the controller's event_source (kept
# across a reload only while it stays); a bad one fails the reload.
expect_eq chaos-controller "$(k get events --field-selector involvedObject.name=bad-throw -o jsonpath='{.items[0].source.component}')" \
	"the default event source"
sed 's/^return c$/c.event_source = "chaos-source"\nreturn c/' "$POL/controllers/chaos.lua" >"$WORK/chaos.lua"
mv "$WORK/chaos.lua" "$POL/controllers/chaos.lua"
code=$(curl -s -o "$WORK/reload.json" -w '%{http_code}' -XPOST "$API/apis/volray.io/v1/policy/reload")
expect_eq 200 "$code" "reload with event_source: $(cat "$WORK/reload.json")"
mkcm bad-source throw
wait_eq chaos-source "bad-source's Event's source" \
	k get events --field-selector involvedObject.name=bad-source -o jsonpath='{.items[0].source.component}'
sed -i 's/^c.event_source = .*/c.event_source = 5/' "$POL/controllers/chaos.lua"
code=$(curl -s -o "$WORK/reload.json" -w '%{http_code}' -XPOST "$API/apis/volray.io/v1/policy/reload")
expect_eq 422 "$code" "reload with a numeric event_source"
grep -q "event_source' must be" "$WORK/reload.json" || fail "reload error: $(cat "$WORK/reload.json")"
pass "a controller's event_source names its Events' source"

# A live read waits for the server: only a reconcile may make one, not a
# script while it loads.
sed -i 's/^c.event_source = .*/c.event_source = "chaos-source"\nv.get("v1\/configmaps", "default", "good", { live = true })/' \
	"$POL/controllers/chaos.lua"
code=$(curl -s -o "$WORK/reload.json" -w '%{http_code}' -XPOST "$API/apis/volray.io/v1/policy/reload")
expect_eq 422 "$code" "reload of a script that reads live while loading"
grep -q "live = true reads only from a reconcile" "$WORK/reload.json" || fail "reload error: $(cat "$WORK/reload.json")"
pass "a live read outside a reconcile is an error"
