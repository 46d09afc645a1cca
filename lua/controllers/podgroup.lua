-- PodGroup: every pod that asks for the volcano scheduler belongs to a
-- PodGroup. A pod with schedulerName volcano and no annotation
-- scheduling.k8s.io/group-name gets the group Volcano's PodGroup
-- controller would make for it: podgroup-<uid of its controller owner>
-- (its ReplicaSet, Job, ...), or podgroup-<its own uid> when nothing
-- controls it, owned by that owner (or the pod), with minMember 1 or the
-- owner's annotation scheduling.volcano.sh/group-min-member (a bare pod's
-- own annotation when it has no owner), the queue of the pod's
-- annotation scheduling.volcano.sh/queue-name (else the default queue),
-- the pod's priorityClassName, and minResources = the pod's requests x
-- minMember; it carries the pod's labels (Volcano copies two of them; all
-- of them let a scheduler plugin order such groups by their pods' labels).
-- The pod is then annotated with the group's name.
-- A PodGroup without status.phase is set Pending; from there the
-- scheduler moves it (Inqueue, Running, Completed, Unknown).
local v = volray
local podreq = require("podreq")

local PODGROUPS = "scheduling.volcano.sh/v1beta1/podgroups"
local GROUP_NAME = "scheduling.k8s.io/group-name"
local QUEUE_NAME = "scheduling.volcano.sh/queue-name"
local MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
local PREFIX = "podgroup-"
-- Pod annotations Volcano's controller copies onto the group.
local COPIED = { "volcano.sh/preemptable", "volcano.sh/cooldown-time",
  "volcano.sh/revocable-zone", "volcano.sh/jdb-min-available",
  "volcano.sh/jdb-max-unavailable" }
-- Owner kinds whose annotations a group inherits, and where they live.
local OWNER_RESOURCES = { ["apps/v1 ReplicaSet"] = "apps/v1/replicasets",
  ["batch/v1 Job"] = "batch/v1/jobs" }

-- Whether a pod needs an implicit PodGroup: not one that joins a
-- scheduling.k8s.io PodGroup (spec.schedulingGroup), which is its group.
local function wants_group(pod)
  local ann = pod.metadata.annotations or {}
  local sg = pod.spec.schedulingGroup
  return pod.spec.schedulerName == "volcano" and
    (ann[GROUP_NAME] == nil or ann[GROUP_NAME] == "") and
    (sg == nil or sg.podGroupName == nil or sg.podGroupName == "") and
    pod.metadata.deletionTimestamp == nil
end

-- The uid the group is named after: the controller owner's, else the pod's.
local function group_uid(pod)
  local ref = v.controller_of(pod)
  if ref ~= nil then return ref.uid end
  return pod.metadata.uid
end

local function map_pod(pod)
  if not wants_group(pod) then return nil end
  return pod.metadata.namespace .. "/" .. PREFIX .. group_uid(pod)
end

local controller = {
  primary = PODGROUPS,
  -- Volcano's vc-controller-manager records every controller's Events
  -- as this component (EventSource{Component: "vc-controller-manager"}).
  event_source = "vc-controller-manager",
  -- A PodGroup with a phase has nothing left for this controller: its
  -- status writes (the scheduler's, thousands a second) stay in C.
  fields = "status.phase=",
  -- Only volcano's pods without a group cross into Lua: the selector is
  -- matched in C (a missing annotation equals ""; a path segment may hold
  -- dots, as the annotation key does).
  watches = { { resource = "v1/pods", map = map_pod,
    fields = "spec.schedulerName=volcano," ..
      "spec.schedulingGroup.podGroupName=," ..
      "metadata.annotations.scheduling.k8s.io/group-name=" } },
}

-- The pods waiting for the group of this uid.
local function pods_for(ns, uid)
  local out = {}
  for _, p in ipairs(v.list("v1/pods", ns, { owner = uid })) do
    local ref = v.controller_of(p)
    if ref ~= nil and ref.uid == uid and wants_group(p) then out[#out + 1] = p end
  end
  if #out == 0 then
    for _, p in ipairs(v.list("v1/pods", ns, { uid = uid })) do
      if v.controller_of(p) == nil and wants_group(p) then out[#out + 1] = p end
    end
  end
  return out
end

-- minMember from the owner's annotation (a bare pod's own), default 1.
local function min_member(pod, pg_name)
  local ref = v.controller_of(pod)
  local ann
  if ref ~= nil then
    local res = OWNER_RESOURCES[tostring(ref.apiVersion) .. " " .. tostring(ref.kind)]
    local owner = res and v.get(res, pod.metadata.namespace, ref.name)
    ann = owner and owner.metadata.annotations or {}
  else
    ann = pod.metadata.annotations or {}
  end
  local s = ann[MIN_MEMBER]
  if s == nil then return 1 end
  local n = tonumber(s)
  if n == nil or n < 0 or n ~= math.floor(n) then
    v.event(pod, "Warning", "InvalidMinMember", string.format(
      "annotation %s=%q is not a non-negative integer; PodGroup %s gets minMember 1",
      MIN_MEMBER, s, pg_name))
    return 1
  end
  return math.tointeger(n)
end

local function build_group(pod, name)
  local ann = pod.metadata.annotations or {}
  local labels = pod.metadata.labels or {}
  local n = min_member(pod, name)
  local owners
  if v.controller_of(pod) ~= nil then
    owners = v.deepcopy(pod.metadata.ownerReferences)
  else
    owners = v.array({ v.owner_ref(pod) })
  end
  local pg = {
    apiVersion = "scheduling.volcano.sh/v1beta1",
    kind = "PodGroup",
    metadata = {
      name = name,
      namespace = pod.metadata.namespace,
      ownerReferences = owners,
      annotations = {},
      labels = v.deepcopy(labels),
    },
    spec = {
      minMember = n,
      minResources = podreq.to_list(podreq.add({}, pod.spec, n)),
      priorityClassName = pod.spec.priorityClassName,
      queue = ann[QUEUE_NAME],
    },
  }
  for _, k in ipairs(COPIED) do pg.metadata.annotations[k] = ann[k] end
  return pg
end

-- Make the group (if missing) and annotate its pods with its name.
local function adopt(ns, name)
  local uid = name:sub(#PREFIX + 1)
  local pods = pods_for(ns, uid)
  local pg = v.get(PODGROUPS, ns, name)
  if #pods == 0 then return pg end
  if pg == nil then
    local created, err, code = v.create(build_group(pods[1], name))
    if created == nil and code ~= 409 then
      v.event(pods[1], "Warning", "FailedCreatePodGroup",
        "Error creating PodGroup " .. name .. ": " .. tostring(err))
      error("creating PodGroup " .. name .. ": " .. tostring(err), 0)
    end
    pg = created or v.get(PODGROUPS, ns, name)
  end
  for _, p in ipairs(pods) do
    local _, err, code = v.patch("v1/pods", ns, p.metadata.name,
      { metadata = { annotations = { [GROUP_NAME] = name } } })
    if err ~= nil and code ~= 404 then
      error("annotating pod " .. p.metadata.name .. ": " .. tostring(err), 0)
    end
  end
  return pg
end

function controller.reconcile(req)
  local pg
  if req.name:sub(1, #PREFIX) == PREFIX then
    pg = adopt(req.namespace, req.name)
  end
  pg = pg or v.get(PODGROUPS, req.namespace, req.name)
  if pg == nil or pg.metadata.deletionTimestamp ~= nil then return nil end
  local phase = pg.status and pg.status.phase
  if phase == nil or phase == "" then
    pg.status = pg.status or {}
    pg.status.phase = "Pending"
    local _, err, code = v.update_status(pg)
    if code == 409 then return { requeue = true } end
    if err ~= nil and code ~= 404 then error("status: " .. tostring(err), 0) end
  end
  return nil
end

return controller
