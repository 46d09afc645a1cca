-- The Ray autoscaler of RayClusters with enableInTreeAutoscaling, doing
-- what Ray's autoscaler v2 does through KubeRay: it asks the head what
-- the cluster has and what it waits for (GET /api/volray/autoscaler on
-- the dashboard, the head emulation's answer: each Ray node's resources,
-- use and idle time, and the bundles that do not fit), then writes the
-- worker groups' replicas and scaleStrategy.workersToDelete; the
-- RayCluster controller makes and deletes the pods. Every PERIOD seconds:
--   * workersToDelete still naming a live pod: nothing else this round
--     (not safe to scale); once all are gone, the list is cleared.
--   * scale up: the pending bundles go first fit onto what is free on the
--     Running nodes and on workers already asked for; the rest make new
--     workers of the group with the highest `priority` (then the first in
--     spec order) whose worker holds the bundle and is below
--     maxReplicas. upscalingMode Conservative allows at most as many
--     pending workers as the cluster has Running nodes; Default and
--     Aggressive are not limited.
--   * scale down (when nothing waits): a worker (with numOfHosts above 1,
--     a replica: all its hosts) with nothing placed on it for its group's
--     idleTimeoutSeconds (else autoscalerOptions', else 60) is named in
--     workersToDelete (one pod per replica) and replicas lowered, never
--     below minReplicas.
-- A head that runs real Ray (the local node with Ray installed and the pod
-- network) is left to Ray's own autoscaler, which the head's sidecar runs
-- (`ray kuberay-autoscaler`, through the kubernetes Service with the head
-- pod's service-account token): it answers /api/volray/autoscaler with
-- its dashboard's 404, and this controller stands back.
-- A replacement is a controller file of the same name (volray-lua(7)).
local v = volray
local raypod = require("raypod")
local dash = require("raydashboard")

local RC = "ray.io/v1/rayclusters"
local PODS = "v1/pods"
local PERIOD = 2
local DEFAULT_IDLE = 60

local controller = { primary = RC }

local function present(x) return x ~= nil and x ~= v.null end

-- A worker of group g's Ray resources, from the `ray start` line it gets.
local function worker_capacity(rc, g)
  local c = (((g.template or {}).spec or {}).containers or {})[1] or {}
  local p = raypod.start_params(rc, "worker", g, c)
  return { CPU = tonumber(p["num-cpus"]) or 0, GPU = tonumber(p["num-gpus"]) or 0,
    memory = tonumber(p.memory) or 0 }
end

local function fits(free, b)
  return (b.CPU or 0) <= free.CPU + 1e-9 and (b.GPU or 0) <= free.GPU + 1e-9 and
    (b.memory or 0) <= free.memory
end

local function take(free, b)
  free.CPU = free.CPU - (b.CPU or 0)
  free.GPU = free.GPU - (b.GPU or 0)
  free.memory = free.memory - (b.memory or 0)
end

local function minus(total, used)
  return { CPU = (total.CPU or 0) - (used.CPU or 0), GPU = (total.GPU or 0) - (used.GPU or 0),
    memory = (total.memory or 0) - (used.memory or 0) }
end

local function idle_timeout(rc, g)
  if present(g.idleTimeoutSeconds) then return g.idleTimeoutSeconds end
  local o = rc.spec.autoscalerOptions or {}
  if present(o.idleTimeoutSeconds) then return o.idleTimeoutSeconds end
  return DEFAULT_IDLE
end

-- The cluster's worker pods by group: live (not being deleted) ones.
local function workers(rc)
  local by = {}
  for _, p in ipairs(v.list(PODS, rc.metadata.namespace, { owner = rc.metadata.uid, paths = { "metadata" } })) do
    local l = p.metadata.labels or {}
    if l[raypod.NODE_TYPE] == "worker" and p.metadata.deletionTimestamp == nil then
      local g = l[raypod.GROUP] or ""
      by[g] = by[g] or {}
      by[g][#by[g] + 1] = p
    end
  end
  return by
end

-- New replicas per group (index -> count) and names to delete, or nil.
local function plan(rc, report, pods)
  local groups = rc.spec.workerGroupSpecs or {}
  local running, free = 0, {}
  local node_of = {}
  for _, n in ipairs(report.nodes or {}) do
    running = running + 1
    node_of[n.name] = n
    free[#free + 1] = minus(n.resources, n.used)
  end
  local replicas, pending_pods, caps = {}, 0, {}
  for i, g in ipairs(groups) do
    local live = pods[g.groupName] or {}
    replicas[i] = math.max(#live // (g.numOfHosts or 1),
      present(g.replicas) and g.replicas or (g.minReplicas or 0))
    -- Workers asked for and not yet Running: their room is coming.
    caps[i] = worker_capacity(rc, g)
    local cap = caps[i]
    local launching = replicas[i] * (g.numOfHosts or 1)
    for _, p in ipairs(live) do
      if node_of[p.metadata.name] ~= nil then launching = launching - 1 end
    end
    for _ = 1, math.max(launching, 0) do
      free[#free + 1] = { CPU = cap.CPU, GPU = cap.GPU, memory = cap.memory }
      pending_pods = pending_pods + 1
    end
  end
  local mode = (rc.spec.autoscalerOptions or {}).upscalingMode or "Default"
  local room = mode == "Conservative" and math.max(running - pending_pods, 0) or math.huge
  local order = {}
  for i in ipairs(groups) do order[#order + 1] = i end
  table.sort(order, function(a, b)
    local pa, pb = groups[a].priority or 0, groups[b].priority or 0
    if pa ~= pb then return pa > pb end
    return a < b
  end)
  -- First fit, with a cursor per bundle shape: what is free only shrinks
  -- while planning and new room is appended, so a slot that did not hold
  -- a shape never will, and the next bundle of that shape starts where the
  -- last one stopped (10,000 one-CPU bundles: linear, not quadratic).
  local cursor = {}
  local waiting, up = false, {}
  for _, job in ipairs(report.pending or {}) do
    for _, b in ipairs(job.bundles or {}) do
      waiting = true
      local placed = false
      local shape = (b.CPU or 0) .. "/" .. (b.GPU or 0) .. "/" .. (b.memory or 0)
      local k = cursor[shape] or 1
      while k <= #free do
        if fits(free[k], b) then take(free[k], b); placed = true; break end
        k = k + 1
      end
      cursor[shape] = k
      if not placed and room > 0 then
        for _, i in ipairs(order) do
          local g = groups[i]
          local cap = caps[i]
          if g.suspend ~= true and replicas[i] < (g.maxReplicas or 2147483647) and fits(cap, b) then
            replicas[i] = replicas[i] + 1
            up[i] = true
            room = room - 1
            for _ = 1, g.numOfHosts or 1 do
              local f = { CPU = cap.CPU, GPU = cap.GPU, memory = cap.memory }
              free[#free + 1] = f
            end
            take(free[#free], b)
            break
          end
        end
      end
    end
  end
  -- Scale down: a replica (its numOfHosts pods, by replica name) whose
  -- every host is Running and idle for the timeout; naming one of its pods
  -- in workersToDelete takes the whole replica away.
  local doomed = {}
  if not waiting then
    for i, g in ipairs(groups) do
      local limit, hosts = idle_timeout(rc, g), g.numOfHosts or 1
      local reps, order = {}, {}
      for _, p in ipairs(pods[g.groupName] or {}) do
        local key = hosts > 1 and (p.metadata.labels or {})[raypod.REPLICA] or p.metadata.name
        if reps[key] == nil then reps[key] = {}; order[#order + 1] = key end
        reps[key][#reps[key] + 1] = p
      end
      for _, key in ipairs(order) do
        local rep, idle = reps[key], #reps[key] == hosts
        for _, p in ipairs(rep) do
          local n = node_of[p.metadata.name]
          if n == nil or (n.idle_seconds or 0) < limit then idle = false end
        end
        if idle and replicas[i] > (g.minReplicas or 0) then
          replicas[i] = replicas[i] - 1
          doomed[i] = doomed[i] or {}
          doomed[i][#doomed[i] + 1] = rep[1].metadata.name
        end
      end
    end
  end
  return replicas, doomed, up
end

-- When each cluster was last looked at: a RayCluster's status changes
-- with every pod it gains, and each change would bring this key back; the
-- autoscaler looks every PERIOD (as Ray's does on its own period), not on
-- every status write.
local last_look = {}

function controller.reconcile(req)
  local rc = v.get(RC, req.namespace, req.name)
  if rc == nil or rc.metadata.deletionTimestamp ~= nil then
    last_look[req.key] = nil
    return nil
  end
  if rc.spec.enableInTreeAutoscaling ~= true or rc.spec.suspend == true then return nil end
  local now = v.time()
  local since = now - (last_look[req.key] or -math.huge)
  if since < PERIOD then return { requeue_after = PERIOD - since } end
  local groups = rc.spec.workerGroupSpecs or {}

  -- What the head has and waits for; a head running real Ray (a dashboard
  -- that knows no /api/volray/autoscaler: a 404 that is not the API's own
  -- Status) has Ray's own autoscaler in its sidecar, which scales alone.
  local port = raypod.port(rc.spec.headGroupSpec.rayStartParams, "dashboard")
  local base, berr = dash.base(rc.metadata.namespace, raypod.head_service_name(rc), port, rc)
  if base == nil then error(berr, 0) end
  local r = dash.autoscaler_state(base)
  if r.pending then return { requeue_after = 30 } end
  -- A look is a reply read: the period counts from here, not from the
  -- request (whose answer brings this key back).
  last_look[req.key] = now
  local pods = workers(rc)
  if r.status == 404 and not (type(r.json) == "table" and r.json.kind == "Status") then
    return { requeue_after = 30 }
  end

  -- Not safe to scale while named workers are still there.
  local clear = false
  for _, g in ipairs(groups) do
    local names = (g.scaleStrategy or {}).workersToDelete or {}
    if #names > 0 then
      for _, name in ipairs(names) do
        if v.get(PODS, rc.metadata.namespace, name) ~= nil then
          return { requeue_after = PERIOD }
        end
      end
      g.scaleStrategy.workersToDelete = v.array()
      clear = true
    end
  end
  if clear then
    local out, err, code = v.update(rc)
    if out == nil and code ~= 409 and code ~= 404 then error("clearing workersToDelete: " .. tostring(err), 0) end
    last_look[req.key] = nil  -- the next look at once
    return { requeue = true }
  end

  if r.error or r.status ~= 200 or type(r.json) ~= "table" then
    return { requeue_after = PERIOD }   -- no head yet, or not ready
  end
  local replicas, doomed, up = plan(rc, r.json, pods)
  local changed = false
  for i, g in ipairs(groups) do
    local before = present(g.replicas) and g.replicas or nil
    if before ~= replicas[i] and (up[i] or doomed[i]) then
      g.replicas = replicas[i]
      changed = true
      if doomed[i] then
        g.scaleStrategy = g.scaleStrategy or {}
        g.scaleStrategy.workersToDelete = v.array(doomed[i])
        v.log("info", string.format("autoscaler %s/%s: group %s down to %d (%s idle)",
          rc.metadata.namespace, rc.metadata.name, g.groupName, replicas[i], table.concat(doomed[i], ", ")))
      else
        v.log("info", string.format("autoscaler %s/%s: group %s up to %d",
          rc.metadata.namespace, rc.metadata.name, g.groupName, replicas[i]))
      end
    end
  end
  if changed then
    local out, err, code = v.update(rc)
    if out == nil then
      if code == 409 then
        last_look[req.key] = nil
        return { requeue = true }
      end
      if code ~= 404 then error("updating replicas: " .. tostring(err), 0) end
      return nil
    end
  end
  return { requeue_after = PERIOD }
end

return controller
