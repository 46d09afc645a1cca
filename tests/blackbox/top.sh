#!/bin/sh
# kubectl top (issue 23): metrics.k8s.io/v1beta1 is in discovery and
# serves NodeMetrics and PodMetrics. A simulated pod reports its
# volray.io/sim-cpu / sim-memory annotations (shared out among its
# containers), else its requests; a node the sum of its running pods'; a
# busy local container what its cgroup measured (when volrayd enforces
# limits with cgroups); --containers, -l and a pod that does not run (no
# metrics, as metrics-server). Only get and list: a watch or a write is
# 405. /metrics has the local containers' series.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')

k api-versions | grep -qx "metrics.k8s.io/v1beta1" || fail "metrics.k8s.io/v1beta1 not in discovery"
"$top_builddir/volray" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix vt >/dev/null ||
	fail "volray node add"
k wait --for=condition=Ready node/vt-0 --timeout=10s >/dev/null || fail "vt-0 not Ready"
k apply -f - >/dev/null <<'YAML' || fail "create pods"
apiVersion: v1
kind: Pod
metadata:
  name: hot
  labels: {app: top}
  annotations: {volray.io/sim-duration: 1h, volray.io/sim-cpu: 500m, volray.io/sim-memory: 128Mi}
spec:
  nodeName: vt-0
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox}
---
apiVersion: v1
kind: Pod
metadata:
  name: asked
  annotations: {volray.io/sim-duration: 1h}
spec:
  nodeName: vt-0
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: 100m, memory: 32Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec:
  schedulerName: nobody
  containers: [{name: c, image: busybox}]
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/hot pod/asked --timeout=10s >/dev/null ||
	fail "the simulated pods do not run"

# kubectl top pod: CPU(cores) MEMORY(bytes), no headers.
top_pod() { k top pod "$@" --no-headers 2>&1 | awk '{print $1, $2, $3}' | sort; }
expect_eq "asked 100m 32Mi
hot 500m 128Mi" "$(top_pod)" "kubectl top pod"
expect_eq "hot a 250m 64Mi
hot b 250m 64Mi" "$(k top pod hot --containers --no-headers | awk '{print $1, $2, $3, $4}')" \
	"kubectl top pod --containers"
expect_eq "hot 500m 128Mi" "$(top_pod -l app=top)" "kubectl top pod -l"
err=$(k top pod pending 2>&1) && fail "metrics of a pod that does not run"
expect_contains "$err" "not found" "a pod that does not run"
expect_eq "vt-0 600m" "$(k top node vt-0 --no-headers | awk '{print $1, $2}')" "kubectl top node: the sum of its pods"
expect_eq "160Mi" "$(k top node vt-0 --no-headers | awk '{print $4}')" "the node's memory"
pass "kubectl top pod (--containers, -l) and node for simulated pods"

code=$(curl -s -o /dev/null -w '%{http_code}' "$API/apis/metrics.k8s.io/v1beta1/pods?watch=1")
expect_eq 405 "$code" "a watch of metrics"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$API/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/hot")
expect_eq 405 "$code" "a delete of metrics"
pass "metrics are get and list only"

# A busy local container: its cgroup's figures, when there are cgroups.
if grep -q "resource limits are enforced with cgroup" "$WORK/volrayd.log"; then
	k apply -f - >/dev/null <<YAML || fail "create the busy pod"
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'while :; do :; done']
    resources: {requests: {cpu: 10m, memory: 8Mi}}
YAML
	k wait --for=jsonpath='{.status.phase}'=Running pod/busy --timeout=15s >/dev/null ||
		fail "busy does not run"
	# Two samples, 5 s apart, then a rate well over its 10m request.
	i=0
	until cpu=$(k top pod busy --no-headers 2>/dev/null | awk '{print $2}' | tr -d m) &&
	    [ -n "$cpu" ] && [ "$cpu" -gt 200 ]; do
		i=$((i + 1)); [ $i -lt 60 ] || fail "busy's CPU as measured: '$cpu'm"
		sleep 0.5
	done
	curl -s "$API/metrics" | grep -q 'volray_container_cpu_usage_seconds_total{namespace="default",pod="busy",container="c"}' ||
		fail "busy's series in /metrics"
	k delete pod busy --grace-period=1 >/dev/null
	pass "a busy local container: ${cpu}m measured from its cgroup"
else
	echo "note: no cgroups here: the local container's measured figures are not checked"
fi
