#!/bin/sh
# The usage plugin on measured load (issue 26): the local node's runtime
# writes its load from cgroups (the 10-minute average, in percent of its
# allocatable) on its Node as volray.io/usage; with usage's CPU threshold
# at 1%, a busy local node takes no new pod, and the pod says why in the
# plugin's words. Needs root and a writable cgroup hierarchy (else SKIP).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	[ -w /sys/fs/cgroup/cgroup.subtree_control ] || { echo "SKIP: cgroup v2 not writable"; exit 77; }
else
	grep -Eq '^[^ ]+ /sys/fs/cgroup/cpu[^ ]* cgroup rw' /proc/self/mounts ||
		{ echo "SKIP: no writable cgroup v1 cpu hierarchy"; exit 77; }
fi
POL="$WORK/pol"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: usage
    arguments: {thresholds: {cpu: 1, mem: 99}}
YAML
LOCAL_NODE=1
start_daemon --policy-dir "$POL"
NODE=$(hostname | tr 'A-Z' 'a-z')
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'while :; do :; done']
    resources: {limits: {cpu: 500m, memory: 64Mi}}
YAML
k wait --for=condition=Ready pod/busy --timeout=30s >/dev/null || fail "the busy pod runs"
usage() { k get node "$NODE" -o jsonpath='{.metadata.annotations.volray\.io/usage}'; }
cpu_of() { usage | sed -n 's/^cpu=\([0-9.]*\),.*/\1/p'; }
i=0
until [ -n "$(cpu_of)" ] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 1 else 1)' "$(cpu_of)"; do
	i=$((i + 1)); [ $i -lt 900 ] || fail "the node's load never passed 1%: '$(usage)'"
	sleep 0.1
done
case "$(usage)" in cpu=[0-9]*.[0-9],memory=[0-9]*.[0-9],time=20[0-9][0-9]-*Z) ;;
*) fail "volray.io/usage: $(usage)" ;; esac
pass "the local node's measured load on its Node: $(usage)"

k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: later}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
YAML
msg() { k get pod later -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
wait_eq "0/1 nodes are available: 1 the CPU load of the node exceeds the upper limit." "the pending pod's reason" msg
expect_eq "" "$(k get pod later -o jsonpath='{.spec.nodeName}')" "a pod bound to the busy node"
pass "usage keeps a new pod off the node over its CPU threshold, in its words"
