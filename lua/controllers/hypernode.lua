-- HyperNodes from node labels: a network topology for clusters that
-- describe it on their nodes (and for simulated ones: `volray node add
-- --virtual --topology`).
--
-- A node labelled volray.io/hypernode-tier1=rack-3 is in the HyperNode
-- rack-3 of tier 1; volray.io/hypernode-tier2=spine-0 puts its tier-1
-- HyperNode in spine-0 of tier 2, and so on up to tier 9. For every such
-- value this controller keeps a HyperNode (topology.volcano.sh/v1alpha1)
-- labelled volray.io/hypernode-generated=node-labels: tier 1 selects its
-- nodes by the label; a higher tier lists the HyperNodes of the tier
-- below that its nodes are in; status.nodeCount counts its nodes. A
-- HyperNode whose value no node carries any more is deleted. HyperNodes
-- written by hand (without that label) are never touched; a value that
-- names one of them is skipped, with a warning.
local v = volray

local NODES = "v1/nodes"
local HYPERNODES = "topology.volcano.sh/v1alpha1/hypernodes"
local PREFIX = "volray.io/hypernode-tier"
local GENERATED = "volray.io/hypernode-generated"
local MAX_TIER = 9

-- The HyperNode names a node's labels make it part of.
local function names_of(node)
  local out = {}
  for k, val in pairs((node.metadata and node.metadata.labels) or {}) do
    local t = k:match("^volray%.io/hypernode%-tier(%d)$")
    if t ~= nil and tonumber(t) >= 1 and val ~= "" then out[#out + 1] = val end
  end
  return out
end

local controller = {
  primary = HYPERNODES,
  watches = {
    { resource = NODES, previous = true, paths = { "metadata.labels" },
      map = names_of },
  },
}

-- The tier whose label carries name, and the labels of its nodes.
local function find(name)
  for t = 1, MAX_TIER do
    local nodes = v.list(NODES, nil, { labels = PREFIX .. t .. "=" .. name,
      paths = { "metadata.labels" } })
    if #nodes > 0 then return t, nodes end
  end
  return nil, {}
end

local function members(tier, name, nodes)
  if tier == 1 then
    return { { type = "Node", selector = { labelMatch = {
      matchLabels = { [PREFIX .. "1"] = name } } } } }
  end
  local below, seen = {}, {}
  for _, n in ipairs(nodes) do
    local child = (n.metadata.labels or {})[PREFIX .. (tier - 1)]
    if child ~= nil and child ~= "" and not seen[child] then
      seen[child] = true
      below[#below + 1] = child
    end
  end
  table.sort(below)
  local out = {}
  for _, child in ipairs(below) do
    out[#out + 1] = { type = "HyperNode", selector = { exactMatch = { name = child } } }
  end
  return out
end

local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, x in pairs(a) do if not same(x, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function generated(hn)
  return hn ~= nil and ((hn.metadata.labels or {})[GENERATED] == "node-labels")
end

function controller.reconcile(req)
  local name = req.name
  local cur = v.get(HYPERNODES, nil, name)
  local tier, nodes = find(name)
  if tier == nil then
    if generated(cur) then
      local _, err, code = v.delete(HYPERNODES, nil, name)
      if err ~= nil and code ~= 404 then error("deleting HyperNode " .. name .. ": " .. err) end
    end
    return nil
  end
  if cur ~= nil and not generated(cur) then
    v.log("warn", "HyperNode " .. name .. " exists and was not made from node labels; " ..
      "the nodes' " .. PREFIX .. tier .. " label is not applied")
    return nil
  end
  local want = { tier = tier, tierName = "tier" .. tier, members = members(tier, name, nodes) }
  if #want.members == 0 then return nil end
  if cur == nil then
    local obj = {
      apiVersion = "topology.volcano.sh/v1alpha1", kind = "HyperNode",
      metadata = { name = name, labels = { [GENERATED] = "node-labels" } },
      spec = want,
    }
    local made, err, code = v.create(obj)
    if made == nil then
      if code == 409 then return { requeue = true } end
      error("creating HyperNode " .. name .. ": " .. tostring(err))
    end
    cur = made
  elseif not same(cur.spec, want) then
    cur.spec = want
    local new, err, _, reason = v.update(cur)
    if reason == "Conflict" then return { requeue = true } end
    if new == nil then error("updating HyperNode " .. name .. ": " .. tostring(err)) end
    cur = new
  end
  if (cur.status or {}).nodeCount ~= #nodes then
    cur.status = cur.status or {}
    cur.status.nodeCount = #nodes
    local _, err, _, reason = v.update_status(cur)
    if reason == "Conflict" then return { requeue = true } end
    if err ~= nil then error("status of HyperNode " .. name .. ": " .. tostring(err)) end
  end
  return nil
end

return controller
