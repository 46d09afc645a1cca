-- proportion: queues share the cluster by weight.
--
-- Each queue deserves a part of the cluster: the total is shared out by
-- weight among the queues that still want more, round after round
-- (water-filling), never beyond what a queue asks for (its allocated plus
-- pending requests) or its capability, and never below its guarantee.
-- Queues with a `parent` share out their parent's part the same way
-- (hierarchical queues); queues without one are children of `root`.
--
-- Then: queues of higher spec.priority go first, then the one with the
-- smallest share (allocated / deserved, the largest dimension); a queue
-- at or above its deserved part is overused and gets nothing more this
-- session; a task is allocatable while its queue is Open and stays within
-- its deserved part on the resources the task asks for; a job is admitted
-- (enqueue) while its queue is Open and its minResources fit the queue's
-- real capability next to what is allocated and already admitted, on
-- every resource the minResources name (memory as much as cpu) -- a
-- group of one only against a capability the queue sets; tasks of a
-- queue above its deserved part may be reclaimed by other queues.
--
-- Arguments: none.
local res = require("sched.res")

local P = {}
local total, attrs

local function update_share(a)
  a.share = res.share(a.allocated, a.deserved)
end

-- Share `amount` among sibling queues by weight (Volcano's loop). A
-- queue's real capability is bounded by `limit` (its parent's real
-- capability, the cluster for root's children), not by what its parent
-- deserves now: a queue that asks nothing yet may still admit a job.
local function fill(kids, amount, limit)
  local guarantee = res.new()
  for _, a in ipairs(kids) do res.add(guarantee, a.guarantee) end
  for _, a in ipairs(kids) do
    a.deserved = res.new()
    local room = res.add(res.sub_floor(limit, guarantee), a.guarantee)
    a.real_capability = res.min_inf(room, a.capability)
  end
  local remaining = res.clone(amount)
  local meet = {}
  while true do
    local weight = 0
    for _, a in ipairs(kids) do
      if not meet[a.name] then weight = weight + a.weight end
    end
    if weight == 0 then break end
    local old_remaining = res.clone(remaining)
    local increased, decreased = res.new(), res.new()
    for _, a in ipairs(kids) do
      if not meet[a.name] then
        local old = res.clone(a.deserved)
        res.add(a.deserved, res.scale(remaining, a.weight / weight))
        a.deserved = res.min_inf(a.deserved, a.real_capability)
        a.deserved = res.min(a.deserved, a.request)
        a.deserved = res.max(a.deserved, a.guarantee)
        update_share(a)
        if res.less_equal(a.request, a.deserved) or res.equal(a.deserved, old) then
          meet[a.name] = true
        end
        for k, v in pairs(a.deserved) do
          local d = v - (old[k] or 0)
          if d > 0 then increased[k] = (increased[k] or 0) + d
          elseif d < 0 then decreased[k] = (decreased[k] or 0) - d end
        end
      end
    end
    res.add(res.sub(remaining, increased), decreased)
    if res.is_empty(remaining) or res.equal(remaining, old_remaining) then break end
  end
end

function P.open(ssn)
  total = res.clone(ssn.total)
  attrs = {}
  for name, q in pairs(ssn.queues) do
    attrs[name] = {
      name = name, weight = q.weight, priority = q.priority,
      state = q.state, parent = q.parent,
      capability = q.capability, guarantee = q.guarantee or res.new(),
      deserved = res.new(), allocated = res.new(), request = res.new(),
      inqueue = res.new(), elastic = res.new(), share = 0,
    }
  end
  for name, q in pairs(ssn.queues) do
    local a = attrs[name]
    res.add(a.allocated, q.allocated)
    res.add(a.request, q.request)
    res.add(a.inqueue, q.inqueue)
    res.add(a.elastic, q.elastic)
  end
  -- The tree: children by parent; a parent asks for what its subtree asks.
  local children = {}
  for name, a in pairs(attrs) do
    if name ~= "root" then
      local parent = a.parent
      if parent == nil or attrs[parent] == nil then parent = "root" end
      children[parent] = children[parent] or {}
      table.insert(children[parent], a)
    end
  end
  for _, kids in pairs(children) do
    table.sort(kids, function(x, y) return x.name < y.name end)
  end
  local function subtree(name)
    local a = attrs[name]
    for _, k in ipairs(children[name] or {}) do
      subtree(k.name)
      res.add(a.request, k.request)
      res.add(a.allocated, k.allocated)
    end
  end
  if attrs.root ~= nil then
    subtree("root")
    attrs.root.deserved = res.clone(total)
    update_share(attrs.root)
  end
  local function distribute(name, amount, limit)
    local kids = children[name]
    if kids == nil then return end
    fill(kids, amount, limit)
    for _, k in ipairs(kids) do distribute(k.name, k.deserved, k.real_capability) end
  end
  distribute("root", total, total)
  -- The figures behind each queue's share, for explain and policy test.
  for name, q in pairs(ssn.queues) do
    ssn:queue_info(q, "deserved", attrs[name].deserved)
  end
end

-- Higher spec.priority first, then the smaller share (an order key,
-- recomputed whenever a task of the queue is allocated or given back).
function P.queue_order_key(ssn, queue)
  return -queue.priority, attrs[queue.name].share
end

function P.overused(ssn, queue)
  local a = attrs[queue.name]
  return res.less_equal(a.deserved, a.allocated)
end

function P.allocatable(ssn, queue, task)
  local a = attrs[queue.name]
  if a.state ~= "Open" then return false end
  local future = res.add(res.clone(a.allocated), task.resreq)
  return res.less_equal_on(future, a.deserved, task.resreq)
end

function P.job_enqueueable(ssn, job)
  local a = attrs[job.queue]
  if a == nil or a.state ~= "Open" then return -1 end
  if job.min_resources == nil then return 1 end
  -- A gang is held to the real capability (the cluster less the others'
  -- guarantees, within capability), as in Volcano. A group of one (a
  -- bare pod's) only to a capability the queue sets: measured against
  -- the cluster it would stay Pending whenever the cluster is full, and
  -- a Pending pod never preempts.
  local cap = a.real_capability or a.capability
  if job.min_available <= 1 then cap = a.capability end
  if cap == nil then return 1 end
  local want = res.add(res.add(res.clone(job.min_resources), a.allocated), a.inqueue)
  res.sub(want, a.elastic)
  -- On the resources the job asks for, as Volcano compares them.
  local short = res.exceeded_on(want, cap, job.min_resources)
  if #short == 0 then return 1 end
  return -1, res.insufficient("queue resource quota insufficient", short)
end

function P.job_enqueued(ssn, job)
  local a = attrs[job.queue]
  if a ~= nil and job.min_resources ~= nil then res.add(a.inqueue, job.min_resources) end
end

-- The candidates taken while each one's queue, less the victims taken so
-- far, stays above its deserved part (and, with need, holds at least
-- need on every resource).
local function over_share(candidates, need)
  local out, left = {}, {}
  for _, v in ipairs(candidates) do
    local a = attrs[v.job.queue]
    if a ~= nil then
      local allocated = left[a.name]
      if allocated == nil then
        allocated = res.clone(a.allocated)
        left[a.name] = allocated
      end
      if (need == nil or not res.less_partly(allocated, need)) and
          not res.less_equal(allocated, a.deserved) then
        res.sub(allocated, v.resreq)
        out[#out + 1] = v
      end
    end
  end
  return out
end

-- gangreclaim: victims from queues above their deserved part; gangpreempt
-- (within a queue) is not proportion's to judge.
function P.evictable(ssn, ctx, candidates)
  if ctx.kind ~= "gangreclaim" then return candidates end
  return over_share(candidates, nil)
end

local function account(task, sign)
  local a = attrs[task.job.queue]
  if a == nil then return end
  if sign > 0 then res.add(a.allocated, task.resreq) else res.sub(a.allocated, task.resreq) end
  update_share(a)
end

function P.on_allocate(ssn, task) account(task, 1) end
function P.on_deallocate(ssn, task) account(task, -1) end

function P.reclaimable(ssn, reclaimer, candidates)
  return over_share(candidates, reclaimer.resreq)
end

return P
