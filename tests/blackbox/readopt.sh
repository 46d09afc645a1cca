#!/bin/sh
# A volrayd crash is not a pod restart. Each local container runs under
# its shim, which outlives a kill -9 of volrayd: the next volrayd takes
# the container back (same process, restartCount 0, startedAt kept, the
# log goes on, the exit code it ends with later is the real one); one that
# ended while no volrayd ran is reported with its real exit code; one
# whose pod is gone is killed at the restart. A simulated container that
# was running ends at startedAt + sim-duration, and restart counts are
# kept from the stored status.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ticker}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'i=0; while [ ! -f "\$VOLRAY_POD_ROOT/stop" ]; do i=\$((i+1)); echo "tick \$i"; sleep 0.2; done; exit 3']
---
apiVersion: v1
kind: Pod
metadata: {name: quitter}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'while [ ! -f "\$VOLRAY_POD_ROOT/stop" ]; do sleep 0.1; done; echo bye; exit 7']
---
apiVersion: v1
kind: Pod
metadata: {name: inited}
spec:
  nodeName: $NODE
  initContainers:
  - {name: setup, image: busybox, command: [sh, -c, 'echo setup >>"\$VOLRAY_POD_ROOT/runs"']}
  containers:
  - {name: c, image: busybox, command: [sleep, "1000"]}
---
apiVersion: v1
kind: Pod
metadata: {name: twin}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: busybox, command: [sleep, "1000"]}
---
apiVersion: v1
kind: Node
metadata:
  name: vn0
  labels: {volray.io/runtime: virtual}
  annotations: {volray.io/cpu: "8", volray.io/memory: 16Gi}
---
apiVersion: v1
kind: Pod
metadata:
  name: simmer
  annotations: {volray.io/sim-duration: 6s}
spec:
  nodeName: vn0
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata:
  name: simcrash
  annotations: {volray.io/sim-duration: 100ms, volray.io/sim-exit-code: "1"}
spec:
  nodeName: vn0
  restartPolicy: OnFailure
  containers: [{name: c, image: busybox}]
YAML
for p in ticker quitter simmer inited twin; do
	k wait --for=condition=Ready pod/$p --timeout=15s >/dev/null || fail "$p not Ready"
done
k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/simcrash --timeout=15s >/dev/null ||
	fail "simcrash did not restart"
jp='{.status.containerStatuses[0].state.running.startedAt}'
started=$(k get pod ticker -o jsonpath="$jp")
simstarted=$(k get pod simmer -o jsonpath="$jp")
simip=$(k get pod simmer -o jsonpath='{.status.podIP}')
craship=$(k get pod simcrash -o jsonpath='{.status.podIP}')
pid=$(cut -d' ' -f1 "$DATA/pods/default/ticker/c.pid")
qpid=$(cut -d' ' -f1 "$DATA/pods/default/quitter/c.pid")
ipid=$(cut -d' ' -f1 "$DATA/pods/default/inited/c.pid")
until k logs ticker | grep -q 'tick 3'; do sleep 0.1; done

# A container of a pod that is not in the store, under a shim of its own.
mkdir -p "$DATA/pods/default/ghost"
setsid "$top_builddir/volray-shim" -d "$DATA/pods/default/ghost" -n c -u no-such-uid -- sleep 1000 \
	</dev/null >/dev/null 2>&1 &
i=0
until [ -s "$DATA/pods/default/ghost/c.pid" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the ghost shim wrote no pid file"; sleep 0.05
done
ghost=$(cut -d' ' -f1 "$DATA/pods/default/ghost/c.pid")

stop_daemon KILL
kill -0 "$pid" || fail "the ticker died with volrayd"
# twin's instance is lost while volrayd is down, and a shim of another pod
# of the same name holds its paths: twin starts anew, the other is killed.
twinshim=$(cut -d' ' -f4 "$DATA/pods/default/twin/c.pid")
twinpid=$(cut -d' ' -f1 "$DATA/pods/default/twin/c.pid")
kill -9 "$twinshim" "$twinpid"
while kill -0 "$twinshim" 2>/dev/null || kill -0 "$twinpid" 2>/dev/null; do sleep 0.05; done
rm -f "$DATA/pods/default/twin/c.pid"
setsid "$top_builddir/volray-shim" -d "$DATA/pods/default/twin" -n c -u another-uid -- sleep 1000 \
	</dev/null >/dev/null 2>&1 &
until [ -s "$DATA/pods/default/twin/c.pid" ]; do sleep 0.05; done
other=$(cut -d' ' -f1 "$DATA/pods/default/twin/c.pid")
# quitter ends while no volrayd runs; its shim writes how.
: >"$DATA/pods/default/quitter/root/stop"
while kill -0 "$qpid" 2>/dev/null; do sleep 0.05; done
until [ -f "$DATA/pods/default/quitter/c.status" ]; do sleep 0.05; done
sleep 2	# downtime: a fresh simulated duration would end 2 s late
start_daemon

kill -0 "$pid" || fail "the ticker did not survive the restart"
expect_eq "$pid" "$(cut -d' ' -f1 "$DATA/pods/default/ticker/c.pid")" "ticker's process after the restart"
k wait --for=condition=Ready pod/ticker --timeout=10s >/dev/null || fail "ticker not Ready after the restart"
expect_eq 0 "$(k get pod ticker -o jsonpath='{.status.containerStatuses[0].restartCount}')" "restartCount"
expect_eq "$started" "$(k get pod ticker -o jsonpath="$jp")" "startedAt"
k wait --for=condition=Ready pod/inited --timeout=10s >/dev/null || fail "inited not Ready after the restart"
expect_eq setup "$(cat "$DATA/pods/default/inited/root/runs")" "the completed init container ran once"
expect_eq "$ipid" "$(cut -d' ' -f1 "$DATA/pods/default/inited/c.pid")" "inited's main container after the restart"
i=0
while kill -0 "$ghost" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the ghost's process $ghost outlived the restart"; sleep 0.05
done
k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/twin --timeout=10s >/dev/null ||
	fail "twin did not start anew"
k wait --for=condition=Ready pod/twin --timeout=10s >/dev/null || fail "twin not Ready"
i=0
while kill -0 "$other" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the other pod's process $other outlived the restart"; sleep 0.05
done
new=$(cut -d' ' -f1 "$DATA/pods/default/twin/c.pid")
[ "$new" != "$other" ] && kill -0 "$new" || fail "twin's new instance has no pid file of its own"
pass "kill -9 of volrayd: the same process is taken back (restartCount 0, startedAt kept, a completed init container not run again); a pod's that is gone is killed"

last=$(k logs ticker | tail -n 1 | cut -d' ' -f2)
i=0
until [ "$(k logs ticker | tail -n 1 | cut -d' ' -f2)" -gt $((last + 2)) ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the log did not go on"; sleep 0.1
done
logs=$(k logs ticker)
expect_eq "$(echo "$logs" | wc -l)" "$(echo "$logs" | tail -n 1 | cut -d' ' -f2)" "one run of ticks, none lost or repeated"
pass "the log goes on, written while volrayd was down and after"

k wait --for=jsonpath='{.status.phase}'=Failed pod/quitter --timeout=10s >/dev/null || fail "quitter's end not reported"
expect_eq 7 "$(k get pod quitter -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" \
	"exit code of a container that ended while volrayd was down"
expect_eq bye "$(k logs quitter)" "its log"
pass "a container that ended while volrayd was down: its real exit code"

: >"$DATA/pods/default/ticker/root/stop"
k wait --for=jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}'=3 pod/ticker --timeout=10s >/dev/null ||
	fail "the taken-back process's exit code"
expect_eq Failed "$(k get pod ticker -o jsonpath='{.status.phase}')" "ticker's phase"
pass "the taken-back process ends with exit code 3, as its status says"

k wait --for=jsonpath='{.status.phase}'=Succeeded pod/simmer --timeout=15s >/dev/null || fail "simmer did not end"
fin=$(k get pod simmer -o jsonpath='{.status.containerStatuses[0].state.terminated.finishedAt}')
expect_eq "$simstarted" "$(k get pod simmer -o jsonpath='{.status.containerStatuses[0].state.terminated.startedAt}')" \
	"simulated startedAt"
ran=$(python3 -c 'import sys, datetime as d
f = lambda s: d.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
print(int((f(sys.argv[2]) - f(sys.argv[1])).total_seconds()))' "$simstarted" "$fin")
[ "$ran" -ge 6 ] && [ "$ran" -le 7 ] || fail "a simulated 6s container ran ${ran}s across the restart"
expect_eq 0 "$(k get pod simmer -o jsonpath='{.status.containerStatuses[0].restartCount}')" "simulated restartCount"
rc=$(k get pod simcrash -o jsonpath='{.status.containerStatuses[0].restartCount}')
[ "$rc" -ge 1 ] || fail "simcrash's restartCount went back to $rc"
expect_eq "$simip" "$(k get pod simmer -o jsonpath='{.status.podIP}')" "a simulated pod's IP across the restart"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: newcomer}
spec:
  nodeName: vn0
  containers: [{name: c, image: busybox}]
YAML
k wait --for=condition=Ready pod/newcomer --timeout=10s >/dev/null || fail "newcomer not Ready"
newip=$(k get pod newcomer -o jsonpath='{.status.podIP}')
[ "$newip" != "$simip" ] && [ "$newip" != "$craship" ] || fail "a new pod got a kept pod's IP $newip"
pass "simulated: the container ends at startedAt + sim-duration (${ran}s), restart counts and IPs kept, new IPs apart"
