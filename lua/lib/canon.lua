-- Canonical JSON and stable hashes of objects. volray.json_encode keeps
-- whatever key order a table happens to have, so two equal templates may
-- encode differently; here object keys are sorted, nulls and empty maps
-- or lists are left out (as Kubernetes' semantic equality treats nil and
-- empty alike), and the result is hashed with 32-bit FNV-1a. The hash is
-- spelled with the same consonant-and-digit alphabet Kubernetes uses for
-- pod-template-hash, so it never forms words and is a valid label value.
local v = volray
local M = {}

local HASH_LABEL = "pod-template-hash"
local ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

local function is_array(t)
  local mt = getmetatable(t)
  if mt ~= nil and type(mt) == "table" and mt.__array then return true end
  local n = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return false end
    n = n + 1
  end
  return n > 0 and n == #t
end

local function is_empty(x)
  return x == nil or x == v.null or (type(x) == "table" and next(x) == nil)
end

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b",
  ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESCAPES[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function encode(x, out)
  local t = type(x)
  if t == "table" then
    if is_array(x) then
      out[#out + 1] = "["
      for i = 1, #x do
        if i > 1 then out[#out + 1] = "," end
        encode(x[i], out)
      end
      out[#out + 1] = "]"
      return
    end
    local keys = {}
    for k, val in pairs(x) do
      if not is_empty(val) then keys[#keys + 1] = tostring(k) end
    end
    table.sort(keys)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = quote(k)
      out[#out + 1] = ":"
      local val = x[k]
      if val == nil then val = x[tonumber(k)] end
      encode(val, out)
    end
    out[#out + 1] = "}"
  elseif t == "string" then
    out[#out + 1] = quote(x)
  elseif t == "number" then
    if math.type(x) == "integer" then
      out[#out + 1] = string.format("%d", x)
    elseif x == math.floor(x) and math.abs(x) < 2^53 then
      out[#out + 1] = string.format("%d", math.floor(x))
    else
      out[#out + 1] = string.format("%.17g", x)
    end
  elseif t == "boolean" then
    out[#out + 1] = x and "true" or "false"
  else
    out[#out + 1] = "null"
  end
end

-- The canonical JSON text of a value.
function M.encode(x)
  local out = {}
  encode(x, out)
  return table.concat(out)
end

-- 32-bit FNV-1a of a string, as an integer.
function M.fnv1a32(s)
  local h = 2166136261
  local byte = string.byte
  for i = 1, #s do
    h = ((h ~ byte(s, i)) * 16777619) & 0xffffffff
  end
  return h
end

-- Spell a number's decimal digits in the safe alphabet (SafeEncodeString).
function M.safe_encode(s)
  s = tostring(s)
  local out = {}
  for i = 1, #s do
    local k = s:byte(i) % #ALPHANUMS + 1
    out[i] = ALPHANUMS:sub(k, k)
  end
  return table.concat(out)
end

-- A shallow view of a pod template without the pod-template-hash label.
function M.without_hash(template)
  local md = template and template.metadata
  local labels = md and md.labels
  if labels == nil or labels[HASH_LABEL] == nil then return template or {} end
  local l2 = {}
  for k, x in pairs(labels) do
    if k ~= HASH_LABEL then l2[k] = x end
  end
  local md2 = {}
  for k, x in pairs(md) do md2[k] = x end
  md2.labels = l2
  local t2 = {}
  for k, x in pairs(template) do t2[k] = x end
  t2.metadata = md2
  return t2
end

-- The pod-template-hash of a template; a collision count changes it.
function M.template_hash(template, collision_count)
  local text = M.encode(M.without_hash(template))
  if collision_count ~= nil and collision_count ~= v.null and collision_count > 0 then
    text = text .. "#" .. string.format("%d", collision_count)
  end
  return M.safe_encode(M.fnv1a32(text))
end

-- Are two pod templates equal once the pod-template-hash label is ignored?
function M.equal_ignore_hash(a, b)
  return M.encode(M.without_hash(a)) == M.encode(M.without_hash(b))
end

-- Whether two decoded JSON values are the same, key by key (no
-- canonical form: a missing key and an empty table differ).
function M.same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, x in pairs(a) do
    if not M.same(x, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

return M
