-- network-topology-aware: jobs placed within their network topology
-- (Volcano's network-topology-aware plugin, with its HyperNodes).
--
-- HyperNodes (topology.volcano.sh/v1alpha1) group nodes by tier: tier 1
-- the closest (a rack, one switch), higher tiers groups of lower ones.
-- A PodGroup's spec.networkTopology says how its tasks may spread:
--   mode: hard   all its tasks within one HyperNode of tier <=
--                highestTierAllowed (or the tier named highestTierName);
--                the lowest tier that holds it is tried first, and within
--                a tier the fullest HyperNode that still holds its need
--                (binpack of cpu and memory), so jobs pack racks instead
--                of spreading over them. A job that fits no such
--                HyperNode waits, with the reason on its pods.
--   mode: soft   anywhere, but each task prefers the nodes closest to the
--                job's other tasks: 100 x weight in the same lowest-tier
--                HyperNode, less by tier, 0 sharing none.
-- Jobs without networkTopology are placed as before. The work is done in
-- C (sched/topology.c, allocate.c); this file turns it on.
--
-- Arguments (Volcano's names):
--   weight                        number, default 1: the soft-mode score's
--   hypernode.binpack.cpu         number, default 1: cpu's weight in the
--                                 HyperNode order of hard mode
--   hypernode.binpack.memory      number, default 1: memory's
--   hypernode.binpack.resources   string, accepted, unused
--   hypernode.binpack.normal-pod.enable  boolean, accepted, unused (jobs
--                                 without networkTopology are not
--                                 steered by HyperNode fullness)
--   hypernode.binpack.normal-pod.fading  number, accepted, unused
--   hypernode.gradient.evict.max-hypernodes  number, accepted, unused
local N = {
  arguments = {
    weight = { type = "number", default = 1, min = 0 },
    ["hypernode.binpack.cpu"] = { type = "number", default = 1, min = 0 },
    ["hypernode.binpack.memory"] = { type = "number", default = 1, min = 0 },
    ["hypernode.binpack.resources"] = { type = "string", default = "" },
    ["hypernode.binpack.normal-pod.enable"] = { type = "boolean", default = true },
    ["hypernode.binpack.normal-pod.fading"] = { type = "number", default = 0.8, min = 0 },
    ["hypernode.gradient.evict.max-hypernodes"] = { type = "number", default = 8, min = 0 },
  },
}

function N.open(ssn, args)
  ssn:use_topology {
    weight = args.weight,
    cpu = args["hypernode.binpack.cpu"],
    memory = args["hypernode.binpack.memory"],
  }
end

return N
