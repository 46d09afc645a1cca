-- Cron schedules as Kubernetes' CronJob reads them (robfig/cron's
-- standard parser): five fields, minute hour day-of-month month
-- day-of-week, each a list of *, ?, N, N-M, with an optional /step, months
-- and weekdays also by name (jan, mon); when neither day field is a star
-- a day matches either, else both. @yearly, @annually, @monthly, @weekly,
-- @daily, @midnight, @hourly and @every <duration> stand for the usual.
-- Times are Unix seconds; a schedule is read in a time zone's wall clock
-- (volray.tz_offset), so "0 9 * * *" in Europe/Berlin is 9:00 there.
local v = volray
local M = {}

local FIELDS = {
  { name = "minute", min = 0, max = 59 },
  { name = "hour", min = 0, max = 23 },
  { name = "day of month", min = 1, max = 31 },
  { name = "month", min = 1, max = 12, names = { jan = 1, feb = 2, mar = 3,
    apr = 4, may = 5, jun = 6, jul = 7, aug = 8, sep = 9, oct = 10, nov = 11, dec = 12 } },
  { name = "day of week", min = 0, max = 6, names = { sun = 0, mon = 1, tue = 2,
    wed = 3, thu = 4, fri = 5, sat = 6 } },
}

local DESCRIPTORS = {
  ["@yearly"] = "0 0 1 1 *", ["@annually"] = "0 0 1 1 *",
  ["@monthly"] = "0 0 1 * *", ["@weekly"] = "0 0 * * 0",
  ["@daily"] = "0 0 * * *", ["@midnight"] = "0 0 * * *",
  ["@hourly"] = "0 * * * *",
}

local function number(s, f)
  local n = math.tointeger(tonumber(s))
  if n == nil and f.names then n = f.names[s:lower()] end
  if n == nil then error("failed to parse int from " .. s, 0) end
  return n
end

-- One field: a set of allowed values and whether it was a star.
local function field(text, f)
  local set, star = {}, false
  for part in text:gmatch("[^,]+") do
    local range, step = part:match("^([^/]*)/(.*)$")
    range = range or part
    local lo, hi
    if range == "*" or range == "?" then
      lo, hi = f.min, f.max
      star = true
    else
      local a, b = range:match("^([^-]+)-(.+)$")
      if a then
        lo, hi = number(a, f), number(b, f)
      else
        lo = number(range, f)
        hi = step and f.max or lo
      end
    end
    local n = 1
    if step then
      n = math.tointeger(tonumber(step))
      if n == nil or n <= 0 then error("failed to parse int from " .. step, 0) end
      if n > 1 then star = false end
    end
    if lo < f.min then
      error(string.format("beginning of range (%d) below minimum (%d): %s", lo, f.min, part), 0)
    end
    if hi > f.max then
      error(string.format("end of range (%d) above maximum (%d): %s", hi, f.max, part), 0)
    end
    if lo > hi then
      error(string.format("beginning of range (%d) beyond end of range (%d): %s", lo, hi, part), 0)
    end
    for x = lo, hi, n do set[x] = true end
  end
  return set, star
end

-- A Go duration ("1h30m", "90s") in seconds, or nil.
local function duration(s)
  local total, rest = 0, s
  local units = { h = 3600, m = 60, s = 1 }
  if rest == "" then return nil end
  while rest ~= "" do
    local n, u, tail = rest:match("^(%d+%.?%d*)([hms])(.*)$")
    if n == nil then return nil end
    total = total + tonumber(n) * units[u]
    rest = tail
  end
  return total
end

-- Parse a schedule: a table for M.next, or nil and kube's message.
function M.parse(text)
  local ok, res = pcall(function()
    local s = text:match("^%s*(.-)%s*$")
    if s:find("TZ") then error("CRON_TZ or TZ used in schedule", 0) end
    local every = s:match("^@every%s+(.+)$")
    if every then
      local d = duration(every)
      if d == nil or d < 1 then error("failed to parse duration " .. s, 0) end
      return { every = math.floor(d) }
    end
    if s:sub(1, 1) == "@" then
      if DESCRIPTORS[s] == nil then error("unrecognized descriptor: " .. s, 0) end
      s = DESCRIPTORS[s]
    end
    local parts = {}
    for p in s:gmatch("%S+") do parts[#parts + 1] = p end
    if #parts ~= 5 then
      error(string.format("expected exactly 5 fields, found %d: %s", #parts, s), 0)
    end
    local out = {}
    out.minute = field(parts[1], FIELDS[1])
    out.hour = field(parts[2], FIELDS[2])
    out.dom, out.dom_star = field(parts[3], FIELDS[3])
    out.month = field(parts[4], FIELDS[4])
    out.dow, out.dow_star = field(parts[5], FIELDS[5])
    return out
  end)
  if not ok then return nil, res end
  return res
end

-- Days since 1970-01-01 of a civil date, and back (Howard Hinnant's).
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = (153 * mp + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

local function civil_from_days(z)
  z = z + 719468
  local era = z // 146097
  local doe = z - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end
M.days_from_civil, M.civil_from_days = days_from_civil, civil_from_days

local function offset(zone, t)
  if zone == nil or zone == "" then return 0 end
  local off, err = v.tz_offset(zone, t)
  if off == nil then error(err, 0) end
  return off
end

local function day_matches(s, d, wday)
  local dom, dow = s.dom[d] == true, s.dow[wday] == true
  if s.dom_star or s.dow_star then return dom and dow end
  return dom or dow
end

-- The first time of the schedule after t (seconds), in zone; nil when
-- there is none within five years (as "0 0 30 2 *").
function M.next(s, t, zone)
  t = math.floor(t)
  if s.every then return t + s.every end
  local off = offset(zone, t)
  local l = (t + off) // 60 * 60 + 60
  local limit = l + 5 * 366 * 86400
  while l <= limit do
    local days = l // 86400
    local y, m, d = civil_from_days(days)
    local secs = l % 86400
    if not s.month[m] then
      if m == 12 then y, m = y + 1, 1 else m = m + 1 end
      l = days_from_civil(y, m, 1) * 86400
    elseif not day_matches(s, d, (days + 4) % 7) then
      l = (days + 1) * 86400
    elseif not s.hour[secs // 3600] then
      l = (l // 3600 + 1) * 3600
    elseif not s.minute[secs % 3600 // 60] then
      l = l + 60
    else
      -- Back from the wall clock to UTC with the offset in force then.
      local u = l - offset(zone, l - off)
      if u > t then return u end
      l = l + 60
    end
  end
  return nil
end

-- RFC 3339 of t in zone's wall clock with its offset (UTC: "Z").
function M.format(t, zone)
  local off = offset(zone, t)
  local s = v.format_time(t + off)
  if off == 0 then return s end
  local sign = off < 0 and "-" or "+"
  local a = math.abs(off)
  return s:sub(1, -2) .. string.format("%s%02d:%02d", sign, a // 3600, a % 3600 // 60)
end

return M
