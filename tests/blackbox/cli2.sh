#!/bin/sh
# The volray verbs beyond get/apply (cli.sh): describe, patch, label,
# annotate, scale, replace, delete -l/--cascade/--grace-period/--wait,
# get with several kinds, -w, --show-labels, --sort-by and
# -o custom-columns, kubeconfig and completion; each compared with what
# kubectl prints for the same objects where kubectl has the verb. Then
# exit statuses: 2 for every usage error, 1 with the server's reason for
# a refused request or an unreachable server; and help, printed from the
# tables that parse the options, against the man page.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clilib.sh"
MAN="$top_srcdir/man/volray.1"
start_daemon

# norm: spaces squeezed and ages (5s, 3m12s, 2d) replaced, and a node
# Lease's RenewTime (renewed every 10 s, so it may move between the two
# outputs on a loaded machine), so that two outputs taken a moment apart
# compare.
norm() {
	python3 -c 'import re, sys
for l in sys.stdin:
    l = re.sub(r"(?<![\w./-])\d+[smhd](\d+[smh])?( \(x\d+ over \S+\))?(?![\w./-])", "AGE", l.rstrip("\n"))
    l = re.sub(r"^( *RenewTime: *).*$", r"\1TIME", l)
    print(re.sub(r" +", " ", l).rstrip())'
}

# same WHAT CMD...: volray CMD and kubectl CMD print the same (normalized).
same() {
	what=$1
	shift
	k "$@" 2>&1 | norm >"$WORK/k.out"
	vr "$@" 2>&1 | norm >"$WORK/v.out"
	diff -u "$WORK/k.out" "$WORK/v.out" >"$WORK/diff" ||
		fail "$what: volray differs from kubectl: $(cat "$WORK/diff")"
}

# same_but WHAT SECTION ARGS...: as same, but for a section volray adds
# (its one <none> line, when the section is empty).
same_but() {
	what=$1 section=$2
	shift 2
	k "$@" 2>&1 | norm >"$WORK/k.out"
	vr "$@" 2>&1 | norm | grep -v "^$section: *<none>$" >"$WORK/v.out"
	diff -u "$WORK/k.out" "$WORK/v.out" >"$WORK/diff" ||
		fail "$what: volray differs from kubectl: $(cat "$WORK/diff")"
}

# --- objects to look at: a virtual node, pods, a deployment, a job, a RayCluster
vr node add --virtual --count 1 --cpu 4 --memory 8Gi --name-prefix vn \
	--labels zone=a >/dev/null || fail "node add"
k wait --for=condition=Ready node/vn-0 --timeout=10s >/dev/null ||
	fail "node not Ready"
# describe node shows the Lease: both clients must find it there.
k wait --for=create lease/vn-0 -n kube-node-lease --timeout=30s >/dev/null ||
	fail "node has no Lease"
cat >"$WORK/objs.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: pa
  labels: {app: web, tier: a}
  annotations: {note: hello}
spec:
  nodeName: vn-0
  containers:
  - name: c
    image: busybox
    command: [sleep, "1000"]
    env: [{name: A, value: b}]
    ports: [{containerPort: 80}]
    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: pb
  labels: {app: web, tier: a}
  annotations: {note: hello}
spec:
  containers:
  - {name: c, image: busybox}
---
apiVersion: v1
kind: Pod
metadata:
  name: pc
  labels: {app: db}
spec:
  nodeSelector: {zone: nowhere}
  containers:
  - {name: c, image: busybox}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1}
spec:
  replicas: 1
  selector: {matchLabels: {app: d1}}
  template:
    metadata: {labels: {app: d1}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j1}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [echo, hi]}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc1}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: rayproject/ray}]
  workerGroupSpecs:
  - groupName: w
    replicas: 1
    rayStartParams: {}
    template:
      spec:
        containers: [{name: w, image: rayproject/ray}]
YAML
vr apply -f "$WORK/objs.yaml" >/dev/null || fail "apply objects"
k wait --for=condition=Ready pod/pa --timeout=15s >/dev/null ||
	fail "pa not Ready"
wait_eq "replicaset.apps" "d1's replica set" \
	sh -c 'kubectl get rs -l app=d1 -o name | cut -d/ -f1'
wait_eq 1 "j1's pod" sh -c 'kubectl get pods -l job-name=j1 -o name | wc -l' 
# Before comparing, every object must be in the state that describe
# shows (and the events that go with it written): waited for, not slept.
k wait --for=condition=Ready pod/pb --timeout=15s >/dev/null || fail "pb not Ready"
k wait --for=condition=PodScheduled=False pod/pc --timeout=15s >/dev/null ||
	fail "pc not told why it waits"
k wait --for=jsonpath='{.status.availableReplicas}'=1 deployment/d1 --timeout=15s \
	>/dev/null || fail "d1 not available"
k wait --for=condition=Ready pod -l app=d1 --timeout=15s >/dev/null || fail "d1's pod not Ready"
k wait --for=jsonpath='{.status.ready}'=1 job/j1 --timeout=15s >/dev/null ||
	fail "j1's pod not ready"
k wait --for=jsonpath='{.status.state}'=ready raycluster/rc1 --timeout=20s >/dev/null ||
	fail "rc1 not ready"
k wait --for=condition=Ready pod -l ray.io/cluster=rc1 --timeout=15s >/dev/null ||
	fail "rc1's pods not Ready"
# The queue's counts: every PodGroup Running but pc's.
pc_uid=$(k get pod pc -o jsonpath='{.metadata.uid}')
wait_eq 0 "PodGroups still starting" sh -c 'kubectl get podgroups -A -o json |
	python3 -c "import json, sys
d = json.load(sys.stdin)
print(sum(1 for p in d[\"items\"] if p.get(\"status\", {}).get(\"phase\") != \"Running\"
          and not p[\"metadata\"][\"name\"].endswith(sys.argv[1])))" "$0"' "$pc_uid"

# --- describe: the same fields, events and layout as kubectl
same "describe pod" describe pod pa
same "describe pending pod" describe pod pc
same "describe pod/NAME" describe pod/pb
same "describe pods -l" describe pods -l app=web
same "describe node" describe node vn-0
same "describe deployment" describe deployment d1
same "describe job" describe job j1
same "describe raycluster (generic)" describe raycluster rc1
same_but "describe queue (cluster-scoped generic)" PodGroups describe queue default
same "describe namespace" describe namespace default
k create namespace quoted >/dev/null
k -n quoted create quota q --hard=pods=10,requests.cpu=2 >/dev/null
k -n quoted apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits:
  - {type: Container, default: {cpu: 200m}, defaultRequest: {cpu: 100m}, max: {cpu: "2"}}
YAML
# One resource: kubectl lists a LimitRange's resources in Go map order,
# which differs from run to run.
k -n quoted wait --for=jsonpath='{.status.used.pods}'=0 resourcequota/q --timeout=10s >/dev/null ||
	fail "the quota's status"
same "describe namespace with a quota and a LimitRange" describe namespace quoted
vr describe pod pc | grep -q '^Events:' || fail "describe has Events"
vr describe deployment d1 | grep -Eq '^  Normal +ScalingReplicaSet ' ||
	fail "deployment events: $(vr describe deployment d1)"
status 1 "describe a missing pod" describe pod nope
expect_eq 'Error from server (NotFound): pods "nope" not found' "$err" \
	"describe NotFound"
pass "describe"

# --- get: several kinds, TYPE/NAME..., --show-labels, --sort-by, custom-columns
same "get pods,nodes" get pods,nodes
same "get TYPE/NAME..." get pod/pa node/vn-0
same "get --show-labels" get pods --show-labels
same "get -l --show-labels -o wide" get pods -l app=web --show-labels -o wide
same "get --sort-by" get pods --sort-by=.metadata.name
same "get --sort-by a number" get pods -o name \
	--sort-by=.metadata.resourceVersion
same "get -o custom-columns" get pods \
	-o custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,NODE:.spec.nodeName
same "get -o custom-columns (short)" get nodes -o custom-columns=N:.metadata.name
same "get pods,deployments -o name" get pods,deployments -o name
same "get -A several kinds" get deployments,jobs -A
expect_eq "2" "$(vr get pods,nodes -o json | python3 -c 'import json, sys
d = json.load(sys.stdin); print(len({i["kind"] for i in d["items"]}))')" \
	"several kinds in one List"
pass "get with several kinds, labels, sorting, custom columns"

# get -w: the table, then each change as a row lined up with it.
n0=$(watchers)
vr get pods -l app=web -w >"$WORK/watch.out" 2>&1 &
WATCHER=$!
wait_watchers $((n0 + 1))
k label pod pb watched=yes >/dev/null
i=0
until [ "$(grep -c '^pb ' "$WORK/watch.out")" -ge 2 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "get -w saw no change: $(cat "$WORK/watch.out")"
	sleep 0.1
done
kill $WATCHER
wait $WATCHER 2>/dev/null || true
k label pod pb watched- >/dev/null
expect_eq "NAME READY STATUS RESTARTS AGE" \
	"$(head -n 1 "$WORK/watch.out" | tr -s ' ')" "watch header"
w1=$(awk 'NR == 2 {print index($0, $2)}' "$WORK/watch.out")
w2=$(awk 'END {print index($0, $2)}' "$WORK/watch.out")
expect_eq "$w1" "$w2" "watch rows line up"
status 2 "-w with several kinds" get pods,nodes -w
pass "get -w"

# --- label and annotate, as kubectl says it, on twin pods pa (volray) and pb (kubectl)
for op in "x=1" "x=2" "x=2 --overwrite" "x-" "x-" "y=1 z=2"; do
	# shellcheck disable=SC2086
	kout=$(k label pod pb $op 2>&1 | grep -v 'not found' || true)
	# shellcheck disable=SC2086
	vout=$(vr label pod pa $op 2>&1 || true)
	expect_eq "$(echo "$kout" | sed 's/pb/pa/')" "$vout" "label $op"
done
expect_eq "$(k get pod pb -o jsonpath='{.metadata.labels}')" \
	"$(k get pod pa -o jsonpath='{.metadata.labels}')" "labels after"
status 1 "label without --overwrite" label pod pa y=9
expect_eq "error: 'y' already has a value (1), and --overwrite is false" \
	"$err" "label conflict message"
expect_eq "pod/pa annotated" "$(vr annotate pod pa note=bye --overwrite)" \
	"annotate --overwrite"
expect_eq "bye" "$(k get pod pa -o jsonpath='{.metadata.annotations.note}')" \
	"annotation set"
expect_eq "pod/pa annotated" "$(vr annotate pod/pa note-)" "annotate k-"
expect_eq "" "$(k get pod pa -o jsonpath='{.metadata.annotations.note}')" \
	"annotation removed"
expect_eq "pod/pa labeled
pod/pb labeled" "$(vr label pods pa pb multi=1)" "label several names"
status 2 "label without keys" label pod pa
status 2 "label a bad key" label pod pa =v
pass "label and annotate"

# --- patch: merge, json, strategic, a subresource
expect_eq "pod/pa patched" \
	"$(vr patch pod pa --type merge -p '{"metadata":{"labels":{"m":"1"}}}')" \
	"merge patch"
expect_eq 1 "$(k get pod pa -o jsonpath='{.metadata.labels.m}')" "merged"
expect_eq "pod/pa patched" "$(vr patch pod pa --type json \
	-p '[{"op":"remove","path":"/metadata/labels/m"}]')" "json patch"
expect_eq "" "$(k get pod pa -o jsonpath='{.metadata.labels.m}')" "removed"
vr patch pod pa -p 'metadata: {labels: {s: "1"}}' >/dev/null ||
	fail "strategic patch from YAML"
expect_eq 1 "$(k get pod pa -o jsonpath='{.metadata.labels.s}')" "strategic"
expect_eq "deployment.apps/d1 patched" "$(vr patch deployment d1 \
	--subresource scale --type merge -p '{"spec":{"replicas":2}}')" \
	"patch --subresource scale"
expect_eq 2 "$(k get deployment d1 -o jsonpath='{.spec.replicas}')" \
	"replicas through /scale"
status 1 "strategic patch of a custom resource" patch raycluster rc1 \
	-p '{"spec":{}}'
expect_contains "$err" "Error from server (UnsupportedMediaType)" \
	"strategic patch refused"
status 1 "patch a missing object" patch pod nope -p '{}'
expect_eq 'Error from server (NotFound): pods "nope" not found' "$err" \
	"patch NotFound"
status 2 "patch without -p" patch pod pa
status 2 "patch --type bogus" patch pod pa --type bogus -p '{}'
status 2 "patch -p not JSON" patch pod pa -p '{'
pass "patch"

# --- scale, as kubectl says it
expect_eq "$(k scale deployment d1 --replicas 1)" \
	"$(vr scale deployment d1 --replicas 3)" "scale output"
expect_eq 3 "$(k get deployment d1 -o jsonpath='{.spec.replicas}')" "scaled"
expect_eq "deployment.apps/d1 scaled" "$(vr scale deployment/d1 --replicas=1)" \
	"scale TYPE/NAME --replicas="
status 2 "scale without --replicas" scale deployment d1
status 2 "scale --replicas x" scale deployment d1 --replicas x
status 1 "scale a missing deployment" scale deployment nope --replicas 1
expect_contains "$err" 'deployments.apps "nope" not found' "scale NotFound"
pass "scale"

# --- replace -f: the object whole, as kubectl says it
k get pod pb -o json | python3 -c 'import json, sys
d = json.load(sys.stdin); d["metadata"]["labels"]["tier"] = "b"
for k in ("resourceVersion", "uid", "managedFields"): d["metadata"].pop(k, None)
print(json.dumps(d))' >"$WORK/pb.json"
expect_eq "pod/pb replaced" "$(vr replace -f "$WORK/pb.json")" "replace"
expect_eq b "$(k get pod pb -o jsonpath='{.metadata.labels.tier}')" "replaced"
expect_eq "$(k replace -f "$WORK/pb.json")" "$(vr replace -f "$WORK/pb.json")" \
	"replace output as kubectl"
sed 's/"name": *"pb"/"name": "nobody"/' "$WORK/pb.json" >"$WORK/nobody.json"
status 1 "replace a missing object" replace -f "$WORK/nobody.json"
expect_eq 'Error from server (NotFound): pods "nobody" not found' "$err" \
	"replace NotFound"
status 2 "replace without -f" replace
pass "replace"

# --- delete: -l, --grace-period, --wait, --cascade
expect_eq 'pod "pc" deleted' "$(vr delete pods -l app=db --grace-period 0 --wait)" \
	"delete -l --grace-period 0 --wait"
k get pod pc 2>&1 | grep -q NotFound || fail "pc still there after --wait"
rs=$(k get rs -l app=d1 -o name)
expect_eq 'deployment.apps "d1" deleted' \
	"$(vr delete deployment d1 --cascade=orphan --wait)" "delete --cascade=orphan"
expect_eq "$rs" "$(k get rs -l app=d1 -o name)" "orphaned replica set kept"
expect_eq "" "$(k get $rs -o jsonpath='{.metadata.ownerReferences}')" \
	"orphan has no owner"
expect_eq "job.batch \"j1\" deleted" \
	"$(vr delete job j1 --cascade foreground --wait --timeout 20s)" \
	"delete --cascade foreground --wait"
k get job j1 2>&1 | grep -q NotFound || fail "j1 still there after --wait"
status 2 "delete --cascade bogus" delete pod pa --cascade bogus
status 2 "delete --grace-period x" delete pod pa --grace-period x
status 2 "delete without names" delete pods
status 1 "delete a missing pod" delete pod nope
expect_eq 'Error from server (NotFound): pods "nope" not found' "$err" \
	"delete NotFound"
pass "delete"

# --- kubeconfig and completion
expect_eq "$(cat "$KUBECONFIG")" "$(vr kubeconfig)" "kubeconfig"
expect_eq "$(cat "$KUBECONFIG")" \
	"$(KUBECONFIG=/nonexistent vr kubeconfig --kubeconfig "$KUBECONFIG")" \
	"kubeconfig --kubeconfig"
status 1 "kubeconfig missing" kubeconfig --kubeconfig "$WORK/none"
vr completion bash >"$WORK/comp.bash" || fail "completion bash"
bash -n "$WORK/comp.bash" || fail "completion script does not parse"
PATH="$top_builddir:$PATH"
export PATH
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_volray; echo "${COMPREPLY[*]}"' sh "$WORK/comp.bash" "$@"
}
expect_contains "$(complete_words volray de)" "delete" "verbs"
expect_contains "$(complete_words volray get po)" "pods" "kinds"
expect_contains "$(complete_words volray get rayc)" "rayclusters" \
	"kinds from discovery"
expect_eq "pa pb" "$(complete_words volray describe pods p)" "names"
expect_eq "--show-labels --show-managed-fields" \
	"$(complete_words volray get --show)" "flags of the verb"
status 2 "completion zsh" completion zsh
pass "kubeconfig and completion"

# --- exit statuses: 2 for usage errors of every verb, 1 for refusals
for verb in get describe apply create replace delete patch label annotate \
	scale logs wait node policy api-resources version kubeconfig \
	completion; do
	status 2 "$verb --no-such-flag" "$verb" --no-such-flag
	expect_contains "$err" "unknown flag: --no-such-flag" "$verb message"
	expect_contains "$err" "volray help $verb" "$verb hint"
done
status 2 "an unknown verb" frobnicate
status 2 "no verb"
status 2 "get without a type" get
status 2 "describe without a type" describe
status 2 "apply without -f" apply
status 2 "apply with arguments" apply pods -f "$WORK/objs.yaml"
status 2 "logs without a pod" logs
status 2 "logs --tail x" logs pa --tail x
status 2 "wait without --for" wait pod/pa
status 2 "wait --for bogus" wait pod/pa --for bogus
status 2 "wait --timeout x" wait pod/pa --for delete --timeout x
status 2 "a flag without its value" get pods -l
status 2 "-o bogus" get pods -o bogus
status 2 "a bad flag value" get pods --show-labels=maybe
status 2 "policy bogus" policy bogus
status 2 "node bogus" node bogus
status 1 "unknown resource" get frobs
expect_eq 'error: the server doesn'"'"'t have a resource type "frobs"' "$err" \
	"unknown resource message"
status 1 "wait not met" wait pod/pa --for=condition=Nope --timeout 1s
expect_eq "error: timed out waiting for the condition on pods/pa" "$err" \
	"wait not met message"
status 1 "a missing daemon" --kubeconfig /dev/null \
	--server https://127.0.0.1:1 get pods
expect_eq 1 "$(echo "$err" | wc -l)" "one line for a missing daemon"
expect_contains "$err" "cannot talk to the server at https://127.0.0.1:1" \
	"missing daemon message"
pass "exit statuses"

# --- help from the option tables, and the man page has every flag
expect_eq "$(vr help get)" "$(vr get --help)" "help get = get --help"
expect_eq "$(vr help delete)" "$(vr delete -h)" "help delete = delete -h"
vr help >/dev/null || fail "help"
vr help get | grep -q -- '--sort-by JSONPATH' || fail "help lists --sort-by"
status 2 "help of an unknown verb" help frob
for verb in get describe apply create replace delete patch label annotate \
	scale logs wait node policy api-resources version kubeconfig \
	completion; do
	grep -q "^\.It .*Ic $verb\|^\.It Cm $verb\|^\.Ic $verb" "$MAN" ||
		grep -q "Ic $verb" "$MAN" || fail "man page lacks verb $verb"
	for flag in $(vr help "$verb" | grep -o -- '--[a-z-]*' | sort -u); do
		f=$(echo "$flag" | sed 's/^--//; s/-/\\\\-/g')
		grep -q "Fl \\\\-$f" "$MAN" ||
			fail "man page lacks $flag of $verb"
	done
done
pass "help and man page"
