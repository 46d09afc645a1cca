-- usage: nodes by their measured load (Volcano 1.15's usage plugin).
--
-- A node's load is its annotation volray.io/usage, which the node
-- runtime of a measured node (the local node, an agent's) writes: the
-- CPU and memory its containers used over the last 10 minutes, in
-- percent of the node's allocatable, and when
-- ("cpu=42.5,memory=31.0,time=2026-12-04T15:00:00Z"). A simulated node
-- has no measure; an annotation a person puts on one (time left out:
-- current) stands for it.
-- - predicate: a node whose CPU or memory load passes its threshold
--   takes no new pod ("the CPU load of the node exceeds the upper
--   limit"), unless enablePredicate is false;
-- - node_order: ((100 - cpu) / 100 * cpu.weight + (100 - memory) / 100 *
--   memory.weight) / (cpu.weight + memory.weight) * 100 * usage.weight.
-- A node without a measure, or one older than 5 minutes (its runtime
-- gone quiet), passes and scores 0, as Volcano does without metrics.
--
-- Arguments:
--   usage.weight   number, default 5
--   cpu.weight     number, default 1
--   memory.weight  number, default 1
--   thresholds     table {cpu = percent, mem = percent}, default 80 each
local U = {
  arguments = {
    ["usage.weight"] = { type = "number", default = 5, min = 0 },
    ["cpu.weight"] = { type = "number", default = 1, min = 0 },
    ["memory.weight"] = { type = "number", default = 1, min = 0 },
    thresholds = { type = "table", default = {} },
  },
}

local measure = require("sched.measure")

local CPU_OVER = "the CPU load of the node exceeds the upper limit"
local MEM_OVER = "the memory load of the node exceeds the upper limit"

local w_usage, w_cpu, w_mem, cpu_max, mem_max, now

function U.open(ssn, args)
  w_usage, w_cpu, w_mem = args["usage.weight"], args["cpu.weight"], args["memory.weight"]
  local t = args.thresholds or {}
  cpu_max = tonumber(t.cpu) or 80
  mem_max = tonumber(t.mem) or 80
  now = ssn.now
end

local function load(node) return measure.load(node, now) end

function U.predicate(ssn, task, node)
  local m = load(node)
  if m == nil then return nil end
  if m.cpu > cpu_max then return CPU_OVER end
  if m.memory > mem_max then return MEM_OVER end
  return nil
end

function U.node_order(ssn, task, node)
  local m = load(node)
  if m == nil or w_cpu + w_mem == 0 then return 0 end
  local s = ((100 - m.cpu) / 100 * w_cpu + (100 - m.memory) / 100 * w_mem) / (w_cpu + w_mem)
  return s * 100 * w_usage
end

return U
