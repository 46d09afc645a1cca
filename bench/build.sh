#!/bin/sh
# Build the benchmark load generator: plain C, libc and OpenSSL, no configure step.
# Usage: bench/build.sh [OUTPUT]  (default: bench/loadgen beside this file).
# The automake rule, when there is one, is the same single command.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
out=${1:-$dir/loadgen}
exec ${CC:-cc} ${CFLAGS:--O2 -Wall} -o "$out" "$dir/loadgen.c" -lssl -lcrypto
