#!/bin/sh
# volray sim: a trace played in virtual time gives the numbers a hand
# calculation gives; the same trace twice gives the same table; CSV and
# YAML traces are the same trace; two policy directories side by side;
# --csv and --svg write well-formed files; a bad trace is refused with the
# line; labelled nodes (a nodes file, --node-labels) steer node rules; jobs
# left unplaced are listed with the scheduler's reason. No daemon.
. "$(dirname "$0")/lib.sh"
VR="$top_builddir/volray"
cd "$WORK"

# Two nodes of 4 cpu. Two gangs of queue a (2 pods of 2 cpu, 10 s) fill
# the cluster at 0; a gang of queue b (4 pods of 2 cpu, 5 s, minMember 4)
# arrives at 1 and can start only when both end, at 10, and ends at 15.
# Completion times 10, 10 and 14 (mean 11.3), waits 0, 0 and 9 (mean 3),
# makespan 15, the cluster full all along.
cat >t.csv <<'CSV'
arrival,queue,tasks,cpu,memory,duration,priority,min_member
0,a,2,2,1Gi,10,,
0,a,2,2,1Gi,10,,
1,b,4,2,1Gi,5,,4
CSV
run() { "$VR" sim "$@" --nodes 2 --node-cpu 4 --node-memory 16Gi; }
out=$(run t.csv) || fail "sim: $out"
row=$(printf '%s\n' "$out" | grep '^built-in ')
set -- $row
expect_eq "3 3" "$2 $3" "jobs and jobs done"
expect_eq "11 10 14 14" "$4 $5 $6 $7" "completion times mean p50 p95 max"
expect_eq "3 0 9 9" "$8 $9 ${10} ${11}" "waits mean p50 p95 max"
expect_eq "15 100%" "${12} ${13}" "makespan and utilisation"
pass "a small trace: completion, wait, makespan and utilisation as by hand"

# Deterministic: the same table twice (the speed column aside).
strip() { printf '%s\n' "$1" | sed 's/ *[0-9]*x$//; s/ *[0-9]*x  (.*$//'; }
out2=$(run t.csv)
expect_eq "$(strip "$out")" "$(strip "$out2")" "two runs of one trace"
cat >t.yaml <<'YAML'
- {arrival: 0, queue: a, tasks: 2, cpu: "2", memory: 1Gi, duration: 10}
- {arrival: 0, queue: a, tasks: 2, cpu: "2", memory: 1Gi, duration: 10}
- {arrival: 1, queue: b, tasks: 4, cpu: "2", memory: 1Gi, duration: 5, min_member: 4}
YAML
out3=$(run t.yaml)
expect_eq "$(strip "$out")" "$(strip "$out3")" "the YAML trace"
pass "deterministic, and YAML is the same trace as CSV"

# Two policy directories, side by side; files for tools and people.
mkdir -p fifo
cat >fifo/scheduler.yaml <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}]
YAML
out=$(run t.csv "$top_srcdir/policies" fifo --csv o.csv --svg plot) || fail "two policies: $out"
printf '%s\n' "$out" | grep -q "^$top_srcdir/policies " || fail "no row for the first policy: $out"
printf '%s\n' "$out" | grep -q '^fifo ' || fail "no row for the second: $out"
head -1 o.csv | grep -qx 'policy,time,utilization,queue,share,deserved' || fail "CSV header: $(head -1 o.csv)"
grep -q '^fifo,' o.csv || fail "the CSV lacks the second policy"
python3 -c 'import sys, xml.dom.minidom as m
for f in sys.argv[1:]:
    d = m.parse(f)
    assert d.getElementsByTagName("polyline"), f' plot-util.svg plot-shares.svg plot-wait.svg ||
	fail "the SVG plots are not well-formed or empty"
pass "two policies side by side, --csv and --svg"

# A bad trace: refused, with the line.
printf 'arrival,queue,tasks,cpu,memory,duration\n0,a,0,1,1Gi,10\n' >bad.csv
if out=$("$VR" sim bad.csv 2>&1); then fail "a bad trace was played: $out"; fi
case "$out" in *"line 2: tasks"*) ;; *) fail "the refusal names the line: $out" ;; esac
# The sample trace of the README.
out=$("$VR" sim "$top_srcdir/samples/sim-trace.csv" "$top_srcdir/policies" \
    "$top_srcdir/samples/sim-fifo" --nodes 20) || fail "the README's sample: $out"
pass "a bad trace is refused with its line; the README's sample runs"

# --- labelled nodes: a node-order rule that prefers a label ---------------
# small (4 cpu, cost=cheap) and big (8 cpu). A 4-cpu pod at 0 goes to big
# under the built-in policy (nodeorder prefers the emptier node), so the
# 8-cpu pod at 1 waits until 10; cheap-first puts the first on small and
# the second starts at once. A 16-cpu pod fits no node: listed unplaced.
cat >nodes.yaml <<'YAML'
- {name: small, cpu: 4, memory: 16Gi, labels: {cost: cheap}}
- {name: big, cpu: 8, memory: 16Gi}
YAML
sed '/labels/s/, labels: {cost: cheap}//' nodes.yaml >plain.yaml
cat >pick.csv <<'CSV'
arrival,queue,tasks,cpu,memory,duration
0,a,1,4,1Gi,10
1,a,1,8,1Gi,5
2,a,1,16,1Gi,5
CSV
mkdir -p cheap
cat >cheap/scheduler.yaml <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: cheap-first}]
YAML
cat >cheap/cheap-first.lua <<'LUA'
local P = {}
function P.node_order(ssn, task, node)
  if node.labels.cost == "cheap" then return 1000 end
  return 0
end
return P
LUA
out=$("$VR" sim pick.csv "$top_srcdir/policies" cheap --nodes-file nodes.yaml) || fail "sim on nodes.yaml: $out"
waits() { # the max wait of a policy's row
	printf '%s\n' "$1" | awk -v p="$2" '$1 == p { print $11 }'
}
expect_eq 9 "$(waits "$out" "$top_srcdir/policies")" "the built-in policy's max wait"
expect_eq 0 "$(waits "$out" cheap)" "cheap-first's max wait (the first pod on the cheap node)"
out2=$("$VR" sim pick.csv cheap --nodes-file plain.yaml) || fail "sim on plain.yaml: $out2"
expect_eq 9 "$(waits "$out2" cheap)" "cheap-first without the label"
case "$out" in *"on the 2 nodes of nodes.yaml (12 cpu, 32 GiB in all)"*) ;;
*) fail "the header names the nodes file: $out" ;; esac
for p in "$top_srcdir/policies" cheap; do
	case "$out" in *"# $p: 1 job left unplaced
job-00002 (queue a, arrived 2s, 1 of 1 pods of 16 cpu waiting): Unschedulable: 0/2 nodes are available: 2 Insufficient cpu."*) ;;
	*) fail "$p: the 16-cpu job listed unplaced with its reason: $out" ;; esac
done
pass "a nodes file's labels steer a node-order rule; a job no node fits is listed unplaced with its reason"

# --- --node-labels on every node; Node objects as kubectl prints them -----
mkdir -p gpu
cat >gpu/scheduler.yaml <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}, {name: gpu-pool}]
YAML
cat >gpu/gpu-pool.lua <<'LUA'
local P = {}
function P.predicate(ssn, task, node)
  if node.labels.pool ~= "gpu" then return "node(s) not in the gpu pool" end
end
return P
LUA
printf 'arrival,queue,tasks,cpu,memory,duration\n0,a,2,1,1Gi,10\n' >two.csv
out=$("$VR" sim two.csv gpu --nodes 2 --node-cpu 4 --node-memory 8Gi) || fail "sim without labels: $out"
case "$out" in *"job-00000 (queue a, arrived 0s, 2 of 2 pods of 1 cpu waiting): NotEnoughResources: "*"0/2 nodes are available: 2 node(s) not in the gpu pool."*) ;;
*) fail "the gang the predicate keeps out, unplaced with the plugin's reason: $out" ;; esac
out=$("$VR" sim two.csv gpu --nodes 2 --node-cpu 4 --node-memory 8Gi --node-labels zone=a,pool=gpu) ||
	fail "sim with --node-labels: $out"
expect_eq "1 1" "$(printf '%s\n' "$out" | awk '$1 == "gpu" { print $2, $3 }')" "--node-labels: the job done"
case "$out" in *unplaced*) fail "a job unplaced with --node-labels: $out" ;; esac
cat >kube.yaml <<'YAML'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: real-1, labels: {pool: gpu}}
  status: {allocatable: {cpu: "4", memory: 8Gi}}
YAML
out=$("$VR" sim two.csv gpu --nodes-file kube.yaml) || fail "sim on Node objects: $out"
expect_eq "1 1" "$(printf '%s\n' "$out" | awk '$1 == "gpu" { print $2, $3 }')" "Node objects with their labels"
pass "--node-labels labels every node; Node objects are taken with their labels"

# --- bad nodes input: refused, saying why --------------------------------
bad_nodes() { # exit-status want-text args...
	st=$1 want=$2
	shift 2
	if out=$("$VR" sim two.csv "$@" 2>&1); then fail "sim $*: ran: $out"; else rc=$?; fi
	expect_eq "$st" "$rc" "sim $*: exit status"
	case "$out" in *"$want"*) ;; *) fail "sim $*: want '$want': $out" ;; esac
}
printf -- '- {name: a, cpus: 4}\n' >bad.yaml
bad_nodes 1 'bad.yaml: node 1: unknown key "cpus" (want name, count, cpu, memory, pods or labels, or a Node object)' --nodes-file bad.yaml
printf -- '- {name: a}\n- {count: 2, name: a}\n- {name: a-1}\n' >bad.yaml
bad_nodes 1 'bad.yaml: two nodes named a-1' --nodes-file bad.yaml
printf -- '- {kind: Pod, metadata: {name: p}}\n' >bad.yaml
bad_nodes 1 'bad.yaml: node 1: a Pod, not a Node' --nodes-file bad.yaml
bad_nodes 2 '--node-labels: want key=value,...' --node-labels pool
bad_nodes 2 '--nodes and --nodes-file: give one' --nodes 3 --nodes-file nodes.yaml
pass "a bad nodes file or --node-labels is refused, saying why"
