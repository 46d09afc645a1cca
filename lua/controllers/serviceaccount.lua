-- ServiceAccount: every namespace has a ServiceAccount named default, as
-- kube-controller-manager's serviceaccounts controller keeps one: made
-- when the namespace appears, and again when it is deleted, unless the
-- namespace is going away.
local v = volray

local NAMESPACES = "v1/namespaces"
local SERVICEACCOUNTS = "v1/serviceaccounts"

local controller = {
  primary = NAMESPACES,
  watches = {
    -- A default ServiceAccount deleted: its namespace looks again.
    { resource = SERVICEACCOUNTS, map = function(sa)
        if sa.metadata.name == "default" then return sa.metadata.namespace end
        return nil
      end },
  },
}

function controller.reconcile(req)
  local ns = v.get(NAMESPACES, nil, req.name)
  if ns == nil or ns.metadata.deletionTimestamp ~= nil or
      (ns.status and ns.status.phase == "Terminating") then
    return nil
  end
  if v.get(SERVICEACCOUNTS, req.name, "default") ~= nil then return nil end
  local _, err, code = v.create({ apiVersion = "v1", kind = "ServiceAccount",
    metadata = { name = "default", namespace = req.name } })
  if err ~= nil and code ~= 409 then
    error("creating the default ServiceAccount of " .. req.name .. ": " .. err)
  end
  return nil
end

return controller
