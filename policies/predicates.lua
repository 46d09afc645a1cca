-- predicates: a task goes only where Kubernetes would let it run.
--
-- Turns on the C predicates: the node is schedulable (not cordoned), has
-- room (cpu, memory, extended resources, pod count), matches the pod's
-- nodeSelector and required node affinity, carries no NoSchedule or
-- NoExecute taint the pod does not tolerate, and satisfies the pod's
-- required pod affinity and anti-affinity on kubernetes.io/hostname.
-- Without this plugin only the resources are checked.
--
-- Arguments: Volcano's switches are accepted (all checks above are always
-- on with the plugin; GPU sharing and DRA are not implemented).
local P = {
  arguments = {
    ["predicate.NodeAffinityEnable"] = { type = "boolean", default = true },
    ["predicate.NodePortsEnable"] = { type = "boolean", default = true },
    ["predicate.TaintTolerationEnable"] = { type = "boolean", default = true },
    ["predicate.PodAffinityEnable"] = { type = "boolean", default = true },
    ["predicate.NodeVolumeLimitsEnable"] = { type = "boolean", default = true },
    ["predicate.VolumeZoneEnable"] = { type = "boolean", default = true },
    ["predicate.PodTopologySpreadEnable"] = { type = "boolean", default = true },
    ["predicate.CacheEnable"] = { type = "boolean", default = true },
    ["predicate.ProportionalEnable"] = { type = "boolean", default = false },
    ["predicate.GPUSharingEnable"] = { type = "boolean", default = false },
    ["predicate.GPUNumberEnable"] = { type = "boolean", default = false },
    ["predicate.DynamicResourceAllocationEnable"] = { type = "boolean", default = false },
  },
}

function P.open(ssn, args)
  ssn:use_predicates()
end

return P
