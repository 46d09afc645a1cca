#!/bin/sh
# The volray demo: start volrayd on an embedded store in a temporary data
# dir (HTTPS, its own CA, the admin's token in the kubeconfig), with this
# machine as a node; add simulated nodes; apply a sample RayJob with its
# Volcano Queue (validated and stored); run a real word count as a
# batch/v1 Job that the scheduler places on the local node, wait for it to
# complete and print its output (the counts and their total); spread a
# Deployment over the simulated nodes; show the cleanup; stop the daemon.
# Exits non-zero if the job does not complete.
#
# Until the KubeRay controllers land (a later issue), the word count runs
# as a plain Job that the scheduler places on the local node (nodeSelector),
# and the RayJob is accepted and stored, not yet run.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

scripts/deps.sh
[ -f configure ] && [ configure -nt configure.ac ] || autoreconf -fi
[ ! -f config.status ] || make distclean >/dev/null
mkdir -p build
[ -f build/Makefile ] || (cd build && ../configure >/dev/null)
make -C build -j2 volrayd >/dev/null

work=$(mktemp -d /tmp/volray-demo.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/volrayd --data-dir "$work/data" --listen "127.0.0.1:$port" \
	2>"$work/volrayd.log" &
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

samples="$top/../shared/upstream-samples/kuberay"
manifest="$samples/ray-job.volcano-scheduler-queue.yaml"
if [ ! -f "$manifest" ]; then
	manifest="$work/rayjob.yaml"
	cat >"$manifest" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: kuberay-test-queue
spec:
  weight: 1
  capability: {cpu: 4, memory: 6Gi}
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-sample-0
  labels:
    ray.io/scheduler-name: volcano
    volcano.sh/queue-name: kuberay-test-queue
spec:
  entrypoint: python -c "print('hello from ray')"
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0
YAML
fi
echo "== kubectl apply -f $(basename "$manifest")"
kubectl apply -f "$manifest"
echo "== kubectl get queues,rayjobs"
kubectl get queues.scheduling.volcano.sh
kubectl get rayjobs
echo "== the stored RayJob (validated against the CRD schema; it runs once the"
echo "   scheduler and the KubeRay controllers land)"
kubectl get rayjob rayjob-sample-0 -o jsonpath='   entrypoint: {.spec.entrypoint}{"\n"}   queue: {.metadata.labels.volcano\.sh/queue-name}{"\n"}   workers: {.spec.rayClusterSpec.workerGroupSpecs[0].replicas}{"\n"}'
echo "== a real word count, as a Job on the local node ($node)"
kubectl apply -f - <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: wordcount-input}
data:
  input.txt: |
    The quick brown fox jumps over the lazy dog.
    The dog barks, the fox runs, and the quick fox is gone.
---
apiVersion: batch/v1
kind: Job
metadata: {name: wordcount}
spec:
  backoffLimit: 2
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: $node}   # the scheduler places it
      restartPolicy: Never
      volumes: [{name: input, configMap: {name: wordcount-input}}]
      containers:
      - name: count
        image: python:3
        command: [python3, -c]
        args:
        - |
          import collections, os, re
          text = open(os.environ["VOLRAY_POD_ROOT"] + "/data/input.txt").read()
          words = re.findall(r"[a-z]+", text.lower())
          for word, n in collections.Counter(words).most_common():
              print(f"{word:>6} {n}")
          print(f" total {len(words)}")
        volumeMounts: [{name: input, mountPath: /data}]
YAML
if ! kubectl wait --for=condition=Complete job/wordcount --timeout=60s >/dev/null; then
	echo "== the word count did not complete"
	kubectl describe job wordcount
	kubectl logs job/wordcount || true
	exit 1
fi
kubectl get job,pods -l job-name=wordcount
echo "== kubectl logs job/wordcount"
kubectl logs job/wordcount
echo "== a Deployment on the simulated nodes, spread by the scheduler"
kubectl apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {pool: sim}
      containers:
      - {name: nginx, image: nginx:1.27, resources: {requests: {cpu: "2", memory: 1Gi}}}
YAML
kubectl wait --for=jsonpath='{.status.availableReplicas}'=6 deploy/web --timeout=30s >/dev/null
kubectl get pods -l app=web -o wide
echo "== cleanup: deleting the Job takes its pods (garbage collection)"
kubectl delete job wordcount
kubectl wait --for=delete pod -l job-name=wordcount --timeout=20s >/dev/null 2>&1 || true
kubectl get pods
echo "== stopping volrayd"
kill -TERM $pid
wait $pid || true
trap 'rm -rf "$work"' EXIT
echo "== done"
