-- Controller expectations, as KubeRay keeps them for Ray pods: the
-- creates and deletes a controller has made but may not see yet in what
-- it reads. While a scope (one cluster's group) has an unmet expectation
-- the controller neither creates nor deletes more pods there, so a cache
-- that lags behind the controller's own writes can never make it create a
-- second pod for the same gap. A create is met once a pod of that name is
-- seen, a delete once the pod is gone or terminating; either is forgotten
-- after 30 s. State lives in this module, in memory, as upstream's does:
-- after a restart everything is rebuilt from what the store holds.
local v = volray
local M = {}

M.TIMEOUT = 30

local pending = {}  -- scope -> { name -> { op = "create"|"delete", at = t } }

function M.expect_create(scope, name)
  pending[scope] = pending[scope] or {}
  pending[scope][name] = { op = "create", at = v.time() }
end

function M.expect_delete(scope, name)
  pending[scope] = pending[scope] or {}
  pending[scope][name] = { op = "delete", at = v.time() }
end

-- Are all expectations of scope met by pods (a list of objects)?
-- Met ones are dropped.
function M.satisfied(scope, pods)
  local p = pending[scope]
  if p == nil then return true end
  local by_name = {}
  for _, pod in ipairs(pods) do by_name[pod.metadata.name] = pod end
  local now = v.time()
  local left = false
  for name, e in pairs(p) do
    local pod = by_name[name]
    local met
    if e.op == "create" then
      met = pod ~= nil
    else
      met = pod == nil or pod.metadata.deletionTimestamp ~= nil
    end
    if met or now - e.at > M.TIMEOUT then
      p[name] = nil
    else
      left = true
    end
  end
  if not left then pending[scope] = nil end
  return not left
end

-- Forget every scope whose name starts with prefix (an object is gone).
function M.forget(prefix)
  for scope in pairs(pending) do
    if scope:sub(1, #prefix) == prefix then pending[scope] = nil end
  end
end

return M
