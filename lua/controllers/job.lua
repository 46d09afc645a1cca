-- Job: run pods until enough of them succeed. Up to spec.parallelism
-- pods run at once, never more than the completions still missing; a
-- Job without completions is done when one pod has succeeded and none is
-- left running. Failed pods are replaced after a back-off (10 s doubling
-- per failure) until more than backoffLimit have failed, or the Job ran
-- longer than activeDeadlineSeconds; then its running pods are deleted
-- and it is Failed. Indexed Jobs give each pod a completion index (an
-- annotation, a label and JOB_COMPLETION_INDEX) and finish when every
-- index has succeeded. A suspended Job deletes its running pods and
-- waits. ttlSecondsAfterFinished deletes a finished Job and its pods. A
-- finished Job also carries the interim condition kube-controller-manager
-- sets first (SuccessCriteriaMet, FailureTarget), which kube-apiserver
-- wants beside Complete or Failed.
local v = volray
local podutil = require("podutil")
local ju = require("jobutil")

local JOBS = "batch/v1/jobs"
local MAX_BURST = 500  -- creations or deletions per reconcile, like upstream

local controller = {
  primary = JOBS,
  owns = { "v1/pods" },
}

local function present(x)
  return x ~= nil and x ~= v.null
end

local function finished(st)
  return ju.is_true(st, "Complete") or ju.is_true(st, "Failed")
end

local function owned_pods(job)
  local out = {}
  for _, p in ipairs(v.list("v1/pods", job.metadata.namespace, { owner = job.metadata.uid })) do
    if v.is_controlled_by(p, job) then out[#out + 1] = p end
  end
  return out
end

-- Delete pods (as many as allowed); returns how many went.
local function delete_pods(job, list, n)
  local deleted = 0
  for i = 1, math.min(n or #list, #list, MAX_BURST) do
    local name = list[i].metadata.name
    local ok, err, code = v.delete("v1/pods", job.metadata.namespace, name)
    if not ok and code ~= 404 then
      v.event(job, "Warning", "FailedDelete", "Error deleting: " .. tostring(err))
      error("deleting pod " .. name .. ": " .. tostring(err), 0)
    end
    deleted = deleted + 1
    v.event(job, "Normal", "SuccessfulDelete", "Deleted pod: " .. name)
  end
  return deleted
end

local function create_pod(job, index)
  local prefix = job.metadata.name .. "-"
  local pod
  if index ~= nil then
    local s = tostring(index)
    pod = podutil.from_template(job, job.spec.template, prefix .. s .. "-",
      { [ju.INDEX_KEY] = s })
    pod.metadata.annotations[ju.INDEX_KEY] = s
    ju.add_index_env(pod.spec)
    if not present(pod.spec.hostname) then pod.spec.hostname = job.metadata.name .. "-" .. s end
  else
    pod = podutil.from_template(job, job.spec.template, prefix)
  end
  local created, err = v.create(pod)
  if not created then
    v.event(job, "Warning", "FailedCreate", "Error creating: " .. tostring(err))
    error("creating pod: " .. tostring(err), 0)
  end
  v.event(job, "Normal", "SuccessfulCreate", "Created pod: " .. created.metadata.name)
end

-- Create or delete pods of a NonIndexed Job; returns the active count.
local function manage_nonindexed(job, active, succeeded, can_create)
  local parallelism = job.spec.parallelism or 1
  local completions = job.spec.completions
  local want
  if not present(completions) then
    want = succeeded > 0 and #active or parallelism
  else
    want = math.max(0, math.min(parallelism, completions - succeeded))
  end
  if #active > want then
    podutil.sort_for_deletion(active)
    return #active - delete_pods(job, active, #active - want)
  end
  if #active < want and can_create then
    local n = math.min(want - #active, MAX_BURST)
    for _ = 1, n do create_pod(job, nil) end
    return #active + n
  end
  return #active
end

-- The same for an Indexed Job: one active pod per missing index.
local function manage_indexed(job, active, completed, can_create)
  local parallelism = job.spec.parallelism or 1
  local completions = job.spec.completions or 0
  local by_index, extra, valid = {}, {}, {}
  for _, p in ipairs(active) do
    local i = ju.pod_index(p)
    if i == nil or i >= completions or completed[i] or by_index[i] ~= nil then
      extra[#extra + 1] = p
    else
      by_index[i] = p
      valid[#valid + 1] = p
    end
  end
  local ncompleted = 0
  for _ in pairs(completed) do ncompleted = ncompleted + 1 end
  local want = math.max(0, math.min(parallelism, completions - ncompleted))
  if #valid > want then
    -- Keep the lowest indexes running.
    table.sort(valid, function(a, b) return ju.pod_index(a) > ju.pod_index(b) end)
    for i = 1, #valid - want do extra[#extra + 1] = valid[i] end
  end
  if #extra > 0 then
    local gone = delete_pods(job, extra)
    return #active - gone
  end
  if #valid < want and can_create then
    local n = 0
    for i = 0, completions - 1 do
      if n >= want - #valid or n >= MAX_BURST then break end
      if not completed[i] and by_index[i] == nil then
        create_pod(job, i)
        n = n + 1
      end
    end
    return #active + n
  end
  return #active
end

-- Delete a finished Job once its time to live is over.
local function check_ttl(job, now)
  local ttl = job.spec.ttlSecondsAfterFinished
  if not present(ttl) then return nil end
  local at
  for _, c in ipairs(job.status.conditions or {}) do
    if (c.type == "Complete" or c.type == "Failed") and c.status == "True" then
      at = c.lastTransitionTime and v.time(c.lastTransitionTime)
    end
  end
  if at == nil and job.status.completionTime then at = v.time(job.status.completionTime) end
  if at == nil then return nil end
  local left = at + ttl - now
  if left > 0 then return { requeue_after = left } end
  local ok, err, code = v.delete(JOBS, job.metadata.namespace, job.metadata.name,
    { propagation = "Background" })
  if not ok and code ~= 404 then error("deleting expired job: " .. tostring(err), 0) end
  return nil
end

-- The earlier of two requeue times (nil means none).
local function sooner(a, b)
  if a == nil then return b end
  if b == nil or a <= b then return a end
  return b
end

function controller.reconcile(req)
  local job = v.get(JOBS, req.namespace, req.name)
  if job == nil or job.metadata.deletionTimestamp ~= nil then return nil end
  job.status = job.status or {}
  local st = job.status
  local now_s, now = v.time(), v.now()
  if finished(st) then return check_ttl(job, now_s) end

  local spec = job.spec
  local indexed = spec.completionMode == "Indexed"
  local pods = owned_pods(job)
  local active, succ, fail = {}, {}, {}
  for _, p in ipairs(pods) do
    local phase = podutil.phase(p)
    if phase == "Succeeded" then
      succ[#succ + 1] = p
    elseif phase == "Failed" then
      fail[#fail + 1] = p
    elseif not podutil.is_terminating(p) then
      active[#active + 1] = p
    end
  end

  -- Finished pods are counted from what exists, never below what the
  -- status already says (a user may delete finished pods).
  local completed = {}
  local succeeded
  if indexed then
    completed = ju.parse_indexes(st.completedIndexes, spec.completions or 0)
    for _, p in ipairs(succ) do
      local i = ju.pod_index(p)
      if i ~= nil and i < (spec.completions or 0) then completed[i] = true end
    end
    succeeded = 0
    for _ in pairs(completed) do succeeded = succeeded + 1 end
  else
    succeeded = math.max(st.succeeded or 0, #succ)
  end
  local failed = math.max(st.failed or 0, #fail)

  local suspended = spec.suspend == true
  local requeue
  local fail_reason, fail_message
  if not suspended then
    local limit = spec.backoffLimit or 6
    local restarts = 0
    if spec.template.spec.restartPolicy == "OnFailure" then restarts = ju.restarts(active) end
    if failed > limit or (restarts > 0 and restarts >= math.max(limit, 1)) then
      fail_reason, fail_message = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
    elseif present(spec.activeDeadlineSeconds) and st.startTime then
      local start = v.time(st.startTime)
      if start ~= nil then
        local left = start + spec.activeDeadlineSeconds - now_s
        if left <= 0 then
          fail_reason, fail_message = "DeadlineExceeded", "Job was active longer than specified deadline"
        else
          requeue = left
        end
      end
    end
  end

  local nactive
  if fail_reason ~= nil then
    podutil.sort_for_deletion(active)
    local gone = delete_pods(job, active)
    failed = failed + gone
    nactive = #active - gone
    -- kube-apiserver (1.31 on) refuses Failed=True without the interim
    -- FailureTarget=True that kube-controller-manager sets first.
    ju.set_condition(st, "FailureTarget", "True", fail_reason, fail_message, now)
    ju.set_condition(st, "Failed", "True", fail_reason, fail_message, now)
    v.event(job, "Warning", fail_reason, fail_message)
  else
    if suspended then
      nactive = #active - delete_pods(job, active)
      if ju.set_condition(st, "Suspended", "True", "JobSuspended", "Job suspended", now) then
        v.event(job, "Normal", "Suspended", "Job suspended")
      end
    else
      if ju.is_true(st, "Suspended") then
        ju.set_condition(st, "Suspended", "False", "JobResumed", "Job resumed", now)
        v.event(job, "Normal", "Resumed", "Job resumed")
        st.startTime = now
        if present(spec.activeDeadlineSeconds) then requeue = spec.activeDeadlineSeconds end
      end
      if not present(st.startTime) then
        st.startTime = now
        if present(spec.activeDeadlineSeconds) then requeue = spec.activeDeadlineSeconds end
      end
      -- Failed pods are replaced only after their back-off.
      local wait = ju.backoff_remaining(succ, fail, now_s)
      if wait > 0 then requeue = sooner(requeue, wait) end
      if indexed then
        nactive = manage_indexed(job, active, completed, wait <= 0)
      else
        nactive = manage_nonindexed(job, active, succeeded, wait <= 0)
      end
    end
    local complete
    if indexed or present(spec.completions) then
      complete = succeeded >= (spec.completions or 0) and nactive == 0
    else
      complete = succeeded > 0 and nactive == 0
    end
    if complete and not suspended then
      -- Likewise Complete=True wants SuccessCriteriaMet=True beside it.
      ju.set_condition(st, "SuccessCriteriaMet", "True", "CompletionsReached",
        "Reached expected number of succeeded pods", now)
      ju.set_condition(st, "Complete", "True", "CompletionsReached",
        "Reached expected number of succeeded pods", now)
      st.completionTime = now
      v.event(job, "Normal", "Completed", "Job completed")
      requeue = nil
    end
  end

  local ready = 0
  for _, p in ipairs(active) do
    if v.is_true(p, "Ready") then ready = ready + 1 end
  end
  if nactive == 0 then ready = 0 end
  st.active = nactive > 0 and nactive or nil
  st.succeeded = succeeded > 0 and succeeded or nil
  st.failed = failed > 0 and failed or nil
  st.ready = ready
  if indexed then
    local s = ju.format_indexes(completed)
    st.completedIndexes = s ~= "" and s or nil
  end
  local out, err, code = v.update_status(job)
  if out == nil then
    if code == 409 then return { requeue = true } end
    if code == 404 then return nil end
    error("updating job status: " .. tostring(err), 0)
  end
  if finished(out.status or {}) then return check_ttl(out, v.time()) end
  if requeue ~= nil then return { requeue_after = requeue } end
  return nil
end

return controller
