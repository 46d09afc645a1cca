#!/bin/sh
# The kinds every cluster serves besides workloads, with stock kubectl:
# NetworkPolicy, Ingress and IngressClass stored and listed (not
# enforced), and their kubectl get columns; EndpointSlices kept for a
# Service (lua/controllers/endpoints.lua) from its pods, with conditions;
# LimitRange defaults and bounds and ResourceQuota limits at admission,
# refused with kube-apiserver's 403 messages, and the quota's status;
# Local APIServices for the served groups; a pod's service account
# defaulted as the ServiceAccount admission plugin does; kubectl explain
# and api-resources for every kind added with them.
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

# --- LimitRange: defaults, then min and max, 403 past them
k create namespace lim >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: lim}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    max: {cpu: "1"}
    min: {cpu: 50m}
YAML
expect_eq "500m 256Mi" "$(k get limitrange lr -n lim -o jsonpath='{.spec.limits[0].defaultRequest.cpu} {.spec.limits[0].defaultRequest.memory}')" "defaultRequest from default"
k run plain -n lim --image=img:1 >/dev/null || fail "a pod within the range"
expect_eq "500m 256Mi 500m 256Mi" "$(k get pod plain -n lim -o jsonpath='{.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.requests.memory} {.spec.containers[0].resources.limits.cpu} {.spec.containers[0].resources.limits.memory}')" "defaults applied"
expect_eq "LimitRanger plugin set: cpu, memory request for container plain; cpu, memory limit for container plain" \
	"$(k get pod plain -n lim -o jsonpath='{.metadata.annotations.kubernetes\.io/limit-ranger}')" "limit-ranger annotation"
out=$(k run big -n lim --image=img:1 --overrides='{"spec":{"containers":[{"name":"big","image":"img:1","resources":{"limits":{"cpu":"2"}}}]}}' 2>&1) &&
	fail "a pod over max was admitted"
expect_contains "$out" 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2' "max refusal"
out=$(k run small -n lim --image=img:1 --overrides='{"spec":{"containers":[{"name":"small","image":"img:1","resources":{"requests":{"cpu":"10m"}}}]}}' 2>&1) &&
	fail "a pod under min was admitted"
expect_contains "$out" 'pods "small" is forbidden: minimum cpu usage per Container is 50m, but request is 10m' "min refusal"
expect_eq "NAME CREATED AT" "$(k get limits -n lim | head -1 | tr -s ' ')" "kubectl get limitranges columns"
pass "LimitRange: defaults into containers, min and max refused with 403"

# --- ResourceQuota: counted at admission, status kept
k create namespace quo >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: quo}
spec:
  hard: {pods: "2", requests.cpu: "1", count/deployments.apps: "1"}
YAML
qused() { k get quota q -n quo -o jsonpath="{.status.used.$1}"; }
wait_eq 0 "status.used.pods" qused pods
expect_eq 2 "$(k get quota q -n quo -o jsonpath='{.status.hard.pods}')" "status.hard"
cpu_pod() { # cpu_pod NAME [CPU]
	k run "$1" -n quo --image=img:1 --overrides="{\"spec\":{\"containers\":[{\"name\":\"$1\",\"image\":\"img:1\"${2:+,\"resources\":{\"requests\":{\"cpu\":\"$2\"\}\}}}]}}" 2>&1
}
cpu_pod a 500m >/dev/null || fail "first pod"
cpu_pod b 500m >/dev/null || fail "second pod"
out=$(cpu_pod c) && fail "a pod without a cpu request admitted under a cpu quota"
expect_contains "$out" 'pods "c" is forbidden: failed quota: q: must specify requests.cpu for: c' "must specify"
out=$(cpu_pod d 100m) && fail "a third pod admitted past pods=2"
expect_contains "$out" 'pods "d" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=100m, used: pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1' "exceeded quota"
wait_eq 2 "status.used.pods" qused pods
expect_eq 1 "$(qused requests\\.cpu)" "status.used requests.cpu"
k create deployment d1 -n quo --image=img:1 --replicas=0 >/dev/null || fail "first deployment"
out=$(k create deployment d2 -n quo --image=img:1 --replicas=0 2>&1) && fail "second deployment admitted"
expect_contains "$out" 'deployments.apps "d2" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1' "count/ quota"
k delete pod a -n quo >/dev/null
cpu_pod e 500m >/dev/null || fail "a pod fits again once one is deleted"
expect_eq "NAME AGE REQUEST LIMIT" "$(k get quota -n quo | head -1 | tr -s ' ')" "kubectl get quota columns"
quota_row() { k get quota q -n quo --no-headers | tr -s ' ' | cut -d' ' -f1,3- | sed 's/ *$//'; }
wait_eq "q count/deployments.apps: 1/1, pods: 2/2, requests.cpu: 1/1" "kubectl get quota row" quota_row
pass "ResourceQuota: exceeded and unspecified refused with 403, status used and hard"

# --- apiregistration.k8s.io APIServices: the served groups, Local
expect_eq "NAME SERVICE AVAILABLE AGE" "$(k get apiservices | head -1 | tr -s ' ')" "kubectl get apiservices columns"
for gv in v1. v1.apps v1.batch v1.policy v1.discovery.k8s.io v1.networking.k8s.io v1beta1.metrics.k8s.io v1.ray.io; do
	expect_eq "$gv Local True" "$(k get apiservice "$gv" --no-headers | tr -s ' ' | cut -d' ' -f1-3)" "APIService $gv"
done
expect_eq "apps v1 Available True" "$(k get apiservice v1.apps -o jsonpath='{.spec.group} {.spec.version} {.status.conditions[0].type} {.status.conditions[0].status}')" "v1.apps object"
out=$(k delete apiservice v1.apps 2>&1) && fail "an APIService was deleted"
expect_contains "$out" "served by this server itself" "a Local APIService cannot be deleted"
pass "APIServices list the served groups, Local and Available, not deletable"

# --- ServiceAccount admission: "default" unless the pod names one
k run sa1 --image=img:1 >/dev/null
expect_eq "default default" "$(k get pod sa1 -o jsonpath='{.spec.serviceAccountName} {.spec.serviceAccount}')" "service account defaulted"
k run sa2 --image=img:1 --overrides='{"spec":{"serviceAccountName":"builder"}}' >/dev/null
expect_eq "builder builder" "$(k get pod sa2 -o jsonpath='{.spec.serviceAccountName} {.spec.serviceAccount}')" "a named service account kept"
pass "pods get serviceAccountName default at admission"

# --- discovery and kubectl explain of the added kinds
res=$(k api-resources --no-headers | tr -s ' ')
for want in "daemonsets ds apps/v1 true DaemonSet" "statefulsets sts apps/v1 true StatefulSet" \
    "cronjobs cj batch/v1 true CronJob" "replicationcontrollers rc v1 true ReplicationController" \
    "poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget" "resourcequotas quota v1 true ResourceQuota" \
    "limitranges limits v1 true LimitRange" "networkpolicies netpol networking.k8s.io/v1 true NetworkPolicy" \
    "ingresses ing networking.k8s.io/v1 true Ingress" "ingressclasses networking.k8s.io/v1 false IngressClass" \
    "endpointslices discovery.k8s.io/v1 true EndpointSlice" "controllerrevisions apps/v1 true ControllerRevision" \
    "apiservices apiregistration.k8s.io/v1 false APIService"; do
	echo "$res" | grep -qx "$want" || fail "api-resources lacks '$want'"
done
expect_eq "GROUP: apps KIND: DaemonSet VERSION: v1 FIELD: updateStrategy <Object>" "$(k explain daemonset.spec.updateStrategy 2>&1 | grep -E '^(GROUP|KIND|VERSION|FIELD):' | tr -s ' ' | tr '\n' ' ' | sed 's/ $//')" "explain ds.spec.updateStrategy"
for f in daemonset.spec statefulset.spec.podManagementPolicy cronjob.spec.schedule replicationcontroller.spec \
    poddisruptionbudget.status.disruptionsAllowed resourcequota.spec.hard limitrange.spec.limits networkpolicy.spec \
    ingress.spec.rules ingressclass.spec.controller endpointslice.endpoints controllerrevision.revision apiservice.spec; do
	k explain "$f" >"$WORK/explain" 2>&1 || fail "kubectl explain $f: $(cat "$WORK/explain")"
	grep -q '^DESCRIPTION:' "$WORK/explain" || fail "kubectl explain $f: $(cat "$WORK/explain")"
done
k explain cronjob.spec | grep -q 'concurrencyPolicy.*<string>' || fail "explain cronjob.spec lists its fields"
pass "kubectl api-resources and explain know every added kind"

# --- kubectl's generators for the added kinds (protobuf bodies)
k create namespace gen >/dev/null
k create cronjob nightly -n gen --image=img:1 --schedule='0 3 * * *' >/dev/null || fail "kubectl create cronjob"
expect_eq "0 3 * * * Allow false" "$(k get cronjob nightly -n gen -o jsonpath='{.spec.schedule} {.spec.concurrencyPolicy} {.spec.suspend}')" "created cronjob"
k create pdb gen-pdb -n gen --selector=app=gen --min-available=50% >/dev/null || fail "kubectl create pdb"
expect_eq "50%" "$(k get pdb gen-pdb -n gen -o jsonpath='{.spec.minAvailable}')" "created pdb"
k create quota gen-q -n gen --hard=pods=5,count/configmaps=3 >/dev/null || fail "kubectl create quota"
expect_eq "5" "$(k get quota gen-q -n gen -o jsonpath='{.spec.hard.pods}')" "created quota"
k create ingress gen-ing -n gen --class=nginx --rule='gen.example.com/api*=api:8080' >/dev/null || fail "kubectl create ingress"
expect_eq "gen.example.com Prefix api 8080" "$(k get ingress gen-ing -n gen -o jsonpath='{.spec.rules[0].host} {.spec.rules[0].http.paths[0].pathType} {.spec.rules[0].http.paths[0].backend.service.name} {.spec.rules[0].http.paths[0].backend.service.port.number}')" "created ingress"
pass "kubectl create cronjob, pdb, quota and ingress"
