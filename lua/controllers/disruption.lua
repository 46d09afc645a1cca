-- PodDisruptionBudget: how many of the pods a budget selects may be
-- disrupted now, as kube-controller-manager's disruption controller says
-- it in the budget's status, for pods/eviction (kubectl drain) to obey.
-- currentHealthy counts the selected pods that are Ready, not being
-- deleted and not just evicted (status.disruptedPods, kept two minutes or
-- until the pod is gone). minAvailable as a number wants that many
-- healthy pods of those selected; maxUnavailable, or minAvailable as a
-- percentage, is taken of expectedPods, the replicas the pods'
-- controllers want (a ReplicaSet's, or its Deployment's,
-- a StatefulSet's, a ReplicationController's), percentages rounded up.
-- disruptionsAllowed is currentHealthy - desiredHealthy, never below 0,
-- and 0 while no pod is expected. Pods of another controller, or of none
-- when a percentage or maxUnavailable needs one, leave the budget at 0
-- with a SyncFailed condition.
local v = volray
local podutil = require("podutil")
local du = require("deployutil")

local PDBS = "policy/v1/poddisruptionbudgets"
local PODS = "v1/pods"
local DELETION_TIMEOUT = 120

local SCALES = {
  ReplicaSet = "apps/v1/replicasets",
  Deployment = "apps/v1/deployments",
  StatefulSet = "apps/v1/statefulsets",
  ReplicationController = "v1/replicationcontrollers",
}

-- Every budget of an object's namespace (a scale changed somewhere).
local function budgets_in_ns(obj)
  local keys = {}
  for _, p in ipairs(v.list(PDBS, obj.metadata.namespace,
      { paths = { "metadata.name" } })) do
    keys[#keys + 1] = obj.metadata.namespace .. "/" .. p.metadata.name
  end
  return keys
end

-- The budgets whose selector picks the pod.
local function budgets_of(pod)
  local keys = {}
  for _, p in ipairs(v.list(PDBS, pod.metadata.namespace,
      { paths = { "metadata.name", "spec.selector" } })) do
    local sel = p.spec and p.spec.selector
    if sel ~= nil and v.match_labels(sel, pod.metadata.labels or {}) then
      keys[#keys + 1] = pod.metadata.namespace .. "/" .. p.metadata.name
    end
  end
  return keys
end

local controller = {
  primary = PDBS,
  -- kube-controller-manager's disruption controller records as this.
  event_source = "controllermanager",
  watches = {
    { resource = PODS, previous = true,
      paths = { "metadata.namespace", "metadata.labels" }, map = budgets_of },
    { resource = SCALES.ReplicaSet, paths = { "metadata.namespace" }, map = budgets_in_ns },
    { resource = SCALES.Deployment, paths = { "metadata.namespace" }, map = budgets_in_ns },
    { resource = SCALES.StatefulSet, paths = { "metadata.namespace" }, map = budgets_in_ns },
    { resource = SCALES.ReplicationController, paths = { "metadata.namespace" },
      map = budgets_in_ns },
  },
}

local function present(x) return x ~= nil and x ~= v.null end

-- The replicas the pods' controllers want, counted once per controller
-- (getExpectedScale); nil and a message when a pod has none we know.
local function expected_scale(ns, pods)
  local seen, total = {}, 0
  for _, pod in ipairs(pods) do
    local ref = v.controller_of(pod)
    if ref == nil then
      return nil, "found no controller ref for pod \"" .. pod.metadata.name .. "\""
    end
    local res = SCALES[ref.kind]
    if res == nil then
      return nil, "found no controllers for pod \"" .. pod.metadata.name .. "\""
    end
    local owner = v.get(res, ns, ref.name)
    if owner == nil or owner.metadata.uid ~= ref.uid then
      return nil, "found no controllers for pod \"" .. pod.metadata.name .. "\""
    end
    -- A Deployment's ReplicaSet counts as the Deployment.
    if ref.kind == "ReplicaSet" then
      local dref = v.controller_of(owner)
      if dref ~= nil and dref.kind == "Deployment" then
        local d = v.get(SCALES.Deployment, ns, dref.name)
        if d ~= nil and d.metadata.uid == dref.uid then owner = d end
      end
    end
    if not seen[owner.metadata.uid] then
      seen[owner.metadata.uid] = true
      total = total + du.replicas(owner)
    end
  end
  return total
end

local function set_condition(st, status, reason, message, now)
  local old = nil
  for _, c in ipairs(st.conditions or {}) do
    if c.type == "DisruptionAllowed" then old = c end
  end
  local since = now
  if old ~= nil and old.status == status then since = old.lastTransitionTime end
  st.conditions = v.array({ { type = "DisruptionAllowed", status = status,
    reason = reason, message = message, lastTransitionTime = since,
    observedGeneration = st.observedGeneration } })
end

function controller.reconcile(req)
  local pdb = v.get(PDBS, req.namespace, req.name)
  if pdb == nil or pdb.metadata.deletionTimestamp ~= nil then return nil end
  local now_s, now = v.time(), v.now()
  local sel = pdb.spec.selector
  local pods = {}
  if sel ~= nil then pods = v.list(PODS, req.namespace, { labels = sel }) end
  local old = pdb.status or {}

  -- Evicted pods stay uncounted until they are gone, at most two minutes.
  local by_name = {}
  for _, p in ipairs(pods) do by_name[p.metadata.name] = p end
  local disrupted, recheck = {}, nil
  for name, at in pairs(old.disruptedPods or {}) do
    local p = by_name[name]
    local t = v.time(at)
    if p ~= nil and not podutil.is_terminating(p) and t ~= nil and
        t + DELETION_TIMEOUT > now_s then
      disrupted[name] = at
      local left = t + DELETION_TIMEOUT - now_s
      if recheck == nil or left < recheck then recheck = left end
    end
  end

  local healthy = 0
  for _, p in ipairs(pods) do
    if not podutil.is_terminating(p) and disrupted[p.metadata.name] == nil and
        v.is_true(p, "Ready") then
      healthy = healthy + 1
    end
  end

  local expected, desired, err
  local maxu, mina = pdb.spec.maxUnavailable, pdb.spec.minAvailable
  if present(maxu) then
    expected, err = expected_scale(req.namespace, pods)
    if expected ~= nil then
      desired = math.max(0, expected - du.int_or_percent(maxu, expected, true))
    end
  elseif present(mina) and type(mina) == "number" then
    desired, expected = math.floor(mina), #pods
  elseif present(mina) then
    expected, err = expected_scale(req.namespace, pods)
    if expected ~= nil then desired = du.int_or_percent(mina, expected, true) end
  else
    desired, expected = 0, #pods
  end

  local st = { conditions = old.conditions, observedGeneration = pdb.metadata.generation }
  if next(disrupted) ~= nil then st.disruptedPods = disrupted end
  if expected == nil then
    -- failSafe: no disruption until the budget can be computed.
    st.currentHealthy, st.desiredHealthy, st.expectedPods = healthy, old.desiredHealthy or 0,
      old.expectedPods or 0
    st.disruptionsAllowed = 0
    set_condition(st, "False", "SyncFailed", err, now)
    v.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
      "Failed to calculate the number of expected pods: " .. err)
  else
    local allowed = healthy - desired
    if expected <= 0 or allowed <= 0 then allowed = 0 end
    st.currentHealthy, st.desiredHealthy, st.expectedPods = healthy, desired, expected
    st.disruptionsAllowed = allowed
    if allowed > 0 then
      set_condition(st, "True", "SufficientPods", "", now)
    else
      set_condition(st, "False", "InsufficientPods", "", now)
    end
  end
  pdb.status = st
  local out, uerr, code = v.update_status(pdb)
  if out == nil then
    if code == 409 then return { requeue = true } end
    if code == 404 then return nil end
    error("updating status: " .. tostring(uerr), 0)
  end
  if recheck ~= nil then return { requeue_after = recheck } end
  return nil
end

return controller
