-- Deployment: run a pod template through ReplicaSets and roll changes of
-- it out gradually. Each template revision gets its own ReplicaSet named
-- <deployment>-<pod-template-hash>; a rolling update grows the new one
-- and shrinks the old ones while keeping at most replicas+maxSurge pods
-- and at least replicas-maxUnavailable available; Recreate empties the
-- old ones and waits for their pods to go before starting the new one.
-- A paused Deployment only scales. Going back to an old template reuses
-- its ReplicaSet under a new revision number. Old ReplicaSets beyond
-- revisionHistoryLimit are deleted once they are empty. Status counts
-- the ReplicaSets' pods and carries the Available and Progressing
-- conditions that `kubectl rollout status` waits on.
local v = volray
local canon = require("canon")
local du = require("deployutil")
local podutil = require("podutil")

local RS = "apps/v1/replicasets"

-- Raised (and caught in reconcile) when a write lost a race: retry.
local RETRY = setmetatable({}, { __tostring = function() return "conflict" end })

-- How often a Recreate rollout looks again for old pods that are still
-- terminating. Their ReplicaSet already reports zero replicas, so no
-- event of ours says when they are gone, and watching every pod event
-- from Lua would cost more than this rare poll.
local TERMINATING_POLL = 1

local controller = {
  primary = "apps/v1/deployments",
  owns = { RS },
}

-- Replace the contents of dst by those of src, keeping dst's identity.
local function refresh(dst, src)
  for k in pairs(dst) do dst[k] = nil end
  for k, x in pairs(src) do dst[k] = x end
end

local function check_write(out, err, code, what)
  if out ~= nil then return end
  if code == 409 or code == 404 then error(RETRY, 0) end
  error(what .. ": " .. tostring(err), 0)
end

local function concat(a, b)
  local out = {}
  for _, x in ipairs(a) do out[#out + 1] = x end
  for _, x in ipairs(b) do out[#out + 1] = x end
  return out
end

-- The Deployment's revision annotation and then its status, as asked.
-- Patches, not updates: a template read back from the store may have
-- lost explicit nulls, and writing it would look like a spec change.
local function save(d, meta_changed, status_changed)
  if meta_changed then
    local st = d.status
    local out, err, code = v.patch("apps/v1/deployments", d.metadata.namespace, d.metadata.name,
      { metadata = { annotations = { [du.REVISION] = d.metadata.annotations[du.REVISION] } } })
    check_write(out, err, code, "updating deployment " .. d.metadata.name)
    refresh(d, out)
    d.status = st
  end
  if status_changed then
    local out, err, code = v.update_status(d)
    check_write(out, err, code, "updating status of deployment " .. d.metadata.name)
    refresh(d, out)
  end
end

local function patch_rs(rs, patch)
  local out, err, code = v.patch(RS, rs.metadata.namespace, rs.metadata.name, patch)
  check_write(out, err, code, "updating replica set " .. rs.metadata.name)
  refresh(rs, out)
end

local function set_revision(d, rev)
  d.metadata.annotations = d.metadata.annotations or {}
  if d.metadata.annotations[du.REVISION] == rev then return false end
  d.metadata.annotations[du.REVISION] = rev
  return true
end

-- Resize rs and record the Deployment size on it (scaleReplicaSet).
local function scale_rs(d, rs, size)
  local old = du.replicas(rs)
  local want = du.replicas(d)
  local max = want + du.max_surge(d)
  if old == size and not du.replicas_annotations_need_update(rs, want, max) then
    return false
  end
  patch_rs(rs, { spec = { replicas = size }, metadata = { annotations = {
    [du.DESIRED_REPLICAS] = tostring(want), [du.MAX_REPLICAS] = tostring(max) } } })
  if old ~= size then
    v.event(d, "Normal", "ScalingReplicaSet", string.format("Scaled %s replica set %s to %d from %d",
      size > old and "up" or "down", rs.metadata.name, size, old))
  end
  return old ~= size
end

-- Resize only if the size differs (scaleReplicaSetAndRecordEvent).
local function scale_rs_if_needed(d, rs, size)
  if du.replicas(rs) == size then return false end
  return scale_rs(d, rs, size)
end

local function owned_replicasets(d)
  local out = {}
  for _, rs in ipairs(v.list(RS, d.metadata.namespace, { owner = d.metadata.uid })) do
    if v.is_controlled_by(rs, d) then out[#out + 1] = rs end
  end
  return du.by_creation(out)
end

-- Canonical template encodings by object uid and generation: a template
-- only changes with the generation, and encoding is most of this
-- controller's Lua time. Bounded: cleared when it grows past the limit.
local encodings, n_encodings = {}, 0

local function template_text(obj)
  local key = obj.metadata.uid .. "/" .. tostring(obj.metadata.generation)
  local text = encodings[key]
  if text == nil then
    text = canon.encode(canon.without_hash(obj.spec.template))
    if n_encodings >= 20000 then encodings, n_encodings = {}, 0 end
    encodings[key], n_encodings = text, n_encodings + 1
  end
  return text
end

-- The ReplicaSet running d's current template: the oldest one if several.
local function find_new_rs(d, rss)
  local want = template_text(d)
  for _, rs in ipairs(rss) do
    if template_text(rs) == want then return rs end
  end
  return nil
end

local function create_new_rs(c, old, new_revision)
  local d = c.d
  local ns = d.metadata.namespace
  local hash = canon.template_hash(d.spec.template, d.status.collisionCount)
  local template = v.deepcopy(d.spec.template)
  template.metadata = template.metadata or {}
  template.metadata.labels = template.metadata.labels or {}
  template.metadata.labels[du.HASH_LABEL] = hash
  local selector = v.deepcopy(d.spec.selector)
  selector.matchLabels = selector.matchLabels or {}
  selector.matchLabels[du.HASH_LABEL] = hash
  local rs = {
    apiVersion = "apps/v1",
    kind = "ReplicaSet",
    metadata = {
      name = d.metadata.name .. "-" .. hash,
      namespace = ns,
      labels = v.deepcopy(template.metadata.labels),
      annotations = {},
      ownerReferences = v.array({ v.owner_ref(d) }),
    },
    spec = {
      replicas = 0,
      minReadySeconds = d.spec.minReadySeconds or 0,
      selector = selector,
      template = template,
    },
  }
  rs.spec.replicas = du.new_rs_new_replicas(d, concat(old, { rs }), rs)
  du.set_new_rs_annotations(d, rs, new_revision, false)
  local created, err, code = v.create(rs)
  local existed = false
  if created == nil then
    if code ~= 409 then error("creating replica set " .. rs.metadata.name .. ": " .. tostring(err), 0) end
    local cur = v.get(RS, ns, rs.metadata.name)
    if cur ~= nil and v.is_controlled_by(cur, d) and
        canon.equal_ignore_hash(cur.spec.template, d.spec.template) then
      created, existed = cur, true
    else
      -- Another object has our name: hash again with a new collision count.
      d.status.collisionCount = (d.status.collisionCount or 0) + 1
      save(d, false, true)
      error(RETRY, 0)
    end
  end
  if not existed and du.replicas(created) > 0 then
    v.event(d, "Normal", "ScalingReplicaSet", string.format("Scaled up replica set %s to %d",
      created.metadata.name, du.replicas(created)))
  end
  local meta_changed = set_revision(d, new_revision)
  local status_changed = false
  if not existed and du.has_progress_deadline(d) then
    du.set_condition(d.status, "Progressing", "True", "NewReplicaSetCreated",
      string.format('Created new replica set "%s"', created.metadata.name), v.now())
    status_changed = true
  end
  save(d, meta_changed, status_changed)
  c.rss[#c.rss + 1] = created
  return created
end

-- The new ReplicaSet (created if asked and missing) and the old ones;
-- revisions are brought up to date on the way.
local function get_all(c, create)
  local d = c.d
  local new_rs = find_new_rs(d, c.rss)
  local old = {}
  for _, rs in ipairs(c.rss) do
    if rs ~= new_rs then old[#old + 1] = rs end
  end
  local new_revision = tostring(du.max_revision(old) + 1)
  if new_rs ~= nil then
    local changed = du.set_new_rs_annotations(d, new_rs, new_revision, true)
    local mrs = d.spec.minReadySeconds or 0
    if (new_rs.spec.minReadySeconds or 0) ~= mrs then
      new_rs.spec.minReadySeconds = mrs
      changed = true
    end
    if changed then
      patch_rs(new_rs, { metadata = { annotations = new_rs.metadata.annotations },
        spec = { minReadySeconds = mrs } })
    end
    local meta_changed = set_revision(d, new_rs.metadata.annotations[du.REVISION])
    local status_changed = false
    if du.has_progress_deadline(d) and du.get_condition(d.status, "Progressing") == nil then
      du.set_condition(d.status, "Progressing", "True", "FoundNewReplicaSet",
        string.format('Found new replica set "%s"', new_rs.metadata.name), v.now())
      status_changed = true
    end
    save(d, meta_changed, status_changed)
    return new_rs, old
  end
  if not create then return nil, old end
  return create_new_rs(c, old, new_revision), old
end

local function all_of(new_rs, old)
  if new_rs == nil then return concat(old, {}) end
  return concat(old, { new_rs })
end

-- Delete the oldest empty ReplicaSets beyond revisionHistoryLimit.
local function cleanup(d, old)
  local limit = d.spec.revisionHistoryLimit
  if limit == nil or limit == v.null then return end
  local alive = {}
  for _, rs in ipairs(old) do
    if rs.metadata.deletionTimestamp == nil then alive[#alive + 1] = rs end
  end
  local diff = #alive - limit
  if diff <= 0 then return end
  du.by_revision(alive)
  for i = 1, diff do
    local rs = alive[i]
    if du.status_of(rs, "replicas") == 0 and du.replicas(rs) == 0 and
        (rs.metadata.generation or 0) <= du.status_of(rs, "observedGeneration") then
      local ok, err, code = v.delete(RS, d.metadata.namespace, rs.metadata.name)
      if not ok and code ~= 404 then
        error("deleting replica set " .. rs.metadata.name .. ": " .. tostring(err), 0)
      end
    end
  end
end

local function write_status(d, st)
  d.status = st
  save(d, false, true)
end

-- Status only, for paused and scaling syncs (syncDeploymentStatus).
local function sync_status(c, new_rs, old)
  local d = c.d
  write_status(d, du.calculate_status(d, all_of(new_rs, old), new_rs, v.now()))
end

local function timed_out(d, st, now)
  local cond = du.get_condition(st, "Progressing")
  if cond == nil or cond.reason == "NewReplicaSetAvailable" then return false end
  if cond.reason == "ProgressDeadlineExceeded" then return true end
  local from = cond.lastUpdateTime and v.time(cond.lastUpdateTime)
  return from ~= nil and from + d.spec.progressDeadlineSeconds < now
end

-- Status plus the Progressing condition of a rollout (syncRolloutStatus);
-- returns when to look again if the rollout might stall.
local function sync_rollout_status(c, new_rs, old)
  local d = c.d
  local now = v.now()
  local st = du.calculate_status(d, all_of(new_rs, old), new_rs, now)
  local deadline = du.has_progress_deadline(d)
  if not deadline then du.remove_condition(st, "Progressing") end
  local cur = du.get_condition(st, "Progressing")
  local done = st.replicas == st.updatedReplicas and cur ~= nil and
    cur.reason == "NewReplicaSetAvailable"
  local what = new_rs and string.format('ReplicaSet "%s"', new_rs.metadata.name) or
    string.format('Deployment "%s"', d.metadata.name)
  if deadline and not done then
    if du.is_complete(d, st) then
      du.set_condition(st, "Progressing", "True", "NewReplicaSetAvailable",
        what .. " has successfully progressed.", now)
    elseif du.is_progressing(d, st) then
      du.set_condition(st, "Progressing", "True", "ReplicaSetUpdated",
        what .. " is progressing.", now, true)
    elseif timed_out(d, st, v.time()) then
      du.set_condition(st, "Progressing", "False", "ProgressDeadlineExceeded",
        what .. " has timed out progressing.", now)
    end
  end
  write_status(d, st)
  -- A rollout that does not move must be looked at when its deadline passes.
  cur = du.get_condition(st, "Progressing")
  if not deadline or cur == nil or du.is_complete(d, st) or
      cur.reason == "ProgressDeadlineExceeded" then
    return nil
  end
  local from = cur.lastUpdateTime and v.time(cur.lastUpdateTime)
  if from == nil then return nil end
  local after = from + d.spec.progressDeadlineSeconds - v.time()
  if after < 1 then after = 1 end
  return { requeue_after = after }
end

-- Is rs at full size and fully available for d (IsSaturated)?
local function is_saturated(d, rs)
  if rs == nil then return false end
  local want = du.replicas(d)
  return du.desired_annotation(rs) == want and du.replicas(rs) == want and
    du.status_of(rs, "availableReplicas") == want
end

-- The one ReplicaSet with pods wanted, or the newest if none has any.
local function active_or_latest(new_rs, old)
  if new_rs == nil and #old == 0 then return nil end
  local newest_first = concat(old, {})
  table.sort(newest_first, function(a, b)
    local ta, tb = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
    if ta ~= tb then return ta > tb end
    return a.metadata.name > b.metadata.name
  end)
  local active = du.active(new_rs and concat({ new_rs }, newest_first) or newest_first)
  if #active == 0 then return new_rs or newest_first[1] end
  if #active == 1 then return active[1] end
  return nil
end

-- Follow a change of spec.replicas: one active ReplicaSet takes it all;
-- during a rollout the change is shared in proportion (scale).
local function scale(c, new_rs, old)
  local d = c.d
  local want = du.replicas(d)
  local target = active_or_latest(new_rs, old)
  if target ~= nil then
    scale_rs(d, target, want)
    return
  end
  if is_saturated(d, new_rs) then
    for _, rs in ipairs(du.active(old)) do scale_rs_if_needed(d, rs, 0) end
    return
  end
  if not du.is_rolling(d) then return end
  local all = du.active(all_of(new_rs, old))
  local allowed = 0
  if want > 0 then allowed = want + du.max_surge(d) end
  local to_add = allowed - du.sum_spec(all)
  if to_add > 0 then du.by_size(all, true) elseif to_add < 0 then du.by_size(all, false) end
  local added, sizes = 0, {}
  for i, rs in ipairs(all) do
    local p = 0
    if to_add ~= 0 then
      p = du.proportion(d, rs, to_add, added, d.status.replicas)
      added = added + p
    end
    sizes[i] = du.replicas(rs) + p
  end
  for i, rs in ipairs(all) do
    local size = sizes[i]
    if i == 1 and to_add ~= 0 then
      size = size + to_add - added
      if size < 0 then size = 0 end
    end
    scale_rs(d, rs, size)
  end
end

-- Did spec.replicas change since the active ReplicaSets were sized?
local function is_scaling_event(c)
  local d = c.d
  local new_rs, old = get_all(c, false)
  for _, rs in ipairs(du.active(all_of(new_rs, old))) do
    local desired = du.desired_annotation(rs)
    if desired ~= nil and desired ~= du.replicas(d) then return true end
  end
  return false
end

-- Scale without rolling out: paused Deployments and replica changes.
local function sync(c)
  local d = c.d
  local new_rs, old = get_all(c, false)
  scale(c, new_rs, old)
  if d.spec.paused then cleanup(d, old) end
  sync_status(c, new_rs, old)
  return nil
end

-- Take unavailable pods of old ReplicaSets first, up to max.
local function cleanup_unhealthy(d, old, max)
  local total = 0
  for _, rs in ipairs(du.by_creation(concat(old, {}))) do
    if total >= max then break end
    local r, avail = du.replicas(rs), du.available(rs)
    if r > 0 and avail < r then
      local down = math.min(max - total, r - avail)
      scale_rs_if_needed(d, rs, r - down)
      total = total + down
    end
  end
  return total
end

-- Shrink old ReplicaSets while availability stays above the minimum.
local function scale_down_old(d, all, old)
  local min_available = du.replicas(d) - du.max_unavailable(d)
  local available = 0
  for _, rs in ipairs(all) do available = available + du.available(rs) end
  if available <= min_available then return 0 end
  local total = available - min_available
  local done = 0
  for _, rs in ipairs(du.by_creation(concat(old, {}))) do
    if done >= total then break end
    local r = du.replicas(rs)
    if r > 0 then
      local down = math.min(r, total - done)
      scale_rs_if_needed(d, rs, r - down)
      done = done + down
    end
  end
  return done
end

local function reconcile_new_rs(d, all, new_rs)
  local want, have = du.replicas(d), du.replicas(new_rs)
  if have == want then return false end
  if have > want then return scale_rs_if_needed(d, new_rs, want) end
  return scale_rs_if_needed(d, new_rs, du.new_rs_new_replicas(d, all, new_rs))
end

local function reconcile_old_rss(d, all, old, new_rs)
  if du.sum_spec(old) == 0 then return false end
  local min_available = du.replicas(d) - du.max_unavailable(d)
  local new_unavailable = du.replicas(new_rs) - du.available(new_rs)
  local max_down = du.sum_spec(all) - min_available - new_unavailable
  if max_down <= 0 then return false end
  local cleaned = cleanup_unhealthy(d, old, max_down)
  local scaled = scale_down_old(d, all, old)
  return cleaned + scaled > 0
end

local function rollout_rolling(c)
  local d = c.d
  local new_rs, old = get_all(c, true)
  local all = all_of(new_rs, old)
  if reconcile_new_rs(d, all, new_rs) then return sync_rollout_status(c, new_rs, old) end
  if reconcile_old_rss(d, all, old, new_rs) then return sync_rollout_status(c, new_rs, old) end
  if du.is_complete(d, d.status) then cleanup(d, old) end
  return sync_rollout_status(c, new_rs, old)
end

-- Do pods of the old ReplicaSets still exist (terminating ones included)?
-- The second result says only terminating pods are left, which no
-- ReplicaSet status change will announce.
local function old_pods_running(d, old)
  if du.sum_status(old, "replicas") > 0 then return true, false end
  for _, rs in ipairs(old) do
    for _, p in ipairs(v.list("v1/pods", d.metadata.namespace, { owner = rs.metadata.uid })) do
      local phase = podutil.phase(p)
      if v.is_controlled_by(p, rs) and phase ~= "Failed" and phase ~= "Succeeded" then
        return true, true
      end
    end
  end
  return false, false
end

local function rollout_recreate(c)
  local d = c.d
  local new_rs, old = get_all(c, false)
  local scaled = false
  for _, rs in ipairs(du.active(old)) do
    if scale_rs_if_needed(d, rs, 0) then scaled = true end
  end
  if scaled then return sync_rollout_status(c, new_rs, old) end
  local running, poll = old_pods_running(d, old)
  if running then
    local res = sync_rollout_status(c, new_rs, old)
    if poll and (res == nil or res.requeue_after > TERMINATING_POLL) then
      res = { requeue_after = TERMINATING_POLL }
    end
    return res
  end
  if new_rs == nil then new_rs, old = get_all(c, true) end
  scale_rs_if_needed(d, new_rs, du.replicas(d))
  if du.is_complete(d, d.status) then cleanup(d, old) end
  return sync_rollout_status(c, new_rs, old)
end

-- Record "paused" and "resumed" in the Progressing condition.
local function check_paused_conditions(d)
  if not du.has_progress_deadline(d) then return end
  local cond = du.get_condition(d.status, "Progressing")
  if cond ~= nil and cond.reason == "ProgressDeadlineExceeded" then return end
  local paused_cond = cond ~= nil and cond.reason == "DeploymentPaused"
  if d.spec.paused and not paused_cond then
    du.set_condition(d.status, "Progressing", "Unknown", "DeploymentPaused",
      "Deployment is paused", v.now())
    save(d, false, true)
  elseif not d.spec.paused and paused_cond then
    du.set_condition(d.status, "Progressing", "Unknown", "DeploymentResumed",
      "Deployment is resumed", v.now())
    save(d, false, true)
  end
end

local function selects_everything(sel)
  if sel == nil or sel == v.null then return true end
  return next(sel.matchLabels or {}) == nil and next(sel.matchExpressions or {}) == nil
end

local function sync_deployment(req)
  local d = v.get("apps/v1/deployments", req.namespace, req.name)
  if d == nil then return nil end
  d.status = d.status or {}
  local c = { d = d, rss = owned_replicasets(d) }
  if d.metadata.deletionTimestamp ~= nil then
    local new_rs, old = get_all(c, false)
    sync_status(c, new_rs, old)
    return nil
  end
  if selects_everything(d.spec.selector) then
    v.event(d, "Warning", "SelectingAll",
      "This deployment is selecting all pods. A non-empty selector is required.")
    if d.status.observedGeneration ~= d.metadata.generation then
      d.status.observedGeneration = d.metadata.generation
      save(d, false, true)
    end
    return nil
  end
  check_paused_conditions(d)
  if d.spec.paused or is_scaling_event(c) then return sync(c) end
  if d.spec.strategy and d.spec.strategy.type == "Recreate" then
    return rollout_recreate(c)
  end
  return rollout_rolling(c)
end

function controller.reconcile(req)
  local ok, res = pcall(sync_deployment, req)
  if ok then return res end
  if res == RETRY then return { requeue = true } end
  error(res, 0)
end

return controller
