#!/bin/sh
# The daemon starts, serves health, version and discovery, and stock
# kubectl can create, read and delete a Pod through the kubeconfig it wrote.
. "$(dirname "$0")/lib.sh"
start_daemon

expect_eq ok "$(curl -fs "$API/healthz")" "healthz"
curl -fs "$API/version" | grep -q '"minor":"34"' || fail "version"
pass "health and version"

k get ns default -o name | grep -q '^namespace/default$' || fail "default ns"
k get ns kube-system >/dev/null || fail "kube-system ns"
k get queues.scheduling.volcano.sh root default >/dev/null || fail "queues"
pass "bootstrap objects"

cat >"$WORK/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: web}
spec:
  containers:
  - name: c
    image: busybox
    command: ["sleep", "1000"]
YAML
k apply -f "$WORK/pod.yaml" | grep -q 'pod/p1 created' || fail "apply create"
expect_eq Pending "$(k get pod p1 -o jsonpath='{.status.phase}')" "phase"
expect_eq Always "$(k get pod p1 -o jsonpath='{.spec.containers[0].imagePullPolicy}')" "imagePullPolicy default"
k get pods | grep -q '^p1 ' || fail "table get"
k delete pod p1 | grep -q 'pod "p1" deleted' || fail "delete"
k get pod p1 2>&1 | grep -q 'NotFound' || fail "gone after delete"
pass "pod lifecycle"

# kubectl's typed generators send protobuf bodies.
k create namespace gen >/dev/null || fail "create namespace"
k -n gen create configmap c1 --from-literal=a=b >/dev/null || fail "create configmap"
k -n gen create secret generic s1 --from-literal=k=v >/dev/null || fail "create secret"
k -n gen create deployment web --image=nginx --replicas=2 >/dev/null || fail "create deployment"
k create priorityclass hp --value=1000 >/dev/null || fail "create priorityclass"
expect_eq b "$(k -n gen get cm c1 -o jsonpath='{.data.a}')" "configmap data"
expect_eq dg== "$(k -n gen get secret s1 -o jsonpath='{.data.k}')" "secret data"
expect_eq "2 nginx" "$(k -n gen get deploy web -o jsonpath='{.spec.replicas} {.spec.template.spec.containers[0].image}')" "deployment spec"
expect_eq 1000 "$(k get pc hp -o jsonpath='{.value}')" "priorityclass value"
pass "kubectl create generators (protobuf bodies)"

# client-go's typed clients (controller-runtime's for built-in kinds) send a
# DELETE's DeleteOptions in protobuf: "k8s\0" + runtime.Unknown{typeMeta
# {v1, DeleteOptions}, raw}; raw here {propagationPolicy: Orphan} (4) and
# {preconditions: {uid: wrong}} (2).
pbdel() { # PATH RAW_HEX
	python3 - "$1" "$2" <<'PY'
import sys, vrtest
def field(n, b):
    return bytes([n << 3 | 2, len(b)]) + b
tm = field(1, b"v1") + field(2, b"DeleteOptions")
body = b"k8s\0" + field(1, tm) + field(2, bytes.fromhex(sys.argv[2])) + field(3, b"") + field(4, b"")
c = vrtest.https()
c.request("DELETE", sys.argv[1], body, dict(vrtest.HEADERS, **{
    "Content-Type": "application/vnd.kubernetes.protobuf",
    "Accept": "application/json"}))
r = c.getresponse()
print(r.status, r.read().decode())
PY
}
k -n gen create deployment pbdel --image=nginx --replicas=1 >/dev/null || fail "create deployment pbdel"
wait_eq 1 "pbdel's ReplicaSets" sh -c "kubectl -n gen get rs -l app=pbdel -o name | wc -l"
out=$(pbdel /apis/apps/v1/namespaces/gen/deployments/pbdel "$(printf '\042\006Orphan' | od -An -tx1 | tr -d ' \n')")
expect_contains "$out" "200 " "a protobuf DeleteOptions (Orphan)"
k -n gen wait --for=delete deploy/pbdel --timeout=20s >/dev/null || fail "pbdel not deleted"
wait_eq "" "the orphaned ReplicaSet's ownerReferences" \
	kubectl -n gen get rs -l app=pbdel -o jsonpath='{.items[*].metadata.ownerReferences}'
expect_eq 1 "$(k -n gen get rs -l app=pbdel -o name | wc -l)" "pbdel's ReplicaSet orphaned"
k -n gen create configmap pbcm >/dev/null
out=$(pbdel /api/v1/namespaces/gen/configmaps/pbcm "$(printf '\022\007\012\005wrong' | od -An -tx1 | tr -d ' \n')")
expect_contains "$out" "409 " "a protobuf DeleteOptions with a wrong uid precondition"
k -n gen get cm pbcm >/dev/null || fail "pbcm deleted despite its precondition"
pass "a DELETE's protobuf DeleteOptions (propagationPolicy, preconditions) are read"

k explain rayjob.spec.entrypoint | grep -q 'FIELD: *entrypoint <string>' ||
	fail "kubectl explain of a CRD field"
pass "kubectl explain describes custom resources"

# Bodies as kube-apiserver writes them: JSON ending with a newline (a
# stored object's, a list's, a Status's), a Status in Go's field order.
k create configmap nl >/dev/null
for path in /api/v1/namespaces/default/configmaps/nl /api/v1/namespaces/default/configmaps \
    /api/v1/namespaces/default/pods/nope; do
	[ "$(curl -s "$API$path" | tail -c 1 | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "$path: the body does not end with a newline"
done
expect_eq "kind apiVersion metadata status message reason details code" \
	"$(curl -s "$API/api/v1/namespaces/default/pods/nope" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)))')" \
	"a Status's fields in Go's order"
pass "JSON bodies end with a newline; a Status's fields in Go's order"

# DELETE answers as kube-apiserver: a Status of Success for most kinds
# once the object is gone, the object for pods, services and custom
# resources (and for anything finalizers or a grace period keep).
k create configmap gone >/dev/null
uid=$(k get cm gone -o jsonpath='{.metadata.uid}')
expect_eq "Status Success gone configmaps $uid" \
	"$(curl -s -X DELETE "$API/api/v1/namespaces/default/configmaps/gone" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], d["status"], d["details"]["name"], d["details"]["kind"], d["details"]["uid"])')" \
	"DELETE of a ConfigMap"
k create deployment dgone --image=busybox --replicas=0 >/dev/null
expect_eq "Status apps deployments" \
	"$(curl -s -X DELETE "$API/apis/apps/v1/namespaces/default/deployments/dgone" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], d["details"]["group"], d["details"]["kind"])')" \
	"DELETE of a Deployment"
k create configmap held >/dev/null
k patch cm held -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
expect_eq "ConfigMap True" \
	"$(curl -s -X DELETE "$API/api/v1/namespaces/default/configmaps/held" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], "deletionTimestamp" in d["metadata"])')" \
	"DELETE of an object a finalizer holds"
k patch cm held -p '{"metadata":{"finalizers":null}}' >/dev/null
k create service clusterip sgone --tcp=80 >/dev/null
expect_eq Service "$(curl -s -X DELETE "$API/api/v1/namespaces/default/services/sgone" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kind"])')" \
	"DELETE of a Service answers the object"
pass "DELETE answers a Status, or the object where kube-apiserver does"
