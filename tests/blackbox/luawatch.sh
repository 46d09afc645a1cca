#!/bin/sh
# A controller's watches (volray-lua(7)): map names the primary keys a
# watched object concerns; `fields` keeps objects its field selector
# refuses out of Lua altogether; `paths` gives map only those fields;
# `previous = true` maps the object as it was before a change too, so
# the key it left hears of it. A controller's own `fields` keeps changes
# of primaries it refuses out of its queue; volray.list's `paths`.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL/controllers"
cat >"$POL/controllers/mirror.lua" <<'LUA'
-- Test controller: ConfigMap NAME counts the Secrets of type
-- volray.io/mirror labelled target=NAME in its namespace.
local v = volray
local function target(s) return s.metadata.namespace .. "/" .. s.metadata.labels.target end
local c = {
  primary = "v1/configmaps",
  watches = { { resource = "v1/secrets", fields = "type=volray.io/mirror",
    previous = true, paths = { "metadata.namespace", "metadata.labels.target" },
    map = target } },
}
function c.reconcile(req)
  local n = 0
  for _, s in ipairs(v.list("v1/secrets", req.namespace, { fields = "type=volray.io/mirror" })) do
    if s.metadata.labels.target == req.name then n = n + 1 end
  end
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  if cm == nil then
    local _, err = v.create({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = req.name, namespace = req.namespace },
      data = { count = tostring(n) } })
    if err then error(err) end
  elseif (cm.data or {}).count ~= tostring(n) then
    local _, err = v.patch("v1/configmaps", req.namespace, req.name,
      { data = { count = tostring(n) } })
    if err then error(err) end
  end
  return nil
end
return c
LUA
# A primary with `fields`: only Secrets of type volray.io/stamp are
# queued when they change; each one reconciled gets a ConfigMap seen-NAME
# that says which keys volray.list's `paths` gave of it.
cat >"$POL/controllers/stamp.lua" <<'LUA'
local v = volray
local c = { primary = "v1/secrets", fields = "type=volray.io/stamp" }
function c.reconcile(req)
  if v.get("v1/secrets", req.namespace, req.name) == nil then return nil end
  local got = v.list("v1/secrets", req.namespace, { fields = "metadata.name=" .. req.name,
    paths = { "metadata.name", "type", "data.absent" } })[1]
  local keys = {}
  for k in pairs(got) do keys[#keys + 1] = k end
  for k in pairs(got.metadata) do keys[#keys + 1] = "metadata." .. k end
  table.sort(keys)
  local _, err, code = v.create({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "seen-" .. req.name, namespace = req.namespace },
    data = { keys = table.concat(keys, ","), type = got.type } })
  if err and code ~= 409 then error(err) end
  return nil
end
return c
LUA
# `changes`: Secrets of type volray.io/tally map to the ConfigMap their
# label counter names only when they come, go or their labels change;
# each reconcile of it adds one to its count.
cat >"$POL/controllers/tally.lua" <<'LUA'
local v = volray
-- fields: its own writes to the ConfigMaps do not queue them again.
local c = {
  primary = "v1/configmaps", fields = "metadata.name=none",
  watches = { { resource = "v1/secrets", fields = "type=volray.io/tally",
    paths = { "metadata.namespace", "metadata.labels" },
    changes = { "metadata.labels" },
    map = function(s) return s.metadata.namespace .. "/" .. s.metadata.labels.counter end } },
}
function c.reconcile(req)
  if not req.name:match("^tally") then return nil end
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  if cm == nil then
    local _, err = v.create({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = req.name, namespace = req.namespace }, data = { n = "1" } })
    if err then error(err) end
  else
    local _, err = v.patch("v1/configmaps", req.namespace, req.name,
      { data = { n = tostring(tonumber(cm.data.n) + 1) } })
    if err then error(err) end
  end
  return nil
end
return c
LUA
start_daemon --policy-dir "$POL"
k create clusterrole stamp --verb=get,list,watch,create --resource=configmaps,secrets >/dev/null
k create clusterrolebinding stamp --clusterrole=stamp --user=system:controller:stamp-controller >/dev/null
k create clusterrole mirror --verb=get,list,watch,create,patch --resource=configmaps,secrets >/dev/null
k create clusterrolebinding mirror --clusterrole=mirror --user=system:controller:mirror-controller >/dev/null
k create clusterrolebinding tally --clusterrole=mirror --user=system:controller:tally-controller >/dev/null

secret() { # name type target
	k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata: {name: $1, labels: {target: $3}}
type: $2
YAML
}
count() { k get configmap "$1" -o jsonpath='{.data.count}'; }

secret s1 volray.io/mirror a
wait_eq 1 "configmap a" count a
pass "a watched object enqueues the key its map names"

# s2 is not of the type: map never sees it. s3 is, and comes after, so
# once c exists the controller has had s2's event too.
secret s2 Opaque b
secret s3 volray.io/mirror c
wait_eq 1 "configmap c" count c
expect_eq "" "$(k get configmap b -o name --ignore-not-found)" "an object the field selector refuses reaches no map"
pass "watches.fields keeps other objects out of Lua"

k label secret s1 target=d --overwrite >/dev/null
wait_eq 1 "configmap d" count d
wait_eq 0 "configmap a after s1 left it" count a
pass "watches.previous: the key an object no longer maps to is enqueued too"

# t1 is not of the stamp type and comes first: once seen-t2 exists, the
# stamp controller has had t1's event too.
secret t1 Opaque none
secret t2 volray.io/stamp none
wait_eq seen-t2 "configmap seen-t2" k get configmap seen-t2 -o jsonpath='{.metadata.name}'
expect_eq "" "$(k get configmap seen-t1 -o name --ignore-not-found)" "a primary its fields refuse is not reconciled"
pass "fields keeps changes of other primaries out of the controller's queue"
expect_eq "metadata,metadata.name,type volray.io/stamp" "$(k get configmap seen-t2 -o jsonpath='{.data.keys} {.data.type}')" "volray.list paths"
pass "volray.list's paths give only those fields, nested; an absent one is left out"

# changes: an annotation leaves the labels as they were, so tally-a is not
# reconciled again; tally-b's first reconcile comes after that event.
tally() { k get configmap "$1" -o jsonpath='{.data.n}'; }
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: u1, labels: {counter: tally-a}}
type: volray.io/tally
YAML
wait_eq 1 "configmap tally-a" tally tally-a
k annotate secret u1 note=x >/dev/null
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: u2, labels: {counter: tally-b}}
type: volray.io/tally
YAML
wait_eq 1 "configmap tally-b" tally tally-b
expect_eq 1 "$(tally tally-a)" "tally-a after an annotation of u1"
k label secret u1 extra=y >/dev/null
wait_eq 2 "tally-a after a label of u1" tally tally-a
pass "watches.changes: a change maps only when a path it names moved"


# A reload gives the old controllers' store filters back and the new ones
# take their slots: far more than the store's 64 taken over the daemon's
# life, every field selector still gets one (else its events would be
# parsed to be judged, a log line and a counter say so).
metric() { curl -fs "$API/metrics" | sed -n "s/^$1 //p"; }
before=$(metric volray_controller_store_filters)
[ "${before:-0}" -ge 4 ] || fail "store filters before the reloads: '$before'"
i=0
while [ $i -lt 70 ]; do
	curl -fs -o /dev/null -XPOST "$API/apis/volray.io/v1/policy/reload" ||
		fail "reload $i"
	i=$((i + 1))
done
expect_eq "$before" "$(metric volray_controller_store_filters)" "store filters after 70 reloads"
expect_eq 0 "$(metric volray_controller_store_filters_refused_total)" "field selectors refused a store filter"
grep -q 'no store filter left' "$WORK/volrayd.log" && fail "a filter was refused: $(grep 'no store filter left' "$WORK/volrayd.log")"
secret s4 Opaque e
secret s5 volray.io/mirror f
wait_eq 1 "configmap f after the reloads" count f
expect_eq "" "$(k get configmap e -o name --ignore-not-found)" "watches.fields after the reloads"
pass "70 reloads: the store filters are given back and taken again; watches still filter"
