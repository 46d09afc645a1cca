-- Volcano Job (batch.volcano.sh/v1alpha1): a gang of tasks, each a pod
-- template run `replicas` times as pods <job>-<task>-<index>, scheduled
-- together through one PodGroup <job>-<uid> (minMember = minAvailable,
-- minTaskMember per task, minResources the requests of the first
-- minAvailable pods). Pods are made once the scheduler has admitted the
-- PodGroup (phase Inqueue or later), as Volcano does.
-- The job moves through Volcano's phases: Pending until minAvailable pods
-- run or finished, Running, then Completed when every pod finished and
-- at least minAvailable succeeded (else Failed). Policies (on the job or
-- a task) turn what happens to pods (PodFailed, PodEvicted,
-- TaskCompleted, TaskFailed when a task's containers restarted its
-- maxRetry times, Unknown when the scheduler lost the gang, "*" for any)
-- or a container exit code into actions:
-- RestartJob kills every pod and starts a new version of the job, at most
-- maxRetry times (then Failed); RestartTask / RestartPod kill only those
-- pods; AbortJob, TerminateJob and CompleteJob kill the running pods and
-- end in Aborted, Terminated and Completed. A pod without a matching
-- policy is simply left as it ended (or, when it vanished, made again).
-- Volcano reacts to pod events; this controller looks at the pods as they
-- are on each pass, and acts on pods of the job's current version only.
-- A Command (bus.volcano.sh/v1alpha1, owned by the job: what `vcctl job
-- suspend|resume` and `volray job suspend|resume` create) is an action
-- taken once, oldest first, then deleted: AbortJob suspends a live job
-- (Aborting, then Aborted once its pods are gone), ResumeJob starts an
-- Aborted one again as a new version (Restarting, retryCount + 1),
-- RestartJob, CompleteJob and TerminateJob as from a policy.
-- A policy with a timeout acts only once its event has lasted that long
-- (the pod Pending since its creation, Failed since it finished, evicted
-- since its deletion began, a task completed since its last pod
-- finished; an event with no time of its own counts as old enough), and
-- the job is looked at again when it will have; PodPending matches only
-- a policy with a timeout, as in Volcano. An event that ends before its
-- timeout (a pending pod starts) cancels the action.
-- A task with dependsOn ({name: [tasks], iteration: any|all}) gets its
-- pods only once the tasks it depends on are ready (all of them, or with
-- iteration any and several names, one): at least their minAvailable
-- pods Succeeded, or Running with every container ready.
-- spec.volumes mount PersistentVolumeClaims in every container, made
-- for the job when it gives a volumeClaim (lib/jobvolumes.lua).
local v = volray
local canon = require("canon")
local duration = require("duration")
local podreq = require("podreq")
local volumes = require("jobvolumes")

local JOBS = "batch.volcano.sh/v1alpha1/jobs"
local CONFIGMAPS = "v1/configmaps"
local SERVICES = "v1/services"
local NETPOLS = "networking.k8s.io/v1/networkpolicies"
local SECRETS = "v1/secrets"
local COMMANDS = "bus.volcano.sh/v1alpha1/commands"
local PODGROUPS = "scheduling.volcano.sh/v1beta1/podgroups"
local GROUP_NAME = "scheduling.k8s.io/group-name"
local TASK_SPEC = "volcano.sh/task-spec"
local TASK_INDEX = "volcano.sh/task-index"
local JOB_NAME = "volcano.sh/job-name"
local JOB_NAMESPACE = "volcano.sh/job-namespace"
local QUEUE_NAME = "volcano.sh/queue-name"
local JOB_VERSION = "volcano.sh/job-version"
local TEMPLATE = "volcano.sh/template-uid"
local RETRY_COUNT = "volcano.sh/job-retry-count"
local OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"
-- Job annotations and labels that Volcano passes on to pods.
local PASSED = { "volcano.sh/preemptable", "volcano.sh/cooldown-time",
  "volcano.sh/revocable-zone" }

local controller = {
  primary = JOBS,
  -- Volcano's vc-controller-manager records every controller's Events
  -- as this component (EventSource{Component: "vc-controller-manager"}).
  event_source = "vc-controller-manager",
  owns = { "v1/pods", PODGROUPS, COMMANDS, "v1/persistentvolumeclaims" },
}

local KNOWN_EVENTS = { ["*"] = true, PodFailed = true, PodEvicted = true,
  PodPending = true, PodRunning = true, TaskCompleted = true, TaskFailed = true,
  Unknown = true, OutOfSync = true, CommandIssued = true, JobUpdated = true }
local KNOWN_ACTIONS = { AbortJob = true, RestartJob = true, RestartTask = true,
  RestartPod = true, RestartPartition = true, TerminateJob = true,
  CompleteJob = true, ResumeJob = true, ManualResumeJob = true, SyncJob = true,
  EnqueueJob = true }

local function present(x)
  return x ~= nil and x ~= v.null
end

-- The spec with Volcano's admission defaults filled in, or nil and why.
local function effective(job)
  local s = job.spec or {}
  local e = { tasks = {}, total = 0 }
  local names, task_min = {}, 0
  if not present(s.tasks) or #s.tasks == 0 then
    return nil, "No task specified in job spec"
  end
  for i, t in ipairs(s.tasks) do
    local name = present(t.name) and t.name or ("default" .. (i - 1))
    if names[name] then return nil, "duplicated task name " .. name end
    names[name] = true
    local replicas = t.replicas or 0
    if replicas < 0 then return nil, "'replicas' < 0 in task: " .. name end
    local min = present(t.minAvailable) and t.minAvailable or replicas
    if min > replicas then
      return nil, "'minAvailable' is greater than 'replicas' in task: " .. name
    end
    e.tasks[i] = { name = name, replicas = replicas, min = min,
      maxRetry = present(t.maxRetry) and t.maxRetry ~= 0 and t.maxRetry or 3,
      template = t.template or {}, policies = t.policies or {},
      dependsOn = present(t.dependsOn) and t.dependsOn or nil }
    e.total = e.total + replicas
    task_min = task_min + min
  end
  e.minAvailable = (present(s.minAvailable) and s.minAvailable > 0) and s.minAvailable or task_min
  if e.minAvailable > e.total then
    return nil, "job 'minAvailable' should not be greater than total replicas in tasks"
  end
  e.minSuccess = present(s.minSuccess) and s.minSuccess or nil
  e.maxRetry = present(s.maxRetry) and s.maxRetry or 3
  e.queue = present(s.queue) and s.queue ~= "" and s.queue or "default"
  e.schedulerName = present(s.schedulerName) and s.schedulerName ~= "" and s.schedulerName or "volcano"
  e.policies = s.policies or {}
  e.timeouts = {}		-- policy -> seconds
  for _, t in ipairs(e.tasks) do
    local d = t.dependsOn
    if d ~= nil then
      for _, n in ipairs(present(d.name) and d.name or {}) do
        if not names[n] or n == t.name then
          return nil, "task " .. t.name .. " depends on " .. tostring(n) ..
            ", which is not another task of the job"
        end
      end
      if present(d.iteration) and d.iteration ~= "any" and d.iteration ~= "all" then
        return nil, "task " .. t.name .. ": dependsOn.iteration must be any or all"
      end
    end
  end
  local lists = { e.policies }
  for _, t in ipairs(e.tasks) do lists[#lists + 1] = t.policies end
  for _, list in ipairs(lists) do
    for _, p in ipairs(list) do
      if present(p.timeout) then
        local secs = duration.parse(p.timeout)
        if secs == nil or secs < 0 then
          return nil, "invalid policy timeout " .. tostring(p.timeout)
        end
        e.timeouts[p] = secs
      end
      if present(p.action) and not KNOWN_ACTIONS[p.action] then
        return nil, "invalid policy action " .. tostring(p.action)
      end
      local evs = p.events or {}
      if present(p.event) then evs = { p.event, table.unpack(evs) } end
      for _, ev in ipairs(evs) do
        if not KNOWN_EVENTS[ev] then return nil, "invalid policy event " .. tostring(ev) end
      end
      if #evs > 0 and present(p.exitCode) then
        return nil, "must not specify event and exitCode simultaneously"
      end
    end
  end
  return e
end

local same = canon.same

local function pod_name(job, task, i)
  return string.format("%s-%s-%d", job.metadata.name, task, i)
end

local function pg_name(job)
  return job.metadata.name .. "-" .. job.metadata.uid
end

local function ann(p, k)
  return (p.metadata.annotations or {})[k]
end

local function version_of(p)
  return tonumber(ann(p, JOB_VERSION) or "") or -1
end

local function phase_of(p)
  return p.status and p.status.phase or "Pending"
end

local function owned_pods(job)
  local out = {}
  for _, p in ipairs(v.list("v1/pods", job.metadata.namespace, { owner = job.metadata.uid })) do
    if v.is_controlled_by(p, job) then out[p.metadata.name] = p end
  end
  return out
end

-- The ssh plugin's arguments, as Go flags: --ssh-key-file-path (where
-- the keys are mounted, /root/.ssh), --ssh-private-key and
-- --ssh-public-key (the user's own pair instead of a new one),
-- --ssh-port (22; one out of range falls back to 22).
local SSH_PATH = "/root/.ssh"
local function ssh_args(job)
  local a = { path = SSH_PATH, port = 22 }
  local list = job.spec.plugins.ssh or {}
  local i = 1
  while i <= #list do
    local flag, value = tostring(list[i]):match("^%-%-?([%w-]+)=(.*)$")
    if flag == nil then
      flag = tostring(list[i]):match("^%-%-?([%w-]+)$")
      value = list[i + 1]
      i = i + 1
    end
    if flag == "ssh-key-file-path" then a.path = value
    elseif flag == "ssh-private-key" then a.private = value
    elseif flag == "ssh-public-key" then a.public = value
    elseif flag == "ssh-port" then a.port = tonumber(value) or 0 end
    i = i + 1
  end
  if a.port == nil or a.port <= 0 or a.port > 65535 or a.port % 1 ~= 0 then a.port = 22 end
  return a
end

-- Volcano's generateSSHConfig: every pod of the job by its host name
-- within the job's subdomain (the svc plugin's headless Service).
local function ssh_config(job, e, port)
  local out = { "StrictHostKeyChecking no", "UserKnownHostsFile /dev/null" }
  for _, t in ipairs(e.tasks) do
    local ps = t.template.spec or {}
    for i = 0, t.replicas - 1 do
      local host = present(ps.hostname) and ps.hostname ~= "" and ps.hostname or pod_name(job, t.name, i)
      local sub = present(ps.subdomain) and ps.subdomain ~= "" and ps.subdomain or job.metadata.name
      out[#out + 1] = "Host " .. host
      out[#out + 1] = "  HostName " .. host .. "." .. sub
      out[#out + 1] = "  Port " .. tostring(port)
      if present(ps.hostname) and ps.hostname ~= "" then break end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

-- The Secret <job>-ssh, made once (a new RSA key pair of 2048 bits, or
-- the user's) and owned by the job, as Volcano's ssh plugin makes it.
local function ensure_ssh(job, e)
  local ns, name = job.metadata.namespace, job.metadata.name .. "-ssh"
  if v.get(SECRETS, ns, name) ~= nil then return end
  local a = ssh_args(job)
  local private, public = a.private, a.public
  if private == nil or private == "" then private, public = v.ssh_keygen(2048) end
  local _, err, code = v.create({ apiVersion = "v1", kind = "Secret",
    metadata = { name = name, namespace = ns, ownerReferences = v.array({ v.owner_ref(job) }) },
    stringData = { id_rsa = private, ["id_rsa.pub"] = public or "",
      authorized_keys = public or "", config = ssh_config(job, e, a.port) } })
  if err ~= nil and code ~= 409 then error("creating Secret " .. name .. ": " .. tostring(err), 0) end
end

local function new_pod(job, e, t, i)
  local tmpl = t.template
  local md = tmpl.metadata or {}
  local spec = v.deepcopy(tmpl.spec or {})
  local index = tostring(i)
  if not present(spec.schedulerName) or spec.schedulerName == "" then
    spec.schedulerName = e.schedulerName
  end
  if (not present(spec.priorityClassName) or spec.priorityClassName == "") and
      present(job.spec.priorityClassName) and job.spec.priorityClassName ~= "" then
    spec.priorityClassName = job.spec.priorityClassName
  end
  -- spec.volumes: the job's claims in every container.
  volumes.mount(job, spec)
  -- The svc plugin: a stable name under the job's headless Service, and
  -- every task's hosts from the job's <job>-svc ConfigMap, as variables
  -- and as files under /etc/volcano.
  if (job.spec.plugins or {}).svc ~= nil then
    if not present(spec.hostname) or spec.hostname == "" then spec.hostname = pod_name(job, t.name, i) end
    if not present(spec.subdomain) or spec.subdomain == "" then spec.subdomain = job.metadata.name end
    local cm = job.metadata.name .. "-svc"
    local vars = {}
    for _, ts in ipairs(e.tasks) do
      local key = ts.name:gsub("-", "_"):upper()
      for _, n in ipairs({ "VC_" .. key .. "_HOSTS", "VC_" .. key .. "_NUM" }) do
        vars[#vars + 1] = { name = n, valueFrom = { configMapKeyRef = { name = cm, key = n } } }
      end
    end
    for _, list in ipairs({ spec.containers or {}, spec.initContainers or {} }) do
      for _, c in ipairs(list) do
        c.env = c.env or v.array()
        for _, x in ipairs(vars) do c.env[#c.env + 1] = v.deepcopy(x) end
        c.volumeMounts = c.volumeMounts or v.array()
        c.volumeMounts[#c.volumeMounts + 1] = { name = cm, mountPath = "/etc/volcano" }
      end
    end
    spec.volumes = spec.volumes or v.array()
    spec.volumes[#spec.volumes + 1] = { name = cm, configMap = { name = cm } }
  end
  -- The ssh plugin: the job's key pair and ssh config at the key path
  -- (/root/.ssh, 0600; elsewhere 0644), from the Secret <job>-ssh.
  if (job.spec.plugins or {}).ssh ~= nil then
    local a = ssh_args(job)
    local secret = job.metadata.name .. "-ssh"
    local items = v.array()
    for _, k in ipairs({ "id_rsa", "id_rsa.pub", "authorized_keys", "config" }) do
      items[#items + 1] = { key = k, path = ".ssh/" .. k }
    end
    spec.volumes = spec.volumes or v.array()
    spec.volumes[#spec.volumes + 1] = { name = secret, secret = { secretName = secret,
      items = items, defaultMode = a.path == SSH_PATH and 384 or 420 } }
    for _, list in ipairs({ spec.containers or {}, spec.initContainers or {} }) do
      for _, c in ipairs(list) do
        c.volumeMounts = c.volumeMounts or v.array()
        c.volumeMounts[#c.volumeMounts + 1] = { name = secret, mountPath = a.path, subPath = ".ssh" }
      end
    end
  end
  -- The env plugin: each container learns its index.
  if (job.spec.plugins or {}).env ~= nil then
    for _, list in ipairs({ spec.containers or {}, spec.initContainers or {} }) do
      for _, c in ipairs(list) do
        c.env = c.env or v.array()
        c.env[#c.env + 1] = { name = "VK_TASK_INDEX", value = index }
        c.env[#c.env + 1] = { name = "VC_TASK_INDEX", value = index }
      end
    end
  end
  local annotations = v.deepcopy(md.annotations or {})
  local labels = v.deepcopy(md.labels or {})
  annotations[TASK_INDEX] = index
  annotations[TASK_SPEC] = t.name
  annotations[GROUP_NAME] = pg_name(job)
  annotations[JOB_NAME] = job.metadata.name
  annotations[QUEUE_NAME] = e.queue
  annotations[JOB_VERSION] = tostring(job.status.version or 0)
  annotations[TEMPLATE] = job.metadata.name .. "-" .. t.name
  annotations[RETRY_COUNT] = tostring(job.status.retryCount or 0)
  local jann, jlab = job.metadata.annotations or {}, job.metadata.labels or {}
  for _, k in ipairs(PASSED) do
    if jann[k] ~= nil then annotations[k] = jann[k] end
  end
  for _, k in ipairs({ "volcano.sh/preemptable", "volcano.sh/cooldown-time" }) do
    if jlab[k] ~= nil then labels[k] = jlab[k] end
  end
  labels[TASK_INDEX] = index
  labels[JOB_NAME] = job.metadata.name
  labels[TASK_SPEC] = t.name
  labels[JOB_NAMESPACE] = job.metadata.namespace
  labels[QUEUE_NAME] = e.queue
  return {
    apiVersion = "v1",
    kind = "Pod",
    metadata = {
      name = pod_name(job, t.name, i),
      namespace = job.metadata.namespace,
      labels = labels,
      annotations = annotations,
      ownerReferences = v.array({ v.owner_ref(job) }),
    },
    spec = spec,
  }
end

-- minResources: the requests of minAvailable pods, first each task's own
-- minAvailable, then the rest from the tasks in order (Volcano sorts them
-- by priority class; tasks here keep their order within equal priority).
local function min_resources(e)
  local acc, count = {}, 0
  for _, t in ipairs(e.tasks) do
    local n = math.min(t.min, e.minAvailable - count)
    if n > 0 then
      podreq.add(acc, t.template.spec or {}, n)
      count = count + n
    end
  end
  for _, t in ipairs(e.tasks) do
    if count >= e.minAvailable then break end
    local n = math.min(t.replicas - t.min, e.minAvailable - count)
    if n > 0 then
      podreq.add(acc, t.template.spec or {}, n)
      count = count + n
    end
  end
  return podreq.to_list(acc)
end

-- Make the job's PodGroup, or bring its spec up to date; returns it.
local function ensure_podgroup(job, e)
  local ns, name = job.metadata.namespace, pg_name(job)
  local min_task = {}
  for _, t in ipairs(e.tasks) do min_task[t.name] = t.min end
  local want = {
    minMember = e.minAvailable,
    minTaskMember = min_task,
    queue = e.queue,
    minResources = min_resources(e),
    priorityClassName = job.spec.priorityClassName,
    -- Volcano's job controller passes the job's topology on.
    networkTopology = job.spec.networkTopology,
  }
  local pg = v.get(PODGROUPS, ns, name)
  if pg == nil then
    local created, err, code = v.create({
      apiVersion = "scheduling.volcano.sh/v1beta1",
      kind = "PodGroup",
      metadata = {
        name = name, namespace = ns,
        annotations = v.deepcopy(job.metadata.annotations or {}),
        labels = v.deepcopy(job.metadata.labels or {}),
        ownerReferences = v.array({ v.owner_ref(job) }),
      },
      spec = want,
    })
    if created == nil and code ~= 409 then
      v.event(job, "Warning", "PodGroupError", "Failed to create PodGroup, err: " .. tostring(err))
      error("creating PodGroup " .. name .. ": " .. tostring(err), 0)
    end
    return created or v.get(PODGROUPS, ns, name)
  end
  local s = pg.spec or {}
  local same = s.minMember == want.minMember and
    (s.priorityClassName or "") == (want.priorityClassName or "") and
    same(s.minResources or {}, want.minResources or {}) and
    same(s.networkTopology or {}, want.networkTopology or {})
  for k, n in pairs(min_task) do
    if (s.minTaskMember or {})[k] ~= n then same = false end
  end
  if same then return pg end
  s.minMember, s.minTaskMember = want.minMember, want.minTaskMember
  s.minResources, s.priorityClassName = want.minResources, want.priorityClassName
  s.networkTopology = want.networkTopology
  pg.spec = s
  local updated, err, code = v.update(pg)
  if updated == nil and code ~= 409 and code ~= 404 then
    error("updating PodGroup " .. name .. ": " .. tostring(err), 0)
  end
  return updated or pg
end

local function delete_podgroup(job)
  local ok, err, code = v.delete(PODGROUPS, job.metadata.namespace, pg_name(job))
  if not ok and code ~= 404 then error("deleting PodGroup: " .. tostring(err), 0) end
end

-- Mark a pod out of sync (its later events mean nothing) and delete it.
local function kill_pod(job, p)
  local ns, name = job.metadata.namespace, p.metadata.name
  if ann(p, OUT_OF_SYNC) == nil then
    local _, err, code = v.patch("v1/pods", ns, name,
      { metadata = { annotations = { [OUT_OF_SYNC] = "" } } })
    if err ~= nil then
      if code == 404 then return end
      error("marking pod " .. name .. ": " .. tostring(err), 0)
    end
  end
  local ok, err, code = v.delete("v1/pods", ns, name)
  if not ok and code ~= 404 then
    v.event(job, "Warning", "FailedDelete", "Error deleting pods: " .. tostring(err))
    error("deleting pod " .. name .. ": " .. tostring(err), 0)
  end
end

local function fresh_counts()
  return { pending = 0, running = 0, succeeded = 0, failed = 0, terminating = 0,
    unknown = 0, tasks = {} }
end

local function count(c, p)
  local ph = phase_of(p)
  local key = ({ Pending = "pending", Running = "running", Succeeded = "succeeded",
    Failed = "failed" })[ph] or "unknown"
  c[key] = c[key] + 1
  local task = ann(p, TASK_SPEC)
  if task ~= nil then
    c.tasks[task] = c.tasks[task] or { phase = {} }
    local tp = c.tasks[task].phase
    tp[ph] = (tp[ph] or 0) + 1
  end
end

-- A status with these counts (the rest copied from the job).
local function status_with(job, e, c)
  local old = job.status or {}
  return {
    state = v.deepcopy(old.state or {}),
    pending = c.pending, running = c.running, succeeded = c.succeeded,
    failed = c.failed, terminating = c.terminating, unknown = c.unknown,
    version = old.version or 0,
    retryCount = old.retryCount or 0,
    minAvailable = e.minAvailable,
    taskStatusCount = next(c.tasks) and c.tasks or nil,
    conditions = old.conditions,
    controlledResources = old.controlledResources,
  }
end

-- Write the status when it changed; a new phase gets its time and condition.
local function write_status(job, new)
  local old = job.status or {}
  -- What the job made: its claims (volume-pvc-<name>) and plugins
  -- (plugin-<name>), as Volcano records them.
  local cr = v.deepcopy(new.controlledResources or {})
  volumes.controlled(job, cr)
  for name in pairs(job.spec.plugins or {}) do cr["plugin-" .. name] = name end
  if next(cr) ~= nil then new.controlledResources = cr end
  local moved = (old.state or {}).phase ~= new.state.phase
  if not moved and same(old, new) then return nil end
  if moved then
    local now = v.now()
    new.state.lastTransitionTime = now
    local conds = v.array()
    for _, c in ipairs(new.conditions or {}) do
      if c.status ~= new.state.phase then conds[#conds + 1] = c end
    end
    conds[#conds + 1] = { status = new.state.phase, lastTransitionTime = now }
    new.conditions = conds
    local kind = (new.state.phase == "Failed" or new.state.phase == "Aborted") and "Warning" or "Normal"
    v.event(job, kind, new.state.phase, "Job " .. job.metadata.name .. " is " .. new.state.phase)
  end
  job.status = new
  local _, err, code = v.update_status(job)
  if code == 409 then return { requeue = true } end
  if err ~= nil and code ~= 404 then error("status: " .. tostring(err), 0) end
  return nil
end

local SOFT = { Succeeded = true, Failed = true }

-- Volcano's KillJob: delete the job's pods but those in a retained phase
-- (at the last retry, finished pods are always kept), drop its PodGroup,
-- and let update decide the phase. bump starts a new version.
local function kill_job(job, e, pods, retain, update, bump)
  local st = job.status
  if bump then st.version = (st.version or 0) + 1 end
  if (st.retryCount or 0) >= e.maxRetry - 1 then retain = SOFT end
  local c = fresh_counts()
  for _, p in pairs(pods) do
    if p.metadata.deletionTimestamp ~= nil then
      c.terminating = c.terminating + 1
    elseif not retain[phase_of(p)] then
      kill_pod(job, p)
      c.terminating = c.terminating + 1
    else
      count(c, p)
    end
  end
  local new = status_with(job, e, c)
  if update ~= nil then update(new) end
  delete_podgroup(job)
  return write_status(job, new)
end

-- Volcano's KillTarget: delete the pods of one task, or one pod.
local function kill_target(job, e, pods, target, update)
  local c = fresh_counts()
  for name, p in pairs(pods) do
    local hit = ann(p, TASK_SPEC) == target.task and
      (target.pod == nil or target.pod == name)
    if p.metadata.deletionTimestamp ~= nil then
      c.terminating = c.terminating + 1
    elseif hit then
      kill_pod(job, p)
      c.terminating = c.terminating + 1
    else
      count(c, p)
    end
  end
  local new = status_with(job, e, c)
  if update ~= nil then update(new) end
  return write_status(job, new)
end

-- What the scheduler says of the PodGroup, on the job: its latest true
-- condition other than Scheduled (Unschedulable, with the gang's reason).
local function podgroup_event(job, pg)
  local latest
  for _, c in ipairs(pg and pg.status and pg.status.conditions or {}) do
    if c.status == "True" and (latest == nil or
        (c.lastTransitionTime or "") > (latest.lastTransitionTime or "")) then
      latest = c
    end
  end
  if latest ~= nil and latest.type ~= "Scheduled" then
    v.event(job, "Warning", "PodGroupPending", string.format(
      "PodGroup %s:%s %s, reason: %s", job.metadata.namespace, job.metadata.name,
      string.lower(tostring(latest.type)), tostring(latest.message or "")))
  end
end

-- The svc plugin's objects, owned by the job: the ConfigMap <job>-svc of
-- each task's hosts (<task>.host, one per line; VC_<TASK>_HOSTS, comma
-- separated; VC_<TASK>_NUM), the headless Service <job> over the job's
-- pods and, unless --disable-network-policy, a NetworkPolicy <job> that
-- lets only the job's pods in (--publish-not-ready-addresses: the
-- Service lists pods before they are ready).
local function ensure_svc(job, e)
  local args = {}
  for _, a in ipairs(job.spec.plugins.svc or {}) do args[a] = true end
  local ns, name = job.metadata.namespace, job.metadata.name
  local data = {}
  for _, ts in ipairs(e.tasks) do
    local hosts = {}
    local th = ((ts.template or {}).spec or {}).hostname
    local sub = ((ts.template or {}).spec or {}).subdomain
    if not present(sub) or sub == "" then sub = name end
    for i = 0, ts.replicas - 1 do
      local h = (present(th) and th ~= "") and th or pod_name(job, ts.name, i)
      hosts[#hosts + 1] = h .. "." .. sub
      if present(th) and th ~= "" then break end
    end
    local key = ts.name:gsub("-", "_")
    data[key .. ".host"] = table.concat(hosts, "\n")
    data["VC_" .. key:upper() .. "_HOSTS"] = table.concat(hosts, ",")
    data["VC_" .. key:upper() .. "_NUM"] = tostring(#hosts)
  end
  local owner = v.array({ v.owner_ref(job) })
  local cm = v.get(CONFIGMAPS, ns, name .. "-svc")
  if cm == nil then
    local _, err, code = v.create({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = name .. "-svc", namespace = ns, ownerReferences = owner }, data = data })
    if err ~= nil and code ~= 409 then error("creating ConfigMap " .. name .. "-svc: " .. tostring(err), 0) end
  elseif not same(cm.data or {}, data) then
    cm.data = data
    local _, err, _, reason = v.update(cm)
    if err ~= nil and reason ~= "Conflict" then error("updating ConfigMap " .. name .. "-svc: " .. tostring(err), 0) end
  end
  local selector = { [JOB_NAME] = name, [JOB_NAMESPACE] = ns }
  if v.get(SERVICES, ns, name) == nil then
    local _, err, code = v.create({ apiVersion = "v1", kind = "Service",
      metadata = { name = name, namespace = ns, ownerReferences = owner },
      spec = { clusterIP = "None", selector = selector,
        publishNotReadyAddresses = args["--publish-not-ready-addresses"] == true } })
    if err ~= nil and code ~= 409 then error("creating Service " .. name .. ": " .. tostring(err), 0) end
  end
  if not args["--disable-network-policy"] and v.get(NETPOLS, ns, name) == nil then
    local _, err, code = v.create({ apiVersion = "networking.k8s.io/v1", kind = "NetworkPolicy",
      metadata = { name = name, namespace = ns, ownerReferences = owner },
      spec = { podSelector = { matchLabels = selector },
        ingress = v.array({ { from = v.array({ { podSelector = { matchLabels = selector } } }) } }),
        policyTypes = v.array({ "Ingress" }) } })
    if err ~= nil and code ~= 409 then error("creating NetworkPolicy " .. name .. ": " .. tostring(err), 0) end
  end
end

-- Volcano's isDependsOnPodsReady: at least the task's minAvailable pods
-- Succeeded, or Running with every container ready.
local function task_ready(job, e, name, pods)
  local task
  for _, t in ipairs(e.tasks) do if t.name == name then task = t end end
  if task == nil then return true end
  local n = 0
  for i = 0, task.replicas - 1 do
    local p = pods[pod_name(job, name, i)]
    local ph = p and phase_of(p)
    if ph == "Succeeded" then
      n = n + 1
    elseif ph == "Running" then
      local all = true
      for _, cs in ipairs(p.status and p.status.containerStatuses or {}) do
        if not cs.ready then all = false end
      end
      if all then n = n + 1 end
    end
  end
  return n >= task.min
end

-- Volcano's waitDependsOnTaskMeetCondition: whether task t may get its
-- pods now.
local function depends_on_ready(job, e, t, pods)
  local d = t.dependsOn
  if d == nil or not present(d.name) then return true end
  if #d.name > 1 and d.iteration == "any" then
    for _, n in ipairs(d.name) do
      if task_ready(job, e, n, pods) then return true end
    end
    return false
  end
  for _, n in ipairs(d.name) do
    if not task_ready(job, e, n, pods) then return false end
  end
  return true
end

-- The same, once per pass (e is the pass's; pod_events and sync_job both
-- ask, about the same pods).
local function depends_met(job, e, t, pods)
  e.started = e.started or {}
  local r = e.started[t.name]
  if r == nil then
    r = depends_on_ready(job, e, t, pods)
    e.started[t.name] = r
  end
  return r
end

-- Volcano's SyncJob: keep the PodGroup right; once the scheduler admitted
-- it, make the missing pods and delete surplus or out-of-sync ones.
local function sync_job(job, e, pods, update)
  local ok, r, why = pcall(volumes.ensure, job)
  if not ok or r == "missing" then
    v.event(job, "Warning", "PVCError", "Failed to create PVC, err: " .. tostring(why or r))
    if not ok then error(r, 0) end
    return { requeue_after = 5 }
  end
  if r == "updated" then return nil end	-- the write brings the job back
  if (job.spec.plugins or {}).svc ~= nil then ensure_svc(job, e) end
  if (job.spec.plugins or {}).ssh ~= nil then ensure_ssh(job, e) end
  local pg = ensure_podgroup(job, e)
  podgroup_event(job, pg)
  local pg_phase = pg and pg.status and pg.status.phase or ""
  if pg_phase == "" or pg_phase == "Pending" then
    local new = v.deepcopy(job.status)
    new.minAvailable = e.minAvailable
    for _, k in ipairs({ "pending", "running", "succeeded", "failed", "terminating", "unknown" }) do
      new[k] = new[k] or 0
    end
    if update ~= nil then update(new) end
    return write_status(job, new)
  end
  local c = fresh_counts()
  local expected = {}
  local ready_to_start = {}
  for _, t in ipairs(e.tasks) do ready_to_start[t.name] = depends_met(job, e, t, pods) end
  for _, t in ipairs(e.tasks) do
    for i = 0, t.replicas - 1 do
      local name = pod_name(job, t.name, i)
      expected[name] = true
      local p = pods[name]
      if p == nil and not ready_to_start[t.name] then
        -- Not yet: it waits for the tasks it depends on.
      elseif p == nil then
        local created, err, code = v.create(new_pod(job, e, t, i))
        if created == nil and code ~= 409 then
          v.event(job, "Warning", "FailedCreate", "Error creating pods: " .. tostring(err))
          error("creating pod " .. name .. ": " .. tostring(err), 0)
        end
        if created ~= nil then count(c, created) end
      elseif p.metadata.deletionTimestamp ~= nil then
        c.terminating = c.terminating + 1
      else
        if ann(p, OUT_OF_SYNC) ~= nil then kill_pod(job, p) end
        count(c, p)
      end
    end
  end
  for name, p in pairs(pods) do
    if not expected[name] and p.metadata.deletionTimestamp == nil then
      kill_pod(job, p)
      c.terminating = c.terminating + 1
    end
  end
  local new = status_with(job, e, c)
  if update ~= nil then update(new) end
  return write_status(job, new)
end

-- When a pod's last container finished (seconds), or nil.
local function finished_at(p)
  local last
  for _, cs in ipairs(p.status and p.status.containerStatuses or {}) do
    local term = cs.state and cs.state.terminated
    if term and present(term.finishedAt) then
      local t = v.time(term.finishedAt)
      if t and (last == nil or t > last) then last = t end
    end
  end
  return last
end

-- What happened to the job's pods of its current version, as Volcano's
-- events: a list of {event, task, pod, exit_code, since} (since: when it
-- began, seconds, or nil).
local function pod_events(job, e, pods)
  local out = {}
  local version = job.status.version or 0
  local running = job.status.state.phase == "Running"
  for _, t in ipairs(e.tasks) do
    local succeeded, restarts, last_done = 0, 0, nil
    local started = depends_met(job, e, t, pods)
    for i = 0, t.replicas - 1 do
      local name = pod_name(job, t.name, i)
      local p = pods[name]
      if p == nil then
        -- A pod never made (its task waits for another) is not evicted.
        if running and started then out[#out + 1] = { event = "PodEvicted", task = t.name, pod = name } end
      elseif version_of(p) == version and ann(p, OUT_OF_SYNC) == nil then
        local ph = phase_of(p)
        if p.metadata.deletionTimestamp ~= nil then
          out[#out + 1] = { event = "PodEvicted", task = t.name, pod = name,
            since = v.time(p.metadata.deletionTimestamp) }
        elseif ph == "Failed" then
          local cs = p.status and p.status.containerStatuses or {}
          local term = cs[1] and cs[1].state and cs[1].state.terminated
          out[#out + 1] = { event = "PodFailed", task = t.name, pod = name,
            exit_code = term and term.exitCode or nil, since = finished_at(p) }
        elseif ph == "Succeeded" then
          succeeded = succeeded + 1
          last_done = math.max(last_done or 0, finished_at(p) or 0)
        elseif ph == "Pending" then
          out[#out + 1] = { event = "PodPending", task = t.name, pod = name,
            since = p.metadata.creationTimestamp and v.time(p.metadata.creationTimestamp) }
        else
          local st = p.status or {}
          for _, list in ipairs({ st.initContainerStatuses or {}, st.containerStatuses or {} }) do
            for _, cs in ipairs(list) do restarts = restarts + (cs.restartCount or 0) end
          end
        end
      end
    end
    if t.replicas > 0 and succeeded >= t.replicas then
      out[#out + 1] = { event = "TaskCompleted", task = t.name,
        since = last_done ~= 0 and last_done or nil }
    end
    -- Containers of the task's live pods restarted maxRetry times (-1: no limit).
    if t.replicas > 0 and t.maxRetry ~= -1 and restarts >= t.maxRetry then
      out[#out + 1] = { event = "TaskFailed", task = t.name }
    end
  end
  return out
end

local function policy_matches(p, ev)
  local evs = {}
  if present(p.event) then evs[#evs + 1] = p.event end
  for _, x in ipairs(p.events or {}) do evs[#evs + 1] = x end
  for _, x in ipairs(evs) do
    if x == ev.event or x == "*" then return true end
  end
  return present(p.exitCode) and ev.event == "PodFailed" and p.exitCode == ev.exit_code
end

-- Volcano's applyPolicies: the task's policies first, then the job's;
-- the first event with a matching policy decides. A policy with a
-- timeout decides only once the event has lasted that long: until then
-- the event is passed over (its pod or task is waited for) and the
-- seconds left come back as the third value, the soonest of them.
local function choose_action(e, events)
  local now, wait = v.time(), nil
  -- nil: p does not apply to ev; else the seconds still to wait (<= 0: act).
  local function left(p, ev)
    if not policy_matches(p, ev) then return nil end
    local t = e.timeouts[p]
    if t == nil then
      if ev.event == "PodPending" then return nil end	-- needs a timeout
      return 0
    end
    return ev.since ~= nil and ev.since + t - now or 0
  end
  for _, ev in ipairs(events) do
    local lists = {}
    for _, t in ipairs(e.tasks) do
      if t.name == ev.task then lists[#lists + 1] = t.policies end
    end
    lists[#lists + 1] = e.policies
    local decided = false
    for _, list in ipairs(lists) do
      for _, p in ipairs(list) do
        local l = left(p, ev)
        if l ~= nil and l <= 0 then return p.action, ev, wait end
        if l ~= nil then
          if wait == nil or l < wait then wait = l end
          decided = true
          break
        end
      end
      if decided then break end
    end
  end
  return "SyncJob", nil, wait
end

local function set_phase(phase)
  return function(st) st.state.phase = phase end
end

local function restart(phase)
  return function(st)
    st.state.phase = phase
    st.retryCount = (st.retryCount or 0) + 1
  end
end

local function when_drained(phase)
  return function(st)
    if st.terminating == 0 and st.pending == 0 and st.running == 0 then
      st.state.phase = phase
    end
  end
end

-- The actions every live state (Pending, Running) takes the same way.
local function common_action(job, e, pods, action, ev)
  if action == "RestartJob" then
    return kill_job(job, e, pods, {}, restart("Restarting"), true)
  elseif action == "RestartTask" or action == "RestartPod" then
    local target = { task = ev and ev.task, pod = action == "RestartPod" and ev and ev.pod or nil }
    return kill_target(job, e, pods, target, restart("Restarting"))
  elseif action == "AbortJob" then
    return kill_job(job, e, pods, SOFT, set_phase("Aborting"), true)
  elseif action == "CompleteJob" then
    return kill_job(job, e, pods, SOFT, set_phase("Completing"), true)
  elseif action == "TerminateJob" then
    return kill_job(job, e, pods, SOFT, set_phase("Terminating"), true)
  end
  return false
end

local function pending_update(e)
  return function(st)
    if e.minAvailable <= st.running + st.succeeded + st.failed then
      st.state.phase = "Running"
    end
  end
end

local function running_update(e)
  return function(st)
    if e.total == 0 then return end
    if e.minSuccess ~= nil and st.succeeded >= e.minSuccess then
      st.state.phase = "Completed"
      return
    end
    if st.succeeded + st.failed == e.total then
      local task_min = 0
      for _, t in ipairs(e.tasks) do task_min = task_min + t.min end
      if e.minAvailable >= task_min then
        for _, t in ipairs(e.tasks) do
          local tc = st.taskStatusCount and st.taskStatusCount[t.name]
          if tc ~= nil and (tc.phase.Succeeded or 0) < t.min then
            st.state.phase = "Failed"
            return
          end
        end
      end
      if e.minSuccess ~= nil and st.succeeded < e.minSuccess then
        st.state.phase = "Failed"
      elseif st.succeeded >= e.minAvailable then
        st.state.phase = "Completed"
      else
        st.state.phase = "Failed"
      end
      return
    end
    if st.pending > e.total - e.minAvailable then st.state.phase = "Pending" end
  end
end

local function restarting_update(e)
  return function(st)
    if (st.retryCount or 0) >= e.maxRetry then
      st.state.phase = "Failed"
      return
    end
    if e.total - st.terminating >= st.minAvailable then st.state.phase = "Pending" end
  end
end

-- The oldest Command for this job, taken (deleted): its action, or nil.
local function take_command(job)
  local cmds = v.list(COMMANDS, job.metadata.namespace, { owner = job.metadata.uid })
  if #cmds == 0 then return nil end
  table.sort(cmds, function(a, b)
    local x, y = a.metadata.creationTimestamp or "", b.metadata.creationTimestamp or ""
    if x ~= y then return x < y end
    return a.metadata.name < b.metadata.name
  end)
  local cmd = cmds[1]
  local _, err, code = v.delete(COMMANDS, cmd.metadata.namespace, cmd.metadata.name)
  if err ~= nil and code ~= 404 then
    error("deleting Command " .. cmd.metadata.name .. ": " .. tostring(err), 0)
  end
  if code == 404 then return nil end	-- someone else took it
  local action = cmd.action
  if not KNOWN_ACTIONS[action or ""] then
    v.event(job, "Warning", "CommandIssued",
      string.format("Command %s: unknown action %q, ignored", cmd.metadata.name, tostring(action)))
    return nil
  end
  v.event(job, "Normal", "CommandIssued", "Start to execute action " .. action)
  return action
end

-- A pass's result, with a look again in wait seconds (a policy's timeout
-- running) unless it already asks for one sooner.
local function after(r, wait)
  if wait == nil then return r end
  wait = math.max(wait, 0.05)
  if r == nil then return { requeue_after = wait } end
  if r.requeue_after == nil or r.requeue_after > wait then r.requeue_after = wait end
  return r
end

-- One pass of Volcano's state machine for the job's current phase.
local function execute(job, e, pods, command)
  local phase = job.status.state.phase
  local action, ev = "SyncJob", nil
  if command ~= nil then
    if (phase == "Pending" or phase == "Running") and command ~= "ResumeJob" then
      local r = common_action(job, e, pods, command, nil)
      if r ~= false then return r end
    elseif phase == "Aborted" and command == "ResumeJob" then
      return kill_job(job, e, pods, SOFT, restart("Restarting"), true)
    end
  end
  local wait
  if phase == "Pending" or phase == "Running" then
    local events = pod_events(job, e, pods)
    -- A gang that ran and no longer fits: the scheduler says Unknown.
    local pg = v.get(PODGROUPS, job.metadata.namespace, pg_name(job))
    if pg ~= nil and pg.status and pg.status.phase == "Unknown" then
      events[#events + 1] = { event = "Unknown" }
    end
    action, ev, wait = choose_action(e, events)
  end
  if phase == "Pending" then
    local r = common_action(job, e, pods, action, ev)
    if r ~= false then return r end
    return after(sync_job(job, e, pods, pending_update(e)), wait)
  elseif phase == "Running" then
    local r = common_action(job, e, pods, action, ev)
    if r ~= false then return r end
    return after(sync_job(job, e, pods, running_update(e)), wait)
  elseif phase == "Restarting" then
    return sync_job(job, e, pods, restarting_update(e))
  elseif phase == "Aborting" then
    return kill_job(job, e, pods, SOFT, when_drained("Aborted"), false)
  elseif phase == "Completing" then
    return kill_job(job, e, pods, SOFT, when_drained("Completed"), false)
  elseif phase == "Terminating" then
    return kill_job(job, e, pods, SOFT, when_drained("Terminated"), false)
  end
  -- Aborted, Completed, Failed, Terminated: nothing runs any more.
  return kill_job(job, e, pods, SOFT, nil, false)
end

function controller.reconcile(req)
  local job = v.get(JOBS, req.namespace, req.name)
  if job == nil or job.metadata.deletionTimestamp ~= nil then return nil end
  local e, why = effective(job)
  if e == nil then
    v.event(job, "Warning", "InvalidJob", why)
    return nil
  end
  job.status = job.status or {}
  job.status.state = job.status.state or {}
  if not present(job.status.state.phase) or job.status.state.phase == "" then
    -- initJobStatus: a new job is Pending.
    local new = v.deepcopy(job.status)
    new.state.phase = "Pending"
    new.minAvailable = e.minAvailable
    new.version = new.version or 0
    new.retryCount = new.retryCount or 0
    local r = write_status(job, new)
    if r ~= nil then return r end
    job = v.get(JOBS, req.namespace, req.name)
    if job == nil then return nil end
  end
  return execute(job, e, owned_pods(job), take_command(job))
end

return controller
