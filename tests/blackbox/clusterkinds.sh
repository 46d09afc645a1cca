#!/bin/sh
# The kinds every cluster serves besides workloads, with stock kubectl:
# NetworkPolicy, Ingress and IngressClass stored and listed (not
# enforced), and their kubectl get columns.
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
