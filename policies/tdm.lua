-- tdm: time-division multiplexing of nodes (Volcano 1.15's tdm plugin).
--
-- A node labelled volcano.sh/revocable-zone=<zone> is lent to
-- preemptable work during its zone's time window (argument
-- tdm.revocable-zone.<zone>: "HH:MM-HH:MM" in the scheduler's local
-- time, ssn.utc_offset; a window whose end is not after its start runs
-- overnight into the next day). A pod may go there only when it opted
-- in: annotation volcano.sh/revocable-zone "*" or volcano.sh/preemptable
-- true.
-- - predicate: a revocable node whose zone is closed (or not configured)
--   takes no pod ("current time beyond revocable zone rz1:10:00-21:00");
--   an open one only pods that opted in ("not allow to dispatch to
--   revocable node");
-- - node_order: 100 for an open revocable node and a pod that opted in;
-- - preemptable: a preemptor that is itself preemptable or opted in
--   takes no victim; the others may take preemptable running tasks of
--   ordinary (not revocable) nodes, per job at most its budget allows;
-- - victim_tasks (the shuffle action): once every tdm.evict.period, the
--   preemptable running tasks on revocable nodes whose window closed,
--   per job at most its budget allows, are evicted;
-- - job_order: jobs that are not preemptable first; job_pipelined: a vote
--   for a pipelined job, against the others; job_starving: a job that is
--   not preemptable and has pending tasks.
-- A job's budget: its PodGroup's annotation volcano.sh/jdb-max-unavailable
-- (what may be unavailable at once, less what already is) or
-- volcano.sh/jdb-min-available (what must keep running), an integer or a
-- percentage of its tasks (rounded up); without either, one task a time.
--
-- Differences from Volcano 1.15, where its code disagrees with its own
-- design: an overnight window stays open after midnight (Volcano's
-- closes at midnight: it moves the start to the current day), and a job
-- already below its jdb-min-available loses no task (Volcano's then falls
-- back to one).
--
-- Arguments:
--   tdm.revocable-zone.<zone>  string "HH:MM-HH:MM", one per zone
--   tdm.evict.period           Go duration, default 1m
local T = {
  arguments = {
    ["tdm.revocable-zone.*"] = { type = "string" },
    ["tdm.evict.period"] = { type = "string", default = "1m" },
  },
}

local duration = require("sched.duration")

local ZONE_LABEL = "volcano.sh/revocable-zone"
local PREEMPTABLE = "volcano.sh/preemptable"
local MIN_AVAILABLE = "volcano.sh/jdb-min-available"
local MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
local PREFIX = "tdm.revocable-zone."
local MAX_SCORE = 100

local zones		-- zone -> window text
local period, now, clock
local last_evict	-- survives sessions: the eviction period
local next_edge		-- below: seconds until a window opens or closes

function T.open(ssn, args)
  zones = {}
  for k, v in pairs(args) do
    if k:sub(1, #PREFIX) == PREFIX and #k > #PREFIX then
      zones[k:sub(#PREFIX + 1)] = v
    end
  end
  period = duration.parse(args["tdm.evict.period"]) or 60
  now = ssn.now
  clock = (ssn.now + (ssn.utc_offset or 0)) % 86400
  local edge = next_edge()
  if edge ~= nil then ssn:wake_after(edge) end
end

-- Seconds after midnight of "HH:MM", or nil.
local function minute_of(text)
  local h, m = text:match("^%s*(%d%d?):(%d%d)%s*$")
  h, m = tonumber(h), tonumber(m)
  if h == nil or h > 23 or m > 59 then return nil end
  return h * 3600 + m * 60
end

-- nil when the zone is open now, else why not.
local function closed(zone)
  local raw = zones[zone]
  if raw == nil then return "revocable zone " .. zone .. " not support" end
  local a, b = raw:match("^([^-]*)-([^-]*)$")
  local s, e = a and minute_of(a), b and minute_of(b)
  if s == nil or e == nil then
    return "revocable zone " .. raw .. " format error"
  end
  local open
  if s < e then
    open = clock >= s and clock <= e
  else
    open = clock >= s or clock <= e
  end
  if open then return nil end
  return "current time beyond revocable zone " .. zone .. ":" .. raw
end

-- Seconds until some zone's window opens or closes (nil when none
-- parses): the scheduler is asked for a session then, though nothing
-- else changes.
next_edge = function()
  local soonest
  for _, raw in pairs(zones) do
    local a, b = raw:match("^([^-]*)-([^-]*)$")
    local s, e = a and minute_of(a), b and minute_of(b)
    if s ~= nil and e ~= nil then
      for _, edge in ipairs({ s, e + 1 }) do
        local d = (edge - clock) % 86400
        if d == 0 then d = 86400 end
        if soonest == nil or d < soonest then soonest = d end
      end
    end
  end
  return soonest
end

local function zone_of(node)
  local z = (node.labels or {})[ZONE_LABEL]
  if z == nil or z == "" then return nil end
  return z
end

local TRUE = { ["1"] = true, t = true, T = true, TRUE = true, ["true"] = true, True = true }

-- Whether the task opted into revocable nodes.
local function revocable(task)
  local a = task.annotations or {}
  if a[ZONE_LABEL] ~= nil then return a[ZONE_LABEL] == "*" end
  return TRUE[a[PREEMPTABLE] or ""] == true
end

function T.predicate(ssn, task, node)
  local z = zone_of(node)
  if z == nil then return nil end
  local why = closed(z)
  if why ~= nil then return why end
  if not revocable(task) then return "not allow to dispatch to revocable node" end
  return nil
end

function T.node_order(ssn, task, node)
  local z = zone_of(node)
  if z == nil or closed(z) ~= nil or not revocable(task) then return 0 end
  return MAX_SCORE
end

-- An integer or a percentage of total (rounded up), or nil.
local function int_or_percent(text, total)
  local p = text:match("^%s*(%d+)%%%s*$")
  if p then return math.ceil(tonumber(p) * total / 100) end
  return math.tointeger(tonumber(text))
end

-- How many of the job's tasks may be evicted now.
local function max_evict(job)
  local a = job.annotations or {}
  local running = job.running
  if a[MAX_UNAVAILABLE] ~= nil then
    local max = int_or_percent(a[MAX_UNAVAILABLE], job.task_num) or 0
    local unavailable = job.task_num - job.succeeded - job.failed - running
    return math.max(0, max - unavailable)
  end
  if a[MIN_AVAILABLE] ~= nil then
    local min = int_or_percent(a[MIN_AVAILABLE], job.task_num) or 0
    return math.max(0, running - min)
  end
  return 1
end

-- Of tasks (running, preemptable), per job at most its budget, in the
-- order given.
local function within_budgets(tasks)
  local by_job, order = {}, {}
  for _, t in ipairs(tasks) do
    local k = t.job.key
    if by_job[k] == nil then
      by_job[k] = { job = t.job, tasks = {} }
      order[#order + 1] = k
    end
    local list = by_job[k].tasks
    list[#list + 1] = t
  end
  local out = {}
  for _, k in ipairs(order) do
    local g = by_job[k]
    for i = 1, math.min(max_evict(g.job), #g.tasks) do out[#out + 1] = g.tasks[i] end
  end
  return out
end

function T.preemptable(ssn, preemptor, candidates)
  if preemptor.preemptable or revocable(preemptor) then return {} end
  local ok = {}
  for _, t in ipairs(candidates) do
    if t.preemptable and t.status == "Running" and t.node ~= nil then
      local n = ssn:node(t.node)
      if n ~= nil and zone_of(n) == nil then ok[#ok + 1] = t end
    end
  end
  return within_budgets(ok)
end

function T.victim_tasks(ssn)
  if last_evict ~= nil and now >= last_evict and now < last_evict + period then
    ssn:wake_after(last_evict + period - now)
    return nil
  end
  last_evict = now
  if period > 0 then ssn:wake_after(period) end
  local names = {}
  for z in pairs(zones) do names[#names + 1] = z end
  table.sort(names)	-- Volcano walks a Go map; here in name order
  -- The revocable nodes by zone, in one walk of the nodes.
  local by_zone = {}
  for _, n in ipairs(ssn:nodes()) do
    local z = zone_of(n)
    if z ~= nil then
      by_zone[z] = by_zone[z] or {}
      table.insert(by_zone[z], n)
    end
  end
  local victims, reasons = {}, {}
  for _, z in ipairs(names) do
    local why = closed(z)
    if why ~= nil then
      local tasks = {}
      for _, n in ipairs(by_zone[z] or {}) do
        for _, t in ipairs(ssn:node_tasks(n)) do
          if t.preemptable and t.status == "Running" then tasks[#tasks + 1] = t end
        end
      end
      for _, t in ipairs(within_budgets(tasks)) do
        victims[#victims + 1] = t
        reasons[#reasons + 1] = "tdm: " .. why
      end
    end
  end
  return victims, reasons
end

function T.job_order(ssn, l, r)
  if l.preemptable == r.preemptable then return 0 end
  if not l.preemptable then return -1 end
  return 1
end

function T.job_pipelined(ssn, job)
  if job.ready + job.waiting >= job.min_available then return 1 end
  return -1
end

function T.job_starving(ssn, job)
  return not job.preemptable and job.pending > 0
end

return T
