#!/bin/sh
# Every manifest of KubeRay 1.7's samples (../shared/upstream-samples/
# kuberay-1.7) is accepted unchanged with strict field validation (a
# field the server would drop is an error), among them the kinds added for
# them: v1 PersistentVolumeClaim and PersistentVolume (stored and served,
# Pending: nothing provisions) and the Gateway API's GatewayClass, Gateway
# and HTTPRoute (stored and served, nothing routes), with kubectl's
# columns; a Secret's stringData lands in data.
. "$(dirname "$0")/lib.sh"
need_samples
K17="$SAMPLES/kuberay-1.7"
[ -d "$K17" ] || skip "no $K17: the KubeRay 1.7 samples are not here"
start_daemon

n=0
for f in "$K17"/*.yaml; do
	out=$(k apply --dry-run=server --validate=strict -f "$f" 2>&1) ||
		fail "$(basename "$f") refused: $out"
	n=$((n + 1))
done
[ $n -ge 25 ] || fail "only $n samples found"
pass "all $n KubeRay 1.7 samples apply unchanged, strictly validated"

# --- PersistentVolumeClaims and PersistentVolumes: stored, Pending
k apply -f - >/dev/null <<'YAML' || fail "create a PVC and a PV"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: standard
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  hostPath: {path: /tmp/disk-1}
YAML
expect_eq "Pending|Filesystem|1Gi" \
	"$(k get pvc data -o jsonpath='{.status.phase}|{.spec.volumeMode}|{.spec.resources.requests.storage}')" "the claim"
row=$(k get pvc data --no-headers | tr -s ' ')
expect_contains "$row" "data Pending" "kubectl get pvc"
expect_contains "$row" "standard" "kubectl get pvc's storage class"
row=$(k get pv disk-1 --no-headers | tr -s ' ')
expect_contains "$row" "disk-1 5Gi RWO,ROX Retain Pending" "kubectl get pv"
expect_contains "$(k api-resources --no-headers | tr -s ' ')" "persistentvolumeclaims pvc v1 true PersistentVolumeClaim" "api-resources"
expect_contains "$(k explain pvc.spec 2>&1)" "accessModes" "kubectl explain pvc.spec"
pass "PersistentVolumeClaim and PersistentVolume: stored, Pending, kubectl's columns"

# --- Gateway API kinds
k apply -f "$K17/gateway-api_istio-class.yaml" >/dev/null || fail "apply the GatewayClass sample"
name=$(k get gatewayclass -o jsonpath='{.items[0].metadata.name}')
[ -n "$name" ] || fail "no GatewayClass stored"
expect_contains "$(k get gatewayclass "$name" 2>&1 | head -1)" "CONTROLLER" "kubectl get gatewayclass"
k apply -f - >/dev/null <<YAML || fail "create a Gateway and an HTTPRoute"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: $name
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route}
spec:
  parentRefs: [{name: gw}]
  hostnames: [ray.example.com]
  rules:
  - backendRefs: [{name: a-serve-svc, port: 8000, weight: 90}, {name: b-serve-svc, port: 8000, weight: 10}]
YAML
expect_eq "90 10" "$(k get httproute route -o jsonpath='{.spec.rules[0].backendRefs[*].weight}')" "the HTTPRoute's weights, as written"
expect_contains "$(k get gateway gw --no-headers)" "$name" "kubectl get gateway's class"
expect_eq "gw" "$(k get gateways.v1beta1.gateway.networking.k8s.io gw -o jsonpath='{.metadata.name}')" "the Gateway as v1beta1"
pass "GatewayClass, Gateway and HTTPRoute stored and served (v1 and v1beta1)"

# --- a Secret's stringData
k apply -f - >/dev/null <<'YAML' || fail "create a Secret with stringData"
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData: {token: hello, both: from-string}
data: {both: ZnJvbS1kYXRh, other: b3RoZXI=}
YAML
expect_eq "hello|from-string|other|Opaque|" \
	"$(k get secret s -o jsonpath='{.data.token}' | base64 -d)|$(k get secret s -o jsonpath='{.data.both}' | base64 -d)|$(k get secret s -o jsonpath='{.data.other}' | base64 -d)|$(k get secret s -o jsonpath='{.type}')|$(k get secret s -o jsonpath='{.stringData}')" \
	"the Secret's data"
pass "a Secret's stringData is written into data (and wins), not stored"
