-- CronJob: a Job from spec.jobTemplate at each time of spec.schedule (in
-- spec.timeZone's wall clock, UTC without one), as kube-controller-manager's
-- CronJob controller (v2) runs them. A Job is named
-- <cronjob>-<minutes since the epoch of its scheduled time>, so one
-- schedule time never makes two. Times missed while the controller was
-- away (or the CronJob suspended) make one Job, for the most recent of
-- them, unless it is more than startingDeadlineSeconds late.
-- concurrencyPolicy Allow runs Jobs side by side, Forbid skips a time
-- while one is active (and runs it once that one ends, if still in its
-- deadline), Replace deletes the active ones first. status.active lists
-- the running Jobs, lastScheduleTime the time of the latest, and
-- lastSuccessfulTime when the latest successful one finished; finished
-- Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit are
-- deleted, oldest first. A suspended CronJob starts nothing.
local v = volray
local cron = require("cron")
local ju = require("jobutil")

local CRONJOBS = "batch/v1/cronjobs"
local JOBS = "batch/v1/jobs"
local SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"

local controller = {
  primary = CRONJOBS,
  owns = { JOBS },
}

local function present(x) return x ~= nil and x ~= v.null end

local function finished(job)
  local st = job.status or {}
  if ju.is_true(st, "Complete") then return "Complete" end
  if ju.is_true(st, "Failed") then return "Failed" end
  return nil
end

local function owned_jobs(cj)
  local out = {}
  for _, j in ipairs(v.list(JOBS, cj.metadata.namespace, { owner = cj.metadata.uid })) do
    if v.is_controlled_by(j, cj) then out[#out + 1] = j end
  end
  return out
end

-- Bring status.active and lastSuccessfulTime up to date with the Jobs.
local function track(cj, jobs)
  local st = cj.status
  local active, by_uid = {}, {}
  for _, ref in ipairs(st.active or {}) do active[ref.uid] = ref end
  for _, j in ipairs(jobs) do
    local uid = j.metadata.uid
    by_uid[uid] = true
    local done = finished(j)
    if active[uid] == nil and done == nil then
      v.event(cj, "Warning", "UnexpectedJob",
        "Saw a job that the controller did not create or forgot: " .. j.metadata.name)
    elseif active[uid] ~= nil and done ~= nil then
      active[uid] = nil
      v.event(cj, "Normal", "SawCompletedJob", "Saw completed job: " ..
        j.metadata.name .. ", condition: " .. done)
    end
    local ct = j.status and j.status.completionTime
    if done == "Complete" and present(ct) and (not present(st.lastSuccessfulTime) or
        v.time(ct) > v.time(st.lastSuccessfulTime)) then
      st.lastSuccessfulTime = ct
    end
  end
  for uid, ref in pairs(active) do
    if not by_uid[uid] then
      v.event(cj, "Normal", "MissingJob", "Active job went missing: " .. ref.name)
      active[uid] = nil
    end
  end
  local list = {}
  for _, ref in pairs(active) do list[#list + 1] = ref end
  table.sort(list, function(a, b) return a.name < b.name end)
  st.active = #list > 0 and v.array(list) or nil
end

-- The most recent schedule time not yet run, as mostRecentScheduleTime:
-- after lastScheduleTime (or creation), not before now - the deadline.
local function most_recent(cj, sched, zone, now)
  local earliest = v.time(cj.status.lastScheduleTime or cj.metadata.creationTimestamp)
  local sds = cj.spec.startingDeadlineSeconds
  if present(sds) and now - sds > earliest then earliest = now - sds end
  local t1 = cron.next(sched, earliest, zone)
  if t1 == nil or t1 > now then return nil, 0 end
  local t2 = cron.next(sched, t1, zone)
  if t2 == nil or t2 > now then return t1, 1 end
  local gap = t2 - t1
  local missed = (now - t1) // gap + 1
  local t = cron.next(sched, t1 + (missed - 2) * gap, zone)
  local recent
  while t ~= nil and t <= now do
    recent = t
    t = cron.next(sched, t, zone)
  end
  return recent, missed
end

local function job_for(cj, at, zone)
  local tmpl = cj.spec.jobTemplate or {}
  local md = tmpl.metadata or {}
  local ann = v.deepcopy(md.annotations or {})
  ann[SCHEDULED_AT] = cron.format(at, zone)
  return {
    apiVersion = "batch/v1", kind = "Job",
    metadata = {
      name = cj.metadata.name .. "-" .. string.format("%d", at // 60),
      namespace = cj.metadata.namespace,
      labels = v.deepcopy(md.labels or {}),
      annotations = ann,
      ownerReferences = v.array({ v.owner_ref(cj) }),
    },
    spec = v.deepcopy(tmpl.spec or {}),
  }
end

local function delete_job(cj, name)
  local ok, err, code = v.delete(JOBS, cj.metadata.namespace, name,
    { propagation = "Background" })
  if not ok and code ~= 404 then error("deleting job " .. name .. ": " .. tostring(err), 0) end
  v.event(cj, "Normal", "SuccessfulDelete", "Deleted job " .. name)
end

-- Delete finished Jobs beyond the history limits, oldest start first.
local function cleanup(cj, jobs)
  local limits = { Complete = cj.spec.successfulJobsHistoryLimit,
    Failed = cj.spec.failedJobsHistoryLimit }
  for kind, limit in pairs(limits) do
    if present(limit) then
      local done = {}
      for _, j in ipairs(jobs) do
        if finished(j) == kind then done[#done + 1] = j end
      end
      table.sort(done, function(a, b)
        local sa = a.status and a.status.startTime or ""
        local sb = b.status and b.status.startTime or ""
        if sa ~= sb then return sa < sb end
        return a.metadata.name < b.metadata.name
      end)
      for i = 1, #done - limit do delete_job(cj, done[i].metadata.name) end
    end
  end
end

local function write_status(cj)
  local out, err, code = v.update_status(cj)
  if out == nil then
    if code == 409 then return false end
    if code ~= 404 then error("updating status: " .. tostring(err), 0) end
  end
  return true
end

-- Look again a little after the next schedule time.
local function requeue_next(sched, zone, now)
  local t = cron.next(sched, now, zone)
  if t == nil then return nil end
  return { requeue_after = t - now + 0.1 }
end

function controller.reconcile(req)
  local cj = v.get(CRONJOBS, req.namespace, req.name)
  if cj == nil or cj.metadata.deletionTimestamp ~= nil then return nil end
  cj.status = cj.status or {}
  local jobs = owned_jobs(cj)
  track(cj, jobs)
  cleanup(cj, jobs)
  if cj.spec.suspend == true then
    if not write_status(cj) then return { requeue = true } end
    return nil
  end

  local zone = present(cj.spec.timeZone) and cj.spec.timeZone or nil
  local sched, perr = cron.parse(cj.spec.schedule or "")
  if sched ~= nil and zone ~= nil and v.tz_offset(zone, 0) == nil then
    sched, perr = nil, "unknown time zone " .. zone
  end
  if sched == nil then
    v.event(cj, "Warning", "UnparseableSchedule", "unparseable schedule: " ..
      tostring(cj.spec.schedule) .. " : " .. tostring(perr))
    if not write_status(cj) then return { requeue = true } end
    return nil
  end
  local now = v.time()
  local at, missed = most_recent(cj, sched, zone, now)
  if missed > 100 then
    v.event(cj, "Warning", "TooManyMissedTimes", string.format(
      "too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed))
  end
  if at == nil then
    if not write_status(cj) then return { requeue = true } end
    return requeue_next(sched, zone, now)
  end
  local sds = cj.spec.startingDeadlineSeconds
  if present(sds) and at + sds < now then
    v.event(cj, "Warning", "MissSchedule", "Missed scheduled time to start a job: " ..
      v.format_time(at))
    if not write_status(cj) then return { requeue = true } end
    return requeue_next(sched, zone, now)
  end

  local job = job_for(cj, at, zone)
  for _, ref in ipairs(cj.status.active or {}) do
    if ref.name == job.metadata.name then
      if not write_status(cj) then return { requeue = true } end
      return requeue_next(sched, zone, now)
    end
  end
  local policy = cj.spec.concurrencyPolicy or "Allow"
  if policy == "Forbid" and cj.status.active ~= nil and #cj.status.active > 0 then
    v.event(cj, "Normal", "JobAlreadyActive",
      "Not starting job because prior execution is running and concurrency policy is Forbid")
    if not write_status(cj) then return { requeue = true } end
    return requeue_next(sched, zone, now)
  end
  if policy == "Replace" then
    for _, ref in ipairs(cj.status.active or {}) do delete_job(cj, ref.name) end
    cj.status.active = nil
  end

  local created, err, code = v.create(job)
  if created == nil then
    if code ~= 409 then
      v.event(cj, "Warning", "FailedCreate", "Error creating job: " .. tostring(err))
      error("creating job: " .. tostring(err), 0)
    end
    -- Already made for this time (a status write was lost): take it as run.
    created = v.get(JOBS, cj.metadata.namespace, job.metadata.name)
    if created == nil or not v.is_controlled_by(created, cj) then
      error("job " .. job.metadata.name .. " exists and is not this CronJob's", 0)
    end
  else
    v.event(cj, "Normal", "SuccessfulCreate", "Created job " .. created.metadata.name)
  end
  if finished(created) == nil then
    local active = cj.status.active or v.array()
    active[#active + 1] = { kind = "Job", apiVersion = "batch/v1",
      namespace = created.metadata.namespace, name = created.metadata.name,
      uid = created.metadata.uid, resourceVersion = created.metadata.resourceVersion }
    cj.status.active = active
  end
  cj.status.lastScheduleTime = v.format_time(at)
  if not write_status(cj) then return { requeue = true } end
  return requeue_next(sched, zone, now)
end

return controller
