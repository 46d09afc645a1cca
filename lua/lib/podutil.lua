-- Pod helpers shared by the workload controllers: which pods count as
-- active, ready or available, how to build a pod from a template, and the
-- order in which surplus pods are deleted (the least useful first).
local v = volray
local M = {}

function M.is_terminating(pod)
  return pod.metadata.deletionTimestamp ~= nil
end

function M.phase(pod)
  return pod.status and pod.status.phase or "Pending"
end

-- Active: not finished and not being deleted.
function M.is_active(pod)
  local phase = M.phase(pod)
  return not M.is_terminating(pod) and phase ~= "Succeeded" and phase ~= "Failed"
end

function M.is_ready(pod)
  return M.is_active(pod) and v.is_true(pod, "Ready")
end

-- Available: ready for at least minReadySeconds.
function M.is_available(pod, min_ready_seconds, now)
  if not M.is_ready(pod) then return false end
  min_ready_seconds = min_ready_seconds or 0
  if min_ready_seconds == 0 then return true end
  local c = v.get_condition(pod, "Ready")
  local since = c and c.lastTransitionTime and v.time(c.lastTransitionTime)
  return since ~= nil and (now or v.time()) - since >= min_ready_seconds
end

-- A new pod object from a pod template, owned by owner.
function M.from_template(owner, template, name_prefix, extra_labels)
  local md = template.metadata or {}
  local labels = v.deepcopy(md.labels or {})
  for k, x in pairs(extra_labels or {}) do labels[k] = x end
  return {
    apiVersion = "v1",
    kind = "Pod",
    metadata = {
      generateName = name_prefix,
      namespace = owner.metadata.namespace,
      labels = labels,
      annotations = v.deepcopy(md.annotations or {}),
      finalizers = md.finalizers and v.deepcopy(md.finalizers) or nil,
      ownerReferences = v.array({ v.owner_ref(owner) }),
    },
    spec = v.deepcopy(template.spec or {}),
  }
end

-- Rank for deletion: unscheduled < pending < not ready < ready; among
-- equals the newest goes first (as the ReplicaSet controller does).
local function rank(pod)
  local node = (pod.spec or {}).nodeName
  if node == nil or node == "" then return 0 end
  local phase = M.phase(pod)
  if phase == "Pending" then return 1 end
  if phase ~= "Running" then return 2 end
  if not v.is_true(pod, "Ready") then return 3 end
  return 4
end

function M.sort_for_deletion(pods)
  table.sort(pods, function(a, b)
    local ra, rb = rank(a), rank(b)
    if ra ~= rb then return ra < rb end
    return (a.metadata.creationTimestamp or "") > (b.metadata.creationTimestamp or "")
  end)
  return pods
end

return M
