-- priority: what matters more goes first and may push out what matters
-- less.
--
-- Jobs are ordered by their priority (the value of the PodGroup's
-- priorityClassName), tasks within a job by theirs (the pod's
-- spec.priority, or the annotation volcano.sh/task-priority). A running
-- task may be preempted only by a job of higher priority (within one job:
-- by a task of higher priority). A job is starving while fewer of its
-- tasks are ready or waiting than it has.
--
-- Arguments: none.
local P = {}

-- Order keys (lower first), computed once per job or task.
function P.job_order_key(ssn, job)
  return -job.priority
end

function P.task_order_key(ssn, task)
  return -task.priority
end

function P.preemptable(ssn, preemptor, candidates)
  local out = {}
  local pj = preemptor.job
  for _, v in ipairs(candidates) do
    if v.job.key == pj.key then
      if v.priority < preemptor.priority then out[#out + 1] = v end
    elseif v.job.priority < pj.priority then
      out[#out + 1] = v
    end
  end
  return out
end

-- gangpreempt: only jobs of lower priority give; gangreclaim is about
-- queues' shares, not priority.
function P.evictable(ssn, ctx, candidates)
  if ctx.kind ~= "gangpreempt" then return candidates end
  local out = {}
  for _, v in ipairs(candidates) do
    if v.job.priority < ctx.job.priority then out[#out + 1] = v end
  end
  return out
end

function P.job_starving(ssn, job)
  return job.ready + job.waiting < job.task_num
end

return P
