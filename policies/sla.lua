-- sla: a job that has waited past its service-level waiting time goes
-- ahead (Volcano's sla plugin).
--
-- A job's waiting time is its PodGroup's (or bare pod's) annotation
-- `sla-waiting-time`, else the plugin's argument of the same name; both
-- are Go durations ("1h30m", "90s", "1h2m3s4ms"). A job with one is
-- ordered before jobs without, jobs with one by their deadline (creation
-- + waiting time), earliest first. Once the deadline has passed
-- (ssn.now), the plugin votes for the job in enqueue and job_pipelined:
-- in the tier where sla sits, that vote admits the job unless a plugin of
-- the same tier votes against it, so plugins of later tiers (overcommit,
-- proportion) are not asked. A waiting time that does not parse or is not
-- positive is ignored (an annotation then falls back to the argument).
--
-- Arguments:
--   sla-waiting-time  string, a duration, default none
local S = {
  arguments = {
    ["sla-waiting-time"] = { type = "string", default = "" },
  },
}

local parse = require("sched.duration").parse

-- A positive Go duration in seconds, or nil.
local function duration(text)
  local d = parse(text)
  if d == nil or d <= 0 then return nil end
  return d
end
S.duration = duration

local global, now, warned

function S.open(ssn, args)
  now = ssn.now
  local text = args["sla-waiting-time"]
  global = duration(text)
  if text ~= "" and global == nil and warned ~= text then
    warned = text	-- once, not every session
    volray.log("warn", "sla: sla-waiting-time " .. tostring(text) ..
      " is not a positive duration; ignored")
  end
end

local function waiting_time(job)
  local a = job.annotations
  local own = a and duration(a["sla-waiting-time"])
  return own or global
end

local function deadline(job)
  local w = waiting_time(job)
  if w == nil or job.created_at == nil then return nil end
  return job.created_at + w
end

-- Jobs with a deadline first, earliest first; the rest are equal here.
function S.job_order_key(ssn, job)
  return deadline(job) or math.huge
end

local function overdue(ssn, job)
  local d = deadline(job)
  if d == nil then return 0 end
  if now < d then
    -- Nothing else may change by then: a session at the deadline.
    ssn:wake_after(d - now)
    return 0
  end
  ssn:explain(job, string.format("waited %.0f s, past its SLA waiting time of %.0f s: admitted ahead",
    now - job.created_at, waiting_time(job)))
  return 1
end

S.job_enqueueable = overdue
S.job_pipelined = overdue

return S
