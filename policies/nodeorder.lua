-- nodeorder: among the nodes that fit, prefer the emptiest, the most
-- balanced, the ones the pod prefers and the ones whose soft taints it
-- tolerates.
--
-- Scores computed in C, each 0..100 times its weight, summed:
-- leastrequested (free cpu and memory after placing the pod),
-- balancedresource (cpu and memory used evenly), nodeaffinity (the pod's
-- preferred node affinity), tainttoleration (PreferNoSchedule taints the
-- pod tolerates).
--
-- Arguments (Volcano's names):
--   leastrequested.weight    number, default 1
--   balancedresource.weight  number, default 1
--   nodeaffinity.weight      number, default 2
--   tainttoleration.weight   number, default 3
--   mostrequested.weight, podaffinity.weight, imagelocality.weight,
--   podtopologyspread.weight, selectorspread.weight: accepted, unused
local N = {
  arguments = {
    ["leastrequested.weight"] = { type = "number", default = 1, min = 0 },
    ["balancedresource.weight"] = { type = "number", default = 1, min = 0 },
    ["nodeaffinity.weight"] = { type = "number", default = 2, min = 0 },
    ["tainttoleration.weight"] = { type = "number", default = 3, min = 0 },
    ["mostrequested.weight"] = { type = "number", default = 0, min = 0 },
    ["podaffinity.weight"] = { type = "number", default = 2, min = 0 },
    ["imagelocality.weight"] = { type = "number", default = 1, min = 0 },
    ["podtopologyspread.weight"] = { type = "number", default = 2, min = 0 },
    ["selectorspread.weight"] = { type = "number", default = 0, min = 0 },
  },
}

function N.open(ssn, args)
  ssn:use_scores {
    leastrequested = args["leastrequested.weight"],
    balancedresource = args["balancedresource.weight"],
    nodeaffinity = args["nodeaffinity.weight"],
    tainttoleration = args["tainttoleration.weight"],
  }
end

return N
