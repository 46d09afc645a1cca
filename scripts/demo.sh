#!/bin/sh
# The volray demo: start volrayd on an embedded store in a temporary data
# dir, apply a sample RayJob with its Volcano Queue, show what the control
# plane holds, and stop the daemon.
#
# Today the daemon is the API server, store and Lua controller runtime: the
# RayJob is accepted, validated against the upstream-compatible CRD schema,
# stored durably and watchable, and the built-in Deployment/ReplicaSet
# controllers (Lua) roll out a Deployment. The RayJob controller, gang
# scheduler and node runtimes that run the job to completion arrive with
# the later issues; the demo grows with them.
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
	--no-local-node 2>"$work/volrayd.log" &
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
echo "== the stored RayJob (defaults applied by the CRD schema)"
kubectl get rayjobs -o yaml | sed -n '1,40p'
echo "== the Lua controllers at work: a Deployment, then a rolling update"
kubectl create deployment web --image=nginx:1.27 --replicas=3
kubectl wait --for=jsonpath='{.status.updatedReplicas}'=3 deploy/web --timeout=20s >/dev/null
kubectl get deploy,rs,pods -l app=web
kubectl set image deploy/web nginx=nginx:1.28 >/dev/null
kubectl wait --for=jsonpath='{.status.updatedReplicas}'=1 deploy/web --timeout=20s >/dev/null
echo "   (maxSurge 25% lets one new pod start; the rollout goes on as pods"
echo "    become available, which needs the node runtimes of a later issue)"
kubectl get rs -l app=web
kubectl describe deploy web | sed -n '/^Events:/,$p'
echo "== stopping volrayd"
kill -TERM $pid
wait $pid || true
trap 'rm -rf "$work"' EXIT
echo "== done"
