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

-- Base URL of a cluster's dashboard: service name and dashboard port.
function M.base(namespace, service, port)
  if v.service_url == nil then return nil, "volray.service_url is not available" end
  return v.service_url(namespace, service, tostring(port))
end

local function call(method, url, body)
  if v.http == nil then return { error = "volray.http is not available" } end
  local text = body ~= nil and canon.encode(body) or nil
  local headers = text and { ["Content-Type"] = "application/json" } or nil
  local resp, err = v.http({ method = method, url = url, body = text, headers = headers, timeout = 10 })
  if resp == nil then
    if err == "pending" then return { pending = true } end
    return { error = tostring(err) }
  end
  return { status = resp.status, json = resp.json, body = resp.body }
end

-- GET /api/jobs/<id>: a Ray JobDetails table in .json on 200.
function M.job_info(base, id)
  return call("GET", base .. "/api/jobs/" .. id)
end

-- POST /api/jobs/ with the submission id chosen by the controller.
function M.submit(base, req)
  return call("POST", base .. "/api/jobs/", req)
end

function M.stop(base, id)
  return call("POST", base .. "/api/jobs/" .. id .. "/stop")
end

-- PUT /api/serve/applications/ with a Serve config (decoded YAML).
function M.put_serve(base, config)
  return call("PUT", base .. "/api/serve/applications/", config)
end

-- GET /api/volray/autoscaler: the head's nodes, their use and idle time,
-- and the bundles that wait (rayautoscaler.lua).
function M.autoscaler_state(base)
  return call("GET", base .. "/api/volray/autoscaler")
end

function M.get_serve(base)
  return call("GET", base .. "/api/serve/applications/")
end

-- A Ray time in ms since the epoch as RFC 3339 (nil for none).
function M.time_ms(ms)
  if type(ms) ~= "number" or ms <= 0 then return nil end
  return v.format_time(ms // 1000)
end

return M
