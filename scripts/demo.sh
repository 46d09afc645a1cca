#!/bin/sh
# The volray demo: start volrayd on an embedded store in a temporary data
# dir (HTTPS, its own CA, the admin's token in the kubeconfig), with this
# machine as a node; add simulated nodes; apply a Volcano Queue and a
# RayJob gang-scheduled through it (samples/), whose entrypoint, a
# Python word count, runs as a process on this machine; show its status
# as it changes, its logs (the counts and their total), the cleanup of
# its cluster; stop the daemon. Exits non-zero if the job does not
# complete. With Ray installed (scripts/ray.sh; scripts/deps.sh runs it)
# and as root, real Ray runs the word count: a head and a worker on this
# machine, tasks and an actor (samples/rayjob-wordcount-real.yaml).
# Otherwise no Ray runs: the head's Jobs API is volrayd's emulation, the
# two workers are simulated nodes' pods and the entrypoint a plain python3
# one (samples/rayjob-wordcount.yaml; README, "What is real, what is
# emulated"). The demo says which it ran.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

scripts/deps.sh
[ -f configure ] && [ configure -nt configure.ac ] || autoreconf -fi
# An in-tree configure would stop the out-of-tree one ("already
# configured"); cleaning the user's tree is theirs to decide.
if [ -f config.status ]; then
	echo "demo: this source tree is configured in place (config.status);" \
	    "run 'make distclean' here first, then scripts/demo.sh builds in build/" >&2
	exit 1
fi
mkdir -p build
[ -f build/Makefile ] || (cd build && ../configure >/dev/null)
make -C build -j2 >/dev/null   # volrayd, volray and the ray command local pods use

ray_dir=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
if [ "$(id -u)" = 0 ] && [ -x "$ray_dir/2.52.0/bin/ray" ] && [ "${VOLRAY_DEMO_EMULATED:-0}" != 1 ]; then
	real=1 sample=samples/rayjob-wordcount-real.yaml ray_flag="" job=wordcount-real
else
	real=0 sample=samples/rayjob-wordcount.yaml ray_flag=--ray-emulated job=wordcount
fi
work=$(mktemp -d /tmp/volray-demo.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# --ray-emulated when Ray is not installed: the workers are simulated,
# and a simulated worker joins only an emulated head (volrayd(8), REAL
# RAY). With real Ray the pods get a network each (--pod-network auto).
build/volrayd --data-dir "$work/data" --listen "127.0.0.1:$port" \
	--ray-dir "$ray_dir" $ray_flag 2>"$work/volrayd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
until curl -fs --cacert "$work/data/pki/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 &&
    [ -f "$work/data/kubeconfig" ]; do
	kill -0 $pid 2>/dev/null || { cat "$work/volrayd.log"; exit 1; }
	sleep 0.05
done
export KUBECONFIG="$work/data/kubeconfig"
echo "== volrayd is up on https://127.0.0.1:$port (KUBECONFIG=$KUBECONFIG: its CA and the admin token)"
kubectl version 2>/dev/null | sed 's/^/   /'
node=$(hostname | tr 'A-Z' 'a-z')
kubectl wait --for=condition=Ready "node/$node" --timeout=20s >/dev/null
echo "== simulated nodes beside this machine"
build/volray node add --virtual --count 3 --cpu 16 --memory 64Gi --labels pool=sim
kubectl wait --for=condition=Ready node -l pool=sim --timeout=20s >/dev/null
kubectl get nodes

echo "== a Volcano queue for Ray work (samples/queue.yaml)"
kubectl apply -f samples/queue.yaml
kubectl get queues.scheduling.volcano.sh
if [ $real = 1 ]; then
	echo "== the word count RayJob ($sample): REAL RAY $("$ray_dir/2.52.0/bin/ray" --version 2>/dev/null | sed 's/.*version //'),"
	echo "   from PyPI: a head and a worker on this machine, each a pod with its own"
	echo "   network namespace and address, one gang through ray-demo; tasks count the"
	echo "   words, an actor keeps the total, the submitter runs Ray's ray job submit"
else
	echo "== the word count RayJob ($sample): head and submitter on"
	echo "   this machine, two workers on the simulated nodes, one gang through ray-demo."
	echo "   NO RAY RUNS (Ray is not installed, or not root): volrayd emulates the head's"
	echo "   Jobs API and runs the entrypoint, a plain python3 word count, as a process"
fi
sed -n '/^apiVersion/,$p' "$sample" | sed -n '/entrypoint/,/shutdown/p' | sed 's/^/   /'
kubectl get rayjob -w >"$work/watch.out" 2>&1 &
watch=$!
kubectl apply -f "$sample"
echo "== its status, live (kubectl get rayjob -w)"
tail -f "$work/watch.out" &
tailer=$!
ok=0
if kubectl wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/$job --timeout=180s >/dev/null; then
	ok=1
fi
# Let the watch print the last transition before it is stopped.
i=0
while [ $ok = 1 ] && ! grep -q Complete "$work/watch.out" && [ $i -lt 100 ]; do
	i=$((i + 1)); sleep 0.05
done
kill $tailer $watch 2>/dev/null || true
wait $tailer $watch 2>/dev/null || true
if [ $ok != 1 ]; then
	echo "== the RayJob did not complete"
	kubectl get rayjob $job -o yaml
	kubectl get pods -o wide
	exit 1
fi
cluster=$(kubectl get rayjob $job -o jsonpath='{.status.rayClusterName}')
echo "== what it made: the PodGroup, the cluster's pods, the submitter Job"
kubectl get podgroups.scheduling.volcano.sh
kubectl get pods -o wide
kubectl get jobs
if [ $real = 1 ]; then
	echo "== kubectl logs job/$job (Ray's ray job submit follows the entrypoint on real Ray)"
else
	echo "== kubectl logs job/$job (the submitter's ray job submit follows the"
	echo "   entrypoint's output through the emulated Jobs API)"
fi
kubectl logs job/$job
if ! kubectl logs job/$job | grep -q 'total: 6'; then
	echo "== the word count did not print its total"
	exit 1
fi
echo "== cleanup: shutdownAfterJobFinishes deletes RayCluster $cluster ttlSecondsAfterFinished later"
kubectl wait --for=delete "raycluster/$cluster" --timeout=30s >/dev/null
kubectl wait --for=delete pod -l "ray.io/cluster=$cluster" --timeout=30s >/dev/null 2>&1 || true
kubectl get rayjob $job
kubectl get rayclusters,pods
echo "== stopping volrayd"
kill -TERM $pid
wait $pid || true
trap 'rm -rf "$work"' EXIT
if [ $real = 1 ]; then
	echo "== done: the word count ran on real Ray (a head and a worker on this machine)"
else
	echo "== done: the word count ran under volrayd's emulated Ray head (no Ray installed,"
	echo "   or not root; scripts/ray.sh installs Ray 2.52.0)"
fi
