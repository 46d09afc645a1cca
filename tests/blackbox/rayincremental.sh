#!/bin/sh
# RayService's NewClusterWithIncrementalUpgrade (KubeRay 1.7;
# lua/lib/rayincremental.lua, lua/controllers/gateway.lua) on simulated
# nodes with stock kubectl: the Gateway and HTTPRoute KubeRay makes, with
# their status from volray's gateway controller; an upgrade moves
# traffic by stepSizePercent per intervalSeconds, never past the new
# cluster's targetCapacity, while target_capacity moves by
# maxSurgePercent (the Serve config on each head carries it), then the new
# cluster is promoted and the route sends it everything; a spec reverted
# mid-upgrade rolls back to the old cluster; KubeRay's validation.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 6 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"

svc=inc
k apply -f - >/dev/null <<'YAML' || fail "create RayService"
apiVersion: ray.io/v1
kind: RayService
metadata: {name: inc}
spec:
  rayClusterDeletionDelaySeconds: 2
  upgradeStrategy:
    type: NewClusterWithIncrementalUpgrade
    clusterUpgradeOptions: {gatewayClassName: istio, stepSizePercent: 25, intervalSeconds: 1, maxSurgePercent: 50}
  serveConfigV2: |
    applications:
    - name: fruit
      import_path: fruit.deployment_graph
      route_prefix: /fruit
      deployments: [{name: FruitMarket, num_replicas: 1}]
  rayClusterConfig:
    enableInTreeAutoscaling: true
    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
      template:
        metadata: {labels: {rev: "1"}}
        spec:
          containers:
          - {name: ray-head, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 2Gi}}}
    workerGroupSpecs:
    - groupName: small
      replicas: 1
      minReplicas: 1
      maxReplicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - {name: ray-worker, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "2", memory: 4Gi}}}
YAML
k wait --for=condition=Ready rayservice/$svc --timeout=60s >/dev/null ||
	fail "RayService not Ready: $(k get rayservice $svc -o jsonpath='{.status}')"
sst() { k get rayservice $svc -o jsonpath="{.status.$1}"; }
first=$(sst activeServiceStatus.rayClusterName)
expect_eq "100|100" "$(sst activeServiceStatus.targetCapacity)|$(sst activeServiceStatus.trafficRoutedPercent)" \
	"the first cluster's capacity and traffic"
expect_eq "istio|http|80" "$(k get gateway $svc-gateway -o jsonpath='{.spec.gatewayClassName}|{.spec.listeners[0].name}|{.spec.listeners[0].port}')" \
	"Gateway"
expect_eq "True|True" "$(k get gateway $svc-gateway -o jsonpath='{.status.conditions[?(@.type=="Accepted")].status}|{.status.conditions[?(@.type=="Programmed")].status}')" \
	"Gateway status (gateway controller)"
expect_eq "$first-serve-svc=100" "$(k get httproute $svc-httproute -o jsonpath='{range .spec.rules[0].backendRefs[*]}{.name}={.weight}{end}')" \
	"HTTPRoute before an upgrade"
expect_eq "True|True" "$(k get httproute $svc-httproute -o jsonpath='{.status.parents[0].conditions[?(@.type=="Accepted")].status}|{.status.parents[0].conditions[?(@.type=="ResolvedRefs")].status}')" \
	"HTTPRoute status"
k get svc "$first-serve-svc" >/dev/null || fail "no per-cluster serve Service"
head_tc() {
	k get --raw "/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/serve/applications/" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["target_capacity"])'
}
expect_eq 100 "$(head_tc "$first")" "target_capacity on the first cluster's head"
gw_cluster() {
	curl -fsS "$API/api/v1/namespaces/default/services/$svc-gateway:80/proxy/fruit" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"])'
}
wait_eq "$first" "a request through the Gateway" gw_cluster
pass "first cluster: Gateway, HTTPRoute with its status, capacity and traffic 100"

# --- an upgrade, step by step -----------------------------------------------
w0=$(watchers)
k get rayservice $svc -w -o jsonpath='{.status.activeServiceStatus.rayClusterName} {.status.activeServiceStatus.targetCapacity} {.status.activeServiceStatus.trafficRoutedPercent} {.status.pendingServiceStatus.targetCapacity} {.status.pendingServiceStatus.trafficRoutedPercent}{"\n"}' \
	>"$WORK/steps" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
wait_watchers $((w0 + 1))
k patch rayservice $svc --type=json \
	-p '[{"op":"replace","path":"/spec/rayClusterConfig/headGroupSpec/template/metadata/labels/rev","value":"2"}]' >/dev/null ||
	fail "patch the cluster spec"
i=0
while :; do
	a=$(sst activeServiceStatus.rayClusterName)
	[ "$a" != "$first" ] && [ -z "$(sst pendingServiceStatus.rayClusterName)" ] && break
	i=$((i + 1)); [ $i -lt 600 ] || fail "upgrade did not complete: $(k get rayservice $svc -o jsonpath='{.status}')"
	sleep 0.1
done
second=$a
expect_eq "100|100" "$(sst activeServiceStatus.targetCapacity)|$(sst activeServiceStatus.trafficRoutedPercent)" \
	"the new cluster after promotion"
wait_eq "$second-serve-svc=100" "HTTPRoute after promotion" \
	k get httproute $svc-httproute -o jsonpath='{range .spec.rules[0].backendRefs[*]}{.name}={.weight}{end}'
wait_eq "$second" "serve-svc follows" k get svc $svc-serve-svc -o jsonpath='{.spec.selector.ray\.io/cluster}'
expect_eq 100 "$(head_tc "$second")" "target_capacity on the new head"
expect_eq "$second" "$(gw_cluster)" "a request through the Gateway after promotion"
# The recorded steps: traffic never ahead of capacity, steps of 25 at most,
# capacity in steps of 50.
python3 - "$WORK/steps" "$first" <<'PY' || fail "steps: $(cat "$WORK/steps")"
import sys
first = sys.argv[2]
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(first + " ") and len(l.split()) == 5]
assert rows, "no step with both clusters"
ptcs, pws = [], []
for _, atc, aw, ptc, pw in rows:
    atc, aw, ptc, pw = map(int, (atc, aw, ptc, pw))
    assert pw <= ptc, ("traffic ahead of capacity", atc, aw, ptc, pw)
    assert aw + pw == 100, ("weights", aw, pw)
    assert atc + ptc <= 150, ("surge", atc, ptc)
    ptcs.append(ptc); pws.append(pw)
steps = sorted(set(pws))
assert all(b - a <= 25 for a, b in zip(steps, steps[1:])), ("traffic steps", steps)
assert set(ptcs) <= {0, 50, 100}, ("capacity steps", sorted(set(ptcs)))
assert 50 in ptcs and 25 in pws, ("no intermediate step", sorted(set(ptcs)), steps)
print("steps ok:", len(rows))
PY
k get events --field-selector involvedObject.name=$svc,reason=CreatedHTTPRoute -o name | grep -q . ||
	fail "no CreatedHTTPRoute event"
pass "incremental upgrade: traffic by 25, capacity by 50, promotion, route and services to the new cluster"

# --- rollback -----------------------------------------------------------------
# lastTrafficMigratedTime has whole seconds (as metav1.Time), so a step of
# intervalSeconds 1 may last next to nothing: with 4 the 25% step lasts
# over 3 s, long enough to see it and to revert the spec mid-upgrade.
k patch rayservice $svc --type=json -p '[
	{"op":"replace","path":"/spec/upgradeStrategy/clusterUpgradeOptions/intervalSeconds","value":4},
	{"op":"replace","path":"/spec/rayClusterConfig/headGroupSpec/template/metadata/labels/rev","value":"3"}]' >/dev/null
i=0
until [ "$(sst pendingServiceStatus.trafficRoutedPercent)" = 25 ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "the third upgrade never moved traffic: $(k get rayservice $svc -o jsonpath='{.status}'); steps: $(cat "$WORK/steps")"
	sleep 0.1
done
third=$(sst pendingServiceStatus.rayClusterName)
k patch rayservice $svc --type=json \
	-p '[{"op":"replace","path":"/spec/rayClusterConfig/headGroupSpec/template/metadata/labels/rev","value":"2"}]' >/dev/null
k wait --for=condition=RollbackInProgress rayservice/$svc --timeout=20s >/dev/null ||
	fail "no RollbackInProgress: $(sst conditions); steps: $(cat "$WORK/steps")"
i=0
until [ -z "$(sst pendingServiceStatus.rayClusterName)" ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "rollback did not complete: $(k get rayservice $svc -o jsonpath='{.status}')"
	sleep 0.1
done
expect_eq "$second|100|100" "$(sst activeServiceStatus.rayClusterName)|$(sst activeServiceStatus.targetCapacity)|$(sst activeServiceStatus.trafficRoutedPercent)" \
	"after the rollback"
expect_eq "" "$(k get rayservice $svc -o jsonpath='{.status.conditions[?(@.type=="RollbackInProgress")].status}')" \
	"RollbackInProgress removed"
k wait --for=delete "raycluster/$third" --timeout=30s >/dev/null || fail "the rolled-back cluster $third stays"
pass "a spec reverted mid-upgrade rolls back to $second"

# --- validation ---------------------------------------------------------------
k apply -f - >/dev/null <<'YAML' || fail "create invalid RayService"
apiVersion: ray.io/v1
kind: RayService
metadata: {name: noauto}
spec:
  upgradeStrategy:
    type: NewClusterWithIncrementalUpgrade
    clusterUpgradeOptions: {gatewayClassName: istio, stepSizePercent: 10, intervalSeconds: 5}
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: "rayproject/ray:2.52.0"}]
YAML
wait_event noauto InvalidRayServiceSpec "Ray Autoscaler is required for NewClusterWithIncrementalUpgrade"
pass "validation: autoscaling required"
