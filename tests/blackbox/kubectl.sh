#!/bin/sh
# Stock kubectl against volrayd: apply (create, then update) of built-in
# kinds, a CRD and its custom resources; get in its output forms; watch;
# describe with events; the three patch types and the status subresource;
# wait; delete with finalizers and cascading owners; server-side apply.
. "$(dirname "$0")/lib.sh"
start_daemon

cat >"$WORK/app.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        env:
        - {name: MODE, value: one}
        - {name: KEEP, value: kept}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {port: 80, targetPort: 8080}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: pi, image: perl, command: [perl, -e, "print 1"]}
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  labels: {app: solo}
spec:
  containers:
  - {name: main, image: busybox, command: [sleep, "3600"]}
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {zone: z1}   # no runtime serves it: pods stay Pending
YAML

# --- apply: create, then update
out=$(k apply -f "$WORK/app.yaml")
for o in deployment.apps/web service/web job.batch/pi pod/solo node/node-a; do
	expect_contains "$out" "$o created" "apply create"
done
sed -e 's/replicas: 2/replicas: 3/' -e 's/value: one/value: two/' \
	"$WORK/app.yaml" >"$WORK/app2.yaml"
out=$(k apply -f "$WORK/app2.yaml")
expect_contains "$out" "deployment.apps/web configured" "apply update"
expect_contains "$out" "service/web unchanged" "apply no-op"
expect_eq 3 "$(k get deploy web -o jsonpath='{.spec.replicas}')" "replicas after apply"
expect_eq "two kept" "$(k get deploy web -o jsonpath='{.spec.template.spec.containers[0].env[*].value}')" "env merged by name"
expect_eq 2 "$(k get deploy web -o jsonpath='{.metadata.generation}')" "generation bumped once"
expect_eq 8080 "$(k get svc web -o jsonpath='{.spec.ports[0].targetPort}')" "service port"
pass "apply create and update of Deployment, Service, Job, Pod, Node"

# --- Services as on a cluster: an empty load balancer status; the
# kubernetes Service in default to the API's port; cluster IPs not shared.
expect_eq '{"loadBalancer":{}}' "$(k get svc web -o jsonpath='{.status}')" "a Service's status"
expect_eq "10.96.0.1 443 $PORT apiserver" \
	"$(k get svc kubernetes -o jsonpath='{.spec.clusterIP} {.spec.ports[0].port} {.spec.ports[0].targetPort} {.metadata.labels.component}')" \
	"the kubernetes Service"
# targetPort absent, 0 (client-go's unset IntOrString, as KubeRay sends
# it) or "": the port, as kube-apiserver defaults it.
curl -fs -XPOST "$API/api/v1/namespaces/default/services" -H 'Content-Type: application/json' -d \
	'{"apiVersion":"v1","kind":"Service","metadata":{"name":"tp"},"spec":{"clusterIP":"None","ports":[{"name":"a","port":8265,"targetPort":0},{"name":"b","port":6379,"targetPort":""},{"name":"c","port":10001}]}}' \
	>/dev/null || fail "create Service tp"
expect_eq "8265 6379 10001" "$(k get svc tp -o jsonpath='{.spec.ports[*].targetPort}')" \
	"targetPorts 0, \"\" and absent"
k delete svc tp >/dev/null
ips=$(k get svc -A -o jsonpath='{range .items[*]}{.spec.clusterIP}{"\n"}{end}' | grep -v None)
expect_eq "$(echo "$ips" | wc -l)" "$(echo "$ips" | sort -u | wc -l)" "cluster IPs are distinct"
webip=$(k get svc web -o jsonpath='{.spec.clusterIP}')
err=$(k create service clusterip taken --tcp=80 --clusterip="$webip" 2>&1) && fail "a cluster IP in use was taken twice"
expect_contains "$err" "failed to allocate IP $webip: provided IP is already allocated" "a cluster IP in use"
err=$(k create service clusterip away --tcp=80 --clusterip=10.0.0.7 2>&1) && fail "a cluster IP out of range was taken"
expect_contains "$err" "does not match the current range" "a cluster IP out of range"
k create service clusterip mine --tcp=80 --clusterip=10.96.200.7 >/dev/null || fail "a free cluster IP in range"
expect_eq 10.96.200.7 "$(k get svc mine -o jsonpath='{.spec.clusterIP}')" "the cluster IP asked for"
k delete svc mine >/dev/null
pass "Services: status.loadBalancer, the kubernetes Service, distinct cluster IPs, one asked for checked"

# --- every namespace has a default ServiceAccount, made again if deleted
k create namespace team-sa >/dev/null
sa() { k get sa default -n "$1" -o jsonpath='{.metadata.name}' 2>/dev/null; }
wait_eq default "the new namespace's default ServiceAccount" sa team-sa
expect_eq default "$(sa default)" "default's default ServiceAccount"
uid=$(k get sa default -n team-sa -o jsonpath='{.metadata.uid}')
k delete sa default -n team-sa >/dev/null
newuid() { k get sa default -n team-sa -o jsonpath='{.metadata.uid}' 2>/dev/null; }
i=0
until [ -n "$(newuid)" ] && [ "$(newuid)" != "$uid" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the deleted default ServiceAccount was not made again"
	sleep 0.1
done
k delete namespace team-sa --wait=true --timeout=20s >/dev/null || fail "delete the namespace"
pass "a default ServiceAccount in every namespace, made again when deleted"

# --- a CRD and its custom resources
cat >"$WORK/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              color: {type: string, enum: [red, blue], default: red}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
YAML
k apply -f "$WORK/crd.yaml" | grep -q 'created' || fail "CRD apply"
k wait --for=condition=Established crd/widgets.example.com --timeout=10s >/dev/null ||
	fail "CRD established"
cat >"$WORK/w.yaml" <<'YAML'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {team: a}}
spec: {size: 3}
YAML
k apply -f "$WORK/w.yaml" | grep -q 'widget.example.com/w1 created' || fail "CR create"
expect_eq red "$(k get wg w1 -o jsonpath='{.spec.color}')" "CR default applied"
sed 's/size: 3/size: 4/' "$WORK/w.yaml" | k apply -f - | grep -q configured || fail "CR update"
expect_eq 4 "$(k get widget w1 -o jsonpath='{.spec.size}')" "CR updated"
if out=$(sed 's/size: 3/size: 99/' "$WORK/w.yaml" | k apply -f - 2>&1); then
	fail "schema violation accepted"
fi
expect_contains "$out" "spec.size" "422 names the field"
expect_eq 4 "$(k get widget w1 -o jsonpath='{.spec.size}')" "rejected write changed nothing"
# kubectl asks for fieldValidation=Strict: an unknown field is refused as
# kube-apiserver refuses it; with --validate=false it is pruned.
if out=$(sed 's/size: 3/size: 4, shape: round/' "$WORK/w.yaml" | k apply -f - 2>&1); then
	fail "an unknown field passed Strict"
fi
expect_contains "$out" 'strict decoding error: unknown field "spec.shape"' "Strict names the unknown field"
sed 's/size: 3/size: 4, shape: round/' "$WORK/w.yaml" | k apply --validate=false -f - >/dev/null ||
	fail "--validate=false"
expect_eq "4|" "$(k get widget w1 -o jsonpath='{.spec.size}|{.spec.shape}')" "without Strict the unknown field is pruned"
# --validate=warn (fieldValidation=Warn, the server's default): pruned, and
# kubectl prints kube-apiserver's Warning header.
out=$(sed 's/size: 3/size: 4, shape: round, edge: soft/' "$WORK/w.yaml" | k apply --validate=warn -f - 2>&1) ||
	fail "--validate=warn: $out"
expect_contains "$out" 'Warning: unknown field "spec.edge"' "Warn names the first unknown field"
expect_contains "$out" 'Warning: unknown field "spec.shape"' "and the second"
expect_eq "4|" "$(k get widget w1 -o jsonpath='{.spec.size}|{.spec.shape}')" "under Warn the unknown field is pruned"
k get widgets | grep -q '^w1 *4 ' || fail "printer columns: $(k get widgets)"
pass "CRD, custom resources, schema validation, printer columns"

# Unknown fields in metadata are dropped, said under Warn, refused under
# Strict, as kube-apiserver's decoder does for every kind.
cat >"$WORK/md.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: md, foo: bar}
data: {a: "1"}
YAML
out=$(k apply -f "$WORK/md.yaml" 2>&1) && fail "an unknown metadata field passed Strict"
expect_contains "$out" 'strict decoding error: unknown field "metadata.foo"' "Strict names the metadata field"
out=$(k apply --validate=warn -f "$WORK/md.yaml" 2>&1) || fail "--validate=warn: $out"
expect_contains "$out" 'Warning: unknown field "metadata.foo"' "Warn names the metadata field"
expect_eq "1|" "$(k get cm md -o jsonpath='{.data.a}|{.metadata.foo}')" "the unknown metadata field is dropped"
k delete cm md >/dev/null
pass "unknown metadata fields: refused under Strict, dropped (and said) otherwise"

# --- get in its forms
k get pods | grep -q '^solo *0/1 *Pending' || fail "pod table: $(k get pods)"
k get pods -o wide | grep -q 'NOMINATED NODE' || fail "wide columns"
k get pods -A | grep -q '^default *solo ' || fail "-A namespace column"
k get pods --show-labels | grep -q 'app=solo' || fail "--show-labels"
expect_eq "pod/solo" "$(k get pods -l app=solo -o name)" "label selector"
expect_eq "" "$(k get pods -l app=nothing -o name)" "label selector, no match"
k get pod solo -o yaml | grep -q '^  uid: ' || fail "-o yaml"
k get nodes | grep -q '^node-a ' || fail "nodes table"
expect_eq "deployment.apps/web" "$(k get deploy --field-selector metadata.name=web -o name)" "field selector"
pass "get: table, wide, -A, --show-labels, -l, --field-selector, yaml"

# --- watch sees ADDED, MODIFIED, DELETED
k get configmaps --watch-only -o json >"$WORK/watch.json" 2>&1 &
WPID=$!
k get configmaps -w -o name >/dev/null 2>&1 &
wait_watchers 2
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: watched}
data: {a: "1"}
YAML
k patch cm watched --type=merge -p '{"data":{"a":"2"}}' >/dev/null
k delete cm watched >/dev/null
i=0
until [ "$(grep -c '"name": "watched"' "$WORK/watch.json")" -ge 3 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "watch events: $(cat "$WORK/watch.json")"; sleep 0.05
done
kill $WPID 2>/dev/null || true
python3 - "$WORK/watch.json" <<'PY' || fail "watch event order"
import json, sys
dec, text, objs, i = json.JSONDecoder(), open(sys.argv[1]).read(), [], 0
while i < len(text):
    if text[i].isspace(): i += 1; continue
    o, i = dec.raw_decode(text, i); objs.append(o)
vals = [o.get("data", {}).get("a") for o in objs if o["metadata"]["name"] == "watched"]
assert vals[:2] == ["1", "2"], vals
PY
pass "get -w sees create, update and delete"

# --- describe shows events
uid=$(k get pod solo -o jsonpath='{.metadata.uid}')
k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Event
metadata: {name: solo.ev1}
involvedObject: {kind: Pod, name: solo, namespace: default, uid: "$uid", apiVersion: v1}
reason: Pulled
message: Container image already present
type: Normal
source: {component: kubelet}
count: 1
YAML
k describe pod solo | grep -q 'Pulled .*Container image already present' ||
	fail "describe events: $(k describe pod solo | tail -5)"
pass "describe shows the pod's events"

# --- patch types and the status subresource
k patch pod solo --type=merge -p '{"metadata":{"labels":{"m":"1"}}}' >/dev/null
k patch pod solo --type=json -p '[{"op":"add","path":"/metadata/labels/j","value":"2"}]' >/dev/null
k patch deploy web --type=strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}' >/dev/null
expect_eq "1 2" "$(k get pod solo -o jsonpath='{.metadata.labels.m} {.metadata.labels.j}')" "merge and json patch"
expect_eq "nginx:1.26 two" "$(k get deploy web -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[0].value}')" "strategic patch keeps the rest"
# A replace whose parent is missing is refused (a missing member of an
# object that exists is set, as kube-apiserver's json-patch v4 does).
if k patch pod solo --type=json -p '[{"op":"replace","path":"/spec/nope/x","value":1}]' >/dev/null 2>&1; then
	fail "bad json patch accepted"
fi
k patch pod solo --subresource=status --type=merge \
	-p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
expect_eq Running "$(k get pod solo -o jsonpath='{.status.phase}')" "status patch"
k patch pod solo --type=merge -p '{"status":{"phase":"Failed"}}' >/dev/null
expect_eq Running "$(k get pod solo -o jsonpath='{.status.phase}')" "main resource ignores status"
k patch widget w1 --subresource=status --type=merge \
	-p '{"status":{"phase":"Done","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
gen=$(k get widget w1 -o jsonpath='{.metadata.generation}')
k patch widget w1 --subresource=status --type=merge -p '{"status":{"phase":"Again"}}' >/dev/null
expect_eq "$gen" "$(k get widget w1 -o jsonpath='{.metadata.generation}')" "status writes keep generation"
rv=$(k get widget w1 -o jsonpath='{.metadata.resourceVersion}')
k patch widget w1 --subresource=status --type=merge -p '{"status":{"phase":"Again"}}' >/dev/null
expect_eq "$rv" "$(k get widget w1 -o jsonpath='{.metadata.resourceVersion}')" "a no-op status write stores nothing"
k patch widget w1 --subresource=status --type=merge --field-manager=stwriter -p '{"status":{"phase":"Again"}}' >/dev/null
expect_eq "stwriter status" "$(k get widget w1 --show-managed-fields -o jsonpath='{.metadata.managedFields[?(@.manager=="stwriter")].manager} {.metadata.managedFields[?(@.manager=="stwriter")].subresource}')" "a new field manager's status write is recorded"
[ "$rv" != "$(k get widget w1 -o jsonpath='{.metadata.resourceVersion}')" ] || fail "a new manager's write stored nothing"
pass "merge, json, strategic and status patches"

# --- wait
k wait --for=condition=Ready pod/solo --timeout=10s >/dev/null || fail "wait condition"
k wait --for=jsonpath='{.status.phase}'=Again widget/w1 --timeout=10s >/dev/null || fail "wait jsonpath"
n0=$(watchers)
k wait --for=jsonpath='{.status.readyReplicas}'=3 deploy/web --timeout=10s >/dev/null &
WAITER=$!
wait_watchers $((n0 + 1))
k patch deploy web --subresource=status --type=merge -p '{"status":{"readyReplicas":3}}' >/dev/null
wait $WAITER || fail "wait for a later change"
if k wait --for=condition=Ready pod/solo2 --timeout=1s >/dev/null 2>&1; then
	fail "wait on a missing pod succeeded"
fi
pass "wait --for=condition and --for=jsonpath"

# --- delete: finalizers and cascading owners
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
YAML
k delete cm held --wait=false >/dev/null
k get cm held -o jsonpath='{.metadata.deletionTimestamp}' | grep -q T || fail "deletionTimestamp set"
k patch cm held --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
k wait --for=delete cm/held --timeout=10s >/dev/null 2>&1 || true
k get cm held >/dev/null 2>&1 && fail "object with finalizer removed still exists"
owner_uid=$(k get deploy web -o jsonpath='{.metadata.uid}')
for n in 1 2; do
	k create -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: child$n
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: "$owner_uid", controller: true}]
YAML
done
k delete deploy web --cascade=orphan >/dev/null
k get cm child1 -o jsonpath='{.metadata.ownerReferences}' | grep -q uid && fail "orphan kept owner reference"
k get cm child1 child2 >/dev/null || fail "orphaned children deleted"
pass "finalizers and orphan propagation"
uid=$(k get job pi -o jsonpath='{.metadata.uid}')
for n in 3 4; do
	k create -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: child$n
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: pi, uid: "$uid", controller: true, blockOwnerDeletion: true}]
YAML
done
k delete job pi --cascade=foreground >/dev/null
k wait --for=delete cm/child3 cm/child4 --timeout=10s >/dev/null 2>&1 || true
k get cm child3 >/dev/null 2>&1 && fail "foreground cascade left a dependent"
k get job pi >/dev/null 2>&1 && fail "foreground owner not deleted"
pass "foreground and background cascading deletion"

# --- server-side apply
cat >"$WORK/ssa.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: ssa}
data: {k: v1}
YAML
k apply --server-side -f "$WORK/ssa.yaml" | grep -q 'serverside-applied' || fail "ssa create"
sed 's/v1}/v2}/' "$WORK/ssa.yaml" | k apply --server-side -f - >/dev/null || fail "ssa update"
expect_eq v2 "$(k get cm ssa -o jsonpath='{.data.k}')" "ssa value"
k get cm ssa -o yaml --show-managed-fields | grep -q 'manager: kubectl' || fail "fieldManager recorded"
pass "server-side apply records its field manager"

# --- namespaces delete their contents
k create namespace doomed 2>/dev/null || k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: doomed}
YAML
k -n doomed create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: inside}
YAML
k delete ns doomed --timeout=20s >/dev/null || fail "namespace delete"
k get ns doomed >/dev/null 2>&1 && fail "namespace still there"
curl -fs "$API/api/v1/namespaces/doomed/configmaps" | grep -q '"name":"inside"' && fail "contents survived"
pass "namespace deletion removes its contents"

# --- deleting a CRD deletes its objects first
k delete crd widgets.example.com --timeout=20s >/dev/null || fail "CRD delete"
k get crd widgets.example.com >/dev/null 2>&1 && fail "CRD still there"
curl -s "$API/apis/example.com/v1/namespaces/default/widgets" | grep -q '"code":404' ||
	fail "widgets still served"
pass "deleting a CRD removes its custom resources and API"

# --- Endpoints follow the Services' selected pods
k apply -f - >/dev/null <<'YAML' || fail "create the endpoints node and pods"
apiVersion: v1
kind: Node
metadata: {name: epn, labels: {volray.io/runtime: virtual}}
---
apiVersion: v1
kind: Service
metadata: {name: eps}
spec:
  selector: {app: eps}
  ports: [{name: http, port: 80, targetPort: web}, {name: raw, port: 81, targetPort: 9000}]
---
apiVersion: v1
kind: Pod
metadata: {name: eps-1, labels: {app: eps}, annotations: {volray.io/sim-duration: 1h}}
spec:
  nodeName: epn
  containers: [{name: c, image: busybox, ports: [{name: web, containerPort: 8080}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: eps-2, labels: {app: eps}, annotations: {volray.io/sim-duration: 1h}}
spec:
  nodeName: epn
  containers: [{name: c, image: busybox, ports: [{name: web, containerPort: 8081}]}]
YAML
k wait --for=condition=Ready pod/eps-1 pod/eps-2 --timeout=10s >/dev/null || fail "eps pods not Ready"
ep_view() {
	k get endpoints eps -o jsonpath='{range .subsets[*]}{range .addresses[*]}{.targetRef.name}{" "}{end}{range .ports[*]}{.name}={.port}{" "}{end};{end}'
}
wait_eq "eps-1 http=8080 raw=9000 ;eps-2 http=8081 raw=9000 ;" "Endpoints of a named targetPort, per pod" ep_view
k label pod eps-2 app- >/dev/null
wait_eq "eps-1 http=8080 raw=9000 ;" "a pod no longer selected leaves the Endpoints" ep_view
expect_eq "$(k get pod eps-1 -o jsonpath='{.status.podIP}')" \
	"$(k get endpoints eps -o jsonpath='{.subsets[0].addresses[0].ip}')" "the address is the pod's IP"
k delete svc eps >/dev/null
gone() { k get endpoints eps -o name 2>/dev/null; }
wait_eq "" "the Service's Endpoints go with it" gone
pass "Endpoints: the selected pods' IPs and resolved ports, updated and removed with the Service"
