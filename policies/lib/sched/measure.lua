-- A node's measured load: its annotation volray.io/usage, which the node
-- runtime of a measured node (the local node, an agent's) writes: the
-- CPU and memory its containers used over the last 10 minutes, in
-- percent of the node's allocatable, and when
-- ("cpu=42.5,memory=31.0,time=2026-12-04T15:00:00Z"). A simulated node
-- has none; an annotation a person puts on one (time left out: current)
-- stands for it. Used by the usage and rescheduling plugins.
local M = {}

M.ANNOTATION = "volray.io/usage"
M.ACTIVE = 300	-- seconds a measure stays current (Volcano's MetricsActiveTime)

-- An RFC 3339 UTC time ("2026-12-04T15:00:00Z") in seconds since the
-- epoch, or nil (days from the civil date, as in Howard Hinnant's
-- algorithm: no os library in a policy; by position, since the
-- sandbox's pattern budget refuses a 6-capture pattern).
function M.epoch(text)
  if #text < 19 or text:sub(11, 11) ~= "T" then return nil end
  local y, mo, d = tonumber(text:sub(1, 4)), tonumber(text:sub(6, 7)), tonumber(text:sub(9, 10))
  local h, mi, sec = tonumber(text:sub(12, 13)), tonumber(text:sub(15, 16)), tonumber(text:sub(18, 19))
  if not (y and mo and d and h and mi and sec) then return nil end
  if mo <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local doy = (153 * (mo + (mo > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + h * 3600 + mi * 60 + sec
end

local cache, cache_now = {}, nil	-- annotation text -> parsed

-- {cpu, memory} in percent, or nil when the node has no measure current
-- at now (seconds since the epoch; nil: any age).
function M.load(node, now)
  local text = (node.annotations or {})[M.ANNOTATION]
  if text == nil then return nil end
  if cache_now ~= now then cache, cache_now = {}, now end
  local m = cache[text]
  if m == nil then
    m = {}
    for k, val in text:gmatch("([%a]+)=([^,]+)") do m[k] = val end
    m.cpu, m.memory = tonumber(m.cpu), tonumber(m.memory)
    m.at = m.time and M.epoch(m.time) or nil
    cache[text] = m
  end
  if m.cpu == nil or m.memory == nil then return nil end
  if m.at ~= nil and now ~= nil and now - m.at > M.ACTIVE then return nil end
  return m
end

return M
