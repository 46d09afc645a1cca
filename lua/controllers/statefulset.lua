-- StatefulSet: pods with a stable identity, <set>-0 .. <set>-(N-1), as
-- kube-controller-manager's StatefulSet controller keeps them. Each pod
-- has its name as hostname, the set's serviceName as subdomain, the
-- labels statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index,
-- and a volume per volumeClaimTemplate naming the claim
-- <template>-<set>-<ordinal>, made from the template before the pod when
-- missing and kept after it (nothing provisions it: it stays Pending, and
-- the pod does not wait for it). OrderedReady makes one pod at a time, each
-- Running and Ready (for minReadySeconds) before the next, and removes
-- from the highest ordinal down, one at a time, only while every other
-- pod is healthy; Parallel makes and removes them all at once. A failed
-- pod is deleted and made again with the same name. RollingUpdate
-- replaces pods from the highest ordinal down to the partition, one at a
-- time, each healthy before the next; OnDelete replaces only the pods
-- someone deletes. Templates are ControllerRevisions; status tells how
-- many pods run the current and the update revision.
local v = volray
local podutil = require("podutil")
local revisions = require("revisions")

local STS = "apps/v1/statefulsets"
local PODS = "v1/pods"
local PVCS = "v1/persistentvolumeclaims"
local NAME_LABEL = "statefulset.kubernetes.io/pod-name"
local INDEX_LABEL = "apps.kubernetes.io/pod-index"

local controller = {
  primary = STS,
  owns = { PODS, revisions.RESOURCE },
}

local function present(x) return x ~= nil and x ~= v.null end

local function replicas(set)
  if present(set.spec.replicas) then return set.spec.replicas end
  return 1
end

local function start_ordinal(set)
  local o = set.spec.ordinals
  return o and present(o.start) and o.start or 0
end

-- The ordinal in a pod's name, or nil when it is not <set>-<n>.
local function ordinal_of(set, pod)
  local base, n = pod.metadata.name:match("^(.*)%-(%d+)$")
  if base ~= set.metadata.name then return nil end
  return math.tointeger(tonumber(n))
end

local function healthy(set, pod, now)
  return pod ~= nil and not podutil.is_terminating(pod) and
    podutil.phase(pod) == "Running" and
    podutil.is_available(pod, set.spec.minReadySeconds, now)
end

local function revision_of(pod)
  return pod.metadata.labels and pod.metadata.labels[revisions.HASH_LABEL]
end

-- The set as it was at a revision: its template from the revision's data.
local function template_at(set, rev)
  if rev == nil or rev.data == nil or rev.data.spec == nil then return set.spec.template end
  local t = v.deepcopy(rev.data.spec.template)
  t["$patch"] = nil
  return t
end

-- The pod for ordinal i from template at revision rev.
local function new_pod(set, template, rev, i)
  local name = set.metadata.name .. "-" .. i
  local pod = podutil.from_template(set, template, nil, {
    [NAME_LABEL] = name, [INDEX_LABEL] = tostring(i),
    [revisions.HASH_LABEL] = rev.metadata.name })
  pod.metadata.generateName = nil
  pod.metadata.name = name
  pod.spec.hostname = name
  if present(set.spec.serviceName) and set.spec.serviceName ~= "" then
    pod.spec.subdomain = set.spec.serviceName
  end
  -- One volume per claim template, unless the template mounts its own.
  local vols = pod.spec.volumes or v.array()
  for _, ct in ipairs(set.spec.volumeClaimTemplates or {}) do
    local cname = ct.metadata and ct.metadata.name
    if cname ~= nil then
      local have = false
      for _, vol in ipairs(vols) do
        if vol.name == cname then have = true end
      end
      if not have then
        vols[#vols + 1] = { name = cname, persistentVolumeClaim = {
          claimName = cname .. "-" .. name } }
      end
    end
  end
  if #vols > 0 then pod.spec.volumes = vols end
  return pod
end

-- The pod's claims from the volumeClaimTemplates, made when missing, as
-- the StatefulSet controller's createPersistentVolumeClaims: the
-- template's labels and the set's selector labels; retained (no owner).
local function create_claims(set, pod)
  for _, ct in ipairs(set.spec.volumeClaimTemplates or {}) do
    local cname = ct.metadata and ct.metadata.name
    if cname ~= nil then
      local name = cname .. "-" .. pod.metadata.name
      if v.get(PVCS, set.metadata.namespace, name) == nil then
        local labels = v.deepcopy(ct.metadata.labels or {})
        for k, x in pairs((set.spec.selector or {}).matchLabels or {}) do labels[k] = x end
        local claim = { apiVersion = "v1", kind = "PersistentVolumeClaim",
          metadata = { name = name, namespace = set.metadata.namespace, labels = labels,
            annotations = v.deepcopy(ct.metadata.annotations or {}) },
          spec = v.deepcopy(ct.spec or {}) }
        local out, err, code = v.create(claim)
        if out == nil and code ~= 409 then
          v.event(set, "Warning", "FailedCreate", "create Claim " .. name .. " for Pod " ..
            pod.metadata.name .. " in StatefulSet " .. set.metadata.name .. " failed error: " .. tostring(err))
          error("creating claim: " .. tostring(err), 0)
        end
        if out ~= nil then
          v.event(set, "Normal", "SuccessfulCreate", "create Claim " .. name .. " Pod " ..
            pod.metadata.name .. " in StatefulSet " .. set.metadata.name .. " success")
        end
      end
    end
  end
end

local function create(set, pod)
  create_claims(set, pod)
  local created, err, code = v.create(pod)
  if created == nil and code ~= 409 then
    v.event(set, "Warning", "FailedCreate", "create Pod " .. pod.metadata.name ..
      " in StatefulSet " .. set.metadata.name .. " failed error: " .. tostring(err))
    error("creating pod: " .. tostring(err), 0)
  end
  if created ~= nil then
    v.event(set, "Normal", "SuccessfulCreate", "create Pod " .. pod.metadata.name ..
      " in StatefulSet " .. set.metadata.name .. " successful")
  end
end

local function delete(set, pod)
  local ok, err, code = v.delete(PODS, set.metadata.namespace, pod.metadata.name)
  if not ok and code ~= 404 then
    v.event(set, "Warning", "FailedDelete", "delete Pod " .. pod.metadata.name ..
      " in StatefulSet " .. set.metadata.name .. " failed error: " .. tostring(err))
    error("deleting pod: " .. tostring(err), 0)
  end
  v.event(set, "Normal", "SuccessfulDelete", "delete Pod " .. pod.metadata.name ..
    " in StatefulSet " .. set.metadata.name .. " successful")
end

-- Make the pods what the spec wants (the sync of stateful_set_control.go);
-- one step when OrderedReady, as much as can be done when Parallel.
local function sync(set, pods, cur_rev, upd_rev, now)
  local ordered = set.spec.podManagementPolicy ~= "Parallel"
  local first, n = start_ordinal(set), replicas(set)
  local want, condemned = {}, {}
  for _, p in ipairs(pods) do
    local i = ordinal_of(set, p)
    if i ~= nil and i >= first and i < first + n then
      want[i] = p
    elseif i ~= nil then
      condemned[#condemned + 1] = p
    end
  end
  table.sort(condemned, function(a, b) return ordinal_of(set, a) > ordinal_of(set, b) end)

  local strategy = set.spec.updateStrategy or {}
  local rolling = strategy.type ~= "OnDelete"
  local partition = rolling and strategy.rollingUpdate and
    present(strategy.rollingUpdate.partition) and strategy.rollingUpdate.partition or nil
  local cur_count = set.status and set.status.currentReplicas or 0

  for i = first, first + n - 1 do
    local p = want[i]
    if p ~= nil and not podutil.is_terminating(p) and
        (podutil.phase(p) == "Failed" or podutil.phase(p) == "Succeeded") then
      v.event(set, "Warning", "RecreatingFailedPod", "StatefulSet " ..
        set.metadata.namespace .. "/" .. set.metadata.name .. " is recreating " ..
        podutil.phase(p) .. " Pod " .. p.metadata.name)
      delete(set, p)
      if ordered then return end
    elseif p == nil then
      -- Below the partition (or the count already current), a pod made
      -- again keeps the current revision.
      local rev = upd_rev
      if rolling and ((partition == nil and i - first < cur_count) or
          (partition ~= nil and i - first < partition)) then
        rev = cur_rev
      end
      create(set, new_pod(set, template_at(set, rev), rev, i))
      if ordered then return end
    elseif ordered and not healthy(set, p, now) then
      return
    end
  end

  for _, p in ipairs(condemned) do
    if podutil.is_terminating(p) then
      if ordered then return end
    else
      if ordered then
        for i = first, first + n - 1 do
          if not healthy(set, want[i], now) then return end
        end
      end
      delete(set, p)
      if ordered then return end
    end
  end

  if not rolling then return end
  -- RollingUpdate: the highest ordinal first, down to the partition.
  for i = first + n - 1, first + (partition or 0), -1 do
    local p = want[i]
    if p ~= nil then
      if revision_of(p) ~= upd_rev.metadata.name and not podutil.is_terminating(p) then
        v.event(set, "Normal", "SuccessfulDelete", "StatefulSet " ..
          set.metadata.name .. " is updating Pod " .. p.metadata.name)
        delete(set, p)
        return
      end
      if not healthy(set, p, now) then return end
    end
  end
end

local function owned_pods(set)
  local out = {}
  for _, p in ipairs(v.list(PODS, set.metadata.namespace, { owner = set.metadata.uid })) do
    if v.is_controlled_by(p, set) then out[#out + 1] = p end
  end
  return out
end

local function status_of(set, pods, cur_rev, upd_rev, now)
  local st = { replicas = 0, readyReplicas = 0, currentReplicas = 0,
    updatedReplicas = 0, availableReplicas = 0 }
  -- As upstream counts: a pod being deleted is still one of the replicas
  -- (and ready while it is), but of no revision.
  for _, p in ipairs(pods) do
    if ordinal_of(set, p) ~= nil then
      st.replicas = st.replicas + 1
      if podutil.phase(p) == "Running" and v.is_true(p, "Ready") then
        st.readyReplicas = st.readyReplicas + 1
        local c = v.get_condition(p, "Ready")
        local since = c and c.lastTransitionTime and v.time(c.lastTransitionTime)
        local min = set.spec.minReadySeconds or 0
        if min == 0 or (since ~= nil and now - since >= min) then
          st.availableReplicas = st.availableReplicas + 1
        end
      end
    end
    if ordinal_of(set, p) ~= nil and not podutil.is_terminating(p) then
      local r = revision_of(p)
      if r == cur_rev.metadata.name then st.currentReplicas = st.currentReplicas + 1 end
      if r == upd_rev.metadata.name then st.updatedReplicas = st.updatedReplicas + 1 end
    end
  end
  st.currentRevision = cur_rev.metadata.name
  st.updateRevision = upd_rev.metadata.name
  -- A finished rolling update makes the update revision the current one.
  local strategy = set.spec.updateStrategy or {}
  if strategy.type ~= "OnDelete" and st.updatedReplicas == st.replicas and
      st.readyReplicas == st.replicas and st.replicas == replicas(set) then
    st.currentRevision = st.updateRevision
    st.currentReplicas = st.updatedReplicas
  end
  st.observedGeneration = set.metadata.generation
  st.collisionCount = set.status and set.status.collisionCount or 0
  return st
end

function controller.reconcile(req)
  local set = v.get(STS, req.namespace, req.name)
  if set == nil or set.metadata.deletionTimestamp ~= nil then return nil end
  local now = v.time()
  local upd_rev, history = revisions.current(set)
  local cur_rev = upd_rev
  local cur_name = set.status and set.status.currentRevision
  for _, r in ipairs(history) do
    if r.metadata.name == cur_name then cur_rev = r end
  end

  sync(set, owned_pods(set), cur_rev, upd_rev, now)

  local pods = owned_pods(set)
  local live = { [cur_rev.metadata.name] = true, [upd_rev.metadata.name] = true }
  for _, p in ipairs(pods) do
    local r = revision_of(p)
    if r ~= nil then live[r] = true end
  end
  revisions.truncate(history, set.spec.revisionHistoryLimit, live)

  set.status = status_of(set, pods, cur_rev, upd_rev, now)
  local out, err, code = v.update_status(set)
  if out == nil then
    if code == 409 then return { requeue = true } end
    if code == 404 then return nil end
    error("updating status: " .. tostring(err), 0)
  end
  local st = set.status
  if (set.spec.minReadySeconds or 0) > 0 and st.readyReplicas > st.availableReplicas then
    return { requeue_after = set.spec.minReadySeconds }
  end
  return nil
end

return controller
