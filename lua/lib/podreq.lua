-- Resource requests of pods as the Volcano controllers count them for a
-- PodGroup's minResources: a pod asks for the sum of its containers'
-- requests, or the largest init container's when that is more, plus the
-- pod overhead; a group of n such pods asks n times that. Amounts are kept
-- in thousandths (volray.milli) so that cpu "250m" and memory "1Gi" add up
-- exactly, and written back as Kubernetes quantities.
local v = volray
local M = {}

local function add_list(into, list, times)
  for name, q in pairs(list or {}) do
    local m = v.milli(tostring(q))
    if m ~= nil then into[name] = (into[name] or 0) + m * (times or 1) end
  end
end

-- The requests of one pod spec: resource name -> thousandths.
function M.of_spec(spec)
  local sum = {}
  for _, c in ipairs(spec.containers or {}) do
    add_list(sum, c.resources and c.resources.requests)
  end
  for _, c in ipairs(spec.initContainers or {}) do
    local one = {}
    add_list(one, c.resources and c.resources.requests)
    for name, m in pairs(one) do
      if m > (sum[name] or 0) then sum[name] = m end
    end
  end
  add_list(sum, spec.overhead)
  return sum
end

-- Add n times the requests of a pod spec into acc (and return acc).
function M.add(acc, spec, n)
  if n <= 0 then return acc end
  for name, m in pairs(M.of_spec(spec)) do acc[name] = (acc[name] or 0) + m * n end
  return acc
end

local BINARY = { { "Ei", 2 ^ 60 }, { "Pi", 2 ^ 50 }, { "Ti", 2 ^ 40 },
  { "Gi", 2 ^ 30 }, { "Mi", 2 ^ 20 }, { "Ki", 2 ^ 10 } }

-- Thousandths as a quantity: "250m", "2", "1Gi".
function M.format(m)
  if m % 1000 ~= 0 then return string.format("%dm", m) end
  local n = m // 1000
  if n ~= 0 then
    for _, b in ipairs(BINARY) do
      if n % b[2] == 0 then return string.format("%d%s", n // b[2], b[1]) end
    end
  end
  return string.format("%d", n)
end

-- A table of thousandths as a ResourceList, or nil when it is empty.
function M.to_list(acc)
  local out, any = {}, false
  for name, m in pairs(acc) do
    if m > 0 then
      out[name] = M.format(m)
      any = true
    end
  end
  return any and out or nil
end

return M
