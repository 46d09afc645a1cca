-- conformance: some pods are never taken away.
--
-- Pods in kube-system and pods of the system-cluster-critical and
-- system-node-critical priority classes are never chosen as victims of
-- preemption or reclaim (gang-aware or not).
--
-- Arguments: none.
local C = {}

local function victims(ssn, preemptor, candidates)
  local out = {}
  for _, v in ipairs(candidates) do
    if not v.critical then out[#out + 1] = v end
  end
  return out
end

C.preemptable = victims
C.reclaimable = victims
C.evictable = victims		-- gangpreempt and gangreclaim

return C
