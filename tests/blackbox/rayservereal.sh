#!/bin/sh
# Ray Serve for real on the local node (volrayd(8), "REAL RAY"): a
# RayService of KubeRay's sample's shape (serveConfigV2 with an
# application's import_path, route_prefix, deployments, num_replicas and
# ray_actor_options; a head and one worker of rayproject/ray:2.52.0) on
# Ray 2.52.0 with Serve. The RayService controller pushes the config to
# the head's real dashboard and reads Serve's real status: the RayService
# is Ready, and the app answers on port 8000 through <svc>-serve-svc by
# kubectl port-forward, from another pod by its DNS name (the Service's
# ClusterIP, nftables), and through the API server's service proxy. A
# change of rayClusterConfig (an env var of head and worker) brings up a
# new cluster; the Services switch to it once its app runs, with a
# request loop in a pod seeing no failed request, and the old cluster
# goes after rayClusterDeletionDelaySeconds (shortened to 5).
#
# What differs from the sample (ray-service.sample.yaml) and why: the
# sample's apps come from GitHub (a runtime_env working_dir zip URL),
# which this machine cannot reach; here a small app of its own is
# delivered as Kubernetes would deliver one without a registry: a
# ConfigMap mounted in the head and worker containers, on their
# PYTHONPATH. (Ray 2.52 also takes a working_dir of a file:// zip, which
# would have to be at that path in every Ray pod: a ConfigMap's
# binaryData mounted there; the mounted module on PYTHONPATH is the
# simpler of the two.) One application of one deployment (two replicas, at most
# one a node, 0.1 CPU each) rather than the sample's two of seven, and
# num-cpus 1 and a 100 MB object store a node, so that two clusters (4
# Ray nodes) fit this machine during the upgrade.
#
# Skips (77) without Ray 2.52.0 and Serve (scripts/ray.sh) or as
# non-root. Prints the apply-to-ready time and the requests served
# during the upgrade.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
REAL_RAY=1
RAY_DIR=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
[ -x "$RAY_DIR/2.52.0/bin/ray" ] ||
	skip "no Ray 2.52.0 in $RAY_DIR (scripts/ray.sh installs it)"
(cd / && "$RAY_DIR/2.52.0/bin/python" -c 'import ray.serve') >/dev/null 2>&1 ||
	skip "Ray 2.52.0 in $RAY_DIR has no Serve (scripts/ray.sh adds ray[serve])"
(cd / && "$RAY_DIR/2.52.0/bin/python" -c 'import google.protobuf as p, sys; sys.exit(int(p.__version__.split(".")[0]) >= 7)') ||
	skip "Ray 2.52.0 in $RAY_DIR has protobuf 7, whose FieldDescriptor Serve cannot read (scripts/ray.sh pins protobuf<7)"
[ "$(id -u)" = 0 ] || skip "not root: pods share the host's network, no Services"
start_daemon --ray-dir "$RAY_DIR"
NODE=$(hostname | tr 'A-Z' 'a-z')
svc=hello
sst() { k get rayservice $svc -o jsonpath="{.status.$1}"; }
URL="http://$svc-serve-svc.default.svc.cluster.local:8000/hello"

# The app: a Serve deployment answering its version (an env var of the
# cluster's pods) and the pod that served.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: hello-app}
data:
  hello.py: |
    import os
    from ray import serve

    @serve.deployment
    class Hello:
        def __init__(self):
            self.version = os.environ.get("APP_VERSION", "none")

        async def __call__(self, request):
            return "hello %s from %s\n" % (self.version, os.uname().nodename)

    app = Hello.bind()
YAML

# rayservice VERSION: the RayService, its pods' APP_VERSION set to VERSION.
rayservice() {
	cat <<YAML
apiVersion: ray.io/v1
kind: RayService
metadata: {name: $svc}
spec:
  rayClusterDeletionDelaySeconds: 5
  serveConfigV2: |
    applications:
      - name: hello_app
        import_path: hello.app
        route_prefix: /hello
        deployments:
          - name: Hello
            num_replicas: 2
            max_replicas_per_node: 1
            ray_actor_options:
              num_cpus: 0.1
  rayClusterConfig:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
      template:
        spec:
          nodeName: $NODE
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
            env:
            - {name: PYTHONPATH, value: /home/ray/serve-app}
            - {name: APP_VERSION, value: "$1"}
            volumeMounts: [{name: app, mountPath: /home/ray/serve-app}]
          volumes: [{name: app, configMap: {name: hello-app}}]
    workerGroupSpecs:
    - groupName: small-group
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
      template:
        spec:
          nodeName: $NODE
          containers:
          - name: ray-worker
            image: rayproject/ray:2.52.0
            env:
            - {name: PYTHONPATH, value: /home/ray/serve-app}
            - {name: APP_VERSION, value: "$1"}
            volumeMounts: [{name: app, mountPath: /home/ray/serve-app}]
          volumes: [{name: app, configMap: {name: hello-app}}]
YAML
}

# A client pod (not a Ray image: the host's python3) for requests by DNS.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: python:3.11-slim, command: [sleep, "3600"]}
YAML

t0=$(date +%s)
rayservice v1 | k apply -f - >/dev/null
i=0
until [ "$(k get rayservice $svc -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; do
	i=$((i + 1))
	[ $i -lt 900 ] || fail "the RayService is not Ready after 180 s: $(k get rayservice $svc -o jsonpath='{.status}'); pods: $(k get pods -o wide 2>&1)"
	sleep 0.2
done
ready_s=$(($(date +%s) - t0))
first=$(sst activeServiceStatus.rayClusterName)
case "$first" in $svc-?????) ;; *) fail "active cluster '$first'" ;; esac
expect_eq Running "$(sst serviceStatus)" "serviceStatus"
expect_eq RUNNING "$(sst activeServiceStatus.applicationStatuses.hello_app.status)" "hello_app's status"
expect_eq HEALTHY "$(sst activeServiceStatus.applicationStatuses.hello_app.serveDeploymentStatuses.Hello.status)" \
	"the Hello deployment's status"
[ "$(sst numServeEndpoints)" -ge 1 ] || fail "numServeEndpoints: $(sst numServeEndpoints)"
# The status is real Serve's: the head's dashboard, not volrayd's.
apps=$(k get --raw "/api/v1/namespaces/default/services/$svc-head-svc:8265/proxy/api/serve/applications/")
expect_contains "$apps" '"import_path": "hello.app"' "the real dashboard's Serve applications"
expect_contains "$apps" '"route_prefix": "/hello"' "the real dashboard's Serve applications"
grep -q "dashboard on" "$WORK/volrayd.log" && fail "volrayd emulated a head"
pass "RayService $svc Ready in ${ready_s} s on real Serve: hello_app RUNNING on $first"
echo "note: RayService (head + 1 worker, real Ray 2.52.0) apply-to-Ready: ${ready_s} s"

# (a) kubectl port-forward to the serve Service.
P=$(free_port)
k port-forward "svc/$svc-serve-svc" "$P:8000" >"$WORK/pf.log" 2>&1 &
PF=$!
KILL_PIDS="$KILL_PIDS $PF"
i=0
until grep -q "^Forwarding from 127.0.0.1" "$WORK/pf.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "port-forward did not start: $(cat "$WORK/pf.log")"; sleep 0.1
done
out=$(command curl -fsS "http://127.0.0.1:$P/hello") || fail "through kubectl port-forward: $out"
expect_contains "$out" "hello v1 from $first-" "the app through port-forward"
kill "$PF"
pass "the app answers through kubectl port-forward svc/$svc-serve-svc: $out"

# (b) From another pod, by the Service's DNS name.
k wait --for=condition=Ready pod/client --timeout=30s >/dev/null || fail "pod client"
out=$(k exec client -- python3 -c "import urllib.request; print(urllib.request.urlopen('$URL', timeout=10).read().decode(), end='')" 2>&1) ||
	fail "from pod client by DNS: $out"
expect_contains "$out" "hello v1 from $first-" "the app from another pod"
pass "the app answers another pod at $svc-serve-svc.default.svc.cluster.local:8000"

# (c) Through the API server's service proxy.
out=$(k get --raw "/api/v1/namespaces/default/services/$svc-serve-svc:8000/proxy/hello") ||
	fail "through the service proxy: $out"
expect_contains "$out" "hello v1 from $first-" "the app through the service proxy"
pass "the app answers through the API server's service proxy"

# --- An upgrade: a new APP_VERSION in rayClusterConfig needs a new cluster.
# A pod requests the app by DNS every 0.1 s until told to stop (a file in
# its emptyDir), then says how many requests it made and how many failed.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: loop}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: python:3.11-slim
    volumeMounts: [{name: ctl, mountPath: /ctl}]
    command:
    - python3
    - -u
    - -c
    - |
      import os, time, urllib.request
      ok = failed = 0
      seen = []
      while not os.path.exists("/ctl/stop"):
          try:
              body = urllib.request.urlopen("$URL", timeout=5).read().decode()
              ok += 1
              v = body.split()[1]
              if not seen or seen[-1] != v:
                  seen.append(v)
                  print("version", v, body.split()[-1], flush=True)
          except Exception as e:
              failed += 1
              print("failed", repr(e), flush=True)
          time.sleep(0.1)
      print("done ok=%d failed=%d versions=%s" % (ok, failed, ",".join(seen)), flush=True)
  volumes: [{name: ctl, emptyDir: {}}]
YAML
i=0
until k logs loop 2>/dev/null | grep -q "^version v1 "; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "the request loop got no answer: $(k logs loop 2>&1)"; sleep 0.2
done
# The pods' gateway keeps its MAC as pods come and go (a bridge left to
# itself takes its lowest port's, and the pods' ARP entries go stale).
NODENS=$(sed -n "s/.*podnet: the node's namespace \([^:]*\):.*/\1/p" "$WORK/volrayd.log" | head -1)
brmac() { PATH=$PATH:/usr/sbin:/sbin ip -n "$NODENS" -o link show br0 | sed -n 's|.*link/ether \([^ ]*\).*|\1|p'; }
mac0=$(brmac)
expect_eq 0a:58:0a:f4:00:01 "$mac0" "the bridge's MAC (the gateway 10.244.0.1's)"
t1=$(date +%s)
rayservice v2 | k apply -f - >/dev/null
second=""
i=0
while :; do
	p=$(sst pendingServiceStatus.rayClusterName)
	[ -z "$p" ] || second=$p
	a=$(sst activeServiceStatus.rayClusterName)
	[ "$a" = "$first" ] || break
	i=$((i + 1))
	[ $i -lt 900 ] || fail "still on $first after 180 s: $(k get rayservice $svc -o jsonpath='{.status}')"
	sleep 0.2
done
switch_s=$(($(date +%s) - t1))
[ -n "$second" ] && [ "$a" = "$second" ] || fail "switched to '$a', pending was '$second'"
expect_eq "$second" "$(k get svc $svc-serve-svc -o jsonpath='{.spec.selector.ray\.io/cluster}')" "serve-svc's selector"
expect_eq "$second" "$(k get svc $svc-head-svc -o jsonpath='{.spec.selector.ray\.io/cluster}')" "head-svc's selector"
k wait --for=delete "raycluster/$first" --timeout=60s >/dev/null ||
	fail "the old cluster $first is still there"
i=0
until [ -z "$(k get pods -l "ray.io/cluster=$first" -o name)" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the old cluster's pods are still there"; sleep 0.2
done
expect_eq "$mac0" "$(brmac)" "the bridge's MAC after the old cluster's pods went"
# A few more requests with the old cluster gone, then stop the loop.
n=$(k logs loop | grep -c . || true)
i=0
until [ "$(k logs loop | grep -c .)" -gt "$n" ] || k logs loop | grep -q "^version v2 "; do
	i=$((i + 1)); [ $i -lt 100 ] || break; sleep 0.1
done
k exec loop -- touch /ctl/stop || fail "stopping the request loop"
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/loop --timeout=30s >/dev/null ||
	fail "the request loop did not finish: $(k logs loop 2>&1 | tail -5)"
log=$(k logs loop)
done=$(echo "$log" | sed -n 's/^done //p')
[ -n "$done" ] || fail "the request loop's summary: $log"
ok=$(echo "$done" | sed -n 's/.*ok=\([0-9]*\).*/\1/p')
failed=$(echo "$done" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
expect_eq 0 "$failed" "failed requests during the upgrade ($(echo "$log" | grep '^failed' | head -3))"
expect_contains "$done" "versions=v1,v2" "the versions the loop saw, in order"
[ "$ok" -gt 20 ] || fail "only $ok requests during the upgrade"
expect_contains "$(echo "$log" | grep '^version v2 ')" "version v2 $second-" "v2 served by the new cluster"
pass "upgrade to $second in ${switch_s} s: $ok requests, none failed; $first deleted"
echo "note: RayService upgrade (new cluster, real Ray): switched in ${switch_s} s; $ok requests served during it, $failed failed"

out=$(k get --raw "/api/v1/namespaces/default/services/$svc-serve-svc:8000/proxy/hello")
expect_contains "$out" "hello v2 from $second-" "the app after the upgrade"
pass "the app answers v2 from $second"

k delete rayservice $svc >/dev/null
i=0
until [ -z "$(k get pods -l ray.io/is-ray-node=yes -o name)" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "Ray pods left: $(k get pods -o name)"; sleep 0.2
done
pass "deleting the RayService takes its cluster and pods"
