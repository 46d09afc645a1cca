-- Validation of Ray objects, as KubeRay's validation.go words it. Each
-- function returns nil for a valid object, else the message that goes
-- into the Warning Event (and, for a RayJob, status.message). Checks that
-- the CRD schema already makes (types, enums, minimums) are not repeated.
local v = volray
local gcsft = require("raygcsft")
local incr = require("rayincremental")
local M = {}

M.MAX_CLUSTER_NAME = 53
M.MAX_JOB_NAME = 47
M.MAX_SERVICE_NAME = 40
M.OPERATOR = "ray.io/kuberay-operator"

local function present(x)
  return x ~= nil and x ~= v.null
end

-- A DNS-1035 label: lowercase letters, digits and '-', starting with a
-- letter and ending with a letter or digit.
function M.dns1035(name)
  return type(name) == "string" and name:match("^[a-z]$") ~= nil
    or (type(name) == "string" and name:match("^[a-z][-a-z0-9]*[a-z0-9]$") ~= nil)
end

function M.name(kind, name, max)
  if #name > max then
    return string.format("%s name should be no more than %d characters", kind, max)
  end
  if not M.dns1035(name) then
    return string.format("%s name should be a valid DNS-1035 label: %q", kind, name)
  end
  return nil
end

local function containers(template)
  return template and template.spec and template.spec.containers or {}
end

-- A RayCluster spec (also a RayJob's rayClusterSpec and a RayService's
-- rayClusterConfig).
function M.cluster_spec(spec, annotations)
  if not present(spec) then return "the RayCluster spec is missing" end
  local hg = spec.headGroupSpec
  if not present(hg) then return "headGroupSpec is required" end
  if #containers(hg.template) == 0 then
    return "headGroupSpec should have at least one container"
  end
  local seen = {}
  for _, g in ipairs(spec.workerGroupSpecs or {}) do
    local name = g.groupName or ""
    if seen[name] then return string.format("worker group names must be unique: %q appears twice", name) end
    seen[name] = true
    if #containers(g.template) == 0 then
      return string.format("workerGroupSpec %s should have at least one container", name)
    end
    local min, max = g.minReplicas or 0, g.maxReplicas or 2147483647
    if min > max then
      return string.format("worker group %s has minReplicas %d greater than maxReplicas %d", name, min, max)
    end
    if (g.numOfHosts or 1) < 1 then
      return string.format("worker group %s has numOfHosts %d; it must be at least 1", name, g.numOfHosts)
    end
  end
  if present(spec.managedBy) and spec.managedBy ~= M.OPERATOR and spec.managedBy ~= "kueue.x-k8s.io/multikueue" then
    return string.format("spec.managedBy %q is not supported", spec.managedBy)
  end
  return gcsft.validate(spec, annotations)
end

function M.cluster(rc)
  return M.name("RayCluster", rc.metadata.name, M.MAX_CLUSTER_NAME) or
    M.cluster_spec(rc.spec, rc.metadata.annotations)
end

local MODES = { K8sJobMode = true, HTTPMode = true, InteractiveMode = true, SidecarMode = true }

-- A RayJob: its metadata, then its spec.
function M.job(job)
  local err = M.name("RayJob", job.metadata.name, M.MAX_JOB_NAME)
  if err then return "The RayJob metadata is invalid: " .. err end
  return M.job_spec(job.spec)
end

-- A RayJob spec (also a RayCronJob's jobTemplate).
function M.job_spec(s)
  local mode = s.submissionMode or "K8sJobMode"
  local selector = present(s.clusterSelector) and next(s.clusterSelector) ~= nil
  if not MODES[mode] then return string.format("submissionMode %q is not supported", mode) end
  if s.suspend == true and s.shutdownAfterJobFinishes ~= true then
    return "a RayJob with shouldSuspend is only supported when ShutdownAfterJobFinishes is set to true"
  end
  if (s.ttlSecondsAfterFinished or 0) > 0 and s.shutdownAfterJobFinishes ~= true then
    return "a RayJob with ttlSecondsAfterFinished > 0 requires shutdownAfterJobFinishes to be true"
  end
  if (s.ttlSecondsAfterFinished or 0) < 0 then
    return "ttlSecondsAfterFinished must not be negative"
  end
  if selector and s.suspend == true then
    return "the ClusterSelector mode doesn't support the suspend operation"
  end
  if selector and mode == "SidecarMode" then
    return "the ClusterSelector mode doesn't support SidecarMode"
  end
  if selector and (s.backoffLimit or 0) > 0 then
    return "the ClusterSelector mode doesn't support backoffLimit (retries need a new RayCluster)"
  end
  if mode == "InteractiveMode" and (s.backoffLimit or 0) > 0 then
    return "BackoffLimit is incompatible with InteractiveMode"
  end
  if not selector and not present(s.rayClusterSpec) then
    return "one of RayClusterSpec or ClusterSelector must be set"
  end
  if present(s.activeDeadlineSeconds) and s.activeDeadlineSeconds <= 0 then
    return string.format("activeDeadlineSeconds must be a positive integer, got %d", s.activeDeadlineSeconds)
  end
  if present(s.runtimeEnvYAML) and s.runtimeEnvYAML ~= "" then
    local env, yerr = v.yaml_decode(s.runtimeEnvYAML)
    if env == nil then return "failed to unmarshal RuntimeEnvYAML: " .. tostring(yerr) end
    if type(env) ~= "table" then return "RuntimeEnvYAML must be a YAML mapping" end
  end
  local ds = s.deletionStrategy
  local legacy = present(ds) and (present(ds.onSuccess) or present(ds.onFailure))
  local rules = present(ds) and present(ds.deletionRules) and #ds.deletionRules > 0
  if legacy and rules then
    return "The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously"
  end
  if present(ds) and not legacy and not rules then
    return "The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and onFailure, " ..
      "OR the deletionRules field (cannot be empty)"
  end
  if legacy then
    if not present(ds.onSuccess) or not present(ds.onFailure) then
      return "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using the legacy " ..
        "deletion policy fields of DeletionStrategy"
    end
    for _, w in ipairs({ { "OnSuccess", ds.onSuccess, "success" }, { "OnFailure", ds.onFailure, "failure" } }) do
      local p = w[2].policy
      if not present(p) then
        return "the DeletionPolicyType field of DeletionStrategy." .. w[1] ..
          " cannot be unset when DeletionStrategy is enabled"
      end
      if selector and (p == "DeleteCluster" or p == "DeleteWorkers") then
        return string.format("the ClusterSelector mode doesn't support DeletionStrategy=%s on %s", p, w[3])
      end
      if p == "DeleteWorkers" and present(s.rayClusterSpec) and s.rayClusterSpec.enableInTreeAutoscaling == true then
        return "DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling enabled"
      end
    end
  end
  if present(ds) and present(ds.deletionRules) then
    if s.shutdownAfterJobFinishes == true then
      return "shutdownAfterJobFinishes and deletionStrategy.deletionRules cannot be used together"
    end
    for i, r in ipairs(ds.deletionRules) do
      local c = r.condition or {}
      if present(c.jobStatus) == present(c.jobDeploymentStatus) then
        return string.format("deletionRules[%d]: set exactly one of condition.jobStatus and condition.jobDeploymentStatus", i - 1)
      end
      if selector and (r.policy == "DeleteCluster" or r.policy == "DeleteWorkers") then
        return string.format("deletionRules[%d]: policy %s cannot be used with clusterSelector", i - 1, r.policy)
      end
    end
  end
  if present(s.rayClusterSpec) then
    local cerr = M.cluster_spec(s.rayClusterSpec)
    if cerr then return "The RayJob spec is invalid: " .. cerr end
  end
  return nil
end

-- A RayCronJob (ValidateRayCronJobSpec): its name leaves room for the
-- RayJobs' "-<minutes>", the schedule parses and names no zone itself,
-- the time zone is known, the template is a valid RayJob spec.
M.MAX_CRONJOB_NAME = M.MAX_JOB_NAME - 11

function M.cronjob(cj, cron)
  local s = cj.spec
  if #cj.metadata.name > M.MAX_CRONJOB_NAME then
    return string.format("RayCronJob name should be no more than %d characters", M.MAX_CRONJOB_NAME)
  end
  if (s.schedule or ""):find("TZ", 1, true) then
    return "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
  end
  local sched, perr = cron.parse(s.schedule or "")
  if sched == nil then return "invalid cron schedule: " .. tostring(perr) end
  if present(s.timeZone) then
    if s.timeZone == "" then
      return "timeZone must not be empty string, omit the field to use the local time zone of the KubeRay operator"
    end
    if v.tz_offset(s.timeZone, 0) == nil then
      return string.format("invalid time zone: unknown time zone %s", s.timeZone)
    end
  end
  local err = M.job_spec(s.jobTemplate or {})
  if err then return "invalid RayJob template: " .. err end
  return nil, sched
end

function M.service(svc)
  local err = M.name("RayService", svc.metadata.name, M.MAX_SERVICE_NAME)
  if err then return err end
  local u = svc.spec.upgradeStrategy
  local t = present(u) and u.type or nil
  if present(t) and t ~= "None" and t ~= "NewCluster" and t ~= incr.STRATEGY then
    return string.format("The RayService spec is invalid: Spec.UpgradeStrategy.Type value %s is invalid, " ..
      "valid options are %s, NewCluster, or None", t, incr.STRATEGY)
  end
  return incr.validate(svc) or M.cluster_spec(svc.spec.rayClusterConfig)
end

return M
