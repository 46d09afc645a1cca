#!/bin/sh
# Kubernetes' own gang API (issue 43): scheduling.k8s.io/v1alpha2
# Workload and PodGroup served as built-in kinds, pods joining by
# spec.schedulingGroup.podGroupName, placed by volray's scheduler with the
# gang plugin. With stock kubectl on simulated nodes (2 x 4 CPU): a gang
# of minCount 4 that fits is placed whole and its PodGroupScheduled
# condition is True; a gang that does not fit has no pod bound, the
# condition False with reason Unschedulable and a message (not written
# again by the next session), and its pods say why; a gang with fewer
# pods than minCount waits for the rest; pods whose PodGroup does not
# exist yet wait (saying so), then are placed once it is created; a basic
# PodGroup's pods are placed one by one (those that fit); kube-apiserver's 422s with the field's path
# (exactly one policy, minCount >= 1, the policy and a pod's scheduling
# group immutable, a Workload's templates, a template reference to a
# missing Workload); api-resources, get with columns, explain, watch; a
# recorded session replayed; a RayCluster and a RayJob labelled
# ray.io/scheduler-name: kubernetes placed through a Workload and PodGroup
# of this API. All with volrayd --feature-gates=GenericWorkload=true; then
# without it: the kinds not served, a new pod's schedulingGroup dropped.
. "$(dirname "$0")/lib.sh"
start_daemon --feature-gates=GenericWorkload=true
VR="$top_builddir/volray"
PG=podgroups.scheduling.k8s.io

"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 --timeout=10s >/dev/null

# --- discovery, explain
out=$(k api-resources --api-group=scheduling.k8s.io -o wide)
expect_contains "$out" "podgroups" "api-resources"
expect_contains "$out" "scheduling.k8s.io/v1alpha2" "api-resources"
expect_contains "$(k api-resources --api-group=scheduling.k8s.io | grep workloads)" "Workload" "api-resources workloads"
out=$(k get --raw /apis/scheduling.k8s.io)
expect_contains "$out" '"preferredVersion":{"groupVersion":"scheduling.k8s.io/v1"' "v1 stays the group's preferred version"
out=$(k explain --api-version=scheduling.k8s.io/v1alpha2 podgroups.spec.schedulingPolicy.gang)
expect_contains "$out" "minCount" "explain podgroup.spec.schedulingPolicy.gang"
out=$(k explain --api-version=scheduling.k8s.io/v1alpha2 workloads.spec)
expect_contains "$out" "podGroupTemplates" "explain workload.spec"
out=$(k explain pod.spec.schedulingGroup)
expect_contains "$out" "podGroupName" "explain pod.spec.schedulingGroup"
pass "discovery (v1 preferred), api-resources and explain"

# pods NAME GROUP CPU N: N pods NAME-0.. of CPU each joining GROUP.
pods() {
	i=0
	while [ $i -lt "$4" ]; do
		cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1-$i, annotations: {volray.io/sim-duration: 1h}}
spec:
  schedulerName: volcano
  schedulingGroup: {podGroupName: $2}
  containers: [{name: a, image: busybox, resources: {requests: {cpu: "$3"}}}]
YAML
		i=$((i + 1))
	done
}
# bound PREFIX: how many pods NAME-* have a node.
bound() {
	k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
	    awk -v p="$1-" 'index($1, p) == 1 && $2 != "" { n++ } END { print n + 0 }'
}
cond() { # podgroup field
	k get "$PG" "$1" -o jsonpath="{.status.conditions[?(@.type==\"PodGroupScheduled\")].$2}"
}

# --- a gang that fits is placed whole
{ cat <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: fit}
spec:
  schedulingPolicy: {gang: {minCount: 4}}
YAML
pods fit fit 1 4; } | k create -f - >/dev/null || fail "create the fitting gang"
wait_eq 4 "the fitting gang's pods bound" bound fit
wait_eq True "fit's PodGroupScheduled" cond fit status
expect_eq Scheduled "$(cond fit reason)" "fit's condition reason"
out=$(k get "$PG" fit)
expect_contains "$out" "POLICY" "kubectl get podgroup's columns"
expect_contains "$(echo "$out" | tail -1)" "Gang" "kubectl get podgroup's policy"
expect_contains "$(echo "$out" | tail -1)" "True" "kubectl get podgroup's SCHEDULED"
expect_eq "" "$(k get podgroups.scheduling.volcano.sh -o name)" "Volcano PodGroups made for pods in a scheduling group"
expect_eq "" "$(k get pod fit-0 -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}')" "a group-name annotation on a pod in a scheduling group"
pass "a gang of minCount 4 that fits is placed whole, PodGroupScheduled True"

# --- a gang that does not fit: nothing bound (4 CPU left, 2 per node at
# most, each pod 1500m: two would fit, the gang needs 4)
{ cat <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: big}
spec:
  schedulingPolicy: {gang: {minCount: 4}}
YAML
pods big big 1500m 4; } | k create -f - >/dev/null || fail "create the big gang"
wait_eq Unschedulable "big's PodGroupScheduled reason" cond big reason
expect_eq False "$(cond big status)" "big's PodGroupScheduled status"
expect_contains "$(cond big message)" "unschedulable" "big's condition message"
expect_eq 0 "$(bound big)" "pods of the gang that does not fit bound"
msg=$(k get pod big-0 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
expect_contains "$msg" "gang" "big-0's PodScheduled message"
out=$("$VR" explain pod/big-0 2>&1) || fail "volray explain pod/big-0: $out"
expect_contains "$out" "big" "volray explain of a gang pod"
expect_contains "$out" "gang" "volray explain of a gang pod"
expect_eq 4 "$(bound fit)" "the fitting gang still whole"
rv=$(k get "$PG" big -o jsonpath='{.metadata.resourceVersion}')
k create -f - >/dev/null <<'YAML' || fail "create a pod beside"
apiVersion: v1
kind: Pod
metadata: {name: beside-0, annotations: {volray.io/sim-duration: 1h}}
spec:
  schedulerName: volcano
  containers: [{name: a, image: busybox, resources: {requests: {cpu: 100m}}}]
YAML
wait_eq 1 "the pod beside bound" bound beside
expect_eq "$rv" "$(k get "$PG" big -o jsonpath='{.metadata.resourceVersion}')" "big's resourceVersion after another session (its status written only on change)"
expect_eq 0 "$(bound big)" "pods of the gang that does not fit bound"
pass "a gang that does not fit: no pod bound, PodGroupScheduled False Unschedulable ($(cond big message)), not written again"
k delete pod beside-0 --wait=false >/dev/null
"$VR" session record "$WORK/rec.json" 2>"$WORK/record.err" || fail "session record: $(cat "$WORK/record.err")"
grep -q 'scheduling.k8s.io/v1alpha2' "$WORK/rec.json" || fail "the record lacks the scheduling.k8s.io PodGroups"
"$VR" session replay "$WORK/rec.json" >"$WORK/r1" || fail "replay: $(cat "$WORK/r1")"
grep -q '^wait  *default/big: .*gang' "$WORK/r1" || fail "the replay says why big waits: $(cat "$WORK/r1")"
pass "a recorded session with scheduling.k8s.io PodGroups replays offline: big waits"

# --- a gang with fewer pods than minCount waits for the rest
{ cat <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: few}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
YAML
pods few few 100m 2; } | k create -f - >/dev/null || fail "create 2 of a gang of 3"
wait_eq Unschedulable "few's PodGroupScheduled reason" cond few reason
expect_contains "$(cond few message)" "valid: 2, min: 3" "few's condition message"
expect_eq 0 "$(bound few)" "2 pods of a gang of minCount 3 bound"
k create -f - >/dev/null <<'YAML' || fail "create the third pod"
apiVersion: v1
kind: Pod
metadata: {name: few-2, annotations: {volray.io/sim-duration: 1h}}
spec:
  schedulerName: volcano
  schedulingGroup: {podGroupName: few}
  containers: [{name: a, image: busybox, resources: {requests: {cpu: 100m}}}]
YAML
wait_eq 3 "the gang of 3 bound once its third pod exists" bound few
wait_eq True "few's PodGroupScheduled" cond few status
pass "a gang waits for minCount pods to exist, then is placed ($(cond few message))"
k delete pod few-0 few-1 few-2 --wait=false >/dev/null
k delete pod big-0 big-1 big-2 big-3 --wait=false >/dev/null
k delete "$PG" big >/dev/null

# --- pods before their PodGroup: they wait, saying so, until it exists
pods late late 500m 2 | k create -f - >/dev/null || fail "create the late pods"
wait_eq 'pod group late (scheduling.k8s.io/v1alpha2) does not exist' \
    "late-0's PodScheduled message" \
    k get pod late-0 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
expect_eq 0 "$(bound late)" "pods of a missing PodGroup bound"
k create -f - >/dev/null <<'YAML' || fail "create PodGroup late"
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: late}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
YAML
wait_eq 2 "the late pods bound once their PodGroup exists" bound late
wait_eq True "late's PodGroupScheduled" cond late status
pass "pods whose PodGroup does not exist wait, then are placed once it is created"
k delete pod fit-0 fit-1 fit-2 fit-3 late-0 late-1 --wait=false >/dev/null
wait_eq 0 "the first pods gone" sh -c "kubectl get pods --no-headers 2>/dev/null | wc -l | tr -d ' '"

# --- basic: each pod on its own (3 pods of 3 CPU on 2 nodes of 4: two
# placed, one waits)
{ cat <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: solo}
spec:
  schedulingPolicy: {basic: {}}
YAML
pods solo solo 3 3; } | k create -f - >/dev/null || fail "create the basic group"
wait_eq 2 "the basic group's pods that fit bound" bound solo
wait_eq True "solo's PodGroupScheduled" cond solo status
expect_contains "$(k get "$PG" solo | tail -1)" "Basic" "kubectl get podgroup's policy"
pass "a basic PodGroup's pods are placed one by one"

# --- 422s with the field's path
refused() { # WANT WHAT < manifest
	out=$(k create -f - 2>&1) && fail "$2 was accepted"
	expect_contains "$out" "$1" "$2"
}
refused 'spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, but multiple fields are set' "both policies" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad}
spec: {schedulingPolicy: {basic: {}, gang: {minCount: 2}}}
YAML
refused 'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`' "no policy" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad}
spec: {schedulingPolicy: {}}
YAML
refused 'spec.schedulingPolicy.gang.minCount: Required value' "minCount 0" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad}
spec: {schedulingPolicy: {gang: {minCount: 0}}}
YAML
refused 'spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than zero' "minCount -1" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad}
spec: {schedulingPolicy: {gang: {minCount: -1}}}
YAML
out=$(k patch "$PG" solo --type=merge -p '{"spec":{"schedulingPolicy":{"basic":null,"gang":{"minCount":2}}}}' 2>&1) &&
    fail "the policy changed"
expect_contains "$out" 'spec.schedulingPolicy: Invalid value: {"gang":{"minCount":2}}: field is immutable' "a policy change"
out=$(k patch "$PG" late --type=merge -p '{"spec":{"schedulingPolicy":{"gang":{"minCount":3}}}}' 2>&1) &&
    fail "minCount changed"
expect_contains "$out" "spec.schedulingPolicy: Invalid value" "a minCount change"
out=$(k patch pod solo-0 --type=merge -p '{"spec":{"schedulingGroup":{"podGroupName":"other"}}}' 2>&1) &&
    fail "a pod's scheduling group changed"
expect_contains "$out" 'spec.schedulingGroup: Invalid value: {"podGroupName":"other"}: field is immutable' "a pod's scheduling group change"
refused 'spec.schedulingGroup.podGroupName: Invalid value: "Not_OK": a lowercase RFC 1123 subdomain' "a bad podGroupName" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: badpod}
spec:
  schedulingGroup: {podGroupName: Not_OK}
  containers: [{name: a, image: busybox}]
YAML
refused 'spec.podGroupTemplates: Required value: must have at least one item' "a Workload without templates" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: bad}
spec: {podGroupTemplates: []}
YAML
refused 'spec.podGroupTemplates[1]: Duplicate value: "w"' "duplicate template names" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: bad}
spec:
  podGroupTemplates:
  - {name: w, schedulingPolicy: {basic: {}}}
  - {name: w, schedulingPolicy: {gang: {minCount: 0}}}
YAML
expect_contains "$out" "spec.podGroupTemplates[1].schedulingPolicy.gang.minCount: Required value" "a template's minCount"
refused 'spec.podGroupTemplateRef.workload.workloadName: Not found: "nosuch"' "a template reference to a missing Workload" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad}
spec:
  podGroupTemplateRef: {workload: {workloadName: nosuch, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 2}}
YAML
pass "kube-apiserver's 422s with the field's path"

# --- a Workload and a PodGroup made from its template
k create -f - >/dev/null <<'YAML' || fail "create a Workload and its PodGroup"
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train}
spec:
  controllerRef: {apiGroup: ray.io, kind: RayCluster, name: train}
  podGroupTemplates:
  - {name: head, schedulingPolicy: {basic: {}}}
  - {name: workers, schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train-workers}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 2}}
YAML
expect_contains "$(k get workloads.scheduling.k8s.io train | tail -1)" "head,workers" "kubectl get workload's templates"
out=$(k patch workloads.scheduling.k8s.io train --type=json -p '[{"op":"remove","path":"/spec/podGroupTemplates/0"}]' 2>&1) &&
    fail "a Workload's templates changed"
expect_contains "$out" "spec.podGroupTemplates: Invalid value" "a template change"
expect_contains "$out" "field is immutable" "a template change"
n0=$(watchers)
k get "$PG" -w -o name >"$WORK/watch" 2>&1 &
wpid=$!
wait_watchers $((n0 + 1))
k delete "$PG" train-workers >/dev/null
wait_eq 2 "the watch saw the delete" sh -c "grep -c train-workers '$WORK/watch'"
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null || true
pass "a Workload, a PodGroup from its template, watched"

# --- a RayCluster labelled ray.io/scheduler-name: kubernetes gets a
# Workload and a PodGroup of Kubernetes' gang API, its pods join it
k create -f - >/dev/null <<'YAML' || fail "create the RayCluster"
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  labels: {ray.io/scheduler-name: kubernetes}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: 100m, memory: 256Mi}}}]
  workerGroupSpecs:
  - groupName: w
    replicas: 3
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray, resources: {requests: {cpu: 100m, memory: 256Mi}}}]
YAML
wait_eq 4 "the RayCluster's PodGroup minCount" \
    k get "$PG" ray-rc-pg -o jsonpath='{.spec.schedulingPolicy.gang.minCount}'
expect_eq "ray-rc ray 4 RayCluster/rc" "$(k get "$PG" ray-rc-pg -o jsonpath='{.spec.podGroupTemplateRef.workload.workloadName} {.spec.podGroupTemplateRef.workload.podGroupTemplateName}') $(k get workloads.scheduling.k8s.io ray-rc -o jsonpath='{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount} {.spec.controllerRef.kind}/{.spec.controllerRef.name}')" "the RayCluster's Workload and PodGroup"
rcbound() {
	k get pods -l ray.io/cluster=rc -o jsonpath='{range .items[*]}{.spec.schedulingGroup.podGroupName}/{.spec.nodeName}{"\n"}{end}' |
	    grep -c '^ray-rc-pg/.' || true
}
wait_eq 4 "the RayCluster's pods bound through their scheduling group" rcbound
wait_eq True "ray-rc-pg's PodGroupScheduled" cond ray-rc-pg status
expect_eq "" "$(k get pods -l ray.io/cluster=rc -o jsonpath='{.items[*].metadata.annotations.scheduling\.k8s\.io/group-name}')" "the group-name annotation on the RayCluster's pods"
k patch raycluster rc --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":4}]' >/dev/null
wait_eq 5 "the PodGroup made again with the new size" \
    k get "$PG" ray-rc-pg -o jsonpath='{.spec.schedulingPolicy.gang.minCount}'
wait_eq 5 "the Workload made again with the new size" \
    k get workloads.scheduling.k8s.io ray-rc -o jsonpath='{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}'
wait_eq 5 "the scaled RayCluster's pods bound" rcbound
pass "a RayCluster labelled ray.io/scheduler-name: kubernetes: a Workload and PodGroup (minCount 4, then 5), its pods placed through them"
k delete raycluster rc >/dev/null
wait_eq "" "the RayCluster's PodGroup collected with it" \
    k get "$PG" ray-rc-pg -o name --ignore-not-found

# --- a RayJob so labelled: the gang is the RayJob's, its cluster's pods
# join it, the job completes
k create -f - >/dev/null <<'YAML' || fail "create the RayJob"
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
  labels: {ray.io/scheduler-name: kubernetes}
spec:
  submissionMode: HTTPMode
  entrypoint: python work.py
  metadata: {volray.io/sim-duration: 2s}
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: 100m, memory: 256Mi}}}]
    workerGroupSpecs:
    - groupName: w
      replicas: 2
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray, resources: {requests: {cpu: 100m, memory: 256Mi}}}]
YAML
k wait --for=jsonpath='{.status.jobStatus}'=SUCCEEDED rayjob/rj --timeout=60s >/dev/null ||
    fail "the RayJob did not succeed: $(k get rayjob rj -o jsonpath='{.status}')"
expect_eq "3 True" "$(k get "$PG" ray-rj-pg -o jsonpath='{.spec.schedulingPolicy.gang.minCount}') $(cond ray-rj-pg status)" "the RayJob's PodGroup"
c=$(k get rayjob rj -o jsonpath='{.status.rayClusterName}')
expect_eq "ray-rj-pg ray-rj-pg ray-rj-pg" "$(k get pods -l ray.io/cluster="$c" -o jsonpath='{.items[*].spec.schedulingGroup.podGroupName}')" "the RayJob's cluster's pods' scheduling group"
pass "a RayJob so labelled: its PodGroup (minCount 3) places its cluster's pods, the job succeeds"

# --- the gate off (volrayd's default, as kube-apiserver's for an alpha
# API): the kinds are not served and a new pod's schedulingGroup is dropped
stop_daemon
start_daemon
out=$(k api-resources --api-group=scheduling.k8s.io -o name)
expect_eq "priorityclasses.scheduling.k8s.io" "$out" "scheduling.k8s.io's kinds with GenericWorkload off"
k create -f - >/dev/null <<'YAML' || fail "create a pod with a scheduling group, the gate off"
apiVersion: v1
kind: Pod
metadata: {name: ungated}
spec:
  schedulingGroup: {podGroupName: g}
  containers: [{name: a, image: busybox}]
YAML
expect_eq "" "$(k get pod ungated -o jsonpath='{.spec.schedulingGroup}')" "a new pod's schedulingGroup, the gate off"
out=$("$VOLRAYD" --data-dir "$WORK/nodata" --feature-gates=NoSuchGate=true 2>&1) &&
    fail "volrayd took an unknown feature gate"
expect_contains "$out" "unrecognized feature gate: NoSuchGate" "an unknown feature gate"
pass "GenericWorkload off: the kinds not served, a pod's schedulingGroup dropped; an unknown gate refused"
