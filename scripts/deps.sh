#!/bin/sh
# Install the Debian packages volray needs to build and test, when missing.
# Runs apt-get only as root (or through sudo when available); otherwise it
# lists what is missing and carries on, so configure can name the problem.
# The etcd client (core/store/etcdkv_grpc.c) needs gRPC's C core, protobuf-c
# and protoc-c; etcd itself is for its unit test (test-etcdkv) and the
# benchmarks' baseline.
# clang is always on the list: it brings libFuzzer, and check.sh runs a
# short fuzz smoke test (build-fuzz/, ./configure --enable-fuzz) with it.
# hiredis is the Redis client of GCS fault tolerance (core/ray/gcsstore.c);
# redis-server and redis-cli are for gcsft.sh. libzip packs and unpacks
# Ray's working_dir uploads (volray ray job submit, core/ray/packages.c).
# bsdutils brings script(1), with which cli3.sh runs volray on a terminal.
# openssh-client's ssh-keygen checks the vcjob ssh plugin's keys (vcjob.sh).
# libgoogle-perftools-dev brings tcmalloc, volrayd's allocator (configure).
# python3-grpcio runs the gRPC health server of grpcprobe.sh.
# iproute2, nftables and dnsmasq-base make the local node's pod network
# (--pod-network=namespaces, node/podnet.c; podnet.sh, podsvc.sh).
# python3-venv makes the virtual environments of real Ray, which
# scripts/ray.sh installs last (as the caller, into its cache; never
# failing: VOLRAY_RAY=0 or no PyPI skips it with a message).
# The anchors (scripts/anchors.sh: kube-apiserver, KubeRay, Volcano...
# built from the Go module proxy) are not built here, too slow for every
# run: VOLRAY_ANCHORS=1 scripts/check.sh builds them.
set -eu

need="autoconf automake libtool pkg-config make gcc liblua5.4-dev \
libuv1-dev libcurl4-openssl-dev libyaml-dev libcjson-dev libhttp-parser-dev \
libssl-dev openssl curl python3 git python3-kubernetes clang mandoc \
bsdutils libgoogle-perftools-dev libwslay-dev zlib1g-dev \
libgrpc-dev libprotobuf-c-dev protobuf-c-compiler etcd-server etcd-client \
libhiredis-dev redis-server redis-tools libzip-dev openssh-client \
python3-grpcio iproute2 nftables dnsmasq-base python3-venv"

missing() {
	out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "ok installed" || out="$out $p"
	done
	echo "$out"
}

# shellcheck disable=SC2086
need_missing=$(missing $need)
# kubectl: any kubectl on PATH will do; Debian's kubernetes-client otherwise.
command -v kubectl >/dev/null 2>&1 || need_missing="$need_missing kubernetes-client"
# npm (and node) for tests/blackbox/jsclient.sh, which installs the pinned
# JavaScript client itself; any npm on PATH will do, Debian's otherwise.
command -v npm >/dev/null 2>&1 || need_missing="$need_missing npm"
if [ -z "$need_missing" ]; then
	"$(dirname "$0")/ray.sh"
	exit 0
fi

if [ "$(id -u)" = 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo -n"
else
	echo "deps: not root and no sudo; install:$need_missing" >&2
	"$(dirname "$0")/ray.sh"
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
if [ -n "$need_missing" ]; then
	echo "deps: installing:$need_missing"
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq $need_missing
fi
"$(dirname "$0")/ray.sh"
