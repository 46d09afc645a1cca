-- overcommit: admit jobs while the cluster, stretched by a factor, has
-- room for their minimum.
--
-- A PodGroup with minResources is admitted (Pending -> Inqueue) only
-- while the minimum resources of the jobs already admitted but not yet
-- running, plus its own, fit in total * overcommit-factor minus what is
-- in use. Jobs without minResources are always admitted; a group of one
-- (a bare pod's) is left to the other plugins: it reserves nothing, so
-- the cluster's room is no reason to hold it back.
--
-- Arguments:
--   overcommit-factor  number >= 1, default 1.2
local res = require("sched.res")

local O = {
  arguments = {
    ["overcommit-factor"] = { type = "number", default = 1.2, min = 1 },
  },
}

local idle, inqueue

function O.open(ssn, args)
  local used = res.new()
  inqueue = res.new()
  for _, q in pairs(ssn.queues) do
    res.add(used, q.allocated)
    res.add(inqueue, q.inqueue)
  end
  idle = res.sub(res.scale(ssn.total, args["overcommit-factor"]), used)
end

function O.job_enqueueable(ssn, job)
  if job.min_resources == nil then return 1 end
  if job.min_available <= 1 then return 0 end
  local want = res.add(res.clone(inqueue), job.min_resources)
  if res.less_equal(want, idle) then return 1 end
  return -1
end

function O.job_enqueued(ssn, job)
  if job.min_resources ~= nil then res.add(inqueue, job.min_resources) end
end

return O
