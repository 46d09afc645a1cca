-- GCS fault tolerance, as KubeRay 1.7 configures it. A RayCluster is
-- fault tolerant with spec.gcsFaultToleranceOptions (Redis: redisAddress,
-- redisUsername, redisPassword, externalStorageNamespace; or the embedded
-- backend "rocksdb" with a PersistentVolumeClaim) or with the older
-- annotation ray.io/ft-enabled: "true" (the Redis address then in the head
-- container's RAY_REDIS_ADDRESS). Its head pod says so in the annotation
-- ray.io/ft-enabled (set on every head, "false" too); with Redis it gets
-- RAY_external_storage_namespace (and the annotation
-- ray.io/external-storage-namespace: the options', else the cluster's
-- annotation, else its uid), RAY_REDIS_ADDRESS, REDIS_USERNAME and
-- REDIS_PASSWORD (with --redis-username/--redis-password in ray start);
-- workers get RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S=600 unless they set
-- it. A Redis cluster carries the finalizer
-- ray.io/gcs-ft-redis-cleanup-finalizer; when it is deleted its pods go
-- first, then KubeRay's Redis cleanup Job (<name>-redis-cleanup) deletes
-- the storage namespace's keys, and the finalizer goes once the Job has
-- finished, whether it succeeded or failed (see raycluster.lua). A head
-- not ready whose Redis address names a Service of the cluster with no
-- ready endpoint (or none at all) is told apart (redis_unavailable).
local v = volray
local M = {}

M.FT_ANNOTATION = "ray.io/ft-enabled"
M.STORAGE_NS_ANNOTATION = "ray.io/external-storage-namespace"
M.FINALIZER = "ray.io/gcs-ft-redis-cleanup-finalizer"
M.CLEANUP_TYPE = "redis-cleanup"
M.RECONNECT_ENV = "RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S"
M.WORKER_RECONNECT_S = "600"
M.PVC_SUFFIX = "-gcs-pvc"
M.STORAGE_VOLUME = "gcs-storage"
M.STORAGE_PATH = "/data/gcs"

local function present(x)
  return x ~= nil and x ~= v.null
end

function M.enabled(rc)
  local a = (rc.metadata.annotations or {})[M.FT_ANNOTATION]
  return (a ~= nil and tostring(a):lower() == "true") or present(rc.spec.gcsFaultToleranceOptions)
end

function M.embedded(spec)
  local o = spec.gcsFaultToleranceOptions
  return present(o) and o.backend == "rocksdb"
end

-- Does the cluster keep its GCS in Redis (and so need the cleanup)?
function M.redis(rc)
  return M.enabled(rc) and not M.embedded(rc.spec)
end

function M.pvc_name(rc)
  local o = rc.spec.gcsFaultToleranceOptions or {}
  local st = o.storage
  if present(st) and present(st.claimName) and st.claimName ~= "" then return st.claimName end
  return rc.metadata.name .. M.PVC_SUFFIX
end

local function has_env(c, name)
  for _, e in ipairs(c.env or {}) do
    if e.name == name then return true end
  end
  return false
end

local function add_env(c, e)
  c.env = c.env or v.array()
  c.env[#c.env + 1] = e
end

-- Before `ray start` is built: rayStartParams of the head that refer to
-- the env KubeRay adds.
function M.start_params(rc, node_type, params)
  if node_type ~= "head" or not M.redis(rc) then return end
  local o = rc.spec.gcsFaultToleranceOptions
  if not present(o) then return end
  if present(o.redisUsername) then params["redis-username"] = "$REDIS_USERNAME" end
  if present(o.redisPassword) then params["redis-password"] = "$REDIS_PASSWORD" end
end

-- The pod's annotations and the Ray container's env (and the embedded
-- backend's volume).
function M.configure(rc, node_type, pod, ray)
  local ann = pod.metadata.annotations
  local on = M.enabled(rc)
  if node_type == "head" then ann[M.FT_ANNOTATION] = tostring(on) end
  if not on then return end
  if node_type ~= "head" then
    if not has_env(ray, M.RECONNECT_ENV) then
      add_env(ray, { name = M.RECONNECT_ENV, value = M.WORKER_RECONNECT_S })
    end
    return
  end
  local o = rc.spec.gcsFaultToleranceOptions
  if M.embedded(rc.spec) then
    if not has_env(ray, "RAY_gcs_storage") then add_env(ray, { name = "RAY_gcs_storage", value = "rocksdb" }) end
    if not has_env(ray, "RAY_gcs_storage_path") then
      add_env(ray, { name = "RAY_gcs_storage_path", value = M.STORAGE_PATH })
    end
    local st = present(o.storage) and o.storage or {}
    ray.volumeMounts = ray.volumeMounts or v.array()
    ray.volumeMounts[#ray.volumeMounts + 1] = { name = M.STORAGE_VOLUME, mountPath = M.STORAGE_PATH,
      subPath = present(st.subPath) and st.subPath or nil }
    pod.spec.volumes = pod.spec.volumes or v.array()
    pod.spec.volumes[#pod.spec.volumes + 1] = { name = M.STORAGE_VOLUME,
      persistentVolumeClaim = { claimName = M.pvc_name(rc) } }
    return
  end
  local sns = rc.metadata.uid
  local a = (rc.metadata.annotations or {})[M.STORAGE_NS_ANNOTATION]
  if a ~= nil then sns = a end
  if present(o) and present(o.externalStorageNamespace) and o.externalStorageNamespace ~= "" then
    sns = o.externalStorageNamespace
  end
  ann[M.STORAGE_NS_ANNOTATION] = sns
  if not has_env(ray, "RAY_external_storage_namespace") then
    add_env(ray, { name = "RAY_external_storage_namespace", value = sns })
  end
  if present(o) then
    add_env(ray, { name = "RAY_REDIS_ADDRESS", value = o.redisAddress })
    if present(o.redisUsername) then
      add_env(ray, { name = "REDIS_USERNAME", value = o.redisUsername.value, valueFrom = o.redisUsername.valueFrom })
    end
    if present(o.redisPassword) then
      add_env(ray, { name = "REDIS_PASSWORD", value = o.redisPassword.value, valueFrom = o.redisPassword.valueFrom })
    end
  elseif not has_env(ray, "REDIS_PASSWORD") then
    -- A password given in rayStartParams only: the cleanup Job needs it.
    local pw = (rc.spec.headGroupSpec.rayStartParams or {})["redis-password"]
    if pw ~= nil then add_env(ray, { name = "REDIS_PASSWORD", value = tostring(pw) }) end
  end
end

-- KubeRay's validation of the fault-tolerance settings (nil when fine).
function M.validate(spec, annotations)
  annotations = annotations or {}
  local o = spec.gcsFaultToleranceOptions
  local hg = spec.headGroupSpec
  local head = hg.template.spec.containers[1]
  local params = hg.rayStartParams or {}
  if annotations[M.FT_ANNOTATION] ~= nil and annotations[M.FT_ANNOTATION] ~= "" and present(o) then
    return M.FT_ANNOTATION .. " annotation and GcsFaultToleranceOptions are both set. " ..
      "Please use only GcsFaultToleranceOptions to configure GCS fault tolerance"
  end
  local on = tostring(annotations[M.FT_ANNOTATION] or ""):lower() == "true" or present(o)
  if not on and has_env(head, "RAY_REDIS_ADDRESS") then
    return "RAY_REDIS_ADDRESS is set which implicitly enables GCS fault tolerance, " ..
      "but GcsFaultToleranceOptions is not set. Please set GcsFaultToleranceOptions to enable GCS fault tolerance"
  end
  if present(o) then
    if params["redis-password"] ~= nil and params["redis-password"] ~= "" then
      return "cannot set `redis-password` in rayStartParams when GcsFaultToleranceOptions is enabled - " ..
        "use GcsFaultToleranceOptions.RedisPassword instead"
    end
    if has_env(head, "REDIS_PASSWORD") then
      return "cannot set `REDIS_PASSWORD` env var in head Pod when GcsFaultToleranceOptions is enabled - " ..
        "use GcsFaultToleranceOptions.RedisPassword instead"
    end
    if has_env(head, "RAY_REDIS_ADDRESS") then
      return "cannot set `RAY_REDIS_ADDRESS` env var in head Pod when GcsFaultToleranceOptions is enabled - " ..
        "use GcsFaultToleranceOptions.RedisAddress instead"
    end
    if annotations[M.STORAGE_NS_ANNOTATION] ~= nil and annotations[M.STORAGE_NS_ANNOTATION] ~= "" then
      return "cannot set `ray.io/external-storage-namespace` annotation when GcsFaultToleranceOptions is enabled - " ..
        "use GcsFaultToleranceOptions.ExternalStorageNamespace instead"
    end
    if o.backend == "rocksdb" then
      if present(o.redisAddress) and o.redisAddress ~= "" then
        return "cannot set GcsFaultToleranceOptions.RedisAddress when backend is 'rocksdb'"
      end
      if present(o.redisUsername) then return "cannot set GcsFaultToleranceOptions.RedisUsername when backend is 'rocksdb'" end
      if present(o.redisPassword) then return "cannot set GcsFaultToleranceOptions.RedisPassword when backend is 'rocksdb'" end
      if present(o.externalStorageNamespace) and o.externalStorageNamespace ~= "" then
        return "cannot set GcsFaultToleranceOptions.ExternalStorageNamespace when backend is 'rocksdb'"
      end
      local st = o.storage
      if present(st) and present(st.claimName) and st.claimName ~= "" and
          (present(st.size) or present(st.storageClassName) or #(st.accessModes or {}) > 0) then
        return "GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, storageClassName, and accessModes"
      end
      if has_env(head, "RAY_gcs_storage") or has_env(head, "RAY_gcs_storage_path") then
        return "cannot set `RAY_gcs_storage` or `RAY_gcs_storage_path` env var in head Pod when the embedded GCS FT " ..
          "backend is used - these are managed by KubeRay"
      end
      for _, m in ipairs(head.volumeMounts or {}) do
        if m.mountPath == M.STORAGE_PATH or m.name == M.STORAGE_VOLUME then
          return string.format("cannot set a volume mount named %q or mounted at %s in the head container when " ..
            "the embedded GCS FT backend is used - it is managed by KubeRay", M.STORAGE_VOLUME, M.STORAGE_PATH)
        end
      end
      for _, vol in ipairs(hg.template.spec.volumes or {}) do
        if vol.name == M.STORAGE_VOLUME then
          return string.format("cannot set a volume named %q in the head Pod when the embedded GCS FT backend " ..
            "is used - it is managed by KubeRay", M.STORAGE_VOLUME)
        end
      end
    elseif present(o.storage) then
      return "cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only applies to the 'rocksdb' backend"
    end
  end
  if (params["redis-username"] ~= nil and params["redis-username"] ~= "") or has_env(head, "REDIS_USERNAME") then
    return "cannot set redis username in rayStartParams or environment variables - " ..
      "use GcsFaultToleranceOptions.RedisUsername instead"
  end
  return nil
end

-- The embedded backend's claim {cluster}-gcs-pvc, owned by the cluster
-- unless storage.deletionPolicy is Retain (nil when the user brings one).
function M.storage_claim(rc)
  if not M.enabled(rc) or not M.embedded(rc.spec) then return nil end
  local st = rc.spec.gcsFaultToleranceOptions.storage
  st = present(st) and st or {}
  if present(st.claimName) and st.claimName ~= "" then return nil end
  local md = { name = M.pvc_name(rc), namespace = rc.metadata.namespace,
    labels = { ["ray.io/cluster"] = rc.metadata.name } }
  if st.deletionPolicy ~= "Retain" then md.ownerReferences = v.array({ v.owner_ref(rc) }) end
  local spec = { accessModes = v.array(present(st.accessModes) and #st.accessModes > 0 and st.accessModes
      or { "ReadWriteOnce" }),
    resources = { requests = { storage = present(st.size) and st.size or "1Gi" } } }
  if present(st.storageClassName) then spec.storageClassName = st.storageClassName end
  return { apiVersion = "v1", kind = "PersistentVolumeClaim", metadata = md, spec = spec }
end

-- The host and port of a Redis address as Ray reads RAY_REDIS_ADDRESS:
-- the first of a comma-separated list, with or without redis:// or
-- rediss:// and user:password@.
local function redis_host_port(addr)
  if type(addr) ~= "string" then return nil end
  addr = addr:match("^%s*([^,]*)"):gsub("^%a[%w+.-]*://", ""):gsub("^.*@", "")
  local host, port = addr:match("^([^:/]+):?(%d*)")
  return host, tonumber(port)
end

-- The Service a Redis host names from a pod of namespace ns (NAME,
-- NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local), or nil.
local function redis_service(host, ns)
  local parts = {}
  for p in host:gsub("%.$", ""):gmatch("[^.]+") do parts[#parts + 1] = p end
  if #parts == 0 or host:match("^[%d.]+$") or host == "localhost" then return nil end
  if #parts == 1 then return ns, parts[1] end
  local tail = table.concat(parts, ".", 3)
  if #parts == 2 or tail == "svc" or tail == "svc.cluster.local" then
    if v.get("v1/namespaces", nil, parts[2]) == nil then return nil end
    return parts[2], parts[1]
  end
  return nil
end

-- Why the head of a fault-tolerant cluster cannot have its Redis, as far
-- as the cluster's objects tell (nil when they do not): its address names
-- a Service that does not exist, lacks the port, or has no ready
-- endpoint. Ray's GCS then retries its connection and the head is never
-- ready; KubeRay says only that the head is not ready.
function M.redis_unavailable(rc, head)
  if not M.redis(rc) then return nil end
  local o = rc.spec.gcsFaultToleranceOptions
  local addr
  if present(o) then
    addr = o.redisAddress
  else
    for _, e in ipairs(((head.spec.containers or {})[1] or {}).env or {}) do
      if e.name == "RAY_REDIS_ADDRESS" then addr = e.value end
    end
  end
  local host, port = redis_host_port(addr)
  if host == nil then return nil end
  local ns, name = redis_service(host, rc.metadata.namespace)
  if ns == nil then return nil end
  -- host:port only: the address may hold a password.
  local what = string.format("GCS fault tolerance's Redis %s%s: Service %s/%s", host,
    port and (":" .. port) or "", ns, name)
  local svc = v.get("v1/services", ns, name)
  if svc == nil then return what .. " not found" end
  if (svc.spec or {}).type == "ExternalName" then return nil end
  if port ~= nil then
    local has = false
    for _, p in ipairs((svc.spec or {}).ports or {}) do
      if p.port == port then has = true end
    end
    if not has then return string.format("%s has no port %d", what, port) end
  end
  local ep = v.get("v1/endpoints", ns, name)
  for _, s in ipairs(ep and ep.subsets or {}) do
    if #(s.addresses or {}) > 0 then return nil end
  end
  return what .. " has no ready endpoint"
end

-- KubeRay's Redis cleanup Job, from the head pod as built.
function M.cleanup_job(rc, head_pod)
  local pod = v.deepcopy(head_pod)
  pod.metadata.labels["ray.io/node-type"] = M.CLEANUP_TYPE
  local ray = pod.spec.containers[1]
  pod.spec.containers = v.array({ ray })
  local inits = v.array()
  for _, c in ipairs(pod.spec.initContainers or {}) do
    if c.name ~= "wait-for-tls-ip-san" then inits[#inits + 1] = c end
  end
  pod.spec.initContainers = #inits > 0 and inits or nil
  local user = has_env(ray, "REDIS_USERNAME")
  ray.command = v.array({ "/bin/bash", "-c", "--" })
  ray.args = v.array({
    "echo \"To get more information about manually deleting the storage namespace in Redis and removing the " ..
    "RayCluster's finalizer, please check https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html " ..
    "for more details.\" && python -c \"from ray._private.gcs_utils import cleanup_redis_storage; " ..
    "from urllib.parse import urlparse; import os; import sys; " ..
    "redis_address = os.getenv('RAY_REDIS_ADDRESS', '').split(',')[0]; " ..
    "redis_address = redis_address if '://' in redis_address else 'redis://' + redis_address; " ..
    "parsed = urlparse(redis_address); " ..
    "sys.exit(1) if not cleanup_redis_storage(host=parsed.hostname, port=parsed.port, " ..
    (user and "username=os.getenv('REDIS_USERNAME', parsed.username), " or "") ..
    "password=os.getenv('REDIS_PASSWORD', parsed.password or ''), use_ssl=parsed.scheme=='rediss', " ..
    "storage_namespace=os.getenv('RAY_external_storage_namespace')) else None\"" })
  ray.livenessProbe, ray.readinessProbe = nil, nil
  add_env(ray, { name = "RAY_redis_db_connect_retries", value = "120" })
  add_env(ray, { name = "RAY_redis_db_connect_wait_milliseconds", value = "500" })
  ray.resources = { limits = { cpu = "200m", memory = "256Mi" }, requests = { cpu = "200m", memory = "256Mi" } }
  pod.spec.restartPolicy = "Never"
  local name = rc.metadata.name .. "-redis-cleanup"
  if #name > 63 then name = name:sub(#name - 62):gsub("^[^%a]+", "") end
  pod.metadata.generateName = nil
  return {
    apiVersion = "batch/v1", kind = "Job",
    metadata = { name = name, namespace = rc.metadata.namespace, labels = v.deepcopy(pod.metadata.labels),
      annotations = v.deepcopy(pod.metadata.annotations),
      ownerReferences = v.array({ v.owner_ref(rc) }) },
    spec = { backoffLimit = 0, activeDeadlineSeconds = 300,
      template = { metadata = { labels = pod.metadata.labels, annotations = pod.metadata.annotations },
        spec = pod.spec } },
  }
end

return M
