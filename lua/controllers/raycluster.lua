-- RayCluster: run a Ray head pod, its Service `<cluster>-head-svc` and
-- the worker groups, as KubeRay's RayCluster controller does. Each worker
-- group keeps clamp(replicas, minReplicas, maxReplicas) replicas of
-- numOfHosts pods (none while the group or the cluster is suspended);
-- pods named in scaleStrategy.workersToDelete go first, finished or
-- broken pods are deleted and replaced on the next pass, surplus pods are
-- removed least useful first. Suspension is two steps: the condition
-- RayClusterSuspending is recorded, then every pod is deleted, and only
-- when none is left is the cluster RayClusterSuspended; clearing suspend
-- has no effect until then. Creates and deletes are remembered
-- (expectations) so a read that lags behind never makes extra pods. With
-- Volcano (see raypodgroup.lua) the PodGroup is made before the pods.
-- status carries KubeRay's fields and conditions; `state` is ready once
-- every desired pod runs and is ready. GCS fault tolerance (raygcsft.lua):
-- with Redis the cluster carries a finalizer, and its deletion ends with
-- KubeRay's Redis cleanup Job (a Warning event when it failed); a head
-- not ready whose Redis Service has no ready endpoint says so in
-- HeadPodReady and an event; the embedded backend gets its PVC. A lost
-- head is made again, except in a provisioned cluster annotated
-- ray.io/disable-provisioned-head-restart (a SidecarMode RayJob's).
local v = volray
local canon = require("canon")
local exp = require("expectations")
local podutil = require("podutil")
local raypod = require("raypod")
local raypg = require("raypodgroup")
local validate = require("rayvalidate")
local cond = require("raycond")
local gcsft = require("raygcsft")

local RC = "ray.io/v1/rayclusters"
local REQUEUE_SHORT = 2    -- after an error or a status change
local REQUEUE_LONG = 300   -- otherwise
local MAX_BURST = 1000     -- pod creations or deletions per pass

local controller = {
  primary = RC,
  owns = { "v1/pods", "v1/services", raypg.PODGROUPS, "batch/v1/jobs" },
}
local JOBS = "batch/v1/jobs"
local REQUEUE_HEAD_GONE = 10  -- KubeRay's wait for the head to terminate
local REQUEUE_REDIS = 10      -- while a head waits for a Redis with no endpoint

-- A failure of this pass: it becomes ReplicaFailure and a short requeue.
local function failure(reason, message)
  return { reason = reason, message = message }
end

-- What rc controls of resource (paths: only those fields, v.list's).
local function owned(resource, rc, paths)
  local out = {}
  for _, o in ipairs(v.list(resource, rc.metadata.namespace, { owner = rc.metadata.uid, paths = paths })) do
    if v.is_controlled_by(o, rc) then out[#out + 1] = o end
  end
  return out
end

-- Pod writes made by this controller, so that a pass lists a cluster's
-- pods once, and again only after it changed them: with 10,000 workers a
-- list is most of a pass's cost.
local pod_writes = 0

-- What a pass reads of a pod: a Ray pod's spec is most of it, and a
-- cluster of 10,000 workers would build it into Lua 10,000 times a pass.
-- raypod.unhealthy fetches the rest for the rare pod that needs it.
local POD_PATHS = { "apiVersion", "kind", "metadata", "status", "spec.nodeName", "spec.restartPolicy" }

-- The cluster's pods (their POD_PATHS), from memo when no pod was written
-- since it was filled.
local function owned_pods(rc, memo)
  if memo.pods == nil or memo.writes ~= pod_writes then
    memo.pods = owned("v1/pods", rc, POD_PATHS)
    memo.writes = pod_writes
  end
  return memo.pods
end

-- upgradeStrategy Recreate (KubeRay 1.7): the head pod carries the hash
-- of the spec without what scaling or external controllers change
-- (replicas, min, max, workersToDelete, tolerations, scheduling gates);
-- when the spec's hash is another, every pod is deleted and made again.
local RECREATE_HASH = "ray.io/upgrade-strategy-recreate-hash"
local KUBERAY_VERSION = "ray.io/kuberay-version"

local function recreate(rc)
  local u = rc.spec.upgradeStrategy
  return u ~= nil and u ~= v.null and u.type == "Recreate"
end

local function recreate_hash(rc)
  local s = v.deepcopy(rc.spec)
  local function mute(t)
    if t and t.spec then t.spec.tolerations = nil; t.spec.schedulingGates = nil end
  end
  mute(s.headGroupSpec.template)
  for _, g in ipairs(s.workerGroupSpecs or {}) do
    g.replicas, g.maxReplicas, g.minReplicas = nil, nil, nil
    if g.scaleStrategy then g.scaleStrategy.workersToDelete = nil end
    mute(g.template)
  end
  s.upgradeStrategy = nil
  return canon.safe_encode(canon.fnv1a32(canon.encode(s)))
end

local function create_pod(rc, node_type, spec, scope, extra)
  local pod = raypod.build(rc, node_type, spec, extra, raypg.for_cluster(rc))
  if node_type == "head" and recreate(rc) then
    pod.metadata.annotations[RECREATE_HASH] = recreate_hash(rc)
    pod.metadata.annotations[KUBERAY_VERSION] = "volray"
  end
  local out, err = v.create(pod)
  pod_writes = pod_writes + 1
  local what = node_type == "head" and "HeadPod" or "WorkerPod"
  if out == nil then
    v.event(rc, "Warning", "FailedToCreate" .. what, "Failed to create " .. node_type .. " Pod: " .. tostring(err))
    return failure("FailedCreate" .. what, tostring(err))
  end
  exp.expect_create(scope, out.metadata.name)
  v.event(rc, "Normal", "Created" .. what, "Created " .. node_type .. " Pod " ..
    rc.metadata.namespace .. "/" .. out.metadata.name)
  return nil
end

local function delete_pod(rc, pod, scope, why)
  local name = pod.metadata.name
  local ok, err, code = v.delete("v1/pods", rc.metadata.namespace, name)
  pod_writes = pod_writes + 1
  local what = pod.metadata.labels[raypod.NODE_TYPE] == "head" and "HeadPod" or "WorkerPod"
  if not ok and code ~= 404 then
    v.event(rc, "Warning", "FailedToDelete" .. what, "Failed to delete Pod " .. name .. ": " .. tostring(err))
    return failure("FailedDelete" .. what, tostring(err))
  end
  exp.expect_delete(scope, name)
  v.event(rc, "Normal", "Deleted" .. what, "Deleted Pod " .. rc.metadata.namespace .. "/" .. name ..
    (why and ("; " .. why) or ""))
  return nil
end

local function active(pods)
  local out = {}
  for _, p in ipairs(pods) do
    if not podutil.is_terminating(p) then out[#out + 1] = p end
  end
  return out
end

-- Replicas of a group: lists of pods sharing a replica name (a pod alone
-- when numOfHosts is 1), newest replica last.
local function replicas_of(pods, hosts)
  local by, order = {}, {}
  for _, p in ipairs(pods) do
    local key = hosts > 1 and (p.metadata.labels[raypod.REPLICA] or p.metadata.name) or p.metadata.name
    if by[key] == nil then
      by[key] = {}
      order[#order + 1] = key
    end
    table.insert(by[key], p)
  end
  local out = {}
  for _, k in ipairs(order) do out[#out + 1] = by[k] end
  return out
end

local function delete_all(rc, pods, scope, why)
  for _, p in ipairs(pods) do
    local f = delete_pod(rc, p, scope, why)
    if f then return f end
  end
  return nil
end

-- Bring one worker group to its desired size. Returns a failure or nil,
-- and whether the pass should look again soon.
local function reconcile_group(rc, group, pods, key)
  local scope = key .. "/" .. group.groupName
  if not exp.satisfied(scope, pods) then return nil, true end
  local live = active(pods)
  if group.suspend == true or rc.spec.suspend == true then
    return delete_all(rc, live, scope, "worker group suspended"), #pods > 0
  end
  local hosts = group.numOfHosts or 1
  -- Unhealthy pods (or incomplete multi-host replicas) go first, whole
  -- replicas at a time; nothing is created in the same pass.
  local broken = false
  for _, rep in ipairs(replicas_of(live, hosts)) do
    local bad = #rep < hosts
    for _, p in ipairs(rep) do
      if raypod.unhealthy(p) then bad = true end
    end
    if bad then
      broken = true
      local f = delete_all(rc, rep, scope, "unhealthy: it is finished or its Ray container exited")
      if f then return f, true end
    end
  end
  if broken then return nil, true end
  -- Pods named in workersToDelete, whatever replicas says.
  local doomed = {}
  local strategy = group.scaleStrategy or {}
  for _, name in ipairs(strategy.workersToDelete or {}) do doomed[name] = true end
  local keep = {}
  for _, rep in ipairs(replicas_of(live, hosts)) do
    local hit = false
    for _, p in ipairs(rep) do
      if doomed[p.metadata.name] then hit = true end
    end
    if hit then
      local f = delete_all(rc, rep, scope, "named in scaleStrategy.workersToDelete")
      if f then return f, true end
    else
      keep[#keep + 1] = rep
    end
  end
  -- replicas clamped, with the autoscaler too (it writes replicas); the
  -- PodGroup's gang is the minimum (raypodgroup.lua).
  local want = raypg.desired_workers(group, false) // hosts
  local diff = want - #keep
  if diff > 0 then
    -- Each replica gets the lowest index not in use in its group
    -- (ray.io/worker-group-replica-index, KubeRay's RayMultiHostIndexing).
    local used = {}
    for _, p in ipairs(live) do
      local ix = tonumber((p.metadata.labels or {})[raypod.REPLICA_INDEX])
      if ix then used[ix] = true end
    end
    local index = 0
    for _ = 1, math.min(diff, MAX_BURST) do
      while used[index] do index = index + 1 end
      used[index] = true
      local replica = hosts > 1 and (group.groupName .. "-" .. v.random_suffix()) or nil
      for h = 0, hosts - 1 do
        local extra = { [raypod.REPLICA_INDEX] = tostring(index) }
        if replica then
          extra[raypod.REPLICA] = replica
          extra[raypod.HOST_INDEX] = tostring(h)
        end
        local f = create_pod(rc, "worker", group, scope, extra)
        if f then return f, true end
      end
    end
    return nil, true
  elseif diff < 0 and rc.spec.enableInTreeAutoscaling ~= true then
    -- The least useful replicas first (judged by their first pod).
    local firsts, rep_of = {}, {}
    for _, rep in ipairs(keep) do
      firsts[#firsts + 1] = rep[1]
      rep_of[rep[1]] = rep
    end
    podutil.sort_for_deletion(firsts)
    for i = 1, math.min(-diff, MAX_BURST) do
      local f = delete_all(rc, rep_of[firsts[i]], scope, "scaling down")
      if f then return f, true end
    end
    return nil, true
  end
  return nil, false
end

-- Delete every pod, then report whether none is left.
local function suspend_pods(rc, pods, key)
  local live = active(pods)
  for _, p in ipairs(live) do
    local scope = key .. "/" .. (p.metadata.labels[raypod.GROUP] or "")
    local f = delete_pod(rc, p, scope, "cluster suspended")
    if f then return f, false end
  end
  return nil, #pods == 0
end

local DISABLE_HEAD_RESTART = "ray.io/disable-provisioned-head-restart"

local function reconcile_head(rc, heads, key)
  local scope = key .. "/head"
  if not exp.satisfied(scope, heads) then return nil, true end
  local live = active(heads)
  if #live == 0 then
    -- A RayJob's SidecarMode cluster gets no new head once provisioned:
    -- its submitter and its submission id went with the old one.
    if cond.is_true(rc.status, "RayClusterProvisioned") and
        (rc.metadata.annotations or {})[DISABLE_HEAD_RESTART] == "true" then
      return nil, false
    end
    return create_pod(rc, "head", rc.spec.headGroupSpec, scope), true
  end
  if #live > 1 then
    return failure("MultipleHeadPods", string.format("%d head pods exist; a RayCluster has one", #live)), true
  end
  if raypod.unhealthy(live[1]) then
    local f = delete_pod(rc, live[1], scope, "unhealthy: it is finished or its Ray container exited")
    return f or failure("HeadPodUnhealthy", "the head Pod " .. live[1].metadata.name ..
      " was unhealthy; it is deleted and will be recreated"), true
  end
  return nil, false
end

local function reconcile_service(rc)
  local name = raypod.head_service_name(rc)
  local svc = v.get("v1/services", rc.metadata.namespace, name)
  if svc ~= nil then return svc, nil end
  local out, err, code = v.create(raypod.head_service(rc))
  if out == nil and code ~= 409 then
    v.event(rc, "Warning", "FailedToCreateHeadService", tostring(err))
    return nil, failure("FailedCreateHeadService", tostring(err))
  end
  if out ~= nil then
    v.event(rc, "Normal", "CreatedService", "Created service " .. rc.metadata.namespace .. "/" .. name)
  end
  return out, nil
end

-- Split a cluster's pods into the head's and each group's.
local function sort_pods(pods)
  local heads, groups = {}, {}
  for _, p in ipairs(pods) do
    local l = p.metadata.labels or {}
    if l[raypod.NODE_TYPE] == "head" then
      heads[#heads + 1] = p
    else
      local g = l[raypod.GROUP] or ""
      groups[g] = groups[g] or {}
      table.insert(groups[g], p)
    end
  end
  return heads, groups
end

-- The pods, the suspension steps, the head, the groups. Returns a
-- failure or nil, and whether to look again soon.
local function reconcile_pods(rc, key, memo)
  local st = rc.status
  local heads, groups = sort_pods(owned_pods(rc, memo))
  local suspending = cond.is_true(st, "RayClusterSuspending")
  local suspended = cond.is_true(st, "RayClusterSuspended")
  if rc.spec.suspend == true and not suspending and not suspended then
    cond.set(st, "RayClusterSuspending", "True", "RayClusterSuspending", "suspending: deleting every Pod")
    v.event(rc, "Normal", "Suspending", "Suspending the RayCluster")
    return nil, true
  end
  if suspending then
    local all = {}
    for _, p in ipairs(heads) do all[#all + 1] = p end
    for _, list in pairs(groups) do for _, p in ipairs(list) do all[#all + 1] = p end end
    local f, done = suspend_pods(rc, all, key)
    if f then return f, true end
    if not done then return nil, true end
    cond.set(st, "RayClusterSuspending", "False", "RayClusterSuspending", "every Pod is deleted")
    cond.set(st, "RayClusterSuspended", "True", "RayClusterSuspended", "the RayCluster is suspended")
    v.event(rc, "Normal", "Suspended", "Suspended the RayCluster")
    return nil, false
  end
  if suspended then
    if rc.spec.suspend == true then return nil, false end
    cond.set(st, "RayClusterSuspended", "False", "RayClusterResumed", "the RayCluster is resumed")
    v.event(rc, "Normal", "Resumed", "Resumed the RayCluster")
  end
  -- Recreate: a spec changed under the running pods takes them all down.
  local head = active(heads)[1]
  if recreate(rc) and head ~= nil then
    local have = (head.metadata.annotations or {})[RECREATE_HASH]
    if have ~= nil and have ~= recreate_hash(rc) then
      local all = {}
      for _, p in ipairs(active(heads)) do all[#all + 1] = p end
      for _, list in pairs(groups) do for _, p in ipairs(active(list)) do all[#all + 1] = p end end
      for _, p in ipairs(all) do
        local scope = key .. "/" .. (p.metadata.labels[raypod.NODE_TYPE] == "head" and "head" or
          (p.metadata.labels[raypod.GROUP] or ""))
        local df = delete_pod(rc, p, scope, "the spec changed, upgradeStrategy Recreate")
        if df then return df, true end
      end
      v.event(rc, "Normal", "DeletedPod", "Deleted all Pods for RayCluster " .. rc.metadata.namespace ..
        "/" .. rc.metadata.name .. " due to spec change with Recreate upgradeStrategy")
      return nil, true
    end
  end
  local f, soon = reconcile_head(rc, heads, key)
  if f then return f, true end
  for _, group in ipairs(rc.spec.workerGroupSpecs or {}) do
    local gf, gsoon = reconcile_group(rc, group, groups[group.groupName] or {}, key)
    if gf then return gf, true end
    soon = soon or gsoon
  end
  -- Pods of groups that no longer exist in the spec.
  local named = {}
  for _, g in ipairs(rc.spec.workerGroupSpecs or {}) do named[g.groupName] = true end
  for g, list in pairs(groups) do
    if not named[g] then
      local df = delete_all(rc, active(list), key .. "/" .. g, "its worker group is gone")
      if df then return df, true end
    end
  end
  return nil, soon
end

local function count_fields(rc, pods)
  local st = rc.status
  local heads, groups = sort_pods(pods)
  local desired, min, max = 0, 0, 0
  local gang_members, res = raypg.cluster_gang(rc.spec)
  for _, g in ipairs(rc.spec.workerGroupSpecs or {}) do
    local hosts = g.numOfHosts or 1
    desired = desired + raypg.desired_workers(g, false)
    if g.suspend ~= true then
      min = min + (g.minReplicas or 0) * hosts
      max = math.min(2147483647, max + (g.maxReplicas or 2147483647) * hosts)
    end
  end
  local ready, available, running_pods = 0, 0, 0
  for _, list in pairs(groups) do
    for _, p in ipairs(active(list)) do
      if podutil.phase(p) == "Running" then available = available + 1 end
      if raypod.running_ready(p) then ready = ready + 1 end
    end
  end
  local live_heads = active(heads)
  local head = live_heads[1]
  local nlive = #live_heads
  for _, list in pairs(groups) do nlive = nlive + #active(list) end
  running_pods = ready + ((head and raypod.running_ready(head)) and 1 or 0)
  st.desiredWorkerReplicas = desired
  st.minWorkerReplicas = min
  st.maxWorkerReplicas = max
  st.readyWorkerReplicas = ready
  st.availableWorkerReplicas = available
  local q = raypg.quantities(res)
  st.desiredCPU = q.cpu or "0"
  st.desiredMemory = q.memory or "0"
  st.desiredGPU = q["nvidia.com/gpu"] or "0"
  st.desiredTPU = q["google.com/tpu"] or "0"
  return head, gang_members, nlive == desired + 1 and running_pods == desired + 1
end

local function compute_status(rc, svc, fail, memo)
  local st = rc.status
  local redis_down = false
  local pods = owned_pods(rc, memo)
  local head, _, all_ready = count_fields(rc, pods)
  st.head = st.head or {}
  st.head.podName = head and head.metadata.name or nil
  st.head.podIP = head and head.status and head.status.podIP or nil
  st.head.serviceName = raypod.head_service_name(rc)
  local ip = svc and svc.spec and svc.spec.clusterIP
  if ip == "None" then ip = st.head.podIP end
  st.head.serviceIP = ip
  local endpoints = {}
  for _, p in ipairs(svc and svc.spec and svc.spec.ports or {}) do
    if p.name then endpoints[p.name] = tostring(p.nodePort or p.port) end
  end
  st.endpoints = next(endpoints) and endpoints or nil
  if head and raypod.running_ready(head) then
    cond.set(st, "HeadPodReady", "True", "HeadPodRunningAndReady", "Head Pod is running and ready")
  elseif head then
    -- A fault-tolerant head waits for its Redis: say why when the
    -- cluster's objects tell (KubeRay's message, and then the cause).
    local redis = gcsft.redis_unavailable(rc, head)
    local msg = "Head Pod " .. head.metadata.name .. " is not ready"
    if redis then
      msg = msg .. ": " .. redis
      redis_down = true
      local was = cond.get(st, "HeadPodReady")
      if was == nil or was.message ~= msg then
        v.event(rc, "Warning", "RedisUnavailable", msg)
      end
    end
    cond.set(st, "HeadPodReady", "False", "HeadPodNotReady", msg)
  else
    cond.set(st, "HeadPodReady", "False", "HeadPodNotFound", "Head Pod not found")
  end
  if not cond.is_true(st, "RayClusterProvisioned") then
    if all_ready then
      cond.set(st, "RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime",
        "All Ray Pods are ready for the first time")
    else
      cond.set(st, "RayClusterProvisioned", "False", "RayClusterPodsProvisioning",
        "RayCluster Pods are being provisioned for first time")
    end
  end
  if fail then
    cond.set(st, "ReplicaFailure", "True", fail.reason, fail.message)
  else
    cond.remove(st, "ReplicaFailure")
  end
  local state = st.state
  if cond.is_true(st, "RayClusterSuspended") then
    state = "suspended"
  elseif fail == nil and all_ready and rc.spec.suspend ~= true then
    state = "ready"
  end
  if state ~= st.state then
    st.state = state
    st.stateTransitionTimes = st.stateTransitionTimes or {}
    st.stateTransitionTimes[state] = v.now()
  end
  st.reason = fail and fail.message or nil
  st.observedGeneration = rc.metadata.generation
  return redis_down
end

-- The status as it compares: without the time of the last write.
local function status_text(st)
  local copy = {}
  for k, x in pairs(st or {}) do
    if k ~= "lastUpdateTime" then copy[k] = x end
  end
  return canon.encode(copy)
end

-- With the in-tree autoscaler: its ServiceAccount (unless the head names
-- its own), Role and RoleBinding, named after the cluster and owned by
-- it, as KubeRay makes them (created when missing, never updated).
local RBAC_GROUP = "rbac.authorization.k8s.io"

local function ensure(rc, res, obj, what)
  if v.get(res, obj.metadata.namespace, obj.metadata.name) ~= nil then return nil end
  local out, err, code = v.create(obj)
  if out == nil and code ~= 409 then
    v.event(rc, "Warning", "FailedToCreate" .. what, "Failed to create " ..
      what .. " " .. obj.metadata.name .. ": " .. tostring(err))
    return failure("FailedCreate" .. what, tostring(err))
  end
  if out ~= nil then
    v.event(rc, "Normal", "Created" .. what, "Created " .. what .. " " ..
      obj.metadata.namespace .. "/" .. obj.metadata.name)
  end
  return nil
end

local function reconcile_autoscaler_rbac(rc)
  if rc.spec.enableInTreeAutoscaling ~= true then return nil end
  local ns, name = rc.metadata.namespace, rc.metadata.name
  local function meta(n)
    return { name = n, namespace = ns, ownerReferences = v.array({ v.owner_ref(rc) }),
      labels = { [raypod.CLUSTER] = name, [raypod.APP_NAME] = "kuberay",
        [raypod.CREATED_BY] = raypod.OPERATOR } }
  end
  local sa = raypod.autoscaler_account(rc)
  local head_sa = ((rc.spec.headGroupSpec.template or {}).spec or {}).serviceAccountName
  if head_sa == nil or head_sa == v.null or head_sa == "" then
    local f = ensure(rc, "v1/serviceaccounts",
      { apiVersion = "v1", kind = "ServiceAccount", metadata = meta(sa) }, "ServiceAccount")
    if f then return f end
  end
  local f = ensure(rc, RBAC_GROUP .. "/v1/roles", {
    apiVersion = RBAC_GROUP .. "/v1", kind = "Role", metadata = meta(name),
    rules = v.array({
      { apiGroups = v.array({ "" }), resources = v.array({ "pods" }), verbs = v.array({ "get", "list", "watch", "patch" }) },
      { apiGroups = v.array({ "" }), resources = v.array({ "pods/resize" }), verbs = v.array({ "patch" }) },
      { apiGroups = v.array({ "ray.io" }), resources = v.array({ "rayclusters" }), verbs = v.array({ "get", "patch" }) },
    }) }, "Role")
  if f then return f end
  return ensure(rc, RBAC_GROUP .. "/v1/rolebindings", {
    apiVersion = RBAC_GROUP .. "/v1", kind = "RoleBinding", metadata = meta(name),
    subjects = v.array({ { kind = "ServiceAccount", name = sa, namespace = ns } }),
    roleRef = { apiGroup = RBAC_GROUP, kind = "Role", name = name } }, "RoleBinding")
end

-- Token authentication: the Secret with a random token, named after the
-- cluster and owned by it, unless authOptions names one or delegates to
-- Kubernetes (created when missing, never updated, as KubeRay does).
local function reconcile_auth_secret(rc)
  if not raypod.auth_enabled(rc.spec) or raypod.k8s_auth(rc.spec) then return nil end
  local o = rc.spec.authOptions
  if o.secretName ~= nil and o.secretName ~= v.null and o.secretName ~= "" then return nil end
  return ensure(rc, "v1/secrets", {
    apiVersion = "v1", kind = "Secret",
    metadata = { name = rc.metadata.name, namespace = rc.metadata.namespace,
      labels = { [raypod.CLUSTER] = rc.metadata.name },
      ownerReferences = v.array({ v.owner_ref(rc) }) },
    -- 43 random characters of the generated-name alphabet: ~204 bits.
    stringData = { [raypod.AUTH_SECRET_KEY] = v.random_suffix(30) .. v.random_suffix(13) },
  }, "Secret")
end

local function has_finalizer(rc)
  for _, f in ipairs(rc.metadata.finalizers or {}) do
    if f == gcsft.FINALIZER then return true end
  end
  return false
end

-- Add or remove the Redis cleanup finalizer; false on a conflict.
local function set_finalizer(rc, on)
  local list = v.array()
  for _, f in ipairs(rc.metadata.finalizers or {}) do
    if f ~= gcsft.FINALIZER then list[#list + 1] = f end
  end
  if on then list[#list + 1] = gcsft.FINALIZER end
  local out, err, code = v.patch(RC, rc.metadata.namespace, rc.metadata.name,
    { metadata = { finalizers = list, resourceVersion = rc.metadata.resourceVersion } })
  if out == nil and code ~= 409 and code ~= 404 then error("finalizer: " .. tostring(err), 0) end
  return out ~= nil
end

local function job_finished(job)
  for _, c in ipairs((job.status or {}).conditions or {}) do
    if (c.type == "Complete" or c.type == "Failed") and c.status == "True" then
      return c.type, c.reason or c.type
    end
  end
  return nil
end

-- A Redis cluster being deleted: its pods go, then, once no head is
-- left (its GCS could still write), the cleanup Job runs; the finalizer
-- goes when the Job has finished either way, as KubeRay's does.
local function reconcile_deletion(rc, key)
  if not has_finalizer(rc) then return nil end
  if gcsft.embedded(rc.spec) then
    if not set_finalizer(rc, false) then return { requeue = true } end
    return nil
  end
  local heads, groups = sort_pods(owned("v1/pods", rc))
  for _, p in ipairs(active(heads)) do delete_pod(rc, p, key .. "/head", "the RayCluster is deleted") end
  for g, pods in pairs(groups) do
    for _, p in ipairs(active(pods)) do delete_pod(rc, p, key .. "/" .. g, "the RayCluster is deleted") end
  end
  if #heads > 0 then return { requeue_after = REQUEUE_HEAD_GONE } end
  local job
  for _, j in ipairs(owned(JOBS, rc)) do
    if (j.metadata.labels or {})[raypod.NODE_TYPE] == gcsft.CLEANUP_TYPE then job = j end
  end
  if job ~= nil then
    local done, why = job_finished(job)
    if done == nil then return { requeue_after = REQUEUE_SHORT } end
    if not set_finalizer(rc, false) then return { requeue = true } end
    if done == "Failed" then
      v.event(rc, "Warning", "RedisCleanupJobFailed", string.format("Redis cleanup Job %s/%s failed (%s): " ..
        "delete the storage namespace %s in Redis by hand; finalizer %s removed", job.metadata.namespace,
        job.metadata.name, why, tostring((job.metadata.annotations or {})[gcsft.STORAGE_NS_ANNOTATION]),
        gcsft.FINALIZER))
    end
    v.info("RayCluster %s/%s: Redis cleanup Job %s %s; finalizer %s removed", rc.metadata.namespace,
      rc.metadata.name, job.metadata.name, done == "Complete" and "completed" or
      "failed (delete the storage namespace in Redis by hand)", gcsft.FINALIZER)
    return nil
  end
  local spec = raypod.build(rc, "head", rc.spec.headGroupSpec)
  local out, err, code = v.create(gcsft.cleanup_job(rc, spec))
  if out == nil and code ~= 409 then
    v.event(rc, "Warning", "FailedToCreateRedisCleanupJob", "Failed to create Redis cleanup Job " ..
      rc.metadata.namespace .. "/" .. rc.metadata.name .. "-redis-cleanup, " .. tostring(err))
    return { requeue_after = REQUEUE_SHORT }
  end
  if out ~= nil then
    v.event(rc, "Normal", "CreatedRedisCleanupJob", "Created Redis cleanup Job " ..
      out.metadata.namespace .. "/" .. out.metadata.name)
  end
  return { requeue_after = REQUEUE_SHORT }
end

-- The embedded GCS backend's claim (KubeRay's {cluster}-gcs-pvc).
local function reconcile_gcs_storage(rc)
  local pvc = gcsft.storage_claim(rc)
  if pvc == nil then return nil end
  return ensure(rc, "v1/persistentvolumeclaims", pvc, "PVC")
end

function controller.reconcile(req)
  local rc = v.get(RC, req.namespace, req.name)
  if rc == nil then
    exp.forget(req.key .. "/")
    return nil
  end
  if rc.metadata.deletionTimestamp ~= nil then return reconcile_deletion(rc, req.key) end
  local managed = rc.spec.managedBy
  if managed ~= nil and managed ~= v.null and managed ~= validate.OPERATOR then return nil end
  local bad = validate.cluster(rc)
  if bad then
    local meta = validate.name("RayCluster", rc.metadata.name, validate.MAX_CLUSTER_NAME)
    v.event(rc, "Warning", meta and "InvalidRayClusterMetadata" or "InvalidRayClusterSpec", bad)
    return nil
  end
  -- With Redis, the finalizer first; the cluster is made after it.
  if gcsft.redis(rc) and not has_finalizer(rc) then
    set_finalizer(rc, true)
    return { requeue = true }
  end
  rc.status = rc.status or {}
  local before = status_text(rc.status)
  local fail, soon
  local l = rc.metadata.labels or {}
  -- The PodGroup of a cluster a RayJob made is the RayJob's to keep.
  if raypg.enabled(rc) and l[raypod.ORIGIN_CRD] ~= "RayJob" then
    local members, res = raypg.cluster_gang(rc.spec)
    raypg.sync(rc, members, res)
  end
  local svc
  svc, fail = reconcile_service(rc)
  if fail == nil then fail = reconcile_autoscaler_rbac(rc) end
  if fail == nil then fail = reconcile_auth_secret(rc) end
  if fail == nil then fail = reconcile_gcs_storage(rc) end
  local memo = {}
  if fail == nil then fail, soon = reconcile_pods(rc, req.key, memo) end
  local redis_down = compute_status(rc, svc, fail, memo)

  local changed = status_text(rc.status) ~= before
  if changed then
    rc.status.lastUpdateTime = v.now()
    local out, err, code = v.update_status(rc)
    if out == nil then
      if code == 409 then return { requeue = true } end
      if code == 404 then return nil end
      error("updating RayCluster status: " .. tostring(err), 0)
    end
  end
  if fail or changed or soon then return { requeue_after = REQUEUE_SHORT } end
  -- Nothing of Redis's Service wakes this cluster: look again soon.
  if redis_down then return { requeue_after = REQUEUE_REDIS } end
  return { requeue_after = REQUEUE_LONG }
end

return controller
