-- Endpoints: a Service with a selector has an Endpoints object of its
-- name listing the pods it selects, as kube-controller-manager's
-- endpoints controller keeps it: the running pods with an IP that are not
-- being deleted, the Ready ones in addresses and the others in
-- notReadyAddresses (with their node and a targetRef), and the Service's
-- ports, a named targetPort resolved through each pod's container ports
-- (pods that resolve them differently go in subsets of their own; a pod
-- that does not have the named port is left out). A Service without a
-- selector keeps the Endpoints its user writes; a Service deleted takes
-- its Endpoints with it.
local v = volray
local canon = require("canon")

local SERVICES = "v1/services"
local ENDPOINTS = "v1/endpoints"
local PODS = "v1/pods"
local POD_PATHS = { "metadata.name", "metadata.namespace", "metadata.uid",
  "metadata.deletionTimestamp", "spec.nodeName", "spec.containers",
  "status.podIP", "status.phase", "status.conditions" }

-- The selecting Services of each namespace, indexed by one "key=value"
-- of their selectors (a pod event looks only at the Services that share
-- one of its labels), listed the first time and then kept up to date by
-- the Services' own events.
local by_ns = {}	-- ns -> { pairs = { "k=v" -> { name -> svc } }, of = { name -> "k=v" } }

local function pair_of(s)
  local sel = s.spec and s.spec.selector
  local k = sel and next(sel)
  return k and (k .. "=" .. sel[k])
end

local function put(idx, s)
  local name = s.metadata.name
  local old = idx.of[name]
  if old ~= nil then
    idx.pairs[old][name] = nil
    idx.of[name] = nil
  end
  local pair = pair_of(s)
  if pair ~= nil then
    idx.pairs[pair] = idx.pairs[pair] or {}
    idx.pairs[pair][name] = s
    idx.of[name] = pair
  end
end

local function index(ns)
  local idx = by_ns[ns]
  if idx == nil then
    idx = { pairs = {}, of = {} }
    for _, s in ipairs(v.list(SERVICES, ns,
        { paths = { "metadata.name", "spec.selector" } })) do
      put(idx, s)
    end
    by_ns[ns] = idx
  end
  return idx
end

-- A Service changed (or went): its entry follows.
local function service_changed(s)
  local ns, name = s.metadata.namespace, s.metadata.name
  local idx = by_ns[ns]
  if idx ~= nil then
    local now = v.get(SERVICES, ns, name)
    if now == nil then
      local old = idx.of[name]
      if old ~= nil then idx.pairs[old][name] = nil end
      idx.of[name] = nil
    else
      put(idx, now)
    end
  end
  return ns .. "/" .. name
end

-- The Services of the pod's namespace whose selector picks it.
local function services_of(pod)
  local keys = {}
  local labels = pod.metadata.labels or {}
  local idx = index(pod.metadata.namespace)
  for k, val in pairs(labels) do
    for _, s in pairs(idx.pairs[k .. "=" .. val] or {}) do
      local all = true
      for sk, sv in pairs(s.spec.selector) do
        if labels[sk] ~= sv then all = false; break end
      end
      if all then
        keys[#keys + 1] = pod.metadata.namespace .. "/" .. s.metadata.name
      end
    end
  end
  return keys
end

local controller = {
  primary = SERVICES,
  watches = {
    -- A Service changed: the index of selectors follows.
    { resource = SERVICES, map = service_changed },
    -- previous: a pod whose labels changed leaves the Services it left.
    -- paths: the map reads only these (the rest stays in C).
    { resource = PODS, previous = true,
      paths = { "metadata.namespace", "metadata.labels" }, map = services_of },
    -- An Endpoints edited or deleted by hand is put back.
    { resource = ENDPOINTS, map = function(ep)
        return ep.metadata.namespace .. "/" .. ep.metadata.name
      end },
  },
}

local same = canon.same

local function ready(pod)
  for _, c in ipairs(pod.status and pod.status.conditions or {}) do
    if c.type == "Ready" then return c.status == "True" end
  end
  return false
end

-- The container port named name, or nil.
local function named_port(pod, name)
  for _, c in ipairs(pod.spec.containers or {}) do
    for _, p in ipairs(c.ports or {}) do
      if p.name == name then return p.containerPort end
    end
  end
  return nil
end

-- The Endpoints ports of the Service for this pod, or nil when a named
-- targetPort is not the pod's.
local function ports_for(svc, pod)
  local out = {}
  for _, sp in ipairs(svc.spec.ports or {}) do
    local tp = sp.targetPort or sp.port
    local n = tonumber(tp)
    if n == nil then n = named_port(pod, tp) end
    if n == nil then return nil end
    out[#out + 1] = { name = sp.name, port = math.tointeger(n) or n,
      protocol = sp.protocol or "TCP" }
  end
  return out
end

local function ports_key(ports)
  local parts = {}
  for i, p in ipairs(ports) do parts[i] = (p.name or "") .. ":" .. p.port .. "/" .. p.protocol end
  return table.concat(parts, ",")
end

local function subsets(svc)
  local by_ports, order = {}, {}
  -- paths: only what an address and its ports need become Lua tables.
  local pods = v.list(PODS, svc.metadata.namespace,
    { labels = { matchLabels = svc.spec.selector }, paths = POD_PATHS })
  table.sort(pods, function(a, b) return a.metadata.name < b.metadata.name end)
  for _, pod in ipairs(pods) do
    local ip = pod.status and pod.status.podIP
    local ports = pod.metadata.deletionTimestamp == nil and ip ~= nil and
      ip ~= "" and pod.status.phase == "Running" and ports_for(svc, pod)
    if ports then
      local key = ports_key(ports)
      local s = by_ports[key]
      if s == nil then
        s = { ports = ports }
        by_ports[key] = s
        order[#order + 1] = key
      end
      local addr = { ip = ip, nodeName = pod.spec.nodeName,
        targetRef = { kind = "Pod", namespace = pod.metadata.namespace,
          name = pod.metadata.name, uid = pod.metadata.uid } }
      local list = ready(pod) and "addresses" or "notReadyAddresses"
      s[list] = s[list] or {}
      s[list][#s[list] + 1] = addr
    end
  end
  if #order == 0 then return nil end
  local out = {}
  for i, key in ipairs(order) do out[i] = by_ports[key] end
  return out
end

function controller.reconcile(req)
  local svc = v.get(SERVICES, req.namespace, req.name)
  local ep = v.get(ENDPOINTS, req.namespace, req.name)
  if svc == nil or svc.metadata.deletionTimestamp ~= nil then
    if ep ~= nil and svc == nil then
      local ok, err, code = v.delete(ENDPOINTS, req.namespace, req.name)
      if not ok and code ~= 404 then error(err) end
    end
    return nil
  end
  local sel = svc.spec and svc.spec.selector
  if sel == nil or next(sel) == nil then return nil end
  local want = subsets(svc)
  if ep == nil then
    local _, err, code = v.create({ apiVersion = "v1", kind = "Endpoints",
      metadata = { name = req.name, namespace = req.namespace,
        labels = svc.metadata.labels },
      subsets = want })
    if err ~= nil and code ~= 409 then error(err) end
    if code == 409 then return { requeue = true } end
    return nil
  end
  if same(ep.subsets, want) then return nil end
  ep.subsets = want
  local _, err, code = v.update(ep)
  if err ~= nil then
    if code == 409 then return { requeue = true } end
    error(err)
  end
  return nil
end

return controller
