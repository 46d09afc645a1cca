#!/usr/bin/env bash
# Watch fan-out: how fast volray delivers one stream of updates to many
# watchers, with etcd's watch as the baseline.
#
# loadgen pre-creates K ConfigMaps, lists the collection for its
# resourceVersion, opens W watches from that revision, then sends U
# unconditional PUTs through WRITERS connections, each object carrying its
# send time. Every watcher must receive every update. The figures are
# delivered events per second (from the first PUT to the last event read)
# and the delivery latency (from the PUT being sent to the event being
# read, so it includes the fdatasync). Two runs per server:
#
#   saturated  writers in a closed loop: the most events per second the
#              server delivers; the latency then includes any backlog.
#   paced      RATE updates per second for PACED_U updates, a load both
#              servers should sustain: latency without a backlog.
#
# etcd 3.4 is driven the same way through its JSON gateway: puts to
# /v3/kv/put and W streaming watches on /v3/watch. It delivers events an
# order of magnitude more slowly and does not slow its writers down, so
# its saturated run uses ETCD_U updates (U/10 by default) to finish in
# about a minute; events per second do not depend on that count, while its
# latency, being backlog, grows with it. Fails only if something does not
# work (a non-2xx, a lost event, a server that does not start), never on a
# figure.
#
# With ETCD_STORE=1 the volray side is two API servers on one etcd member
# (--etcd-servers, prefix /vrbench): the writers go to the first, the
# watchers alternate between the two (loadgen --watch-url), so every
# event comes from one etcd watch per server and is fanned out there;
# the baseline is the same etcd serving the 1,000 watches itself.
#
# Environment: W (1000), U (10000), ETCD_U (U/10), WRITERS (4), RATE (10),
# PACED_U (200), SIZE (1024), SMALL=1 (W=50, U=200, PACED_U=40, RATE=20),
# ETCD_BASELINE=0 (skip etcd), QUIET_WAIT (seconds to wait before each run
# for an idle machine, 0), VOLRAYD, SHARE_DIR, ETCD, BENCH_WORK.
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${W:=50}" "${U:=200}" "${ETCD_U:=200}" "${PACED_U:=40}" "${RATE:=20}"
else
	: "${W:=1000}" "${U:=10000}" "${PACED_U:=200}" "${RATE:=10}"
fi
: "${ETCD_U:=$((U / 10 > 0 ? U / 10 : 1))}"
: "${WRITERS:=4}"
: "${SIZE:=1024}"
: "${ETCD_BASELINE:=1}"

bench_init
build_loadgen

# run_watch NAME URL UPDATES [loadgen options]: print loadgen's report
# and keep its RESULT line in $RUN_DIR/NAME.result.
run_watch() {
	local name=$1 url=$2 updates=$3
	shift 3
	case $name in volray*) set -- -H "$VR_AUTH" ${VR2_BASE:+--watch-url "$VR2_BASE"} "$@" ;; esac
	wait_quiet
	"$LOADGEN" watch "$@" -u "$url" -w "$W" -U "$updates" -c "$WRITERS" \
	    -s "$SIZE" -p "w$$-$name" >"$RUN_DIR/$name.out" || {
		cat "$RUN_DIR/$name.out"
		die "watch benchmark $name failed"
	}
	echo "$name: (cpu idle before: $IDLE%)"
	grep -v '^RESULT ' "$RUN_DIR/$name.out" | sed 's/^/  /'
	grep '^RESULT ' "$RUN_DIR/$name.out" >"$RUN_DIR/$name.result"
}

echo "# watch: W=$W watchers, U=$U updates (etcd $ETCD_U), WRITERS=$WRITERS," \
    "paced: $PACED_U updates at $RATE/s, SIZE=$SIZE bytes"
VR2_BASE=""
# start_servers / stop_servers: volrayd, or with ETCD_STORE=1 a fresh etcd
# and two volrayd on it (the second --roles api, started once the first
# has put the cluster's CA and token in etcd).
start_servers() {
	if [ "${ETCD_STORE:-0}" != 1 ]; then
		start_volrayd
		echo "volrayd on port $VR_PORT"
		return
	fi
	start_etcd
	VR_EXTRA_ARGS="--etcd-servers=$ETCD_URL --etcd-prefix=/vrbench"
	start_volrayd
	VR2_PORT=$(free_port)
	rm -rf "$RUN_DIR/vr2"
	"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/vr2" --roles api \
	    --listen "127.0.0.1:$VR2_PORT" --no-local-node --plain-http \
	    --share-dir "$SHARE_DIR" $VR_EXTRA_ARGS >"$RUN_DIR/volrayd2.log" 2>&1 &
	VR2_PID=$!
	PIDS="$PIDS $VR2_PID"
	wait_http "http://127.0.0.1:$VR2_PORT/readyz" 30 ok ||
	    die "the second volrayd did not become ready"
	VR2_BASE="http://127.0.0.1:$VR2_PORT"
	echo "two volrayd on etcd ${ETCD_URL##*:}: ports $VR_PORT and $VR2_PORT"
}
stop_servers() {
	stop_volrayd
	if [ -n "$VR2_BASE" ]; then
		kill "$VR2_PID" 2>/dev/null || true
		wait "$VR2_PID" 2>/dev/null || true
		rm -rf "$RUN_DIR/vr2"
		stop_etcd
		VR2_BASE=""
	fi
}
[ "${ETCD_STORE:-0}" != 1 ] || { [ "$TLS" != 1 ] || die "ETCD_STORE=1 runs plain HTTP only"; have_etcd || die "ETCD_STORE=1 wants etcd"; }
start_servers
run_watch volray-saturated "$VR_URL" "$U"
stop_servers
start_servers
run_watch volray-paced "$VR_URL" "$PACED_U" -r "$RATE"
stop_servers
VR_EXTRA_ARGS=""

if [ "$ETCD_BASELINE" = 1 ]; then
	if have_etcd; then
		start_etcd
		echo "$("$ETCD" --version | head -1) on port ${ETCD_URL##*:}"
		run_watch etcd-saturated "$ETCD_URL" "$ETCD_U" --etcd
		stop_etcd
		start_etcd
		run_watch etcd-paced "$ETCD_URL" "$PACED_U" --etcd -r "$RATE"
		stop_etcd
	else
		echo "# etcd is not installed and could not be: no baseline"
	fi
fi

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-17s %8s %9s %9s %10s | %10s %10s %10s\n' run watchers updates \
    "updates/s" "events/s" "deliv p50" "deliv p99" "deliv max"
for name in volray-saturated etcd-saturated volray-paced etcd-paced; do
	[ -f "$RUN_DIR/$name.result" ] || continue
	line=$(cat "$RUN_DIR/$name.result")
	printf '%-17s %8s %9s %9.0f %10.0f | %7.1f ms %7.1f ms %7.1f ms\n' \
	    "$name" "$(result_field "$line" watchers)" \
	    "$(result_field "$line" updates)" \
	    "$(result_field "$line" update_rps)" \
	    "$(result_field "$line" events_per_s)" \
	    "$(result_field "$line" deliver_p50_ms)" \
	    "$(result_field "$line" deliver_p99_ms)" \
	    "$(result_field "$line" deliver_max_ms)"
done
