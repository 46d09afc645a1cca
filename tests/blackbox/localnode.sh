#!/bin/sh
# The local node: this machine registers as a Node (volray.io/runtime=local)
# and runs containers' commands as real processes. A process's stdout and
# stderr reach kubectl logs and its exit code the status; env comes from
# ConfigMaps, Secrets and the downward API; a ConfigMap volume is a
# directory of files; a failing container is restarted (kubectl logs -p
# shows the previous instance); deleting a pod SIGTERMs its process, which
# a trap may log; a kill -9 of volrayd leaves the process running for the
# next volrayd to take back; SIGTERM to volrayd leaves no process behind.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')

k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"
expect_eq local "$(k get node "$NODE" -o jsonpath='{.metadata.labels.volray\.io/runtime}')" "local runtime label"
expect_eq "$(nproc)" "$(k get node "$NODE" -o jsonpath='{.status.capacity.cpu}')" "capacity cpu = nproc"
pass "this machine is a Ready node with its CPUs"

k create configmap cfg --from-literal=greeting=hello --from-literal=file.txt=contents >/dev/null
k create secret generic sec --from-literal=password=s3cret >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hello, labels: {app: demo}}
spec:
  nodeName: $NODE
  restartPolicy: Never
  volumes: [{name: v, configMap: {name: cfg}}]
  containers:
  - name: c
    image: busybox
    command: [sh, -c]
    args:
    - |
      echo "\$GREETING from \$MY_POD (\$APP) pw=\$PW x=\$(X)"
      echo to-stderr >&2
      cat "\$VOLRAY_POD_ROOT/etc/cfg/file.txt"; echo
      exit 3
    env:
    - {name: X, value: expanded}
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}
    - {name: PW, valueFrom: {secretKeyRef: {name: sec, key: password}}}
    - {name: MY_POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}
    volumeMounts: [{name: v, mountPath: /etc/cfg}]
YAML
k wait --for=jsonpath='{.status.phase}'=Failed pod/hello --timeout=15s >/dev/null || fail "hello did not end"
expect_eq 3 "$(k get pod hello -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" "exit code"
logs=$(k logs hello)
expect_contains "$logs" "hello from hello (demo) pw=s3cret x=expanded" "env in the process"
expect_contains "$logs" "to-stderr" "stderr in the log"
expect_contains "$logs" "contents" "ConfigMap volume file"
# stdout and stderr are two pipes: their order is the order the shim
# read them in, as with containerd.
expect_eq "$(echo "$logs" | tail -n 1)" "$(k logs hello --tail=1)" "--tail"
pass "a real process: logs (stdout and stderr), exit code, env, ConfigMap volume"

# No command: the local node runs commands, not images. The pod waits as
# one whose image cannot be pulled, ErrImagePull then ImagePullBackOff in
# turn, with a Failed Event; nothing runs, nothing restarts.
k run imageonly --image=nginx --overrides="{\"spec\":{\"nodeName\":\"$NODE\"}}" >/dev/null
k wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=ErrImagePull \
	pod/imageonly --timeout=10s >/dev/null || fail "a pod without a command: $(k get pod imageonly -o jsonpath='{.status}')"
NOCMD="the local node runs a container's command, not its image's entrypoint, and container \"imageonly\" has none"
expect_eq "$NOCMD" "$(k get pod imageonly -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')" \
	"ErrImagePull's message"
wait_event imageonly Failed "$NOCMD"
wait_event imageonly Failed "Error: ErrImagePull"
k wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=ImagePullBackOff \
	pod/imageonly --timeout=10s >/dev/null || fail "no ImagePullBackOff"
expect_eq "Back-off pulling image \"nginx\": $NOCMD" \
	"$(k get pod imageonly -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')" \
	"ImagePullBackOff's message"
expect_contains "$(k get pod imageonly --no-headers)" "ImagePullBackOff" "kubectl get pod's STATUS"
wait_event imageonly BackOff 'Back-off pulling image "nginx"'
# The next "pull", after the first back-off (10 s).
k wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=ErrImagePull \
	pod/imageonly --timeout=20s >/dev/null || fail "ErrImagePull did not come back"
expect_eq "0 Pending" "$(k get pod imageonly -o jsonpath='{.status.containerStatuses[0].restartCount} {.status.phase}')" \
	"restartCount and phase"
expect_eq "" "$(k get pod imageonly -o jsonpath='{.status.containerStatuses[0].lastState.terminated}')" "lastState"
[ -e "$DATA/pods/default/hello/c.log" ] || fail "no log file where a container's process writes it"
[ ! -e "$DATA/pods/default/imageonly/imageonly.log" ] || fail "a process ran for the image-only pod"
k delete pod imageonly --timeout=10s >/dev/null || fail "deleting the image-only pod"
pass "a container without a command: ErrImagePull and ImagePullBackOff with the reason, no crash loop"

# Restarts: OnFailure restarts at once, then backs off; -p shows the last run.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: flaky}
spec:
  nodeName: $NODE
  restartPolicy: OnFailure
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'echo "run at \$(date +%s%N)"; exit 1']}
YAML
k wait --for=jsonpath='{.status.containerStatuses[0].state.waiting.reason}'=CrashLoopBackOff \
	pod/flaky --timeout=10s >/dev/null || fail "no back-off"
expect_eq 1 "$(k get pod flaky -o jsonpath='{.status.containerStatuses[0].restartCount}')" "restartCount"
cur=$(k logs flaky)
prev=$(k logs flaky -p)
expect_contains "$prev" "run at" "previous log"
[ "$cur" != "$prev" ] || fail "the previous log is the current one"
pass "restart with back-off; logs -p shows the previous instance"

# Probes: readiness gates Ready (exec and httpGet), liveness restarts;
# failures are Unhealthy Events, a probe's restart a Killing one.
HPORT=$(free_port)
RPORT=$(free_port)
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'while true; do sleep 0.2; done']
    readinessProbe:
      exec: {command: [sh, -c, 'test -f "\$VOLRAY_POD_ROOT/ready"']}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: python
    command: [python3, -m, http.server, "$HPORT", --bind, 127.0.0.1]
    ports: [{name: http, containerPort: $HPORT}]
    readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 1}
    livenessProbe: {tcpSocket: {port: $HPORT}, periodSeconds: 1, initialDelaySeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: dying}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'while true; do sleep 0.2; done']
    livenessProbe: {exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: refused}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sleep, "600"]
    readinessProbe: {httpGet: {path: /healthz, port: $RPORT}, periodSeconds: 1}
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/gated --timeout=10s >/dev/null || fail "gated not running"
k wait --for=condition=Ready pod/web --timeout=20s >/dev/null || fail "httpGet readiness"
expect_eq False "$(k get pod gated -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" "not ready before the file"
: >"$DATA/pods/default/gated/root/ready"
k wait --for=condition=Ready pod/gated --timeout=10s >/dev/null || fail "exec readiness did not pass"
rm "$DATA/pods/default/gated/root/ready"
k wait --for=condition=Ready=false pod/gated --timeout=10s >/dev/null || fail "readiness did not fail again"
k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/dying --timeout=20s >/dev/null ||
	fail "liveness did not restart the container"
expect_eq 0 "$(k get pod web -o jsonpath='{.status.containerStatuses[0].restartCount}')" "a live web server is not restarted"
wait_event dying Unhealthy "Liveness probe failed: "
wait_event dying Killing "Container c failed liveness probe, will be restarted"
wait_event refused Unhealthy "Readiness probe failed: Get \"http://127.0.0.1:$RPORT/healthz\": dial tcp 127.0.0.1:$RPORT: connect: connection refused"
k delete pod gated web dying refused --grace-period=1 --timeout=20s >/dev/null || fail "deleting probed pods"
pass "probes: exec and httpGet readiness gate Ready, a failing liveness probe restarts, Events say why"

# Graceful deletion: SIGTERM reaches the process, which logs it.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: trap}
spec:
  nodeName: $NODE
  terminationGracePeriodSeconds: 10
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'trap "echo got SIGTERM >> \$VOLRAY_POD_ROOT/../term.txt; exit 0" TERM; echo ready; while true; do sleep 0.1; done']
    lifecycle:
      preStop: {exec: {command: [sh, -c, 'echo preStop >> "\$VOLRAY_POD_ROOT/../term.txt"']}}
YAML
k wait --for=condition=Ready pod/trap --timeout=10s >/dev/null || fail "trap not Ready"
i=0
until k logs trap 2>/dev/null | grep -q ready; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "trap never started"; sleep 0.1
done
k delete pod trap --timeout=20s >/dev/null || fail "delete trap"
expect_eq "preStop
got SIGTERM" "$(cat "$DATA/pods/default/trap/term.txt")" "preStop, then SIGTERM"
pass "graceful deletion: the preStop hook, SIGTERM, the trap ran, then the pod was removed"

# kill -9 of volrayd: the container runs on under its shim, and the next
# volrayd takes it back (readopt.sh tests the rest).
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  nodeName: $NODE
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'exec sleep 1000']}
YAML
k wait --for=condition=Ready pod/sleeper --timeout=10s >/dev/null || fail "sleeper not Ready"
pid=$(cut -d' ' -f1 "$DATA/pods/default/sleeper/c.pid")
kill -0 "$pid" || fail "no sleeper process"
stop_daemon KILL
kill -0 "$pid" 2>/dev/null || fail "the process died with volrayd"
start_daemon
k wait --for=condition=Ready pod/sleeper --timeout=10s >/dev/null || fail "sleeper not Ready after the restart"
pid2=$(cut -d' ' -f1 "$DATA/pods/default/sleeper/c.pid")
shim=$(cut -d' ' -f4 "$DATA/pods/default/sleeper/c.pid")
expect_eq "$pid" "$pid2" "the process after the restart"
kill -0 "$pid2" || fail "the re-adopted process is gone"
pass "kill -9 of volrayd: the process runs on and is taken back at restart"

# SIGTERM to volrayd: nothing stays behind.
stop_daemon
# Killed before volrayd exits; init reaps it a moment later.
i=0
for p in "$pid2" "$shim"; do
	while kill -0 "$p" 2>/dev/null && ! grep -q '^[^ ]* ([^)]*) Z' "/proc/$p/stat" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 40 ] || fail "process $p outlived volrayd's SIGTERM"; sleep 0.05
	done
done
pass "SIGTERM to volrayd leaves no process (the command nor its shim)"
