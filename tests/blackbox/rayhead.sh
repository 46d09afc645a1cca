#!/bin/sh
# Ray without Ray: a head pod (label ray.io/node-type=head) and a Service
# selecting it serve Ray's Jobs API through the API server's service and
# pod proxies. On a virtual node jobs are simulated from their metadata
# (PENDING/RUNNING -> SUCCEEDED, FAILED with Ray's message, STOPPED);
# unknown ids are 404, duplicate submission ids and bad JSON 400; the
# Serve API deploys then runs; a deleted head fails its jobs. On the local
# node the entrypoint is a real process with RAY_JOB_SUBMISSION_ID and the
# runtime_env's env_vars, its output in the job's logs, the dashboard also
# on 127.0.0.1:PORT in plain HTTP, and the `ray` command inside a pod
# reaches the head by its service DNS name with the pod's own
# least-privilege identity. The proxies want credentials (401) and
# services/proxy (403). A Lua controller reaches the head with
# volray.http and volray.service_url. Job state survives a restart.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
cat >"$WORK/tokens.csv" <<'EOF'
nobody-token,nobody,1001,
EOF
POL="$WORK/policies"
mkdir -p "$POL/controllers"
cat >"$POL/controllers/raytest.lua" <<'LUA'
-- Test controller: submits a Ray job to the head Service a ConfigMap
-- names, through volray.http and volray.service_url, and writes what the
-- Jobs API answered back into the ConfigMap.
local v = volray
local c = { primary = "v1/configmaps" }
local function put(req, data)
  v.patch("v1/configmaps", req.namespace, req.name, { data = data })
end
function c.reconcile(req)
  local cm = v.get("v1/configmaps", req.namespace, req.name)
  local d = cm and cm.data
  if d ~= nil and d.url ~= nil and d.final == nil then
    -- Any URL: the answer or the error, as volray.http gives them.
    local resp, err = v.http{ url = d.url, timeout = tonumber(d.timeout),
      headers = { ["X-Test"] = "yes" } }
    if resp == nil and err == "pending" then return nil end
    put(req, { final = resp and (tostring(resp.status) .. " " .. resp.body)
      or ("error: " .. err) })
    return nil
  end
  if d == nil or d.svc == nil or d.final ~= nil then return nil end
  local base = v.service_url(req.namespace, d.svc, d.port)
  if d.submitted == nil then
    local resp, err = v.http{ method = "POST", url = base .. "/api/jobs/",
      body = { entrypoint = "echo from-lua", submission_id = d.id,
        metadata = { ["volray.io/sim-duration"] = "200ms" } } }
    if resp == nil then
      if err == "pending" then return nil end
      put(req, { final = "error: " .. err })
      return nil
    end
    put(req, { submitted = tostring(resp.status), base = base,
      answer = resp.json and resp.json.submission_id or resp.body })
    return nil
  end
  local resp, err = v.http{ url = base .. "/api/jobs/" .. d.id }
  if resp == nil then
    if err == "pending" then return nil end
    put(req, { final = "error: " .. err })
    return nil
  end
  local st = resp.json and resp.json.status or ("no json: " .. resp.body)
  if st == "SUCCEEDED" or st == "FAILED" then
    put(req, { final = st })
    return nil
  end
  return { requeue_after = 0.1 }
end
return c
LUA
start_daemon --token-auth-file "$WORK/tokens.csv" --policy-dir "$POL"
NODE=$(hostname | tr 'A-Z' 'a-z')
"$top_builddir/volray" node add --virtual --count 1 --cpu 8 --memory 16Gi \
	--name-prefix rv >/dev/null || fail "volray node add"
k wait --for=condition=Ready node/rv-0 --timeout=10s >/dev/null || fail "virtual node not Ready"

# head NAME NODE SVC DASHPORT [ANNOTATIONS]: a head pod by hand and its Service.
head() {
	k apply -f - >/dev/null <<YAML || fail "head $1"
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {ray.io/node-type: head, ray.io/cluster: $1}
  annotations: {${5:-}}
spec:
  nodeName: $2
  containers:
  - name: ray-head
    image: rayproject/ray:2.46.0
    command: [/bin/sh, -c, "ray start --head --dashboard-host=0.0.0.0 --dashboard-port=$4 --block"]
    ports: [{name: dashboard, containerPort: $4}, {name: gcs, containerPort: 6379}]
---
apiVersion: v1
kind: Service
metadata: {name: $3}
spec:
  selector: {ray.io/node-type: head, ray.io/cluster: $1}
  ports: [{name: dashboard, port: 8265, targetPort: dashboard}]
YAML
	k wait --for=jsonpath='{.status.phase}'=Running "pod/$1" --timeout=15s >/dev/null ||
		fail "head $1 not Running"
}
# field JSON EXPR: a value out of JSON on stdin (d is the document).
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
status() { curl -fs "$1/api/jobs/$2" | field 'd["status"]'; }
# code URL [curl args]: the HTTP status of a request.
code() { u=$1; shift; curl -s -o "$WORK/body" -w '%{http_code}' "$@" "$u"; }
submit() { # BASE JSON
	curl -fs -X POST -H 'Content-Type: application/json' -d "$2" "$1/api/jobs/"
}

head vhead rv-0 vhead-svc 8265 'volray.io/sim-serve-duration: 300ms'
V="$API/api/v1/namespaces/default/services/vhead-svc:8265/proxy"

out=$(submit "$V" '{"entrypoint": "python ok.py", "submission_id": "v-ok",
    "metadata": {"volray.io/sim-duration": "2s"}, "runtime_env": {"env_vars": {"A": "1"}}}') ||
	fail "submit v-ok"
expect_eq "v-ok v-ok" "$(printf "%s\n" "$out" | field 'd["submission_id"] + " " + d["job_id"]')" "submit answer"
st=$(status "$V" v-ok)
case $st in PENDING|RUNNING) ;; *) fail "v-ok right after submit: $st" ;; esac
# Not polled for RUNNING (a loaded machine may miss the window): it
# ran, for its 2 s, if its times say so.
wait_eq SUCCEEDED "v-ok succeeded" status "$V" v-ok
d=$(curl -fs "$V/api/jobs/v-ok")
expect_eq True "$(printf "%s\n" "$d" | field 'd["end_time"] - d["start_time"] >= 1900')" \
	"v-ok ran for its volray.io/sim-duration (start_time to end_time, ms)"
expect_eq "SUBMISSION python ok.py Job finished successfully. 0 True" \
	"$(printf "%s\n" "$d" | field '" ".join(str(x) for x in [d["type"], d["entrypoint"], d["message"], d["driver_exit_code"], d["end_time"] >= d["start_time"] > 0])')" \
	"JobDetails of a simulated success"
expect_eq 1 "$(printf "%s\n" "$d" | field 'd["runtime_env"]["env_vars"]["A"]')" "runtime_env kept"
pass "virtual head: submit through the service proxy, PENDING/RUNNING -> SUCCEEDED after volray.io/sim-duration"

submit "$V" '{"entrypoint": "python bad.py", "submission_id": "v-bad",
    "metadata": {"volray.io/sim-duration": "100ms", "volray.io/sim-exit-code": "3"}}' >/dev/null ||
	fail "submit v-bad"
wait_eq FAILED "v-bad failed" status "$V" v-bad
d=$(curl -fs "$V/api/jobs/v-bad")
expect_contains "$(printf "%s\n" "$d" | field 'd["message"]')" "Job entrypoint command failed with exit code 3" "FAILED message"
expect_eq JOB_ENTRYPOINT_COMMAND_ERROR "$(printf "%s\n" "$d" | field 'd["error_type"]')" "error_type"
pass "volray.io/sim-exit-code 3 -> FAILED with Ray's message"

submit "$V" '{"entrypoint": "sleep forever", "submission_id": "v-long"}' >/dev/null || fail "submit v-long"
wait_eq RUNNING "v-long running" status "$V" v-long
expect_eq True "$(curl -fs -X POST "$V/api/jobs/v-long/stop" | field 'd["stopped"]')" "stop answer"
wait_eq STOPPED "v-long stopped" status "$V" v-long
expect_eq False "$(curl -fs -X POST "$V/api/jobs/v-long/stop" | field 'd["stopped"]')" "stopping a stopped job"
pass "no sim-duration runs until stopped; stop -> STOPPED"

expect_eq 404 "$(code "$V/api/jobs/nope")" "unknown id"
expect_eq "Job nope does not exist" "$(cat "$WORK/body")" "unknown id body"
expect_eq 404 "$(code "$V/api/jobs/nope/logs")" "logs of an unknown id"
expect_eq 404 "$(code "$V/api/jobs/nope/stop" -X POST)" "stop of an unknown id"
expect_eq 400 "$(code "$V/api/jobs/" -X POST -d '{"entrypoint": "x", "submission_id": "v-ok"}')" "duplicate"
expect_contains "$(cat "$WORK/body")" "Job with submission_id v-ok already exists" "duplicate body"
expect_eq SUCCEEDED "$(status "$V" v-ok)" "the duplicate changed nothing"
expect_eq 400 "$(code "$V/api/jobs/" -X POST -d '{"entrypoint": ')" "bad JSON"
expect_eq 400 "$(code "$V/api/jobs/" -X POST -d '{"submission_id": "x"}')" "no entrypoint"
expect_contains "$(cat "$WORK/body")" "entrypoint" "no entrypoint body"
expect_eq 400 "$(code "$V/api/jobs/" -X POST -d '{"entrypoint": "x", "metadata": {"k": 1}}')" "metadata not strings"
expect_eq 3 "$(curl -fs "$V/api/jobs/" | field 'len(d)')" "refused submissions add nothing"
pass "404 for unknown ids; duplicate submission_id, bad JSON and bad fields 400, nothing changed"

expect_contains "$(curl -fs "$V/api/jobs/v-ok/logs" | field 'd["logs"]')" "python ok.py" "simulated logs"
expect_eq "v-ok v-bad v-long" "$(curl -fs "$V/api/jobs/" | field '" ".join(j["submission_id"] for j in d)')" "list"

expect_eq True "$(curl -fs -X DELETE "$V/api/jobs/v-bad" | field 'd["deleted"]')" "delete a terminal job"
expect_eq 404 "$(code "$V/api/jobs/v-bad")" "deleted job"
expect_contains "$(curl -fs "$V/api/version" | field 'd["ray_version"]')" "2." "version"
pass "logs, list, delete, version"

# The pod proxy and kube-apiserver's answers for targets nobody serves.
PV="$API/api/v1/namespaces/default/pods/vhead:8265/proxy"
expect_eq SUCCEEDED "$(status "$PV" v-ok)" "pods/proxy"
expect_eq SUCCEEDED "$(status "$API/api/v1/namespaces/default/services/http:vhead-svc:dashboard/proxy" v-ok)" \
	"scheme:name:portname"
expect_eq SUCCEEDED "$(status "$API/api/v1/namespaces/default/services/vhead-svc/proxy" v-ok)" "the name alone"
expect_eq 503 "$(code "$API/api/v1/namespaces/default/pods/vhead:6379/proxy/api/jobs/")" "a port the head does not serve"
expect_eq 404 "$(code "$API/api/v1/namespaces/default/services/nosuch:8265/proxy/api/jobs/")" "no such service"
k create service clusterip nohead --tcp=8265:8265 >/dev/null
expect_eq 503 "$(code "$API/api/v1/namespaces/default/services/nohead:8265/proxy/api/jobs/")" "no endpoints"
expect_contains "$(cat "$WORK/body")" 'no endpoints available for service \"nohead\"' "no endpoints message"
pass "pods/proxy; 404 for no such service; 503 for no endpoints or a port nobody serves"

# Serve: DEPLOYING for the head's volray.io/sim-serve-duration, then RUNNING.
apps='{"applications": [{"name": "fruit", "route_prefix": "/fruit", "import_path": "fruit:app",
  "deployments": [{"name": "MangoStand", "num_replicas": 2}]}]}'
expect_eq 200 "$(code "$V/api/serve/applications/" -X PUT -H 'Content-Type: application/json' -d "$apps")" "serve PUT"
serve_status() { curl -fs "$V/api/serve/applications/" | field 'd["applications"]["fruit"]["status"] + " " + d["applications"]["fruit"]["deployments"]["MangoStand"]["status"]'; }
expect_eq "DEPLOYING UPDATING" "$(serve_status)" "serve right after PUT"
wait_eq "RUNNING HEALTHY" "serve app running" serve_status
expect_eq 400 "$(code "$V/api/serve/applications/" -X PUT -d '{"applications": [{"name": "x"}]}')" "serve without import_path"
expect_eq "RUNNING HEALTHY" "$(serve_status)" "a refused PUT changes nothing"
expect_eq 200 "$(code "$V/api/serve/applications/" -X DELETE)" "serve DELETE"
expect_eq 0 "$(curl -fs "$V/api/serve/applications/" | field 'len(d["applications"])')" "serve apps deleted"
pass "Serve REST API: PUT -> DEPLOYING -> RUNNING, bad config 400, DELETE"

# Authentication and authorization of the proxy.
expect_eq 401 "$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" -H 'Authorization: Bearer wrong' "$V/api/jobs/")" "bad token"
expect_eq 401 "$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" "$V/api/jobs/")" "no token"
expect_eq 403 "$(command curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$CA" -H 'Authorization: Bearer nobody-token' "$V/api/jobs/")" \
	"a user without services/proxy"
expect_contains "$(cat "$WORK/body")" 'cannot get resource \"services/proxy\"' "403 message"
k create role proxy --verb=get --resource=services/proxy >/dev/null
k create rolebinding nobody-proxy --role=proxy --user=nobody >/dev/null
wait_eq 200 "get with services/proxy" command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	-H 'Authorization: Bearer nobody-token' "$V/api/jobs/"
expect_eq 403 "$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" -H 'Authorization: Bearer nobody-token' \
	-X POST -d '{"entrypoint": "x"}' "$V/api/jobs/")" "POST needs create"
pass "the proxy: 401 without credentials, 403 without services/proxy, get and create apart"

# A Lua controller: volray.http + volray.service_url, as its own user.
k create clusterrole raytest --verb=get,list,watch,patch --resource=configmaps >/dev/null
k create clusterrole raytest-proxy --verb=get,create --resource=services/proxy >/dev/null
k create clusterrolebinding raytest --clusterrole=raytest --user=system:controller:raytest-controller >/dev/null
k create configmap lua-denied --from-literal=svc=vhead-svc --from-literal=port=8265 --from-literal=id=lua-denied >/dev/null
k wait --for=jsonpath='{.data.submitted}'=403 cm/lua-denied --timeout=10s >/dev/null ||
	fail "a controller without services/proxy: $(k get cm lua-denied -o jsonpath='{.data}')"
k create clusterrolebinding raytest-proxy --clusterrole=raytest-proxy --user=system:controller:raytest-controller >/dev/null
k create configmap lua-job --from-literal=svc=vhead-svc --from-literal=port=8265 --from-literal=id=lua-1 >/dev/null
k wait --for=jsonpath='{.data.final}'=SUCCEEDED cm/lua-job --timeout=15s >/dev/null ||
	fail "Lua controller: $(k get cm lua-job -o jsonpath='{.data}')"
expect_eq "200 lua-1" "$(k get cm lua-job -o jsonpath='{.data.submitted} {.data.answer}')" "Lua submit answer"
expect_eq "$API/api/v1/namespaces/default/services/vhead-svc:8265/proxy" \
	"$(k get cm lua-job -o jsonpath='{.data.base}')" "volray.service_url"
expect_eq SUCCEEDED "$(status "$V" lua-1)" "the job the controller submitted"
pass "a Lua controller submits and follows a Ray job with volray.http through the service proxy, as its own user"

# Elsewhere volray.http sends only what the script gives; errors and
# timeouts come back as nil and libcurl's text.
HPORT=$(free_port)
python3 - "$HPORT" >"$WORK/http.log" 2>&1 <<'PY' &
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/slow":
            time.sleep(30)
        body = ("auth=%s x-test=%s" % (self.headers.get("Authorization"), self.headers.get("X-Test"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
HPID=$!
i=0
until command curl -fs "http://127.0.0.1:$HPORT/" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "test HTTP server did not start"; sleep 0.05
done
k create configmap lua-foreign --from-literal=url="http://127.0.0.1:$HPORT/x" >/dev/null
k create configmap lua-refused --from-literal=url="http://127.0.0.1:1/" >/dev/null
k create configmap lua-slow --from-literal=url="http://127.0.0.1:$HPORT/slow" --from-literal=timeout=0.5 >/dev/null
# (values with spaces: kubectl wait --for=jsonpath cannot compare them)
wait_eq "200 auth=None x-test=yes" "volray.http elsewhere" k get cm lua-foreign -o jsonpath='{.data.final}'
wait_eq "error: Couldn't connect to server" "volray.http refused" k get cm lua-refused -o jsonpath='{.data.final}'
wait_eq "error: Timeout was reached" "volray.http timeout" k get cm lua-slow -o jsonpath='{.data.final}'
kill $HPID 2>/dev/null || true
pass "volray.http elsewhere: only the script's headers (no token), connection errors and timeouts as nil, text"

# A deleted head fails its unfinished jobs (the head's saved job table).
submit "$V" '{"entrypoint": "sleep", "submission_id": "v-orphan"}' >/dev/null || fail "submit v-orphan"
wait_eq RUNNING "v-orphan running" status "$V" v-orphan
expect_eq 400 "$(code "$V/api/jobs/v-orphan" -X DELETE)" "deleting a running job"
expect_contains "$(cat "$WORK/body")" "non-terminal state RUNNING" "deleting a running job: why"
k delete pod vhead --wait=true >/dev/null
wait_eq 503 "no dashboard once the head is gone" code "$V/api/jobs/"
# The head's journal: one line per change of a job, the last one wins.
last() { # ID: the last record of a job of vhead
	python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][1:]; j=[x for x in r if x["submission_id"] == sys.argv[2]][-1]; print(j["status"], j["error_type"])' \
		"$DATA/pods/default/vhead/ray-jobs.jsonl" "$1"
}
expect_eq "FAILED JOB_SUPERVISOR_ACTOR_DIED" "$(last v-orphan)" "a running job of the deleted head"
expect_eq "SUCCEEDED None" "$(last v-ok)" "a finished job of the deleted head"
pass "deleting the head pod fails its running jobs; its dashboard is gone (503)"

# The local node: real processes, the 127.0.0.1 listener, the ray command.
DPORT=$(free_port)
head lhead "$NODE" lhead-svc "$DPORT"
L="$API/api/v1/namespaces/default/services/lhead-svc:8265/proxy"
submit "$L" '{"entrypoint": "echo hello from $RAY_JOB_SUBMISSION_ID; echo FOO=$FOO; pwd",
    "submission_id": "l-ok", "runtime_env": {"env_vars": {"FOO": "bar"}}}' >/dev/null || fail "submit l-ok"
wait_eq SUCCEEDED "l-ok succeeded" status "$L" l-ok
logs=$(curl -fs "$L/api/jobs/l-ok/logs" | field 'd["logs"]')
expect_contains "$logs" "hello from l-ok" "the entrypoint's output"
expect_contains "$logs" "FOO=bar" "runtime_env env_vars"
expect_contains "$logs" "$DATA/pods/default/lhead/root" "run in the head pod's directory"
submit "$L" '{"entrypoint": "echo oops >&2; exit 7", "submission_id": "l-bad"}' >/dev/null
wait_eq FAILED "l-bad failed" status "$L" l-bad
expect_contains "$(curl -fs "$L/api/jobs/l-bad" | field 'd["message"]')" \
	"Job entrypoint command failed with exit code 7, last available logs (truncated to 20,000 chars):
oops" "local FAILED message"
submit "$L" '{"entrypoint": "echo started; exec sleep 60", "submission_id": "l-long"}' >/dev/null
wait_eq RUNNING "l-long running" status "$L" l-long
curl -fs -X POST "$L/api/jobs/l-long/stop" >/dev/null
wait_eq STOPPED "l-long stopped" status "$L" l-long
pgrep -f "exec sleep 60" >/dev/null && fail "the stopped entrypoint still runs"
pass "local head: real entrypoints (output, env_vars, pod dir), exit 7 -> FAILED with the logs, stop -> STOPPED"

expect_eq SUCCEEDED "$(command curl -fs "http://127.0.0.1:$DPORT/api/jobs/l-ok" | field 'd["status"]')" \
	"plain HTTP on 127.0.0.1:$DPORT"
head lhead2 "$NODE" lhead2-svc "$DPORT"
grep -q "lhead2: cannot serve the dashboard on 127.0.0.1:$DPORT" "$WORK/volrayd.log" ||
	fail "no warning for the port clash"
curl -fs "$API/readyz" >/dev/null || fail "daemon down after a port clash"
expect_eq 0 "$(curl -fs "$API/api/v1/namespaces/default/services/lhead2-svc:8265/proxy/api/jobs/" | field 'len(d)')" \
	"a clashing head still answers through the proxy"
pass "a local head also listens on 127.0.0.1:PORT in plain HTTP; a port clash is a warning"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: submitter}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: ray-job-submitter
    image: rayproject/ray:2.46.0
    command: [/bin/sh, -c]
    args:
    - |
      ray job submit --address http://lhead-svc.default.svc.cluster.local:8265 --submission-id cli-1 -- echo hi from the cli
      echo submit-rc=\$?
      ray job logs --address http://lhead-svc.default.svc.cluster.local:8265 --follow cli-1
      ray job submit --address http://lhead-svc.default.svc.cluster.local:8265 --no-wait -- sh -c 'exit 4'
      RAY_DASHBOARD_ADDRESS=lhead-svc.default.svc:8265 ray job status cli-1
      RAY_ADDRESS=lhead-svc.default.svc.cluster.local:6379 ray job status cli-1 | grep -q "Job 'cli-1' succeeded" && echo gcs-address-ok
      ray job status --address http://lhead-svc:8265 nope; echo status-rc=\$?
      ray job submit --address http://lhead-svc:8265 -- false; echo fail-rc=\$?
      ray health-check --address lhead-svc.default.svc.cluster.local:6379 && echo health-up
      ray health-check --address nosuch.default.svc.cluster.local:6379 || echo health-down
      mkdir -p wd && echo working-dir-file > wd/f.txt
      ray job submit --address http://lhead-svc:8265 --working-dir wd -- cat f.txt
      echo "token=\$VOLRAY_TOKEN"
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/submitter --timeout=30s >/dev/null ||
	fail "submitter pod: $(k logs submitter 2>&1)"
logs=$(k logs submitter)
expect_contains "$logs" "Job 'cli-1' submitted successfully" "ray job submit line"
expect_contains "$logs" "hi from the cli" "the job's output followed"
expect_contains "$logs" "Job 'cli-1' succeeded" "ray job submit success line"
expect_contains "$logs" "submit-rc=0" "submit exit code"
expect_contains "$logs" "Job 'raysubmit_" "a generated submission id"
expect_contains "$logs" "status-rc=1" "status of an unknown job exits 1"
expect_contains "$logs" "gcs-address-ok" "RAY_ADDRESS naming the GCS port means the dashboard"
expect_contains "$logs" "failed with exit code 1" "a failing entrypoint"
expect_contains "$logs" "fail-rc=1" "submit of a failing job exits 1"
expect_contains "$logs" "working-dir-file" "--working-dir: the job runs in that directory"
expect_contains "$logs" "health-up" "ray health-check of a running head"
expect_contains "$logs" "health-down" "ray health-check of no head"
expect_eq SUCCEEDED "$(status "$L" cli-1)" "the job the ray command submitted"
pass "ray inside a local pod: submit (followed), logs --follow, status, exit codes; service DNS names reach the head"

# The pod's identity: services/proxy in its namespace, nothing more.
ptok=$(k logs submitter | sed -n 's/^token=//p')
[ -n "$ptok" ] && [ "$ptok" != "$TOKEN" ] || fail "the pod's token is missing or the admin's"
pcurl() { command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer $ptok" "$@"; }
expect_eq 200 "$(pcurl "$L/api/jobs/")" "the pod's identity reaches its namespace's head"
expect_eq 403 "$(pcurl "$API/api/v1/namespaces/default/pods")" "the pod's identity cannot list pods"
expect_eq 403 "$(pcurl "$API/api/v1/namespaces/kube-system/services/x:1/proxy/")" "nor proxy in other namespaces"
pass "local pods act as system:serviceaccount:NS:volray-ray, allowed services/proxy in NS only"

# Job state lives with the head pod and survives a restart of volrayd.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: vhead2, labels: {ray.io/node-type: head, ray.io/cluster: vhead2}}
spec:
  nodeName: rv-0
  containers: [{name: ray-head, image: rayproject/ray, ports: [{name: dashboard, containerPort: 8265}]}]
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/vhead2 --timeout=15s >/dev/null || fail "vhead2"
P2="$API/api/v1/namespaces/default/pods/vhead2:8265/proxy"
submit "$P2" '{"entrypoint": "a", "submission_id": "keep", "metadata": {"volray.io/sim-duration": "10ms"}}' >/dev/null
wait_eq SUCCEEDED "keep succeeded" status "$P2" keep
submit "$P2" '{"entrypoint": "b", "submission_id": "later", "metadata": {"volray.io/sim-duration": "3s"}}' >/dev/null
stop_daemon
start_daemon --token-auth-file "$WORK/tokens.csv" --policy-dir "$POL"
# A new port: the addresses again.
P2="$API/api/v1/namespaces/default/pods/vhead2:8265/proxy"
L="$API/api/v1/namespaces/default/services/lhead-svc:8265/proxy"
wait_eq SUCCEEDED "a finished job after a restart" status "$P2" keep
wait_eq SUCCEEDED "a simulated job goes on after a restart" status "$P2" later
expect_eq SUCCEEDED "$(status "$L" l-ok)" "a local head's finished job after a restart"
pass "job tables survive a restart of volrayd"

# A head whose node goes away fails its unfinished jobs.
submit "$P2" '{"entrypoint": "c", "submission_id": "v-node"}' >/dev/null
wait_eq RUNNING "v-node running" status "$P2" v-node
k delete node rv-0 >/dev/null
# The pod goes with its node (404) or stays unserved (503).
gone() { c=$(code "$1"); case $c in 404|503) echo gone ;; *) echo "$c" ;; esac; }
wait_eq gone "no dashboard once the head's node is gone" gone "$P2/api/jobs/"
expect_eq "FAILED JOB_SUPERVISOR_ACTOR_DIED" "$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][1:]; j=[x for x in r if x["submission_id"] == "v-node"][-1]; print(j["status"], j["error_type"], "lost its node" in j["message"])' \
	"$DATA/pods/default/vhead2/ray-jobs.jsonl" | cut -d' ' -f1-2)" "a job of a head whose node is gone"
pass "a head whose node is deleted fails its running jobs"
