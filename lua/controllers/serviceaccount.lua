-- ServiceAccount: every namespace has a ServiceAccount named default, as
-- kube-controller-manager's serviceaccounts controller keeps one, and a
-- ConfigMap kube-root-ca.crt holding the CA that verifies the API server
-- (ca.crt), as its root-ca-cert-publisher keeps one: what the pods'
-- kube-api-access volumes project next to their token. Both are made when
-- the namespace appears, and again when deleted (or, for the ConfigMap,
-- changed), unless the namespace is going away. Without a CA
-- (volray.config.root_ca empty: volrayd --plain-http) no ConfigMap.
local v = volray

local NAMESPACES = "v1/namespaces"
local SERVICEACCOUNTS = "v1/serviceaccounts"
local CONFIGMAPS = "v1/configmaps"
local ROOT_CA = "kube-root-ca.crt"
local DESCRIPTION = "Contains a CA bundle that can be used to verify the " ..
  "kube-apiserver when using internal endpoints such as the internal service IP " ..
  "or kubernetes.default.svc. No other usage is guaranteed across distributions " ..
  "of Kubernetes clusters."

local controller = {
  primary = NAMESPACES,
  watches = {
    -- A default ServiceAccount deleted: its namespace looks again.
    { resource = SERVICEACCOUNTS, map = function(sa)
        if sa.metadata.name == "default" then return sa.metadata.namespace end
        return nil
      end },
    { resource = CONFIGMAPS, map = function(cm)
        if cm.metadata.name == ROOT_CA then return cm.metadata.namespace end
        return nil
      end },
  },
}

local function ensure_root_ca(ns)
  local ca = v.config.root_ca
  if ca == nil or ca == "" then return end
  local cm = v.get(CONFIGMAPS, ns, ROOT_CA)
  if cm == nil then
    local _, err, code = v.create({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = ROOT_CA, namespace = ns,
        annotations = { ["kubernetes.io/description"] = DESCRIPTION } },
      data = { ["ca.crt"] = ca } })
    if err ~= nil and code ~= 409 then
      error("creating the " .. ROOT_CA .. " ConfigMap of " .. ns .. ": " .. err)
    end
  elseif (cm.data or {})["ca.crt"] ~= ca then
    cm.data = { ["ca.crt"] = ca }
    local _, err, code = v.update(cm)
    if err ~= nil and code ~= 409 and code ~= 404 then
      error("updating the " .. ROOT_CA .. " ConfigMap of " .. ns .. ": " .. err)
    end
  end
end

function controller.reconcile(req)
  local ns = v.get(NAMESPACES, nil, req.name)
  if ns == nil or ns.metadata.deletionTimestamp ~= nil or
      (ns.status and ns.status.phase == "Terminating") then
    return nil
  end
  ensure_root_ca(req.name)
  if v.get(SERVICEACCOUNTS, req.name, "default") ~= nil then return nil end
  local _, err, code = v.create({ apiVersion = "v1", kind = "ServiceAccount",
    metadata = { name = "default", namespace = req.name } })
  if err ~= nil and code ~= 409 then
    error("creating the default ServiceAccount of " .. req.name .. ": " .. err)
  end
  return nil
end

return controller
