#!/bin/sh
# kubectl exec, attach and cp into the local node's pods, over the WebSocket
# protocol kubectl 1.30+ speaks (v5.channel.k8s.io): stdout and stderr
# apart, the exit code, stdin, a TTY with its size, the container's
# environment and working directory; kubectl cp both ways; the process
# killed when the client goes; kube-apiserver's refusals (no such
# container, a completed pod, a simulated node's pod, RBAC's create on
# pods/exec); and the official Python client's stream module (v4).
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
cat >"$WORK/tokens.csv" <<'EOF'
alice-token,alice,1001,
EOF
start_daemon --token-auth-file "$WORK/tokens.csv"
NODE=$(hostname | tr 'A-Z' 'a-z')

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: sh}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: busybox
    command: [sleep, "3600"]
    workingDir: work
    env: [{name: FOO, value: bar}]
  - {name: d, image: busybox, command: [sleep, "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["true"]}]
YAML
k wait --for=condition=Ready pod/sh --timeout=30s >/dev/null || fail "pod sh not Ready"

# Output apart, the exit code, the environment and working directory.
rc=0
k exec sh -c c -- sh -c 'echo "out $FOO"; pwd; echo err >&2; exit 3' \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq 3 "$rc" "exit code through the error channel"
expect_eq "out bar" "$(sed -n 1p "$WORK/out")" "stdout with the container's env"
expect_contains "$(sed -n 2p "$WORK/out")" "/pods/default/sh/root/work" "workingDir"
expect_contains "$(cat "$WORK/err")" "err" "stderr apart"
expect_contains "$(cat "$WORK/err")" "command terminated with exit code 3" "kubectl's words"
k exec sh -c d -- true || fail "exit 0 is success"
pass "exec: stdout, stderr, exit code, env, workingDir"

# stdin, to its end.
expect_eq "3 abc" "$(printf 'abc\ndef\nabc\n' | k exec -i sh -c d -- sh -c 'echo $(wc -l) abc')" "stdin"
pass "exec -i: stdin reaches the process, EOF ends it"

# A TTY (kubectl wants -i with -t): the process has a terminal, of the client's size.
got=$(script -qec "stty cols 91 rows 27; kubectl exec -it sh -c d -- sh -c 'tty; stty size; exit 5'" /dev/null </dev/null | tr -d '\r')
expect_contains "$got" "/dev/pts/" "a terminal"
expect_contains "$got" "27 91" "the terminal's size"
expect_contains "$got" "command terminated with exit code 5" "exit code with a TTY"
pass "exec -it: a pseudo-terminal of the client's size"

# kubectl cp both ways (exec of tar), 3 MB.
head -c 3000000 /dev/urandom >"$WORK/big.bin"
k cp "$WORK/big.bin" sh:big.bin -c d || fail "kubectl cp to the pod"
k cp sh:big.bin "$WORK/back.bin" -c d || fail "kubectl cp from the pod"
cmp -s "$WORK/big.bin" "$WORK/back.bin" || fail "cp round trip differs"
pass "kubectl cp: 3 MB there and back"

# A command that is not there: the runtime's error, not an exit code.
err=$(k exec sh -c d -- no-such-command-xyz 2>&1 || true)
expect_contains "$err" '"no-such-command-xyz": executable file not found in $PATH' "exec failure"
pass "exec of a missing command: kubelet's error"

# The client goes away: the process goes too.
kubectl exec sh -c d -- sleep 4242 &
kpid=$!
wait_eq 1 "exec'd process running" sh -c 'pgrep -fc "^sleep 4242$"'
kill "$kpid"
wait "$kpid" 2>/dev/null || true
wait_eq 0 "exec'd process killed with its client" sh -c 'pgrep -fc "^sleep 4242$" || true'
pass "exec: the process ends when the client leaves"

# kubectl attach: the container's own output from now on, and its stdin
# (spec.stdin) through the FIFO its shim made; it ends with the instance.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    stdin: true
    command: [sh, -c, 'while read l; do echo "got \$l"; echo "err \$l" >&2; [ "\$l" = quit ] && exit 0; done']
YAML
k wait --for=condition=Ready pod/talker --timeout=30s >/dev/null || fail "pod talker not Ready"
out=$( (printf 'hello\n'; sleep 1; printf 'quit\n') | timeout 20 kubectl attach -i talker 2>"$WORK/aerr") ||
	fail "attach: $(cat "$WORK/aerr")"
expect_eq "got hello
got quit" "$out" "attach: stdout of what stdin sent"
expect_contains "$(cat "$WORK/aerr")" "err quit" "attach: stderr apart"
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/talker --timeout=20s >/dev/null ||
	fail "the attached container did not end with its input"
pass "attach -i: the container's stdin, stdout and stderr; the end with it"

# kube-apiserver's refusals.
err=$(k exec sh -c nope -- true 2>&1 || true)
expect_contains "$err" "container nope is not valid for pod sh" "unknown container"
code=$(curl -s -o "$WORK/body" -w '%{http_code}' -X POST "$API/api/v1/namespaces/default/pods/sh/exec?command=true&stdout=1")
expect_eq 400 "$code" "no container named, two in the pod"
expect_contains "$(cat "$WORK/body")" "a container name must be specified for pod sh, choose one of: [c d]" "which container"
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/done --timeout=30s >/dev/null
err=$(k exec done -- true 2>&1 || true)
expect_contains "$err" "cannot exec into a container in a completed pod; current phase is Succeeded" "completed pod"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: sim1, labels: {volray.io/runtime: virtual}}
---
apiVersion: v1
kind: Pod
metadata: {name: simpod}
spec:
  nodeName: sim1
  containers: [{name: c, image: busybox}]
YAML
k wait --for=condition=Ready pod/simpod --timeout=30s >/dev/null
err=$(k exec simpod -- true 2>&1 || true)
expect_contains "$err" "runs on the simulated node sim1: it has no process to exec in" "simulated pod"
# alice may read pods (kubectl reads the pod first), not exec into them.
k create role podreader --verb=get,list --resource=pods >/dev/null
k create rolebinding alice-reads --role=podreader --user=alice >/dev/null
err=$(k --token=alice-token exec sh -c d -- true 2>&1 || true)
expect_contains "$err" 'User "alice" cannot create resource "pods/exec" in API group "" in the namespace "default"' "RBAC create pods/exec"
pass "exec refusals: container, completed pod, simulated node, RBAC"

# kubectl debug's ephemeral containers are not supported: kubectl says so
# (it reads kube-apiserver's 404 with empty details), it does not crash.
err=$(k debug sh --image=busybox -- true 2>&1 || true)
expect_contains "$err" "ephemeral containers are disabled for this cluster" "kubectl debug"
pass "kubectl debug: ephemeral containers refused with kubectl's clear error"

# kubectl debug --copy-to creates the copy with a protobuf body.
k debug sh --image=busybox --copy-to=shcopy --container=dbg -- sleep 3600 >/dev/null 2>&1 ||
	fail "kubectl debug --copy-to: $(k debug sh --image=busybox --copy-to=shcopy2 -- true 2>&1)"
expect_eq "c d dbg" "$(k get pod shcopy -o jsonpath='{.spec.containers[*].name}')" "the copy's containers"
expect_eq "work bar" "$(k get pod shcopy -o jsonpath='{.spec.containers[0].workingDir} {.spec.containers[0].env[0].value}')" "the copy's fields"
pass "kubectl debug --copy-to: a protobuf Pod, its fields kept"

# The official Python client: stream() over v4.channel.k8s.io. Without
# it the test ends skipped here (the checks above ran and passed).
PY=/usr/bin/python3
"$PY" -c 'import kubernetes' 2>/dev/null ||
	skip "python3-kubernetes is not installed (scripts/deps.sh installs it): the Python client's exec not checked"
"$PY" - <<'PY' || fail "python client exec"
import os, sys
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
out = stream(core.connect_get_namespaced_pod_exec, "sh", "default",
             container="c", command=["sh", "-c", "echo py $FOO"],
             stderr=True, stdin=False, stdout=True, tty=False)
if out.strip() != "py bar":
    sys.exit("stream output: %r" % out)
resp = stream(core.connect_get_namespaced_pod_exec, "sh", "default",
              container="d", command=["sh", "-c", "cat; exit 7"],
              stderr=True, stdin=True, stdout=True, tty=False,
              _preload_content=False)
resp.write_stdin("from python\n")
resp.update(timeout=5)
got = ""
import time
deadline = time.time() + 10
while resp.is_open() and time.time() < deadline:
    resp.update(timeout=1)
    if resp.peek_stdout():
        got += resp.read_stdout()
    if "from python" in got:
        break
resp.close()
if "from python" not in got:
    sys.exit("stdin echoed: %r" % got)
resp = stream(core.connect_get_namespaced_pod_exec, "sh", "default",
              container="d", command=["sh", "-c", "exit 7"],
              stderr=True, stdin=False, stdout=True, tty=False,
              _preload_content=False)
resp.run_forever(timeout=10)
if resp.returncode != 7:
    sys.exit("returncode: %r" % resp.returncode)
PY
pass "python client: exec with stream()"
