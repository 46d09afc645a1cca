-- A Volcano Job's spec.volumes (batch.volcano.sh/v1alpha1): each entry
-- mounts a PersistentVolumeClaim at mountPath in every container of the
-- job's pods, as Volcano's job controller does.
-- - volumeClaimName given: that claim must exist in the job's namespace;
--   until it does the job stays Pending, without pods or PodGroup, with a
--   PVCError event ("pvc X is not found, the job will be in the Pending
--   state until the PVC is created"), and is looked at again every 5 s;
-- - else volumeClaim (a PersistentVolumeClaimSpec): a claim
--   <job>-volume-<12 random characters> is made with it, owned by the job
--   (deleted with it), and its name written into the job's volumeClaimName,
--   so that later passes and restarts keep it. An entry with neither is
--   an error the job is held on.
-- Each claim is recorded in status.controlledResources as
-- volume-pvc-<name>.
local v = volray
local M = {}

local PVCS = "v1/persistentvolumeclaims"

-- Make or check the job's claims. Returns "updated" when the job's spec
-- was written (names given to new claims: the write brings the job back
-- to the controller), "missing" and why when a named claim is not there,
-- nil when every claim is; raises an error when one cannot be made.
function M.ensure(job)
  local vols = job.spec.volumes
  if vols == nil or #vols == 0 then return nil end
  local ns, named = job.metadata.namespace, false
  local function given(vol)
    local n = vol.volumeClaimName
    return type(n) == "string" and n ~= "" and n or nil
  end
  -- The claims the user names first: nothing is made while one is
  -- missing (a claim made now would not be named in the job yet).
  for _, vol in ipairs(vols) do
    local name = given(vol)
    local pvc, err = nil, nil
    if name ~= nil then pvc, err = v.get(PVCS, ns, name) end
    if err ~= nil then error("reading pvc " .. name .. ": " .. tostring(err), 0) end
    if name ~= nil and pvc == nil then
      return "missing", "pvc " .. name .. " is not found, the job will be in the Pending state until the PVC is created"
    end
  end
  for i, vol in ipairs(vols) do
    if given(vol) == nil then
      if vol.volumeClaim == nil or vol.volumeClaim == v.null then
        error("volume " .. i .. " (mountPath " .. tostring(vol.mountPath) ..
          "): neither volumeClaimName nor volumeClaim is given", 0)
      end
      local name = job.metadata.name .. "-volume-" .. v.random_suffix(12)
      local _, err, code = v.create({ apiVersion = "v1", kind = "PersistentVolumeClaim",
        metadata = { name = name, namespace = ns, ownerReferences = v.array({ v.owner_ref(job) }) },
        spec = v.deepcopy(vol.volumeClaim) })
      if err ~= nil and code ~= 409 then
        error("creating PersistentVolumeClaim " .. name .. ": " .. tostring(err), 0)
      end
      vol.volumeClaimName = name
      named = true
    end
  end
  if not named then return nil end
  local _, err, code = v.update(job)
  if err ~= nil and code ~= 409 then error("naming the job's claims: " .. tostring(err), 0) end
  return "updated"
end

-- status.controlledResources entries for the claims.
function M.controlled(job, into)
  for _, vol in ipairs(job.spec.volumes or {}) do
    local name = vol.volumeClaimName
    if type(name) == "string" and name ~= "" then into["volume-pvc-" .. name] = name end
  end
  return into
end

-- Add the claims to a pod spec: a volume per claim (named after the job
-- and the entry's place; a claim listed twice is mounted once) and a
-- mount in every container.
function M.mount(job, spec)
  local vols = job.spec.volumes
  if vols == nil or #vols == 0 then return end
  local seen = {}
  for i, vol in ipairs(vols) do
    local claim = vol.volumeClaimName
    if type(claim) == "string" and claim ~= "" and not seen[claim] then
      seen[claim] = true
      local vname = (job.metadata.name .. "-volume-" .. i):sub(-63):gsub("^[^%w]+", "")
      spec.volumes = spec.volumes or v.array()
      spec.volumes[#spec.volumes + 1] = { name = vname, persistentVolumeClaim = { claimName = claim } }
      for _, c in ipairs(spec.containers or {}) do
        c.volumeMounts = c.volumeMounts or v.array()
        c.volumeMounts[#c.volumeMounts + 1] = { name = vname, mountPath = vol.mountPath }
      end
    end
  end
end

return M
