-- Resource arithmetic for scheduler plugins. A resource is a table of
-- name -> number: cpu in millicores, memory in bytes, extended resources
-- (nvidia.com/gpu, ...) in units. A name that is missing counts as zero,
-- except where a function says "missing = unlimited" (capabilities).
local M = {}

function M.new() return { cpu = 0, memory = 0 } end

function M.clone(a)
  local r = {}
  for k, v in pairs(a or {}) do r[k] = v end
  if r.cpu == nil then r.cpu = 0 end
  if r.memory == nil then r.memory = 0 end
  return r
end

function M.add(a, b)
  for k, v in pairs(b or {}) do a[k] = (a[k] or 0) + v end
  return a
end

function M.sub(a, b)
  for k, v in pairs(b or {}) do a[k] = (a[k] or 0) - v end
  return a
end

-- a - b, never below zero in any dimension.
function M.sub_floor(a, b)
  local r = M.clone(a)
  for k, v in pairs(b or {}) do
    r[k] = math.max(0, (r[k] or 0) - v)
  end
  return r
end

function M.scale(a, f)
  local r = {}
  for k, v in pairs(a) do r[k] = v * f end
  return r
end

-- Every dimension of a <= b (missing in b = 0).
function M.less_equal(a, b)
  for k, v in pairs(a) do
    if v > (b[k] or 0) then return false end
  end
  return true
end

-- Every dimension of a <= b, a dimension missing in b being unlimited.
function M.less_equal_inf(a, b)
  if b == nil then return true end
  for k, v in pairs(a) do
    if b[k] ~= nil and v > b[k] then return false end
  end
  return true
end

-- a <= b on the dimensions that want asks for (want[k] > 0).
function M.less_equal_on(a, b, want)
  for k, v in pairs(want) do
    if v > 0 and (a[k] or 0) > (b[k] or 0) then return false end
  end
  return true
end

-- The dimensions that want asks for (want[k] > 0, "pods" aside) where
-- a > b (missing in b = 0), sorted: empty when a fits b on them.
function M.exceeded_on(a, b, want)
  local out = {}
  for k, v in pairs(want) do
    if v > 0 and k ~= "pods" and (a[k] or 0) > (b[k] or 0) then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

-- "prefix: insufficient cpu, insufficient memory", as Volcano words a
-- quota that does not fit (prefix alone when names is empty).
function M.insufficient(prefix, names)
  if #names == 0 then return prefix end
  local parts = {}
  for i, k in ipairs(names) do parts[i] = "insufficient " .. k end
  return prefix .. ": " .. table.concat(parts, ", ")
end

-- Some dimension of a is < the same dimension of b.
function M.less_partly(a, b)
  for k, v in pairs(b) do
    if (a[k] or 0) < v then return true end
  end
  return false
end

function M.is_empty(a)
  for _, v in pairs(a) do
    if v > 0 then return false end
  end
  return true
end

function M.equal(a, b)
  for k, v in pairs(a) do if (b[k] or 0) ~= v then return false end end
  for k, v in pairs(b) do if (a[k] or 0) ~= v then return false end end
  return true
end

-- Per dimension minimum; a dimension missing in b is unlimited.
function M.min_inf(a, b)
  if b == nil then return M.clone(a) end
  local r = M.clone(a)
  for k, v in pairs(b) do
    if r[k] ~= nil and v < r[k] then r[k] = v end
  end
  return r
end

-- Per dimension minimum; missing in b is zero.
function M.min(a, b)
  local r = {}
  for k, v in pairs(a) do r[k] = math.min(v, b[k] or 0) end
  return r
end

function M.max(a, b)
  local r = M.clone(a)
  for k, v in pairs(b or {}) do
    if (r[k] or 0) < v then r[k] = v end
  end
  return r
end

-- The dominant share: max over dimensions of a / b (0/0 = 0, x/0 = 1).
function M.share(a, b)
  local s = 0
  for k, v in pairs(a) do
    local d = b[k] or 0
    local x
    if d == 0 then x = (v == 0) and 0 or 1 else x = v / d end
    if x > s then s = x end
  end
  return s
end

return M
