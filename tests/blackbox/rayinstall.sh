#!/bin/sh
# scripts/ray.sh, real Ray's installer, never fails the build and never
# installs twice: VOLRAY_RAY=0 skips with a message; a version it cannot
# install (no index: loopback only here) is a message, exit 0, and leaves
# no half-made environment; what is not a version is refused; a version
# already installed and checked (DIR/VERSION/.volray-ray) is left alone;
# one installed with other requirements (an older script's) is updated in
# place, and kept as it was when that fails.
# Nothing here reaches PyPI.
. "$(dirname "$0")/lib.sh"
RAYSH="$top_srcdir/scripts/ray.sh"
export VOLRAY_RAY_DIR="$WORK/ray" PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS

out=$(VOLRAY_RAY=0 "$RAYSH" 2.52.0) || fail "VOLRAY_RAY=0 failed: $out"
expect_contains "$out" "VOLRAY_RAY=0: not installing Ray" "VOLRAY_RAY=0"
[ ! -e "$WORK/ray" ] || fail "VOLRAY_RAY=0 made $WORK/ray"
pass "VOLRAY_RAY=0 skips with a message"

out=$("$RAYSH" 2.x.1 "2.52.0;rm") || fail "bad versions failed: $out"
expect_contains "$out" "2.x.1: not a Ray version" "a bad version"
expect_contains "$out" "2.52.0;rm: not a Ray version" "a bad version"
pass "what is not a version is refused"

/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null ||
	skip "no python3 venv module (python3-venv)"
out=$("$RAYSH" 2.52.0 2>&1) || fail "an install without an index failed the script: $out"
expect_contains "$out" "could not install ray[default,serve]==2.52.0" "no index"
expect_contains "$out" "rayproject/ray:2.52.0 pods on the local node will wait" "no index"
[ ! -e "$WORK/ray/2.52.0" ] || fail "a failed install left $WORK/ray/2.52.0"
pass "an install that cannot reach an index: a message, exit 0, nothing left"

# An install already checked is not made again (a stand-in: pip is never run).
mkdir -p "$WORK/ray/2.52.0/bin"
printf '#!/bin/sh\nexit 0\n' >"$WORK/ray/2.52.0/bin/ray"
chmod +x "$WORK/ray/2.52.0/bin/ray"
REQS='ray[default,serve]==2.52.0 protobuf<7'
printf 'ray 2.52.0\npython 3.11\npip %s\n' "$REQS" >"$WORK/ray/2.52.0/.volray-ray"
out=$("$RAYSH") || fail "a second run failed: $out"
expect_eq "ray: ray[default,serve]==2.52.0 is installed in $WORK/ray/2.52.0" "$out" \
	"the pinned version, installed"
[ ! -e "$WORK/ray/2.52.0/pyvenv.cfg" ] || fail "the second run made a venv"
pass "a version installed and checked is left alone"

# An install from an older script (ray[default] alone, no pip line): it is
# brought to today's requirements in place with its own pip (here a
# stand-in that logs and succeeds, and a python whose `import ray.serve`
# works); when that pip fails, the install stays as it was.
printf 'ray 2.52.0\npython 3.11\n' >"$WORK/ray/2.52.0/.volray-ray"
printf '#!/bin/sh\necho "$*" >>"%s"\nexit ${PIPRC:-0}\n' "$WORK/pip.log" >"$WORK/ray/2.52.0/bin/pip"
printf '#!/bin/sh\nexit 0\n' >"$WORK/ray/2.52.0/bin/python"
chmod +x "$WORK/ray/2.52.0/bin/pip" "$WORK/ray/2.52.0/bin/python"
out=$(PIPRC=1 "$RAYSH") || fail "a failed update failed the script: $out"
expect_contains "$out" "could not update $WORK/ray/2.52.0" "a failed update"
expect_eq 'ray 2.52.0 python 3.11' "$(tr '\n' ' ' <"$WORK/ray/2.52.0/.volray-ray" | sed 's/ $//')" \
	"the marker after a failed update"
[ -x "$WORK/ray/2.52.0/bin/ray" ] || fail "a failed update removed the install"
out=$("$RAYSH") || fail "the update failed: $out"
expect_contains "$(cat "$WORK/pip.log")" "$REQS" "the update's pip"
expect_contains "$out" "ray[default,serve]==2.52.0 installed" "the update"
expect_eq "ray 2.52.0 python 3.11 pip $REQS" "$(tr '\n' ' ' <"$WORK/ray/2.52.0/.volray-ray" | sed 's/ $//')" \
	"the marker after the update"
out=$("$RAYSH") || fail "a run after the update failed: $out"
expect_eq "ray: ray[default,serve]==2.52.0 is installed in $WORK/ray/2.52.0" "$out" \
	"after the update"
pass "an install of other requirements is updated in place, and kept when that fails"
