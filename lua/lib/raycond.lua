-- metav1.Condition lists in a status table, as the Ray CRDs declare them
-- (type, status, reason, message, lastTransitionTime): set moves
-- lastTransitionTime only when the status changes, remove drops a type.
local v = volray
local M = {}

function M.get(st, ctype)
  for _, c in ipairs(st and st.conditions or {}) do
    if c.type == ctype then return c end
  end
  return nil
end

function M.is_true(st, ctype)
  local c = M.get(st, ctype)
  return c ~= nil and c.status == "True"
end

-- Set a condition; returns whether anything changed.
function M.set(st, ctype, status, reason, message)
  st.conditions = st.conditions or v.array()
  message = message or ""
  local c = M.get(st, ctype)
  if c == nil then
    st.conditions[#st.conditions + 1] = { type = ctype, status = status, reason = reason,
      message = message, lastTransitionTime = v.now() }
    return true
  end
  if c.status == status and c.reason == reason and c.message == message then return false end
  if c.status ~= status then c.lastTransitionTime = v.now() end
  c.status, c.reason, c.message = status, reason, message
  return true
end

function M.remove(st, ctype)
  local list = st.conditions
  if list == nil then return false end
  for i, c in ipairs(list) do
    if c.type == ctype then
      table.remove(list, i)
      return true
    end
  end
  return false
end

return M
