#!/usr/bin/env bash
# Start-up of an API server on an etcd that holds many objects (issue 22):
# the time from exec to the first 200 of GET /readyz, when volrayd fills
# its cache from etcd, against the same daemon reopening its embedded
# store with as many objects, and against etcd itself restarting on its
# data (exec to /health). The objects are N ConfigMaps of SIZE bytes
# written through volrayd (so they carry what a real object carries:
# uid, creationTimestamp, managedFields), once per store.
#
#   restart (embedded)  volrayd stopped (SIGTERM) and started again on its
#                       data dir: snapshot and log read back.
#   new server on etcd  a second data dir, --roles api, the same etcd: no
#                       local state, everything listed from etcd (what a
#                       replacement API server does).
#   restart on etcd     the first server again on its own data dir.
#   etcd restart        etcd on its data dir, exec to /health.
#
# Environment: N (100000), SIZE (1024), CLIENTS (16), RUNS (3), SMALL=1
# (N=2000, RUNS=1, for CI), VOLRAYD, SHARE_DIR, ETCD, BENCH_WORK. Fails
# only when something does not work, never on a figure.
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${N:=2000}" "${RUNS:=1}"
fi
: "${N:=100000}" "${SIZE:=1024}" "${CLIENTS:=16}" "${RUNS:=3}"

bench_init
build_loadgen
have_etcd || die "etcd is not installed and could not be"

now_ms() { date +%s%3N; }

# ready_ms URL PID: milliseconds from now until URL answers 200 (or die
# if PID exits first).
ready_ms() {
	local t0 i=0
	t0=$(now_ms)
	until curl -fsk -m 2 "$1" >/dev/null 2>&1; do
		kill -0 "$2" 2>/dev/null || die "the server exited while starting"
		i=$((i + 1))
		[ $i -lt 60000 ] || die "not ready after 10 minutes"
		sleep 0.01
	done
	echo $(($(now_ms) - t0))
}

# server DIR PORT ARGS...: start the daemon's copy, set SRV_PID.
server() {
	local dir=$1 port=$2
	shift 2
	"$RUN_DIR/vrbench-server" --data-dir "$dir" --listen "127.0.0.1:$port" \
	    --no-local-node --plain-http --share-dir "$SHARE_DIR" "$@" \
	    >>"$RUN_DIR/volrayd-start.log" 2>&1 &
	SRV_PID=$!
	PIDS="$PIDS $SRV_PID"
}

stop_pid() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# fill: N ConfigMaps through the server start_volrayd started.
fill() {
	"$LOADGEN" create -H "$VR_AUTH" -u "$VR_URL" -n "$N" -c "$CLIENTS" \
	    -s "$SIZE" -p "start$$" >"$RUN_DIR/fill.out" ||
	    { cat "$RUN_DIR/fill.out"; die "filling the store failed"; }
	grep -m1 'req/s' "$RUN_DIR/fill.out" | sed 's/^/  fill: /'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "# start-up with N=$N ConfigMaps of $SIZE bytes, RUNS=$RUNS"

# The embedded store.
start_volrayd
fill
du_embedded=$(du -sm "$RUN_DIR/vr" | cut -f1)
port=$VR_PORT
: >"$RUN_DIR/embedded.ms"
for r in $(seq 1 "$RUNS"); do
	stop_pid "$VR_PID"
	server "$RUN_DIR/vr" "$port"
	VR_PID=$SRV_PID
	ready_ms "http://127.0.0.1:$port/readyz" "$VR_PID" >>"$RUN_DIR/embedded.ms"
done
echo "  restart (embedded, ${du_embedded} MB data dir): $(tr '\n' ' ' <"$RUN_DIR/embedded.ms")ms"
stop_volrayd

# etcd.
start_etcd
VR_EXTRA_ARGS="--etcd-servers=$ETCD_URL"
start_volrayd
fill
count=$(ETCDCTL_API=3 etcdctl --endpoints "$ETCD_URL" get --prefix \
    /registry/configmaps/default/start --limit 1 -w json 2>/dev/null |
    sed -n 's/.*"count":\([0-9]*\).*/\1/p')
[ "${count:-0}" -ge "$N" ] || die "etcd holds ${count:-0} of $N ConfigMaps"
stop_pid "$VR_PID"
: >"$RUN_DIR/fresh.ms"
: >"$RUN_DIR/again.ms"
: >"$RUN_DIR/etcdstart.ms"
for r in $(seq 1 "$RUNS"); do
	rm -rf "$RUN_DIR/vr2"
	p2=$(free_port)
	server "$RUN_DIR/vr2" "$p2" --roles api $VR_EXTRA_ARGS
	ready_ms "http://127.0.0.1:$p2/readyz" "$SRV_PID" >>"$RUN_DIR/fresh.ms"
	# It serves what etcd holds: every ConfigMap listed.
	got=$(curl -fs -H "$VR_AUTH" \
	    "http://127.0.0.1:$p2/api/v1/namespaces/default/configmaps?limit=1" |
	    sed -n 's/.*"remainingItemCount":\([0-9]*\).*/\1/p')
	[ "$((${got:-0} + 1))" -ge "$N" ] ||
	    die "the new server lists $((${got:-0} + 1)) of $N ConfigMaps"
	stop_pid "$SRV_PID"

	server "$RUN_DIR/vr" "$VR_PORT" $VR_EXTRA_ARGS
	ready_ms "http://127.0.0.1:$VR_PORT/readyz" "$SRV_PID" >>"$RUN_DIR/again.ms"
	stop_pid "$SRV_PID"

	stop_pid "$ETCD_PID"
	"$ETCD" --name bench --data-dir "$RUN_DIR/etcd" \
	    --listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
	    --listen-peer-urls "$ETCD_PEER_URL" \
	    --logger zap --log-level warn >>"$RUN_DIR/etcd.log" 2>&1 &
	ETCD_PID=$!
	PIDS="$PIDS $ETCD_PID"
	t0=$(now_ms)
	wait_http "$ETCD_URL/health" 600 true || die "etcd did not come back"
	echo $(($(now_ms) - t0)) >>"$RUN_DIR/etcdstart.ms"
done
du_etcd=$(du -sm "$RUN_DIR/etcd" | cut -f1)
echo "  new server on etcd: $(tr '\n' ' ' <"$RUN_DIR/fresh.ms")ms"
echo "  restart on etcd: $(tr '\n' ' ' <"$RUN_DIR/again.ms")ms"
echo "  etcd restart (${du_etcd} MB data dir): $(tr '\n' ' ' <"$RUN_DIR/etcdstart.ms")ms"
stop_etcd

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %12s\n' start objects "median ms"
printf '%-22s %10s %12s\n' "restart (embedded)" "$N" "$(median <"$RUN_DIR/embedded.ms")"
printf '%-22s %10s %12s\n' "new server on etcd" "$N" "$(median <"$RUN_DIR/fresh.ms")"
printf '%-22s %10s %12s\n' "restart on etcd" "$N" "$(median <"$RUN_DIR/again.ms")"
printf '%-22s %10s %12s\n' "etcd restart" "$N" "$(median <"$RUN_DIR/etcdstart.ms")"
