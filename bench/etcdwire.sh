#!/usr/bin/env bash
# etcd transport: gRPC or the JSON gateway.
#
# Builds bench/out/etcdwire/etcdwire (protoc-c on core/store/etcdpb/*.proto,
# the etcd client's, then cc with gRPC C core, protobuf-c, libcurl and
# cJSON), starts Debian's etcd 3.4 as a single member on loopback ports
# ETCD_PORT/ETCD_PEER_PORT (23791/23792) with a data directory under
# $BENCH_WORK, and measures the same work through both transports,
# alternating them run by run (and which goes first):
#
#   txn    N create-if-absent transactions (compare create_revision == 0,
#          then put a SIZE-byte ConfigMap) at each count of CLIENTS in
#          flight: txn/s, p50/p99 latency, the client's CPU time and etcd's
#          per 10,000 txns.
#   watch  one watch on a prefix while a writer (WRITER transport,
#          WRITER_CLIENTS in flight, its own process) creates U keys there:
#          events/s as they come ("live", bounded by the writer) and the
#          same U events replayed from their first revision ("replay"),
#          with the client's CPU per 10,000 events (and etcd's, replay).
#
# Each figure in the table is the median of RUNS runs, taken column by
# column. It fails only when something does not work (a failed txn, a lost
# event, etcd not starting), never on a figure.
#
# Environment: N (txns per run, 20000), U (watch events, 20000), CLIENTS
# ("1 16 64"), SIZE (1024), RUNS (3), SMALL=1 (N=U=500, RUNS=1: seconds,
# for CI), WRITER (grpc), WRITER_CLIENTS (16), ETCD_PORT (23791),
# ETCD_PEER_PORT (23792), QUIET_WAIT (seconds to wait before each run for
# an idle machine, 0), ETCD, BENCH_WORK (/var/tmp/volray-bench), CC, CFLAGS.
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${N:=500}" "${U:=500}" "${RUNS:=1}"
else
	: "${N:=20000}" "${U:=20000}" "${RUNS:=3}"
fi
: "${CLIENTS:=1 16 64}"
: "${SIZE:=1024}"
: "${WRITER:=grpc}"
: "${WRITER_CLIENTS:=16}"
: "${ETCD_PORT:=23791}"
: "${ETCD_PEER_PORT:=23792}"

# A one-member etcd (default fsync behaviour) on the fixed ports.
start_etcd_fixed() {
	local p
	for p in "$ETCD_PORT" "$ETCD_PEER_PORT"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			die "port $p is in use: set ETCD_PORT/ETCD_PEER_PORT"
		fi
	done
	rm -rf "$RUN_DIR/etcd"
	"$ETCD" --name etcdwire --data-dir "$RUN_DIR/etcd" \
	    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
	    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	    --initial-cluster "etcdwire=http://127.0.0.1:$ETCD_PEER_PORT" \
	    --logger zap --log-level warn >"$RUN_DIR/etcd.log" 2>&1 &
	ETCD_PID=$!
	PIDS="$PIDS $ETCD_PID"
	wait_http "http://127.0.0.1:$ETCD_PORT/health" 30 true ||
	    die "etcd did not become ready"
}

# order RUN: both transports, the first one alternating run by run.
order() {
	if [ $(($1 % 2)) = 1 ]; then echo grpc json; else echo json grpc; fi
}

# run_txn TRANSPORT CLIENTS RUN
run_txn() {
	local t=$1 c=$2 r=$3 out line
	wait_quiet
	out=$("$ETCDWIRE" txn -t "$t" -e "127.0.0.1:$ETCD_PORT" -n "$N" \
	    -c "$c" -s "$SIZE" -P "$ETCD_PID" -p "t$$-$t-c$c-r$r") || {
		echo "$out"
		die "txn over $t at $c clients failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  txn   %-4s %2s clients run %s: %6.0f txn/s  p50 %6.3f ms' \
	    "$t" "$c" "$r" "$(result_field "$line" rps)" \
	    "$(result_field "$line" p50_ms)"
	printf '  p99 %7.3f ms  CPU/10k: client %.3f s, etcd %.3f s  (idle %s%%)\n' \
	    "$(result_field "$line" p99_ms)" \
	    "$(result_field "$line" cpu_per_10k)" \
	    "$(result_field "$line" server_cpu_per_10k)" "$IDLE"
	echo "$line" >>"$RUN_DIR/txn-$t-$c"
}

# run_watch TRANSPORT RUN
run_watch() {
	local t=$1 r=$2 out line
	wait_quiet
	out=$("$ETCDWIRE" watch -t "$t" -W "$WRITER" -c "$WRITER_CLIENTS" \
	    -e "127.0.0.1:$ETCD_PORT" -U "$U" -s "$SIZE" -P "$ETCD_PID" \
	    -p "w$$-$t-r$r") || {
		echo "$out"
		die "watch over $t failed"
	}
	line=$(echo "$out" | grep '^RESULT ')
	printf '  watch %-4s run %s: live %6.0f events/s (client CPU/10k %.3f s),' \
	    "$t" "$r" "$(result_field "$line" live_eps)" \
	    "$(result_field "$line" live_cpu_per_10k)"
	printf ' replay %6.0f events/s (CPU/10k client %.3f s, etcd %.3f s)\n' \
	    "$(result_field "$line" replay_eps)" \
	    "$(result_field "$line" replay_cpu_per_10k)" \
	    "$(result_field "$line" replay_server_cpu_per_10k)"
	echo "$line" >>"$RUN_DIR/watch-$t"
}

# median FILE KEY: the median of KEY=... over the RESULT lines in FILE.
median() {
	local f=$1 k=$2
	tr ' ' '\n' <"$f" | sed -n "s/^$k=//p" | sort -g |
	    awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

bench_init
have_etcd || die "etcd is not installed and could not be (apt-get install etcd-server)"
build_etcdwire
echo "# etcdwire: N=$N txns per run, U=$U events, SIZE=$SIZE, CLIENTS=$CLIENTS," \
    "RUNS=$RUNS, watch writer $WRITER with $WRITER_CLIENTS in flight"
echo "# gRPC core $(pkg-config --modversion grpc), protobuf-c" \
    "$(pkg-config --modversion libprotobuf-c), libcurl $(pkg-config --modversion libcurl)"
start_etcd_fixed
echo "$("$ETCD" --version | head -1) on 127.0.0.1:$ETCD_PORT, pid $ETCD_PID"

for c in $CLIENTS; do
	for r in $(seq 1 "$RUNS"); do
		for t in $(order "$r"); do
			run_txn "$t" "$c" "$r"
		done
	done
done
for r in $(seq 1 "$RUNS"); do
	for t in $(order "$r"); do
		run_watch "$t" "$r"
	done
done
stop_etcd

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# create-if-absent txn, $SIZE-byte value, $N per run; medians of $RUNS run(s)"
printf '%-7s | %-9s | %8s %8s %8s | %-22s\n' "" "" "" "" "" "CPU s per 10,000 txns"
printf '%-7s | %-9s | %8s %8s %8s | %10s %10s\n' clients transport "txn/s" \
    "p50 ms" "p99 ms" client etcd
for c in $CLIENTS; do
	for t in grpc json; do
		f=$RUN_DIR/txn-$t-$c
		printf '%-7s | %-9s | %8.0f %8.3f %8.3f | %10.3f %10.3f\n' "$c" \
		    "$t" "$(median "$f" rps)" "$(median "$f" p50_ms)" \
		    "$(median "$f" p99_ms)" "$(median "$f" cpu_per_10k)" \
		    "$(median "$f" server_cpu_per_10k)"
	done
done
echo
echo "# one watch, $U events (writer: $WRITER, $WRITER_CLIENTS in flight); medians of $RUNS run(s)"
printf '%-9s | %10s %10s | %10s %10s %10s\n' "" "live" "client" "replay" \
    "client" "etcd"
printf '%-9s | %10s %10s | %10s %10s %10s\n' transport "events/s" "s/10k" \
    "events/s" "s/10k" "s/10k"
for t in grpc json; do
	f=$RUN_DIR/watch-$t
	printf '%-9s | %10.0f %10.3f | %10.0f %10.3f %10.3f\n' "$t" \
	    "$(median "$f" live_eps)" "$(median "$f" live_cpu_per_10k)" \
	    "$(median "$f" replay_eps)" "$(median "$f" replay_cpu_per_10k)" \
	    "$(median "$f" replay_server_cpu_per_10k)"
done
