-- Gang scheduling of Ray pods through Volcano, as KubeRay's volcano batch
-- scheduler does it. A Ray object opts in with the label
-- ray.io/scheduler-name: volcano or a volcano.sh/queue-name label, and
-- every Ray object does under `volrayd --batch-scheduler=volcano`. Its
-- PodGroup `ray-<name>-pg` (the RayJob's name for a cluster a RayJob
-- made, else the RayCluster's) is created before any pod, owned by that
-- object: minMember is the head plus every desired worker pod (minReplicas
-- with autoscaling), minResources their requests (limits where a request
-- is missing), plus the submitter pod's for a RayJob in K8sJobMode (in the
-- resources only: the submitter starts after the cluster, so counting it
-- as a member would deadlock the gang). The queue comes from the label
-- volcano.sh/queue-name, the priority class from ray.io/priority-class-name.
-- Each pod gets schedulerName volcano, the annotations
-- scheduling.k8s.io/group-name and volcano.sh/task-spec (headgroup, the
-- worker group's name, or submittergroup) and those two labels.
--
-- Labelled ray.io/scheduler-name: kubernetes instead, the object gets
-- Kubernetes' own gang API (scheduling.k8s.io/v1alpha2, volrayd
-- --feature-gates=GenericWorkload=true): a Workload `ray-<name>` with one
-- pod group template `ray` of gang minCount = the members, and a PodGroup
-- `ray-<name>-pg` made from it, both owned by the object; its pods join by
-- spec.schedulingGroup.podGroupName (schedulerName volcano: volray's
-- scheduler places them), with the same task annotation and labels.
-- minCount cannot change, so a gang whose size changed gets both made
-- again (its pods' scheduling group names the PodGroup, not its uid).
local v = volray
local M = {}

M.PODGROUPS = "scheduling.volcano.sh/v1beta1/podgroups"
M.SCHEDULER_LABEL = "ray.io/scheduler-name"
M.QUEUE_LABEL = "volcano.sh/queue-name"
M.PRIORITY_LABEL = "ray.io/priority-class-name"
M.GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
M.TASK_SPEC = "volcano.sh/task-spec"
M.SCHEDULER = "volcano"
M.KUBERNETES = "kubernetes"
M.SUBMITTER_GROUP = "submittergroup"
M.K8S_WORKLOADS = "scheduling.k8s.io/v1alpha2/workloads"
M.K8S_PODGROUPS = "scheduling.k8s.io/v1alpha2/podgroups"
M.K8S_TEMPLATE = "ray"

local function present(x)
  return x ~= nil and x ~= v.null
end

-- Does this Ray object ask for Kubernetes' own gang API?
function M.kubernetes(obj)
  local l = obj.metadata.labels or {}
  return l[M.SCHEDULER_LABEL] == M.KUBERNETES
end

-- Is this Ray object gang-scheduled (through Volcano's PodGroup or
-- Kubernetes')?
function M.enabled(obj)
  local l = obj.metadata.labels or {}
  if l[M.SCHEDULER_LABEL] == M.SCHEDULER then return true end
  if M.kubernetes(obj) then return true end
  if present(l[M.QUEUE_LABEL]) then return true end
  return v.config.batch_scheduler == M.SCHEDULER
end

function M.name(owner_name)
  return "ray-" .. owner_name .. "-pg"
end

-- The PodGroup a cluster's pods join: the RayJob's when a RayJob made it.
function M.name_for_cluster(cluster)
  local l = cluster.metadata.labels or {}
  if l["ray.io/originated-from-crd"] == "RayJob" and present(l["ray.io/originated-from-cr-name"]) then
    return M.name(l["ray.io/originated-from-cr-name"])
  end
  return M.name(cluster.metadata.name)
end

-- Requests of a pod spec (limits where a request is missing), summed over
-- its containers: { cpu = millicores, memory = bytes, [name] = count }.
function M.pod_resources(spec)
  local out = {}
  for _, c in ipairs(spec and spec.containers or {}) do
    local r = c.resources or {}
    local names = {}
    for k in pairs(r.requests or {}) do names[k] = true end
    for k in pairs(r.limits or {}) do names[k] = true end
    for k in pairs(names) do
      local q = r.requests and r.requests[k]
      if not present(q) then q = r.limits and r.limits[k] end
      local n
      if k == "cpu" then n = v.milli(tostring(q)) else n = v.quantity(tostring(q)) end
      if n ~= nil then out[k] = (out[k] or 0) + n end
    end
  end
  return out
end

function M.add(total, res, times)
  for k, n in pairs(res) do total[k] = (total[k] or 0) + n * (times or 1) end
  return total
end

-- Desired pods of a worker group: replicas clamped to [min, max] (min
-- with autoscaling), 0 when suspended; times numOfHosts.
function M.desired_workers(group, autoscaling)
  if group.suspend == true then return 0 end
  local min = group.minReplicas or 0
  local max = group.maxReplicas or 2147483647
  local r = group.replicas
  if autoscaling or not present(r) then r = min end
  if r < min then r = min end
  if r > max then r = max end
  return r * (group.numOfHosts or 1)
end

-- The gang of a RayCluster spec: member count and resources.
function M.cluster_gang(spec)
  local hg = spec.headGroupSpec or {}
  local res = M.pod_resources((hg.template or {}).spec)
  local members = 1
  for _, g in ipairs(spec.workerGroupSpecs or {}) do
    local n = M.desired_workers(g, spec.enableInTreeAutoscaling == true)
    members = members + n
    M.add(res, M.pod_resources((g.template or {}).spec), n)
  end
  return members, res
end

-- Resources as quantities: cpu in cores or "m", the rest whole (with a
-- binary suffix when exact: "5Gi").
function M.quantities(res)
  local out = {}
  for k, n in pairs(res) do
    if k == "cpu" then
      if n % 1000 == 0 then out[k] = string.format("%d", n // 1000) else out[k] = string.format("%dm", n) end
    else
      n = math.floor(n + 0.5)
      local text = string.format("%d", n)
      for _, u in ipairs({ { "Ti", 1 << 40 }, { "Gi", 1 << 30 }, { "Mi", 1 << 20 }, { "Ki", 1 << 10 } }) do
        if n > 0 and n % u[2] == 0 then
          text = string.format("%d%s", n // u[2], u[1])
          break
        end
      end
      out[k] = text
    end
  end
  return out
end

local function same_quantities(a, b)
  a, b = a or {}, b or {}
  for k, x in pairs(a) do
    if v.quantity(tostring(x)) ~= v.quantity(tostring(b[k] or "0")) then return false end
  end
  for k, x in pairs(b) do
    if a[k] == nil and v.quantity(tostring(x)) ~= 0 then return false end
  end
  return true
end

local function create_k8s(owner, obj)
  local out, err, code = v.create(obj)
  if out == nil and code == 404 then
    error("creating " .. obj.kind .. " " .. obj.metadata.name ..
      ": scheduling.k8s.io/v1alpha2 is not served (volrayd --feature-gates=GenericWorkload=true)", 0)
  end
  if out == nil and code ~= 409 then
    error("creating " .. obj.kind .. " " .. obj.metadata.name .. ": " .. tostring(err), 0)
  end
  if out ~= nil then
    v.event(owner, "Normal", "Created" .. obj.kind, "Created " .. obj.kind .. " " .. obj.metadata.name)
  end
  return out
end

local function gone(res, ns, name)
  local _, err, code = v.delete(res, ns, name)
  if err ~= nil and code ~= 404 then error("deleting " .. name .. ": " .. tostring(err), 0) end
end

-- The Workload and PodGroup of Kubernetes' gang API for owner; both made
-- again when the gang's size changed (minCount is immutable).
local function sync_k8s(owner, members)
  local ns = owner.metadata.namespace
  local wname, name = "ray-" .. owner.metadata.name, M.name(owner.metadata.name)
  local policy = { gang = { minCount = members } }
  local pg = v.get(M.K8S_PODGROUPS, ns, name)
  local wl = v.get(M.K8S_WORKLOADS, ns, wname)
  local ok = function(o, path)
    local g = o
    for _, k in ipairs(path) do g = g and g[k] end
    return g == members
  end
  if pg ~= nil and ok(pg, { "spec", "schedulingPolicy", "gang", "minCount" }) and wl ~= nil then
    return pg
  end
  if wl ~= nil and not ok(wl, { "spec", "podGroupTemplates", 1, "schedulingPolicy", "gang", "minCount" }) then
    gone(M.K8S_WORKLOADS, ns, wname)
    wl = nil
  end
  if pg ~= nil then gone(M.K8S_PODGROUPS, ns, name) end
  local owners = v.array({ v.owner_ref(owner) })
  if wl == nil then
    create_k8s(owner, {
      apiVersion = "scheduling.k8s.io/v1alpha2", kind = "Workload",
      metadata = { name = wname, namespace = ns, ownerReferences = owners },
      spec = {
        controllerRef = { apiGroup = "ray.io", kind = owner.kind, name = owner.metadata.name },
        podGroupTemplates = v.array({ { name = M.K8S_TEMPLATE, schedulingPolicy = policy } }),
      },
    })
  end
  return create_k8s(owner, {
    apiVersion = "scheduling.k8s.io/v1alpha2", kind = "PodGroup",
    metadata = { name = name, namespace = ns, ownerReferences = owners },
    spec = {
      podGroupTemplateRef = { workload = { workloadName = wname, podGroupTemplateName = M.K8S_TEMPLATE } },
      schedulingPolicy = policy,
    },
  })
end

-- Create or update the PodGroup of owner (a RayCluster or RayJob) for a
-- gang of members pods needing res. Returns the PodGroup; raises on a
-- write that fails for another reason than a race.
function M.sync(owner, members, res)
  if M.kubernetes(owner) then return sync_k8s(owner, members) end
  local ns, name = owner.metadata.namespace, M.name(owner.metadata.name)
  local want = M.quantities(res)
  local pg = v.get(M.PODGROUPS, ns, name)
  local labels = owner.metadata.labels or {}
  if pg == nil then
    local spec = { minMember = members, minResources = want }
    if present(labels[M.QUEUE_LABEL]) then spec.queue = labels[M.QUEUE_LABEL] end
    if present(labels[M.PRIORITY_LABEL]) then spec.priorityClassName = labels[M.PRIORITY_LABEL] end
    local out, err, code = v.create({
      apiVersion = "scheduling.volcano.sh/v1beta1", kind = "PodGroup",
      metadata = { name = name, namespace = ns, ownerReferences = v.array({ v.owner_ref(owner) }) },
      spec = spec,
    })
    if out == nil and code ~= 409 then error("creating PodGroup " .. name .. ": " .. tostring(err), 0) end
    if out ~= nil then
      v.event(owner, "Normal", "CreatedPodGroup", "Created PodGroup " .. name)
    end
    return out
  end
  if pg.spec.minMember ~= members or not same_quantities(pg.spec.minResources, want) then
    local out, err, code = v.patch(M.PODGROUPS, ns, name,
      { spec = { minMember = members, minResources = want } })
    if out == nil and code ~= 409 and code ~= 404 then
      error("updating PodGroup " .. name .. ": " .. tostring(err), 0)
    end
    return out
  end
  return pg
end

-- Put a pod into the gang: scheduler, annotations and labels; with
-- Kubernetes' gang API, its scheduling group instead of the group-name
-- annotation.
function M.annotate(pod, group_name, task, labels)
  pod.spec.schedulerName = M.SCHEDULER
  pod.metadata.annotations = pod.metadata.annotations or {}
  labels = labels or {}
  if labels[M.SCHEDULER_LABEL] == M.KUBERNETES then
    pod.spec.schedulingGroup = { podGroupName = group_name }
  else
    pod.metadata.annotations[M.GROUP_ANNOTATION] = group_name
  end
  pod.metadata.annotations[M.TASK_SPEC] = task
  pod.metadata.labels = pod.metadata.labels or {}
  if present(labels[M.QUEUE_LABEL]) then pod.metadata.labels[M.QUEUE_LABEL] = labels[M.QUEUE_LABEL] end
  if present(labels[M.PRIORITY_LABEL]) then
    pod.metadata.labels[M.PRIORITY_LABEL] = labels[M.PRIORITY_LABEL]
    if not present(pod.spec.priorityClassName) then pod.spec.priorityClassName = labels[M.PRIORITY_LABEL] end
  end
end

-- The annotator raypod.build takes for a cluster's pods, or nil.
function M.for_cluster(cluster)
  if not M.enabled(cluster) then return nil end
  local group_name = M.name_for_cluster(cluster)
  local labels = cluster.metadata.labels or {}
  return { annotate = function(pod, task) M.annotate(pod, group_name, task, labels) end }
end

return M
