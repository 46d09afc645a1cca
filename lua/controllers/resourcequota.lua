-- ResourceQuota: status.hard is spec.hard and status.used what the
-- namespace uses of each, as kube-controller-manager's resourcequota
-- controller keeps them, counted by the rules admission enforces
-- (core/registry/quota.c, which counts from the store itself when it
-- decides): count/<resource> objects (count/pods and pods: pods that have
-- not finished), the core kinds by their old names, services.nodeports
-- and services.loadbalancers, and the requests (requests.cpu or cpu,
-- requests.memory or memory) and limits of the pods that have not
-- finished, a pod's the sum of its containers' or its largest init
-- container's. Pods coming, going or changing phase, and Services
-- changing, recount their namespace's quotas; anything else is recounted
-- every 10 seconds.
local v = volray

local QUOTAS = "v1/resourcequotas"
local RESYNC = 10

local LEGACY = { pods = "v1/pods", services = "v1/services",
  configmaps = "v1/configmaps", secrets = "v1/secrets",
  replicationcontrollers = "v1/replicationcontrollers",
  resourcequotas = "v1/resourcequotas",
  persistentvolumeclaims = "v1/persistentvolumeclaims" }

local function quotas_in_ns(obj)
  local keys = {}
  for _, q in ipairs(v.list(QUOTAS, obj.metadata.namespace,
      { paths = { "metadata.name" } })) do
    keys[#keys + 1] = obj.metadata.namespace .. "/" .. q.metadata.name
  end
  return keys
end

local controller = {
  primary = QUOTAS,
  watches = {
    -- changes: a pod's usage moves when it comes, goes or finishes (its
    -- phase); anything else waits for the resync, as kube's replenishment.
    { resource = "v1/pods", paths = { "metadata.namespace" },
      changes = { "status.phase" }, map = quotas_in_ns },
    { resource = "v1/services", paths = { "metadata.namespace" }, map = quotas_in_ns },
  },
}

local function finished(pod)
  local ph = pod.status and pod.status.phase
  return ph == "Succeeded" or ph == "Failed"
end

-- A pod's requests or limits of one resource (cpu in millicores).
local function pod_amount(pod, list, res)
  local conv = res == "cpu" and v.milli or v.quantity
  local sum, init = 0, 0
  for _, c in ipairs(pod.spec.containers or {}) do
    local q = c.resources and c.resources[list] and c.resources[list][res]
    if q ~= nil then sum = sum + conv(tostring(q)) end
  end
  for _, c in ipairs(pod.spec.initContainers or {}) do
    local q = c.resources and c.resources[list] and c.resources[list][res]
    if q ~= nil and conv(tostring(q)) > init then init = conv(tostring(q)) end
  end
  return math.max(sum, init)
end

local BIN = { { "Ti", 2 ^ 40 }, { "Gi", 2 ^ 30 }, { "Mi", 2 ^ 20 }, { "Ki", 2 ^ 10 } }

-- A quantity as the API prints it: cpu from millicores, bytes binary.
local function format(key, n)
  if key:find("cpu") then
    if n % 1000 == 0 then return string.format("%d", n // 1000) end
    return string.format("%dm", math.floor(n))
  end
  if key:find("memory") or key:find("storage") then
    for _, b in ipairs(BIN) do
      if n ~= 0 and n % b[2] == 0 then return string.format("%d%s", n // b[2], b[1]) end
    end
  end
  return string.format("%d", math.floor(n))
end

local function used(ns, key, pods)
  if key == "pods" or key == "count/pods" then
    local n = 0
    for _, p in ipairs(pods) do if not finished(p) then n = n + 1 end end
    return n
  end
  local compute = { cpu = { "requests", "cpu" }, memory = { "requests", "memory" } }
  local list, res = key:match("^(requests)%.(.+)$")
  if list == nil then list, res = key:match("^(limits)%.(.+)$") end
  if compute[key] then list, res = compute[key][1], compute[key][2] end
  if list ~= nil then
    local n = 0
    for _, p in ipairs(pods) do
      if not finished(p) then n = n + pod_amount(p, list, res) end
    end
    return n
  end
  if key == "services.nodeports" or key == "services.loadbalancers" then
    local n = 0
    for _, s in ipairs(v.list("v1/services", ns, { paths = { "spec.type" } })) do
      local t = s.spec and s.spec.type
      if t == "LoadBalancer" or (t == "NodePort" and key == "services.nodeports") then
        n = n + 1
      end
    end
    return n
  end
  local res_name = LEGACY[key] or key:match("^count/(.+)$")
  if res_name == nil then return 0 end
  local ok, objs = pcall(v.list, res_name, ns, { paths = { "metadata.name" } })
  if not ok or objs == nil then return 0 end
  return #objs
end

function controller.reconcile(req)
  local q = v.get(QUOTAS, req.namespace, req.name)
  if q == nil or q.metadata.deletionTimestamp ~= nil then return nil end
  local pods = v.list("v1/pods", req.namespace,
    { paths = { "spec.containers", "spec.initContainers", "status.phase" } })
  local st = { hard = {}, used = {} }
  for key, hard in pairs(q.spec.hard or {}) do
    st.hard[key] = hard
    st.used[key] = format(key, used(req.namespace, key, pods))
  end
  q.status = st
  local out, err, code = v.update_status(q)
  if out == nil then
    if code == 409 then return { requeue = true } end
    if code ~= 404 then error("updating status: " .. tostring(err), 0) end
  end
  return { requeue_after = RESYNC }
end

return controller
