-- Ray pods and the head Service, built as KubeRay builds them. A pod
-- comes from its group's template with the Ray labels (which users cannot
-- override), an owner reference to the RayCluster, and a Ray container
-- (the first one) whose command runs `ray start`: on the head
-- `ray start --head --block --dashboard-host=0.0.0.0 ...`, on a worker
-- `ray start --address=<head-svc FQDN>:<gcs port> --block ...`, each flag
-- from rayStartParams ("true" becomes a bare flag) after KubeRay's
-- defaults, num-cpus and memory from the container's resources. The
-- container also gets KubeRay's environment (RAY_ADDRESS, RAY_PORT,
-- RAY_CLUSTER_NAME, KUBERAY_GEN_RAY_START_CMD, ...) and, on the head, the
-- default ports it lacks (gcs-server 6379, dashboard 8265, client 10001,
-- metrics 8080), which the head Service then exposes.
local v = volray
local gcsft = require("raygcsft")
local probes = require("rayprobes")
local M = {}

M.CLUSTER = "ray.io/cluster"
M.NODE_TYPE = "ray.io/node-type"
M.GROUP = "ray.io/group"
M.IDENTIFIER = "ray.io/identifier"
M.IS_RAY_NODE = "ray.io/is-ray-node"
M.CREATED_BY = "app.kubernetes.io/created-by"
M.APP_NAME = "app.kubernetes.io/name"
M.REPLICA = "ray.io/worker-group-replica-name"
M.HOST_INDEX = "ray.io/replica-host-index"
M.REPLICA_INDEX = "ray.io/worker-group-replica-index"
M.ORIGIN_NAME = "ray.io/originated-from-cr-name"
M.ORIGIN_CRD = "ray.io/originated-from-crd"
M.OVERWRITE_CMD = "ray.io/overwrite-container-cmd"
M.HEAD_GROUP = "headgroup"
M.OPERATOR = "kuberay-operator"

-- Default ports by name, and the rayStartParams key that moves each.
M.PORTS = {
  { name = "gcs-server", param = "port", port = 6379 },
  { name = "dashboard", param = "dashboard-port", port = 8265 },
  { name = "client", param = "ray-client-server-port", port = 10001 },
  { name = "metrics", param = "metrics-export-port", port = 8080 },
}
M.DASHBOARD_AGENT_PORT = "52365"
M.ULIMIT = "ulimit -n 65536"

local function present(x)
  return x ~= nil and x ~= v.null
end

function M.head_service_name(cluster)
  local hs = cluster.spec.headGroupSpec and cluster.spec.headGroupSpec.headService
  local name = hs and hs.metadata and hs.metadata.name
  if present(name) and name ~= "" then return name end
  return cluster.metadata.name .. "-head-svc"
end

-- The head Service's DNS name inside the cluster.
function M.head_fqdn(cluster)
  return M.head_service_name(cluster) .. "." .. cluster.metadata.namespace .. ".svc.cluster.local"
end

-- A port number from rayStartParams or its default.
function M.port(params, name)
  for _, p in ipairs(M.PORTS) do
    if p.name == name then
      local s = params and params[p.param]
      local n = s and math.tointeger(tonumber(s))
      return n or p.port
    end
  end
  return nil
end

-- The labels every Ray pod of a group carries.
function M.labels(cluster, node_type, group)
  local name = cluster.metadata.name
  return {
    [M.CLUSTER] = name,
    [M.NODE_TYPE] = node_type,
    [M.GROUP] = group,
    [M.IDENTIFIER] = name .. "-" .. node_type,
    [M.IS_RAY_NODE] = "yes",
    [M.APP_NAME] = "kuberay",
    [M.CREATED_BY] = M.OPERATOR,
  }
end

-- The selector of a group's pods (or of the head).
function M.selector(cluster, node_type, group)
  local s = { [M.CLUSTER] = cluster.metadata.name, [M.NODE_TYPE] = node_type }
  if group ~= nil then s[M.GROUP] = group end
  return s
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- A quantity's value rounded up to a whole number (cores, bytes).
local function whole(q)
  if not present(q) then return nil end
  local n = volray.quantity(tostring(q))
  if n == nil or n <= 0 then return nil end
  return math.tointeger(math.ceil(n - 1e-9)) or math.ceil(n)
end

local function resource(container, name)
  local r = container.resources or {}
  local x = r.limits and r.limits[name]
  if not present(x) then x = r.requests and r.requests[name] end
  return x
end

-- rayStartParams with KubeRay's defaults filled in.
local function is_gpu_key(k)
  return k:sub(-3) == "gpu" or k:match("^nvidia%.com/mig%-%d+g%.%d+gb$") ~= nil
end

function M.start_params(cluster, node_type, group_spec, container)
  local p = {}
  for k, x in pairs(group_spec.rayStartParams or {}) do p[k] = tostring(x) end
  -- KubeRay 1.7's top-level `resources` override rayStartParams (cpu,
  -- memory and GPUs as numbers, the rest as --resources JSON), and
  -- `labels` become --labels.
  if present(group_spec.resources) and next(group_spec.resources) ~= nil then
    local custom, names = {}, {}
    for name in pairs(group_spec.resources) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local q = v.quantity(tostring(group_spec.resources[name]))
      local lname = name:lower()
      if q == nil then
        -- skipped, as KubeRay skips a quantity it cannot parse
      elseif lname == "cpu" then
        p["num-cpus"] = string.format("%d", math.floor(q))
      elseif lname == "memory" then
        p.memory = string.format("%d", math.floor(q))
      elseif is_gpu_key(lname) then
        p["num-gpus"] = string.format("%d", math.floor(q))
      else
        custom[#custom + 1] = string.format("%q:%s", name,
          (math.tointeger(q) and string.format("%d", q)) or tostring(q))
      end
    end
    if #custom > 0 then p.resources = "'{" .. table.concat(custom, ",") .. "}'" end
  end
  if present(group_spec.labels) and next(group_spec.labels) ~= nil then
    local keys = {}
    for k in pairs(group_spec.labels) do keys[#keys + 1] = k end
    table.sort(keys)
    for i, k in ipairs(keys) do keys[i] = k .. "=" .. tostring(group_spec.labels[k]) end
    p.labels = table.concat(keys, ",")
  end
  if node_type == "head" then
    if p["dashboard-host"] == nil then p["dashboard-host"] = "0.0.0.0" end
  else
    if p.address == nil then
      local hp = M.port(cluster.spec.headGroupSpec.rayStartParams, "gcs-server")
      p.address = M.head_fqdn(cluster) .. ":" .. hp
    end
  end
  if p["metrics-export-port"] == nil then p["metrics-export-port"] = "8080" end
  if p["dashboard-agent-listen-port"] == nil then p["dashboard-agent-listen-port"] = M.DASHBOARD_AGENT_PORT end
  if p.block == nil then p.block = "true" end
  -- With the in-tree autoscaler the head runs no monitor of its own.
  if node_type == "head" and cluster.spec.enableInTreeAutoscaling == true then
    p["no-monitor"] = "true"
  end
  if p["num-cpus"] == nil then
    local cpu = whole(resource(container, "cpu"))
    if cpu then p["num-cpus"] = tostring(cpu) end
  end
  if p.memory == nil then
    local mem = whole(resource(container, "memory"))
    if mem then p.memory = string.format("%d", mem) end
  end
  if p["num-gpus"] == nil then
    local gpu = whole(resource(container, "nvidia.com/gpu"))
    if gpu then p["num-gpus"] = tostring(gpu) end
  end
  return p
end

-- `ray start ...` for a node type and its parameters.
function M.start_command(node_type, params)
  local parts = { "ray start" }
  if node_type == "head" then parts[#parts + 1] = "--head" end
  for _, k in ipairs(sorted_keys(params)) do
    local x = params[k]
    if x:lower() == "true" then
      parts[#parts + 1] = "--" .. k
    elseif x:lower() ~= "false" then
      parts[#parts + 1] = "--" .. k .. "=" .. x
    end
  end
  return table.concat(parts, " ")
end

local function set_env(container, name, value, value_from)
  container.env = container.env or v.array()
  for _, e in ipairs(container.env) do
    if e.name == name then return end
  end
  local e = { name = name }
  if value_from then e.valueFrom = value_from else e.value = value end
  container.env[#container.env + 1] = e
end

-- KubeRay's environment of the Ray container.
function M.add_env(cluster, node_type, container, start_cmd)
  local hp = M.port(cluster.spec.headGroupSpec.rayStartParams, "gcs-server")
  set_env(container, "RAY_CLUSTER_NAME", cluster.metadata.name)
  set_env(container, "RAY_CLUSTER_NAMESPACE", nil, { fieldRef = { fieldPath = "metadata.namespace" } })
  set_env(container, "RAY_CLOUD_INSTANCE_ID", nil, { fieldRef = { fieldPath = "metadata.name" } })
  set_env(container, "RAY_NODE_TYPE_NAME", nil,
    { fieldRef = { fieldPath = "metadata.labels['" .. M.GROUP .. "']" } })
  set_env(container, "RAY_PORT", tostring(hp))
  if node_type == "head" then
    set_env(container, "RAY_ADDRESS", "127.0.0.1:" .. hp)
  else
    set_env(container, "FQ_RAY_IP", M.head_fqdn(cluster))
    set_env(container, "RAY_IP", M.head_service_name(cluster))
    set_env(container, "RAY_ADDRESS", M.head_fqdn(cluster) .. ":" .. hp)
  end
  set_env(container, "KUBERAY_GEN_RAY_START_CMD", start_cmd)
  set_env(container, "RAY_USAGE_STATS_KUBERAY_IN_USE", "1")
  local crd = (cluster.metadata.labels or {})[M.ORIGIN_CRD] or "RayCluster"
  set_env(container, "RAY_USAGE_STATS_EXTRA_TAGS", "kuberay_version=volray;kuberay_crd=" .. crd)
  set_env(container, "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", "1")
end

-- Add the default ports the head container lacks (by name or number).
function M.add_head_ports(container, params)
  container.ports = container.ports or v.array()
  for _, d in ipairs(M.PORTS) do
    local want = M.port(params, d.name)
    local have = false
    for _, p in ipairs(container.ports) do
      if p.name == d.name or p.containerPort == want then have = true end
    end
    if not have then
      container.ports[#container.ports + 1] = { name = d.name, containerPort = want, protocol = "TCP" }
    end
  end
end

-- The Ray container's command and args: KubeRay's bash wrapper around the
-- user's args (if any) and `ray start`, unless the pod asks to keep its own.
-- bash -c, as KubeRay with ENABLE_LOGIN_SHELL=false: a login shell would
-- reset PATH from /etc/profile and lose the `ray` that local pods get.
function M.set_command(pod, container, start_cmd)
  if (pod.metadata.annotations or {})[M.OVERWRITE_CMD] == "true" then return end
  local user = {}
  for _, a in ipairs(container.args or {}) do user[#user + 1] = a end
  local cmd = table.concat(user, " ")
  if not cmd:find("ray start", 1, true) then
    cmd = cmd == "" and start_cmd or (cmd .. " && " .. start_cmd)
  end
  if not present(container.command) or #container.command == 0 then
    container.command = v.array({ "/bin/bash", "-c", "--" })
  end
  container.args = v.array({ M.ULIMIT .. "; " .. cmd })
end

M.AUTOSCALER = "autoscaler"
M.AUTOSCALER_CMD = "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)"

-- The head's service account with the autoscaler: the head template's,
-- else the cluster's name (the autoscaler's Role is bound to it).
function M.autoscaler_account(cluster)
  local sa = ((cluster.spec.headGroupSpec.template or {}).spec or {}).serviceAccountName
  if present(sa) and sa ~= "" then return sa end
  return cluster.metadata.name
end

-- KubeRay's autoscaler sidecar (BuildAutoscalerContainer with the
-- overrides of autoscalerOptions). volray's own autoscaler is the Lua
-- controller rayautoscaler.lua; the sidecar is there for fidelity, and on
-- the local node volray's `ray kuberay-autoscaler` only waits.
function M.autoscaler_container(cluster, image)
  local o = cluster.spec.autoscalerOptions or {}
  local env = v.array({
    { name = "RAY_CLUSTER_NAME", valueFrom = { fieldRef = { fieldPath = "metadata.labels['" .. M.CLUSTER .. "']" } } },
    { name = "RAY_CLUSTER_NAMESPACE", valueFrom = { fieldRef = { fieldPath = "metadata.namespace" } } },
    { name = "RAY_HEAD_POD_NAME", valueFrom = { fieldRef = { fieldPath = "metadata.name" } } },
    { name = "KUBERAY_CRD_VER", value = "v1" },
    { name = "KUBERAY_GEN_AUTOSCALER_START_CMD", value = M.AUTOSCALER_CMD },
  })
  for _, e in ipairs(o.env or {}) do env[#env + 1] = v.deepcopy(e) end
  local c = {
    name = M.AUTOSCALER,
    image = present(o.image) and o.image or image,
    imagePullPolicy = present(o.imagePullPolicy) and o.imagePullPolicy or "IfNotPresent",
    env = env,
    command = v.array({ "/bin/bash", "-c", "--" }),
    args = v.array({ M.AUTOSCALER_CMD }),
    resources = present(o.resources) and v.deepcopy(o.resources) or {
      limits = { cpu = "500m", memory = "512Mi" },
      requests = { cpu = "500m", memory = "512Mi" },
    },
  }
  if present(o.envFrom) and #o.envFrom > 0 then c.envFrom = v.deepcopy(o.envFrom) end
  if present(o.volumeMounts) and #o.volumeMounts > 0 then c.volumeMounts = v.deepcopy(o.volumeMounts) end
  if present(o.securityContext) then c.securityContext = v.deepcopy(o.securityContext) end
  if present(o.command) and #o.command > 0 then c.command = v.deepcopy(o.command) end
  if present(o.args) and #o.args > 0 then c.args = v.deepcopy(o.args) end
  return c
end

-- Ray's token authentication (authOptions.mode token, Ray 2.52+), as
-- KubeRay's SetContainerTokenAuthEnvVars sets it on a container:
-- RAY_AUTH_MODE, and RAY_AUTH_TOKEN from the Secret (authOptions.secretName,
-- else the one named after the cluster, key auth_token), or with
-- enableK8sTokenAuth RAY_ENABLE_K8S_TOKEN_AUTH and the projected token.
M.AUTH_SECRET_KEY = "auth_token"
M.TOKEN_VOLUME = "ray-token"
M.TOKEN_MOUNT = "/var/run/secrets/ray.io/serviceaccount"

function M.auth_enabled(spec)
  return present(spec.authOptions) and spec.authOptions.mode == "token"
end

function M.k8s_auth(spec)
  return present(spec.authOptions) and spec.authOptions.enableK8sTokenAuth == true
end

function M.auth_secret_name(cluster)
  local o = cluster.spec.authOptions or {}
  if present(o.secretName) and o.secretName ~= "" then return o.secretName end
  return cluster.metadata.name
end

function M.add_auth_env(cluster, container)
  set_env(container, "RAY_AUTH_MODE", "token")
  if M.k8s_auth(cluster.spec) then
    set_env(container, "RAY_ENABLE_K8S_TOKEN_AUTH", "true")
    container.volumeMounts = container.volumeMounts or v.array()
    for _, m in ipairs(container.volumeMounts) do
      if m.name == M.TOKEN_VOLUME then return end
    end
    container.volumeMounts[#container.volumeMounts + 1] =
      { name = M.TOKEN_VOLUME, mountPath = M.TOKEN_MOUNT, readOnly = true }
  else
    set_env(container, "RAY_AUTH_TOKEN", nil, { secretKeyRef =
      { name = M.auth_secret_name(cluster), key = M.AUTH_SECRET_KEY } })
  end
end

local function add_token_volume(spec)
  spec.volumes = spec.volumes or v.array()
  for _, vol in ipairs(spec.volumes) do
    if vol.name == M.TOKEN_VOLUME then return end
  end
  spec.volumes[#spec.volumes + 1] = { name = M.TOKEN_VOLUME,
    projected = { sources = v.array({ { serviceAccountToken = { path = "token" } } }) } }
end

-- The head pod with the in-tree autoscaler: its service account, the
-- sidecar, and the autoscaler version's environment.
local function add_autoscaler(cluster, pod, ray)
  pod.spec.serviceAccountName = M.autoscaler_account(cluster)
  local containers = pod.spec.containers
  local c = M.autoscaler_container(cluster, ray.image)
  if M.auth_enabled(cluster.spec) then M.add_auth_env(cluster, c) end
  containers[#containers + 1] = c
  local version = (cluster.spec.autoscalerOptions or {}).version
  if version == "v2" then
    set_env(ray, "RAY_enable_autoscaler_v2", "true")
    pod.spec.restartPolicy = "Never"
  elseif version == "v1" then
    set_env(ray, "RAY_enable_autoscaler_v2", "false")
  end
end

-- A Ray pod of the cluster: node_type "head" or "worker", group_spec the
-- headGroupSpec or a workerGroupSpec, extra labels (replica name, host
-- index) and a PodGroup to join (nil for none).
-- KubeRay's init container on a worker: wait for the head's GCS with
-- `ray health-check` (every 5 s, quietly for 120 s) before Ray starts;
-- the Ray container's own env and volume mounts, as the user wrote them.
M.WAIT_GCS = "wait-gcs-ready"
function M.add_wait_gcs(cluster, pod, ray)
  local addr = M.head_fqdn(cluster)
  local port = M.port(cluster.spec.headGroupSpec.rayStartParams, "gcs-server")
  local script = string.format([[

					SECONDS=0
					while true; do
						if (( SECONDS <= 120 )); then
							if ray health-check --address %s:%s > /dev/null 2>&1; then
								echo "GCS is ready."
								break
							fi
							echo "$SECONDS seconds elapsed: Waiting for GCS to be ready."
						else
							if ray health-check --address %s:%s; then
								echo "GCS is ready. Any error messages above can be safely ignored."
								break
							fi
							echo "$SECONDS seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ at https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html."
						fi
						sleep 5
					done
				]], addr, port, addr, port)
  local init = {
    name = M.WAIT_GCS, image = ray.image, imagePullPolicy = ray.imagePullPolicy,
    command = v.array({ "/bin/bash", "-c", "--" }), args = v.array({ script }),
    securityContext = v.deepcopy(ray.securityContext),
    env = ray.env and v.deepcopy(ray.env) or nil,
    volumeMounts = ray.volumeMounts and v.deepcopy(ray.volumeMounts) or nil,
    resources = { limits = { cpu = "200m", memory = "256Mi" }, requests = { cpu = "200m", memory = "256Mi" } },
  }
  pod.spec.initContainers = pod.spec.initContainers or v.array()
  table.insert(pod.spec.initContainers, init)
end

function M.build(cluster, node_type, group_spec, extra_labels, pg)
  local template = group_spec.template or {}
  local md = template.metadata or {}
  local group = node_type == "head" and M.HEAD_GROUP or group_spec.groupName
  local labels = v.deepcopy(md.labels or {})
  for k, x in pairs(group_spec.labels or {}) do labels[k] = x end
  for k, x in pairs(extra_labels or {}) do labels[k] = x end
  for k, x in pairs(M.labels(cluster, node_type, group)) do labels[k] = x end
  local prefix = node_type == "head" and (cluster.metadata.name .. "-head-")
    or (cluster.metadata.name .. "-" .. group .. "-worker-")
  local pod = {
    apiVersion = "v1",
    kind = "Pod",
    metadata = {
      generateName = prefix,
      namespace = cluster.metadata.namespace,
      labels = labels,
      annotations = v.deepcopy(md.annotations or {}),
      ownerReferences = v.array({ v.owner_ref(cluster) }),
    },
    spec = v.deepcopy(template.spec or {}),
  }
  local containers = pod.spec.containers or {}
  local ray = containers[1]
  if ray ~= nil and node_type ~= "head" then M.add_wait_gcs(cluster, pod, ray) end
  if ray ~= nil then
    local params = M.start_params(cluster, node_type, group_spec, ray)
    gcsft.start_params(cluster, node_type, params)
    local cmd = M.start_command(node_type, params)
    M.set_command(pod, ray, cmd)
    M.add_env(cluster, node_type, ray, cmd)
    gcsft.configure(cluster, node_type, pod, ray)
    probes.add(ray, node_type, params,
      (cluster.metadata.labels or {})[M.ORIGIN_CRD] or "RayCluster", cluster.spec.rayVersion)
    if node_type == "head" then M.add_head_ports(ray, group_spec.rayStartParams) end
    if M.auth_enabled(cluster.spec) then
      -- The Ray container, and SidecarMode's submitter beside it.
      M.add_auth_env(cluster, ray)
      for _, c in ipairs(containers) do
        if c.name == "ray-job-submitter" then M.add_auth_env(cluster, c) end
      end
      for _, c in ipairs(pod.spec.initContainers or {}) do
        if c.name == M.WAIT_GCS then M.add_auth_env(cluster, c) end
      end
      if M.k8s_auth(cluster.spec) then add_token_volume(pod.spec) end
    end
    if node_type == "head" and cluster.spec.enableInTreeAutoscaling == true then
      add_autoscaler(cluster, pod, ray)
    elseif cluster.spec.enableInTreeAutoscaling == true and
        (cluster.spec.autoscalerOptions or {}).version == "v2" then
      pod.spec.restartPolicy = "Never"
    end
  end
  if pg ~= nil then pg.annotate(pod, group) end
  return pod
end

-- The head Service: headless unless serviceType asks otherwise, ports
-- from the head container, selecting the head pod.
function M.head_service(cluster)
  local hg = cluster.spec.headGroupSpec
  local base = hg.headService and v.deepcopy(hg.headService) or {}
  local spec = base.spec or {}
  local ports = v.array()
  local container = ((hg.template or {}).spec or {}).containers
  container = container and container[1] or {}
  local cports = v.deepcopy(container.ports or {})
  M.add_head_ports({ ports = cports }, hg.rayStartParams)
  for _, p in ipairs(cports) do
    if present(p.name) then
      ports[#ports + 1] = { name = p.name, port = p.containerPort, targetPort = p.containerPort,
        protocol = p.protocol or "TCP", appProtocol = "tcp" }
    end
  end
  if not present(spec.ports) or #spec.ports == 0 then spec.ports = ports end
  spec.selector = M.selector(cluster, "head")
  local stype = hg.serviceType
  if present(stype) and stype ~= "" then
    spec.type = stype
  elseif not present(spec.type) then
    spec.type = "ClusterIP"
    if not present(spec.clusterIP) then spec.clusterIP = "None" end
  end
  if spec.clusterIP == "None" then spec.publishNotReadyAddresses = true end
  local labels = v.deepcopy((base.metadata or {}).labels or {})
  labels[M.CLUSTER] = cluster.metadata.name
  labels[M.NODE_TYPE] = "head"
  labels[M.IDENTIFIER] = cluster.metadata.name .. "-head"
  labels[M.APP_NAME] = "kuberay"
  labels[M.CREATED_BY] = M.OPERATOR
  return {
    apiVersion = "v1",
    kind = "Service",
    metadata = {
      name = M.head_service_name(cluster),
      namespace = cluster.metadata.namespace,
      labels = labels,
      annotations = v.deepcopy((base.metadata or {}).annotations or {}),
      ownerReferences = v.array({ v.owner_ref(cluster) }),
    },
    spec = spec,
  }
end

-- Is a Ray pod beyond repair: finished, or its Ray container ended with
-- restartPolicy Never (it will not come back)?
function M.unhealthy(pod)
  local phase = pod.status and pod.status.phase
  if phase == "Failed" or phase == "Succeeded" then return true end
  local spec = pod.spec or {}
  if spec.restartPolicy ~= "Never" then return false end
  local ray
  for _, cs in ipairs(pod.status and pod.status.containerStatuses or {}) do
    if cs.state and cs.state.terminated then
      if ray == nil then
        local containers = spec.containers
        if containers == nil then
          -- Listed with only some paths (raycluster.lua): the whole pod.
          local full = v.get("v1/pods", pod.metadata.namespace, pod.metadata.name)
          containers = full and full.spec.containers or {}
        end
        ray = containers[1] or false
      end
      if ray and cs.name == ray.name then return true end
    end
  end
  return false
end

function M.running_ready(pod)
  return pod.status ~= nil and pod.status.phase == "Running" and v.is_true(pod, "Ready")
end

return M
