-- Keep spec.replicas pods from the template running: the logic Kubernetes
-- shares between the ReplicaSet and the ReplicationController controllers
-- (lua/controllers/replicaset.lua and replicationcontroller.lua make one
-- each with M.controller). Pods are owned by the object (controller
-- reference), so its selector, a LabelSelector or an equality map, is
-- not needed to find them; surplus pods are deleted least useful first
-- (unscheduled, pending, not ready, then newest). status reports
-- replicas, ready, available and fully labelled counts.
local v = volray
local pods = require("podutil")

local MAX_BURST = 500  -- creations or deletions per reconcile, like upstream

local M = {}

local function owned_pods(rs)
  local out = {}
  for _, p in ipairs(v.list("v1/pods", rs.metadata.namespace,
      { owner = rs.metadata.uid })) do
    if v.is_controlled_by(p, rs) then out[#out + 1] = p end
  end
  return out
end

local function scale(rs, active)
  local want = rs.spec.replicas or 1
  local diff = want - #active
  if diff > 0 then
    for _ = 1, math.min(diff, MAX_BURST) do
      local pod = pods.from_template(rs, rs.spec.template, rs.metadata.name .. "-")
      local created, err = v.create(pod)
      if not created then
        v.event(rs, "Warning", "FailedCreate", "Error creating: " .. err)
        error("creating pod: " .. err)
      end
      v.event(rs, "Normal", "SuccessfulCreate",
        "Created pod: " .. created.metadata.name)
    end
  elseif diff < 0 then
    pods.sort_for_deletion(active)
    for i = 1, math.min(-diff, MAX_BURST) do
      local name = active[i].metadata.name
      local ok, err, code = v.delete("v1/pods", rs.metadata.namespace, name)
      if not ok and code ~= 404 then error("deleting pod " .. name .. ": " .. err) end
      v.event(rs, "Normal", "SuccessfulDelete", "Deleted pod: " .. name)
    end
  end
end

local function reconcile(resource, req)
  local rs = v.get(resource, req.namespace, req.name)
  if rs == nil or rs.metadata.deletionTimestamp ~= nil then return nil end

  local active = {}
  for _, p in ipairs(owned_pods(rs)) do
    if pods.is_active(p) then active[#active + 1] = p end
  end
  scale(rs, active)

  -- Status from what exists after scaling.
  local now = v.time()
  local tmpl = rs.spec.template or {}
  local labels = tmpl.metadata and tmpl.metadata.labels or {}
  local n, ready, available, labelled = 0, 0, 0, 0
  for _, p in ipairs(owned_pods(rs)) do
    if pods.is_active(p) then
      n = n + 1
      if pods.is_ready(p) then ready = ready + 1 end
      if pods.is_available(p, rs.spec.minReadySeconds, now) then
        available = available + 1
      end
      if v.match_labels({ matchLabels = labels }, p.metadata.labels) then
        labelled = labelled + 1
      end
    end
  end
  rs.status = rs.status or {}
  rs.status.replicas = n
  rs.status.fullyLabeledReplicas = labelled
  rs.status.readyReplicas = ready
  rs.status.availableReplicas = available
  rs.status.observedGeneration = rs.metadata.generation
  local _, err, code = v.update_status(rs)
  if err ~= nil and code ~= 409 and code ~= 404 then error("status: " .. err) end
  if code == 409 then return { requeue = true } end
  -- Pods that are ready but not yet available need another look.
  if ready > available and (rs.spec.minReadySeconds or 0) > 0 then
    return { requeue_after = rs.spec.minReadySeconds }
  end
  return nil
end

-- A controller table for resource ("apps/v1/replicasets", ...).
function M.controller(resource)
  return {
    primary = resource,
    owns = { "v1/pods" },
    reconcile = function(req) return reconcile(resource, req) end,
  }
end

return M
