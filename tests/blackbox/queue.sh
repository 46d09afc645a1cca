#!/bin/sh
# Volcano queues: root and default exist from the start; the queue
# controller (lua/controllers/queue.lua) keeps status.state and the
# counts of PodGroups per phase; `volray queue close` makes a queue
# Closing while PodGroups name it, then Closed, and closes its children;
# `volray queue open` opens it again; a missing parent is a Warning event;
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
spec: {minMember: 1, queue: team}
YAML
# A PodGroup is Pending (or admitted already): either way it is counted.
groups() { # queue
	k get queue "$1" -o jsonpath='{.status.pending} {.status.inqueue} {.status.running}' |
		awk '{print $1 + $2 + $3}'
}
wait_eq 1 "PodGroups counted in team" groups team
wait_eq 0 "team-dev's PodGroups" groups team-dev
pass "a queue counts the PodGroups that name it"

out=$("$VR" queue list) || fail "queue list exit $?"
expect_eq "NAME WEIGHT STATE PARENT PENDING INQUEUE RUNNING UNKNOWN COMPLETED" \
	"$(echo "$out" | head -1 | tr -s ' ')" "queue list header"
expect_contains "$(echo "$out" | tr -s ' ')" "team 3 Open root" "queue list row of team"
expect_contains "$(echo "$out" | tr -s ' ')" "team-dev 1 Open team" "queue list row of team-dev"
expect_contains "$(echo "$out" | tr -s ' ')" "root 1 Open <none>" "queue list row of root"
pass "volray queue list prints a row per queue"

"$VR" queue close team >"$WORK/out" || fail "queue close exit $?"
expect_eq "queue.scheduling.volcano.sh/team closed" "$(cat "$WORK/out")" "queue close output"
k wait --for=jsonpath='{.status.state}'=Closing queue/team --timeout=10s >/dev/null ||
	fail "team did not become Closing: $(q team '{.status.state}')"
k wait --for=jsonpath='{.status.state}'=Closed queue/team-dev --timeout=10s >/dev/null ||
	fail "team-dev did not close with its parent: $(q team-dev '{.status.state}')"
get=$("$VR" queue get team) || fail "queue get exit $?"
expect_contains "$get" "State:       Closing" "queue get state"
expect_contains "$get" "Weight:      3" "queue get weight"
expect_contains "$get" "Capability:  cpu=4" "queue get capability"
expect_contains "$get" "Reclaimable: true" "queue get reclaimable"
expect_contains "$get" "    default/pg1" "queue get lists the PodGroup"
pass "a closed queue with a PodGroup is Closing, its child Closed; queue get shows it"

desc=$("$VR" describe queue team) || fail "describe queue exit $?"
expect_contains "$desc" "PodGroups:" "describe queue section"
expect_contains "$(echo "$desc" | tr -s ' ')" "default pg1" "describe queue lists pg1"
expect_contains "$desc" "Closing" "describe queue event or state"
pass "volray describe queue lists its PodGroups"

# Moving the PodGroup to another queue empties this one: Closed.
k patch podgroup pg1 --type=merge -p '{"spec":{"queue":"default"}}' >/dev/null
k wait --for=jsonpath='{.status.state}'=Closed queue/team --timeout=10s >/dev/null ||
	fail "team did not become Closed: $(q team '{.status.state}')"
wait_eq 0 "team's count after the move" groups team
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
metadata: {name: orphan}
spec: {parent: nosuch}
YAML
wait_eq 'parent queue "nosuch" does not exist' "ParentNotFound event" events orphan ParentNotFound
k annotate queue orphan volray.io/queue-state=Shut >/dev/null
wait_eq 'annotation volray.io/queue-state="Shut": the state is Open or Closed; the queue stays as it was' \
	"InvalidState event" events orphan InvalidState
expect_eq Open "$(q orphan '{.status.state}')" "a bad state value changes nothing"
pass "a missing parent and a bad state value are Warning events"

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
