-- binpack: fill nodes up before starting new ones.
--
-- Prefers the node that would be the most used after placing the task:
-- score = sum over resources of weight * (used + request) / allocatable,
-- divided by the sum of the weights, times 100 times binpack.weight.
-- Computed in C.
--
-- Arguments (Volcano's names):
--   binpack.weight     number, default 1
--   binpack.cpu        number, default 1
--   binpack.memory     number, default 1
--   binpack.resources  string, extended resources (accepted, unused)
local B = {
  arguments = {
    ["binpack.weight"] = { type = "number", default = 1, min = 0 },
    ["binpack.cpu"] = { type = "number", default = 1, min = 0 },
    ["binpack.memory"] = { type = "number", default = 1, min = 0 },
    ["binpack.resources"] = { type = "string", default = "" },
  },
}

function B.open(ssn, args)
  ssn:use_scores {
    binpack = args["binpack.weight"],
    binpack_cpu = args["binpack.cpu"],
    binpack_memory = args["binpack.memory"],
  }
end

return B
