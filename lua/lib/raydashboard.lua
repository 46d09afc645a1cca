-- The Ray dashboard's HTTP API as the KubeRay controllers use it: the
-- Jobs API (submit, status, stop) and the Serve applications API, reached
-- through the head Service's dashboard port (volray.service_url, the API
-- server's service proxy). Calls go through volray.http and never block:
-- each returns "pending" until the answer is in, and the caller's key is
-- reconciled again when it arrives. Results are tables:
--   { pending = true }         the request is in flight
--   { status = 200, json = t } an answer (json decoded when it is JSON)
--   { error = "text" }         no answer: connection refused, timeout
local v = volray
local canon = require("canon")
local M = {}

M.TERMINAL = { STOPPED = true, SUCCEEDED = true, FAILED = true }

local function present(x) return x ~= nil and x ~= v.null end

-- Standard base64 to a string (a Secret's data); nil when bad.
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function unbase64(s)
  if type(s) ~= "string" then return nil end
  s = s:gsub("%s", ""):gsub("=+$", "")
  local bits, out = {}, {}
  for i = 1, #s do
    local n = B64:find(s:sub(i, i), 1, true)
    if n == nil then return nil end
    bits[#bits + 1] = n - 1
  end
  for i = 1, #bits, 4 do
    local a, b, c, d = bits[i], bits[i + 1] or 0, bits[i + 2], bits[i + 3]
    local x = a << 18 | b << 12 | (c or 0) << 6 | (d or 0)
    out[#out + 1] = string.char(x >> 16 & 255)
    if c then out[#out + 1] = string.char(x >> 8 & 255) end
    if d then out[#out + 1] = string.char(x & 255) end
  end
  return table.concat(out)
end

-- A cluster's Ray token (token authentication), from its Secret; nil
-- when it has none or the Secret is not there yet.
function M.token(rc)
  local spec = rc and rc.spec or {}
  local o = spec.authOptions
  if not present(o) or o.mode ~= "token" or o.enableK8sTokenAuth == true then return nil end
  local name = (present(o.secretName) and o.secretName ~= "") and o.secretName or rc.metadata.name
  local sec = v.get("v1/secrets", rc.metadata.namespace, name)
  return sec and sec.data and unbase64(sec.data.auth_token) or nil
end

-- Where a cluster's dashboard is: the service's proxy URL and dashboard
-- port, and with rc its Ray token, sent as KubeRay's dashboard client
-- sends it through a proxy (X-Ray-Authorization). Pass it to the calls
-- below.
--
-- Against an API server that is not volrayd (kube-apiserver), whose
-- service proxy dials the head pod's IP, a head on one of volray's nodes
-- (labelled volray.io/runtime: simulated, or an agent's local node) is
-- reached through the API server's node proxy to the agent's endpoint
-- instead (volray.pod_url; the head's own dashboard port).
local function head_url(namespace, port, rc)
  if v.pod_url == nil or rc == nil then return nil end
  local head = rc.status and rc.status.head
  local name = head and present(head.podName) and head.podName or nil
  if name == nil then return nil end
  local pod = v.get("v1/pods", namespace, name)
  local node = pod and pod.spec and pod.spec.nodeName
  if not present(node) or node == "" then return nil end
  local n = v.get("v1/nodes", nil, node)
  local labels = n and n.metadata and n.metadata.labels
  if not (labels and present(labels["volray.io/runtime"])) then return nil end
  return v.pod_url(namespace, name, tonumber(port) or 0, node)
end

function M.base(namespace, service, port, rc)
  if v.service_url == nil then return nil, "volray.service_url is not available" end
  local url = head_url(namespace, port, rc) or v.service_url(namespace, service, tostring(port))
  return { url = url, token = M.token(rc) }
end

local function call(method, base, path, body)
  if v.http == nil then return { error = "volray.http is not available" } end
  local text = body ~= nil and canon.encode(body) or nil
  local headers = {}
  if text then headers["Content-Type"] = "application/json" end
  if base.token then headers["X-Ray-Authorization"] = "Bearer " .. base.token end
  local url = base.url .. path
  local resp, err = v.http({ method = method, url = url, body = text, headers = headers, timeout = 10 })
  if resp == nil then
    if err == "pending" then return { pending = true } end
    return { error = tostring(err) }
  end
  return { status = resp.status, json = resp.json, body = resp.body }
end

-- GET /api/jobs/<id>: a Ray JobDetails table in .json on 200.
function M.job_info(base, id)
  return call("GET", base, "/api/jobs/" .. id)
end

-- POST /api/jobs/ with the submission id chosen by the controller.
function M.submit(base, req)
  return call("POST", base, "/api/jobs/", req)
end

function M.stop(base, id)
  return call("POST", base, "/api/jobs/" .. id .. "/stop")
end

-- PUT /api/serve/applications/ with a Serve config (decoded YAML).
function M.put_serve(base, config)
  return call("PUT", base, "/api/serve/applications/", config)
end

-- GET /api/volray/autoscaler: the head's nodes, their use and idle time,
-- and the bundles that wait (rayautoscaler.lua).
function M.autoscaler_state(base)
  return call("GET", base, "/api/volray/autoscaler")
end

function M.get_serve(base)
  return call("GET", base, "/api/serve/applications/")
end

-- A Ray time in ms since the epoch as RFC 3339 (nil for none).
function M.time_ms(ms)
  if type(ms) ~= "number" or ms <= 0 then return nil end
  return v.format_time(ms // 1000)
end

return M
