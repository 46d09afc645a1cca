-- Go's time.ParseDuration, as Volcano's arguments and annotations write
-- durations ("30s", "1m30s", "1.5h", "300ms"): seconds, or nil when it
-- does not parse. A bare "0" is 0. (The controllers have the same file,
-- lua/lib/duration.lua: the two Lua roots cannot load each other's.)
local M = {}

local UNITS = { ns = 1e-9, us = 1e-6, ["µs"] = 1e-6, ["μs"] = 1e-6,
  ms = 1e-3, s = 1, m = 60, h = 3600 }

function M.parse(text)
  if type(text) ~= "string" or text == "" then return nil end
  local sign, rest = 1, text
  if rest:sub(1, 1) == "-" or rest:sub(1, 1) == "+" then
    if rest:sub(1, 1) == "-" then sign = -1 end
    rest = rest:sub(2)
  end
  if rest == "0" then return 0 end
  if rest == "" then return nil end
  local total = 0
  while rest ~= "" do
    local num, tail = rest:match("^(%d*%.?%d*)(.*)$")
    if num == nil or num == "" or num == "." then return nil end
    -- The longest unit that starts the tail.
    local unit
    for k in pairs(UNITS) do
      if tail:sub(1, #k) == k and (unit == nil or #k > #unit) then unit = k end
    end
    if unit == nil then return nil end
    total = total + tonumber(num) * UNITS[unit]
    rest = tail:sub(#unit + 1)
  end
  return sign * total
end

return M
