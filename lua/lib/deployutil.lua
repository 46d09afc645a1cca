-- Arithmetic of Deployment rollouts, kept free of API calls so it can be
-- read (and tested) on plain tables: how many pods a rolling update may
-- add or take away (maxSurge rounds up, maxUnavailable rounds down, and
-- both zero means one may be unavailable), how big the new ReplicaSet may
-- grow, how a scaled Deployment shares its new size among ReplicaSets in
-- proportion, revisions, and the status a set of ReplicaSets adds up to.
local v = volray
local M = {}

M.REVISION = "deployment.kubernetes.io/revision"
M.REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
M.DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
M.MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
M.HASH_LABEL = "pod-template-hash"
M.MAX_PROGRESS_DEADLINE = 2147483647

-- Annotations a ReplicaSet does not inherit from its Deployment.
M.SKIP_ANNOTATIONS = {
  ["kubectl.kubernetes.io/last-applied-configuration"] = true,
  [M.REVISION] = true,
  [M.REVISION_HISTORY] = true,
  [M.DESIRED_REPLICAS] = true,
  [M.MAX_REPLICAS] = true,
  ["deprecated.deployment.rollback.to"] = true,
}

local function present(x)
  return x ~= nil and x ~= v.null
end

-- An int-or-percent against total: "25%" of 10 is 3 rounded up, 2 down.
function M.int_or_percent(x, total, round_up)
  if not present(x) then return 0 end
  if type(x) == "number" then return math.floor(x) end
  local pct = tostring(x):match("^%s*(%d+)%%%s*$")
  if pct == nil then
    local n = tonumber(x)
    if n == nil then error("invalid int-or-percent value '" .. tostring(x) .. "'") end
    return math.floor(n)
  end
  local p = math.tointeger(tonumber(pct)) * total
  if round_up then return (p + 99) // 100 end
  return p // 100
end

function M.replicas(obj)
  local r = obj and obj.spec and obj.spec.replicas
  if not present(r) then return 1 end
  return r
end

function M.is_rolling(d)
  local s = d.spec.strategy
  return s == nil or s.type == nil or s.type == "RollingUpdate"
end

-- maxSurge and maxUnavailable as numbers of pods for `desired`.
function M.fenceposts(d, desired)
  local ru = d.spec.strategy and d.spec.strategy.rollingUpdate or {}
  local surge_v, unav_v = ru.maxSurge, ru.maxUnavailable
  if not present(surge_v) then surge_v = "25%" end
  if not present(unav_v) then unav_v = "25%" end
  local surge = M.int_or_percent(surge_v, desired, true)
  local unavailable = M.int_or_percent(unav_v, desired, false)
  if surge == 0 and unavailable == 0 then unavailable = 1 end
  return surge, unavailable
end

function M.max_surge(d)
  if not M.is_rolling(d) then return 0 end
  local surge = M.fenceposts(d, M.replicas(d))
  return surge
end

function M.max_unavailable(d)
  local want = M.replicas(d)
  if not M.is_rolling(d) or want == 0 then return 0 end
  local _, unavailable = M.fenceposts(d, want)
  if unavailable > want then return want end
  return unavailable
end

local function status_of(rs, field)
  local x = rs and rs.status and rs.status[field]
  if not present(x) then return 0 end
  return x
end
M.status_of = status_of

-- Sums over ReplicaSets: spec replicas, and status fields.
function M.sum_spec(rss)
  local n = 0
  for _, rs in ipairs(rss) do n = n + M.replicas(rs) end
  return n
end

function M.sum_status(rss, field)
  local n = 0
  for _, rs in ipairs(rss) do n = n + status_of(rs, field) end
  return n
end

function M.revision(rs)
  local a = rs.metadata.annotations
  local r = a and tonumber(a[M.REVISION])
  return r and math.floor(r) or 0
end

function M.max_revision(rss)
  local m = 0
  for _, rs in ipairs(rss) do
    local r = M.revision(rs)
    if r > m then m = r end
  end
  return m
end

local function ann_int(rs, key)
  local a = rs.metadata.annotations
  local x = a and a[key]
  if x == nil then return nil end
  return math.tointeger(tonumber(x))
end

function M.desired_annotation(rs) return ann_int(rs, M.DESIRED_REPLICAS) end
function M.max_annotation(rs) return ann_int(rs, M.MAX_REPLICAS) end

-- Record on rs the Deployment size it was scaled for; true if changed.
function M.set_replicas_annotations(rs, desired, max)
  rs.metadata.annotations = rs.metadata.annotations or {}
  local a = rs.metadata.annotations
  local d, m = tostring(desired), tostring(max)
  if a[M.DESIRED_REPLICAS] == d and a[M.MAX_REPLICAS] == m then return false end
  a[M.DESIRED_REPLICAS], a[M.MAX_REPLICAS] = d, m
  return true
end

function M.replicas_annotations_need_update(rs, desired, max)
  local a = rs.metadata.annotations or {}
  return a[M.DESIRED_REPLICAS] ~= tostring(desired) or a[M.MAX_REPLICAS] ~= tostring(max)
end

-- Copy the Deployment's annotations to its new ReplicaSet and raise the
-- ReplicaSet's revision to new_revision (a reused ReplicaSet keeps its
-- old numbers in revision-history). Returns true if rs changed.
function M.set_new_rs_annotations(d, rs, new_revision, exists)
  rs.metadata.annotations = rs.metadata.annotations or {}
  local a = rs.metadata.annotations
  local changed = false
  for k, x in pairs(d.metadata.annotations or {}) do
    if not M.SKIP_ANNOTATIONS[k] and a[k] ~= x then
      a[k] = x
      changed = true
    end
  end
  local old = a[M.REVISION]
  local oldn = tonumber(old) or 0
  local newn = tonumber(new_revision)
  if oldn < newn then
    a[M.REVISION] = tostring(new_revision)
    changed = true
    if old ~= nil and old ~= "" then
      local hist = a[M.REVISION_HISTORY]
      if hist == nil or hist == "" then
        a[M.REVISION_HISTORY] = old
      else
        a[M.REVISION_HISTORY] = hist .. "," .. old
      end
    end
  end
  if not exists then
    local want = M.replicas(d)
    if M.set_replicas_annotations(rs, want, want + M.max_surge(d)) then changed = true end
  end
  return changed
end

-- The size the new ReplicaSet may have now (NewRSNewReplicas).
function M.new_rs_new_replicas(d, all, new_rs)
  local want = M.replicas(d)
  if not M.is_rolling(d) then return want end
  local surge = M.fenceposts(d, want)
  local current = M.sum_spec(all)
  local max_total = want + surge
  if current >= max_total then return M.replicas(new_rs) end
  local up = max_total - current
  local room = want - M.replicas(new_rs)
  if up > room then up = room end
  return M.replicas(new_rs) + up
end

-- Sort ReplicaSets oldest first (creation time, then name).
function M.by_creation(rss)
  table.sort(rss, function(a, b)
    local ta, tb = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
    if ta ~= tb then return ta < tb end
    return a.metadata.name < b.metadata.name
  end)
  return rss
end

function M.by_revision(rss)
  table.sort(rss, function(a, b)
    local ra, rb = M.revision(a), M.revision(b)
    if ra ~= rb then return ra < rb end
    local ta, tb = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
    if ta ~= tb then return ta < tb end
    return a.metadata.name < b.metadata.name
  end)
  return rss
end

-- Larger first; among equals newer first (newer = true) or older first.
function M.by_size(rss, newer)
  table.sort(rss, function(a, b)
    local sa, sb = M.replicas(a), M.replicas(b)
    if sa ~= sb then return sa > sb end
    local ta, tb = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
    if ta ~= tb then
      if newer then return ta > tb end
      return ta < tb
    end
    return a.metadata.name < b.metadata.name
  end)
  return rss
end

-- ReplicaSets with pods wanted (spec.replicas > 0).
function M.active(rss)
  local out = {}
  for _, rs in ipairs(rss) do
    if rs ~= nil and M.replicas(rs) > 0 then out[#out + 1] = rs end
  end
  return out
end

-- How many replicas rs should gain or lose when the Deployment grows to
-- to_add more (or fewer) pods than its ReplicaSets have, in proportion
-- to the size rs had when it was last scaled (getProportion).
function M.proportion(d, rs, to_add, added, status_replicas)
  if rs == nil or M.replicas(rs) == 0 or to_add == 0 or to_add == added then
    return 0
  end
  local want = M.replicas(d)
  local fraction
  if want == 0 then
    fraction = -M.replicas(rs)
  else
    local total = want + M.max_surge(d)
    local annotated = M.max_annotation(rs) or status_replicas
    if annotated == nil or annotated == 0 then
      fraction = 0
    else
      local size = M.replicas(rs) * total / annotated
      fraction = math.floor(size + 0.5) - M.replicas(rs)
    end
  end
  local allowed = to_add - added
  if to_add > 0 then return math.min(fraction, allowed) end
  return math.max(fraction, allowed)
end

-- Pods of rs that may be counted on as available: a ReplicaSet just
-- scaled down still reports its old count until its controller runs.
function M.available(rs)
  local a, r = status_of(rs, "availableReplicas"), M.replicas(rs)
  if a > r then return r end
  return a
end

-- Status of a Deployment from its ReplicaSets (calculateStatus), with
-- the Available condition.
function M.calculate_status(d, all, new_rs, now)
  local available = M.sum_status(all, "availableReplicas")
  local unavailable = M.sum_spec(all) - available
  if unavailable < 0 then unavailable = 0 end
  local function omit0(n) if n == 0 then return nil end return n end
  local st = {
    observedGeneration = d.metadata.generation,
    replicas = omit0(M.sum_status(all, "replicas")),
    updatedReplicas = omit0(new_rs and status_of(new_rs, "replicas") or 0),
    readyReplicas = omit0(M.sum_status(all, "readyReplicas")),
    availableReplicas = omit0(available),
    unavailableReplicas = omit0(unavailable),
    collisionCount = d.status and d.status.collisionCount or nil,
    conditions = v.array(),
  }
  for _, c in ipairs(d.status and d.status.conditions or {}) do
    st.conditions[#st.conditions + 1] = v.deepcopy(c)
  end
  if available >= M.replicas(d) - M.max_unavailable(d) then
    M.set_condition(st, "Available", "True", "MinimumReplicasAvailable",
      "Deployment has minimum availability.", now)
  else
    M.set_condition(st, "Available", "False", "MinimumReplicasUnavailable",
      "Deployment does not have minimum availability.", now)
  end
  return st
end

local function n(x) if not present(x) then return 0 end return x end

-- All pods are updated and available, and the spec was observed.
function M.is_complete(d, st)
  local want = M.replicas(d)
  return n(st.updatedReplicas) == want and n(st.replicas) == want and
    n(st.availableReplicas) == want and
    n(st.observedGeneration) >= n(d.metadata.generation)
end

-- Did the rollout move since the last status (DeploymentProgressing)?
function M.is_progressing(d, st)
  local old = d.status or {}
  local old_old = n(old.replicas) - n(old.updatedReplicas)
  local new_old = n(st.replicas) - n(st.updatedReplicas)
  return n(st.updatedReplicas) > n(old.updatedReplicas) or new_old < old_old or
    n(st.readyReplicas) > n(old.readyReplicas) or
    n(st.availableReplicas) > n(old.availableReplicas)
end

function M.has_progress_deadline(d)
  local p = d.spec.progressDeadlineSeconds
  return present(p) and p ~= M.MAX_PROGRESS_DEADLINE
end

-- A condition of a status table (volray.get_condition takes the object).
function M.get_condition(st, ctype)
  return v.get_condition({ status = st }, ctype)
end

-- Put a condition into a status table; the transition time moves only
-- when the status does, and a condition with the same status and reason
-- is left alone unless refresh asks for a new lastUpdateTime.
function M.set_condition(st, ctype, status, reason, message, now, refresh)
  st.conditions = st.conditions or v.array()
  for _, c in ipairs(st.conditions) do
    if c.type == ctype then
      if c.status == status and c.reason == reason and not refresh then
        return
      end
      if c.status ~= status then c.lastTransitionTime = now end
      c.status, c.reason, c.message, c.lastUpdateTime = status, reason, message, now
      return
    end
  end
  st.conditions[#st.conditions + 1] = { type = ctype, status = status, reason = reason,
    message = message, lastUpdateTime = now, lastTransitionTime = now }
end

function M.remove_condition(st, ctype)
  local out = v.array()
  for _, c in ipairs(st.conditions or {}) do
    if c.type ~= ctype then out[#out + 1] = c end
  end
  st.conditions = out
end

return M
