-- Queue: keep each Volcano Queue's state and counts right.
-- A queue is closed by the annotation volray.io/queue-state=Closed (what
-- `volray queue close` sets) and opened by =Open; without the annotation
-- it keeps the state status.state has, as Volcano's controller does, so
-- a client that writes status.state Closed (or Open) directly is obeyed.
-- A queue whose parent is Closing or Closed is closed too, and marked
-- volcano.sh/closed-by-parent=true so that it opens again with its
-- parent. A closed queue stays Closing while any PodGroup names it, then
-- becomes Closed; turning away new PodGroups is the scheduler's part.
-- status.pending / inqueue / running / unknown / completed count the
-- PodGroups in the queue by phase (a PodGroup without spec.queue is in
-- "default"; one without a phase yet counts as pending). Queues form a
-- tree by spec.parent ("root" when empty); a parent that does not exist
-- gets a Warning event on the queue. status.allocated is the scheduler's
-- and is left as it is. The counts come from one tally of every
-- PodGroup by queue and phase, taken again when a PodGroup changed since
-- the last one and that one is at least a second old (a queue that sees a
-- younger, outdated tally waits for the next), so a burst of thousands of
-- PodGroups costs one pass a second for all the queues together.
local v = volray

local QUEUES = "scheduling.volcano.sh/v1beta1/queues"
local PODGROUPS = "scheduling.volcano.sh/v1beta1/podgroups"
local STATE_KEY = "volray.io/queue-state"
local BY_PARENT = "volcano.sh/closed-by-parent"
local ROOT = "root"

local function queue_of(pg)
  local q = pg.spec and pg.spec.queue
  if q == nil or q == "" then return "default" end
  return q
end

local function parent_of(q)
  if q.metadata.name == ROOT then return nil end
  local p = q.spec and q.spec.parent
  if p == nil or p == "" then return ROOT end
  return p
end

-- The queues whose parent is the named one (to tell them it changed).
local function children(name)
  local out = {}
  for _, q in ipairs(v.list(QUEUES)) do
    if parent_of(q) == name then out[#out + 1] = q.metadata.name end
  end
  return out
end

-- Bumped by every PodGroup event: a tally taken at another generation
-- may be out of date.
local pg_gen = 0

local controller = {
  primary = QUEUES,
  -- Volcano's vc-controller-manager records every controller's Events
  -- as this component (EventSource{Component: "vc-controller-manager"}).
  event_source = "vc-controller-manager",
  watches = {
    -- previous: a PodGroup that moves to another queue leaves this one.
    -- paths: the map reads only the queue (the rest stays in C).
    { resource = PODGROUPS, previous = true, paths = { "spec.queue" },
      map = function(pg) pg_gen = pg_gen + 1; return queue_of(pg) end },
    { resource = QUEUES, map = function(q) return children(q.metadata.name) end },
  },
}

-- The last tally: queue name -> { counts, groups }, when, at which
-- generation (this state only: a reload counts again).
local tally, tally_at, tally_gen = nil, 0, -1
local MIN_INTERVAL = 1.0

local PHASE_COUNT = { Pending = "pending", Inqueue = "inqueue", Running = "running",
  Unknown = "unknown", Completed = "completed" }

-- Write state and counts when they changed; nil, or a requeue on conflict.
local function write_status(q, state, counts)
  local name = q.metadata.name
  local st = q.status or {}
  local changed = st.state ~= state
  for k, n in pairs(counts) do
    if (st[k] or 0) ~= n then changed = true end
  end
  if not changed then return nil end
  -- An event when the state moves (not for a new queue's first Open).
  if st.state ~= nil and st.state ~= state then
    v.event(q, "Normal", state, string.format("queue %s is %s", name, state))
  end
  st.state = state
  for k, n in pairs(counts) do st[k] = n end
  q.status = st
  local _, err, code = v.update_status(q)
  if code == 409 then return { requeue = true } end
  if err ~= nil and code ~= 404 then error("status: " .. tostring(err), 0) end
  return nil
end

local function new_count()
  return { counts = { pending = 0, inqueue = 0, running = 0, unknown = 0, completed = 0 },
    groups = 0 }
end

-- All a tally reads of a PodGroup.
local TALLY_PATHS = { "spec.queue", "status.phase" }

local function take_tally(now)
  tally, tally_at, tally_gen = {}, now, pg_gen
  for _, pg in ipairs(v.list(PODGROUPS, nil, { paths = TALLY_PATHS })) do
    local name = queue_of(pg)
    local t = tally[name]
    if t == nil then t = new_count(); tally[name] = t end
    t.groups = t.groups + 1
    local key = PHASE_COUNT[(pg.status and pg.status.phase) or "Pending"]
    if key ~= nil then t.counts[key] = t.counts[key] + 1 end
  end
end

function controller.reconcile(req)
  local now = v.time()
  if tally == nil or tally_gen ~= pg_gen then
    local age = now - tally_at
    if tally ~= nil and age < MIN_INTERVAL then
      return { requeue_after = MIN_INTERVAL - age }
    end
    take_tally(now)
  end
  local q = v.get(QUEUES, nil, req.name)
  if q == nil or q.metadata.deletionTimestamp ~= nil then return nil end
  local name = q.metadata.name
  local t = tally[name] or new_count()
  local counts, groups = t.counts, t.groups

  -- Closed by its annotation, by its status (no annotation), or by a
  -- closed parent.
  local ann = q.metadata.annotations or {}
  local want, by_parent = ann[STATE_KEY], ann[BY_PARENT] == "true"
  local was_closed = q.status ~= nil and (q.status.state == "Closed" or q.status.state == "Closing")
  if want ~= nil and want ~= "Open" and want ~= "Closed" then
    v.event(q, "Warning", "InvalidState", string.format(
      "annotation %s=%q: the state is Open or Closed; the queue stays as it was",
      STATE_KEY, want))
    want = nil
  end
  local closed
  if want ~= nil then
    closed = want == "Closed"
  else
    closed = was_closed and not by_parent
  end
  local parent_closed = false
  local pname = parent_of(q)
  if pname ~= nil then
    local parent = v.get(QUEUES, nil, pname)
    if pname == name then
      v.event(q, "Warning", "InvalidParent", "a queue cannot be its own parent")
    elseif parent == nil then
      v.event(q, "Warning", "ParentNotFound", string.format(
        "parent queue %q does not exist", pname))
    elseif parent.status and (parent.status.state == "Closed" or
        parent.status.state == "Closing") then
      parent_closed = true
    end
  end
  -- A closing that only the parent caused is marked, to undo it with it
  -- (after the state is written: the mark's absence means "as status").
  local mark = parent_closed and not closed
  closed = closed or parent_closed
  local state = "Open"
  if closed then state = groups > 0 and "Closing" or "Closed" end
  local r = write_status(q, state, counts)
  if r ~= nil or mark == by_parent then return r end
  local _, err, code = v.patch(QUEUES, nil, name,
    { metadata = { annotations = { [BY_PARENT] = mark and "true" or v.null } } })
  if err ~= nil and code ~= 404 then error("marking " .. name .. ": " .. tostring(err), 0) end
  return nil
end

return controller
