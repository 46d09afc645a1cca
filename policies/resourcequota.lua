-- resourcequota: a job is not admitted while its minimum would take its
-- namespace past a ResourceQuota (Volcano's resourcequota plugin).
--
-- At enqueue, for each ResourceQuota of the job's namespace: the job's
-- minResources on the resources the quota's spec.hard names, added to
-- the quota's status.used and to what this session already admitted in
-- the namespace, must stay within hard. A name in hard matches the
-- resource of the same name in minResources, and `requests.X` matches X
-- (Volcano matches the exact name only, so its quotas written as
-- requests.cpu never hold a job); limits.* and object counts are not
-- compared. A job that would pass a quota stays Pending with the quota
-- named: "resource quota insufficient (ResourceQuota team-a): requested
-- cpu=4, used cpu=8, hard cpu=10". Jobs without minResources and
-- namespaces without quotas are not judged. The plugin only ever votes
-- against (Volcano's votes for a job within its quotas, which in its
-- tier would skip the queue plugins' checks of later tiers).
--
-- Arguments: none.
local R = {}

local pending	-- namespace -> resources admitted this session

function R.open(ssn)
  pending = {}
end

-- The job's request for a hard name, or nil.
local function requested(min, name)
  if min[name] ~= nil then return min[name] end
  local base = name:match("^requests%.(.+)$")
  if base ~= nil then return min[base] end
  return nil
end

local function show(name, v)
  if name:match("cpu$") then
    if v % 1000 == 0 then return string.format("%s=%d", name, v // 1000) end
    return string.format("%s=%dm", name, v)
  end
  if name:match("memory$") or name:match("storage$") then
    if v % (1 << 30) == 0 then return string.format("%s=%dGi", name, v // (1 << 30)) end
    if v % (1 << 20) == 0 then return string.format("%s=%dMi", name, v // (1 << 20)) end
  end
  return string.format("%s=%s", name, tostring(math.tointeger(v) or v))
end

function R.job_enqueueable(ssn, job)
  local min = job.min_resources
  if min == nil then return 1 end
  local ns = job.namespace
  local mine = pending[ns] or {}
  for _, q in ipairs(ssn:quotas(ns)) do
    local names = {}
    for name in pairs(q.hard) do names[#names + 1] = name end
    table.sort(names)
    local req, used, hard = {}, {}, {}
    for _, name in ipairs(names) do
      local r = requested(min, name)
      if r ~= nil and r > 0 then
        local u = (q.used[name] or 0) + (mine[name] or 0)
        if u + r > q.hard[name] then
          req[#req + 1] = show(name, r)
          used[#used + 1] = show(name, u)
          hard[#hard + 1] = show(name, q.hard[name])
        end
      end
    end
    if #req > 0 then
      return -1, string.format("resource quota insufficient (ResourceQuota %s): requested %s, used %s, hard %s",
        q.name, table.concat(req, ","), table.concat(used, ","), table.concat(hard, ","))
    end
  end
  -- Within every quota: counted as admitted (even if a later vote
  -- refuses it, as Volcano counts it), and no opinion otherwise: passing
  -- a quota is no reason to skip the queue's own checks, so the plugin
  -- abstains where Volcano's permits.
  local seen = {}
  for _, q in ipairs(ssn:quotas(ns)) do
    for name in pairs(q.hard) do
      local r = requested(min, name)
      if r ~= nil and not seen[name] then
        seen[name] = true
        mine[name] = (mine[name] or 0) + r
      end
    end
  end
  pending[ns] = mine
  return 0
end

return R
