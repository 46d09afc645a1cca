#!/usr/bin/env bash
# Write throughput of the store, volray against etcd.
#
# Builds bench/loadgen, starts volrayd and Debian's etcd 3.4 (default fsync
# behaviour) on fresh data directories under $BENCH_WORK, one disk for
# both, and at each client count in CLIENTS sends N writes of the same
# SIZE-byte ConfigMap bytes to each: POSTs to volray's configmaps
# collection (each acknowledged only after the fdatasync that covers it)
# and puts of the base64-encoded bytes through etcd's JSON gateway. Runs
# alternate between the two servers. Prints throughput and latency per
# client count and the volray/etcd ratio at the largest count; with
# RUNS > 1 each point is the run with the median throughput. It fails only
# when something does not work (a non-2xx answer, a server that does not
# start), never on a figure.
#
# With TLS=1 both servers serve HTTPS (volrayd with its generated CA, etcd
# with its own certificate) and the run ends with the TLS handshake rate:
# HS_N new connections to each, one after another (a full handshake and a
# GET /version each), with the server CPU time each connection cost.
#
# With ETCD_STORE=1 volrayd keeps its objects in that same etcd
# (--etcd-servers, prefix /vrbench so that its watch skips the baseline's
# keys): volray on etcd against etcd alone.
#
# Environment: N (requests per run, 20000), CLIENTS ("1 16 64"), SIZE
# (object bytes, 1024), RUNS (1), SMALL=1 (N=500, for CI), ETCD_BASELINE=0
# (skip etcd), QUIET_WAIT (seconds to wait before each run for an idle
# machine, 0), VOLRAYD, SHARE_DIR, ETCD, BENCH_WORK (/var/tmp/volray-bench).
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${N:=500}"
else
	: "${N:=20000}"
fi
: "${CLIENTS:=1 16 64}"
: "${SIZE:=1024}"
: "${RUNS:=1}"
: "${ETCD_BASELINE:=1}"

bench_init
build_loadgen
RESULTS="$RUN_DIR/results"
: >"$RESULTS"

# run_one TARGET MODE URL CLIENTS RUN: one loadgen run, kept in TARGET-CLIENTS.
run_one() {
	local target=$1 mode=$2 url=$3 c=$4 r=$5 out line hdr="" tls=$ETCD_TLS_ARGS
	[ "$target" = volray ] && { hdr=$VR_AUTH; tls=$VR_TLS_ARGS; }
	local v0 v1 e0=0 e1=0
	wait_quiet
	v0=$(cpu_of "$VR_PID")
	[ -z "${ETCD_PID:-}" ] || e0=$(cpu_of "$ETCD_PID")
	# shellcheck disable=SC2086
	out=$("$LOADGEN" "$mode" ${hdr:+-H "$hdr"} $tls -u "$url" -n "$N" -c "$c" -s "$SIZE" \
	    -p "s$$-$target-c$c-r$r") || {
		echo "$out"
		die "$target at $c clients failed"
	}
	v1=$(cpu_of "$VR_PID")
	[ -z "${ETCD_PID:-}" ] || e1=$(cpu_of "$ETCD_PID")
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-6s %2s clients run %s: %8.0f req/s  p50 %7.3f ms' \
	    "$target" "$c" "$r" "$(result_field "$line" rps)" \
	    "$(result_field "$line" p50_ms)"
	printf '  p99 %7.3f ms  (cpu idle before: %s%%)\n' \
	    "$(result_field "$line" p99_ms)" "$IDLE"
	# Server CPU per request: volrayd's and etcd's (both serve a
	# volray-on-etcd request; the idle one costs next to nothing).
	printf '         server CPU per request: volrayd %4.0f us, etcd %4.0f us\n' \
	    "$(awk -v a="$v0" -v b="$v1" -v n="$N" 'BEGIN { print (b - a) * 1e6 / n }')" \
	    "$(awk -v a="$e0" -v b="$e1" -v n="$N" 'BEGIN { print (b - a) * 1e6 / n }')"
	echo "$(result_field "$line" rps) $line" >>"$RUN_DIR/$target-$c"
}

# keep_median TARGET CLIENTS: the run with the median throughput.
keep_median() {
	[ -f "$RUN_DIR/$1-$2" ] || return 0
	echo "$1 $2 $(sort -n "$RUN_DIR/$1-$2" |
	    sed -n "$(((RUNS + 1) / 2))p" | cut -d' ' -f2-)" >>"$RESULTS"
}

echo "# store: N=$N requests per run, SIZE=$SIZE bytes, CLIENTS=$CLIENTS, RUNS=$RUNS"
etcd_started=0
if [ "${ETCD_STORE:-0}" = 1 ]; then
	have_etcd || die "ETCD_STORE=1 wants etcd"
	start_etcd
	etcd_started=1
	VR_EXTRA_ARGS="${VR_EXTRA_ARGS:-} --etcd-servers=$ETCD_URL --etcd-prefix=/vrbench"
	[ "$TLS" = 1 ] && VR_EXTRA_ARGS="$VR_EXTRA_ARGS --etcd-cafile=$RUN_DIR/etcd.crt"
	echo "# volrayd on etcd ($ETCD_URL)"
fi
start_volrayd
echo "volrayd $(curl -fsk "$VR_BASE/version" |
    sed -n 's/.*"gitVersion":"\([^"]*\)".*/\1/p') on port $VR_PORT"
have_baseline=0
if [ "$ETCD_BASELINE" = 1 ]; then
	if [ $etcd_started = 1 ] || have_etcd; then
		[ $etcd_started = 1 ] || start_etcd
		echo "$("$ETCD" --version | head -1) on port ${ETCD_URL##*:}"
		have_baseline=1
	else
		echo "# etcd is not installed and could not be: no baseline"
	fi
fi

# Alternate the two servers run by run, so that whatever else the machine
# is doing weighs on both alike; the idle one costs next to nothing.
for c in $CLIENTS; do
	for r in $(seq 1 "$RUNS"); do
		run_one volray create "$VR_URL" "$c" "$r"
		[ $have_baseline = 0 ] || run_one etcd etcd "$ETCD_URL" "$c" "$r"
	done
	keep_median volray "$c"
	keep_median etcd "$c"
done

# handshakes TARGET URL PID TLS_ARGS: HS_N connections, with server CPU.
handshakes() {
	local out line c0 c1
	wait_quiet
	c0=$(cpu_of "$3")
	# shellcheck disable=SC2086
	out=$("$LOADGEN" handshake $4 -u "$2" -n "$HS_N") || {
		echo "$out"
		die "$1 handshakes failed"
	}
	c1=$(cpu_of "$3")
	line=$(echo "$out" | grep '^RESULT ')
	printf '  %-6s %8.0f conn/s  p50 %7.3f ms  p99 %7.3f ms  server CPU %6.0f us/conn\n' \
	    "$1" "$(result_field "$line" cps)" "$(result_field "$line" p50_ms)" \
	    "$(result_field "$line" p99_ms)" \
	    "$(awk -v a="$c0" -v b="$c1" -v n="$HS_N" 'BEGIN { print (b - a) * 1e6 / n }')"
}

if [ "$TLS" = 1 ]; then
	: "${HS_N:=$([ "$SMALL" = 1 ] && echo 50 || echo 2000)}"
	echo
	echo "# TLS handshakes: $HS_N new connections in a row, each a full handshake"
	echo "# (ECDSA P-256, no resumption) and GET /version"
	handshakes volray "$VR_BASE/version" "$VR_PID" "$VR_TLS_ARGS"
	[ $have_baseline = 0 ] || handshakes etcd "$ETCD_URL/version" "$ETCD_PID" "$ETCD_TLS_ARGS"
fi
stop_volrayd
[ $have_baseline = 0 ] || stop_etcd

# The table: one row per client count.
echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
tls_note=""
[ "$TLS" = 1 ] && tls_note=", both over TLS"
echo "# store$tls_note"
vr_label="volray (POST ConfigMap)"
[ $etcd_started = 1 ] && vr_label="volray on etcd (POST ConfigMap)"
printf '%-8s | %-30s | %-30s | %s\n' "" "$vr_label" \
    "etcd 3.4 (JSON gateway put)" ""
printf '%-8s | %10s %9s %9s | %10s %9s %9s | %s\n' clients "req/s" \
    "p50 ms" "p99 ms" "req/s" "p50 ms" "p99 ms" "volray/etcd"
ratio=""
for c in $CLIENTS; do
	v=$(awk -v c="$c" '$1 == "volray" && $2 == c' "$RESULTS" | cut -d' ' -f3-)
	e=$(awk -v c="$c" '$1 == "etcd" && $2 == c' "$RESULTS" | cut -d' ' -f3-)
	vr=$(result_field "$v" rps)
	printf '%-8s | %10.0f %9.3f %9.3f |' "$c" "$vr" \
	    "$(result_field "$v" p50_ms)" "$(result_field "$v" p99_ms)"
	if [ -n "$e" ]; then
		er=$(result_field "$e" rps)
		ratio=$(awk -v a="$vr" -v b="$er" 'BEGIN { printf "%.2f", a / b }')
		printf ' %10.0f %9.3f %9.3f | %sx\n' "$er" \
		    "$(result_field "$e" p50_ms)" "$(result_field "$e" p99_ms)" \
		    "$ratio"
	else
		printf ' %10s %9s %9s | %s\n' - - - -
		ratio=""
	fi
done
if [ -n "$ratio" ]; then
	echo
	if [ $etcd_started = 1 ]; then
		echo "volray on etcd / etcd throughput at $c clients: ${ratio}x (the target is 0.77x: within 1.3x)"
	else
		echo "volray/etcd throughput at $c clients: ${ratio}x (the target is 3x)"
	fi
fi
