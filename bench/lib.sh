# Shared helpers for the benchmark scripts: build loadgen, find free
# loopback ports, start volrayd and etcd on fresh data directories under
# one work directory (on the same disk, so both pay the same fsync), wait
# until they answer, and stop them and clean up when the script exits.
# Sourced by store.sh and watch.sh; bash only (uses /dev/tcp).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${TOP:=$(cd "$BENCH_DIR/.." && pwd)}"
# The daemon from the out-of-tree build scripts/check.sh makes, else an
# in-tree one.
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$TOP/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$TOP/volrayd
fi
: "${SHARE_DIR:=$TOP}"
: "${ETCD:=etcd}"
: "${BENCH_WORK:=/var/tmp/volray-bench}"
: "${LOADGEN:=$BENCH_DIR/loadgen}"
# TLS=1: both servers serve HTTPS (volrayd its own CA, etcd a certificate
# made here), and loadgen verifies them; TLS=0 (default): plain HTTP.
: "${TLS:=0}"

RUN_DIR=""
PIDS=""
# Set by start_etcd; empty when a run has no etcd baseline.
ETCD_TLS_ARGS=""

bench_cleanup() {
	rc=$?
	for pid in $PIDS; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $PIDS; do
		wait "$pid" 2>/dev/null || true
	done
	if [ $rc -ne 0 ] && [ -n "$RUN_DIR" ]; then
		for log in "$RUN_DIR"/*.log; do
			[ -f "$log" ] || continue
			echo "---- $log (last 20 lines)"
			tail -n 20 "$log"
		done
	fi
	[ -n "$RUN_DIR" ] && rm -rf "$RUN_DIR"
	exit $rc
}

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

bench_init() {
	mkdir -p "$BENCH_WORK" || die "cannot create $BENCH_WORK"
	RUN_DIR=$(mktemp -d "$BENCH_WORK/run.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
	echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores," \
	    "load average $(cut -d' ' -f1-3 /proc/loadavg)," \
	    "work dir $BENCH_WORK on $(df -P "$BENCH_WORK" | awk 'NR==2 {print $1}')"
}

# Build loadgen unless it is newer than its source.
build_loadgen() {
	if [ ! -x "$LOADGEN" ] || [ "$BENCH_DIR/loadgen.c" -nt "$LOADGEN" ]; then
		"$BENCH_DIR/build.sh" "$LOADGEN" ||
		    die "building loadgen failed"
	fi
}

# Print a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local p i
	for i in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))	# below the ephemeral range
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# wait_http URL SECONDS PATTERN: wait until URL answers with PATTERN.
wait_http() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		if curl -fsk -m 1 "$1" 2>/dev/null | grep -q "$3"; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Start volrayd on a fresh data dir; sets VR_PORT, VR_PID, VR_URL.
start_volrayd() {
	[ -x "$VOLRAYD" ] || die "no volrayd at $VOLRAYD: build it first" \
	    "(mkdir build && cd build && ../configure && make volrayd), or set VOLRAYD"
	[ -d "$SHARE_DIR/crds" ] || die "no crds/ in $SHARE_DIR: set SHARE_DIR"
	VR_PORT=$(free_port)
	rm -rf "$RUN_DIR/vr"
	mkdir -p "$RUN_DIR/vr"
	# A private copy under another name: on a shared machine a broad
	# "pkill volrayd" from someone's test must not end a run midway.
	[ -x "$RUN_DIR/vrbench-server" ] ||
	    cp "$VOLRAYD" "$RUN_DIR/vrbench-server"
	# Plain HTTP on loopback unless TLS=1, as etcd's baseline runs; every
	# request carries the admin's token (VR_AUTH, loadgen -H).
	local plain=--plain-http scheme=http
	[ "$TLS" = 1 ] && { plain=""; scheme=https; }
	"$RUN_DIR/vrbench-server" --data-dir "$RUN_DIR/vr" \
	    --listen "127.0.0.1:$VR_PORT" --no-local-node $plain \
	    --share-dir "$SHARE_DIR" ${VR_EXTRA_ARGS:-} >"$RUN_DIR/volrayd.log" 2>&1 &
	VR_PID=$!
	PIDS="$PIDS $VR_PID"
	wait_http "$scheme://127.0.0.1:$VR_PORT/readyz" 30 ok ||
	    die "volrayd did not become ready"
	VR_BASE="$scheme://127.0.0.1:$VR_PORT"
	VR_URL="$VR_BASE/api/v1/namespaces/default/configmaps"
	VR_TLS_ARGS=""
	[ "$TLS" = 1 ] && VR_TLS_ARGS="--cacert $RUN_DIR/vr/pki/ca.crt"
	VR_AUTH="Authorization: Bearer $(cat "$RUN_DIR/vr/pki/admin.token")"
}

stop_volrayd() {
	kill "$VR_PID" 2>/dev/null || true
	wait "$VR_PID" 2>/dev/null || true
	rm -rf "$RUN_DIR/vr"
}

# Install Debian's etcd if it is missing and we may; 1 if still missing.
have_etcd() {
	command -v "$ETCD" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "# installing etcd-server and etcd-client with apt-get"
		apt-get install -y etcd-server etcd-client >"$RUN_DIR/apt.log" 2>&1 ||
		    { apt-get update >>"$RUN_DIR/apt.log" 2>&1 &&
		    apt-get install -y etcd-server etcd-client \
		    >>"$RUN_DIR/apt.log" 2>&1; } || true
	fi
	command -v "$ETCD" >/dev/null 2>&1
}

# Start a one-member etcd with default fsync settings; sets ETCD_URL.
start_etcd() {
	local cport pport scheme=http tls="" try i
	ETCD_TLS_ARGS=""
	if [ "$TLS" = 1 ]; then
		# etcd's own TLS: a P-256 certificate for 127.0.0.1, as volrayd's.
		[ -f "$RUN_DIR/etcd.crt" ] || openssl req -x509 -newkey ec \
		    -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		    -keyout "$RUN_DIR/etcd.key" -out "$RUN_DIR/etcd.crt" \
		    -subj /CN=etcd -addext subjectAltName=IP:127.0.0.1 \
		    >/dev/null 2>&1 || die "making etcd's certificate"
		scheme=https
		tls="--cert-file $RUN_DIR/etcd.crt --key-file $RUN_DIR/etcd.key"
		ETCD_TLS_ARGS="--cacert $RUN_DIR/etcd.crt"
	fi
	# A free port can be taken by another program before etcd binds it
	# (tests run in parallel): try again with new ports when etcd dies.
	for try in 1 2 3; do
		cport=$(free_port)
		pport=$(free_port)
		while [ "$pport" = "$cport" ]; do pport=$(free_port); done
		rm -rf "$RUN_DIR/etcd"
		# shellcheck disable=SC2086
		"$ETCD" --name bench --data-dir "$RUN_DIR/etcd" $tls \
		    --listen-client-urls "$scheme://127.0.0.1:$cport" \
		    --advertise-client-urls "$scheme://127.0.0.1:$cport" \
		    --listen-peer-urls "http://127.0.0.1:$pport" \
		    --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
		    --initial-cluster "bench=http://127.0.0.1:$pport" \
		    --logger zap --log-level warn >"$RUN_DIR/etcd.log" 2>&1 &
		ETCD_PID=$!
		ETCD_URL="$scheme://127.0.0.1:$cport"
		ETCD_PEER_URL="http://127.0.0.1:$pport"
		for i in $(seq 1 300); do
			if curl -fsk -m 1 "$ETCD_URL/health" 2>/dev/null | grep -q true; then
				PIDS="$PIDS $ETCD_PID"
				return 0
			fi
			kill -0 "$ETCD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$ETCD_PID" 2>/dev/null || true
		wait "$ETCD_PID" 2>/dev/null || true
		grep -q "address already in use" "$RUN_DIR/etcd.log" || break
	done
	die "etcd did not become ready"
}

stop_etcd() {
	kill "$ETCD_PID" 2>/dev/null || true
	wait "$ETCD_PID" 2>/dev/null || true
	rm -rf "$RUN_DIR/etcd"
}

# cpu_idle: percent of CPU time idle (or waiting for I/O) over one second.
cpu_idle() {
	local a b
	a=$(head -1 /proc/stat)
	sleep 1
	b=$(head -1 /proc/stat)
	echo "$a $b" | awk '{
		t1 = $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9
		t2 = $13 + $14 + $15 + $16 + $17 + $18 + $19 + $20
		i = ($16 + $17) - ($5 + $6)
		printf "%d\n", (t2 > t1) ? 100 * i / (t2 - t1) : 100
	}'
}

# wait_quiet: others share this machine; wait up to QUIET_WAIT seconds
# (default 0: not at all) for a second in which the CPUs were 90% idle.
# Sets IDLE to the last measurement ("?" when not measured).
wait_quiet() {
	local deadline=$((SECONDS + ${QUIET_WAIT:-0}))
	IDLE="?"
	[ "${QUIET_WAIT:-0}" -gt 0 ] || return 0
	IDLE=$(cpu_idle)
	while [ "$IDLE" -lt 90 ] && [ $SECONDS -lt $deadline ]; do
		IDLE=$(cpu_idle)
	done
}

# cpu_of PID...: user + system CPU seconds of those processes, summed.
cpu_of() {
	local p
	for p in "$@"; do cat "/proc/$p/stat"; done |
	    awk -v hz="$(getconf CLK_TCK)" '{ t += ($14 + $15) / hz } END { printf "%.3f", t }'
}

# result_field LINE KEY: the value of KEY=... in a RESULT line.
result_field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# etcdwire (bench/etcdwire.c): a C client of etcd through gRPC (or its
# JSON gateway), for etcdwire.sh and the store floor of anchors.sh.
EW_SRC=$TOP/core/store/etcdpb
EW_OUT=$BENCH_DIR/out/etcdwire
: "${ETCDWIRE:=$EW_OUT/etcdwire}"
EW_PKGS="grpc libprotobuf-c libcurl libcjson"

# have_etcdwire_deps: protoc-c and the libraries etcdwire needs are here.
have_etcdwire_deps() {
	local p
	command -v protoc-c >/dev/null 2>&1 || return 1
	for p in $EW_PKGS; do
		pkg-config --exists "$p" || return 1
	done
}

# Generate the protobuf-c code and build etcdwire unless it is up to date.
build_etcdwire() {
	local f stale=0 p
	command -v protoc-c >/dev/null 2>&1 ||
	    die "no protoc-c: install protobuf-c-compiler (scripts/deps.sh)"
	for p in $EW_PKGS; do
		pkg-config --exists "$p" ||
		    die "pkg-config finds no $p: install libgrpc-dev libprotobuf-c-dev" \
		    "libcurl4-openssl-dev libcjson-dev (scripts/deps.sh)"
	done
	[ -x "$ETCDWIRE" ] || stale=1
	for f in "$BENCH_DIR/etcdwire.c" "$EW_SRC"/*.proto; do
		[ "$f" -nt "$ETCDWIRE" ] && stale=1
	done
	[ $stale = 1 ] || return 0
	mkdir -p "$EW_OUT"
	protoc-c --proto_path="$EW_SRC" --c_out="$EW_OUT" \
	    "$EW_SRC/kv.proto" "$EW_SRC/rpc.proto" || die "protoc-c failed"
	# shellcheck disable=SC2046
	${CC:-cc} ${CFLAGS:--O2 -Wall} -std=c99 -D_GNU_SOURCE -I"$EW_OUT" \
	    -o "$ETCDWIRE" "$BENCH_DIR/etcdwire.c" "$EW_OUT/rpc.pb-c.c" \
	    "$EW_OUT/kv.pb-c.c" $(pkg-config --cflags --libs $EW_PKGS) ||
	    die "building etcdwire failed"
}
