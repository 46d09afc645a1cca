#!/bin/sh
# Build volray out of tree (in build/) and run every test (make check).
# Exits non-zero on any failure, printing the failing tests' logs.
set -eu
cd "$(dirname "$0")/.."

scripts/deps.sh
[ -f configure ] && [ configure -nt configure.ac ] || autoreconf -fi
# An in-tree configure would stop the out-of-tree one ("already configured").
[ ! -f config.status ] || make distclean >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure --enable-debug
make -j2
if ! make -j2 check; then
	for log in tests/unit/*.log tests/blackbox/*.log; do
		[ -f "$log" ] || continue
		case "$log" in *test-suite.log) continue ;; esac
		trs="${log%.log}.trs"
		if [ -f "$trs" ] && grep -q ':test-result: FAIL\|:test-result: ERROR' "$trs"; then
			echo "===== $log"
			tail -n 80 "$log"
		fi
	done
	exit 1
fi
echo "check: all tests passed"
