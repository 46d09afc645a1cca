-- Endpoints and EndpointSlices: a Service with a selector has an
-- Endpoints object of its name listing the pods it selects, as
-- kube-controller-manager's endpoints controller keeps it: the running
-- pods with an IP that are not being deleted, the Ready ones in addresses
-- and the others in notReadyAddresses (with their node and a targetRef),
-- and the Service's ports, a named targetPort resolved through each pod's
-- container ports (pods that resolve them differently go in subsets of
-- their own; a pod that does not have the named port is left out). It
-- also has discovery.k8s.io EndpointSlices, as the endpointslice
-- controller keeps them: labelled kubernetes.io/service-name and owned by
-- the Service, one per set of resolved ports (an empty one when no pod
-- is selected), each endpoint a running pod with an IP and its
-- conditions ready, serving and terminating (a pod being deleted stays,
-- terminating and not ready, until it is gone). A Service without a
-- selector keeps the Endpoints and slices its user writes; a Service
-- deleted takes its Endpoints with it (its slices go with their owner).
local v = volray
local canon = require("canon")

local SERVICES = "v1/services"
local ENDPOINTS = "v1/endpoints"
local SLICES = "discovery.k8s.io/v1/endpointslices"
local SERVICE_NAME = "kubernetes.io/service-name"
local MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
local MANAGER = "endpointslice-controller.k8s.io"
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
  event_source = "endpoint-controller",	-- kube's, without the s
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
    -- So is a slice of ours.
    { resource = SLICES, paths = { "metadata.namespace", "metadata.labels" },
      map = function(sl)
        local svc = sl.metadata.labels and sl.metadata.labels[SERVICE_NAME]
        if svc == nil then return nil end
        return sl.metadata.namespace .. "/" .. svc
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

-- The Endpoints subsets and the EndpointSlice groups (by ports key) of
-- the pods the Service selects.
local function gather(svc)
  local by_ports, order = {}, {}
  local slices, slice_order = {}, {}
  -- paths: only what an address and its ports need become Lua tables.
  local pods = v.list(PODS, svc.metadata.namespace,
    { labels = { matchLabels = svc.spec.selector }, paths = POD_PATHS })
  table.sort(pods, function(a, b) return a.metadata.name < b.metadata.name end)
  for _, pod in ipairs(pods) do
    local ip = pod.status and pod.status.podIP
    local ports = ip ~= nil and ip ~= "" and pod.status.phase == "Running" and
      ports_for(svc, pod)
    if ports then
      local key = ports_key(ports)
      local target = { kind = "Pod", namespace = pod.metadata.namespace,
        name = pod.metadata.name, uid = pod.metadata.uid }
      local going = pod.metadata.deletionTimestamp ~= nil
      if not going then
        local sub = by_ports[key]
        if sub == nil then
          sub = { ports = ports }
          by_ports[key] = sub
          order[#order + 1] = key
        end
        local addr = { ip = ip, nodeName = pod.spec.nodeName, targetRef = target }
        local list = ready(pod) and "addresses" or "notReadyAddresses"
        sub[list] = sub[list] or {}
        sub[list][#sub[list] + 1] = addr
      end
      local sl = slices[key]
      if sl == nil then
        sl = { ports = ports, endpoints = v.array() }
        slices[key] = sl
        slice_order[#slice_order + 1] = key
      end
      sl.endpoints[#sl.endpoints + 1] = { addresses = v.array({ ip }),
        conditions = { ready = ready(pod) and not going, serving = ready(pod),
          terminating = going },
        nodeName = pod.spec.nodeName, targetRef = target }
    end
  end
  local subsets
  if #order > 0 then
    subsets = {}
    for i, key in ipairs(order) do subsets[i] = by_ports[key] end
  end
  local groups = {}
  for i, key in ipairs(slice_order) do groups[i] = slices[key] end
  return subsets, groups
end

-- The slice's ports as ports_key spells them ("" for none).
local function slice_key(sl)
  local ps = {}
  for i, p in ipairs(sl.ports or {}) do
    ps[i] = { name = p.name, port = p.port, protocol = p.protocol or "TCP" }
  end
  return ports_key(ps)
end

-- Make the Service's slices hold groups: reuse the slice with the same
-- ports, create the missing, delete the rest.
local function sync_slices(svc, groups)
  local ns = svc.metadata.namespace
  local have = {}
  for _, sl in ipairs(v.list(SLICES, ns, { labels = SERVICE_NAME .. "=" .. svc.metadata.name })) do
    if sl.metadata.labels[MANAGED_BY] == MANAGER and v.is_controlled_by(sl, svc) then
      have[#have + 1] = sl
    end
  end
  if #groups == 0 then groups = { { endpoints = v.array() } } end
  local used = {}
  for _, g in ipairs(groups) do
    local key = g.ports and ports_key(g.ports) or ""
    local found
    for i, sl in ipairs(have) do
      if not used[i] and slice_key(sl) == key then found = i; break end
    end
    if found ~= nil then
      used[found] = true
      local sl = have[found]
      if not same(sl.endpoints or {}, g.endpoints) then
        sl.endpoints = g.endpoints
        local _, err, code = v.update(sl)
        if err ~= nil and code ~= 409 and code ~= 404 then error(err) end
      end
    else
      local labels = v.deepcopy(svc.metadata.labels or {})
      labels[SERVICE_NAME] = svc.metadata.name
      labels[MANAGED_BY] = MANAGER
      local _, err = v.create({ apiVersion = "discovery.k8s.io/v1", kind = "EndpointSlice",
        metadata = { generateName = svc.metadata.name .. "-", namespace = ns,
          labels = labels, ownerReferences = v.array({ v.owner_ref(svc) }) },
        addressType = "IPv4", endpoints = g.endpoints,
        ports = g.ports and v.array(g.ports) or nil })
      if err ~= nil then error(err) end
    end
  end
  for i, sl in ipairs(have) do
    if not used[i] then
      local ok, err, code = v.delete(SLICES, ns, sl.metadata.name)
      if not ok and code ~= 404 then error(err) end
    end
  end
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
  local want, groups = gather(svc)
  sync_slices(svc, groups)
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
