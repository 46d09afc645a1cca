# Shared helpers for black-box tests: start a real volrayd on a free
# loopback port with a fresh data dir, point kubectl at its kubeconfig,
# and stop it (and clean up) when the test exits. The daemon serves HTTPS
# with its own CA and wants credentials, as by default: `curl` below
# verifies the certificate and sends the admin's token (`command curl`
# for a request without them); Python scripts import vrtest from $WORK
# for a verified TLS socket or an HTTPSConnection with the token.
set -eu

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${VOLRAYD:=$top_builddir/volrayd}"
# LOCAL_NODE=1 lets volrayd register this machine as a node.
# Where volrayd finds crds/, lua/ and policies/; empty lets it find them.
SHARE_DIR="$top_srcdir"
SAMPLES="$top_srcdir/../shared/upstream-samples"
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/volray-$TEST_NAME.XXXXXX")
DATA="$WORK/data"
# kubectl's discovery cache is keyed by host:port and kept for hours: a
# test whose daemon gets a port an earlier test's daemon had would read
# that daemon's resources (schedq.sh's "podgroup" once resolved to the
# scheduling.k8s.io PodGroups k8sgang.sh's gate had served there). Each
# test has its own.
export KUBECACHEDIR="$WORK/kubecache"
DAEMON_PID=""
# VOLRAY_STORE=etcd runs every daemon start_daemon starts on an etcd (one
# member, started on the first start_daemon, stopped at exit) rather than
# on the embedded store: the same scenarios against both backends.
: "${VOLRAY_STORE:=embedded}"
ETCD_ENDPOINTS=""
# Processes a test started besides the daemon (etcd members, a second
# server): killed (-9) at exit.
KILL_PIDS=""

cleanup() {
	rc=$?
	if [ -n "$DAEMON_PID" ]; then
		# SIGTERM, and SIGKILL if it has not gone in 10 s: a test
		# that failed must not leave its daemon behind.
		kill "$DAEMON_PID" 2>/dev/null || true
		(sleep 10; kill -9 "$DAEMON_PID") >/dev/null 2>&1 &
		_killer=$!
		wait "$DAEMON_PID" 2>/dev/null || true
		kill "$_killer" 2>/dev/null || true
	fi
	for p in $KILL_PIDS; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -f "$WORK/volrayd.log" ]; then
		echo "---- volrayd log (last 40 lines)"
		tail -n 40 "$WORK/volrayd.log"
	fi
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

pass() {
	echo "ok: $*"
}

# skip REASON: this test cannot run here; automake counts it skipped (77)
# and scripts/check.sh prints the reason.
skip() {
	echo "SKIP: $TEST_NAME: $*"
	exit 77
}

# need_samples: the upstream KubeRay/Volcano manifests in ../shared, which
# a fresh clone does not have, or skip.
need_samples() {
	[ -d "$SAMPLES" ] || skip "no $SAMPLES (a fresh clone has no ../shared):" \
	    "the upstream KubeRay and Volcano manifests it applies are not here"
}

# free_port: a port nobody listens on right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# free_ports N: N distinct ports nobody listens on right now (free_port
# twice may give the same one: it is free again once the first closed).
free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# etcd_start [N]: an etcd cluster of N members (1) from Debian's
# etcd-server on free loopback ports, data under $WORK/etcdI, logs in
# $WORK/etcdI.log; sets ETCD_ENDPOINTS (comma-separated URLs), ETCD_URL_I
# and ETCD_PID_I, and waits until the cluster answers. Skips the test
# when there is no etcd.
etcd_start() {
	command -v etcd >/dev/null 2>&1 ||
	    skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"
	n=${1:-1}
	i=1 cluster=""
	# shellcheck disable=SC2046
	set -- $(free_ports $((2 * n)))
	while [ $i -le "$n" ]; do
		eval "ETCD_CPORT_$i=$1 ETCD_PPORT_$i=$2"
		shift 2
		eval "cluster=\"\${cluster:+\$cluster,}e$i=http://127.0.0.1:\$ETCD_PPORT_$i\""
		i=$((i + 1))
	done
	ETCD_CLUSTER=$cluster
	ETCD_ENDPOINTS=""
	i=1
	while [ $i -le "$n" ]; do
		eval "cport=\$ETCD_CPORT_$i"
		eval "ETCD_URL_$i=http://127.0.0.1:$cport"
		ETCD_ENDPOINTS="${ETCD_ENDPOINTS:+$ETCD_ENDPOINTS,}http://127.0.0.1:$cport"
		etcd_member "$i" new
		i=$((i + 1))
	done
	ETCD_N=$n
	etcd_wait
	# A quorum answering is not every member up (one that could not
	# bind its port would leave a test that kills another without one).
	i=1
	while [ $i -le "$n" ]; do
		eval "url=\$ETCD_URL_$i"
		j=0
		until ETCDCTL_API=3 etcdctl --endpoints="$url" --command-timeout=2s \
		    endpoint health >/dev/null 2>&1; do
			j=$((j + 1))
			[ $j -lt 100 ] || fail "etcd member $i did not come up (see $WORK/etcd$i.log)"
			sleep 0.1
		done
		i=$((i + 1))
	done
}

# etcd_member I [new|existing]: start (or restart) member I.
etcd_member() {
	eval "cport=\$ETCD_CPORT_$1 pport=\$ETCD_PPORT_$1"
	etcd --name "e$1" --data-dir "$WORK/etcd$1" \
	    --listen-client-urls "http://127.0.0.1:$cport" \
	    --advertise-client-urls "http://127.0.0.1:$cport" \
	    --listen-peer-urls "http://127.0.0.1:$pport" \
	    --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
	    --initial-cluster "$ETCD_CLUSTER" \
	    --initial-cluster-state "${2:-existing}" \
	    --initial-cluster-token "volray-$TEST_NAME" \
	    >>"$WORK/etcd$1.log" 2>&1 &
	eval "ETCD_PID_$1=$!"
	KILL_PIDS="$KILL_PIDS $!"
}

# etcd_wait: until the cluster commits a write (a quorum is up).
etcd_wait() {
	i=0
	until ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" \
	    --command-timeout=2s put /volray-test/ping x >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "etcd did not come up (see $WORK/etcd*.log)"
		sleep 0.1
	done
}

# ectl ARGS: etcdctl (v3) on the test's cluster.
ectl() {
	ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" "$@"
}

# start_daemon [extra volrayd flags]: start and wait until /readyz is 200.
# The daemon listens on a port the kernel picks (--listen 127.0.0.1:0, so
# parallel tests never race for one) and writes it to its kubeconfig:
# PORT and API are read from there, on every start.
LOCAL_LOCKED=0
start_daemon() {
	nolocal=--no-local-node
	[ "${LOCAL_NODE:-0}" != 1 ] || nolocal=""
	# Tests that run this machine as a node take turns (make -j2 check
	# runs two tests at once): their local Ray heads listen on
	# 127.0.0.1:8265 and 52365, and another test's head there would
	# answer for this one's. The lock goes with the test's shell.
	if [ "${LOCAL_NODE:-0}" = 1 ] && [ $LOCAL_LOCKED = 0 ] &&
	    command -v flock >/dev/null 2>&1; then
		exec 9>"${TMPDIR:-/tmp}/volray-test-localnode.lock"
		flock -w 1200 9 || fail "waited 20 minutes for the local-node lock"
		LOCAL_LOCKED=1
	fi
	scheme=https
	for arg in "$@"; do
		[ "$arg" != --plain-http ] || scheme=http
	done
	rm -f "$DATA/kubeconfig"
	etcdflag=""
	if [ "$VOLRAY_STORE" = etcd ]; then
		[ -n "$ETCD_ENDPOINTS" ] || etcd_start 1
		# One server: no election (a test's own flag comes after).
		etcdflag="--etcd-servers=$ETCD_ENDPOINTS --leader-elect=false"
	fi
	# For a test that starts the daemon again itself.
	STORE_FLAGS=$etcdflag
	# The local node's rayproject/ray pods run volray's emulated Ray,
	# whatever Ray scripts/ray.sh installed, unless the test sets
	# REAL_RAY=1 (rayreal.sh): real Ray takes ~10 s and ~1 GB a head.
	rayflag=--ray-emulated
	[ "${REAL_RAY:-0}" != 1 ] || rayflag=""
	"$VOLRAYD" --data-dir "$DATA" --listen "127.0.0.1:0" \
		$nolocal ${SHARE_DIR:+--share-dir "$SHARE_DIR"} $etcdflag $rayflag "$@" \
		>>"$WORK/volrayd.log" 2>&1 9>&- &
	DAEMON_PID=$!
	i=0
	until [ -s "$DATA/kubeconfig" ] && PORT=$(sed -n \
	    "s|^ *server: $scheme://127.0.0.1:\([0-9][0-9]*\)\$|\1|p" \
	    "$DATA/kubeconfig") && [ -n "$PORT" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "volrayd wrote no kubeconfig"
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "volrayd exited"
		sleep 0.05
	done
	API="$scheme://127.0.0.1:$PORT"
	CA="$DATA/pki/ca.crt"
	[ "$scheme" = https ] || CA=""
	# Readiness only: certificate checks are the tests' business.
	until command curl -fsk "$API/readyz" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "volrayd did not become ready"
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "volrayd exited"
		sleep 0.05
	done
	export KUBECONFIG="$DATA/kubeconfig"
	TOKEN=$(cat "$DATA/pki/admin.token")
	export VOLRAY_PORT="$PORT" VOLRAY_CA="$CA" VOLRAY_TOKEN="$TOKEN"
	export PYTHONPATH="$WORK${PYTHONPATH:+:$PYTHONPATH}"
}

CA=""
TOKEN=""
curl() {
	command curl ${CA:+--cacert "$CA"} ${TOKEN:+-H "Authorization: Bearer $TOKEN"} "$@"
}

cat >"$WORK/vrtest.py" <<'PY'
"""The test daemon over verified TLS, as the admin (see lib.sh)."""
import http.client, os, socket, ssl
PORT = int(os.environ["VOLRAY_PORT"])
TOKEN = os.environ["VOLRAY_TOKEN"]
HEADERS = {"Authorization": "Bearer " + TOKEN}
AUTH = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"

def context():
    return ssl.create_default_context(cafile=os.environ["VOLRAY_CA"])

def wrap(sock):
    return context().wrap_socket(sock, server_hostname="127.0.0.1")

def connect():
    return wrap(socket.create_connection(("127.0.0.1", PORT)))

def https(timeout=10):
    return http.client.HTTPSConnection("127.0.0.1", PORT, timeout=timeout,
                                       context=context())
PY

# stop_daemon [signal]: stop it (default TERM) and wait for the exit.
stop_daemon() {
	kill -"${1:-TERM}" "$DAEMON_PID"
	wait "$DAEMON_PID" || true
	DAEMON_PID=""
}

k() {
	kubectl --request-timeout=20s "$@"
}

# expect_eq WANT GOT WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: want '$1', got '$2'"
}

# wait_eq WANT WHAT CMD...: run CMD until it prints WANT (about 10 s).
wait_eq() {
	want=$1 what=$2
	shift 2
	i=0
	got=$("$@" 2>/dev/null || true)
	while [ "$got" != "$want" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "$what: want '$want', got '$got'"
		sleep 0.1
		got=$("$@" 2>/dev/null || true)
	done
}

# watchers: how many watches the daemon has open.
watchers() {
	curl -fs "$API/metrics" | sed -n 's/^volray_watchers //p'
}

# wait_watchers N: until at least N watches are open (a background waiter
# is watching, so what the test does next reaches it through the watch).
wait_watchers() {
	i=0
	while [ "$(watchers)" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "fewer than $1 watchers connected"
		sleep 0.05
	done
}

# wait_event OBJECT REASON TEXT: until an Event of that reason about the
# object (by name) says TEXT (about 10 s).
wait_event() {
	_i=0
	until k get events --field-selector "involvedObject.name=$1,reason=$2" \
		-o jsonpath='{.items[*].message}' | grep -qF "$3"; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "no $2 event about $1 saying: $3"
		sleep 0.1
	done
}

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
	case "$1" in
	*"$2"*) ;;
	*) fail "$3: '$2' not in: $1" ;;
	esac
}
