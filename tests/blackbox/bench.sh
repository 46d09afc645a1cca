#!/bin/sh
# The benchmarks still work: each runs small (SMALL=1) against the freshly
# built daemon. Figures are printed, never judged; a failed request, a
# missing watch event or a daemon that does not start fails the test.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
cd "$top_srcdir"
LOADGEN="$top_builddir/bench-loadgen"
sh bench/build.sh "$LOADGEN" >/dev/null
# etcd is the baseline when it is installed (scripts/deps.sh installs
# it); without it only volray runs.
if command -v etcd >/dev/null 2>&1; then base=1; else base=0; fi
export LOADGEN SMALL=1 ETCD_BASELINE=$base VOLRAYD="$top_builddir/volrayd" SHARE_DIR="$top_srcdir"
bash bench/store.sh
TLS=1 bash bench/store.sh
bash bench/watch.sh
if [ "$base" = 1 ]; then
	# issue 22's: two API servers on one etcd, start-up on etcd.
	ETCD_STORE=1 W=20 bash bench/watch.sh
	bash bench/etcdstart.sh
fi
sh bench/reconcile.sh
N=4 NODES=8 ROUNDS=1 sh bench/autoscale.sh
# One cluster autoscaled to 500 workers and back (SMALL: 40 nodes).
bash bench/autoscale10k.sh
# A lone RayJob beside a burst in another namespace, operator mode
# (about 25 s small).
BURST=30 NODES=40 sh bench/burst.sh
ONLY=plugins,floor,capacity,topology,topofull,arrive bash bench/sched.sh
# Streams into a pod need the local node's processes (any user) and the
# Python client (scripts/deps.sh installs it).
sh bench/stream.sh
# Against the real kube-apiserver on etcd, when the anchors are built
# (scripts/anchors.sh build; VOLRAY_ANCHORS=1 scripts/check.sh).
if scripts/anchors.sh path kube-apiserver >/dev/null 2>&1 && [ "$base" = 1 ]; then
	bash bench/anchors.sh store
else
	echo "bench/anchors.sh store: kube-apiserver not built (scripts/anchors.sh build), not run"
fi
# volray's Ray controllers against KubeRay's operator on volrayd (about
# 40 s small).
if scripts/anchors.sh path kuberay-operator >/dev/null 2>&1; then
	bash bench/anchors.sh rayjobs
else
	echo "bench/anchors.sh rayjobs: kuberay-operator not built (scripts/anchors.sh build), not run"
fi
# volray's roles against KubeRay's operator and vc-scheduler on
# kube-apiserver (about 30 s small). Its anchor side routes the
# simulated pods' range to lo for the run: as root only.
why=""
for a in kube-apiserver kuberay-operator vc-scheduler; do
	scripts/anchors.sh path $a >/dev/null 2>&1 || why="$a not built (scripts/anchors.sh build)"
done
[ "$base" = 1 ] || why="no etcd"
[ -f ../shared/upstream-samples/volcano-1.15/volcano-scheduler.conf ] ||
	why="no ../shared/upstream-samples/volcano-1.15"
[ "$(id -u)" = 0 ] || why="not root (the anchor's side routes 10.64.0.0/10 to lo)"
if [ -z "$why" ]; then
	bash bench/anchors.sh operator
else
	echo "bench/anchors.sh operator: $why, not run"
fi
echo "ok: benchmarks ran"
