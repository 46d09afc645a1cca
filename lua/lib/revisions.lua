-- ControllerRevisions: the history of a DaemonSet's or StatefulSet's pod
-- template, as kube-controller-manager keeps it. Each distinct template
-- is one apps/v1 ControllerRevision named <owner>-<hash>, owned by the
-- set, whose data is the patch that puts the template back (what
-- `kubectl rollout undo` applies) and whose revision number grows each
-- time a template becomes current again. Pods carry the hash in their
-- controller-revision-hash label; revisions past revisionHistoryLimit
-- that no pod uses are deleted, oldest first.
local v = volray
local canon = require("canon")
local M = {}

M.RESOURCE = "apps/v1/controllerrevisions"
M.HASH_LABEL = "controller-revision-hash"

-- The revisions owned by obj, oldest revision first.
function M.list(obj)
  local out = {}
  for _, r in ipairs(v.list(M.RESOURCE, obj.metadata.namespace,
      { owner = obj.metadata.uid })) do
    if v.is_controlled_by(r, obj) then out[#out + 1] = r end
  end
  table.sort(out, function(a, b) return (a.revision or 0) < (b.revision or 0) end)
  return out
end

local function data_of(obj)
  local t = v.deepcopy(obj.spec.template)
  t["$patch"] = "replace"
  return { spec = { template = t } }
end

local function same_data(a, b)
  return canon.encode(a or {}) == canon.encode(b or {})
end

-- The revision of obj's current template, made or renumbered if need be:
-- returns it and the list of all revisions (it included).
function M.current(obj, history)
  history = history or M.list(obj)
  local data = data_of(obj)
  local max = 0
  for _, r in ipairs(history) do
    if (r.revision or 0) > max then max = r.revision end
  end
  for _, r in ipairs(history) do
    if same_data(r.data, data) then
      if r.revision ~= max then
        r.revision = max + 1
        local out, err, code = v.update(r)
        if out == nil then
          error("renumbering revision " .. r.metadata.name .. ": " .. tostring(err), 0)
        end
        return out, history
      end
      return r, history
    end
  end
  local collisions = obj.status and obj.status.collisionCount
  local hash = canon.template_hash(obj.spec.template, collisions)
  local labels = v.deepcopy(obj.spec.template.metadata and
    obj.spec.template.metadata.labels or {})
  labels[M.HASH_LABEL] = hash
  local rev, err, code = v.create({
    apiVersion = "apps/v1", kind = "ControllerRevision",
    metadata = { name = obj.metadata.name .. "-" .. hash,
      namespace = obj.metadata.namespace, labels = labels,
      ownerReferences = v.array({ v.owner_ref(obj) }) },
    data = data, revision = max + 1,
  })
  if rev == nil then
    error("creating revision: " .. tostring(err) .. " (" .. tostring(code) .. ")", 0)
  end
  history[#history + 1] = rev
  return rev, history
end

-- The hash a revision's pods carry in their label.
function M.hash(rev)
  return rev.metadata.labels and rev.metadata.labels[M.HASH_LABEL] or ""
end

-- Delete the oldest revisions beyond limit, except those in keep (a set
-- of revision names) and the current one.
function M.truncate(history, limit, keep)
  local old = {}
  for _, r in ipairs(history) do
    if not keep[r.metadata.name] then old[#old + 1] = r end
  end
  for i = 1, #old - (limit or 10) do
    local r = old[i]
    local ok, err, code = v.delete(M.RESOURCE, r.metadata.namespace, r.metadata.name)
    if not ok and code ~= 404 then error("deleting revision: " .. tostring(err), 0) end
  end
end

return M
