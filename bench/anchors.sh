#!/usr/bin/env bash
# volray against the real anchors, same machine, same run:
#
#   bench/anchors.sh store
#   bench/anchors.sh sched
#   bench/anchors.sh nodes
#   bench/anchors.sh rayjobs
#   bench/anchors.sh operator
#
# Each alternates volray and its anchor run by run, prints the median of
# each figure with its spread (min-max), names the commit, versions and
# flags, and ends with one line per figure
#   ratio=R volray=X anchor=Y unit=U anchor_name=N what=W
# where R > 1 means volray is ahead, the last of them the headline. They
# fail only when something does not work (a server that does not start,
# a non-2xx answer, a run that does not finish), never on a figure.
# SMALL=1 runs each in well under a minute (tests/blackbox/bench.sh).
#
# store: volrayd (embedded store, write-ahead log) against kube-apiserver
# 1.34 on Debian's etcd 3.4 (one member, same disk, default fsync), the
# thing users run instead of volray, both serving HTTPS with their own CA
# and the admin's bearer token, started by scripts/anchors.sh. For each
# client count in CLIENTS, RUNS runs of N POSTs of a SIZE-byte ConfigMap
# (bench/loadgen, closed loop) alternate between the two; then the watch
# fan-out (W watchers of the collection, U updates by WRITERS writers:
# events delivered per second and delivery p99); then the resident memory
# of each side (volrayd; kube-apiserver plus etcd) holding OBJECTS
# ConfigMaps of SIZE bytes. The store's floor runs beside them: etcd
# itself (a one-member etcd of its own, plain gRPC on loopback, the same disk)
# doing what kube-apiserver asks of its etcd for a create, N
# create-if-absent transactions of SIZE-byte values at the same client
# counts, through gRPC (bench/etcdwire, C, gRPC core; FLOOR=0 leaves it
# out, and it is left out with a note when protoc-c or the libraries are
# missing). The headline: creates/s at the largest client count against
# kube-apiserver.
#
# sched: volray's scheduler (in volrayd, as it is deployed) against
# Volcano's vc-scheduler (the anchor, with the helm chart's
# volcano-scheduler.conf of ../shared/upstream-samples/volcano-1.15)
# running against a volrayd with --roles api,controllers,nodes: each on a
# fresh volrayd with NODES simulated nodes (32 CPUs, 128Gi), then PODS
# pods in PodGroups of GANG (minMember GANG, 1 CPU / 1 Gi each, the
# default queue, schedulerName volcano) created by WRITERS writers while
# the scheduler runs; pods/s from the first create to the last bind (a
# watch of bound pods says when), runs alternating (RUNS_SCHED, 3). The
# create rate alone (no scheduler) bounds both, and is printed too. Then
# kube-scheduler (its default profile, client limits lifted: KS_QPS 5000,
# KS_BURST 10000) against volray's scheduler on as many plain pods (no
# PodGroup, schedulerName default-scheduler), each alone the same way
# (PLAIN=0 leaves them out). For each NODES/PODS of SIZES ("5000/50000
# 500/5000"); the headline is the first size against vc-scheduler.
#
# rayjobs (anchors_rayjobs.sh): RAYJOBS (1000) RayJobs of a head and two
# workers on NODES (500) simulated nodes through two Volcano queues
# (bench/kuberay.sh), completed by volray's Ray controllers (a volrayd of
# its own with --controllers raycluster,rayjob,rayservice,
# kuberay.sh REMOTE=ray) against KubeRay's operator (KUBERAY=1), each a
# client of the same kind of volrayd, which runs everything else; at the
# same client rate limits, each of LIMITS ("100/200 2000/4000": QPS/burst,
# KubeRay's defaults, then lifted), and volray embedded (no client, no
# limit; EMBEDDED=0 leaves it out): wall time and API requests per RayJob
# (RUNS_RAYJOBS, 3). The headline: wall time at KubeRay's defaults.
#
# operator (anchors_operator.sh): on a fresh kube-apiserver each run,
# volray's Ray controllers and scheduler (volrayd --kubeconfig) against
# KubeRay's operator and vc-scheduler, the rest common (volray's other
# controllers, its nodes and ray roles with NODES simulated nodes):
# RAYJOBS gang-scheduled RayJobs end to end, wall time and kube-apiserver
# requests per RayJob (RUNS_OPERATOR, 3). Root: the anchor's side routes
# the simulated pods' range to lo for the run (bench/headrelay.py).
#
# nodes: volray's simulated nodes (volrayd --roles nodes) against kwok's,
# each a process against a volrayd --roles api: idle CPU with NODES Ready
# nodes, the node process's memory, PODS pods with spec.nodeName to
# Running (bench/nodes.sh REMOTE=1 and REMOTE=kwok, RUNS_NODES alternating).
#
# Environment (store): N (creates per run, 20000), CLIENTS ("1 16 64"),
# RUNS (3), SIZE (1024), W (1000), U (10000), WRITERS (4), OBJECTS
# (100000), FLOOR (1); SMALL=1 (N=500, RUNS=1, W=50, U=200,
# OBJECTS=2000). The other kinds' knobs are in their files' headers. All:
# SMALL, QUIET_WAIT, VOLRAYD, BENCH_WORK; the anchors from
# scripts/anchors.sh build.
set -eu
. "$(dirname "$0")/lib.sh"

KIND=${1:-}
case $KIND in
store | sched | nodes | rayjobs | operator) ;;
*) die "usage: anchors.sh store|sched|nodes|rayjobs|operator" ;;
esac

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${N:=500}" "${RUNS:=1}" "${W:=50}" "${U:=200}" "${OBJECTS:=2000}"
else
	: "${N:=20000}" "${RUNS:=3}" "${W:=1000}" "${U:=10000}" "${OBJECTS:=100000}"
fi
: "${CLIENTS:=1 16 64}"
: "${SIZE:=1024}"
: "${WRITERS:=4}"
# stats FILE COLUMN: "median min max" of a column.
stats() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '
		{ v[NR] = $1 }
		END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

ANCHORS="$TOP/scripts/anchors.sh"
if [ "$KIND" = sched ]; then
	# shellcheck source=bench/anchors_sched.sh
	. "$(dirname "$0")/anchors_sched.sh"
	exit 0
fi
case $KIND in
nodes | rayjobs | operator)
	# shellcheck source=/dev/null
	. "$(dirname "$0")/anchors_$KIND.sh"
	exit 0
	;;
esac
TLS=1
"$ANCHORS" path kube-apiserver >/dev/null 2>&1 ||
	die "kube-apiserver is not built: scripts/anchors.sh build kube-apiserver"

bench_init
build_loadgen
: "${FLOOR:=1}"
if [ "$FLOOR" = 1 ] && ! have_etcdwire_deps; then
	echo "# no floor: protoc-c or the libraries of bench/etcdwire ($EW_PKGS) are missing (scripts/deps.sh)"
	FLOOR=0
fi
[ "$FLOOR" = 0 ] || build_etcdwire
RESULTS="$RUN_DIR/results"
: >"$RESULTS"
KA_DIR=""

ka_start() {
	KA_DIR="$RUN_DIR/ka"
	rm -rf "$KA_DIR"
	mkdir -p "$KA_DIR"
	"$ANCHORS" kube-apiserver start "$KA_DIR" >"$RUN_DIR/ka-start.log" 2>&1 || {
		cat "$RUN_DIR/ka-start.log"
		die "kube-apiserver did not start"
	}
	KA_BASE=$(sed -n 's/^ *server: //p' "$KA_DIR/kubeconfig" | head -1)
	KA_URL="$KA_BASE/api/v1/namespaces/default/configmaps"
	KA_AUTH="Authorization: Bearer $(cat "$KA_DIR/token")"
	KA_TLS_ARGS="--cacert $KA_DIR/ca.crt"
	KA_PID=$(cat "$KA_DIR/kube-apiserver.pid")
	KA_ETCD_PID=$(cat "$KA_DIR/etcd.pid")
}
ka_stop() {
	[ -n "$KA_DIR" ] || return 0
	"$ANCHORS" kube-apiserver stop "$KA_DIR" >/dev/null 2>&1 || true
	rm -rf "$KA_DIR"
	KA_DIR=""
}
trap 'rc=$?; set +e; ka_stop; (exit $rc); bench_cleanup' EXIT

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# create TARGET CLIENTS RUN: one loadgen run of creates; its RESULT line
# with the servers' CPU per request appended, in RUN_DIR/create-TARGET-C.
create() {
	local target=$1 c=$2 r=$3 url auth tls pids c0 c1 out line cpu
	if [ "$target" = volray ]; then
		url=$VR_URL auth=$VR_AUTH tls=$VR_TLS_ARGS pids=$VR_PID
	else
		url=$KA_URL auth=$KA_AUTH tls=$KA_TLS_ARGS pids="$KA_PID $KA_ETCD_PID"
	fi
	wait_quiet
	# shellcheck disable=SC2086
	c0=$(cpu_of $pids)
	# shellcheck disable=SC2086
	out=$("$LOADGEN" create -H "$auth" $tls -u "$url" -n "$N" -c "$c" \
	    -s "$SIZE" -p "a$$-$target-c$c-r$r") || {
		echo "$out"
		die "$target at $c clients failed"
	}
	# shellcheck disable=SC2086
	c1=$(cpu_of $pids)
	line=$(echo "$out" | grep '^RESULT ')
	cpu=$(awk -v a="$c0" -v b="$c1" -v n="$N" 'BEGIN { printf "%.0f", (b - a) * 1e6 / n }')
	printf '  %-14s %2s clients run %s: %8.0f creates/s  p50 %7.3f ms  p99 %7.3f ms  server CPU %5s us/create (idle before: %s%%)\n' \
	    "$target" "$c" "$r" "$(result_field "$line" rps)" \
	    "$(result_field "$line" p50_ms)" "$(result_field "$line" p99_ms)" "$cpu" "$IDLE"
	echo "$(result_field "$line" rps) $(result_field "$line" p50_ms) $(result_field "$line" p99_ms) $cpu" \
	    >>"$RUN_DIR/create-$target-$c"
}

# floor_txn CLIENTS RUN: one etcdwire run of create-if-absent txns on
# the floor's etcd through gRPC, as create() prints and keeps its figures.
floor_txn() {
	local c=$1 r=$2 out line
	wait_quiet
	out=$("$ETCDWIRE" txn -t grpc -e "${ETCD_URL#http://}" -n "$N" -c "$c" \
	    -s "$SIZE" -P "$ETCD_PID" -p "a$$-floor-c$c-r$r") || {
		echo "$out"
		die "etcd (gRPC) at $c clients failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-14s %2s clients run %s: %8.0f txns/s    p50 %7.3f ms  p99 %7.3f ms  server CPU %5.0f us/txn (idle before: %s%%)\n' \
	    "etcd-grpc" "$c" "$r" "$(result_field "$line" rps)" \
	    "$(result_field "$line" p50_ms)" "$(result_field "$line" p99_ms)" \
	    "$(awk -v s="$(result_field "$line" server_cpu_per_10k)" 'BEGIN { print s * 100 }')" "$IDLE"
	echo "$(result_field "$line" rps) $(result_field "$line" p50_ms) $(result_field "$line" p99_ms)" \
	    >>"$RUN_DIR/create-floor-$c"
}

# watch TARGET: one fan-out run; its RESULT line in RUN_DIR/watch-TARGET.
watch_run() {
	local target=$1 url auth tls out
	if [ "$target" = volray ]; then
		url=$VR_URL auth=$VR_AUTH tls=$VR_TLS_ARGS
	else
		url=$KA_URL auth=$KA_AUTH tls=$KA_TLS_ARGS
	fi
	wait_quiet
	# shellcheck disable=SC2086
	out=$("$LOADGEN" watch -H "$auth" $tls -u "$url" -w "$W" -U "$U" \
	    -c "$WRITERS" -s "$SIZE" -p "w$$-$target") || {
		echo "$out"
		die "the $target watch run failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-14s %d watchers: %10.0f events/s  delivery p50 %7.3f ms  p99 %7.3f ms  updates %6.0f/s\n' \
	    "$target" "$W" "$(result_field "$line" events_per_s)" \
	    "$(result_field "$line" deliver_p50_ms)" "$(result_field "$line" deliver_p99_ms)" \
	    "$(result_field "$line" update_rps)"
	echo "$line" >"$RUN_DIR/watch-$target"
}

# fill TARGET: OBJECTS ConfigMaps (64 clients), then the resident memory.
fill() {
	local target=$1 url auth tls rss
	if [ "$target" = volray ]; then
		url=$VR_URL auth=$VR_AUTH tls=$VR_TLS_ARGS
	else
		url=$KA_URL auth=$KA_AUTH tls=$KA_TLS_ARGS
	fi
	# shellcheck disable=SC2086
	"$LOADGEN" create -H "$auth" $tls -u "$url" -n "$OBJECTS" -c 64 \
	    -s "$SIZE" -p "f$$-$target" >"$RUN_DIR/fill-$target.out" || {
		cat "$RUN_DIR/fill-$target.out"
		die "filling $target failed"
	}
	sleep 2
	if [ "$target" = volray ]; then
		rss=$(rss_kb "$VR_PID")
		printf '  %-14s %d objects: RSS %6.0f MiB (volrayd)\n' "$target" \
		    "$OBJECTS" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
	else
		local a e
		a=$(rss_kb "$KA_PID") e=$(rss_kb "$KA_ETCD_PID")
		rss=$((a + e))
		printf '  %-14s %d objects: RSS %6.0f MiB (kube-apiserver %.0f + etcd %.0f)\n' \
		    "$target" "$OBJECTS" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
		    "$(awk -v k="$a" 'BEGIN { print k / 1024 }')" "$(awk -v k="$e" 'BEGIN { print k / 1024 }')"
	fi
	echo "$rss" >"$RUN_DIR/rss-$target"
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# anchors store: N=$N creates per run, RUNS=$RUNS, CLIENTS=$CLIENTS, SIZE=$SIZE," \
    "W=$W watchers, U=$U updates, WRITERS=$WRITERS, OBJECTS=$OBJECTS"
echo "# volray $commit ($VOLRAYD, --no-local-node, HTTPS with its CA, embedded store)"
echo "# anchor: kube-apiserver $("$("$ANCHORS" path kube-apiserver)" --version 2>&1 | head -1)" \
    "on $(etcd --version 2>/dev/null | head -1), scripts/anchors.sh kube-apiserver start" \
    "(--authorization-mode=Node,RBAC, the admin in system:masters)"

start_volrayd
ka_start
if [ "$FLOOR" = 1 ]; then
	TLS=0 start_etcd
	echo "# floor: $(etcd --version 2>/dev/null | head -1) alone (its own data dir on the same disk)," \
	    "bench/etcdwire txn -t grpc (gRPC core $(pkg-config --modversion grpc)): create-if-absent txns"
fi
echo
echo "## creates (POST ConfigMap, closed loop), runs alternating"
for c in $CLIENTS; do
	for r in $(seq 1 "$RUNS"); do
		create volray "$c" "$r"
		create kube-apiserver "$c" "$r"
		[ "$FLOOR" = 0 ] || floor_txn "$c" "$r"
	done
done
[ "$FLOOR" = 0 ] || stop_etcd
echo
echo "## watch fan-out"
watch_run volray
watch_run kube-apiserver
stop_volrayd
ka_stop
# Memory on fresh servers, holding OBJECTS objects each.
start_volrayd
ka_start
echo
echo "## memory"
fill volray
fill kube-apiserver
stop_volrayd
ka_stop

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s | %-40s | %-40s | %-6s | %s\n' "" "volray" "kube-apiserver + etcd" "" "etcd alone, gRPC (the floor)"
printf '%-8s | %-22s %8s %8s | %-22s %8s %8s | %-6s | %-22s %8s %8s\n' clients "creates/s (min-max)" "p50 ms" "p99 ms" \
    "creates/s (min-max)" "p50 ms" "p99 ms" "ratio" "txns/s (min-max)" "p50 ms" "p99 ms"
lines=()
floors=()
for c in $CLIENTS; do
	read -r vm vlo vhi <<<"$(stats "$RUN_DIR/create-volray-$c" 1)"
	read -r km klo khi <<<"$(stats "$RUN_DIR/create-kube-apiserver-$c" 1)"
	vp50=$(stats "$RUN_DIR/create-volray-$c" 2 | cut -d' ' -f1)
	vp99=$(stats "$RUN_DIR/create-volray-$c" 3 | cut -d' ' -f1)
	kp50=$(stats "$RUN_DIR/create-kube-apiserver-$c" 2 | cut -d' ' -f1)
	kp99=$(stats "$RUN_DIR/create-kube-apiserver-$c" 3 | cut -d' ' -f1)
	ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", a / b }')
	fl="-"
	if [ "$FLOOR" = 1 ]; then
		read -r fm flo fhi <<<"$(stats "$RUN_DIR/create-floor-$c" 1)"
		fl=$(printf '%7.0f (%6.0f-%6.0f) %8.3f %8.3f' "$fm" "$flo" "$fhi" \
		    "$(stats "$RUN_DIR/create-floor-$c" 2 | cut -d' ' -f1)" \
		    "$(stats "$RUN_DIR/create-floor-$c" 3 | cut -d' ' -f1)")
		floors+=("ratio=$(awk -v a="$vm" -v b="$fm" 'BEGIN { printf "%.2f", a / b }') volray=$(printf '%.0f' "$vm") anchor=$(printf '%.0f' "$fm") unit=creates/s anchor_name=etcd-grpc what=floor-creates-$c-clients")
	fi
	printf '%-8s | %7.0f (%6.0f-%6.0f) %8.3f %8.3f | %7.0f (%6.0f-%6.0f) %8.3f %8.3f | %5sx | %s\n' \
	    "$c" "$vm" "$vlo" "$vhi" "$vp50" "$vp99" "$km" "$klo" "$khi" "$kp50" "$kp99" "$ratio" "$fl"
	lines+=("ratio=$ratio volray=$(printf '%.0f' "$vm") anchor=$(printf '%.0f' "$km") unit=creates/s anchor_name=kube-apiserver what=creates-$c-clients")
done
vw=$(result_field "$(cat "$RUN_DIR/watch-volray")" events_per_s)
kw=$(result_field "$(cat "$RUN_DIR/watch-kube-apiserver")" events_per_s)
vd=$(result_field "$(cat "$RUN_DIR/watch-volray")" deliver_p99_ms)
kd=$(result_field "$(cat "$RUN_DIR/watch-kube-apiserver")" deliver_p99_ms)
printf 'watch    | %7.0f events/s, delivery p99 %.1f ms    | %7.0f events/s, delivery p99 %.1f ms    | %sx\n' \
    "$vw" "$vd" "$kw" "$kd" "$(awk -v a="$vw" -v b="$kw" 'BEGIN { printf "%.2f", a / b }')"
vr=$(cat "$RUN_DIR/rss-volray") kr=$(cat "$RUN_DIR/rss-kube-apiserver")
printf 'memory   | %7.0f MiB at %d objects                | %7.0f MiB at %d objects                | %sx\n' \
    "$(awk -v k="$vr" 'BEGIN { print k / 1024 }')" "$OBJECTS" \
    "$(awk -v k="$kr" 'BEGIN { print k / 1024 }')" "$OBJECTS" \
    "$(awk -v a="$vr" -v b="$kr" 'BEGIN { printf "%.2f", b / a }')"
echo
echo "ratio=$(awk -v a="$vw" -v b="$kw" 'BEGIN { printf "%.2f", a / b }') volray=$(printf '%.0f' "$vw") anchor=$(printf '%.0f' "$kw") unit=events/s anchor_name=kube-apiserver what=watch-$W-watchers"
echo "ratio=$(awk -v a="$vr" -v b="$kr" 'BEGIN { printf "%.2f", b / a }') volray=$((vr / 1024)) anchor=$((kr / 1024)) unit=MiB-RSS anchor_name=kube-apiserver+etcd what=memory-$OBJECTS-objects"
for l in ${floors[@]+"${floors[@]}"} "${lines[@]}"; do
	echo "$l"
done
