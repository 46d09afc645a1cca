-- The RayCluster of a RayJob and what a RayJob does to it: built from
-- spec.rayClusterSpec under the name the RayJob's status already holds
-- (so a restart finds it rather than making another), owned by the
-- RayJob, with the RayJob's labels plus ray.io/originated-from-cr-name
-- and ray.io/originated-from-crd=RayJob (the RayCluster controller reads
-- the latter to join the RayJob's PodGroup); in SidecarMode the head pod
-- gets the submitter container. Also: the RayJob's PodGroup (the cluster's
-- gang plus the submitter's resources), deleting the cluster and the
-- submitter, and suspending the worker groups (deletion rule
-- DeleteWorkers).
local v = volray
local raypod = require("raypod")
local raypg = require("raypodgroup")
local sub = require("raysubmitter")
local M = {}

M.RC = "ray.io/v1/rayclusters"
M.JOBS = "batch/v1/jobs"

local function present(x)
  return x ~= nil and x ~= v.null
end

function M.uses_selector(job)
  local s = job.spec.clusterSelector
  return present(s) and next(s) ~= nil
end

function M.selected_name(job)
  return job.spec.clusterSelector[raypod.CLUSTER]
end

-- The RayCluster object a RayJob creates.
function M.build(job)
  local labels = {}
  for k, x in pairs(job.metadata.labels or {}) do labels[k] = x end
  labels[raypod.ORIGIN_NAME] = job.metadata.name
  labels[raypod.ORIGIN_CRD] = "RayJob"
  -- The RayJob's annotations (GCS fault tolerance's among them), but
  -- not what kubectl applied to the RayJob.
  local annotations = {}
  for k, x in pairs(job.metadata.annotations or {}) do
    if k ~= "kubectl.kubernetes.io/last-applied-configuration" then annotations[k] = x end
  end
  local spec = v.deepcopy(job.spec.rayClusterSpec)
  if job.spec.submissionMode == "SidecarMode" then
    local hs = spec.headGroupSpec.template.spec
    local port = raypod.port(spec.headGroupSpec.rayStartParams, "dashboard")
    hs.containers[#hs.containers + 1] = sub.sidecar(job, port)
    hs.restartPolicy = "Never"
    -- Its submitter and submission id go with the head: no new head.
    annotations["ray.io/disable-provisioned-head-restart"] = "true"
  end
  return {
    apiVersion = "ray.io/v1", kind = "RayCluster",
    metadata = { name = job.status.rayClusterName, namespace = job.metadata.namespace,
      labels = labels, annotations = next(annotations) and annotations or nil,
      ownerReferences = v.array({ v.owner_ref(job) }) },
    spec = spec,
  }
end

-- The cluster of a RayJob, created if it is its own and missing. Returns
-- the cluster, or nil and why.
function M.get_or_create(job)
  local ns, name = job.metadata.namespace, job.status.rayClusterName
  local rc = v.get(M.RC, ns, name)
  if rc ~= nil then return rc end
  if M.uses_selector(job) then return nil, "RayCluster " .. ns .. "/" .. name .. " not found" end
  local out, err, code = v.create(M.build(job))
  if out == nil then
    if code == 409 then return nil, "RayCluster " .. name .. " is being created" end
    v.event(job, "Warning", "FailedToCreateRayCluster", tostring(err))
    error("creating RayCluster " .. name .. ": " .. tostring(err), 0)
  end
  v.event(job, "Normal", "CreatedRayCluster", "Created RayCluster " .. ns .. "/" .. name)
  return out
end

-- The RayJob's PodGroup, before its cluster exists.
function M.sync_podgroup(job)
  if M.uses_selector(job) or not raypg.enabled(job) then return end
  local members, res = raypg.cluster_gang(job.spec.rayClusterSpec)
  if (job.spec.submissionMode or "K8sJobMode") == "K8sJobMode" then
    raypg.add(res, sub.resources(job))
  end
  raypg.sync(job, members, res)
end

-- Delete a RayJob's own cluster; true once it is gone.
function M.delete_cluster(job)
  if M.uses_selector(job) then return true end
  local name = job.status.rayClusterName
  if not present(name) or name == "" then return true end
  local ns = job.metadata.namespace
  local rc = v.get(M.RC, ns, name)
  if rc == nil then return true end
  if rc.metadata.deletionTimestamp == nil then
    local ok, err, code = v.delete(M.RC, ns, name, { propagation = "Background" })
    if not ok and code ~= 404 then error("deleting RayCluster " .. name .. ": " .. tostring(err), 0) end
    v.event(job, "Normal", "DeletedRayCluster", "Deleted RayCluster " .. ns .. "/" .. name)
  end
  return false
end

-- Delete the submitter Job (and its pods); true once it is gone.
function M.delete_submitter(job)
  local ns, name = job.metadata.namespace, job.metadata.name
  local j = v.get(M.JOBS, ns, name)
  if j == nil or not v.is_controlled_by(j, job) then return true end
  if j.metadata.deletionTimestamp == nil then
    local ok, err, code = v.delete(M.JOBS, ns, name, { propagation = "Background" })
    if not ok and code ~= 404 then error("deleting submitter Job " .. name .. ": " .. tostring(err), 0) end
    v.event(job, "Normal", "DeletedSubmitterJob", "Deleted submitter Job " .. ns .. "/" .. name)
  end
  return false
end

-- Suspend every worker group of the cluster (its pods go, the head stays).
function M.suspend_workers(job)
  local name = job.status.rayClusterName
  local rc = present(name) and v.get(M.RC, job.metadata.namespace, name) or nil
  if rc == nil then return end
  local ops = {}
  for i, g in ipairs(rc.spec.workerGroupSpecs or {}) do
    if g.suspend ~= true then
      ops[#ops + 1] = { op = "add", path = "/spec/workerGroupSpecs/" .. (i - 1) .. "/suspend", value = true }
    end
  end
  if #ops == 0 then return end
  local out, err, code = v.patch(M.RC, rc.metadata.namespace, rc.metadata.name, ops, "json")
  if out == nil and code ~= 404 and code ~= 409 then error("suspending workers: " .. tostring(err), 0) end
  v.event(job, "Normal", "SuspendedWorkers", "Suspended the worker groups of RayCluster " .. rc.metadata.name)
end

return M
