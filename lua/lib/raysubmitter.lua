-- The pieces of a RayJob that submit its entrypoint, as KubeRay builds
-- them: the `ray job submit` command line (runtime env, metadata and
-- entrypoint resources as flags, the submission id chosen by the
-- controller), the K8sJobMode submitter batch/v1 Job named like the
-- RayJob (container ray-job-submitter, backoffLimit from
-- submitterConfig, env RAY_DASHBOARD_ADDRESS and RAY_JOB_SUBMISSION_ID)
-- and the SidecarMode container added to the head pod. The submitter
-- first asks `ray job status` so that a rerun of its pod never submits
-- twice, then follows the logs until the job ends.
local v = volray
local canon = require("canon")
local raypg = require("raypodgroup")
local raypod = require("raypod")
local M = {}

M.CONTAINER = "ray-job-submitter"
M.DEFAULT_BACKOFF = 2

local function present(x)
  return x ~= nil and x ~= v.null
end

-- A word for the shell, single-quoted unless it needs no quotes.
local function quote(s)
  if s:match("^[%w%-_./:=@,]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- runtimeEnvYAML as JSON text, or nil.
function M.runtime_env_json(job)
  local y = job.spec.runtimeEnvYAML
  if not present(y) or y == "" then return nil end
  local t = v.yaml_decode(y)
  if type(t) ~= "table" then return nil end
  return canon.encode(t)
end

function M.metadata_json(job)
  local md = job.spec.metadata
  if not present(md) or next(md) == nil then return nil end
  return canon.encode(md)
end

-- The shell command that submits (once) and follows the job; address is
-- the dashboard with its scheme ("http://<svc>.<ns>.svc.cluster.local:8265").
function M.command(job, address, id)
  local s = job.spec
  local submit = { "ray", "job", "submit", "--address", address }
  local env = M.runtime_env_json(job)
  if env then submit[#submit + 1] = "--runtime-env-json"; submit[#submit + 1] = quote(env) end
  local md = M.metadata_json(job)
  if md then submit[#submit + 1] = "--metadata-json"; submit[#submit + 1] = quote(md) end
  if present(s.entrypointNumCpus) and s.entrypointNumCpus > 0 then
    submit[#submit + 1] = "--entrypoint-num-cpus"; submit[#submit + 1] = tostring(s.entrypointNumCpus)
  end
  if present(s.entrypointNumGpus) and s.entrypointNumGpus > 0 then
    submit[#submit + 1] = "--entrypoint-num-gpus"; submit[#submit + 1] = tostring(s.entrypointNumGpus)
  end
  if present(s.entrypointResources) and s.entrypointResources ~= "" then
    submit[#submit + 1] = "--entrypoint-resources"; submit[#submit + 1] = quote(s.entrypointResources)
  end
  submit[#submit + 1] = "--no-wait"
  submit[#submit + 1] = "--submission-id"
  submit[#submit + 1] = quote(id)
  submit[#submit + 1] = "--"
  -- Without its trailing newlines (a YAML block scalar's `|`), which
  -- would end the shell's `if` before its `; fi` (KubeRay keeps them).
  submit[#submit + 1] = (s.entrypoint or ""):gsub("%s+$", "")
  return "if ! ray job status --address " .. address .. " " .. quote(id) .. " >/dev/null 2>&1 ; then " ..
    table.concat(submit, " ") .. " ; fi ; ray job logs --address " .. address .. " --follow " .. quote(id)
end

local function set_env(c, name, value)
  c.env = c.env or v.array()
  for _, e in ipairs(c.env) do
    if e.name == name then return end
  end
  c.env[#c.env + 1] = { name = name, value = value }
end

-- The head's image: the cluster's when known (a job on a selected
-- cluster has no rayClusterSpec), as KubeRay's default submitter takes it.
local function head_image(job, rc)
  local cs = rc and rc.spec or job.spec.rayClusterSpec
  local c = cs and cs.headGroupSpec and cs.headGroupSpec.template and cs.headGroupSpec.template.spec
  c = c and c.containers and c.containers[1]
  return c and c.image or "rayproject/ray:latest"
end

-- The submitter pod template: the user's, or KubeRay's default.
function M.template(job, rc)
  local t = job.spec.submitterPodTemplate
  if present(t) then
    t = v.deepcopy(t)
  else
    t = { spec = { restartPolicy = "Never", containers = v.array({ {
      name = M.CONTAINER, image = head_image(job, rc),
      resources = { limits = { cpu = "1", memory = "1Gi" }, requests = { cpu = "500m", memory = "200Mi" } },
    } }) } }
  end
  t.metadata = t.metadata or {}
  t.spec = t.spec or {}
  if not present(t.spec.restartPolicy) then t.spec.restartPolicy = "Never" end
  return t
end

-- The K8sJobMode submitter Job for a job whose status names its cluster,
-- dashboard and submission id.
function M.job(job, rc)
  local st = job.status
  local address = "http://" .. st.dashboardURL
  local t = M.template(job, rc)
  local c = t.spec.containers[1]
  if not present(c.command) or #c.command == 0 then
    c.command = v.array({ "/bin/bash", "-ce", "--" })
    c.args = v.array({ M.command(job, address, st.jobId) })
  end
  set_env(c, "RAY_DASHBOARD_ADDRESS", st.dashboardURL)
  set_env(c, "RAY_JOB_SUBMISSION_ID", st.jobId)
  if rc ~= nil and raypod.auth_enabled(rc.spec) then raypod.add_auth_env(rc, c) end
  if raypg.enabled(job) then
    raypg.annotate({ metadata = t.metadata, spec = t.spec }, raypg.name(job.metadata.name),
      raypg.SUBMITTER_GROUP, job.metadata.labels)
  end
  local labels = {
    ["ray.io/originated-from-cr-name"] = job.metadata.name,
    ["ray.io/originated-from-crd"] = "RayJob",
    ["app.kubernetes.io/created-by"] = "kuberay-operator",
  }
  local backoff = job.spec.submitterConfig and job.spec.submitterConfig.backoffLimit
  if not present(backoff) then backoff = M.DEFAULT_BACKOFF end
  return {
    apiVersion = "batch/v1", kind = "Job",
    metadata = { name = job.metadata.name, namespace = job.metadata.namespace, labels = labels,
      ownerReferences = v.array({ v.owner_ref(job) }) },
    spec = { backoffLimit = backoff, template = t },
  }
end

-- Resources of the submitter pod (for the PodGroup's minResources).
function M.resources(job)
  return raypg.pod_resources(M.template(job).spec)
end

-- SidecarMode: the container added to the head pod, which waits for the
-- dashboard and then submits and follows the job.
function M.sidecar(job, dashboard_port)
  local address = "http://127.0.0.1:" .. dashboard_port
  local wait = "until ray job list --address " .. address .. " >/dev/null 2>&1 ; do sleep 1 ; done ; "
  return {
    name = M.CONTAINER, image = head_image(job),
    command = v.array({ "/bin/bash", "-ce", "--" }),
    args = v.array({ wait .. M.command(job, address, job.status.jobId) }),
    env = v.array({ { name = "RAY_DASHBOARD_ADDRESS", value = "127.0.0.1:" .. dashboard_port },
      { name = "RAY_JOB_SUBMISSION_ID", value = job.status.jobId } }),
    resources = { limits = { cpu = "1", memory = "1Gi" }, requests = { cpu = "500m", memory = "200Mi" } },
  }
end

return M
