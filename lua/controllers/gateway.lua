-- Gateway API status, as a gateway implementation reports it: volray
-- has no data plane of its own for Gateways (KubeRay's incremental
-- RayService upgrade reads these conditions before it moves traffic,
-- rayservice.lua). Every Gateway, whatever its class, is Accepted and
-- Programmed, each listener with them; every HTTPRoute that names a
-- Gateway as a parent gets that parent's status: Accepted, and
-- ResolvedRefs True when each backendRef is a Service that exists (else
-- False, BackendNotFound, looked at again every 5 s). Each Gateway gets
-- a Service of its name (ports of its listeners, no selector, annotated
-- volray.io/gateway) whose proxy (/api/v1/namespaces/NS/services/NAME:
-- PORT/proxy/PATH) routes by the HTTPRoutes: the longest path match, then
-- a backend Service at random in proportion to its weight (api/proxy.c);
-- status.addresses names it.
local v = volray
local canon = require("canon")

local GATEWAYS = "gateway.networking.k8s.io/v1/gateways"
local ROUTES = "gateway.networking.k8s.io/v1/httproutes"
local CONTROLLER_NAME = "volray.io/gateway-controller"
local RETRY = 5

-- The Gateways a route names (ns/name keys).
local function parents(route)
  local out = {}
  for _, p in ipairs((route.spec or {}).parentRefs or {}) do
    if (p.kind == nil or p.kind == "Gateway") and p.name then
      out[#out + 1] = { namespace = p.namespace or route.metadata.namespace, name = p.name }
    end
  end
  return out
end

local controller = {
  primary = GATEWAYS,
  owns = { "v1/services" },
  watches = { { resource = ROUTES, map = parents } },
}

local function condition(ctype, ok, reason, message, gen, now, old)
  local status = ok and "True" or "False"
  for _, c in ipairs(old or {}) do
    if c.type == ctype and c.status == status and c.reason == reason then
      return { type = ctype, status = status, reason = reason, message = message,
        observedGeneration = gen, lastTransitionTime = c.lastTransitionTime }
    end
  end
  return { type = ctype, status = status, reason = reason, message = message,
    observedGeneration = gen, lastTransitionTime = now }
end

local function same(a, b)
  return canon.encode(a) == canon.encode(b)
end

local function gateway_status(gw, now)
  local gen = gw.metadata.generation
  local old = (gw.status or {}).conditions
  local st = {
    addresses = v.array({ { type = "Hostname",
      value = gw.metadata.name .. "." .. gw.metadata.namespace .. ".svc.cluster.local" } }),
    conditions = v.array({
      condition("Accepted", true, "Accepted", "Accepted by volray", gen, now, old),
      condition("Programmed", true, "Programmed", "Programmed by volray (no data plane)", gen, now, old),
    }),
    listeners = v.array(),
  }
  for _, l in ipairs(gw.spec.listeners or {}) do
    st.listeners[#st.listeners + 1] = {
      name = l.name, attachedRoutes = 0,
      supportedKinds = v.array({ { group = "gateway.networking.k8s.io", kind = "HTTPRoute" } }),
      conditions = v.array({
        condition("Accepted", true, "Accepted", "", gen, now, nil),
        condition("Programmed", true, "Programmed", "", gen, now, nil),
      }),
    }
  end
  return st
end

-- The route's status for gw; whether every backend resolved.
local function route_status(route, gw, now)
  local ns = route.metadata.namespace
  local gen = route.metadata.generation
  local missing
  for _, rule in ipairs(route.spec.rules or {}) do
    for _, b in ipairs(rule.backendRefs or {}) do
      if (b.kind == nil or b.kind == "Service") and v.get("v1/services", b.namespace or ns, b.name) == nil then
        missing = b.name
      end
    end
  end
  local old
  for _, p in ipairs(((route.status or {}).parents) or {}) do
    if p.parentRef and p.parentRef.name == gw.metadata.name then old = p.conditions end
  end
  return {
    parentRef = { group = "gateway.networking.k8s.io", kind = "Gateway",
      namespace = gw.metadata.namespace, name = gw.metadata.name },
    controllerName = CONTROLLER_NAME,
    conditions = v.array({
      condition("Accepted", true, "Accepted", "Accepted by volray", gen, now, old),
      missing and condition("ResolvedRefs", false, "BackendNotFound",
        "Service " .. missing .. " not found", gen, now, old)
        or condition("ResolvedRefs", true, "ResolvedRefs", "All references resolved", gen, now, old),
    }),
  }, missing == nil
end

-- The Gateway's Service: the address its routes are reached at.
local function ensure_service(gw)
  local ns, name = gw.metadata.namespace, gw.metadata.name
  local cur = v.get("v1/services", ns, name)
  if cur ~= nil then return end
  local ports = v.array()
  for _, l in ipairs(gw.spec.listeners or {}) do
    ports[#ports + 1] = { name = l.name, port = l.port, targetPort = l.port, protocol = "TCP" }
  end
  local out, err, code = v.create({
    apiVersion = "v1", kind = "Service",
    metadata = { name = name, namespace = ns, annotations = { ["volray.io/gateway"] = name },
      ownerReferences = v.array({ v.owner_ref(gw) }) },
    spec = { type = "ClusterIP", ports = ports },
  })
  if out == nil and code ~= 409 then error("creating the Gateway's Service: " .. tostring(err), 0) end
end

function controller.reconcile(req)
  local gw = v.get(GATEWAYS, req.namespace, req.name)
  if gw == nil or gw.metadata.deletionTimestamp ~= nil then return nil end
  ensure_service(gw)
  local now = v.now()
  local st = gateway_status(gw, now)
  if not same(st, gw.status or {}) then
    gw.status = st
    local out, err, code = v.update_status(gw)
    if out == nil then
      if code == 409 then return { requeue = true } end
      if code ~= 404 then error("updating Gateway status: " .. tostring(err), 0) end
    end
  end
  local again = false
  for _, route in ipairs(v.list(ROUTES, req.namespace)) do
    local mine = false
    for _, p in ipairs(parents(route)) do
      if p.namespace == gw.metadata.namespace and p.name == gw.metadata.name then mine = true end
    end
    if mine then
      local entry, resolved = route_status(route, gw, now)
      if not resolved then again = true end
      local list, found = v.array(), false
      for _, p in ipairs(((route.status or {}).parents) or {}) do
        if p.parentRef and p.parentRef.name == gw.metadata.name then
          found = true
          list[#list + 1] = entry
        else
          list[#list + 1] = p
        end
      end
      if not found then list[#list + 1] = entry end
      if not same(list, (route.status or {}).parents or v.array()) then
        route.status = { parents = list }
        local out, err, code = v.update_status(route)
        if out == nil and code ~= 409 and code ~= 404 then
          error("updating HTTPRoute status: " .. tostring(err), 0)
        end
        if out == nil then again = true end
      end
    end
  end
  if again then return { requeue_after = RETRY } end
  return nil
end

return controller
