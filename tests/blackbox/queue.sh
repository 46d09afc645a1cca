#!/bin/sh
# Volcano queues: root and default exist from the start; the queue
# controller (lua/controllers/queue.lua) keeps status.state and the
# counts of PodGroups per phase; `volray queue close` makes a queue
# Closing while PodGroups name it, then Closed, and closes its children;
# `volray queue open` opens it again; Volcano's webhook rules refuse jobs
# in parent queues, missing or cyclic parents and deleting root, default
# or a parent; a bad state value is a Warning event;
# `volray queue list|get` print them, with volray(1)'s exit codes; kubectl
# prints Volcano's columns. Phases and admission are the scheduler's: the
# test asserts no queue capacity and takes a PodGroup's phase as it comes.
. "$(dirname "$0")/lib.sh"
need_samples
start_daemon
VR="$top_builddir/volray"

q() { # queue jsonpath
	k get queue "$1" -o jsonpath="$2"
}

expect_eq "false 1 Open" "$(q root '{.spec.reclaimable} {.spec.weight} {.status.state}')" "root"
wait_eq "true 1 root Open" "default queue" q default '{.spec.reclaimable} {.spec.weight} {.spec.parent} {.status.state}'
pass "queues root (not reclaimable) and default (reclaimable, parent root) exist from the start, Open"

head=$(k get queue | head -1 | tr -s ' ')
expect_eq "NAME PARENT WEIGHT STATE AGE" "$head" "kubectl get queue columns"
head=$(k get podgroup -A 2>&1 | head -1)
expect_eq "No resources found" "$head" "no PodGroups yet"
pass "kubectl get queue prints Volcano's columns"

k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec: {weight: 3, capability: {cpu: "4"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-dev}
spec: {weight: 1, parent: team}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg1, namespace: default}
spec: {minMember: 1, queue: team-dev}
YAML
# A PodGroup is Pending (or admitted already): either way it is counted.
groups() { # queue
	k get queue "$1" -o jsonpath='{.status.pending} {.status.inqueue} {.status.running}' |
		awk '{print $1 + $2 + $3}'
}
wait_eq 1 "PodGroups counted in team-dev" groups team-dev
wait_eq 0 "team's PodGroups" groups team
pass "a queue counts the PodGroups that name it"

# Volcano's webhook rules: jobs in leaf queues, parents that exist, no
# cycles, no parent with PodGroups; root, default and parents stay.
refused() { # what expected-text; the manifest on stdin
	out=$(k create -f - 2>&1) && fail "$1 was accepted"
	expect_contains "$out" "$2" "$1"
}
refused "a PodGroup in a queue with children" 'can only submit job to leaf queue, queue `team` has 1 child queue' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: in-parent, namespace: default}
spec: {minMember: 1, queue: team}
YAML
refused "a queue under a missing parent" 'spec.parent: Invalid value: "nosuch": parent queue nosuch not found' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: orphan}
spec: {parent: nosuch}
YAML
refused "a queue under itself" 'queue self cannot use itself as parent' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: self}
spec: {parent: self}
YAML
refused "a queue under one that holds PodGroups" 'queue team-dev cannot be the parent queue of queue sub because it has 1 PodGroup' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: sub}
spec: {parent: team-dev}
YAML
refused "deserved above capability" 'deserved[cpu] must be <= capability[cpu]' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: greedy}
spec: {capability: {cpu: "2"}, deserved: {cpu: "3"}}
YAML
out=$(k patch queue team --type=merge -p '{"spec":{"parent":"team-dev"}}' 2>&1) && fail "a cycle was accepted"
expect_contains "$out" "the parent would make a cycle" "a cycle of parents"
for qn in default root team; do
	out=$(k delete queue "$qn" 2>&1) && fail "queue $qn was deleted"
	expect_contains "$out" "is forbidden:" "deleting $qn"
done
expect_contains "$out" "queue team can not be deleted because it has 1 child queue" "deleting a parent"
pass "Volcano's queue rules: leaf queues for jobs, parents that exist, no cycle, no deleting root, default or a parent"

out=$("$VR" queue list) || fail "queue list exit $?"
expect_eq "NAME WEIGHT STATE PARENT PENDING INQUEUE RUNNING UNKNOWN COMPLETED" \
	"$(echo "$out" | head -1 | tr -s ' ')" "queue list header"
expect_contains "$(echo "$out" | tr -s ' ')" "team 3 Open root" "queue list row of team"
expect_contains "$(echo "$out" | tr -s ' ')" "team-dev 1 Open team" "queue list row of team-dev"
expect_contains "$(echo "$out" | tr -s ' ')" "root 1 Open <none>" "queue list row of root"
pass "volray queue list prints a row per queue"

"$VR" queue close team >"$WORK/out" || fail "queue close exit $?"
expect_eq "queue.scheduling.volcano.sh/team closed" "$(cat "$WORK/out")" "queue close output"
k wait --for=jsonpath='{.status.state}'=Closed queue/team --timeout=10s >/dev/null ||
	fail "team did not become Closed: $(q team '{.status.state}')"
k wait --for=jsonpath='{.status.state}'=Closing queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not close with its parent: $(q team-dev '{.status.state}')"
get=$("$VR" queue get team) || fail "queue get exit $?"
expect_contains "$get" "State:       Closed" "queue get state"
expect_contains "$get" "Weight:      3" "queue get weight"
expect_contains "$get" "Capability:  cpu=4" "queue get capability"
expect_contains "$get" "Reclaimable: true" "queue get reclaimable"
get=$("$VR" queue get team-dev) || fail "queue get exit $?"
expect_contains "$get" "State:       Closing" "queue get state of the child"
expect_contains "$get" "    default/pg1" "queue get lists the PodGroup"
pass "a closed queue's child with a PodGroup is Closing; queue get shows it"

desc=$("$VR" describe queue team-dev) || fail "describe queue exit $?"
expect_contains "$desc" "PodGroups:" "describe queue section"
expect_contains "$(echo "$desc" | tr -s ' ')" "default pg1" "describe queue lists pg1"
expect_contains "$desc" "Closing" "describe queue event or state"
pass "volray describe queue lists its PodGroups"

# Moving the PodGroup to another queue empties this one: Closed.
k patch podgroup pg1 --type=merge -p '{"spec":{"queue":"default"}}' >/dev/null
k wait --for=jsonpath='{.status.state}'=Closed queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not become Closed: $(q team-dev '{.status.state}')"
wait_eq 0 "team-dev's count after the move" groups team-dev
wait_eq 1 "default's count after the move" groups default
pass "a closing queue becomes Closed when its last PodGroup leaves"

"$VR" queue open team >/dev/null || fail "queue open exit $?"
k wait --for=jsonpath='{.status.state}'=Open queue/team --timeout=10s >/dev/null ||
	fail "team did not open"
k wait --for=jsonpath='{.status.state}'=Open queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not open with its parent"
pass "volray queue open opens a queue and its children"

# The same through stock kubectl: the annotation is the switch.
k annotate queue default volray.io/queue-state=Closed >/dev/null
k wait --for=jsonpath='{.status.state}'=Closing queue/default --timeout=10s >/dev/null ||
	fail "default did not become Closing by the annotation"
k delete podgroup pg1 >/dev/null
k wait --for=jsonpath='{.status.state}'=Closed queue/default --timeout=10s >/dev/null ||
	fail "default did not become Closed"
k annotate queue default volray.io/queue-state=Open --overwrite >/dev/null
k wait --for=jsonpath='{.status.state}'=Open queue/default --timeout=10s >/dev/null ||
	fail "default did not open by the annotation"
pass "kubectl annotate volray.io/queue-state=Closed closes a queue, =Open opens it"

# Without the annotation the state is what status.state says, as with
# Volcano's controller: a client that writes it directly is obeyed.
k annotate queue default volray.io/queue-state- >/dev/null
k patch queue team-dev --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
# The controller keeps it closed: with a PodGroup in it, Closing.
k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg2, namespace: default}
spec: {minMember: 1, queue: team-dev}
YAML
k wait --for=jsonpath='{.status.state}'=Closing queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev closed by its status is not Closing with a PodGroup: $(q team-dev '{.status.state}')"
k delete podgroup pg2 >/dev/null
k wait --for=jsonpath='{.status.state}'=Closed queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not become Closed again"
"$VR" queue open team-dev >/dev/null
k wait --for=jsonpath='{.status.state}'=Open queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not open"
pass "a queue closed by writing status.state stays closed until opened"

events() { # queue reason
	k get events --field-selector "involvedObject.name=$1,reason=$2" -o jsonpath='{.items[*].message}'
}
k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: odd}
YAML
k annotate queue odd volray.io/queue-state=Shut >/dev/null
wait_eq 'annotation volray.io/queue-state="Shut": the state is Open or Closed; the queue stays as it was' \
	"InvalidState event" events odd InvalidState
expect_eq Open "$(q odd '{.status.state}')" "a bad state value changes nothing"
pass "a bad state value is a Warning event"

# Volcano's upstream sample of hierarchical queues (named by annotation):
# accepted unchanged, each under root, Open.
k apply -f "$SAMPLES/volcano/hierarchical-jobs_queues.yaml" >/dev/null || fail "the upstream queues were refused"
for qn in root-eng-prod root-eng-dev root-sci-prod root-sci-dev; do
	k wait --for=jsonpath='{.status.state}'=Open "queue/$qn" --timeout=10s >/dev/null ||
		fail "$qn is not Open"
done
expect_contains "$("$VR" queue list | tr -s ' ')" "root-sci-dev 1 Open root 0 0 0 0 0" "an upstream queue in queue list"
pass "the upstream hierarchical queues sample is accepted, its queues Open under root"

set +e
"$VR" queue get nosuch 2>"$WORK/err"; rc=$?
set -e
expect_eq 1 "$rc" "queue get of a missing queue"
expect_contains "$(cat "$WORK/err")" 'queues.scheduling.volcano.sh "nosuch" not found' "its message"
set +e
"$VR" queue close nosuch 2>/dev/null; rc1=$?
"$VR" queue 2>/dev/null; rc2=$?
"$VR" queue get a b 2>/dev/null; rc3=$?
"$VR" queue shut team 2>"$WORK/err"; rc4=$?
set -e
expect_eq "1 2 2 2" "$rc1 $rc2 $rc3 $rc4" "exit codes of close nosuch, no subcommand, two names, unknown subcommand"
expect_contains "$(cat "$WORK/err")" "unknown queue subcommand" "the usage message"
pass "queue verbs exit 1 when refused and 2 on usage errors"

# vcctl's verbs: create with quantities, operate, delete.
out=$("$VR" queue create research --weight 4 --priority 7 --capability cpu=8,memory=16Gi --deserved cpu=4 --reclaimable false) ||
	fail "queue create: $out"
expect_eq "queue.scheduling.volcano.sh/research created" "$out" "queue create output"
expect_eq "4 7 8 16Gi 4 false" "$(q research '{.spec.weight} {.spec.priority} {.spec.capability.cpu} {.spec.capability.memory} {.spec.deserved.cpu} {.spec.reclaimable}')" \
	"the created queue"
set +e
err=$("$VR" queue create lab --parent research --deserved cpu=9 --capability cpu=8 2>&1); rc=$?
set -e
expect_eq 1 "$rc" "queue create refused"
expect_contains "$err" "deserved[cpu] must be <= capability[cpu]" "its reason"
"$VR" queue operate research --action update --weight 9 >/dev/null || fail "operate update"
expect_eq 9 "$(q research '{.spec.weight}')" "weight after operate update"
"$VR" queue operate research --action close >/dev/null || fail "operate close"
k wait --for=jsonpath='{.status.state}'=Closed queue/research --timeout=10s >/dev/null ||
	fail "research did not close"
expect_eq "queue.scheduling.volcano.sh/research deleted" "$("$VR" queue delete research)" "queue delete"
set +e
"$VR" queue delete default 2>"$WORK/err"; rc=$?
set -e
expect_eq 1 "$rc" "deleting default"
expect_contains "$(cat "$WORK/err")" '`default` queue can not be deleted' "its reason"
pass "vcctl's queue verbs: create, operate (update, close), delete"
