-- RayCronJob (KubeRay 1.7, alpha): a RayJob from spec.jobTemplate at each
-- time of spec.schedule, read in spec.timeZone's wall clock (UTC without
-- one), as KubeRay's RayCronJob controller makes them. The RayJob of a
-- schedule time is named <cronjob>-<minutes since the epoch>, labelled
-- ray.io/cronjob-name, annotated ray.io/cronjob-scheduled-timestamp (the
-- time, RFC 3339 UTC) and owned by the RayCronJob (deleting it deletes
-- them). Times are taken one at a time from status.lastScheduleTime (or
-- the creation): every time missed while suspended or away makes its
-- RayJob, one per reconcile, in order, as in KubeRay 1.7, which has no
-- startingDeadlineSeconds, concurrencyPolicy or history limits (a
-- RayJob's ttlSecondsAfterFinished and deletionStrategy clean up after
-- it). An invalid spec gets a Warning InvalidRayCronJobSpec Event and
-- nothing else; a suspended one a SuspendedRayCronJob Event.
local v = volray
local cron = require("cron")
local validate = require("rayvalidate")

local CRONJOBS = "ray.io/v1/raycronjobs"
local RAYJOBS = "ray.io/v1/rayjobs"
local NAME_LABEL = "ray.io/cronjob-name"
local SCHEDULED_AT = "ray.io/cronjob-scheduled-timestamp"

local controller = {
  primary = CRONJOBS,
}

local function present(x) return x ~= nil and x ~= v.null end

local function rayjob_for(cj, at)
  return {
    apiVersion = "ray.io/v1", kind = "RayJob",
    metadata = {
      name = cj.metadata.name .. "-" .. string.format("%d", at // 60),
      namespace = cj.metadata.namespace,
      labels = { [NAME_LABEL] = cj.metadata.name },
      annotations = { [SCHEDULED_AT] = v.format_time(at) },
      ownerReferences = v.array({ v.owner_ref(cj) }),
    },
    spec = v.deepcopy(cj.spec.jobTemplate),
  }
end

function controller.reconcile(req)
  local cj = v.get(CRONJOBS, req.namespace, req.name)
  if cj == nil or cj.metadata.deletionTimestamp ~= nil then return nil end
  local bad, sched = validate.cronjob(cj, cron)
  if bad then
    v.event(cj, "Warning", "InvalidRayCronJobSpec", string.format("%s/%s: %s",
      cj.metadata.namespace, cj.metadata.name, bad))
    return nil
  end
  if cj.spec.suspend == true then
    v.event(cj, "Normal", "SuspendedRayCronJob",
      "RayCronJob suspended, no new RayJobs will be created")
    return nil
  end

  local zone = present(cj.spec.timeZone) and cj.spec.timeZone or nil
  local now = v.time()
  cj.status = cj.status or {}
  local earliest = v.time(present(cj.status.lastScheduleTime) and
    cj.status.lastScheduleTime or cj.metadata.creationTimestamp)
  local at = cron.next(sched, earliest, zone)
  if at == nil then return nil end
  if at > now then return { requeue_after = at - now + 0.1 } end

  local job = rayjob_for(cj, at)
  local created, err, code = v.create(job)
  if created == nil and code ~= 409 then
    v.event(cj, "Warning", "FailedCreate", "Error creating RayJob " ..
      job.metadata.name .. ": " .. tostring(err))
    error("creating RayJob " .. job.metadata.name .. ": " .. tostring(err), 0)
  elseif created ~= nil then
    v.event(cj, "Normal", "Created", "Created RayJob " .. job.metadata.name)
  end
  -- 409: this time's RayJob was made already (a status write was lost).
  cj.status.lastScheduleTime = v.format_time(at)
  local out, uerr, ucode = v.update_status(cj)
  if out == nil then
    if ucode == 409 then return { requeue = true } end
    if ucode ~= 404 then error("updating status: " .. tostring(uerr), 0) end
    return nil
  end
  local nxt = cron.next(sched, at, zone)
  if nxt == nil then return nil end
  if nxt <= now then return { requeue = true } end
  return { requeue_after = nxt - now + 0.1 }
end

return controller
