#!/bin/sh
# The DaemonSet controller (lua/controllers/daemonset.lua) with stock
# kubectl on simulated nodes: one pod per eligible node, placed by the
# scheduler through node affinity to the node's name; nodeSelector,
# taints (NoSchedule keeps a pod, NoExecute evicts it), a cordoned node
# that still gets its daemon, nodes added and deleted; a rolling update
# that never has more than maxUnavailable nodes without an available pod,
# rollout status, history and undo; kubectl get's columns and get all.
. "$(dirname "$0")/lib.sh"
start_daemon

node() { # node NAME LABELS-YAML
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {volray.io/runtime: virtual, $2}
YAML
}

daemonset() { # daemonset NAME IMAGE [NODESELECTOR-YAML]
	k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: $1}
spec:
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: ${3:-{\}}
      containers: [{name: c, image: "$2"}]
YAML
}

# nodes_of DS: the sorted nodes its live pods are bound to.
nodes_of() {
	k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}|{.spec.nodeName}{"\n"}{end}' |
		awk -F'|' '$1 == "" { print $2 }' | sort | tr '\n' ' ' | sed 's/ $//'
}
running_nodes() { # the nodes of DS's pods that are Running and not deleted
	k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}|{.status.phase}|{.spec.nodeName}{"\n"}{end}' |
		awk -F'|' '$1 == "" && $2 == "Running" { print $3 }' | sort | tr '\n' ' ' | sed 's/ $//'
}
dsstatus() { k get ds "$1" -o jsonpath="{.status.$2}"; }

node n1 "disk: ssd"
node n2 "disk: ssd"
node n3 "disk: hdd"
for n in n1 n2 n3; do
	k wait --for=condition=Ready "node/$n" --timeout=20s >/dev/null || fail "node $n Ready"
done

# --- one pod per node, bound by the scheduler
daemonset logs img:1
wait_eq "n1 n2 n3" "a running pod on every node" running_nodes logs
wait_eq 3 "desiredNumberScheduled" dsstatus logs desiredNumberScheduled
k rollout status ds/logs --timeout=20s >/dev/null || fail "rollout status of a new DaemonSet"
for f in currentNumberScheduled numberReady numberAvailable updatedNumberScheduled; do
	expect_eq 3 "$(dsstatus logs $f)" "status.$f"
done
expect_eq "$(k get ds logs -o jsonpath='{.metadata.generation}')" "$(dsstatus logs observedGeneration)" "observedGeneration"
pod=$(k get pods -l app=logs -o jsonpath='{.items[0].metadata.name}')
expect_eq "metadata.name In" "$(k get pod "$pod" -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key} {.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].operator}')" "node affinity to the node's name"
expect_eq "$(k get pod "$pod" -o jsonpath='{.spec.nodeName}')" "$(k get pod "$pod" -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}')" "bound to its affinity's node"
expect_eq 1 "$(k get pod "$pod" -o jsonpath='{.metadata.labels.pod-template-generation}')" "pod-template-generation"
hash1=$(k get pod "$pod" -o jsonpath='{.metadata.labels.controller-revision-hash}')
[ -n "$hash1" ] || fail "controller-revision-hash label"
expect_eq "logs-$hash1" "$(k get controllerrevisions -o name | sed 's|.*/||')" "one ControllerRevision named by the hash"
k get pod "$pod" -o jsonpath='{.spec.tolerations[*].key}' | grep -q 'node.kubernetes.io/unschedulable' ||
	fail "daemon pods tolerate unschedulable"
pass "one pod per node, placed by the scheduler through node affinity"

hdr=$(k get ds logs | head -1 | tr -s ' ')
expect_eq "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE" "$hdr" "kubectl get ds columns"
expect_eq "logs 3 3 3 3 3 <none>" "$(k get ds logs --no-headers | tr -s ' ' | cut -d' ' -f1-7)" "kubectl get ds row"
k get all | grep -q '^daemonset.apps/logs' || fail "kubectl get all lists the DaemonSet"
pass "kubectl get ds and get all"

# --- nodeSelector: only matching nodes; a node that starts matching gets one
daemonset ssd img:1 "{disk: ssd}"
wait_eq "n1 n2" "pods on the ssd nodes" running_nodes ssd
expect_eq "disk=ssd" "$(k get ds ssd --no-headers | tr -s ' ' | cut -d' ' -f7)" "NODE SELECTOR column"
k label node n3 disk=ssd --overwrite >/dev/null
wait_eq "n1 n2 n3" "a node relabelled to match gets a pod" running_nodes ssd
k label node n3 disk=hdd --overwrite >/dev/null
wait_eq "n1 n2" "a node that stops matching loses its pod" nodes_of ssd
pass "nodeSelector, as labels change"

# --- taints: NoSchedule keeps the pod there, NoExecute takes it away
k taint node n3 dedicated=x:NoSchedule >/dev/null
k taint node n2 evict=y:NoExecute >/dev/null
wait_eq "n1 n3" "NoExecute evicts, NoSchedule keeps" nodes_of logs
# Desired counts the nodes a new pod may go to; n3's is misscheduled.
wait_eq 1 "desired after the taints" dsstatus logs desiredNumberScheduled
expect_eq 1 "$(dsstatus logs numberMisscheduled)" "the pod kept on the NoSchedule node"
daemonset late img:1
wait_eq "n1" "a new DaemonSet avoids both tainted nodes" running_nodes late
k taint node n2 evict=y:NoExecute- >/dev/null
k taint node n3 dedicated=x:NoSchedule- >/dev/null
wait_eq "n1 n2 n3" "untainted nodes get their pods back" running_nodes late
pass "taints and tolerations"

# --- a cordoned node keeps its daemon and gets new ones
k cordon n1 >/dev/null
daemonset cordoned img:1
wait_eq "n1 n2 n3" "the scheduler binds daemon pods to a cordoned node" running_nodes cordoned
k uncordon n1 >/dev/null
pass "a cordoned node still runs daemon pods"

# --- new nodes get a pod, deleted nodes' pods go
node n4 "disk: hdd"
wait_eq "n1 n2 n3 n4" "a new node gets a pod" running_nodes logs
k delete node n4 >/dev/null
wait_eq "n1 n2 n3" "a deleted node's pod goes" nodes_of logs
pass "nodes added and deleted"

# --- a failed daemon pod is replaced on its node
failed=$(k get pods -l app=logs --field-selector spec.nodeName=n2 -o jsonpath='{.items[0].metadata.name}')
k patch pod "$failed" --subresource=status --type=merge -p '{"status":{"phase":"Failed"}}' >/dev/null
replaced() { k get pods -l app=logs --field-selector spec.nodeName=n2 -o jsonpath='{range .items[*]}{.metadata.name}|{.status.phase}{"\n"}{end}' | grep -v "^$failed|" | grep -c '|Running$' || true; }
wait_eq 1 "a new pod on n2" replaced
k get events --field-selector reason=FailedDaemonPod -o name | grep -q . || fail "FailedDaemonPod event"
pass "a failed daemon pod is deleted and made again"

# --- rolling update, at most maxUnavailable (1) node without a pod
wait_eq "n1 n2 n3" "all logs pods running" running_nodes logs
k rollout status ds/logs --timeout=20s >/dev/null || fail "settled before the update"
w0=$(watchers)
k get ds logs -w -o jsonpath='{.status.numberAvailable}{"\n"}' >"$WORK/avail" 2>/dev/null &
watcher=$!
wait_watchers $((w0 + 1))
k set image ds/logs c=img:2 >/dev/null
k rollout status ds/logs --timeout=30s >"$WORK/rollout" || fail "rollout status after set image"
grep -q 'successfully rolled out' "$WORK/rollout" || fail "rollout status says: $(cat "$WORK/rollout")"
kill $watcher 2>/dev/null || true
wait $watcher 2>/dev/null || true
min=$(sort -n "$WORK/avail" | head -1)
[ "$min" -ge 2 ] || fail "numberAvailable went to $min during the update (maxUnavailable 1): $(tr '\n' ' ' <"$WORK/avail")"
grep -qx 2 "$WORK/avail" || fail "the update never took a pod down: $(tr '\n' ' ' <"$WORK/avail")"
imgs=$(k get pods -l app=logs -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u)
expect_eq img:2 "$imgs" "every pod runs the new image"
expect_eq 2 "$(k get pods -l app=logs -o jsonpath='{.items[0].metadata.labels.pod-template-generation}')" "new pod-template-generation"
expect_eq 2 "$(k get controllerrevisions -l app=logs -o name | wc -l | tr -d ' ')" "two revisions"
k rollout history ds/logs | grep -q '^2 ' || fail "rollout history: $(k rollout history ds/logs)"
pass "RollingUpdate keeps all but maxUnavailable available; rollout status and history"

k rollout undo ds/logs >/dev/null || fail "rollout undo"
k rollout status ds/logs --timeout=30s >/dev/null || fail "rollout status after undo"
imgs=$(k get pods -l app=logs -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u)
expect_eq img:1 "$imgs" "rollout undo puts the old image back"
pass "rollout undo"

# --- maxSurge: the new pod starts beside the old one
k patch ds ssd --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}' >/dev/null
k rollout status ds/ssd --timeout=20s >/dev/null || fail "ssd settled"
w0=$(watchers)
k get ds ssd -w -o jsonpath='{.status.numberAvailable}{"\n"}' >"$WORK/avail2" 2>/dev/null &
watcher=$!
wait_watchers $((w0 + 1))
k set image ds/ssd c=img:2 >/dev/null
k rollout status ds/ssd --timeout=30s >/dev/null || fail "surge rollout"
kill $watcher 2>/dev/null || true
wait $watcher 2>/dev/null || true
min=$(sort -n "$WORK/avail2" | head -1)
expect_eq 2 "$min" "a surge update with maxUnavailable 0 keeps every node available"
imgs=$(k get pods -l app=ssd -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u)
expect_eq img:2 "$imgs" "surge update finished"
pass "RollingUpdate with maxSurge"

k delete ds logs >/dev/null
wait_eq "" "pods go with their DaemonSet" nodes_of logs
pass "its pods are garbage-collected with it"
