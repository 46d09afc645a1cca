#!/bin/sh
# Resource limits as cgroups on the local node (root, a writable cgroup
# v2 or v1 hierarchy; else SKIP): volrayd says which mode it runs in; a
# container's group has its limits.memory and limits.cpu; one that
# allocates past its memory limit is OOMKilled with exit code 137; its
# group goes with it, and with SIGTERM to volrayd; a group left by an
# earlier run is removed at start.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	V=2 MEM=/sys/fs/cgroup CPU=/sys/fs/cgroup
	[ -w /sys/fs/cgroup/cgroup.subtree_control ] || { echo "SKIP: cgroup v2 not writable"; exit 77; }
else
	V=1 MEM=/sys/fs/cgroup/memory CPU=/sys/fs/cgroup/cpu
	grep -Eq '^[^ ]+ /sys/fs/cgroup/memory cgroup rw' /proc/self/mounts ||
		{ echo "SKIP: no writable cgroup v1 memory hierarchy"; exit 77; }
fi
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"
expect_contains "$(cat "$WORK/volrayd.log")" "resource limits are enforced with cgroup v$V" "the mode volrayd says it runs in"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: capped}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'exec sleep 1000']
    resources: {limits: {cpu: 500m, memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: hog}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: python
    command: [python3, -c, 'b = bytearray(200 << 20); print("survived")']
    resources: {limits: {memory: 32Mi}}
YAML
k wait --for=condition=Ready pod/capped --timeout=10s >/dev/null || fail "capped not Ready"
uid=$(k get pod capped -o jsonpath='{.metadata.uid}')
pid=$(cut -d' ' -f1 "$DATA/pods/default/capped/c.pid")
# volray/KEY/POD_UID/CONTAINER, KEY this data directory's.
mg=$(echo "$MEM"/volray/*/"$uid"/c) cg=$(echo "$CPU"/volray/*/"$uid"/c)
[ -d "$mg" ] && [ -d "$cg" ] || fail "no groups for capped: $mg $cg"
KEY=$(basename "$(dirname "$(dirname "$mg")")")
if [ $V = 2 ]; then
	expect_eq 67108864 "$(cat "$mg/memory.max")" "memory.max"
	expect_eq "50000 100000" "$(cat "$cg/cpu.max")" "cpu.max"
else
	expect_eq 67108864 "$(cat "$mg/memory.limit_in_bytes")" "memory.limit_in_bytes"
	expect_eq 50000 "$(cat "$cg/cpu.cfs_quota_us")" "cpu.cfs_quota_us"
	expect_eq 100000 "$(cat "$cg/cpu.cfs_period_us")" "cpu.cfs_period_us"
fi
grep -qx "$pid" "$mg/cgroup.procs" || fail "the process is not in its memory group"
grep -qx "$pid" "$cg/cgroup.procs" || fail "the process is not in its cpu group"
pass "cgroup v$V: the container's group has its memory and cpu limits, and its process"

k wait --for=jsonpath='{.status.containerStatuses[0].state.terminated.reason}'=OOMKilled pod/hog --timeout=20s >/dev/null ||
	fail "hog not OOMKilled: $(k get pod hog -o jsonpath='{.status.containerStatuses[0].state}')"
expect_eq 137 "$(k get pod hog -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" "OOMKilled exit code"
expect_eq Failed "$(k get pod hog -o jsonpath='{.status.phase}')" "hog's phase"
hog=$(k get pod hog -o jsonpath='{.metadata.uid}')
[ ! -d "$MEM/volray/$KEY/$hog/c" ] || fail "the OOMKilled container's group is still there"
pass "past limits.memory: OOMKilled, exit code 137, its group removed"

k delete pod capped --grace-period=1 --timeout=20s >/dev/null || fail "deleting capped"
[ ! -d "$mg" ] && [ ! -d "$cg" ] || fail "a deleted container's groups are still there"
[ ! -d "$MEM/volray/$KEY/$uid" ] || fail "a deleted pod's group is still there"
pass "a deleted pod's groups are removed"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: keeper}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: busybox, command: [sleep, "1000"], resources: {limits: {memory: 16Mi}}}
YAML
k wait --for=condition=Ready pod/keeper --timeout=10s >/dev/null || fail "keeper not Ready"
keeper=$(k get pod keeper -o jsonpath='{.metadata.uid}')
[ -d "$MEM/volray/$KEY/$keeper/c" ] || fail "keeper has no group"
stop_daemon
[ ! -d "$MEM/volray/$KEY/$keeper" ] || fail "SIGTERM to volrayd left the groups of a running pod"
[ ! -d "$MEM/volray/$KEY" ] || fail "SIGTERM to volrayd left its volray/$KEY"
pass "SIGTERM to volrayd removes the groups of its running containers"

mkdir -p "$MEM/volray/$KEY/stale-pod/c" "$CPU/volray/$KEY/stale-pod/c"
# Another daemon's group (another data directory), with its process.
other="$MEM/volray/dtest$$/pod/c"
mkdir -p "$other"
sleep 1000 &
spid=$!
echo "$spid" >"$other/cgroup.procs"
start_daemon
[ ! -d "$MEM/volray/$KEY/stale-pod" ] && [ ! -d "$CPU/volray/$KEY/stale-pod" ] || fail "a stale group survived the start"
kill -0 "$spid" && [ -d "$other" ] || fail "another daemon's group was swept"
kill "$spid"; wait "$spid" 2>/dev/null || true
rmdir "$other" "$MEM/volray/dtest$$/pod" "$MEM/volray/dtest$$"
pass "groups left by an earlier run are removed at start; another data directory's are not"
