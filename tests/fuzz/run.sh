#!/bin/sh
# Run one libFuzzer target (tests/fuzz/fuzz-NAME): first its regression
# inputs (tests/fuzz/regress/NAME, each once), then fuzzing for
# FUZZ_SECONDS (default 3, the make check smoke run; make fuzz passes 60)
# from the seeds in tests/fuzz/corpus/NAME, a working corpus in the build
# tree (tests/fuzz/work/NAME, kept between runs) and, for yaml, the
# upstream samples in $top_srcdir/../shared/upstream-samples when present.
# Crashes are written to tests/fuzz/artifacts/ in the build tree; any
# crash, leak, UBSan report or timeout fails the run.
set -eu
bin=$1
name=$(basename "$bin")
name=${name#fuzz-}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
secs=${FUZZ_SECONDS:-3}
fz=$src/tests/fuzz

work=tests/fuzz/work/$name
arts=tests/fuzz/artifacts
mkdir -p "$work" "$arts"
# One fuzzer at a time, even under make -j: the runs queue on this lock.
if command -v flock >/dev/null 2>&1; then
	exec 9>tests/fuzz/run.lock
	flock 9
fi

set -- -error_exitcode=1 -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$arts/$name-"
case $name in
http | yaml) dict=$name.dict ;;
json | patch | schema | selector | jsonpath) dict=json.dict ;;
*) dict= ;;
esac
[ -n "$dict" ] && set -- "$@" -dict="$fz/$dict"
case $name in
http) set -- "$@" -max_len=16384 ;;
wal) set -- "$@" -max_len=8192 ;;
*) set -- "$@" -max_len=65536 ;;
esac

if [ -d "$fz/regress/$name" ] && [ -n "$(ls "$fz/regress/$name")" ]; then
	echo "fuzz-$name: regression inputs"
	"$bin" "$@" -runs=0 "$fz/regress/$name"
fi

dirs="$work"
[ -d "$fz/corpus/$name" ] && dirs="$dirs $fz/corpus/$name"
if [ "$name" = yaml ] && [ -d "$src/../shared/upstream-samples" ]; then
	dirs="$dirs $src/../shared/upstream-samples"
fi
echo "fuzz-$name: fuzzing for ${secs}s"
# shellcheck disable=SC2086
exec "$bin" "$@" -max_total_time="$secs" $dirs
