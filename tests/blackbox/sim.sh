#!/bin/sh
# volray sim: a trace played in virtual time gives the numbers a hand
# calculation gives; the same trace twice gives the same table; CSV and
# YAML traces are the same trace; two policy directories side by side;
# --csv and --svg write well-formed files; a bad trace is refused with the
# line. No daemon.
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
