#!/bin/sh
# Real Ray on the local node against the emulation, on the same machine
# in one run: a RayCluster of a head and WORKERS workers (num-cpus 1,
# object store 100 MB each), image rayproject/ray:2.52.0, applied and
# timed until the cluster's state is ready (KubeRay's probes included);
# the memory of each Ray node (its pod's cgroup: total_rss, anonymous
# memory, no page cache, nothing counted twice); then RUNS Ray jobs
# (`python -c "import ray; ray.init(); ..."`) submitted one after another
# to the head's Jobs API through the API's service proxy, each timed from
# the POST to RUNNING and to SUCCEEDED. The same again with
# --ray-emulated (volrayd answers for the head; the workers' `ray start`
# waits; the job is a plain `python3 -c "print(42)"`, there being no Ray
# module to import). Needs root and scripts/ray.sh's install; prints one line per
# figure and a summary line per mode.
#   sh bench/rayreal.sh            WORKERS=2 RUNS=5
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
WORKERS=${WORKERS:-2}
RUNS=${RUNS:-5}
RAY_DIR=${VOLRAY_RAY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray}
VOLRAYD=${VOLRAYD:-$top/build/volrayd}
[ "$(id -u)" = 0 ] || { echo "rayreal.sh: needs root (cgroups, the pod network)" >&2; exit 1; }
[ -x "$RAY_DIR/2.52.0/bin/ray" ] || { echo "rayreal.sh: no Ray 2.52.0 in $RAY_DIR (scripts/ray.sh)" >&2; exit 1; }
[ -x "$VOLRAYD" ] || { echo "rayreal.sh: no volrayd at $VOLRAYD" >&2; exit 1; }
work=$(mktemp -d /var/tmp/volray-rayreal.XXXXXX)
pid=""
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null; wait $pid 2>/dev/null; } || true; rm -rf "$work"' EXIT
node=$(hostname | tr 'A-Z' 'a-z')
now_ms() { date +%s%3N; }

run() {
	mode=$1; shift
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	rm -rf "$work/data"
	"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" --share-dir "$top" \
		--ray-dir "$RAY_DIR" "$@" 2>"$work/$mode.log" &
	pid=$!
	until [ -f "$work/data/kubeconfig" ] && curl -fsk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
		kill -0 $pid 2>/dev/null || { cat "$work/$mode.log" >&2; exit 1; }
		sleep 0.05
	done
	export KUBECONFIG="$work/data/kubeconfig"
	kubectl wait --for=condition=Ready "node/$node" --timeout=30s >/dev/null
	t0=$(now_ms)
	kubectl apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: bench}
spec:
  rayVersion: "2.52.0"
  headGroupSpec:
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $node
        containers: [{name: ray-head, image: "rayproject/ray:2.52.0"}]
  workerGroupSpecs:
  - groupName: w
    replicas: $WORKERS
    minReplicas: $WORKERS
    maxReplicas: $WORKERS
    rayStartParams: {num-cpus: "1", object-store-memory: "100000000"}
    template:
      spec:
        nodeName: $node
        containers: [{name: ray-worker, image: "rayproject/ray:2.52.0"}]
YAML
	kubectl wait --for=jsonpath='{.status.state}'=ready raycluster/bench --timeout=300s >/dev/null
	ready_ms=$(($(now_ms) - t0))
	echo "$mode: apply to ready (head + $WORKERS workers): $ready_ms ms"
	# A little time for the workers' Ray to settle before measuring.
	mem=""
	for uid in $(kubectl get pods -l ray.io/cluster=bench -o jsonpath='{range .items[*]}{.metadata.uid}{" "}{.metadata.labels.ray\.io/node-type}{"\n"}{end}' | tr ' ' ':'); do
		u=${uid%%:*} type=${uid#*:}
		f=$(ls -d /sys/fs/cgroup/memory/volray/*/"$u" 2>/dev/null | head -n 1)
		rss=0
		[ -z "$f" ] || rss=$(sed -n 's/^total_rss \([0-9]*\)/\1/p' "$f/memory.stat")
		echo "$mode: $type pod's memory (cgroup total_rss): $((rss / 1048576)) MiB"
		mem="$mem $((rss / 1048576))"
	done
	api="https://127.0.0.1:$port/api/v1/namespaces/default/services/bench-head-svc:8265/proxy"
	tok=$(cat "$work/data/pki/admin.token")
	ca="$work/data/pki/ca.crt"
	# The emulated head runs the entrypoint as a plain process: no
	# Ray module to import there.
	entry='python -c \"import ray; ray.init(); print(ray.get(ray.remote(lambda: 42).remote()))\"'
	[ "$mode" = real ] || entry='python3 -c \"print(42)\"'
	runs="" dones=""
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		t0=$(now_ms)
		id=$(curl -fs --cacert "$ca" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
			-d "{\"entrypoint\": \"$entry\"}" \
			"$api/api/jobs/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["submission_id"])')
		run_ms="" st=""
		while :; do
			st=$(curl -fs --cacert "$ca" -H "Authorization: Bearer $tok" "$api/api/jobs/$id" |
				python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
			[ -n "$run_ms" ] || [ "$st" = PENDING ] || run_ms=$(($(now_ms) - t0))
			case $st in SUCCEEDED|FAILED|STOPPED) break ;; esac
			sleep 0.05
		done
		done_ms=$(($(now_ms) - t0))
		[ "$st" = SUCCEEDED ] || { echo "$mode: job $id $st" >&2; exit 1; }
		echo "$mode: job $i: submit to RUNNING $run_ms ms, to SUCCEEDED $done_ms ms"
		runs="$runs $run_ms" dones="$dones $done_ms"
	done
	med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
	echo "summary $mode: ready_ms=$ready_ms node_mib=[${mem# }] submit_to_running_ms=$(med $runs) submit_to_succeeded_ms=$(med $dones) (medians of $RUNS)"
	kubectl delete raycluster bench --wait=true >/dev/null
	kill $pid; wait $pid 2>/dev/null || true
	pid=""
}

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), Ray 2.52.0, $(nproc) cores, WORKERS=$WORKERS RUNS=$RUNS"
run real
run emulated --ray-emulated
