-- KubeRay 1.7's NewClusterWithIncrementalUpgrade for a RayService
-- (rayservice.lua): the new cluster takes the traffic step by step
-- through Gateway API objects instead of a switch of the Services.
-- - A Gateway <svc>-gateway of clusterUpgradeOptions.gatewayClassName
--   (listener "http", port 80) and an HTTPRoute <svc>-httproute whose one
--   rule (path prefix /) sends to each cluster's own Service
--   <cluster>-serve-svc (port 8000) with a weight: status'
--   trafficRoutedPercent is read back from those weights.
-- - Capacity: each cluster's Serve config carries target_capacity
--   (status targetCapacity). The new cluster starts at 0; while the two
--   add up to 100 or less it grows by maxSurgePercent (default 100), once
--   the traffic has caught up with it; above 100 the old one shrinks by as
--   much.
-- - Traffic: every intervalSeconds, stepSizePercent more goes to the new
--   cluster, never beyond its targetCapacity, and only while its Serve
--   applications are RUNNING.
-- - Capacity moves only while the Gateway is Accepted and Programmed and
--   the route Accepted with its references resolved (gateway.lua).
-- - Done when the old cluster's targetCapacity is 0 and the new one has
--   100% of the traffic: the new one is promoted.
-- - Rollback: if the spec goes back to the old cluster's (or on to a
--   third) mid-upgrade, RollbackInProgress: the same steps the other way;
--   when the old cluster is back at 100/100 (and the new one at 0/0 or
--   unhealthy) the new one is dropped.
local v = volray
local canon = require("canon")
local cond = require("raycond")

local M = {}

M.STRATEGY = "NewClusterWithIncrementalUpgrade"
M.GATEWAYS = "gateway.networking.k8s.io/v1/gateways"
M.ROUTES = "gateway.networking.k8s.io/v1/httproutes"
local SERVE_PORT = 8000

local function present(x)
  return x ~= nil and x ~= v.null
end

function M.enabled(svc)
  local u = svc.spec.upgradeStrategy
  return present(u) and u.type == M.STRATEGY
end

-- clusterUpgradeOptions with KubeRay's default (maxSurgePercent 100).
function M.options(svc)
  local o = (svc.spec.upgradeStrategy or {}).clusterUpgradeOptions
  if not present(o) then return nil end
  return { maxSurge = present(o.maxSurgePercent) and o.maxSurgePercent or 100,
    step = o.stepSizePercent, interval = o.intervalSeconds, class = o.gatewayClassName }
end

-- KubeRay's ValidateClusterUpgradeOptions (nil when fine).
function M.validate(svc)
  if not M.enabled(svc) then return nil end
  if (svc.spec.rayClusterConfig or {}).enableInTreeAutoscaling ~= true then
    return "Ray Autoscaler is required for NewClusterWithIncrementalUpgrade"
  end
  local o = M.options(svc)
  if o == nil then return "ClusterUpgradeOptions are required for NewClusterWithIncrementalUpgrade" end
  if o.maxSurge < 0 or o.maxSurge > 100 then return "maxSurgePercent must be between 0 and 100" end
  if not present(o.step) or o.step < 0 or o.step > 100 then return "stepSizePercent must be between 0 and 100" end
  if o.step > o.maxSurge then return "stepSizePercent must be less than or equal to maxSurgePercent" end
  if not present(o.interval) or o.interval <= 0 then return "intervalSeconds must be greater than 0" end
  if not present(o.class) or o.class == "" then
    return "gatewayClassName is required for NewClusterWithIncrementalUpgrade"
  end
  return nil
end

function M.service_name(rc)
  return rc.metadata.name .. "-serve-svc"
end

local function ensure(svc, res, obj, what)
  local cur = v.get(res, obj.metadata.namespace, obj.metadata.name)
  if cur == nil then
    local out, err, code = v.create(obj)
    if out == nil and code ~= 409 then
      v.event(svc, "Warning", "FailedToCreate" .. what, "Failed to create " .. what .. " for RayService " ..
        obj.metadata.namespace .. "/" .. obj.metadata.name .. ": " .. tostring(err))
      error("creating " .. what .. " " .. obj.metadata.name .. ": " .. tostring(err), 0)
    end
    if out ~= nil then
      v.event(svc, "Normal", "Created" .. what, "Created " .. what .. " for RayService " ..
        obj.metadata.namespace .. "/" .. obj.metadata.name)
    end
    return out
  end
  if canon.encode(cur.spec) ~= canon.encode(obj.spec) then
    local out, err, code = v.patch(res, obj.metadata.namespace, obj.metadata.name,
      { metadata = { resourceVersion = cur.metadata.resourceVersion }, spec = obj.spec })
    if out == nil and code ~= 409 then error("updating " .. what .. ": " .. tostring(err), 0) end
    if out ~= nil then
      v.event(svc, "Normal", "Updated" .. what, "Updated the " .. what .. " " ..
        obj.metadata.namespace .. "/" .. obj.metadata.name)
    end
    return out or cur
  end
  return cur
end

-- The cluster's own serve Service, owned by the cluster.
function M.sync_cluster_service(svc, rc, selector)
  if rc == nil then return end
  local name = M.service_name(rc)
  if v.get("v1/services", rc.metadata.namespace, name) ~= nil then return end
  local out, err, code = v.create({
    apiVersion = "v1", kind = "Service",
    metadata = { name = name, namespace = rc.metadata.namespace,
      labels = { ["ray.io/cluster"] = rc.metadata.name, ["ray.io/originated-from-cr-name"] = svc.metadata.name,
        ["ray.io/originated-from-crd"] = "RayService" },
      ownerReferences = v.array({ v.owner_ref(rc) }) },
    spec = { selector = selector, ports = v.array({ { name = "serve", port = SERVE_PORT,
      targetPort = SERVE_PORT, protocol = "TCP" } }) },
  })
  if out == nil and code ~= 409 then error("creating Service " .. name .. ": " .. tostring(err), 0) end
end

function M.sync_gateway(svc)
  local o = M.options(svc)
  return ensure(svc, M.GATEWAYS, {
    apiVersion = "gateway.networking.k8s.io/v1", kind = "Gateway",
    metadata = { name = svc.metadata.name .. "-gateway", namespace = svc.metadata.namespace,
      ownerReferences = v.array({ v.owner_ref(svc) }) },
    spec = { gatewayClassName = o.class,
      listeners = v.array({ { name = "http", protocol = "HTTP", port = 80 } }) },
  }, "Gateway")
end

local function is_true(conds, ctype)
  for _, c in ipairs(conds or {}) do
    if c.type == ctype and c.status == "True" then return true end
  end
  return false
end

local function gateway_ready(gw)
  local st = gw and gw.status or {}
  return gw ~= nil and is_true(st.conditions, "Accepted") and is_true(st.conditions, "Programmed")
end

local function route_ready(gw, route)
  for _, p in ipairs(route and route.status and route.status.parents or {}) do
    if p.parentRef and p.parentRef.name == gw.metadata.name and
        (p.parentRef.namespace == nil or p.parentRef.namespace == gw.metadata.namespace) and
        is_true(p.conditions, "Accepted") and is_true(p.conditions, "ResolvedRefs") then
      return true
    end
  end
  return false
end

-- KubeRay's calculateTrafficRoutedPercent: the weights for this pass.
function M.weights(svc, pending_ready, now)
  local st = svc.status
  local a, p = st.activeServiceStatus, st.pendingServiceStatus
  local aw = present(a.trafficRoutedPercent) and a.trafficRoutedPercent or 100
  local pw = present(p.trafficRoutedPercent) and p.trafficRoutedPercent or 0
  local ptc = present(p.targetCapacity) and p.targetCapacity or 0
  local atc = present(a.targetCapacity) and a.targetCapacity or 100
  local rollback = cond.is_true(st, "RollbackInProgress")
  if (pw == ptc and not rollback) or (rollback and aw == atc) then return aw, pw end
  local o = M.options(svc)
  local last = rollback and a.lastTrafficMigratedTime or p.lastTrafficMigratedTime
  if present(last) and now - v.time(last) < o.interval then return aw, pw end
  if rollback then
    aw = math.min(100, aw + o.step, atc)
    pw = 100 - aw
  elseif pending_ready then
    pw = math.min(100, pw + o.step, ptc)
    aw = 100 - pw
  end
  return aw, pw
end

-- The HTTPRoute to the active cluster and, while there is one, the
-- pending one, with their weights.
function M.sync_route(svc, active, pending, aw, pw)
  local ns = svc.metadata.namespace
  local refs = v.array({ { name = M.service_name(active), namespace = ns, port = SERVE_PORT, weight = aw } })
  if pending ~= nil then
    refs[2] = { name = M.service_name(pending), namespace = ns, port = SERVE_PORT, weight = pw }
  end
  return ensure(svc, M.ROUTES, {
    apiVersion = "gateway.networking.k8s.io/v1", kind = "HTTPRoute",
    metadata = { name = svc.metadata.name .. "-httproute", namespace = ns,
      ownerReferences = v.array({ v.owner_ref(svc) }) },
    spec = {
      parentRefs = v.array({ { name = svc.metadata.name .. "-gateway", namespace = ns } }),
      rules = v.array({ { matches = v.array({ { path = { type = "PathPrefix", value = "/" } } }),
        backendRefs = refs } }),
    },
  }, "HTTPRoute")
end

-- status' trafficRoutedPercent from the route's weights (and when they
-- last moved).
function M.read_weights(svc, route, now_text)
  local st = svc.status
  local rules = route and route.spec and route.spec.rules or {}
  local refs = rules[1] and rules[1].backendRefs or {}
  for _, which in ipairs({ st.activeServiceStatus, st.pendingServiceStatus }) do
    local name = which.rayClusterName
    if present(name) then
      for _, b in ipairs(refs) do
        if b.name == name .. "-serve-svc" then
          local w = present(b.weight) and b.weight or 0
          if which.trafficRoutedPercent ~= w then which.lastTrafficMigratedTime = now_text end
          which.trafficRoutedPercent = w
        end
      end
    end
  end
end

-- Whether target_capacity may move now (KubeRay's
-- checkIfNeedTargetCapacityUpdate).
function M.may_move_capacity(svc)
  local ns = svc.metadata.namespace
  local gw = v.get(M.GATEWAYS, ns, svc.metadata.name .. "-gateway")
  local route = v.get(M.ROUTES, ns, svc.metadata.name .. "-httproute")
  if not gateway_ready(gw) or not route_ready(gw, route) then return false end
  local st = svc.status
  local a, p = st.activeServiceStatus, st.pendingServiceStatus
  if not present(a.targetCapacity) or not present(p.targetCapacity) then return true end
  if cond.is_true(st, "RollbackInProgress") then
    return not (a.targetCapacity == 100 and p.targetCapacity == 0)
  end
  return not (a.targetCapacity == 0 and p.targetCapacity == 100)
end

-- KubeRay's reconcileServeTargetCapacity: the new target_capacity of
-- the active ("active") or pending cluster, or nil.
function M.capacity_goal(svc, which)
  local st = svc.status
  local a, p = st.activeServiceStatus, st.pendingServiceStatus
  local atc = present(a.targetCapacity) and a.targetCapacity or 100
  local ptc = present(p.targetCapacity) and p.targetCapacity or 0
  local surge = M.options(svc).maxSurge
  if cond.is_true(st, "RollbackInProgress") then
    local atr = present(a.trafficRoutedPercent) and a.trafficRoutedPercent or 0
    if atc ~= atr then return nil end
    if atc + ptc > 100 then
      if which == "pending" then return math.max(0, ptc - surge) end
    elseif which == "active" then
      return math.min(100, atc + surge)
    end
    return nil
  end
  local ptr = present(p.trafficRoutedPercent) and p.trafficRoutedPercent or 0
  if ptc ~= ptr then return nil end
  if which == "active" and atc + ptc > 100 then return math.max(0, atc - surge) end
  if which == "pending" and atc + ptc <= 100 then return math.min(100, ptc + surge) end
  return nil
end

-- The upgrade is over: the old cluster serves nothing, the new one all.
function M.complete(svc)
  local st = svc.status
  return st.activeServiceStatus.targetCapacity == 0 and st.pendingServiceStatus.trafficRoutedPercent == 100
end

-- The rollback is over (KubeRay's shouldCompleteIncrementalRollback).
function M.rolled_back(svc, pending)
  local st = svc.status
  local a, p = st.activeServiceStatus, st.pendingServiceStatus
  local healthy = pending ~= nil and cond.is_true(pending.status, "HeadPodReady")
  return a.targetCapacity == 100 and a.trafficRoutedPercent == 100 and
    (not healthy or (p.targetCapacity == 0 and p.trafficRoutedPercent == 0))
end

return M
