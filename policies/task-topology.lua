-- task-topology: a job's tasks placed by the affinity and anti-affinity
-- of their roles (Volcano 1.15's task-topology plugin).
--
-- A PodGroup (a vcjob passes them on) says, in annotations, which roles
-- (volcano.sh/task-spec) go together and which apart:
--   volcano.sh/task-topology-affinity       "ps,worker;ps2"
--   volcano.sh/task-topology-anti-affinity  "ps;worker,chief"
--   volcano.sh/task-topology-task-order     "ps,worker"
-- Groups are separated by ";" and roles by ",": roles of one group
-- attract (affinity) or repel (anti-affinity) each other, a group of one
-- role its own tasks. A role that does not exist in the job, or twice in
-- a group, makes the plugin ignore the job, as Volcano does.
--
-- At the start of a session, each job with pending tasks and such
-- annotations gets buckets: its tasks of roles named in an affinity or
-- anti-affinity group, bound ones first (one bucket per node), then the
-- others by the task order (earlier roles first, then the stronger
-- topology: self anti-affinity 4, inter-role affinity 3, self affinity 2,
-- inter-role anti-affinity 1, then pod name), each into the bucket whose
-- roles it likes most (affinity +1 per task, anti-affinity -1), the one
-- asking least resources on a tie, or a new bucket when it dislikes them
-- all. A bucket is meant for one node:
-- - task_order: a job's tasks in buckets before the others; the fuller
--   bucket first, then the lower bucket; within a bucket by the order
--   above;
-- - node_order: for a task in a bucket, on a node that has room for it
--   (idle plus releasing): the bucket's tasks already on that node, plus
--   the bucket's pending tasks, less one for each other pending task the
--   node could not also hold, less one per task of a role this one
--   repels already placed there; times task-topology.weight, scaled so
--   the largest bucket scores 100 (MaxNodeScore).
-- - on_allocate: a placed task counts for its node from then on.
-- Where Volcano walks a Go map (a bucket's other tasks, in random order),
-- this walks them in bucket order, so the same input gives the same
-- score.
--
-- Arguments:
--   task-topology.weight  number, default 1
local T = {
  arguments = {
    ["task-topology.weight"] = { type = "number", default = 1, min = 0 },
  },
}

local AFFINITY = "volcano.sh/task-topology-affinity"
local ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"
local TASK_ORDER = "volcano.sh/task-topology-task-order"

-- The priority of each kind of topology a role may have.
local SELF_ANTI, INTER_AFF, SELF_AFF, INTER_ANTI = 4, 3, 2, 1

local weight = 1
local managers = {}	-- job key -> manager, this session

local function split(text, sep)
  local out = {}
  for part in (text .. sep):gmatch("(.-)" .. sep) do out[#out + 1] = part end
  return out
end

-- Volcano's affinityCheck: every named role exists, none twice in a group.
local function check(roles, groups)
  for _, group in ipairs(groups) do
    local seen = {}
    for _, role in ipairs(group) do
      if role ~= "" then
        if not roles[role] or seen[role] then return false end
        seen[role] = true
      end
    end
  end
  return true
end

local function read_topology(job, tasks)
  local a = job.annotations or {}
  local aff, anti, order = a[AFFINITY], a[ANTI_AFFINITY], a[TASK_ORDER]
  if aff == nil and anti == nil and order == nil then return nil end
  local roles = {}
  for _, t in ipairs(tasks) do roles[t.role or ""] = true end
  local topo = { affinity = {}, anti = {}, order = {} }
  if aff ~= nil then
    for i, g in ipairs(split(aff, ";")) do topo.affinity[i] = split(g, ",") end
    if not check(roles, topo.affinity) then return nil end
  end
  if anti ~= nil then
    for i, g in ipairs(split(anti, ";")) do topo.anti[i] = split(g, ",") end
    if not check(roles, topo.anti) then return nil end
  end
  if order ~= nil then
    topo.order = split(order, ",")
    if not check(roles, { topo.order }) then return nil end
  end
  return topo
end

local function add_pair(m, a, b)
  m[a] = m[a] or {}
  m[a][b] = true
end

local function new_manager(topo)
  local m = { priority = {}, exist_order = {}, inter_aff = {}, self_aff = {},
    inter_anti = {}, self_anti = {}, buckets = {}, bucket_of = {},
    role_of = {}, max_size = 0, node_roles = {} }
  local function mark(role, p)
    if p > (m.priority[role] or 0) then m.priority[role] = p end
  end
  local function apply(groups, self, inter, pself, pinter)
    for _, g in ipairs(groups) do
      if #g == 1 then
        self[g[1]] = true
        mark(g[1], pself)
      else
        for i, src in ipairs(g) do
          for k = 1, i - 1 do
            add_pair(inter, src, g[k])
            add_pair(inter, g[k], src)
          end
          mark(src, pinter)
        end
      end
    end
  end
  apply(topo.affinity, m.self_aff, m.inter_aff, SELF_AFF, INTER_AFF)
  apply(topo.anti, m.self_anti, m.inter_anti, SELF_ANTI, INTER_ANTI)
  for i, role in ipairs(topo.order) do m.exist_order[role] = #topo.order - i + 1 end
  return m
end

-- Volcano's taskAffinityOrder: 1 when a's role goes before b's.
local function affinity_order(m, a, b)
  local ra, rb = m.role_of[a.uid], m.role_of[b.uid]
  if ra == rb then return 0 end
  local oa, ob = m.exist_order[ra] or 0, m.exist_order[rb] or 0
  if oa ~= ob then return oa > ob and 1 or -1 end
  local pa, pb = m.priority[ra] or 0, m.priority[rb] or 0
  if pa ~= pb then return pa > pb and 1 or -1 end
  return 0
end

-- Volcano's checkTaskSetAffinity over a bucket's or node's roles.
local function set_affinity(m, role, set, only_anti)
  local score = 0
  if role == nil or role == "" then return 0 end
  for other, count in pairs(set) do
    local same = other == role
    if not only_anti then
      local aff
      if same then aff = m.self_aff[role] else aff = m.inter_aff[role] and m.inter_aff[role][other] end
      if aff then score = score + count end
    end
    local anti
    if same then anti = m.self_anti[role] else anti = m.inter_anti[role] and m.inter_anti[role][other] end
    if anti then score = score - count end
  end
  return score
end

local function req_score(r)
  local s = 0
  for name, v in pairs(r or {}) do
    if name == "memory" then s = s + v / 1024 / 1024
    elseif name ~= "pods" then s = s + v end
  end
  return s
end

local function res_add(to, r, sign)
  for name, v in pairs(r or {}) do to[name] = (to[name] or 0) + sign * v end
end

local function new_bucket(m)
  local b = { index = #m.buckets + 1, tasks = {}, ntasks = 0, roles = {},
    req_score = 0, request = {}, bound = 0, node = {} }
  m.buckets[#m.buckets + 1] = b
  return b
end

local function add_to_bucket(m, b, role, task)
  m.bucket_of[task.uid] = b
  b.roles[role] = (b.roles[role] or 0) + 1
  if task.node ~= nil then
    b.node[task.node] = (b.node[task.node] or 0) + 1
    b.bound = b.bound + 1
  else
    b.tasks[#b.tasks + 1] = task
    b.ntasks = b.ntasks + 1
    b.req_score = b.req_score + req_score(task.resreq)
    res_add(b.request, task.resreq, 1)
  end
  if b.ntasks + b.bound > m.max_size then m.max_size = b.ntasks + b.bound end
end

-- Volcano's ConstructBucket: the tasks with a topology, ordered, into
-- buckets.
local function build(m, tasks)
  local list = {}
  for _, t in ipairs(tasks) do
    local role = t.role or ""
    if role ~= "" and m.priority[role] ~= nil then
      m.role_of[t.uid] = role
      list[#list + 1] = t
    end
  end
  table.sort(list, function(a, b)
    if (a.node ~= nil) ~= (b.node ~= nil) then return a.node ~= nil end
    if a.node ~= nil then
      if a.node ~= b.node then return a.node < b.node end
      return a.name < b.name
    end
    local r = affinity_order(m, a, b)
    if r ~= 0 then return r > 0 end
    return a.name < b.name
  end)
  local by_node = {}
  for _, t in ipairs(list) do
    local role = m.role_of[t.uid]
    local chosen, best
    if t.node ~= nil then
      best = 0
      chosen = by_node[t.node]
    else
      for _, b in ipairs(m.buckets) do
        local aff = set_affinity(m, role, b.roles, false)
        if best == nil or aff > best then
          best, chosen = aff, b
        elseif aff == best and b.req_score < chosen.req_score then
          chosen = b
        end
      end
    end
    if chosen == nil or (best ~= nil and best < 0) then
      chosen = new_bucket(m)
      if t.node ~= nil then by_node[t.node] = chosen end
    end
    add_to_bucket(m, chosen, role, t)
  end
end

function T.open(ssn, args)
  weight = args["task-topology.weight"]
  managers = {}
  for _, job in ipairs(ssn.jobs) do
    if job.pending > 0 then
      local tasks = ssn:tasks(job)
      local topo = read_topology(job, tasks)
      if topo ~= nil then
        local m = new_manager(topo)
        build(m, tasks)
        managers[job.key] = m
      end
    end
  end
end

function T.close(ssn)
  managers = {}
end

local function bucket(task)
  local m = managers[task.job.key]
  return m, m and m.bucket_of[task.uid]
end

function T.task_order(ssn, l, r)
  local lm, lb = bucket(l)
  local rm, rb = bucket(r)
  if lm == nil or rm == nil then return 0 end
  if (lb ~= nil) ~= (rb ~= nil) then return lb ~= nil and -1 or 1 end
  if l.job.key ~= r.job.key or lb == nil then return 0 end
  if lb.ntasks ~= rb.ntasks then return lb.ntasks > rb.ntasks and -1 or 1 end
  if lb.index == rb.index then return -affinity_order(lm, l, r) end
  return lb.index < rb.index and -1 or 1
end

-- Whether every resource r names fits in room.
local function fits(r, room)
  for name, v in pairs(r or {}) do
    if name ~= "pods" and v > (room[name] or 0) then return false end
  end
  return true
end

function T.node_order(ssn, task, node)
  local m, b = bucket(task)
  if b == nil then return 0 end
  local room = {}
  res_add(room, node.idle, 1)
  res_add(room, node.releasing, 1)
  if not fits(task.resreq, room) then return 0 end
  local score = b.node[node.name] or 0
  local placed = m.node_roles[node.name]
  if placed ~= nil then
    local anti = set_affinity(m, m.role_of[task.uid], placed, true)
    if anti < 0 then score = score + anti end
  end
  score = score + b.ntasks
  if not fits(b.request, room) then
    local remains = {}
    res_add(remains, b.request, 1)
    for _, other in ipairs(b.tasks) do
      if other.uid ~= task.uid and other.resreq ~= nil then
        res_add(remains, other.resreq, -1)
        score = score - 1
        if fits(remains, room) then break end
      end
    end
  end
  score = score * weight
  if m.max_size ~= 0 then score = score * 100 / m.max_size end
  return score
end

-- A task placed: it counts on its node, and leaves its bucket's pending.
function T.on_allocate(ssn, task)
  local m, b = bucket(task)
  if m == nil or task.node == nil then return end
  local role = task.role or ""
  if role ~= "" then
    m.node_roles[task.node] = m.node_roles[task.node] or {}
    m.node_roles[task.node][role] = (m.node_roles[task.node][role] or 0) + 1
  end
  if b == nil then return end
  b.node[task.node] = (b.node[task.node] or 0) + 1
  b.bound = b.bound + 1
  for i, t in ipairs(b.tasks) do
    if t.uid == task.uid then
      table.remove(b.tasks, i)
      b.ntasks = b.ntasks - 1
      b.req_score = b.req_score - req_score(task.resreq)
      res_add(b.request, task.resreq, -1)
      break
    end
  end
end

return T
