#!/bin/sh
# Network topology (issue 26): Volcano 1.15's HyperNode CRD applies
# unchanged; `volray node add --virtual --topology` labels simulated nodes
# into racks and spines, from which the hypernode controller makes
# HyperNodes (kept in step with the labels); a Volcano Job with a hard
# networkTopology runs all its pods within one rack with the
# network-topology-aware plugin, and one that no rack holds waits with
# the reason.
. "$(dirname "$0")/lib.sh"
need_samples
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: network-topology-aware
YAML
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"

k apply -f "$SAMPLES/volcano-1.15/crd/topology.volcano.sh_hypernodes.yaml" >/dev/null 2>&1 ||
	fail "Volcano 1.15's HyperNode CRD"
pass "Volcano 1.15's HyperNode CRD applies unchanged"

# 8 nodes of 4 cpu: racks of 2 nodes (tier 1), spines of 2 racks (tier 2).
"$VR" node add --virtual --count 8 --cpu 4 --memory 8Gi --name-prefix n --topology 2,2 >/dev/null ||
	fail "node add --topology"
expect_eq "n-tier1-1 n-tier2-0" "$(k get node n-3 -o jsonpath='{.metadata.labels.volray\.io/hypernode-tier1} {.metadata.labels.volray\.io/hypernode-tier2}')" \
	"n-3's topology labels"
hns() { k get hypernodes -o jsonpath='{range .items[*]}{.metadata.name}:{.spec.tier}:{.status.nodeCount} {end}'; }
wait_eq "n-tier1-0:1:2 n-tier1-1:1:2 n-tier1-2:1:2 n-tier1-3:1:2 n-tier2-0:2:4 n-tier2-1:2:4 " "HyperNodes from the labels" hns
members=$(k get hypernode n-tier2-1 -o jsonpath='{.spec.members[*].selector.exactMatch.name}')
expect_eq "n-tier1-2 n-tier1-3" "$members" "a spine's members"
out=$("$VR" hypernode get n-tier2-0) || fail "hypernode get"
expect_eq "n-tier2-0 (tier 2, 4 nodes)
|-- n-tier1-0 (tier 1, 2 nodes)
|   |-- n-0
|   \`-- n-1
\`-- n-tier1-1 (tier 1, 2 nodes)
    |-- n-2
    \`-- n-3" "$out" "volray hypernode get"
expect_eq "n-tier2-0 (tier 2, 4 nodes)" "$("$VR" hypernode list | head -n 1)" "the first top of hypernode list"
expect_eq 6 "$("$VR" hypernode list | wc -l | tr -d ' ')" "hypernode list's lines"
pass "HyperNodes made from node labels: racks of nodes, spines of racks, node counts; volray hypernode draws them"

# Bad members are refused with the field, as Volcano's webhook does.
bad_hn() { # what expected; manifest on stdin
	out=$(k create -f - 2>&1) && fail "$1 was accepted"
	expect_contains "$out" "$2" "$1"
}
bad_hn "a member with two selectors" 'spec.members[0].selector: Invalid value: exactly one of exactMatch, regexMatch or labelMatch' <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: two}
spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n-0}, regexMatch: {pattern: "^n-"}}}]}
YAML
bad_hn "a pattern that does not compile" 'not a regular expression' <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: badre}
spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: "n-[0-"}}}]}
YAML
bad_hn "labelMatch for HyperNode members" 'labelMatch selects nodes' <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: badlm}
spec: {tier: 2, members: [{type: HyperNode, selector: {labelMatch: {matchLabels: {a: b}}}}]}
YAML
pass "HyperNodes with bad members are refused, naming the field"

# A node's labels go: its rack counts one node fewer.
k label node n-7 volray.io/hypernode-tier1- volray.io/hypernode-tier2- >/dev/null
wait_eq 1 "the rack's node count after a node left it" \
	k get hypernode n-tier1-3 -o jsonpath='{.status.nodeCount}'
pass "HyperNodes follow the labels"

"$VR" queue create org >/dev/null || fail "queue org"
"$VR" queue create org-ml --parent org >/dev/null || fail "queue org-ml"
vcjob() { # name replicas tier
	k apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  queue: org-ml
  minAvailable: $2
  schedulerName: volcano
  networkTopology: {mode: hard, highestTierAllowed: $3}
  tasks:
  - name: w
    replicas: $2
    template:
      metadata: {annotations: {volray.io/sim-duration: 1h}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
YAML
}
racks() { # job: the distinct racks its pods run in
	for n in $(k get pods -l volcano.sh/job-name="$1" -o jsonpath='{.items[*].spec.nodeName}'); do
		k get node "$n" -o jsonpath='{.metadata.labels.volray\.io/hypernode-tier1}{"\n"}'
	done | sort -u | tr '\n' ' '
}
running() { k get pods -l volcano.sh/job-name="$1" --field-selector=status.phase=Running -o name | wc -l | tr -d ' '; }
vcjob rack 4 1
wait_eq 4 "the rack job's pods run" running rack
expect_eq 1 "$(racks rack | wc -w | tr -d ' ')" "racks the job spans ($(racks rack))"
pass "a hard networkTopology job runs within one rack"
alloc() { k get queue "$1" -o jsonpath='{.status.allocated.cpu}'; }
wait_eq 8 "the child queue's allocated cpu" alloc org-ml
wait_eq 8 "the parent queue's allocated cpu (rolled up)" alloc org
pass "a queue's allocated rolls up into its parent's"

# 8 cpu more than any free rack has, tier 1 only: it waits, saying why.
vcjob wide 5 1
why() { k get pod wide-w-0 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' |
	grep -c 'no HyperNode of tier <= 1 can hold the job'; }
wait_eq 1 "the reason on the waiting pod" why
expect_eq 0 "$(running wide)" "pods of the job no rack holds"
pass "a job no HyperNode of its allowed tier holds waits with the reason"
