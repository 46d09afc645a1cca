-- DaemonSet: one pod of the template on every eligible node, as
-- kube-controller-manager's DaemonSet controller runs it. A node is
-- eligible when it matches the template's nodeSelector and required node
-- affinity and has no NoSchedule or NoExecute taint the pod does not
-- tolerate; every pod tolerates not-ready, unreachable, the pressure
-- taints and the unschedulable one, so a cordoned node keeps (and gets)
-- its daemon. A node that gains an untolerated NoSchedule taint keeps
-- the pod it has; an untolerated NoExecute taint, or a node that no
-- longer matches or is deleted, loses it. A failed pod is deleted (after
-- a back-off when the node's keeps failing) and made again. The pod is
-- not bound here: it
-- gets node affinity to metadata.name of its node and the scheduler binds
-- it. A new template rolls out node by node: with maxSurge 0 an old pod
-- is deleted (at most maxUnavailable unavailable at a time) and its
-- replacement made when it is gone; with maxSurge the new pod starts
-- beside the old one, which goes once the new one is available. OnDelete
-- replaces a pod only when someone deletes it. Each template is a
-- ControllerRevision; pods carry its hash (controller-revision-hash) and
-- the DaemonSet's generation (pod-template-generation).
local v = volray
local podutil = require("podutil")
local nodefit = require("nodefit")
local revisions = require("revisions")
local du = require("deployutil")

local DS = "apps/v1/daemonsets"
local PODS = "v1/pods"
local NODES = "v1/nodes"
local GEN_LABEL = "pod-template-generation"

local controller = {
  primary = DS,
  owns = { PODS, revisions.RESOURCE },
  watches = {
    -- A node added, changed or gone: every DaemonSet looks again.
    { resource = NODES, paths = { "metadata.name" }, map = function()
        local keys = {}
        for _, d in ipairs(v.list(DS, nil,
            { paths = { "metadata.namespace", "metadata.name" } })) do
          keys[#keys + 1] = d.metadata.namespace .. "/" .. d.metadata.name
        end
        return keys
      end },
  },
}

-- The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations).
local DAEMON_TOLERATIONS = {
  { key = "node.kubernetes.io/not-ready", effect = "NoExecute" },
  { key = "node.kubernetes.io/unreachable", effect = "NoExecute" },
  { key = "node.kubernetes.io/disk-pressure", effect = "NoSchedule" },
  { key = "node.kubernetes.io/memory-pressure", effect = "NoSchedule" },
  { key = "node.kubernetes.io/pid-pressure", effect = "NoSchedule" },
  { key = "node.kubernetes.io/unschedulable", effect = "NoSchedule" },
}

local function add_tolerations(spec)
  local tols = spec.tolerations or v.array()
  local extra = {}
  for _, t in ipairs(DAEMON_TOLERATIONS) do extra[#extra + 1] = t end
  if spec.hostNetwork then
    extra[#extra + 1] = { key = "node.kubernetes.io/network-unavailable", effect = "NoSchedule" }
  end
  for _, t in ipairs(extra) do
    local have = false
    for _, x in ipairs(tols) do
      if x.key == t.key and x.effect == t.effect and x.operator == "Exists" then
        have = true
      end
    end
    if not have then
      tols[#tols + 1] = { key = t.key, operator = "Exists", effect = t.effect }
    end
  end
  spec.tolerations = tols
end

local NO_SCHED = { NoSchedule = true, NoExecute = true }
local NO_EXEC = { NoExecute = true }

-- should_run, should_continue_running (NodeShouldRunDaemonPod).
local function eligibility(ds, spec, node)
  local nn = spec.nodeName
  if nn ~= nil and nn ~= "" and nn ~= node.metadata.name then return false, false end
  if not nodefit.affinity_matches(spec, node) then return false, false end
  if nodefit.untolerated(spec.tolerations, node, NO_SCHED) ~= nil then
    return false, nodefit.untolerated(spec.tolerations, node, NO_EXEC) == nil
  end
  return true, true
end

-- The node a daemon pod is for: its binding, else its node affinity.
local function node_of(pod)
  if pod.spec.nodeName ~= nil and pod.spec.nodeName ~= "" then return pod.spec.nodeName end
  local na = pod.spec.affinity and pod.spec.affinity.nodeAffinity
  local req = na and na.requiredDuringSchedulingIgnoredDuringExecution
  for _, term in ipairs(req and req.nodeSelectorTerms or {}) do
    for _, f in ipairs(term.matchFields or {}) do
      if f.key == "metadata.name" and f.operator == "In" and f.values then
        return f.values[1]
      end
    end
  end
  return nil
end

local function owned_pods(ds)
  local out = {}
  for _, p in ipairs(v.list(PODS, ds.metadata.namespace, { owner = ds.metadata.uid })) do
    if v.is_controlled_by(p, ds) then out[#out + 1] = p end
  end
  return out
end

local function is_updated(ds, pod, hash)
  local l = pod.metadata.labels or {}
  return (hash ~= "" and l[revisions.HASH_LABEL] == hash) or
    l[GEN_LABEL] == tostring(math.tointeger(ds.metadata.generation) or ds.metadata.generation)
end

local function by_age(a, b)
  local ta, tb = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
  if ta ~= tb then return ta < tb end
  return a.metadata.name < b.metadata.name
end

-- The template of ds as a pod for node: affinity to that node alone
-- (ReplaceDaemonSetPodNodeNameNodeAffinity) and the daemon tolerations.
local function new_pod(ds, hash, node)
  local gen = tostring(math.tointeger(ds.metadata.generation) or ds.metadata.generation)
  local pod = podutil.from_template(ds, ds.spec.template, ds.metadata.name .. "-",
    { [revisions.HASH_LABEL] = hash, [GEN_LABEL] = gen })
  local spec = pod.spec
  spec.affinity = spec.affinity or {}
  spec.affinity.nodeAffinity = spec.affinity.nodeAffinity or {}
  spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms = v.array({ { matchFields = v.array({
      { key = "metadata.name", operator = "In", values = v.array({ node }) } }) } }),
  }
  add_tolerations(spec)
  return pod
end

local function create_on(ds, hash, nodes)
  for _, node in ipairs(nodes) do
    local created, err = v.create(new_pod(ds, hash, node))
    if not created then
      v.event(ds, "Warning", "FailedCreate", "Error creating: " .. tostring(err))
      error("creating pod: " .. tostring(err), 0)
    end
    v.event(ds, "Normal", "SuccessfulCreate", "Created pod: " .. created.metadata.name)
  end
end

local function delete_pods(ds, names)
  for _, name in ipairs(names) do
    local ok, err, code = v.delete(PODS, ds.metadata.namespace, name)
    if not ok and code ~= 404 then
      v.event(ds, "Warning", "FailedDelete", "Error deleting: " .. tostring(err))
      error("deleting pod " .. name .. ": " .. tostring(err), 0)
    end
    v.event(ds, "Normal", "SuccessfulDelete", "Deleted pod: " .. name)
  end
end

-- A node whose daemon pod keeps failing (a kubelet rejecting it) gets
-- its failed pod deleted after a back-off, 1 s doubling to 15 min, as
-- upstream's failedPodsBackoff; soonest is the nearest end of one.
local backoff = { entries = {}, soonest = nil }

function backoff.wait(ds, node)
  local key = ds.metadata.uid .. "/" .. tostring(node)
  local now = v.time()
  local e = backoff.entries[key]
  if e ~= nil and now - e.last < e.delay then
    local left = e.delay - (now - e.last)
    if backoff.soonest == nil or left < backoff.soonest then backoff.soonest = left end
    return true
  end
  if e == nil or now - e.last > 2 * 900 then
    e = { delay = 1 }
  else
    e.delay = math.min(e.delay * 2, 900)
  end
  e.last = now
  backoff.entries[key] = e
  return false
end

local function surge_allowed(ds)
  local s = ds.spec.updateStrategy
  if s == nil or s.type ~= "RollingUpdate" then return false end
  local ru = s.rollingUpdate
  return ru ~= nil and du.int_or_percent(ru.maxSurge, 100, true) > 0
end

-- What the pods on one node should become (podsShouldBeOnNode): the
-- node wants a pod, or these pods must go.
local function plan_node(ds, hash, should_run, should_continue, pods, create, delete)
  if should_run and #pods == 0 then
    create[#create + 1] = true
    return
  end
  if not should_continue then
    for _, p in ipairs(pods) do
      if not podutil.is_terminating(p) then delete[#delete + 1] = p.metadata.name end
    end
    return
  end
  local running = {}
  for _, p in ipairs(pods) do
    if not podutil.is_terminating(p) then
      local phase = podutil.phase(p)
      if phase == "Failed" or phase == "Succeeded" then
        if phase == "Succeeded" then
          delete[#delete + 1] = p.metadata.name
        elseif not backoff.wait(ds, node_of(p)) then
          v.event(ds, "Warning", "FailedDaemonPod", "Found failed daemon pod " ..
            p.metadata.namespace .. "/" .. p.metadata.name .. " on node " ..
            tostring(node_of(p)) .. ", will try to kill it")
          delete[#delete + 1] = p.metadata.name
        end
      else
        running[#running + 1] = p
      end
    end
  end
  table.sort(running, by_age)
  if not surge_allowed(ds) then
    for i = 2, #running do delete[#delete + 1] = running[i].metadata.name end
    return
  end
  if #running == 0 then
    if should_run then create[#create + 1] = true end
    return
  end
  -- Surging: an old and a new pod may share the node until the new one
  -- is ready; anything beyond the oldest of each goes.
  local newest, oldest
  for _, p in ipairs(running) do
    local l = p.metadata.labels or {}
    if l[revisions.HASH_LABEL] == hash and newest == nil then
      newest = p
    elseif l[revisions.HASH_LABEL] ~= hash and oldest == nil then
      oldest = p
    else
      delete[#delete + 1] = p.metadata.name
    end
  end
  if newest ~= nil and oldest ~= nil and
      (not podutil.is_ready(oldest) or podutil.is_ready(newest)) then
    delete[#delete + 1] = oldest.metadata.name
  end
end

-- The old and new pod of a node (findUpdatedPodsOnNode); ok is false
-- when the node has more than one of either.
local function split(ds, pods, hash)
  local new, old
  for _, p in ipairs(pods) do
    if not podutil.is_terminating(p) then
      if is_updated(ds, p, hash) then
        if new ~= nil then return nil, nil, false end
        new = p
      else
        if old ~= nil then return nil, nil, false end
        old = p
      end
    end
  end
  return new, old, true
end

-- One step of a rolling update over the nodes that want a pod; returns
-- the pods to delete and the nodes to surge onto.
local function rolling_update(ds, hash, wanted, by_node, now)
  local desired = #wanted
  local ru = ds.spec.updateStrategy.rollingUpdate or {}
  local surge = du.int_or_percent(ru.maxSurge, desired, true)
  local unavailable = du.int_or_percent(ru.maxUnavailable or 1, desired, true)
  if surge == 0 and unavailable == 0 then unavailable = 1 end
  local min_ready = ds.spec.minReadySeconds or 0
  local delete, surge_nodes = {}, {}
  if surge == 0 then
    local n_unavailable, replace, candidates = 0, {}, {}
    for _, node in ipairs(wanted) do
      local new, old, ok = split(ds, by_node[node] or {}, hash)
      if not ok or (new == nil) == (old == nil) then
        n_unavailable = n_unavailable + 1
      elseif new ~= nil then
        if not podutil.is_available(new, min_ready, now) then
          n_unavailable = n_unavailable + 1
        end
      elseif not podutil.is_available(old, min_ready, now) then
        replace[#replace + 1] = old.metadata.name
      elseif n_unavailable < unavailable then
        candidates[#candidates + 1] = old.metadata.name
      end
    end
    local room = math.max(0, math.min(unavailable - n_unavailable, #candidates))
    for i = 1, room do replace[#replace + 1] = candidates[i] end
    return replace, surge_nodes
  end
  local n_surge, allowed, candidates = 0, {}, {}
  for _, node in ipairs(wanted) do
    local new, old, ok = split(ds, by_node[node] or {}, hash)
    if not ok then
      n_surge = n_surge + 1
    elseif old ~= nil and new == nil then
      if not podutil.is_available(old, min_ready, now) then
        allowed[#allowed + 1] = node
      elseif n_surge < surge then
        candidates[#candidates + 1] = node
      end
    elseif old ~= nil then
      if podutil.is_available(new, min_ready, now) then
        delete[#delete + 1] = old.metadata.name
      else
        n_surge = n_surge + 1
      end
    end
  end
  local room = math.max(0, math.min(surge - n_surge, #candidates))
  for i = 1, room do allowed[#allowed + 1] = candidates[i] end
  return delete, allowed
end

local function status_of(ds, spec, hash, nodes, now)
  local by_node = {}
  for _, p in ipairs(owned_pods(ds)) do
    local n = node_of(p)
    if n ~= nil and not podutil.is_terminating(p) then
      by_node[n] = by_node[n] or {}
      table.insert(by_node[n], p)
    end
  end
  local st = { desiredNumberScheduled = 0, currentNumberScheduled = 0,
    numberMisscheduled = 0, numberReady = 0, numberAvailable = 0,
    updatedNumberScheduled = 0 }
  local min_ready = ds.spec.minReadySeconds or 0
  for _, node in ipairs(nodes) do
    local should_run = eligibility(ds, spec, node)
    local pods = by_node[node.metadata.name] or {}
    if should_run then
      st.desiredNumberScheduled = st.desiredNumberScheduled + 1
      if #pods > 0 then
        st.currentNumberScheduled = st.currentNumberScheduled + 1
        table.sort(pods, by_age)
        local p = pods[1]
        if podutil.is_ready(p) then
          st.numberReady = st.numberReady + 1
          if podutil.is_available(p, min_ready, now) then
            st.numberAvailable = st.numberAvailable + 1
          end
        end
        if is_updated(ds, p, hash) then
          st.updatedNumberScheduled = st.updatedNumberScheduled + 1
        end
      end
    elseif #pods > 0 then
      st.numberMisscheduled = st.numberMisscheduled + 1
    end
  end
  st.numberUnavailable = st.desiredNumberScheduled - st.numberAvailable
  if st.numberUnavailable == 0 then st.numberUnavailable = nil end
  st.observedGeneration = ds.metadata.generation
  st.collisionCount = ds.status and ds.status.collisionCount or nil
  return st
end

function controller.reconcile(req)
  local ds = v.get(DS, req.namespace, req.name)
  if ds == nil or ds.metadata.deletionTimestamp ~= nil then return nil end
  local now = v.time()
  local cur, history = revisions.current(ds)
  local hash = revisions.hash(cur)

  local nodes = v.list(NODES, nil)
  table.sort(nodes, function(a, b) return a.metadata.name < b.metadata.name end)
  local pods = owned_pods(ds)
  local by_node, known = {}, {}
  for _, node in ipairs(nodes) do known[node.metadata.name] = true end
  local create, delete, wanted = {}, {}, {}
  local live = { [cur.metadata.name] = true }
  for _, p in ipairs(pods) do
    local n = node_of(p)
    if n == nil or not known[n] then
      -- Its node is gone (or it never had one): nothing will run it.
      if not podutil.is_terminating(p) then delete[#delete + 1] = p.metadata.name end
    else
      by_node[n] = by_node[n] or {}
      table.insert(by_node[n], p)
    end
    local h = p.metadata.labels and p.metadata.labels[revisions.HASH_LABEL]
    if h ~= nil then live[ds.metadata.name .. "-" .. h] = true end
  end
  local spec = v.deepcopy(ds.spec.template.spec or {})
  add_tolerations(spec)
  backoff.soonest = nil
  for _, node in ipairs(nodes) do
    local name = node.metadata.name
    local should_run, should_continue = eligibility(ds, spec, node)
    local want = {}
    plan_node(ds, hash, should_run, should_continue, by_node[name] or {}, want, delete)
    if #want > 0 then create[#create + 1] = name end
    if should_run then wanted[#wanted + 1] = name end
  end
  delete_pods(ds, delete)
  create_on(ds, hash, create)

  if #delete == 0 and #create == 0 and ds.spec.updateStrategy and
      ds.spec.updateStrategy.type == "RollingUpdate" then
    local old_pods, surge_nodes = rolling_update(ds, hash, wanted, by_node, now)
    delete_pods(ds, old_pods)
    create_on(ds, hash, surge_nodes)
  end
  revisions.truncate(history, ds.spec.revisionHistoryLimit, live)

  ds.status = status_of(ds, spec, hash, nodes, now)
  local out, err, code = v.update_status(ds)
  if out == nil then
    if code == 409 then return { requeue = true } end
    if code == 404 then return nil end
    error("updating status: " .. tostring(err), 0)
  end
  local st = ds.status
  local again = backoff.soonest
  if (ds.spec.minReadySeconds or 0) > 0 and st.numberReady > st.numberAvailable and
      (again == nil or ds.spec.minReadySeconds < again) then
    again = ds.spec.minReadySeconds
  end
  if again ~= nil then return { requeue_after = again } end
  return nil
end

return controller
