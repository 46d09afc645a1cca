#!/bin/sh
# The local node as root: every container in a mount namespace of its own
# where its volumes are at their mountPath (KubeRay's samples run
# `python /home/ray/samples/sample_code.py` from a ConfigMap mounted
# there): a missing mount point made on an overlay of its nearest
# ancestor, a missing top-level directory in a root of the container's
# own, readOnly, subPath (a file), hostPath, a PersistentVolumeClaim
# (the node's directory for it); /etc/hosts naming the pod and
# the namespace's Services, resolv.conf with the cluster's search path;
# kubectl exec and exec probes inside the same mounts; the host's files
# never changed.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "mount namespaces need root (volrayd says so at start and keeps volumes under the pod's directory)"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
grep -q "volumes at their mountPath in a mount namespace" "$WORK/volrayd.log" ||
	fail "volrayd did not say it mounts volumes at their mountPath"
TOP=/volray-test-$$
for p in /home/ray "$TOP" /etc/volray-test; do
	[ ! -e "$p" ] || skip "$p exists on this machine: the test would not show the overlay"
done
HOSTDIR="$WORK/hostdir"
mkdir -p "$HOSTDIR"
echo from-the-host >"$HOSTDIR/h.txt"

k create configmap samples --from-literal=sample_code.py='print("hello from the sample")' \
	--from-literal=key=value --from-literal=app.conf=setting=1 >/dev/null
k create service clusterip web --tcp=80:8080 >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: mnt}
spec:
  nodeName: $NODE
  hostname: box
  volumes:
  - {name: s, configMap: {name: samples}}
  - {name: e, emptyDir: {}}
  - {name: h, hostPath: {path: $HOSTDIR}}
  - {name: c, persistentVolumeClaim: {claimName: scratch}}
  containers:
  - name: c
    image: python
    command: [sh, -c, 'python3 /home/ray/samples/sample_code.py; echo scratch >$TOP/f; sleep 3600']
    readinessProbe: {exec: {command: [cat, /etc/volray-test/key]}, periodSeconds: 1}
    volumeMounts:
    - {name: s, mountPath: /home/ray/samples}
    - {name: s, mountPath: /etc/volray-test, readOnly: true}
    - {name: s, mountPath: /opt/app.conf, subPath: app.conf}
    - {name: e, mountPath: $TOP}
    - {name: h, mountPath: /mnt/volray-host-$$}
    - {name: c, mountPath: /mnt/claim-$$}
YAML
k wait --for=condition=Ready pod/mnt --timeout=30s >/dev/null ||
	fail "pod mnt not Ready (the exec probe reads a mounted file): $(k get pod mnt -o jsonpath='{.status.containerStatuses[0].state}')"
# Ready says the probe read a mounted file, not that python has printed
# yet (under load it may not have): wait for its line.
wait_eq "hello from the sample" "a ConfigMap at /home/ray/samples runs" k logs mnt
pass "volumes at their mountPath: the sample runs, an exec probe reads one"

expect_eq value "$(k exec mnt -- cat /etc/volray-test/key)" "exec sees the mounts"
expect_eq "setting=1" "$(k exec mnt -- cat /opt/app.conf)" "subPath: one file"
expect_eq scratch "$(k exec mnt -- cat $TOP/f)" "a top-level emptyDir"
expect_eq from-the-host "$(k exec mnt -- cat /mnt/volray-host-$$/h.txt)" "hostPath"
err=$(k exec mnt -- sh -c 'echo x >/etc/volray-test/new' 2>&1 || true)
expect_contains "$err" "Read-only file system" "readOnly"
k exec mnt -- sh -c 'echo from-the-pod >/mnt/volray-host-'$$'/p.txt'
expect_eq from-the-pod "$(cat "$HOSTDIR/p.txt")" "hostPath writes reach the host"
k exec mnt -- ls /usr/bin/env >/dev/null || fail "the host's files are there too"
# A claim is the node's directory for it: a second pod with the same
# claim reads what the first wrote, and it outlives both.
k exec mnt -- sh -c 'echo kept >/mnt/claim-'$$'/c.txt'
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: mnt2}
spec:
  nodeName: $NODE
  restartPolicy: Never
  volumes: [{name: c, persistentVolumeClaim: {claimName: scratch}}]
  containers:
  - {name: c, image: busybox, command: [cat, /data/c.txt], volumeMounts: [{name: c, mountPath: /data}]}
YAML
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/mnt2 --timeout=30s >/dev/null ||
	fail "mnt2 did not read the claim: $(k get pod mnt2 -o jsonpath='{.status.phase}') $(k logs mnt2 2>&1)"
expect_eq kept "$(k logs mnt2)" "a claim shared by two pods of the node"
k delete pod mnt2 --wait=true --timeout=30s >/dev/null
pass "exec in the mounts: readOnly, subPath, a top-level emptyDir, hostPath, a claim"

hosts=$(k exec mnt -- cat /etc/hosts)
ip=$(k get svc web -o jsonpath='{.spec.clusterIP}')
expect_contains "$hosts" "$ip	web web.default web.default.svc web.default.svc.cluster.local" "a Service's names"
expect_contains "$hosts" "box" "the pod's hostname"
expect_contains "$(k exec mnt -- cat /etc/resolv.conf)" "search default.svc.cluster.local svc.cluster.local cluster.local" "resolv.conf"
pass "/etc/hosts and resolv.conf are the pod's"

for p in /home/ray "$TOP" /etc/volray-test /opt/app.conf "/mnt/volray-host-$$" "/mnt/claim-$$"; do
	[ ! -e "$p" ] || fail "the host gained $p"
done
k delete pod mnt --wait=true --timeout=30s >/dev/null
for p in /home/ray "$TOP" /etc/volray-test; do
	[ ! -e "$p" ] || fail "the host has $p after the pod"
done
pass "the host's files never changed"
