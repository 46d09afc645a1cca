#!/usr/bin/env bash
# volray sim's speed (issue 25): a synthetic trace of JOBS jobs (Poisson
# arrivals every 2 s on average, 1-8 pods of 1-4 cpu and 1-8 Gi, 60-3600
# s, a quarter at priority 100, four queues; seeded, so every run plays
# the same trace) on NODES simulated nodes of 32 cpu with the built-in
# policy; prints sim's table (its SPEEDUP column: virtual seconds per wall
# second) and the CPU time it took. Figures only.
#   bash bench/sim.sh                  NODES=1000 JOBS=10000
#   NODES=100 JOBS=1000 bash bench/sim.sh
set -eu
. "$(dirname "$0")/lib.sh"
: "${NODES:=1000}" "${JOBS:=10000}"
VOLRAY=$(dirname "$VOLRAYD")/volray
[ -x "$VOLRAY" ] || die "no volray beside $VOLRAYD"
bench_init
python3 - "$RUN_DIR/trace.csv" "$JOBS" <<'PY'
import random, sys
random.seed(7)
t = 0.0
with open(sys.argv[1], "w") as f:
    f.write("arrival,queue,tasks,cpu,memory,duration,priority,min_member\n")
    for i in range(int(sys.argv[2])):
        t += random.expovariate(1 / 2.0)
        tasks = random.randint(1, 8)
        f.write("%.1f,q%d,%d,%d,%dGi,%d,%d,%d\n" % (t, random.randint(0, 3),
            tasks, random.randint(1, 4), random.randint(1, 8),
            random.randint(60, 3600), random.choice([0, 0, 0, 100]), tasks))
PY
echo "# sim: NODES=$NODES JOBS=$JOBS"
/usr/bin/time -f "cpu %U s user, %S s system, %e s wall, %M KB max RSS" \
    "$VOLRAY" sim "$RUN_DIR/trace.csv" --nodes "$NODES"
