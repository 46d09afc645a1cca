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
local total

function D.open(ssn)
  total = ssn.total
end

-- The job's dominant share as its order key (lower first).
function D.job_order_key(ssn, job)
  return res.share(job.allocated, total)
end

function D.preemptable(ssn, preemptor, candidates)
  local out = {}
  local mine = res.add(res.clone(preemptor.job.allocated), preemptor.resreq)
  local ls = res.share(mine, total)
  for _, v in ipairs(candidates) do
    local theirs = res.sub(res.clone(v.job.allocated), v.resreq)
    local rs = res.share(theirs, total)
    if ls < rs or math.abs(ls - rs) <= 1e-6 then out[#out + 1] = v end
  end
  return out
end

return D
