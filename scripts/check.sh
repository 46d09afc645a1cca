#!/bin/sh
# Build volray out of tree (in build/) and run every test (make check);
# then the fuzz smoke test (build-fuzz/) and, with VOLRAY_ASAN=1, every
# test again on a sanitizer build (build-asan/). Exits non-zero on any
# failure, printing the failing tests' logs. It ends with the skipped
# tests, each with its reason, and one line CI can read:
#   check: N passed, N failed, N skipped
# counted from the .trs files of the main run (a test's exit 77 is a
# skip: it says "SKIP: name: reason"), the fuzz smoke test counting as
# one more (skipped only without clang, or with VOLRAY_FUZZ=0) and the
# sanitizer run, when asked for, as one more.
#   TESTS='tests/unit/test-x tests/blackbox/foo.sh' scripts/check.sh
# runs only those tests in the main run.
#   scripts/check.sh --summary [DIR]
# prints only that summary for the tests last run in DIR (build/), every
# .trs file there.
# VOLRAY_ANCHORS=1 first builds the anchors, the real programs the
# interop tests run against (scripts/anchors.sh build: kube-apiserver,
# KubeRay's operator, Volcano's scheduler... from the Go module proxy,
# into ~/.cache/volray/anchors; many minutes the first time, nothing once
# built); one that does not build is reported and its tests skip. By
# default nothing is built and those tests skip unless built before.
# A source tree configured in place (config.status) stops it: an
# out-of-tree configure refuses to run beside one, and this script does
# not clean the tree for you.
set -eu
cd "$(dirname "$0")/.."

npass=0 nfail=0 nskip=0
skiplist=$(mktemp "${TMPDIR:-/tmp}/volray-check.XXXXXX")
trap 'rm -f "$skiplist"' EXIT

# count TRS...: add the tests of these .trs files to the counts; a
# skipped one to the list, with the reason its log gives.
count() {
	for trs in "$@"; do
		[ -f "$trs" ] || continue
		name=${trs%.trs}
		name=${name#./}
		case "$(sed -n 's/^:global-test-result: //p' "$trs")" in
		PASS | XFAIL) npass=$((npass + 1)) ;;
		SKIP)
			nskip=$((nskip + 1))
			why=$(sed -n 's/^SKIP: [^:]*: //p' "$name.log" 2>/dev/null | head -n 1)
			echo "$name: ${why:-no reason given (see $name.log)}" >>"$skiplist"
			;;
		*) nfail=$((nfail + 1)) ;;
		esac
	done
}

# summary: the skipped tests with their reasons, then the counts.
summary() {
	if [ -s "$skiplist" ]; then
		echo "check: skipped, with the reason:"
		sed 's/^/  /' "$skiplist"
	fi
	echo "check: $npass passed, $nfail failed, $nskip skipped"
}

# trs_in DIR [STAMP]: the .trs files under DIR/tests (those newer than
# STAMP when given), one a line.
trs_in() {
	if [ -n "${2:-}" ]; then
		find "$1/tests" -name '*.trs' -newer "$2" 2>/dev/null | sort
	else
		find "$1/tests" -name '*.trs' 2>/dev/null | sort
	fi
}

# print_failures TRS...: the logs of those that failed.
print_failures() {
	for trs in "$@"; do
		grep -q ':global-test-result: \(FAIL\|ERROR\|XPASS\)' "$trs" 2>/dev/null || continue
		echo "===== ${trs%.trs}.log"
		tail -n 80 "${trs%.trs}.log"
	done
}

if [ "${1:-}" = --summary ]; then
	dir=${2:-build}
	[ -d "$dir/tests" ] || { echo "check: no tests run in $dir" >&2; exit 1; }
	# shellcheck disable=SC2046
	count $(trs_in "$dir")
	summary
	[ "$nfail" = 0 ]
	exit
fi

scripts/deps.sh
if [ "${VOLRAY_ANCHORS:-0}" = 1 ]; then
	scripts/anchors.sh build ||
	    echo "check: not every anchor built (scripts/anchors.sh build above); the tests that need one skip"
fi
[ -f configure ] && [ configure -nt configure.ac ] || autoreconf -fi
if [ -f config.status ]; then
	echo "check: the source tree is configured in place (config.status):" \
	    "the out-of-tree build in build/ cannot be configured beside it." \
	    "Run 'make distclean' in $(pwd) (it removes the in-tree build)," \
	    "then scripts/check.sh again." >&2
	exit 1
fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure --enable-debug
make -j2
# The folders' order: no upward include, no call cycle, nothing around
# the client seam (ARCHITECTURE.md).
python3 ../scripts/layers.py .
# The main run; its tests are the .trs files written after the stamp.
stamp=$(pwd)/.check-stamp
touch "$stamp"
rc=0
make -j2 check ${TESTS:+"TESTS=$TESTS"} || rc=$?
run=$(trs_in . "$stamp")
# shellcheck disable=SC2086
count $run
if [ $rc != 0 ]; then
	# shellcheck disable=SC2086
	print_failures $run
	[ "$nfail" != 0 ] || { nfail=1; echo "check: make check failed (exit $rc)"; }
	summary
	exit 1
fi
cd ..

# Fuzz smoke test: every libFuzzer target replays its regression inputs
# and fuzzes for FUZZ_SECONDS (3) in build-fuzz/. Skipped (and counted
# so) only without clang or with VOLRAY_FUZZ=0; with clang, a configure
# --enable-fuzz that fails fails the check. A failure here is a crash, a
# sanitizer report or a failed property, with the input in
# build-fuzz/tests/fuzz/artifacts/.
if [ "${VOLRAY_FUZZ:-1}" = 0 ]; then
	nskip=$((nskip + 1))
	echo "fuzz smoke test (build-fuzz/): VOLRAY_FUZZ=0" >>"$skiplist"
elif ! command -v clang >/dev/null 2>&1; then
	nskip=$((nskip + 1))
	echo "fuzz smoke test (build-fuzz/): no clang (scripts/deps.sh installs it)" >>"$skiplist"
else
	mkdir -p build-fuzz
	cd build-fuzz
	if [ ! -f Makefile ] && ! ../configure --enable-fuzz >configure.out 2>&1; then
		echo "check: configure --enable-fuzz failed (build-fuzz/configure.out):"
		tail -n 20 configure.out
		rm -f Makefile
		nfail=$((nfail + 1))
		summary
		exit 1
	fi
	if ! make -j2 >make.out 2>&1; then
		echo "check: the fuzz build failed (build-fuzz/make.out):"
		tail -n 40 make.out
		nfail=$((nfail + 1))
		summary
		exit 1
	fi
	if ! FUZZ_SECONDS=${FUZZ_SECONDS:-3} make -j1 check; then
		for log in tests/fuzz/*.log; do
			[ -f "$log" ] || continue
			case "$log" in *test-suite.log) continue ;; esac
			grep -q 'ERROR\|SUMMARY\|assertion' "$log" &&
				{ echo "===== $log"; tail -n 60 "$log"; }
		done
		nfail=$((nfail + 1))
		summary
		exit 1
	fi
	npass=$((npass + 1))
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
	if { [ ! -f Makefile ] && ! ../configure --enable-asan CFLAGS="-g -O1" \
	    >configure.out 2>&1; } || ! make -j2 >make.out 2>&1; then
		echo "check: the sanitizer build failed (build-asan/configure.out, make.out):"
		tail -n 40 make.out 2>/dev/null || tail -n 20 configure.out
		nfail=$((nfail + 1))
		summary
		exit 1
	fi
	touch .check-stamp
	if ! ASAN_OPTIONS=detect_leaks=0 \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    make -j2 check ${TESTS:+"TESTS=$TESTS"}; then
		# shellcheck disable=SC2046
		print_failures $(trs_in . .check-stamp)
		nfail=$((nfail + 1))
		summary
		exit 1
	fi
	npass=$((npass + 1))
	cd ..
fi
summary
