-- drf: dominant resource fairness between jobs.
--
-- A job's share is its largest fraction of any one cluster resource
-- (allocated / total); jobs with the lower share go first. A task may be
-- preempted for another job only if, afterwards, the preemptor's share is
-- still no larger than the victim job's.
--
-- Arguments: none.
local res = require("sched.res")

local D = {}
local total, alloc

local function share(key)
  return res.share(alloc[key], total)
end

function D.open(ssn)
  total = ssn.total
  alloc = {}
  for _, job in ipairs(ssn.jobs) do alloc[job.key] = res.clone(job.allocated) end
end

function D.job_order(ssn, a, b)
  local sa, sb = share(a.key), share(b.key)
  if sa < sb then return -1 end
  if sa > sb then return 1 end
  return 0
end

function D.on_allocate(ssn, task)
  local a = alloc[task.job.key]
  if a then res.add(a, task.resreq) end
end

function D.on_deallocate(ssn, task)
  local a = alloc[task.job.key]
  if a then res.sub(a, task.resreq) end
end

function D.preemptable(ssn, preemptor, candidates)
  local out = {}
  local mine = res.add(res.clone(alloc[preemptor.job.key]), preemptor.resreq)
  local ls = res.share(mine, total)
  for _, v in ipairs(candidates) do
    local theirs = res.sub(res.clone(alloc[v.job.key]), v.resreq)
    local rs = res.share(theirs, total)
    if ls < rs or math.abs(ls - rs) <= 1e-6 then out[#out + 1] = v end
  end
  return out
end

return D
