-- pdb: preemption and reclaim never take a victim that would break a
-- PodDisruptionBudget (Volcano's pdb plugin).
--
-- A candidate victim is kept off the list when a PodDisruptionBudget of
-- its namespace selects its labels and has no disruption left: the
-- budget's status.disruptionsAllowed, less the victims this session has
-- already evicted under it, less the candidates already accepted in the
-- same call. Pods the budget already lists as disrupted do not count
-- again. A PDB with an empty selector selects nothing, and a pod without
-- labels is never a victim, as in Volcano.
--
-- Put it in the first tier with preemptable/reclaimable plugins (with
-- gang and conformance), or its answer is not asked: the first tier that
-- accepts victims decides.
--
-- Arguments: none.
local selector = require("sched.selector")

local P = {}

local pdbs		-- by namespace: list of {pdb, evicted}

function P.open(ssn)
  pdbs = {}
  for _, b in ipairs(ssn:pdbs()) do
    if not selector.is_empty(b.selector) then
      local list = pdbs[b.namespace] or {}
      list[#list + 1] = { pdb = b, evicted = 0 }
      pdbs[b.namespace] = list
    end
  end
end

local function budgets_of(task)
  local out = {}
  local labels = task.labels
  if labels == nil or next(labels) == nil then return out end
  for _, e in ipairs(pdbs[task.namespace] or {}) do
    if selector.matches(e.pdb.selector, labels) and
        not (e.pdb.disrupted_pods and e.pdb.disrupted_pods[task.name]) then
      out[#out + 1] = e
    end
  end
  return out
end

local function victims(ssn, preemptor, candidates)
  local out, taken = {}, {}
  for _, v in ipairs(candidates) do
    if v.labels ~= nil and next(v.labels) ~= nil then
      local ok = true
      local budgets = budgets_of(v)
      for _, e in ipairs(budgets) do
        local left = (e.pdb.disruptions_allowed or 0) - e.evicted - (taken[e] or 0)
        if left <= 0 then ok = false end
      end
      if ok then
        for _, e in ipairs(budgets) do taken[e] = (taken[e] or 0) + 1 end
        out[#out + 1] = v
      end
    end
  end
  return out
end

P.preemptable = victims
P.reclaimable = victims
P.evictable = victims		-- gangpreempt and gangreclaim

-- Count this session's evictions (and their undoing) against budgets.
function P.on_deallocate(ssn, task)
  if task.status == "Releasing" then
    for _, e in ipairs(budgets_of(task)) do e.evicted = e.evicted + 1 end
  end
end

function P.on_allocate(ssn, task)
  if task.status == "Running" or task.status == "Bound" then
    for _, e in ipairs(budgets_of(task)) do e.evicted = e.evicted - 1 end
  end
end

return P
