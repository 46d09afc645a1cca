#!/bin/sh
# Service-account tokens in pods, as kube-apiserver's ServiceAccount
# admission and the kubelet give them (volrayd(8), SERVICE ACCOUNT
# TOKENS): a new pod gets the kube-api-access-XXXXX projected volume (a
# token, the cluster's CA from the namespace's kube-root-ca.crt ConfigMap,
# the namespace) mounted read-only at
# /var/run/secrets/kubernetes.io/serviceaccount in every container and
# init container, unless the pod or its ServiceAccount says
# automountServiceAccountToken: false, the account does not exist, or a
# container already mounts that directory; every namespace has a kube-root-ca.crt holding the API's CA,
# made again when deleted or changed. As root on the local node with the
# pod network, a process in a pod reaches the API as
# system:serviceaccount:NS:SA with the files alone (in-cluster config:
# KUBERNETES_SERVICE_HOST, the token, ca.crt verifying the certificate),
# and after a kill -9 of volrayd the re-adopted pod's token file holds a
# token the new daemon accepts.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
PATH=$PATH:/usr/sbin:/sbin
# The pod network, for the in-cluster part (root, ip and nft).
NET=""
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 &&
    command -v nft >/dev/null 2>&1 && ip netns list >/dev/null 2>&1; then
	NET="--pod-network=namespaces --pod-cidr 10.252.0.0/24"
fi
# shellcheck disable=SC2086
start_daemon $NET
NODE=$(hostname | tr 'A-Z' 'a-z')
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount

# Every namespace's kube-root-ca.crt: the API's CA.
k create namespace team >/dev/null
wait_eq "$(cat "$CA")" "team's kube-root-ca.crt" \
	k get configmap kube-root-ca.crt -n team -o jsonpath='{.data.ca\.crt}'
k get configmap kube-root-ca.crt -n team -o jsonpath='{.metadata.annotations}' |
	grep -q 'Contains a CA bundle' || fail "kube-root-ca.crt's description"
k delete configmap kube-root-ca.crt -n team >/dev/null
wait_eq "$(cat "$CA")" "kube-root-ca.crt made again" \
	k get configmap kube-root-ca.crt -n team -o jsonpath='{.data.ca\.crt}'
k patch configmap kube-root-ca.crt -n team --type=merge -p '{"data":{"ca.crt":"x"}}' >/dev/null
wait_eq "$(cat "$CA")" "kube-root-ca.crt put back" \
	k get configmap kube-root-ca.crt -n team -o jsonpath='{.data.ca\.crt}'
pass "every namespace has kube-root-ca.crt with the API's CA, kept"

# The volume and its mounts (admission; a simulated pod is enough).
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  initContainers:
  - {name: i, image: busybox, command: [sh, -c, "true"]}
  containers:
  - {name: a, image: busybox, command: [sleep, "1"]}
  - {name: b, image: busybox, command: [sleep, "1"]}
YAML
vol=$(k get pod plain -o jsonpath='{.spec.volumes[0].name}')
case "$vol" in kube-api-access-?????) ;; *) fail "the token volume's name: $vol" ;; esac
expect_eq "default" "$(k get pod plain -o jsonpath='{.spec.serviceAccountName}')" "serviceAccountName"
expect_eq "3607 token kube-root-ca.crt ca.crt namespace metadata.namespace" \
	"$(k get pod plain -o jsonpath='{.spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds} {.spec.volumes[0].projected.sources[0].serviceAccountToken.path} {.spec.volumes[0].projected.sources[1].configMap.name} {.spec.volumes[0].projected.sources[1].configMap.items[0].path} {.spec.volumes[0].projected.sources[2].downwardAPI.items[0].path} {.spec.volumes[0].projected.sources[2].downwardAPI.items[0].fieldRef.fieldPath}')" \
	"the projected sources"
for c in initContainers containers; do
	for m in $(k get pod plain -o jsonpath="{range .spec.$c[*]}{.volumeMounts[0].name}:{.volumeMounts[0].mountPath}:{.volumeMounts[0].readOnly}{\"\\n\"}{end}"); do
		expect_eq "$vol:$SA_DIR:true" "$m" "a mount in $c"
	done
done
pass "a new pod gets $vol mounted read-only at $SA_DIR in every container"

# Turned off by the pod, by its ServiceAccount, or by a mount of its own.
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: quiet}
automountServiceAccountToken: false
---
apiVersion: v1
kind: Pod
metadata: {name: unmounted}
spec:
  automountServiceAccountToken: false
  containers:
  - {name: a, image: busybox, command: [sleep, "1"]}
---
apiVersion: v1
kind: Pod
metadata: {name: quiet}
spec:
  serviceAccountName: quiet
  containers:
  - {name: a, image: busybox, command: [sleep, "1"]}
---
apiVersion: v1
kind: Pod
metadata: {name: ghost}
spec:
  serviceAccountName: ghost
  containers:
  - {name: a, image: busybox, command: [sleep, "1"]}
---
apiVersion: v1
kind: Pod
metadata: {name: own}
spec:
  volumes:
  - {name: mine, emptyDir: {}}
  containers:
  - name: a
    image: busybox
    command: [sleep, "1"]
    volumeMounts: [{name: mine, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]
YAML
expect_eq "" "$(k get pod unmounted -o jsonpath='{.spec.volumes}')" "the pod that said false"
expect_eq "" "$(k get pod quiet -o jsonpath='{.spec.volumes}')" "the pod whose account said false"
expect_eq "" "$(k get pod ghost -o jsonpath='{.spec.volumes}')" "the pod whose account does not exist"
expect_eq "mine" "$(k get pod own -o jsonpath='{.spec.volumes[*].name}')" "the pod with its own mount"
pass "automountServiceAccountToken: false (pod or account), an account that does not exist, a mount of its own: no token volume"

# In-cluster config from a pod on the pod network (root only).
[ -n "$NET" ] || skip "not root, or no ip/nft/netns: no pod network for the in-cluster part"
PY=$(command -v python3)
k create rolebinding view --clusterrole=view --serviceaccount=team:default -n team >/dev/null
k apply -n team -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: $NODE
  containers:
  - name: c
    image: python
    command:
    - $PY
    - -c
    - |
      import json, os, ssl, sys, time, urllib.request, urllib.error
      d = "$SA_DIR"
      ns = open(d + "/namespace").read()
      url = "https://%s:%s/api/v1/namespaces/%s/pods" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], ns)
      ctx = ssl.create_default_context(cafile=d + "/ca.crt")
      while True:
          r = urllib.request.Request(url, headers={"Authorization": "Bearer " + open(d + "/token").read()})
          try:
              out = "%d %s" % (200, ",".join(p["metadata"]["name"] for p in json.load(urllib.request.urlopen(r, context=ctx, timeout=5))["items"]))
          except urllib.error.HTTPError as e:
              out = "%d %s" % (e.code, json.load(e).get("message", ""))
          except Exception as e:
              out = "error %s" % e
          print(out, flush=True)
          time.sleep(0.5)
YAML
k wait -n team --for=condition=Ready pod/client --timeout=30s >/dev/null || fail "the client pod is not Ready"
wait_eq "200 client" "the pod's list of its namespace's pods through the kubernetes Service" \
	sh -c "kubectl --request-timeout=20s logs -n team client --tail=1"
k delete rolebinding view -n team >/dev/null
wait_eq '403 pods is forbidden: User "system:serviceaccount:team:default" cannot list resource "pods" in API group "" in the namespace "team"' \
	"the pod's identity once its RoleBinding is gone" \
	sh -c "kubectl --request-timeout=20s logs -n team client --tail=1"
pass "a pod on the pod network reaches the API with its token, its CA and its namespace alone, as system:serviceaccount:team:default"

# A kill -9: the next volrayd writes a token it accepts into the pod it
# takes back (the old daemon's tokens are gone with it).
old=$(cat "$DATA/pods/team/client/root$SA_DIR/token")
stop_daemon KILL
# shellcheck disable=SC2086
start_daemon $NET
k wait -n team --for=condition=Ready pod/client --timeout=30s >/dev/null || fail "the client pod after the restart"
new=$(cat "$DATA/pods/team/client/root$SA_DIR/token")
[ "$old" != "$new" ] || fail "the token file was not written again"
k create rolebinding view --clusterrole=view --serviceaccount=team:default -n team >/dev/null
wait_eq "200 client" "the pod's list after the restart" \
	sh -c "kubectl --request-timeout=20s logs -n team client --tail=1"
pass "after a kill -9 of volrayd the re-adopted pod's token is renewed and accepted"
