-- ResourceClaims of pods, as kube-controller-manager's resourceclaim
-- controller (pkg/controller/resourceclaim, Kubernetes 1.34) keeps them.
-- A pod's spec.resourceClaims entry with a resourceClaimTemplateName gets
-- a claim made from the template: generateName <pod>-<claim>-, the
-- template's labels and annotations plus resource.kubernetes.io/
-- pod-claim-name, owned by the pod (controller, blockOwnerDeletion), and
-- the pod's status.resourceClaimStatuses names it. A claim drops from
-- status.reservedFor the pods that are gone, replaced (another uid) or
-- done (Succeeded, Failed, or deleted before being scheduled); when that
-- empties reservedFor, an allocation made by a scheduler (the claim has
-- the delete-protection finalizer) is cleared and the finalizer removed,
-- so the device is free again. A claim being deleted and reserved for no
-- one loses its allocation and finalizer too. A generated claim reserved
-- for no one whose pod is done is deleted; when the pod is gone the
-- garbage collector deletes it through its owner reference. A scheduled
-- pod (spec.nodeName set by hand) gets its allocated claims reserved.
--
-- Cost: this watches pods, and most pods have no claims. The pod watches
-- carry a field selector judged in C when a pod is written, so a pod
-- without spec.resourceClaims never crosses into Lua.
--
-- Keys: a claim is "ns/name" (the primary); a pod is "ns/pod:name" (a
-- claim's name cannot hold a colon).
local v = volray

local CLAIMS = "resource.k8s.io/v1/resourceclaims"
local TEMPLATES = "resource.k8s.io/v1/resourceclaimtemplates"
local PODS = "v1/pods"
local POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
local FINALIZER = "resource.kubernetes.io/delete-protection"
local POD_PREFIX = "pod:"
-- Only pods with claims: an absent field reads "", an array has no text.
local HAS_CLAIMS = "spec.resourceClaims!="
-- Up to 57 characters leaves room for the 5 random ones (kube's rule).
local MAX_BASE = 57

local function terminal(pod)
  local ph = pod.status and pod.status.phase
  return ph == "Succeeded" or ph == "Failed"
end

-- kube's isPodDone: none of its containers runs or ever will.
local function pod_done(pod)
  return terminal(pod) or
    (pod.metadata.deletionTimestamp ~= nil and (pod.spec.nodeName or "") == "")
end

-- resourceclaim.Name: the claim's name for a pod's entry (false when the
-- pod's status says no claim is needed), whether the claim must be the
-- pod's own, or nil and the error.
local function claim_name(pod, pc)
  if pc.resourceClaimName ~= nil then return pc.resourceClaimName, false end
  if pc.resourceClaimTemplateName ~= nil then
    for _, st in ipairs(pod.status and pod.status.resourceClaimStatuses or {}) do
      if st.name == pc.name then return st.resourceClaimName or false, true end
    end
    return nil, string.format('pod "%s/%s": ResourceClaim not created yet',
      pod.metadata.namespace, pod.metadata.name)
  end
  return nil, string.format('pod "%s/%s", spec.resourceClaim %q: none of the supported fields are set',
    pod.metadata.namespace, pod.metadata.name, pc.name)
end

local function owner_pod(claim)
  for _, r in ipairs(claim.metadata.ownerReferences or {}) do
    if r.controller and r.apiVersion == "v1" and r.kind == "Pod" then return r end
  end
  return nil
end

local function is_for_pod(pod, claim)
  local r = owner_pod(claim)
  return r ~= nil and r.uid == pod.metadata.uid
end

local function reserved_for(pod, claim)
  for _, r in ipairs(claim.status and claim.status.reservedFor or {}) do
    if r.uid == pod.metadata.uid then return true end
  end
  return false
end

local function has_finalizer(claim)
  for i, f in ipairs(claim.metadata.finalizers or {}) do
    if f == FINALIZER then return i end
  end
  return nil
end

-- The keys of the claims a pod names, for a change that may release them.
local function claims_of(pod)
  local keys = {}
  for _, pc in ipairs(pod.spec.resourceClaims or {}) do
    local name = claim_name(pod, pc)
    if name then keys[#keys + 1] = pod.metadata.namespace .. "/" .. name end
  end
  return keys
end

-- kube's podNeedsWork: a claim to make, or (scheduled) one to reserve.
local function pod_needs_work(pod)
  if pod.metadata.deletionTimestamp ~= nil then return false end
  for _, pc in ipairs(pod.spec.resourceClaims or {}) do
    local name, check = claim_name(pod, pc)
    if name == nil then return true end
    if name == false then return false end
    local claim = v.get(CLAIMS, pod.metadata.namespace, name)
    if claim == nil then return pc.resourceClaimTemplateName ~= nil end
    if check and not is_for_pod(pod, claim) then return false end
    if (pod.spec.nodeName or "") ~= "" and claim.status and
        claim.status.allocation ~= nil and not reserved_for(pod, claim) then
      return true
    end
  end
  return false
end

local POD_PATHS = { "metadata.namespace", "metadata.name", "metadata.uid",
  "metadata.deletionTimestamp", "spec.nodeName", "spec.resourceClaims",
  "status.phase", "status.resourceClaimStatuses" }

-- The pods that name each claim ("ns/claim" -> { pod name -> true }), as
-- kube's pod index: a claim's change looks at them. Filled as pods with
-- claims are seen, emptied as the pods turn out gone.
local users = {}

local function note_users(pod)
  for _, key in ipairs(claims_of(pod)) do
    users[key] = users[key] or {}
    users[key][pod.metadata.name] = true
  end
end

-- The keys of the pods a changed claim may give work to: its owner and
-- the pods that name it.
local function pods_of(claim)
  local ns, name = claim.metadata.namespace, claim.metadata.name
  local ckey = ns .. "/" .. name
  local names = {}
  local owner = owner_pod(claim)
  if owner ~= nil then names[owner.name] = true end
  for pname in pairs(users[ckey] or {}) do names[pname] = true end
  local keys = {}
  for pname in pairs(names) do
    local pod = v.get(PODS, ns, pname)
    if pod == nil then
      if users[ckey] then users[ckey][pname] = nil end
    elseif pod_needs_work(pod) then
      keys[#keys + 1] = ns .. "/" .. POD_PREFIX .. pname
    end
  end
  if users[ckey] and next(users[ckey]) == nil then users[ckey] = nil end
  return keys
end

local controller = {
  primary = CLAIMS,
  -- kube-controller-manager's Events source for it (not
  -- "resourceclaim-controller").
  event_source = "resource_claim",
  watches = {
    -- A pod that comes, goes or changes phase may release its claims
    -- (the claim's reconcile decides: a deletion looks like the last
    -- version here).
    { resource = PODS, fields = HAS_CLAIMS, changes = { "status.phase" },
      paths = { "metadata.namespace", "metadata.name", "spec.resourceClaims",
        "status.resourceClaimStatuses" },
      map = claims_of },
    -- A pod whose claim is to be made or reserved; initial: the pods
    -- there are at a (re)load too (one made while this controller was
    -- off gets its claim).
    { resource = PODS, fields = HAS_CLAIMS, paths = POD_PATHS, initial = true,
      map = function(pod)
        note_users(pod)
        if not pod_needs_work(pod) then return nil end
        return pod.metadata.namespace .. "/" .. POD_PREFIX .. pod.metadata.name
      end },
    -- A claim changed or went (a generated one deleted by hand is made
    -- again): its pods may have work, as kube looks again at them.
    { resource = CLAIMS, paths = { "metadata.namespace", "metadata.name",
        "metadata.ownerReferences" }, map = pods_of },
  },
}

-- A claim for the pod's entry pc made from its template, or the one made
-- before (by owner and annotation: the pod's status may not have been
-- written after it).
local function make_claim(pod, pc)
  local ns = pod.metadata.namespace
  for _, c in ipairs(v.list(CLAIMS, ns, { owner = pod.metadata.uid })) do
    local a = c.metadata.annotations
    if is_for_pod(pod, c) and a ~= nil and a[POD_CLAIM_NAME] == pc.name then
      return c
    end
  end
  local tpl, err = v.get(TEMPLATES, ns, pc.resourceClaimTemplateName)
  if tpl == nil then
    error(string.format('resource claim template "%s": %s', pc.resourceClaimTemplateName,
      err or string.format('resourceclaimtemplates.resource.k8s.io "%s" not found',
        pc.resourceClaimTemplateName)), 0)
  end
  local meta = tpl.spec.metadata or {}
  local annotations = v.deepcopy(meta.annotations or {})
  annotations[POD_CLAIM_NAME] = pc.name
  local pname = pod.metadata.name
  local base = pname .. "-" .. pc.name .. "-"
  if #base > MAX_BASE then
    -- Both cut in proportion, as kube does, so the claim's name stays.
    base = pname:sub(1, #pname * MAX_BASE // #base) .. "-" ..
      pc.name:sub(1, #pc.name * MAX_BASE // #base)
  end
  local claim, msg = v.create({ apiVersion = "resource.k8s.io/v1",
    kind = "ResourceClaim",
    metadata = { generateName = base, namespace = ns,
      ownerReferences = v.array({ { apiVersion = "v1", kind = "Pod",
        name = pname, uid = pod.metadata.uid, controller = true,
        blockOwnerDeletion = true } }),
      annotations = annotations, labels = meta.labels },
    spec = tpl.spec.spec })
  if claim == nil then error("create ResourceClaim " .. base .. ": " .. msg, 0) end
  return claim
end

-- One entry of the pod's spec.resourceClaims (kube's handleClaim): the
-- name of a claim made for it, or nil when there is nothing to record.
local function handle_claim(pod, pc)
  local name, check = claim_name(pod, pc)
  if name == false then return nil end
  if name ~= nil then
    local claim = v.get(CLAIMS, pod.metadata.namespace, name)
    if claim ~= nil and (not check or is_for_pod(pod, claim)) then return nil end
  elseif pc.resourceClaimTemplateName == nil then
    error(check, 0)  -- neither field: kube's ErrAPIUnsupported
  end
  if pc.resourceClaimTemplateName == nil then return nil end
  return make_claim(pod, pc).metadata.name
end

-- Record made claims in the pod's status.resourceClaimStatuses, keyed by
-- name as kube's apply is. 409: the caller retries.
local function record(pod, made)
  local st = v.array()
  local seen = {}
  for _, s in ipairs(pod.status and pod.status.resourceClaimStatuses or {}) do
    if made[s.name] ~= nil then
      st[#st + 1] = { name = s.name, resourceClaimName = made[s.name] }
    else
      st[#st + 1] = s
    end
    seen[s.name] = true
  end
  for _, pc in ipairs(pod.spec.resourceClaims) do
    if made[pc.name] ~= nil and not seen[pc.name] then
      st[#st + 1] = { name = pc.name, resourceClaimName = made[pc.name] }
    end
  end
  pod.status = pod.status or {}
  pod.status.resourceClaimStatuses = st
  local _, msg, code = v.update_status(pod)
  if code == 409 then return false end
  if msg ~= nil then
    error(string.format("update pod %s/%s ResourceClaimStatuses: %s",
      pod.metadata.namespace, pod.metadata.name, msg), 0)
  end
  return true
end

local function reserve(pod, claim)
  claim.status.reservedFor = claim.status.reservedFor or v.array()
  local rf = claim.status.reservedFor
  rf[#rf + 1] = { resource = "pods", name = pod.metadata.name, uid = pod.metadata.uid }
  local _, msg, code = v.update_status(claim)
  if code == 409 then return false end
  if msg ~= nil then
    error(string.format("reserve claim %s/%s for pod: %s", claim.metadata.namespace,
      claim.metadata.name, msg), 0)
  end
  return true
end

-- kube's syncPod.
local function sync_pod(ns, name)
  local pod = v.get(PODS, ns, name)
  if pod == nil or pod.metadata.deletionTimestamp ~= nil then return nil end
  local made
  for _, pc in ipairs(pod.spec.resourceClaims or {}) do
    local ok, res = pcall(handle_claim, pod, pc)
    if not ok then
      v.event(pod, "Warning", "FailedResourceClaimCreation",
        string.format("PodResourceClaim %s: %s", pc.name, tostring(res)))
      error(string.format("pod %s/%s, PodResourceClaim %s: %s", ns, name, pc.name,
        tostring(res)), 0)
    end
    if res ~= nil then
      made = made or {}
      made[pc.name] = res
    end
  end
  if made ~= nil and not record(pod, made) then return { requeue = true } end
  if (pod.spec.nodeName or "") == "" then return nil end
  for _, pc in ipairs(pod.spec.resourceClaims or {}) do
    local cname, check = claim_name(pod, pc)
    if cname == nil then cname = made and made[pc.name] end
    if cname == nil then error(check, 0) end
    if cname then
      local claim = v.get(CLAIMS, ns, cname)
      if claim == nil then return nil end
      if check and not is_for_pod(pod, claim) then
        error(string.format("ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)",
          ns, cname, ns, name), 0)
      end
      if claim.status and claim.status.allocation ~= nil and not reserved_for(pod, claim) then
        if not reserve(pod, claim) then return { requeue = true } end
      end
    end
  end
  return nil
end

-- Whether a reservedFor entry still holds: its pod is there, the same
-- one, and may run. A pod not in the cache may be one it has not heard
-- of yet (against a remote API the watch lags: a scheduler may reserve
-- the claim for a pod made a moment ago), so, as kube's syncClaim, the
-- API server is asked before the entry is dropped; embedded, the cache
-- is the server's store and the answer is at once.
local function still_reserved(ns, r)
  local pod = v.get(PODS, ns, r.name)
  if pod == nil then
    local live, msg, code = v.get(PODS, ns, r.name, { live = true })
    if live == nil and code ~= 404 then
      error(string.format("get pod %s/%s: %s", ns, r.name, tostring(msg)), 0)
    end
    return live ~= nil and live.metadata.uid == r.uid
  end
  return pod.metadata.uid == r.uid and not pod_done(pod)
end

local function write(fn, claim, what)
  local new, msg, code = fn(claim)
  if new == nil then
    if code == 409 or code == 404 then return nil end
    error(string.format("%s %s/%s: %s", what, claim.metadata.namespace,
      claim.metadata.name, msg), 0)
  end
  return new
end

local function drop_finalizer(claim)
  local i = has_finalizer(claim)
  if i == nil then return claim end
  table.remove(claim.metadata.finalizers, i)
  -- None left: omitted, as kube's omitempty writes it.
  if #claim.metadata.finalizers == 0 then claim.metadata.finalizers = nil end
  return write(v.update, claim, "remove the finalizer of")
end

-- Forget the users of a claim that are gone (a pod's deletion brings its
-- claims here, whether or not they are written after).
local function prune_users(ns, name)
  local set = users[ns .. "/" .. name]
  if set == nil then return end
  for pname in pairs(set) do
    if v.get(PODS, ns, pname) == nil then set[pname] = nil end
  end
  if next(set) == nil then users[ns .. "/" .. name] = nil end
end

-- kube's syncClaim.
local function sync_claim(ns, name)
  prune_users(ns, name)
  local claim = v.get(CLAIMS, ns, name)
  if claim == nil then return nil end
  claim.status = claim.status or {}
  local had = claim.status.reservedFor or {}
  local valid = v.array()
  for _, r in ipairs(had) do
    if (r.apiGroup or "") ~= "" or r.resource ~= "pods" then
      error(string.format("unsupported ReservedFor entry: %s", v.json_encode(r)), 0)
    end
    if still_reserved(ns, r) then valid[#valid + 1] = r end
  end
  local fin = has_finalizer(claim) ~= nil
  if #valid < #had then
    claim.status.reservedFor = #valid > 0 and valid or nil
    -- The last consumer gone: a scheduler's allocation (the finalizer
    -- says so) is undone, so the device can go to another claim.
    if #valid == 0 and fin then claim.status.allocation = nil end
    claim = write(v.update_status, claim, "update the status of")
    if claim == nil then return { requeue = true } end
    if claim.status == nil or claim.status.allocation == nil then
      if drop_finalizer(claim) == nil then return { requeue = true } end
    end
  elseif fin and claim.metadata.deletionTimestamp ~= nil and #valid == 0 then
    if claim.status.allocation ~= nil then
      claim.status.allocation = nil
      claim = write(v.update_status, claim, "update the status of")
      if claim == nil then return { requeue = true } end
    end
    if drop_finalizer(claim) == nil then return { requeue = true } end
  end
  if #valid == 0 then
    -- A generated claim whose pod will not run is deleted now; the pod
    -- may stay for a while (a gone pod is the garbage collector's).
    local owner = owner_pod(claim)
    local pod = owner and v.get(PODS, ns, owner.name)
    if pod ~= nil and (pod.metadata.uid ~= owner.uid or pod_done(pod)) then
      local ok, msg, code = v.delete(CLAIMS, ns, name)
      if not ok and code ~= 404 then
        error(string.format("delete claim %s/%s: %s", ns, name, msg), 0)
      end
    end
  end
  return nil
end

function controller.reconcile(req)
  if req.name:sub(1, #POD_PREFIX) == POD_PREFIX then
    return sync_pod(req.namespace, req.name:sub(#POD_PREFIX + 1))
  end
  return sync_claim(req.namespace, req.name)
end

return controller
