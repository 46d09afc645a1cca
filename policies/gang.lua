-- gang: all of a job's minimum, or none of it.
--
-- A job (PodGroup) runs only when at least minMember of its tasks can run
-- together, and each role (the pod annotation volcano.sh/task-spec) at
-- least its minTaskMember. A job with fewer valid tasks than that is not
-- scheduled at all (NotEnoughTasks / NotEnoughPodsOfTask); a job is ready
-- once that many tasks are placed, pipelined once that many are placed or
-- reserved, and starving until then. Jobs that are not ready yet go
-- first. A task may be taken away from a job (preempted or reclaimed)
-- only while its job keeps more than its minimum. At the end of a session
-- a job that could not be placed gets the condition Unschedulable with
-- the reason NotEnoughResources, a ready one Scheduled.
--
-- Arguments: none.
local G = {}

local function roles_meet(job, field)
  for role, min in pairs(job.min_task_member) do
    local r = job.roles[role]
    local n = 0
    if r ~= nil then
      n = r[field]
      if field == "ready_or_pipelined" then n = r.ready + r.pipelined end
    end
    if n < min then return false, role, n, min end
  end
  return true
end

local function ready(job)
  return job.ready >= job.min_available and roles_meet(job, "ready")
end

function G.job_valid(ssn, job)
  if job.valid < job.min_available then
    return false, "NotEnoughTasks", string.format(
      "Not enough valid tasks for gang-scheduling, valid: %d, min: %d",
      job.valid, job.min_available)
  end
  local ok, role, n, min = roles_meet(job, "valid")
  if not ok then
    return false, "NotEnoughPodsOfTask", string.format(
      "Not enough valid pods of each task for gang-scheduling, task: %s, valid: %d, min: %d",
      role, n, min)
  end
  return true
end

function G.job_ready(ssn, job)
  return ready(job)
end

function G.job_pipelined(ssn, job)
  if job.ready + job.waiting >= job.min_available and
      roles_meet(job, "ready_or_pipelined") then
    return 1
  end
  return -1
end

function G.job_starving(ssn, job)
  return job.ready + job.waiting < job.min_available
end

-- Jobs that are not ready yet first (an order key: lower first).
function G.job_order_key(ssn, job)
  return ready(job) and 1 or 0
end

local occupied

function G.open(ssn)
  occupied = {}
end

local function victims(ssn, preemptor, candidates)
  local out = {}
  for _, v in ipairs(candidates) do
    local j = v.job
    local n = occupied[j.key] or j.ready
    if j.min_available <= n - 1 or j.min_available == 1 then
      occupied[j.key] = n - 1
      out[#out + 1] = v
    end
  end
  return out
end

G.preemptable = victims
G.reclaimable = victims

-- The gang actions keep gangs whole themselves (safe and whole bundles):
-- every candidate may go.
function G.evictable(ssn, ctx, candidates) return candidates end

-- Volcano's histogram: "3 Pending, 4 minAvailable", largest first.
local function fit_error(job)
  local reasons = {}
  local function add(n, what)
    if n > 0 then reasons[#reasons + 1] = { n = n, what = what } end
  end
  add(job.pending, "Pending")
  add(job.pipelined, "Pipelined")
  add(job.allocated_num, "Allocated")
  add(job.bound, "Bound")
  add(job.running, "Running")
  add(job.releasing, "Releasing")
  add(job.succeeded, "Succeeded")
  add(job.failed, "Failed")
  reasons[#reasons + 1] = { n = job.min_available, what = "minAvailable" }
  table.sort(reasons, function(x, y)
    if x.n ~= y.n then return x.n > y.n end
    return x.what < y.what
  end)
  local parts = {}
  for i, r in ipairs(reasons) do parts[i] = r.n .. " " .. r.what end
  return "pod group is not ready, " .. table.concat(parts, ", ")
end

function G.close(ssn)
  for _, job in ipairs(ssn:active_jobs()) do
    if job.podgroup and job.phase ~= "Pending" and job.task_num > 0 then
      if ready(job) then
        ssn:job_condition(job, "Scheduled",
          "tasks in gang are ready to be scheduled", "")
      else
        local unready = job.min_available - job.ready - job.waiting
        if unready < 0 then unready = 0 end
        ssn:job_condition(job, "Unschedulable", "NotEnoughResources",
          string.format("%d/%d tasks in gang unschedulable: %s",
            unready, job.task_num, fit_error(job)))
      end
    end
  end
end

return G
