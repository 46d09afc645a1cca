-- Job arithmetic on plain tables: completion indexes and their compact
-- "0,2-4" spelling, when a pod finished, the back-off before failed pods
-- are replaced (10 s doubling per failure since the last success, capped
-- at 6 min, counted from the last failure) and Job conditions, which
-- carry lastProbeTime and lastTransitionTime.
local v = volray
local M = {}

M.INDEX_KEY = "batch.kubernetes.io/job-completion-index"
M.BACKOFF_BASE = 10
M.BACKOFF_MAX = 360

-- A pod's completion index, or nil if it has none or a bad one.
function M.pod_index(pod)
  local a = pod.metadata.annotations
  local s = a and a[M.INDEX_KEY]
  if s == nil then
    local l = pod.metadata.labels
    s = l and l[M.INDEX_KEY]
  end
  if type(s) ~= "string" or not s:match("^%d+$") then return nil end
  return math.tointeger(tonumber(s))
end

-- Parse "1,3-5" into a set {[1]=true, [3]=true, ...}; junk is skipped.
function M.parse_indexes(s, limit)
  local set = {}
  if type(s) ~= "string" then return set end
  for part in s:gmatch("[^,]+") do
    local a, b = part:match("^%s*(%d+)%s*%-%s*(%d+)%s*$")
    if a == nil then
      a = part:match("^%s*(%d+)%s*$")
      b = a
    end
    if a ~= nil then
      local lo, hi = math.tointeger(tonumber(a)), math.tointeger(tonumber(b))
      if limit ~= nil and hi >= limit then hi = limit - 1 end
      for i = lo, hi do set[i] = true end
    end
  end
  return set
end

-- The sorted members of an index set.
function M.sorted_indexes(set)
  local out = {}
  for i in pairs(set) do out[#out + 1] = i end
  table.sort(out)
  return out
end

-- Spell an index set as ascending ranges: "0,2-4".
function M.format_indexes(set)
  local list = M.sorted_indexes(set)
  local parts, i = {}, 1
  while i <= #list do
    local j = i
    while j < #list and list[j + 1] == list[j] + 1 do j = j + 1 end
    if j == i then
      parts[#parts + 1] = tostring(list[i])
    else
      parts[#parts + 1] = list[i] .. "-" .. list[j]
    end
    i = j + 1
  end
  return table.concat(parts, ",")
end

local function latest(a, b)
  if a == nil then return b end
  if b == nil or a >= b then return a end
  return b
end

-- When a pod finished: its last container exit, else its Ready=False
-- transition, else its deletion, else its creation (as Kubernetes does).
function M.finish_time(pod)
  local t
  local st = pod.status or {}
  for _, list in ipairs({ st.containerStatuses or {}, st.initContainerStatuses or {} }) do
    for _, cs in ipairs(list) do
      local term = cs.state and cs.state.terminated
      local at = term and term.finishedAt and v.time(term.finishedAt)
      t = latest(t, at)
    end
  end
  if t ~= nil then return t end
  for _, c in ipairs(st.conditions or {}) do
    if c.type == "Ready" and c.status == "False" and c.lastTransitionTime then
      t = v.time(c.lastTransitionTime)
      if t ~= nil then return t end
    end
  end
  local md = pod.metadata
  if md.deletionTimestamp then
    t = v.time(md.deletionTimestamp)
    if t ~= nil then return t end
  end
  return md.creationTimestamp and v.time(md.creationTimestamp) or 0
end

-- Seconds to wait before replacing failed pods: failures after the
-- latest success set the delay, measured from the latest failure.
function M.backoff_remaining(succeeded, failed, now)
  local last_success
  for _, p in ipairs(succeeded) do last_success = latest(last_success, M.finish_time(p)) end
  local failures, last_failure = 0, nil
  for _, p in ipairs(failed) do
    local t = M.finish_time(p)
    if last_success == nil or t > last_success then
      failures = failures + 1
      last_failure = latest(last_failure, t)
    end
  end
  if failures == 0 then return 0 end
  local delay = M.BACKOFF_BASE
  for _ = 2, failures do
    delay = delay * 2
    if delay >= M.BACKOFF_MAX then
      delay = M.BACKOFF_MAX
      break
    end
  end
  local left = delay - (now - last_failure)
  if left < 0 then return 0 end
  return left
end

-- Container restarts of active pods (restartPolicy OnFailure failures).
function M.restarts(pods)
  local n = 0
  for _, p in ipairs(pods) do
    local st = p.status or {}
    for _, list in ipairs({ st.containerStatuses or {}, st.initContainerStatuses or {} }) do
      for _, cs in ipairs(list) do n = n + (tonumber(cs.restartCount) or 0) end
    end
  end
  return n
end

-- A condition of a status table (volray.get_condition takes the object).
function M.get_condition(st, ctype)
  return v.get_condition({ status = st }, ctype)
end

function M.is_true(st, ctype)
  local c = M.get_condition(st, ctype)
  return c ~= nil and c.status == "True"
end

-- Set a Job condition; returns true if anything changed.
function M.set_condition(st, ctype, status, reason, message, now)
  st.conditions = st.conditions or v.array()
  local c = M.get_condition(st, ctype)
  if c == nil then
    st.conditions[#st.conditions + 1] = { type = ctype, status = status, reason = reason,
      message = message, lastProbeTime = now, lastTransitionTime = now }
    return true
  end
  if c.status == status and c.reason == reason and c.message == message then return false end
  if c.status ~= status then c.lastTransitionTime = now end
  c.status, c.reason, c.message, c.lastProbeTime = status, reason, message, now
  return true
end

-- Add JOB_COMPLETION_INDEX to every container of a pod spec.
function M.add_index_env(spec)
  local env = { name = "JOB_COMPLETION_INDEX", valueFrom = { fieldRef = {
    fieldPath = "metadata.annotations['" .. M.INDEX_KEY .. "']" } } }
  for _, key in ipairs({ "initContainers", "containers" }) do
    for _, c in ipairs(spec[key] or {}) do
      local list = v.array()
      local seen = false
      for _, e in ipairs(c.env or {}) do
        if e.name == "JOB_COMPLETION_INDEX" then seen = true end
        list[#list + 1] = e
      end
      if not seen then list[#list + 1] = v.deepcopy(env) end
      c.env = list
    end
  end
end

return M
