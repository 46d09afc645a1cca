-- rescheduling: the shuffle action's victims, chosen by strategies
-- (Volcano 1.15's rescheduling plugin). Every `interval` it names the
-- running tasks to evict from over-used nodes; the shuffle action
-- evicts them, their controllers make them again, and the next sessions
-- place them on the nodes with room.
--
-- The one strategy Volcano 1.15 registers, lowNodeUtilization:
-- - a node's utilization is its measured load (annotation
--   volray.io/usage, see the usage plugin) while current, else its pods'
--   requests, in percent of its allocatable cpu and memory; pods is its
--   pod count in percent of its max pods;
-- - low nodes: schedulable, under `thresholds` in every resource;
--   high nodes: over `targetThresholds` in some resource. Nothing is
--   done when no node is low, every node is, no node is high, or no more
--   than numberOfNodes are low;
-- - the room: what the low nodes have below their targets (cpu, memory);
-- - high nodes most used first (cpu + memory), their tasks least
--   important first (priority, then BestEffort, Burstable, Guaranteed),
--   are evicted while the node is at or over a target and the room lasts.
-- A task is never taken when it is critical, its priority is at or
-- above thresholdPriority (thresholdPriorityClassName's, by default
-- system-cluster-critical's: 2000000000), it has no owner (nothing would
-- make it again) or a DaemonSet owns it (it would come back on the same
-- node); with nodeFit (default true) only when its requests fit the
-- idle room of a low node, which it then takes. Volcano declares these
-- parameters and does not use them; volray does, as the descheduler's
-- LowNodeUtilization, of which this strategy is a port, does.
--
-- Arguments:
--   interval       Go duration, default 5m (one that does not parse: 5m);
--                  counted from the first session, as Volcano counts from
--                  the scheduler's start
--   metricsPeriod  accepted; volray's measure is a 10-minute average
--   strategies     list of {name, params}, default lowNodeUtilization
--                  with thresholds and targetThresholds 100 (nothing
--                  moves); params: thresholds, targetThresholds ({cpu,
--                  memory, pods} percent), thresholdPriority,
--                  thresholdPriorityClassName, nodeFit, numberOfNodes.
--                  offlineOnly (only pods annotated volcano.sh/preemptable
--                  "true" may move) and lowPriorityFirst (the order
--                  lowNodeUtilization already takes) are the filter and
--                  order of Volcano's rescheduling design, which its code
--                  accepts without acting on; any other strategy is left
--                  out, with a warning.
--   queueSelector  list of queue names: only their jobs' pods may move
--   labelSelector  table of labels a pod must carry to move (the design's
--                  filters; Volcano's code ignores them)
local R = {
  arguments = {
    interval = { type = "string", default = "5m" },
    metricsPeriod = { type = "string", default = "5m" },
    strategies = { type = "table", default = {} },
    queueSelector = { type = "table", default = {} },
    labelSelector = { type = "table", default = {} },
  },
}

local duration = require("sched.duration")
local measure = require("sched.measure")

local DEFAULT_INTERVAL = 300
local SYSTEM_PRIORITY = {
  ["system-cluster-critical"] = 2000000000,
  ["system-node-critical"] = 2000001000,
}
local RESOURCES = { "cpu", "memory", "pods" }

local last_run	-- survives sessions: the rate limit
local due, now, strategies, offline_only, queues, labels
local warned = {}

local function warn_once(key, text)
  if warned[key] then return end
  warned[key] = true
  volray.log("warn", "rescheduling: " .. text)
end

-- {cpu, memory, pods} percentages from a table of them (Volcano's
-- "pod" is read as pods), over defaults of 100.
local function percents(t)
  local r = { cpu = 100, memory = 100, pods = 100 }
  for k, v in pairs(t or {}) do
    if k == "pod" then k = "pods" end
    if r[k] ~= nil and tonumber(v) then r[k] = tonumber(v) end
  end
  return r
end

function R.open(ssn, args)
  now = ssn.now
  local interval = duration.parse(args.interval)
  if interval == nil or interval < 0 then
    warn_once("interval:" .. tostring(args.interval), "interval " ..
      tostring(args.interval) .. " is not a duration; 5m is used")
    interval = DEFAULT_INTERVAL
  end
  if last_run == nil or now < last_run then last_run = now end
  due = now - last_run >= interval
  if due then last_run = now end
  -- The next run, though nothing else changes by then.
  if interval > 0 then ssn:wake_after(last_run + interval - now) end
  strategies, offline_only = {}, false
  queues, labels = nil, args.labelSelector or {}
  for _, q in ipairs(args.queueSelector or {}) do
    queues = queues or {}
    queues[tostring(q)] = true
  end
  for _, s in ipairs(args.strategies or {}) do
    if type(s) == "table" and s.name == "lowNodeUtilization" then
      strategies[#strategies + 1] = s
    elseif type(s) == "table" and s.name == "offlineOnly" then
      offline_only = true
    elseif type(s) == "table" and s.name == "lowPriorityFirst" then
      -- lowNodeUtilization's order already
    else
      local name = type(s) == "table" and tostring(s.name) or tostring(s)
      warn_once("strategy:" .. name, "strategy " .. name ..
        " is not known (Volcano 1.15 has lowNodeUtilization); left out")
    end
  end
  if #strategies == 0 then
    strategies[1] = { name = "lowNodeUtilization", params = {} }
  end
end

local function utilization(node)
  local m = measure.load(node, now)
  local a, u = node.allocatable, {}
  if m ~= nil then
    u.cpu, u.memory = m.cpu, m.memory
  else
    u.cpu = a.cpu > 0 and node.used.cpu * 100 / a.cpu or 0
    u.memory = a.memory > 0 and node.used.memory * 100 / a.memory or 0
  end
  u.pods = node.max_pods > 0 and node.pods * 100 / node.max_pods or 0
  return u
end

-- 0 BestEffort, 1 Burstable, 2 Guaranteed.
local function qos(task)
  if task.best_effort then return 0 end
  local spec = (task.obj or {}).spec or {}
  for _, c in ipairs(spec.containers or {}) do
    local r = c.resources or {}
    local lim, req = r.limits or {}, r.requests or {}
    for _, name in ipairs({ "cpu", "memory" }) do
      if lim[name] == nil then return 1 end
      if req[name] ~= nil and tostring(req[name]) ~= tostring(lim[name]) then return 1 end
    end
  end
  return 2
end

-- Whether the filters let the task move: offlineOnly, queueSelector,
-- labelSelector.
local function selected(task)
  if offline_only and (task.annotations or {})["volcano.sh/preemptable"] ~= "true" then
    return false
  end
  if queues ~= nil and not queues[task.job.queue or ""] then return false end
  local have = task.labels or {}
  for k, v in pairs(labels) do
    if have[k] ~= tostring(v) then return false end
  end
  return true
end

-- Whether something would make the task's pod again elsewhere.
local function movable(task)
  local owners = (((task.obj or {}).metadata) or {}).ownerReferences
  if type(owners) ~= "table" or #owners == 0 then return false end
  for _, o in ipairs(owners) do
    if o.kind == "DaemonSet" then return false end
  end
  return true
end

local function fmt(u)
  return string.format("cpu %.0f%%, memory %.0f%%, pods %.0f%%", u.cpu, u.memory, u.pods)
end

local function low_node_utilization(ssn, p, victims, reasons)
  p = p or {}
  local th, tt = percents(p.thresholds), percents(p.targetThresholds)
  local floor = tonumber(p.thresholdPriority)
  if floor == nil then
    local class = p.thresholdPriorityClassName or "system-cluster-critical"
    floor = SYSTEM_PRIORITY[class]
    if floor == nil then
      warn_once("class:" .. tostring(class), "thresholdPriorityClassName " ..
        tostring(class) .. " is not a system class; give thresholdPriority; " ..
        "system-cluster-critical's is used")
      floor = SYSTEM_PRIORITY["system-cluster-critical"]
    end
  end
  local node_fit = p.nodeFit ~= false and p.nodeFit ~= "false"
  local min_low = tonumber(p.numberOfNodes) or 0

  local nodes = ssn:nodes()
  local low, high = {}, {}
  for _, n in ipairs(nodes) do
    local u = utilization(n)
    local is_low = not n.unschedulable
    for _, r in ipairs(RESOURCES) do
      if u[r] >= th[r] then is_low = false end
    end
    if is_low then
      low[#low + 1] = { node = n, u = u, free = { cpu = n.idle.cpu, memory = n.idle.memory,
        pods = n.max_pods - n.pods } }
    else
      for _, r in ipairs(RESOURCES) do
        if u[r] > tt[r] then high[#high + 1] = { node = n, u = u }; break end
      end
    end
  end
  if #low == 0 or #low == #nodes or #high == 0 or #low <= min_low then return end

  -- What the low nodes can take before they reach their targets.
  local room = { cpu = 0, memory = 0 }
  for _, l in ipairs(low) do
    local a = l.node.allocatable
    room.cpu = room.cpu + (tt.cpu - l.u.cpu) * a.cpu / 100
    room.memory = room.memory + (tt.memory - l.u.memory) * a.memory / 100
  end

  table.sort(high, function(a, b)
    local sa, sb = a.u.cpu + a.u.memory, b.u.cpu + b.u.memory
    if sa ~= sb then return sa > sb end
    return a.node.name < b.node.name
  end)
  for _, h in ipairs(high) do
    local n, u = h.node, h.u
    local cands = {}
    for _, t in ipairs(ssn:node_tasks(n)) do
      if t.status == "Running" and not t.critical and t.priority < floor and
          movable(t) and selected(t) then
        cands[#cands + 1] = { t = t, q = qos(t) }
      end
    end
    table.sort(cands, function(a, b)
      if a.t.priority ~= b.t.priority then return a.t.priority < b.t.priority end
      if a.q ~= b.q then return a.q < b.q end
      return a.t.name < b.t.name
    end)
    local before = fmt(u)
    for _, c in ipairs(cands) do
      local over = false
      for _, r in ipairs(RESOURCES) do
        if u[r] >= tt[r] then over = true end
      end
      if not over or room.cpu <= 0 or room.memory <= 0 then break end
      local req, a = c.t.resreq, n.allocatable
      local home = not node_fit
      if node_fit then
        for _, l in ipairs(low) do
          if l.free.cpu >= req.cpu and l.free.memory >= req.memory and l.free.pods >= 1 then
            l.free.cpu, l.free.memory = l.free.cpu - req.cpu, l.free.memory - req.memory
            l.free.pods = l.free.pods - 1
            home = true
            break
          end
        end
      end
      if home then
        room.cpu, room.memory = room.cpu - req.cpu, room.memory - req.memory
        if a.cpu > 0 then u.cpu = u.cpu - req.cpu * 100 / a.cpu end
        if a.memory > 0 then u.memory = u.memory - req.memory * 100 / a.memory end
        if n.max_pods > 0 then u.pods = u.pods - 100 / n.max_pods end
        victims[#victims + 1] = c.t
        reasons[#reasons + 1] = "lowNodeUtilization: node " .. n.name .. " (" .. before ..
          ") is over its target utilization (" .. fmt(tt) .. ")"
      end
    end
  end
end

function R.victim_tasks(ssn)
  if not due then return nil end
  local victims, reasons = {}, {}
  for _, s in ipairs(strategies) do
    low_node_utilization(ssn, s.params, victims, reasons)
  end
  return victims, reasons
end

return R
