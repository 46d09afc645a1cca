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
# The folders' order: no upward include, no call cycle, nothing around
# the client seam (ARCHITECTURE.md).
python3 ../scripts/layers.py .
# The logs of the tests that failed, in the build directory we are in.
print_failures() {
	for log in tests/unit/*.log tests/blackbox/*.log; do
		[ -f "$log" ] || continue
		case "$log" in *test-suite.log) continue ;; esac
		trs="${log%.log}.trs"
		if [ -f "$trs" ] &&
		    grep -q ':test-result: FAIL\|:test-result: ERROR' "$trs"; then
			echo "===== $log"
			tail -n 80 "$log"
		fi
	done
}
if ! make -j2 check; then
	print_failures
	exit 1
fi
# What was skipped and why (a test says "SKIP: name: reason" and exits
# 77; a fresh clone without ../shared skips the upstream samples' tests).
skipped=$(for log in tests/unit/*.log tests/blackbox/*.log; do
	case "$log" in *test-suite.log) continue ;; esac
	grep -h '^SKIP: ' "$log" 2>/dev/null || true
done)
cd ..

# Fuzz smoke test: every libFuzzer target replays its regression inputs
# and fuzzes for FUZZ_SECONDS (3) in build-fuzz/. Only when clang can build
# libFuzzer programs (configure checks), and not with VOLRAY_FUZZ=0. A
# failure here is a crash, a sanitizer report or a failed property, with
# the input in build-fuzz/tests/fuzz/artifacts/.
if [ "${VOLRAY_FUZZ:-1}" != 0 ] && command -v clang >/dev/null 2>&1; then
	mkdir -p build-fuzz
	cd build-fuzz
	if [ -f Makefile ] || ../configure --enable-fuzz >configure.out 2>&1; then
		make -j2 >/dev/null
		if ! FUZZ_SECONDS=${FUZZ_SECONDS:-3} make -j1 check; then
			for log in tests/fuzz/*.log; do
				[ -f "$log" ] || continue
				case "$log" in *test-suite.log) continue ;; esac
				grep -q 'ERROR\|SUMMARY\|assertion' "$log" &&
					{ echo "===== $log"; tail -n 60 "$log"; }
			done
			exit 1
		fi
	else
		echo "check: clang cannot build libFuzzer targets; fuzz smoke test skipped"
	fi
	cd ..
fi
# VOLRAY_ASAN=1: every test again against an AddressSanitizer and
# UBSan build (build-asan/), stopping at the first report (UBSan's are
# not fatal by default and would pass unseen). Leaks are not checked
# here: volrayd and volray leave some of what they built to the exit
# (flags, the gc); the unit tests and fuzz targets check leaks.
if [ "${VOLRAY_ASAN:-0}" = 1 ]; then
	mkdir -p build-asan
	cd build-asan
	[ -f Makefile ] || ../configure --enable-asan CFLAGS="-g -O1" \
	    >configure.out 2>&1
	make -j2 >/dev/null
	if ! ASAN_OPTIONS=detect_leaks=0 \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 make -j2 check; then
		print_failures
		exit 1
	fi
	cd ..
fi
echo "check: all tests passed"
if [ -n "$skipped" ]; then
	echo "$skipped" | sed 's/^SKIP: /  skipped: /'
	echo "check: $(echo "$skipped" | wc -l | tr -d ' ') tests skipped (above, with the reason)"
else
	echo "check: no test skipped"
fi
