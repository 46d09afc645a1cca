-- capacity: queues get what their spec says, borrow what is idle, and
-- give back what they borrowed (Volcano's capacity plugin, the
-- recommended alternative to proportion).
--
-- Each queue's spec names, per resource:
--   deserved    what it is entitled to; above it, what it runs was
--               borrowed and may be reclaimed by a queue below its own
--   capability  the most it may ever use (missing: the cluster)
--   guarantee   what is set aside for it: never reclaimed from it, and
--               kept out of every other queue's capability
-- A queue's real capability is its capability, at most the cluster (or
-- its parent's real capability) less the other queues' guarantees. A
-- task is allocatable while its queue stays within the real capability
-- on the resources the task asks for: queues borrow idle resources beyond
-- deserved. A job is admitted (enqueue) while its minResources fit the
-- real capability next to what the queue has allocated and admitted. The
-- reclaim action takes back borrowed resources: a queue may reclaim for a
-- task while, with it, the queue stays within its real capability and at
-- or below its deserved on some resource the task asks for; a running
-- task of another queue is a victim while its queue is above deserved on
-- a resource the victim uses (or deserves none of them), never below its
-- guarantee. Queues go in order of spec.priority, then share (allocated /
-- deserved, the largest resource), a queue with a deserved before a
-- best-effort one (no deserved: share 1).
--
-- With `enableHierarchy: true` (a key of the plugin's entry, as in
-- Volcano) queues form a tree through spec.parent under `root`: only leaf
-- queues run jobs; each check above holds for the queue and every
-- ancestor; a child's real capability is bounded by its parent's; the
-- order compares the two queues' ancestors just below their common one;
-- victims come first from the queues nearest the reclaimer's in the tree
-- (the deepest common ancestor), as Volcano's victim queue order.
-- Admission at an ancestor does not count what the other subtrees
-- borrowed beyond their deserved (reclaim can take it back): a job of a
-- queue below its deserved is admitted on a full cluster (Volcano #4679,
-- #4817). A cycle or an unknown parent rejects every job of the queues
-- concerned, with the reason in explain.
--
-- Arguments:
--   ancestorReclaimLevel  number >= 0, default 0: with hierarchy, a victim
--                         must also be borrowed at each of its ancestors
--                         up to this depth below root that the reclaimer
--                         does not share
local res = require("sched.res")

local C = {
  arguments = {
    ancestorReclaimLevel = { type = "number", default = 0, min = 0 },
    enableHierarchy = { type = "boolean", default = false },
  },
}

local HUGE = math.huge
local attrs, hierarchy, reclaim_level, broken

-- Resources a task or job names (> 0), "pods" aside.
local function names(r)
  local out = {}
  for k, v in pairs(r or {}) do
    if v > 0 and k ~= "pods" then out[#out + 1] = k end
  end
  return out
end

-- r <= cap on every resource that want names; the ones that are not.
local function fits_on(r, cap, want)
  local short = res.exceeded_on(r, cap, want)
  return #short == 0, short
end

-- Share: the largest allocated / deserved over the resources deserved
-- names; a queue that deserves nothing is best-effort, share 1.
local function update_share(a)
  local s, any = 0, false
  for k, d in pairs(a.deserved) do
    if d > 0 and k ~= "pods" then
      any = true
      local x = (a.allocated[k] or 0) / d
      if x > s then s = x end
    end
  end
  a.share = any and s or 1
  a.best_effort = not any
end

local function new_attr(name, q)
  return {
    name = name, priority = q.priority or 0, state = q.state,
    parent = q.parent, reclaimable = q.reclaimable,
    deserved = res.clone(q.deserved), guarantee = res.clone(q.guarantee),
    capability = q.capability, spec_capability = q.capability,
    allocated = res.clone(q.allocated), request = res.clone(q.request),
    inqueue = res.clone(q.inqueue), elastic = res.clone(q.elastic),
    reserved = res.clone(q.reserved),
    children = {}, ancestors = {}, share = 0,
  }
end

-- A capability with cpu or memory unset (or <= 0) is unlimited there;
-- fill from inherit (the parent's), else infinity.
local function full_capability(cap, inherit)
  local c = {}
  for k, v in pairs(cap or {}) do c[k] = v end
  for _, k in ipairs({ "cpu", "memory" }) do
    if c[k] == nil or c[k] <= 0 then c[k] = inherit and inherit[k] or HUGE end
  end
  for k, v in pairs(inherit or {}) do
    if c[k] == nil then c[k] = v end
  end
  return c
end

-- amount - guarantees (never below zero) + own guarantee, within cap.
local function real_capability(amount, guarantees, a, cap)
  local r = res.add(res.sub_floor(amount, guarantees), a.guarantee)
  for k, v in pairs(cap or {}) do
    if r[k] == nil or v < r[k] then r[k] = v end
  end
  return r
end

local function build_flat(ssn)
  local guarantees = res.new()
  for name, q in pairs(ssn.queues) do
    attrs[name] = new_attr(name, q)
    res.add(guarantees, attrs[name].guarantee)
  end
  for _, a in pairs(attrs) do
    a.real_capability = real_capability(ssn.total, guarantees, a,
      a.capability and full_capability(a.capability) or nil)
    a.deserved = res.max(res.min_inf(a.deserved, a.real_capability), a.guarantee)
    update_share(a)
  end
end

-- The tree under root; false and why when it is not one.
local function build_tree(ssn)
  for name, q in pairs(ssn.queues) do attrs[name] = new_attr(name, q) end
  if attrs.root == nil then
    attrs.root = new_attr("root", { state = "Open" })
  end
  for name, a in pairs(attrs) do
    if name ~= "root" then
      local p = a.parent
      if p == nil or p == "" then p = "root" end
      if attrs[p] == nil then
        broken[name] = "parent queue " .. p .. " does not exist"
      else
        a.parent_attr = attrs[p]
        attrs[p].children[#attrs[p].children + 1] = a
      end
    end
  end
  -- Ancestors from root down; a cycle never reaches root.
  for name, a in pairs(attrs) do
    local chain, seen, x = {}, {}, a
    while x.name ~= "root" and x.parent_attr ~= nil and not seen[x.name] do
      seen[x.name] = true
      x = x.parent_attr
      table.insert(chain, 1, x)
    end
    if x.name ~= "root" and broken[name] == nil then
      broken[name] = seen[x.name] and "queue hierarchy has a cycle through " .. x.name
        or broken[x.name] or "not under root"
    end
    a.ancestors = chain
  end
  for _, a in pairs(attrs) do
    table.sort(a.children, function(x, y) return x.name < y.name end)
  end
  -- Usage rolls up from the leaves.
  local function roll(a)
    for _, c in ipairs(a.children) do
      roll(c)
      for _, f in ipairs({ "allocated", "request", "inqueue", "elastic" }) do
        res.add(a[f], c[f])
      end
    end
  end
  local root = attrs.root
  roll(root)
  root.capability = full_capability(root.capability)
  root.real_capability = root.capability
  local function down(a)
    local guarantees, deserved = res.new(), res.new()
    for _, c in ipairs(a.children) do
      c.deserved = res.max(c.deserved, c.guarantee)
      res.add(deserved, c.deserved)
      res.add(guarantees, c.guarantee)
      c.capability = full_capability(c.capability, a.capability)
    end
    if a == root then
      a.guarantee, a.deserved = guarantees, deserved
    end
    for _, c in ipairs(a.children) do
      c.real_capability = real_capability(a.real_capability, guarantees, c,
        c.capability)
      down(c)
    end
  end
  down(root)
  for _, a in pairs(attrs) do
    -- Queues off the tree (a cycle, a missing parent) get nothing.
    a.real_capability = a.real_capability or res.new()
    update_share(a)
  end
end

function C.open(ssn, args)
  attrs, broken = {}, {}
  hierarchy = args.enableHierarchy == true
  reclaim_level = hierarchy and math.floor(args.ancestorReclaimLevel) or 0
  if hierarchy then build_tree(ssn) else build_flat(ssn) end
  -- The figures behind the decisions, for explain and policy test
  -- (unlimited resources left out).
  local function finite(r)
    local out = {}
    for k, v in pairs(r) do if v ~= HUGE then out[k] = v end end
    return out
  end
  for name, q in pairs(ssn.queues) do
    local a = attrs[name]
    ssn:queue_info(q, "deserved", finite(a.deserved))
    ssn:queue_info(q, "realCapability", finite(a.real_capability))
  end
end

-- The queue and, with hierarchy, its ancestors, leaf first.
local function chain(a)
  local out = { a }
  for i = #a.ancestors, 1, -1 do out[#out + 1] = a.ancestors[i] end
  return out
end

local function leaf(a)
  return not hierarchy or #a.children == 0
end

-- Why a queue cannot take anything this session, or nil.
local function unusable(a)
  if a == nil then return "queue unknown" end
  if a.state ~= "Open" then return "queue " .. a.name .. " is " .. tostring(a.state) end
  if hierarchy then
    if broken[a.name] then return broken[a.name] end
    if not leaf(a) then return "queue " .. a.name .. " is not a leaf queue" end
  end
  return nil
end

function C.queue_order(ssn, l, r)
  local la, ra = attrs[l.name], attrs[r.name]
  if la == nil or ra == nil then return 0 end
  if la.priority ~= ra.priority then return la.priority > ra.priority and -1 or 1 end
  if hierarchy then
    local ll, rl = leaf(la), leaf(ra)
    if ll ~= rl then return ll and -1 or 1 end
    if ll then
      -- The two ancestors just below the deepest common one.
      local i = 1
      while la.ancestors[i] ~= nil and la.ancestors[i] == ra.ancestors[i] do i = i + 1 end
      la = la.ancestors[i] or la
      ra = ra.ancestors[i] or ra
    end
  end
  if la.share ~= ra.share then return la.share < ra.share and -1 or 1 end
  if la.best_effort ~= ra.best_effort then return la.best_effort and 1 or -1 end
  return 0
end

-- The depth of the deepest ancestor a and b share (root 1).
local function common_depth(a, b)
  local i = 0
  while a.ancestors[i + 1] ~= nil and a.ancestors[i + 1] == b.ancestors[i + 1] do i = i + 1 end
  return i
end

-- Victims from the queue whose common ancestor with the preemptor's is
-- deeper go first (siblings before cousins).
function C.victim_queue_order(ssn, l, r, preemptor)
  if not hierarchy then return 0 end
  local la, ra, pa = attrs[l.name], attrs[r.name], attrs[preemptor.name]
  if la == nil or ra == nil or pa == nil then return 0 end
  local ld, rd = common_depth(la, pa), common_depth(ra, pa)
  if ld == rd then return 0 end
  return ld > rd and -1 or 1
end

function C.allocatable(ssn, queue, task)
  local a = attrs[queue.name]
  if unusable(a) then return false end
  -- What the queue already promised to pods whose admission gate went
  -- (all but this task's own share of it).
  local promised = res.clone(a.reserved)
  if task.queue_gate and not task.gated then res.sub(promised, task.resreq) end
  for i, x in ipairs(chain(a)) do
    local future = res.add(res.clone(x.allocated), task.resreq)
    if i == 1 then res.add(future, promised) end
    if not fits_on(future, x.real_capability, task.resreq) then return false end
  end
  -- A gated task that passes has its gate removed: hold its room.
  if task.gated and task.queue_gate then res.add(a.reserved, task.resreq) end
  return true
end

-- What the other subtrees under `anc` (not the one holding `a`) use
-- beyond their deserved, where they let it be reclaimed.
local function borrowed_beside(anc, a)
  local out = res.new()
  for _, c in ipairs(anc.children) do
    local on_path = c == a
    for _, x in ipairs(a.ancestors) do if x == c then on_path = true end end
    if not on_path and c.reclaimable ~= false then
      for k, v in pairs(c.allocated) do
        local over = v - (c.deserved[k] or 0)
        if over > 0 then out[k] = (out[k] or 0) + over end
      end
    end
  end
  return out
end

function C.job_enqueueable(ssn, job)
  local a = attrs[job.queue]
  local why = unusable(a)
  if why then return -1, why end
  if job.min_resources == nil then return 1 end
  local min = job.min_resources
  -- A group of one (a bare pod's) only against capabilities the queues
  -- set, as proportion does: against the cluster it would stay Pending
  -- whenever the cluster is full, and a Pending pod never preempts.
  local single = job.min_available <= 1
  for i, x in ipairs(chain(a)) do
    if not single or x.spec_capability ~= nil then
      local want = res.add(res.add(res.clone(min), x.allocated), x.inqueue)
      res.sub(want, x.elastic)
      if i > 1 then res.sub(want, borrowed_beside(x, a)) end
      local ok, short = fits_on(want, x.real_capability, min)
      if not ok then
        local where = x == a and "" or " (ancestor " .. x.name .. ")"
        return -1, res.insufficient("queue resource quota insufficient" .. where, short)
      end
    end
  end
  return 1
end

function C.job_enqueued(ssn, job)
  local a = attrs[job.queue]
  if a == nil or job.min_resources == nil then return end
  for _, x in ipairs(chain(a)) do res.add(x.inqueue, job.min_resources) end
end

function C.preemptive(ssn, queue, task)
  local a = attrs[queue.name]
  if unusable(a) then return false end
  local future = res.add(res.clone(a.allocated), task.resreq)
  if not fits_on(future, a.real_capability, task.resreq) then return false end
  -- Below or at its deserved on some resource the task asks for.
  local function partly_within(x)
    local f = res.add(res.clone(x.allocated), task.resreq)
    for _, k in ipairs(names(task.resreq)) do
      if f[k] <= (x.deserved[k] or 0) then return true end
    end
    return false
  end
  if partly_within(a) then return true end
  for level = 1, reclaim_level do
    local anc = a.ancestors[#a.ancestors - level + 1]
    if anc ~= nil and anc.name ~= "root" and partly_within(anc) then return true end
  end
  return false
end

-- The victim's queue deserves none of what the victim uses.
local function deserves_none(v, deserved)
  for _, k in ipairs(names(v.resreq)) do
    if (deserved[k] or 0) > 0 then return false end
  end
  return true
end

-- allocated above deserved on a resource the victim uses that deserved names.
local function over_deserved(allocated, deserved, v)
  for _, k in ipairs(names(v.resreq)) do
    local d = deserved[k]
    if d ~= nil and d > 0 and (allocated[k] or 0) > d then return true end
  end
  return false
end

local function intersects(x, y)
  for _, k in ipairs(names(x)) do
    if (y[k] or 0) > 0 then return true end
  end
  return false
end

-- The ancestor of `a` at `level` below the top (1 = its parent) that
-- the reclaimer's queue does not share; nil when none must be checked.
local function ancestor_to_check(reclaimer, a, level)
  local anc = a.ancestors[#a.ancestors - level + 1]
  if anc == nil or anc.name == "root" then return nil end
  local mine = reclaimer.ancestors[#reclaimer.ancestors - level + 1]
  if mine == anc then return nil end
  return anc
end

-- The victims among candidates: never below their queue's guarantee,
-- from a queue above its deserved on a resource the victim uses (or that
-- deserves none of them), counting the victims taken so far. With a
-- reclaimer (a task), only victims that free something it asks for, and
-- with ancestorReclaimLevel the ancestors it does not share must be over
-- their deserved too; without (gangreclaim), the queue alone decides.
local function victims(candidates, reclaimer)
  local ra = reclaimer and attrs[reclaimer.job.queue]
  if reclaimer ~= nil and ra == nil then return {} end
  local out, left = {}, {}
  local function allocated_of(x)
    local r = left[x.name]
    if r == nil then
      r = res.clone(x.allocated)
      left[x.name] = r
    end
    return r
  end
  for _, v in ipairs(candidates) do
    local a = attrs[v.job.queue]
    if a ~= nil and (reclaimer == nil or intersects(v.resreq, reclaimer.resreq)) then
      local allocated = allocated_of(a)
      local after = res.sub(res.clone(allocated), v.resreq)
      local keeps = true
      for k, g in pairs(a.guarantee) do
        if g > (after[k] or 0) then keeps = false end
      end
      local eligible = keeps and (deserves_none(v, a.deserved) or
        over_deserved(allocated, a.deserved, v))
      local checked = {}
      for level = 1, (eligible and ra ~= nil) and reclaim_level or 0 do
        local anc = ancestor_to_check(ra, a, level)
        if anc ~= nil then
          local aa = allocated_of(anc)
          if not deserves_none(v, anc.deserved) and
              not over_deserved(aa, anc.deserved, v) then
            eligible = false
            break
          end
          checked[#checked + 1] = aa
        end
      end
      if eligible then
        res.sub(allocated, v.resreq)
        for _, aa in ipairs(checked) do res.sub(aa, v.resreq) end
        out[#out + 1] = v
      end
    end
  end
  return out
end

function C.reclaimable(ssn, reclaimer, candidates)
  return victims(candidates, reclaimer)
end

-- gangpreempt: not capacity's to judge (all may go); gangreclaim: as
-- reclaim, queue by queue (Volcano's capacity judges gang reclaim so).
function C.evictable(ssn, ctx, candidates)
  if ctx.kind ~= "gangreclaim" then return candidates end
  return victims(candidates, nil)
end

local function account(task, sign)
  local a = attrs[task.job.queue]
  if a == nil then return end
  -- A task given room at its gate's removal takes it up now.
  if task.queue_gate and not task.gated then
    if sign > 0 then res.sub(a.reserved, task.resreq) else res.add(a.reserved, task.resreq) end
  end
  for _, x in ipairs(chain(a)) do
    if sign > 0 then res.add(x.allocated, task.resreq) else res.sub(x.allocated, task.resreq) end
    update_share(x)
  end
end

function C.on_allocate(ssn, task) account(task, 1) end
function C.on_deallocate(ssn, task) account(task, -1) end

function C.job_valid(ssn, job)
  local a = attrs[job.queue]
  if hierarchy and a ~= nil and (broken[a.name] or not leaf(a)) then
    return false, "QueueInvalid", unusable(a)
  end
  return true
end

return C
