-- Label selectors for scheduler plugins: metav1.LabelSelector as a table
-- ({matchLabels = {...}, matchExpressions = {{key, operator, values}}}).
local M = {}

-- Does the selector select labels? A nil selector selects nothing; an
-- empty one ({}) everything, as Kubernetes reads them.
function M.matches(sel, labels)
  if type(sel) ~= "table" then return false end
  labels = labels or {}
  for k, v in pairs(sel.matchLabels or {}) do
    if labels[k] ~= v then return false end
  end
  for _, e in ipairs(sel.matchExpressions or {}) do
    local have = labels[e.key]
    local inset = false
    for _, v in ipairs(e.values or {}) do
      if have == v then inset = true end
    end
    if e.operator == "In" then
      if not inset then return false end
    elseif e.operator == "NotIn" then
      if inset then return false end
    elseif e.operator == "Exists" then
      if have == nil then return false end
    elseif e.operator == "DoesNotExist" then
      if have ~= nil then return false end
    else
      return false
    end
  end
  return true
end

-- An empty selector ({}): selects everything (a PDB's selects nothing
-- in Volcano's reading: selector.Empty()).
function M.is_empty(sel)
  if type(sel) ~= "table" then return true end
  return next(sel.matchLabels or {}) == nil and next(sel.matchExpressions or {}) == nil
end

return M
