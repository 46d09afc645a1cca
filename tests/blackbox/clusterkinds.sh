#!/bin/sh
# The kinds every cluster serves besides workloads, with stock kubectl:
# NetworkPolicy, Ingress and IngressClass stored and listed (not
# enforced), and their kubectl get columns; EndpointSlices kept for a
# Service (lua/controllers/endpoints.lua) from its pods, with conditions.
. "$(dirname "$0")/lib.sh"
start_daemon

# --- networking.k8s.io: stored and served
k apply -f - >/dev/null <<'YAML'
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-db}
spec:
  podSelector: {matchLabels: {app: db}}
  policyTypes: [Ingress]
YAML
expect_eq "NAME CLASS HOSTS ADDRESS PORTS AGE" "$(k get ingress | head -1 | tr -s ' ')" "kubectl get ingress columns"
expect_eq "web nginx web.example.com 80" "$(k get ingress web --no-headers | tr -s ' ' | cut -d' ' -f1-4)" "ingress row"
expect_eq "NAME CONTROLLER PARAMETERS AGE" "$(k get ingressclass | head -1 | tr -s ' ')" "kubectl get ingressclass columns"
expect_eq "nginx k8s.io/ingress-nginx <none>" "$(k get ingressclass nginx --no-headers | tr -s ' ' | cut -d' ' -f1-3)" "ingressclass row"
expect_eq "NAME POD-SELECTOR AGE" "$(k get netpol | head -1 | tr -s ' ')" "kubectl get netpol columns"
expect_eq "deny-db app=db" "$(k get netpol deny-db --no-headers | tr -s ' ' | cut -d' ' -f1-2)" "netpol row"
expect_eq "Prefix" "$(k get ingress web -o jsonpath='{.spec.rules[0].http.paths[0].pathType}')" "stored as sent"
pass "NetworkPolicy, Ingress and IngressClass stored and listed"

# --- discovery.k8s.io EndpointSlices of a Service
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {volray.io/runtime: virtual}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: web}]
YAML
k create deployment web --image=img:1 --replicas=2 --port=8080 >/dev/null
k patch deploy web --type=json -p '[{"op":"add","path":"/spec/template/spec/containers/0/ports/0/name","value":"web"}]' >/dev/null
k rollout status deploy/web --timeout=30s >/dev/null || fail "web ready"
slice_view() {
	k get endpointslices -l kubernetes.io/service-name=web -o jsonpath='{range .items[*]}{.addressType} {range .ports[*]}{.name}={.port} {end}{range .endpoints[*]}{.conditions.ready}{" "}{end}{"\n"}{end}'
}
wait_eq "IPv4 http=8080 true true " "one slice, two ready endpoints" slice_view
sl=$(k get endpointslices -l kubernetes.io/service-name=web -o jsonpath='{.items[0].metadata.name}')
case "$sl" in web-*) ;; *) fail "slice name $sl" ;; esac
expect_eq "Service web endpointslice-controller.k8s.io" "$(k get endpointslice "$sl" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.labels.endpointslice\.kubernetes\.io/managed-by}')" "owner and manager"
ips=$(k get pods -l app=web -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' | sort | tr '\n' ' ')
expect_eq "$ips" "$(k get endpointslice "$sl" -o jsonpath='{range .endpoints[*]}{.addresses[0]}{"\n"}{end}' | sort | tr '\n' ' ')" "the pods' IPs"
expect_eq "NAME ADDRESSTYPE PORTS ENDPOINTS AGE" "$(k get endpointslices | head -1 | tr -s ' ')" "kubectl get endpointslices columns"
expect_eq "$sl IPv4 8080" "$(k get endpointslice "$sl" --no-headers | tr -s ' ' | cut -d' ' -f1-3)" "endpointslice row"
k scale deploy web --replicas=0 >/dev/null
wait_eq "IPv4 " "no pods: one empty slice" slice_view
k delete svc web >/dev/null
gone() { k get endpointslices -l kubernetes.io/service-name=web -o name; }
wait_eq "" "the slices go with their Service" gone
pass "EndpointSlices follow the Service's pods, ready condition and all"
