-- Whether a pod spec may run on a node, judged on plain tables as
-- kube-scheduler's NodeAffinity and TaintToleration plugins judge it:
-- the nodeSelector and every requiredDuringScheduling node selector term
-- (matchExpressions on labels, matchFields on metadata.name), and the
-- taints the pod's tolerations cover. The DaemonSet controller decides
-- with it which nodes get a pod.
local M = {}

local function has(values, x)
  for _, y in ipairs(values or {}) do
    if y == x then return true end
  end
  return false
end

-- One NodeSelectorRequirement against a value (nil: the key is absent).
local function requirement(req, val)
  local op = req.operator
  if op == "In" then return val ~= nil and has(req.values, val) end
  if op == "NotIn" then return val == nil or not has(req.values, val) end
  if op == "Exists" then return val ~= nil end
  if op == "DoesNotExist" then return val == nil end
  if (op == "Gt" or op == "Lt") and val ~= nil then
    local a, b = math.tointeger(tonumber(val)), math.tointeger(tonumber((req.values or {})[1]))
    if a == nil or b == nil then return false end
    if op == "Gt" then return a > b end
    return a < b
  end
  return false
end

-- A term holds when all its requirements do; an empty term never holds.
local function term_matches(term, labels, name)
  local exprs, fields = term.matchExpressions or {}, term.matchFields or {}
  if #exprs == 0 and #fields == 0 then return false end
  for _, r in ipairs(exprs) do
    if not requirement(r, labels[r.key]) then return false end
  end
  for _, r in ipairs(fields) do
    if r.key ~= "metadata.name" or not requirement(r, name) then return false end
  end
  return true
end

-- The nodeSelector and required node affinity of spec hold on node.
function M.affinity_matches(spec, node)
  local labels = node.metadata.labels or {}
  for k, x in pairs(spec.nodeSelector or {}) do
    if labels[k] ~= x then return false end
  end
  local na = spec.affinity and spec.affinity.nodeAffinity
  local req = na and na.requiredDuringSchedulingIgnoredDuringExecution
  if req == nil then return true end
  for _, term in ipairs(req.nodeSelectorTerms or {}) do
    if term_matches(term, labels, node.metadata.name) then return true end
  end
  return false
end

-- Whether a toleration covers a taint (Kubernetes' ToleratesTaint).
function M.tolerates(tol, taint)
  if tol.effect ~= nil and tol.effect ~= "" and tol.effect ~= taint.effect then
    return false
  end
  if tol.key ~= nil and tol.key ~= "" and tol.key ~= taint.key then return false end
  if tol.operator == "Exists" then return true end
  if tol.key == nil or tol.key == "" then return false end
  return (tol.value or "") == (taint.value or "")
end

-- The first taint of node with one of the effects (a set) that no
-- toleration covers, or nil.
function M.untolerated(tolerations, node, effects)
  for _, taint in ipairs(node.spec and node.spec.taints or {}) do
    if effects[taint.effect] then
      local ok = false
      for _, tol in ipairs(tolerations or {}) do
        if M.tolerates(tol, taint) then ok = true; break end
      end
      if not ok then return taint end
    end
  end
  return nil
end

return M
