#!/bin/sh
# The RayService controller (lua/controllers/rayservice.lua) with stock
# kubectl on simulated nodes, Serve answered by the heads' simulated
# Serve API: the upstream sample gets a cluster whose applications are
# pushed and RUNNING, then <svc>-head-svc and <svc>-serve-svc select it;
# a change of rayClusterConfig brings up a pending cluster, the Services
# switch to it with running pods behind them at every moment, and the old
# cluster is deleted after rayClusterDeletionDelaySeconds.
. "$(dirname "$0")/lib.sh"
need_samples
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null

svc=rayservice-sample
sst() { k get rayservice $svc -o jsonpath="{.status.$1}"; }
# selected: the cluster <svc>-serve-svc selects and how many of its pods run.
selected() {
	c=$(k get svc $svc-serve-svc -o jsonpath='{.spec.selector.ray\.io/cluster}')
	n=$(k get pods -l ray.io/cluster="$c" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$' || true)
	echo "$c $n"
}

k apply -f "$SAMPLES/kuberay/ray-service.sample.yaml" >/dev/null
k patch rayservice $svc --type=merge -p '{"spec":{"rayClusterDeletionDelaySeconds":3}}' >/dev/null
k wait --for=jsonpath='{.status.serviceStatus}'=Running rayservice/$svc --timeout=30s >/dev/null ||
	fail "the sample did not start serving: $(k get rayservice $svc -o jsonpath='{.status}')"
first=$(sst activeServiceStatus.rayClusterName)
case "$first" in $svc-?????) ;; *) fail "active cluster '$first'" ;; esac
expect_eq RUNNING "$(sst 'activeServiceStatus.applicationStatuses.fruit_app.status')" "fruit_app"
expect_eq RUNNING "$(sst 'activeServiceStatus.applicationStatuses.math_app.status')" "math_app"
expect_eq "$first head" "$(k get svc $svc-head-svc -o jsonpath='{.spec.selector.ray\.io/cluster} {.spec.selector.ray\.io/node-type}')" "head-svc selector"
expect_eq "$first" "$(selected | cut -d' ' -f1)" "serve-svc selector"
expect_eq 8000 "$(k get svc $svc-serve-svc -o jsonpath='{.spec.ports[0].port}')" "serve port"
k wait --for=condition=Ready rayservice/$svc --timeout=20s >/dev/null || fail "Ready condition"
[ "$(sst numServeEndpoints)" -ge 1 ] || fail "numServeEndpoints"
expect_eq "False" "$(k get rayservice $svc -o jsonpath='{.status.conditions[?(@.type=="UpgradeInProgress")].status}')" "no upgrade in progress"
pass "the upstream sample serves: applications RUNNING, both Services select the cluster"

# --- a cluster spec change: pending cluster, switch without a gap
k get svc $svc-serve-svc -w -o jsonpath='{.spec.selector.ray\.io/cluster}{"\n"}' >"$WORK/sel.out" 2>/dev/null &
selw=$!
wait_watchers 1
k patch rayservice $svc --type=json -p '[{"op":"add","path":"/spec/rayClusterConfig/headGroupSpec/template/metadata","value":{"labels":{"rev":"2"}}}]' >/dev/null
i=0
second=""
while :; do
	s=$(selected)
	[ "${s#* }" -ge 1 ] || fail "serve-svc selects $s: no running pod behind it"
	p=$(sst pendingServiceStatus.rayClusterName)
	[ -z "$p" ] || second=$p
	a=$(sst activeServiceStatus.rayClusterName)
	[ "$a" = "$first" ] || break
	i=$((i + 1)); [ $i -lt 300 ] || fail "never switched from $first"
	sleep 0.1
done
[ -n "$second" ] && [ "$a" = "$second" ] || fail "switched to '$a', pending was '$second'"
serve_sel() { k get svc $svc-serve-svc -o jsonpath='{.spec.selector.ray\.io/cluster}'; }
wait_eq "$second" "serve-svc follows" serve_sel
expect_eq "$second" "$(k get svc $svc-head-svc -o jsonpath='{.spec.selector.ray\.io/cluster}')" "head-svc follows"
[ "$(selected | cut -d' ' -f2)" -ge 1 ] || fail "no running pods behind the new selector"
[ -n "$(k get raycluster "$first" -o name 2>/dev/null)" ] || fail "the old cluster went before its delay"
k wait --for=delete raycluster/"$first" --timeout=20s >/dev/null || fail "old cluster $first not deleted"
kill $selw 2>/dev/null; wait $selw 2>/dev/null || true
expect_eq "$first
$second" "$(uniq "$WORK/sel.out")" "serve-svc moved from the old cluster straight to the new"
pass "a cluster spec change switches clusters without a gap; the old one goes after the delay"

k delete rayservice $svc >/dev/null
wait_eq "" "clusters collected" k get rayclusters -o name
pass "deleting the RayService takes its clusters"
