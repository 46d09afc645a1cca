-- RayJob: run one Ray job on a RayCluster, as KubeRay's RayJob
-- controller does. A new RayJob first gets its finalizer and then, in one
-- status write before anything is made, its submission id and cluster
-- name (Initializing): a restart at any moment finds the cluster and the
-- submission under those names instead of making second ones. Initializing
-- creates the PodGroup (Volcano) and the cluster (or finds the one named
-- by clusterSelector), waits until it is ready, then starts the job: the
-- submitter batch/v1 Job (K8sJobMode), the head's submitter sidecar
-- (SidecarMode), a POST to the dashboard (HTTPMode, from Running), or
-- waits for the user (InteractiveMode: Waiting until spec.jobId is set).
-- Running polls the dashboard until the Ray job is terminal: Complete, or
-- Failed with AppFailed; a failed submitter is SubmissionFailed; deadlines
-- (activeDeadlineSeconds, preRunningDeadlineSeconds), a submitter that
-- ended 30 s before the Ray job did, and 300 s of dashboard errors (their
-- start kept in status.jobStatusCheckFailureStartTime) fail it too; a
-- SidecarMode job whose head pod is gone fails (its cluster makes no new
-- head). A failure with backoffLimit left goes Retrying: the cluster and
-- submitter are deleted and the RayJob starts over with new ones; with
-- the annotation volray.io/retry-keeps-cluster: "true" (K8sJobMode and
-- HTTPMode) only the submitter goes and the next attempt runs on the same
-- cluster under a new submission id (the RayCluster controller replaces
-- the workers that died; the rest are kept).
-- suspend deletes them the same way (Suspending, Suspended) and resuming
-- starts over. When finished, deletionRules (the most impactful overdue
-- first), the older onSuccess/onFailure policies (after
-- ttlSecondsAfterFinished), or shutdownAfterJobFinishes with
-- ttlSecondsAfterFinished delete what they say, and the PodGroup is
-- recomputed from what is left.
-- Deleting a RayJob asks the head to stop an unfinished job (best effort)
-- before the finalizer goes.
local v = volray
local canon = require("canon")
local dash = require("raydashboard")
local jc = require("rayjobcluster")
local raypod = require("raypod")
local raypg = require("raypodgroup")
local sub = require("raysubmitter")
local validate = require("rayvalidate")

local RJ = "ray.io/v1/rayjobs"
local FINALIZER = "ray.io/rayjob-finalizer"
local REQUEUE = 3
local SUBMITTER_GRACE = 30
local STATUS_CHECK_TIMEOUT = 300
local TERMINAL_WAIT = 300
local STOP_WAIT = 10
local KEEPS_CLUSTER = "volray.io/retry-keeps-cluster"

local controller = {
  primary = RJ,
  owns = { jc.RC, jc.JOBS, raypg.PODGROUPS },
}


local function present(x)
  return x ~= nil and x ~= v.null and x ~= ""
end

local function mode(job)
  return job.spec.submissionMode or "K8sJobMode"
end

local function has_finalizer(job)
  for _, f in ipairs(job.metadata.finalizers or {}) do
    if f == FINALIZER then return true end
  end
  return false
end

local function set_finalizers(job, list)
  local out, err, code = v.patch(RJ, job.metadata.namespace, job.metadata.name,
    { metadata = { finalizers = v.array(list), resourceVersion = job.metadata.resourceVersion } })
  if out == nil and code ~= 409 and code ~= 404 then error("finalizer: " .. tostring(err), 0) end
  return out
end

local function fail(st, reason, message)
  st.jobDeploymentStatus = "Failed"
  st.reason = reason
  st.message = message
end

-- The counters and the retry decision after a pass (KubeRay's
-- checkBackoffLimitAndUpdateStatusIfNeeded), on entering Complete/Failed.
local function count_attempt(job, st)
  if st.jobDeploymentStatus == "Failed" then
    st.failed = (st.failed or 0) + 1
  elseif st.jobDeploymentStatus == "Complete" and st.jobStatus == "SUCCEEDED" then
    st.succeeded = (st.succeeded or 0) + 1
  end
  local limit = job.spec.backoffLimit
  if st.jobDeploymentStatus == "Failed" and present(limit) and st.failed < limit + 1 then
    if st.reason ~= "DeadlineExceeded" and st.reason ~= "PreRunningDeadlineExceeded"
        and st.reason ~= "JobStatusCheckTimeoutExceeded" then
      st.jobDeploymentStatus = "Retrying"
    end
  end
end

-- Deadlines: true when one has passed (status set to Failed).
local function deadline_passed(job, st, before_running, now)
  local start = present(st.startTime) and v.time(st.startTime) or nil
  if start == nil then return false end
  local ad = job.spec.activeDeadlineSeconds
  if present(ad) and now >= start + ad then
    fail(st, "DeadlineExceeded", string.format(
      "The RayJob has passed the activeDeadlineSeconds. StartTime: %s. ActiveDeadlineSeconds: %d", st.startTime, ad))
    return true
  end
  local pd = job.spec.preRunningDeadlineSeconds
  if before_running and present(pd) and now >= start + pd then
    fail(st, "PreRunningDeadlineExceeded", string.format(
      "The RayJob has passed the preRunningDeadlineSeconds. StartTime: %s. PreRunningDeadlineSeconds: %d",
      st.startTime, pd))
    return true
  end
  return false
end

-- Seconds until the nearest deadline (for the requeue), or nil.
local function next_deadline(job, st, before_running, now)
  local start = present(st.startTime) and v.time(st.startTime) or nil
  if start == nil then return nil end
  local t
  local ad, pd = job.spec.activeDeadlineSeconds, job.spec.preRunningDeadlineSeconds
  if present(ad) then t = start + ad - now end
  if before_running and present(pd) then
    local p = start + pd - now
    if t == nil or p < t then t = p end
  end
  return t
end

local function dashboard_base(job, rc)
  local port = raypod.port(rc.spec.headGroupSpec.rayStartParams, "dashboard")
  return dash.base(job.metadata.namespace, raypod.head_service_name(rc), port, rc)
end

local function new_attempt(job, st)
  if not present(st.jobId) then
    st.jobId = present(job.spec.jobId) and job.spec.jobId or (job.metadata.name .. "-" .. v.random_suffix())
  end
  if not present(st.rayClusterName) then
    if jc.uses_selector(job) then
      st.rayClusterName = jc.selected_name(job)
    else
      st.rayClusterName = job.metadata.name .. "-" .. v.random_suffix()
    end
  end
  st.startTime = v.now()
  st.endTime = nil
  st.jobDeploymentStatus = "Initializing"
  return 0
end

-- Whether the head's submitter sidecar has run to its end: a head pod
-- whose sidecar is done is never Ready again, so a job quicker than the
-- head's readiness probe would keep its RayJob Initializing for ever
-- (KubeRay 1.7 waits for the cluster's ready state first).
local function sidecar_done(job, rc)
  local heads = v.list("v1/pods", job.metadata.namespace,
    { labels = "ray.io/cluster=" .. rc.metadata.name .. ",ray.io/node-type=head" })
  for _, p in ipairs(heads) do
    for _, cs in ipairs((p.status or {}).containerStatuses or {}) do
      if cs.name == "ray-job-submitter" and (cs.state or {}).terminated ~= nil then return true end
    end
  end
  return false
end

local function initializing(job, st, now)
  if job.spec.suspend == true then
    st.jobDeploymentStatus = "Suspending"
    return 0
  end
  if deadline_passed(job, st, true, now) then return 0 end
  jc.sync_podgroup(job)
  local rc, why = jc.get_or_create(job)
  if rc == nil then
    st.message = why
    return REQUEUE
  end
  st.rayClusterStatus = rc.status
  if not present(st.dashboardURL) then
    if (rc.status or {}).state ~= "ready" and
        not (mode(job) == "SidecarMode" and sidecar_done(job, rc)) then
      local t = next_deadline(job, st, true, now)
      return t and math.min(REQUEUE, math.max(t, 0.1)) or REQUEUE
    end
    st.dashboardURL = raypod.head_fqdn(rc) .. ":" .. raypod.port(rc.spec.headGroupSpec.rayStartParams, "dashboard")
  end
  st.message = nil
  if mode(job) == "InteractiveMode" then
    st.jobDeploymentStatus = "Waiting"
    return 0
  end
  if mode(job) == "K8sJobMode" then
    local j = v.get(jc.JOBS, job.metadata.namespace, job.metadata.name)
    if j == nil then
      local out, err, code = v.create(sub.job(job, rc))
      if out == nil and code ~= 409 then
        v.event(job, "Warning", "FailedToCreateSubmitterJob", tostring(err))
        error("creating submitter Job: " .. tostring(err), 0)
      end
      if out ~= nil then
        v.event(job, "Normal", "CreatedSubmitterJob", "Created Kubernetes Job " ..
          job.metadata.namespace .. "/" .. job.metadata.name)
      end
    end
  end
  st.jobDeploymentStatus = "Running"
  return 0
end

local function waiting(job, st, now)
  if job.spec.suspend == true then
    st.jobDeploymentStatus = "Suspending"
    return 0
  end
  if deadline_passed(job, st, true, now) then return 0 end
  if present(job.spec.jobId) then
    st.jobId = job.spec.jobId
    st.jobDeploymentStatus = "Running"
    return 0
  end
  return REQUEUE
end

-- The submitter Job's outcome: "failed", "complete" with its end time, or nil.
local function submitter_state(job)
  local j = v.get(jc.JOBS, job.metadata.namespace, job.metadata.name)
  if j == nil then return nil end
  for _, c in ipairs(j.status and j.status.conditions or {}) do
    if c.status == "True" and c.type == "Failed" then return "failed", c.message end
    if c.status == "True" and c.type == "Complete" then
      return "complete", v.time(j.status.completionTime or c.lastTransitionTime)
    end
  end
  return nil
end

local function submit_http(job, base, st)
  local req = { entrypoint = job.spec.entrypoint, submission_id = st.jobId }
  local env = present(job.spec.runtimeEnvYAML) and v.yaml_decode(job.spec.runtimeEnvYAML) or nil
  if type(env) == "table" then req.runtime_env = env end
  if present(job.spec.metadata) and next(job.spec.metadata) then req.metadata = job.spec.metadata end
  if present(job.spec.entrypointNumCpus) then req.entrypoint_num_cpus = job.spec.entrypointNumCpus end
  if present(job.spec.entrypointNumGpus) then req.entrypoint_num_gpus = job.spec.entrypointNumGpus end
  if present(job.spec.entrypointResources) then req.entrypoint_resources = v.json_decode(job.spec.entrypointResources) end
  local r = dash.submit(base, req)
  if r.pending then return end
  if r.error then
    st.message = "submitting the job: " .. r.error
  elseif r.status >= 300 and not tostring(r.body):find("already exists", 1, true) then
    st.message = string.format("submitting the job: HTTP %d %s", r.status, tostring(r.body))
  else
    v.event(job, "Normal", "SubmittedJob", "Submitted Ray job " .. st.jobId)
  end
end

local function running(job, st, now, key)
  if job.spec.suspend == true then
    st.jobDeploymentStatus = "Suspending"
    return 0
  end
  if deadline_passed(job, st, false, now) then return 0 end
  local rc = v.get(jc.RC, job.metadata.namespace, st.rayClusterName)
  if rc == nil then
    fail(st, "AppFailed", "RayCluster " .. tostring(st.rayClusterName) .. " is gone")
    return 0
  end
  st.rayClusterStatus = rc.status
  local sub_state, sub_info
  if mode(job) == "K8sJobMode" then
    sub_state, sub_info = submitter_state(job)
    if sub_state == "failed" then
      fail(st, "SubmissionFailed", "the submitter Job failed: " .. tostring(sub_info or ""))
      return 0
    end
  elseif mode(job) == "SidecarMode" then
    -- The submitter lives in the head pod: without it the job is lost
    -- (the cluster makes no new head, raycluster.lua).
    local heads = v.list("v1/pods", job.metadata.namespace,
      { labels = "ray.io/cluster=" .. st.rayClusterName .. ",ray.io/node-type=head" })
    if #heads == 0 then
      fail(st, "AppFailed", "Ray head pod not found.")
      return 0
    end
  end
  local base, berr = dashboard_base(job, rc)
  local r = base and dash.job_info(base, st.jobId) or { error = berr }
  if r.pending then return REQUEUE end
  if r.error or (r.status ~= 200 and r.status ~= 404) then
    -- When the checks began failing is kept in status (KubeRay 1.7).
    if not present(st.jobStatusCheckFailureStartTime) then st.jobStatusCheckFailureStartTime = v.now() end
    local since = v.time(st.jobStatusCheckFailureStartTime)
    if now - since >= STATUS_CHECK_TIMEOUT then
      fail(st, "JobStatusCheckTimeoutExceeded", string.format(
        "Job status checks have been failing since %s; exceeded timeout of %ds (%s)",
        st.jobStatusCheckFailureStartTime, STATUS_CHECK_TIMEOUT, tostring(r.error or r.status)))
      st.jobStatusCheckFailureStartTime = nil
      return 0
    end
    return REQUEUE
  end
  st.jobStatusCheckFailureStartTime = nil
  if r.status == 404 then
    if mode(job) == "HTTPMode" then submit_http(job, base, st) end
    if sub_state == "complete" and now - sub_info >= SUBMITTER_GRACE then
      fail(st, "JobDeploymentStatusTransitionGracePeriodExceeded",
        "the submitter finished " .. SUBMITTER_GRACE .. " s ago but the Ray job was never found")
      return 0
    end
    return REQUEUE
  end
  local info = r.json or {}
  st.jobStatus = info.status or st.jobStatus
  st.message = present(info.message) and info.message or nil
  st.rayJobInfo = { startTime = dash.time_ms(info.start_time), endTime = dash.time_ms(info.end_time) }
  if not dash.TERMINAL[st.jobStatus] then
    if sub_state == "complete" and now - sub_info >= SUBMITTER_GRACE then
      fail(st, "JobDeploymentStatusTransitionGracePeriodExceeded", string.format(
        "the submitter finished %d s ago but the Ray job is still %s", SUBMITTER_GRACE, st.jobStatus))
      return 0
    end
    return REQUEUE
  end
  -- A terminal Ray job: wait for the submitter to print the last logs,
  -- but not for ever.
  local ended = st.rayJobInfo.endTime and v.time(st.rayJobInfo.endTime) or now
  if mode(job) == "K8sJobMode" and sub_state ~= "complete" and now - ended < TERMINAL_WAIT then
    return REQUEUE
  end
  if st.jobStatus == "FAILED" then
    fail(st, "AppFailed", st.message or "the Ray job failed")
  else
    st.jobDeploymentStatus = "Complete"
    st.reason = nil
  end
  return 0
end

-- Suspending and Retrying: delete the cluster and the submitter, wait
-- until both are gone, forget the attempt.
local function tear_down(job, st)
  local cluster_gone = jc.delete_cluster(job)
  local sub_gone = jc.delete_submitter(job)
  if not (cluster_gone and sub_gone) then return 1 end
  st.rayClusterStatus = nil
  st.rayClusterName = nil
  st.dashboardURL = nil
  st.jobId = nil
  st.message = nil
  st.reason = nil
  st.rayJobInfo = nil
  st.jobStatus = nil
  st.startTime = nil
  st.jobStatusCheckFailureStartTime = nil
  st.jobDeploymentStatus = st.jobDeploymentStatus == "Suspending" and "Suspended" or ""
  return 0
end

-- Whether a retry keeps the cluster: asked for by the annotation, in the
-- modes whose submission is not tied to the head pod (SidecarMode's is,
-- InteractiveMode's is the user's), and on a cluster of the job's own.
local function retry_keeps_cluster(job)
  local m = mode(job)
  return (job.metadata.annotations or {})[KEEPS_CLUSTER] == "true"
    and (m == "K8sJobMode" or m == "HTTPMode") and not jc.uses_selector(job)
end

-- Retrying on the same cluster: delete the submitter, wait until it is
-- gone, forget the attempt but not the cluster. The next submission id is
-- new (the head keeps the failed one), spec.jobId plus the attempt.
local function retry_on_cluster(job, st)
  if not jc.delete_submitter(job) then return 1 end
  local rc = v.get(jc.RC, job.metadata.namespace, st.rayClusterName)
  if rc == nil or rc.metadata.deletionTimestamp ~= nil then return tear_down(job, st) end
  local base = present(job.spec.jobId) and job.spec.jobId or job.metadata.name
  st.jobId = base .. "-retry" .. tostring(st.failed or 0) .. "-" .. v.random_suffix()
  st.dashboardURL = nil  -- wait for the cluster to be ready again
  st.message = nil
  st.reason = nil
  st.rayJobInfo = nil
  st.jobStatus = nil
  st.startTime = nil
  st.jobStatusCheckFailureStartTime = nil
  st.jobDeploymentStatus = ""
  v.event(job, "Normal", "RetryingOnCluster", string.format(
    "Retrying (attempt %d) on the same RayCluster %s/%s as submission %s",
    (st.failed or 0) + 1, job.metadata.namespace, st.rayClusterName, st.jobId))
  return 0
end

local function retrying(job, st)
  if retry_keeps_cluster(job) and present(st.rayClusterName) then return retry_on_cluster(job, st) end
  return tear_down(job, st)
end

local IMPACT = { DeleteSelf = 4, DeleteCluster = 3, DeleteWorkers = 2, DeleteNone = 1 }

local function run_policy(job, policy)
  if policy == "DeleteSelf" then
    local ok, err, code = v.delete(RJ, job.metadata.namespace, job.metadata.name, { propagation = "Background" })
    if not ok and code ~= 404 then error("deleting RayJob: " .. tostring(err), 0) end
  elseif policy == "DeleteCluster" then
    jc.delete_cluster(job)
  elseif policy == "DeleteWorkers" then
    jc.suspend_workers(job)
  end
end

-- A finished job's PodGroup describes the cluster that is left (after
-- DeleteWorkers, only the head), not the gang it started with.
local function resync_podgroup(job, st)
  if jc.uses_selector(job) or not raypg.enabled(job) or not present(st.rayClusterName) then return end
  local rc = v.get(jc.RC, job.metadata.namespace, st.rayClusterName)
  if rc == nil or rc.metadata.deletionTimestamp ~= nil then return end
  raypg.sync(job, raypg.cluster_gang(rc.spec))
end

-- Complete and Failed: the deletion rules, or shutdownAfterJobFinishes.
local function finished(job, st, now)
  resync_podgroup(job, st)
  local ended = present(st.endTime) and v.time(st.endTime) or now
  local ds = job.spec.deletionStrategy
  if present(ds) and present(ds.deletionRules) then
    local best, next_due
    for _, r in ipairs(ds.deletionRules) do
      local c = r.condition or {}
      local match = (present(c.jobStatus) and c.jobStatus == st.jobStatus)
        or (present(c.jobDeploymentStatus) and c.jobDeploymentStatus == st.jobDeploymentStatus)
      if match then
        local due = ended + (c.ttlSeconds or 0)
        if due <= now then
          if best == nil or IMPACT[r.policy] > IMPACT[best.policy] then best = r end
        elseif next_due == nil or due < next_due then
          next_due = due
        end
      end
    end
    if best ~= nil then run_policy(job, best.policy) end
    if next_due ~= nil then return next_due - now end
    return nil
  end
  if present(ds) and (present(ds.onSuccess) or present(ds.onFailure)) then
    -- The older onSuccess/onFailure, after ttlSecondsAfterFinished.
    local p = st.jobStatus == "SUCCEEDED" and ds.onSuccess or st.jobStatus == "FAILED" and ds.onFailure or nil
    if p == nil or not present(p.policy) or p.policy == "DeleteNone" then return nil end
    local left = ended + (job.spec.ttlSecondsAfterFinished or 0) - now
    if left > 0 then return left end
    run_policy(job, p.policy)
    return nil
  end
  if job.spec.shutdownAfterJobFinishes == true and not jc.uses_selector(job) then
    local left = ended + (job.spec.ttlSecondsAfterFinished or 0) - now
    if left > 0 then return left end
    jc.delete_cluster(job)
  end
  return nil
end

-- A RayJob being deleted: stop its Ray job if it may still run, then
-- let it go.
local function finalize(job)
  if not has_finalizer(job) then return nil end
  local st = job.status or {}
  if present(st.jobId) and present(st.rayClusterName) and not dash.TERMINAL[st.jobStatus or ""]
      and st.jobDeploymentStatus == "Running" then
    local rc = v.get(jc.RC, job.metadata.namespace, st.rayClusterName)
    local since = v.time(job.metadata.deletionTimestamp) or v.time()
    if rc ~= nil and v.time() - since < STOP_WAIT then
      local base = dashboard_base(job, rc)
      local r = base and dash.stop(base, st.jobId) or { error = "no dashboard" }
      if r.pending then return { requeue_after = STOP_WAIT } end
      if r.status == 200 then v.event(job, "Normal", "StoppedJob", "Stopped Ray job " .. st.jobId) end
    end
  end
  local keep = {}
  for _, f in ipairs(job.metadata.finalizers or {}) do
    if f ~= FINALIZER then keep[#keep + 1] = f end
  end
  set_finalizers(job, keep)
  return nil
end

local HANDLERS = {
  [""] = new_attempt, New = new_attempt,
  Initializing = initializing,
  Waiting = waiting,
  Running = running,
  Suspending = tear_down, Retrying = retrying,
}

local function status_text(st)
  return canon.encode(st)
end

function controller.reconcile(req)
  local job = v.get(RJ, req.namespace, req.name)
  if job == nil then
    return nil
  end
  if job.metadata.deletionTimestamp ~= nil then return finalize(job) end
  local managed = job.spec.managedBy
  if present(managed) and managed ~= validate.OPERATOR then return nil end
  job.status = job.status or {}
  local st = job.status
  local before = status_text(st)
  local bad = validate.job(job)
  if bad then
    if st.jobDeploymentStatus ~= "ValidationFailed" or st.message ~= bad then
      local meta = bad:find("metadata", 1, true) ~= nil
      v.event(job, "Warning", meta and "InvalidRayJobMetadata" or "InvalidRayJobSpec", bad)
      st.jobDeploymentStatus = "ValidationFailed"
      st.reason = "ValidationFailed"
      st.message = bad
      local out, err, code = v.update_status(job)
      if out == nil and code ~= 409 and code ~= 404 then error("status: " .. tostring(err), 0) end
    end
    return nil
  end
  if not has_finalizer(job) then
    local list = {}
    for _, f in ipairs(job.metadata.finalizers or {}) do list[#list + 1] = f end
    list[#list + 1] = FINALIZER
    if set_finalizers(job, list) == nil then return { requeue = true } end
    return nil  -- the write brings this key back
  end
  local state = st.jobDeploymentStatus or ""
  local now = v.time()
  local after
  if state == "ValidationFailed" then
    -- A spec that became valid starts again.
    st.reason, st.message = nil, nil
    st.jobDeploymentStatus = ""
    after = 0
  elseif state == "Suspended" then
    if job.spec.suspend ~= true then st.jobDeploymentStatus = "" end
    after = nil
  elseif state == "Complete" or state == "Failed" then
    after = finished(job, st, now)
  else
    after = HANDLERS[state](job, st, now, req.key)
    local ns = st.jobDeploymentStatus
    if ns ~= state and (ns == "Complete" or ns == "Failed") then
      st.endTime = v.now()
      count_attempt(job, st)
      v.event(job, ns == "Complete" and "Normal" or "Warning", ns == "Complete" and "Completed" or (st.reason or "Failed"),
        ns == "Complete" and ("Ray job " .. tostring(st.jobId) .. " " .. tostring(st.jobStatus)) or tostring(st.message))
    end
  end
  if status_text(st) ~= before then
    local out, err, code = v.update_status(job)
    if out == nil then
      if code == 409 then return { requeue = true } end
      if code == 404 then return nil end
      error("updating RayJob status: " .. tostring(err), 0)
    end
    -- The write comes back as an event; the next state runs then.
    if after == 0 then return nil end
  end
  if after == nil then return nil end
  if after <= 0 then after = 0.05 end
  return { requeue_after = after }
end

return controller
