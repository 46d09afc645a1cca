-- The liveness and readiness probes KubeRay 1.7 gives a Ray container
-- that has none (ray-operator/controllers/ray/common/pod.go,
-- initLivenessAndReadinessProbe): before Ray 2.53 an exec of wget against
-- the dashboard agent's /api/local_raylet_healthz (and, on a head, the
-- dashboard's /api/gcs_healthz), from 2.53 an httpGet of the agent's
-- /api/healthz; a RayService's worker also checks its Serve proxy's
-- /-/healthz for readiness. Same delays, timeouts and thresholds as
-- KubeRay (utils/constant.go), so a pod is Ready when real Ray is.
local M = {}

local WGET = "wget --tries 1 -T %d -q -O- http://localhost:%d/%s | grep success"
local READINESS = { initialDelaySeconds = 10, timeoutSeconds = 2, periodSeconds = 5,
  successThreshold = 1, failureThreshold = 10 }
local LIVENESS = { initialDelaySeconds = 30, timeoutSeconds = 2, periodSeconds = 5,
  successThreshold = 1, failureThreshold = 120 }
local HEAD_TIMEOUT = 5
local SERVE_FAILURE_THRESHOLD = 1

local function port(params, key, default)
  local n = math.tointeger(tonumber(params[key] or ""))
  return n or default
end

-- Whether version (e.g. "2.53.0") is at least 2.53.0; false when it does
-- not parse, as KubeRay's version.ParseGeneric fails.
local function unified(version)
  local a, b, c = tostring(version or ""):match("^v?(%d+)%.(%d+)%.?(%d*)")
  if a == nil then return false end
  a, b = tonumber(a), tonumber(b)
  return a > 2 or (a == 2 and b >= 53)
end

local function container_port(container, name, default)
  for _, p in ipairs(container.ports or {}) do
    if p.name == name and p.containerPort then return p.containerPort end
  end
  return default
end

local function probe(base, timeout, action)
  local p = {}
  for k, x in pairs(base) do p[k] = x end
  p.timeoutSeconds = timeout
  for k, x in pairs(action) do p[k] = x end
  return p
end

-- Fill container's missing probes; params are the pod's rayStartParams
-- (strings), creator "RayCluster", "RayJob" or "RayService".
function M.add(container, node_type, params, creator, version)
  local agent = port(params, "dashboard-agent-listen-port", 52365)
  local raylet = string.format(WGET, READINESS.timeoutSeconds, agent, "api/local_raylet_healthz")
  local cmds = { raylet }
  if node_type == "head" then
    -- KubeRay passes the failure threshold (10) as this wget's timeout.
    cmds[2] = string.format(WGET, READINESS.failureThreshold,
      port(params, "dashboard-port", 8265), "api/gcs_healthz")
  end
  local action
  if unified(version) then
    action = { httpGet = { path = "/api/healthz", port = agent } }
  else
    action = { exec = { command = volray.array({ "bash", "-c", table.concat(cmds, " && ") }) } }
  end
  if container.livenessProbe == nil then
    container.livenessProbe = probe(LIVENESS,
      node_type == "head" and HEAD_TIMEOUT or LIVENESS.timeoutSeconds, action)
  end
  if container.readinessProbe == nil then
    local r = probe(READINESS,
      node_type == "head" and HEAD_TIMEOUT or READINESS.timeoutSeconds, action)
    if creator == "RayService" and node_type ~= "head" then
      cmds[#cmds + 1] = string.format(WGET, READINESS.initialDelaySeconds,
        container_port(container, "serve", 8000), "-/healthz")
      r.failureThreshold = SERVE_FAILURE_THRESHOLD
      r.httpGet = nil
      r.exec = { command = volray.array({ "bash", "-c", table.concat(cmds, " && ") }) }
    end
    container.readinessProbe = r
  end
end

return M
