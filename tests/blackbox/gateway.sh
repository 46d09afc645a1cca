#!/bin/sh
# Serve's HTTP port and the Gateway data plane on simulated nodes
# (core/ray/jobsapi.c ray_serve_http, core/api/proxy.c gateway_route,
# lua/controllers/gateway.lua), with stock kubectl: every Running pod of a
# cluster whose head has Serve applications answers on port 8000 for the
# application whose route_prefix takes the path (/-/routes, 404 in
# Serve's words otherwise); a Gateway gets a Service of its name whose
# proxy routes by its HTTPRoutes: the longest path match, then backends in
# proportion to their weights (0: never); a route that loops is refused.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null ||
	fail "volray node add"

# Two clusters, each with its Serve applications and a serve Service.
for c in ca cb; do
	k apply -f - >/dev/null <<YAML || fail "cluster $c"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: $c, annotations: {}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      metadata: {annotations: {volray.io/sim-serve-duration: 100ms}}
      spec:
        containers: [{name: ray-head, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 1Gi}}}]
  workerGroupSpecs:
  - groupName: w
    replicas: 1
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-worker, image: "rayproject/ray:2.52.0", resources: {limits: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Service
metadata: {name: $c-serve}
spec:
  selector: {ray.io/cluster: $c}
  ports: [{name: serve, port: 8000, targetPort: 8000}]
YAML
done
for c in ca cb; do
	k wait --for=jsonpath='{.status.state}'=ready "raycluster/$c" --timeout=60s >/dev/null ||
		fail "cluster $c not ready"
	out=$(curl -fsS -X PUT -H 'Content-Type: application/json' \
		"$API/api/v1/namespaces/default/services/$c-head-svc:8265/proxy/api/serve/applications/" \
		-d '{"applications": [{"name": "fruit", "route_prefix": "/fruit", "import_path": "f:app"},
		     {"name": "root", "route_prefix": "/", "import_path": "r:app"}]}') || fail "PUT Serve config on $c: $out"
done
serve() { curl -fsS "$API/api/v1/namespaces/default/services/$1/proxy$2"; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
i=0
until [ "$(serve ca-serve:8000 /fruit/apple 2>/dev/null | field application 2>/dev/null)" = fruit ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "ca does not serve /fruit: $(serve ca-serve:8000 /fruit/apple 2>&1)"
	sleep 0.1
done
expect_eq "ca|/fruit" "$(serve ca-serve:8000 /fruit/apple | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cluster"]+"|"+d["route_prefix"])')" \
	"Serve on a pod of ca"
expect_eq root "$(serve ca-serve:8000 /other | field application)" "the / application takes the rest"
expect_contains "$(serve ca-serve:8000 /-/routes)" '"/fruit":"fruit"' "/-/routes"
wpod=$(k get pods -l ray.io/cluster=ca,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')
expect_eq "$wpod" "$(curl -fsS "$API/api/v1/namespaces/default/pods/$wpod:8000/proxy/fruit" | field pod)" \
	"a worker pod answers on 8000"
pass "Serve's HTTP port on every pod of a cluster with applications"

# A Gateway, routes with weights and paths.
k apply -f - >/dev/null <<'YAML' || fail "Gateway and routes"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: volray
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /fruit}}]
    backendRefs: [{name: ca-serve, port: 8000, weight: 3}, {name: cb-serve, port: 8000, weight: 1}]
  - matches: [{path: {type: PathPrefix, value: /fruit/only-b}}]
    backendRefs: [{name: ca-serve, port: 8000, weight: 0}, {name: cb-serve, port: 8000, weight: 5}]
YAML
k wait --for=condition=Programmed gateway/gw --timeout=20s >/dev/null || fail "Gateway not Programmed"
expect_eq "gw.default.svc.cluster.local" "$(k get gateway gw -o jsonpath='{.status.addresses[0].value}')" "Gateway address"
i=0
until k get svc gw >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no Service for the Gateway"
	sleep 0.1
done
a=0 b=0 n=0
while [ $n -lt 80 ]; do
	case "$(serve gw:80 /fruit/x | field cluster)" in
	ca) a=$((a + 1)) ;;
	cb) b=$((b + 1)) ;;
	*) fail "a request through the Gateway went nowhere" ;;
	esac
	n=$((n + 1))
done
[ $b -gt 0 ] && [ $a -gt $b ] || fail "weights 3:1 gave ca $a, cb $b"
n=0
while [ $n -lt 20 ]; do
	expect_eq cb "$(serve gw:80 /fruit/only-b/y | field cluster)" "the longer match, weight 0 never chosen"
	n=$((n + 1))
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/namespaces/default/services/gw:80/proxy/vegetables")
expect_eq 404 "$code" "no rule takes the path"
pass "Gateway Service: weights 3:1 gave ca $a and cb $b of 80; the longest match wins; weight 0 never"

k apply -f - >/dev/null <<'YAML' || fail "loop route"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: loop}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /loop}}]
    backendRefs: [{name: gw, port: 80}]
YAML
code=$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/namespaces/default/services/gw:80/proxy/loop")
expect_eq 508 "$code" "a route to its own Gateway"
pass "a looping route is refused (508)"
