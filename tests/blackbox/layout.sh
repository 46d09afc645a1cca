#!/bin/sh
# A newcomer's first minutes: a clean copy of the tree (what git tracks)
# configures and builds out of tree with a clean screen (no rm complaints
# from configure, no compiler warnings in the default -O2 build), and the
# volrayd it built finds crds/, lua/ and policies/ without --share-dir:
# it serves the KubeRay and Volcano CRDs and runs the Lua controllers.
# Copied away from its build tree, with nothing installed, it refuses to
# start and names the places it looked in.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null 2>&1 || skip "git is needed to copy the tree (scripts/deps.sh installs it)"
src="$WORK/src"
mkdir -p "$src"
(cd "$top_srcdir" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$src" ||
	fail "copying the tracked files of $top_srcdir"
[ -f "$src/configure.ac" ] || fail "the copy has no configure.ac"
[ ! -e "$src/configure" ] || fail "the copy is not clean: it has configure"

(cd "$src" && autoreconf -fi) >"$WORK/autoreconf.out" 2>&1 ||
	{ cat "$WORK/autoreconf.out"; fail "autoreconf"; }
mkdir "$src/build"
# A prefix with nothing installed in it: the built-in search must not find
# an installed copy by chance.
(cd "$src/build" && ../configure --prefix="$WORK/prefix") \
	>"$WORK/configure.out" 2>"$WORK/configure.err" ||
	{ cat "$WORK/configure.err"; fail "configure"; }
[ ! -s "$WORK/configure.err" ] || { cat "$WORK/configure.err"; fail "configure wrote to stderr"; }
# Run again in the configured tree (core/ now exists in build/ too).
(cd "$src/build" && ../configure --prefix="$WORK/prefix") \
	>/dev/null 2>"$WORK/configure.err" || fail "second configure"
[ ! -s "$WORK/configure.err" ] || { cat "$WORK/configure.err"; fail "second configure wrote to stderr"; }
[ ! -e "$src/confdefs.h" ] && [ ! -e "$src/build/confdefs.h" ] ||
	fail "configure left confdefs.h behind"
pass "clean tree configures out of tree, nothing on stderr"

# Not the jobserver of the make check that runs this test.
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$src/build" -j2 >"$WORK/make.out" 2>&1 ||
	{ tail -n 40 "$WORK/make.out"; fail "make"; }
if grep -E ':[0-9]+:([0-9]+:)? warning:' "$WORK/make.out"; then
	fail "the default build printed compiler warnings"
fi
[ -x "$src/build/volrayd" ] && [ -x "$src/build/volray" ] || fail "no binaries"
[ ! -e "$src/volrayd" ] && [ ! -e "$src/core/volrayd.o" ] ||
	fail "the out-of-tree build wrote into the source tree"
pass "out-of-tree build, no compiler warnings"

VOLRAYD="$src/build/volrayd"
SHARE_DIR=""
start_daemon
for crd in rayclusters.ray.io rayjobs.ray.io rayservices.ray.io \
    podgroups.scheduling.volcano.sh queues.scheduling.volcano.sh \
    jobs.batch.volcano.sh; do
	k get crd "$crd" -o name >/dev/null || fail "CRD $crd not served"
done
grep -q "CRDs, Lua and policies from $src\$" "$WORK/volrayd.log" ||
	fail "volrayd did not say it uses $src"
pass "volrayd from the build tree serves the KubeRay and Volcano CRDs"

k create deployment web --image=nginx --replicas=2 >/dev/null
k wait --for=jsonpath='{.status.replicas}'=2 deploy/web --timeout=20s >/dev/null ||
	fail "the Lua Deployment controller did not run"
pass "the Lua controllers run"
stop_daemon

mkdir "$WORK/elsewhere"
cp "$src/build/volrayd" "$WORK/elsewhere/"
if "$WORK/elsewhere/volrayd" --data-dir "$WORK/d2" --listen 127.0.0.1:1 \
    >"$WORK/refuse.out" 2>&1; then
	fail "volrayd started without any CRD directory"
fi
out=$(cat "$WORK/refuse.out")
expect_contains "$out" "$WORK/elsewhere/crds" "the refusal names the binary's directory"
expect_contains "$out" "$WORK/prefix/share/volray/crds" "the refusal names PKGDATADIR"
[ ! -e "$WORK/d2/store" ] || fail "volrayd opened a store before refusing"
if "$WORK/elsewhere/volrayd" --share-dir "$WORK" --data-dir "$WORK/d3" \
    >"$WORK/refuse.out" 2>&1; then
	fail "volrayd started with a --share-dir that has no crds/"
fi
expect_contains "$(cat "$WORK/refuse.out")" "has no crds/" "a bad --share-dir is named"
pass "no CRD directory: refused, with the places looked in"
