-- RayService: keep Ray Serve applications running on a RayCluster and
-- switch clusters without downtime, as KubeRay's RayService controller
-- does. The first cluster `<svc>-<5 random>` is pending until its head
-- is ready and its Serve applications (serveConfigV2, pushed with
-- PUT /api/serve/applications/) are RUNNING; then it becomes active and
-- the Services `<svc>-head-svc` and `<svc>-serve-svc` select its pods. A
-- change of rayClusterConfig makes a new pending cluster beside the active
-- one; when it serves, both Services switch to it at once and the old
-- cluster is deleted rayClusterDeletionDelaySeconds (60) later. A change
-- of serveConfigV2 alone is pushed to the active cluster. status carries
-- activeServiceStatus, pendingServiceStatus (cluster name, application
-- and deployment statuses), numServeEndpoints and the Ready and
-- UpgradeInProgress conditions. With upgradeStrategy
-- NewClusterWithIncrementalUpgrade the new cluster takes the traffic step
-- by step through a Gateway and an HTTPRoute (rayincremental.lua), and a
-- spec reverted mid-upgrade rolls back (RollbackInProgress).
local v = volray
local canon = require("canon")
local cond = require("raycond")
local dash = require("raydashboard")
local raypod = require("raypod")
local validate = require("rayvalidate")
local incr = require("rayincremental")

local RS = "ray.io/v1/rayservices"
local RC = "ray.io/v1/rayclusters"
local HASH = "ray.io/hash-without-replicas-and-workers-to-delete"
local CONFIG_HASH = "ray.io/serve-config-hash"
local SERVE_PORT = 8000
local REQUEUE = 2
local DEFAULT_DELAY = 60

local controller = {
  primary = RS,
  owns = { RC, "v1/services", incr.GATEWAYS, incr.ROUTES },
}

-- In memory, as upstream keeps them: when each old cluster goes, and
-- which Serve config each cluster was given.
local delete_at = {}
local pushed = {}

local function present(x)
  return x ~= nil and x ~= v.null and x ~= ""
end

-- The cluster spec's hash, ignoring what scaling changes.
local function spec_hash(spec)
  local s = v.deepcopy(spec)
  for _, g in ipairs(s.workerGroupSpecs or {}) do
    g.replicas = nil
    g.scaleStrategy = nil
  end
  return canon.safe_encode(canon.fnv1a32(canon.encode(s)))
end

local function config_hash(svc)
  return canon.safe_encode(canon.fnv1a32(svc.spec.serveConfigV2 or ""))
end

local function new_cluster(svc)
  local name = svc.metadata.name .. "-" .. v.random_suffix()
  local labels = {}
  for k, x in pairs(svc.metadata.labels or {}) do labels[k] = x end
  labels[raypod.ORIGIN_NAME] = svc.metadata.name
  labels[raypod.ORIGIN_CRD] = "RayService"
  local out, err = v.create({
    apiVersion = "ray.io/v1", kind = "RayCluster",
    metadata = { name = name, namespace = svc.metadata.namespace, labels = labels,
      annotations = { [HASH] = spec_hash(svc.spec.rayClusterConfig) },
      ownerReferences = v.array({ v.owner_ref(svc) }) },
    spec = v.deepcopy(svc.spec.rayClusterConfig),
  })
  if out == nil then
    v.event(svc, "Warning", "FailedToCreateRayCluster", tostring(err))
    error("creating RayCluster " .. name .. ": " .. tostring(err), 0)
  end
  v.event(svc, "Normal", "CreatedRayCluster", "Created RayCluster " .. svc.metadata.namespace .. "/" .. name)
  return out
end

-- Push the Serve config to a cluster whose head is ready and read its
-- applications. Returns the application statuses (nil while unknown) and
-- whether every application is RUNNING. The head's readiness, not the
-- cluster's, as KubeRay's reconcileServe checks it: a RayService's
-- workers are ready only once their Serve proxy is (rayprobes.lua), and
-- that needs the config pushed.
local function serve_status(svc, rc, capacity)
  if not cond.is_true(rc.status or {}, "HeadPodReady") then return nil, false end
  local port = raypod.port(rc.spec.headGroupSpec.rayStartParams, "dashboard")
  local base = dash.base(svc.metadata.namespace, raypod.head_service_name(rc), port, rc)
  if base == nil then return nil, false end
  local text = svc.spec.serveConfigV2
  if not present(text) then return {}, true end
  local want = config_hash(svc) .. (capacity and ("@" .. capacity) or "")
  if pushed[rc.metadata.uid] ~= want then
    local cfg = v.yaml_decode(text)
    -- An incremental upgrade sets each cluster's target_capacity.
    if capacity then cfg.target_capacity = capacity end
    local r = dash.put_serve(base, cfg)
    if r.pending then return nil, false end
    if r.error or r.status >= 300 then
      v.event(svc, "Warning", "FailedToUpdateServeApplications", tostring(r.error or r.body))
      return nil, false
    end
    pushed[rc.metadata.uid] = want
    v.event(svc, "Normal", "UpdatedServeApplications", "Updated the Serve applications of RayCluster " .. rc.metadata.name)
  end
  local r = dash.get_serve(base)
  if r.pending or r.error or r.status ~= 200 or type(r.json) ~= "table" then return nil, false end
  local apps, all = {}, true
  local n = 0
  for name, a in pairs(r.json.applications or {}) do
    n = n + 1
    local deps = {}
    for dn, d in pairs(a.deployments or {}) do deps[dn] = { status = d.status, message = d.message } end
    apps[name] = { status = a.status, message = present(a.message) and a.message or nil,
      serveDeploymentStatuses = next(deps) and deps or nil }
    if a.status ~= "RUNNING" then all = false end
  end
  if n == 0 then all = false end
  return apps, all
end

local function serve_selector(svc, rc)
  local sel = { [raypod.CLUSTER] = rc.metadata.name }
  if svc.spec.excludeHeadPodFromServeSvc == true then sel[raypod.NODE_TYPE] = "worker" end
  return sel
end

-- <svc>-head-svc and <svc>-serve-svc, pointed at the active cluster.
local function sync_services(svc, rc)
  local ns = svc.metadata.namespace
  local head_ports = v.array()
  local hc = rc.spec.headGroupSpec.template.spec.containers[1]
  local ports = v.deepcopy(hc.ports or {})
  raypod.add_head_ports({ ports = ports }, rc.spec.headGroupSpec.rayStartParams)
  for _, p in ipairs(ports) do
    if present(p.name) then
      head_ports[#head_ports + 1] = { name = p.name, port = p.containerPort, targetPort = p.containerPort, protocol = "TCP" }
    end
  end
  local serve_sel = serve_selector(svc, rc)
  local want = {
    { name = svc.metadata.name .. "-head-svc", selector = raypod.selector(rc, "head"), ports = head_ports },
    { name = svc.metadata.name .. "-serve-svc", selector = serve_sel,
      ports = v.array({ { name = "serve", port = SERVE_PORT, targetPort = SERVE_PORT, protocol = "TCP" } }) },
  }
  for _, w in ipairs(want) do
    local cur = v.get("v1/services", ns, w.name)
    if cur == nil then
      local out, err, code = v.create({
        apiVersion = "v1", kind = "Service",
        metadata = { name = w.name, namespace = ns,
          labels = { [raypod.ORIGIN_NAME] = svc.metadata.name, [raypod.ORIGIN_CRD] = "RayService",
            [raypod.CREATED_BY] = raypod.OPERATOR },
          ownerReferences = v.array({ v.owner_ref(svc) }) },
        spec = { selector = w.selector, ports = w.ports },
      })
      if out == nil and code ~= 409 then error("creating Service " .. w.name .. ": " .. tostring(err), 0) end
    elseif canon.encode(cur.spec.selector or {}) ~= canon.encode(w.selector) then
      local sel = {}
      for k in pairs(cur.spec.selector or {}) do sel[k] = v.null end
      for k, x in pairs(w.selector) do sel[k] = x end
      local out, err, code = v.patch("v1/services", ns, w.name, { spec = { selector = sel, ports = w.ports } })
      if out == nil and code ~= 409 then error("updating Service " .. w.name .. ": " .. tostring(err), 0) end
      v.event(svc, "Normal", "SwitchedService", "Service " .. w.name .. " now selects RayCluster " .. rc.metadata.name)
    end
  end
end

local function serve_endpoints(svc, rc)
  local n = 0
  for _, p in ipairs(v.list("v1/pods", svc.metadata.namespace, { owner = rc.metadata.uid })) do
    local l = p.metadata.labels or {}
    if p.metadata.deletionTimestamp == nil and raypod.running_ready(p)
        and not (svc.spec.excludeHeadPodFromServeSvc == true and l[raypod.NODE_TYPE] == "head") then
      n = n + 1
    end
  end
  return n
end

-- Clusters of ours that are neither active nor pending go after the delay.
local function collect_old(svc, keep, now)
  local delay = svc.spec.rayClusterDeletionDelaySeconds
  if not present(delay) then delay = DEFAULT_DELAY end
  local soonest
  for _, rc in ipairs(v.list(RC, svc.metadata.namespace, { owner = svc.metadata.uid })) do
    local name = rc.metadata.name
    if not keep[name] and rc.metadata.deletionTimestamp == nil then
      delete_at[rc.metadata.uid] = delete_at[rc.metadata.uid] or (now + delay)
      local left = delete_at[rc.metadata.uid] - now
      if left <= 0 then
        local ok, err, code = v.delete(RC, rc.metadata.namespace, name)
        if not ok and code ~= 404 then error("deleting RayCluster " .. name .. ": " .. tostring(err), 0) end
        delete_at[rc.metadata.uid] = nil
        pushed[rc.metadata.uid] = nil
        v.event(svc, "Normal", "DeletedRayCluster", "Deleted RayCluster " .. rc.metadata.namespace .. "/" .. name)
      elseif soonest == nil or left < soonest then
        soonest = left
      end
    end
  end
  return soonest
end

local function get_cluster(svc, name)
  if not present(name) then return nil end
  local rc = v.get(RC, svc.metadata.namespace, name)
  if rc == nil or rc.metadata.deletionTimestamp ~= nil or not v.is_controlled_by(rc, svc) then return nil end
  return rc
end

function controller.reconcile(req)
  local svc = v.get(RS, req.namespace, req.name)
  if svc == nil or svc.metadata.deletionTimestamp ~= nil then return nil end
  local bad = validate.service(svc)
  if bad then
    v.event(svc, "Warning", "InvalidRayServiceSpec", bad)
    return nil
  end
  svc.status = svc.status or {}
  local st = svc.status
  local before = canon.encode(st)
  local now = v.time()
  st.activeServiceStatus = st.activeServiceStatus or {}
  st.pendingServiceStatus = st.pendingServiceStatus or {}
  local active = get_cluster(svc, st.activeServiceStatus.rayClusterName)
  local pending = get_cluster(svc, st.pendingServiceStatus.rayClusterName)
  local want = spec_hash(svc.spec.rayClusterConfig)
  local strategy = svc.spec.upgradeStrategy and svc.spec.upgradeStrategy.type or "NewCluster"
  local inc = incr.enabled(svc)
  local upgrading = inc and active ~= nil and pending ~= nil
  if active == nil then st.activeServiceStatus = {} end
  if upgrading then
    -- Mid-upgrade the spec decides between going on and rolling back.
    local ph = (pending.metadata.annotations or {})[HASH]
    if ph == want then
      cond.remove(st, "RollbackInProgress")
    elseif not cond.is_true(st, "RollbackInProgress") then
      local back = (active.metadata.annotations or {})[HASH] == want
      cond.set(st, "RollbackInProgress", "True", "DesiredClusterSpecChanged", back and
        "Goal state reverted to original cluster, rolling back." or
        "Goal state changed mid-upgrade, rolling back to original cluster.")
    end
  elseif pending ~= nil and (pending.metadata.annotations or {})[HASH] ~= want then
    pending = nil  -- the spec changed again: a newer pending cluster replaces it
  end
  if pending == nil then
    st.pendingServiceStatus = {}
    local stale = active ~= nil and (active.metadata.annotations or {})[HASH] ~= want and strategy ~= "None"
    if active == nil or stale then
      pending = new_cluster(svc)
      st.pendingServiceStatus = { rayClusterName = pending.metadata.name }
      -- Incremental: a first cluster takes all at once, a new one none.
      if inc then st.pendingServiceStatus.targetCapacity = active and 0 or 100 end
    end
  end
  upgrading = inc and active ~= nil and pending ~= nil
  if upgrading and incr.may_move_capacity(svc) then
    for _, which in ipairs({ "active", "pending" }) do
      local goal = incr.capacity_goal(svc, which)
      if goal then st[which .. "ServiceStatus"].targetCapacity = goal end
    end
  end
  if active ~= nil and (pending == nil or upgrading) then
    local tc = inc and (st.activeServiceStatus.targetCapacity or 100) or nil
    local apps = serve_status(svc, active, tc)
    if apps then st.activeServiceStatus.applicationStatuses = next(apps) and apps or nil end
  end
  if active ~= nil then st.activeServiceStatus.rayClusterStatus = active.status end
  if pending ~= nil then
    local apps, serving = serve_status(svc, pending, inc and st.pendingServiceStatus.targetCapacity or nil)
    if apps then st.pendingServiceStatus.applicationStatuses = next(apps) and apps or nil end
    st.pendingServiceStatus.rayClusterStatus = pending.status
    if upgrading then
      incr.sync_cluster_service(svc, active, serve_selector(svc, active))
      incr.sync_cluster_service(svc, pending, serve_selector(svc, pending))
      incr.sync_gateway(svc)
      local aw, pw = incr.weights(svc, serving, now)
      incr.read_weights(svc, incr.sync_route(svc, active, pending, aw, pw), v.now())
      if cond.is_true(st, "RollbackInProgress") and incr.rolled_back(svc, pending) then
        -- Back where it was: the new cluster goes (collect_old).
        v.event(svc, "Normal", "RolledBack", "Rolled back to RayCluster " .. active.metadata.name)
        st.pendingServiceStatus = {}
        cond.remove(st, "RollbackInProgress")
        pending = nil
      elseif not cond.is_true(st, "RollbackInProgress") and incr.complete(svc) then
        st.activeServiceStatus = st.pendingServiceStatus
        st.pendingServiceStatus = {}
        v.event(svc, "Normal", "Promoted", "RayCluster " .. pending.metadata.name ..
          " is now serving: incremental upgrade complete")
        active, pending = pending, nil
      end
    elseif serving then
      -- Promote: the Services switch in one pass; the old cluster waits.
      st.activeServiceStatus = st.pendingServiceStatus
      st.activeServiceStatus.lastTrafficMigratedTime = v.now()
      if inc then
        st.activeServiceStatus.targetCapacity = 100
        st.activeServiceStatus.trafficRoutedPercent = 100
      end
      st.pendingServiceStatus = {}
      v.event(svc, "Normal", "Promoted", "RayCluster " .. pending.metadata.name .. " is now serving")
      active, pending = pending, nil
    end
  end
  if inc and active ~= nil and pending == nil then
    -- Between upgrades the route sends everything to the active cluster.
    incr.sync_cluster_service(svc, active, serve_selector(svc, active))
    incr.sync_gateway(svc)
    incr.read_weights(svc, incr.sync_route(svc, active, nil, 100, 0), v.now())
  end
  local keep = {}
  if active then keep[active.metadata.name] = true; sync_services(svc, active) end
  if pending then keep[pending.metadata.name] = true end
  local soonest = collect_old(svc, keep, now)
  local n = active and serve_endpoints(svc, active) or 0
  -- Mid-upgrade the new cluster serves its share too.
  if inc and active and pending then n = n + serve_endpoints(svc, pending) end
  st.numServeEndpoints = n
  st.serviceStatus = active and "Running" or nil
  if active == nil then
    cond.set(st, "Ready", "False", "Initializing", "no cluster serves yet")
  elseif n > 0 then
    cond.set(st, "Ready", "True", "NonZeroServeEndpoints", "Number of serve endpoints is greater than 0")
  else
    cond.set(st, "Ready", "False", "ZeroServeEndpoints", "No Serve endpoints")
  end
  if pending and active then
    cond.set(st, "UpgradeInProgress", "True", "BothActivePendingClustersExist",
      "Both active and pending Ray clusters exist")
  elseif active then
    cond.set(st, "UpgradeInProgress", "False", "NoPendingCluster", "Active Ray cluster exists and no pending Ray cluster")
  else
    cond.set(st, "UpgradeInProgress", "Unknown", "NoActiveCluster", "No active Ray cluster exists")
  end
  if next(st.pendingServiceStatus) == nil then st.pendingServiceStatus = nil end
  if next(st.activeServiceStatus) == nil then st.activeServiceStatus = nil end
  st.observedGeneration = svc.metadata.generation
  if canon.encode(st) ~= before then
    st.lastUpdateTime = v.now()
    local out, err, code = v.update_status(svc)
    if out == nil and code ~= 409 and code ~= 404 then error("updating RayService status: " .. tostring(err), 0) end
  end
  local after = REQUEUE
  if active and not pending then after = 10 end
  if soonest and soonest < after then after = soonest end
  return { requeue_after = after }
end

return controller
