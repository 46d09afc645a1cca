#!/bin/sh
# Install real Ray for the local node: each version pinned in
# scripts/ray-versions (or given as arguments) as
# `ray[default,serve]==VERSION` (Serve's extras for RayServices) from PyPI
# into a virtual environment of its own,
# DIR/VERSION (DIR: $VOLRAY_RAY_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray,
# volrayd's default --ray-dir), outside the tree: about 360 MB and 25 s
# each. volrayd runs a local pod whose image is rayproject/ray[-ml]:VERSION
# with DIR/VERSION/bin first on its PATH (volrayd(8), "REAL RAY").
#
# A version already installed (DIR/VERSION/.volray-ray, written when its
# install was checked, naming what pip installed) is left alone, so a
# second run installs nothing; one installed with other requirements (an
# older script's: ray[default] without Serve, protobuf 7) is updated in
# place, and kept as it was when that fails.
# Never fails the build: VOLRAY_RAY=0, no python3 venv module, or a PyPI
# that cannot be reached skip with a message, and exit 0; a failed install
# is removed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/volray/ray}
python=${VOLRAY_RAY_PYTHON:-/usr/bin/python3}

say() { echo "ray: $*"; }

if [ "${VOLRAY_RAY:-1}" = 0 ]; then
	say "VOLRAY_RAY=0: not installing Ray (the local node's rayproject/ray pods will wait, ErrImagePull, unless volrayd runs with --ray-emulated)"
	exit 0
fi
if [ $# -gt 0 ]; then
	versions="$*"
else
	versions=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/scripts/ray-versions")
fi
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
	say "$python has no venv module (Debian: python3-venv); not installing Ray"
	exit 0
fi
for v in $versions; do
	case "$v" in
	*[!0-9.]* | "" | .* | *.)
		say "$v: not a Ray version (want N.N.N)"
		continue ;;
	esac
	venv="$dir/$v"
	# What pip installs; the marker records it. protobuf<7: Ray 2.52's
	# Serve reads FieldDescriptor.label, which protobuf 7 removed (its
	# applications fail to deploy, DEPLOY_FAILED).
	set -- "ray[default,serve]==$v" "protobuf<7"
	want="pip $*"
	if [ -f "$venv/.volray-ray" ] && [ -x "$venv/bin/ray" ]; then
		if grep -qxF "$want" "$venv/.volray-ray"; then
			say "ray[default,serve]==$v is installed in $venv"
			continue
		fi
		# An older install (ray[default] alone, or other pins):
		# brought to what this script installs, in place.
		say "updating $venv to $*"
		if "$venv/bin/pip" install --quiet --disable-pip-version-check \
		    --timeout 30 --retries 1 "$@" &&
		    (cd / && "$venv/bin/python" -c 'import ray.serve') 2>/dev/null; then
			sed -i '/^pip /d; /^extras /d' "$venv/.volray-ray"
			echo "$want" >>"$venv/.volray-ray"
			say "ray[default,serve]==$v installed in $venv"
		else
			say "could not update $venv to $* (is PyPI" \
			    "reachable?); its Ray stays as it was"
		fi
		continue
	fi
	say "installing ray[default,serve]==$v from PyPI into $venv"
	mkdir -p "$dir"
	t0=$(date +%s)
	if ! "$python" -m venv "$venv" ||
	    ! "$venv/bin/pip" install --quiet --disable-pip-version-check \
	    --timeout 30 --retries 1 "$@" ||
	    ! got=$(cd / && "$venv/bin/python" -c \
	    'import ray, ray.serve; print(ray.__version__)') ||
	    [ "$got" != "$v" ]; then
		rm -rf "$venv"
		say "could not install ray[default,serve]==$v (is PyPI reachable?);" \
		    "rayproject/ray:$v pods on the local node will wait" \
		    "(ErrImagePull) until it is installed"
		continue
	fi
	py=$(cd / && "$venv/bin/python" -c \
	    'import sys; print("%d.%d" % sys.version_info[:2])')
	printf 'ray %s\npython %s\n%s\n' "$v" "$py" "$want" >"$venv/.volray-ray"
	say "ray[default,serve]==$v installed in $venv ($(du -sh "$venv" | cut -f1), $(($(date +%s) - t0)) s)"
done
exit 0
