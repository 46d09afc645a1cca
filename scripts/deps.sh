#!/bin/sh
# Install the Debian packages volray needs to build and test, when missing.
# Runs apt-get only as root (or through sudo when available); otherwise it
# lists what is missing and carries on, so configure can name the problem.
set -eu

pkgs="autoconf automake libtool pkg-config make gcc liblua5.4-dev \
libuv1-dev libcurl4-openssl-dev libyaml-dev libcjson-dev libhttp-parser-dev \
curl python3"
[ "${VOLRAY_BENCH:-}" = 1 ] && pkgs="$pkgs etcd-server etcd-client"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# kubectl: any kubectl on PATH will do; Debian's kubernetes-client otherwise.
command -v kubectl >/dev/null 2>&1 || missing="$missing kubernetes-client"

[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" = 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo -n"
else
	echo "deps: not root and no sudo; install:$missing" >&2
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing
