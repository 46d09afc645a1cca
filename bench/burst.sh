#!/bin/sh
# A fair operator under bursts (kuberay#2646): how long one RayJob in its
# own namespace takes while a burst of BURST RayJobs arrives in another,
# against the same RayJob on an idle operator.
#
# Operator mode, where queues back up: one volrayd serves the API, the
# simulated nodes and the emulated Ray heads (--roles api,nodes,ray); a
# second runs the controllers and the scheduler against it at KubeRay's
# default client rate (--kube-api-qps 100 --kube-api-burst 200; KUBE_QPS,
# KUBE_BURST). Every RayJob is HTTPMode, head + 2 workers, gang-scheduled
# through Volcano's queue, a simulated entrypoint of DURATION (default
# 1s), shutdownAfterJobFinishes.
#
#   1. idle: RayJob lone-idle in namespace "lone", alone; its time from
#      create to jobDeploymentStatus Complete (kubectl wait) is T_idle;
#   2. burst: BURST RayJobs (default 500) created in namespace "burst"
#      through 16 connections, and as soon as they are all acknowledged,
#      RayJob lone-burst in "lone": its time to Complete is T_burst.
# Prints both, their ratio (the goal: T_burst <= 2 T_idle), how long the
# burst took to finish, and the controllers' queue wait per namespace
# (volray_workqueue_wait_seconds from the operator's /metrics).
#   sh bench/burst.sh                      BURST=500 NODES=600
#   BURST=50 NODES=60 sh bench/burst.sh    small (tests/blackbox/bench.sh)
#   EMBEDDED=1 sh bench/burst.sh           one volrayd, everything embedded
#   REMOTE=ray sh bench/burst.sh           only volray's Ray controllers in
#       the second volrayd (--controllers raycluster,rayjob,rayservice);
#       the first runs the rest as with KUBERAY=1: KUBERAY=1's like-for-like
#   KUBERAY=1 sh bench/burst.sh            the anchor: KubeRay's operator
#       (scripts/anchors.sh kuberay-operator, --qps/--burst as above) in
#       place of volray's Ray controllers, volray's scheduler and nodes
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
BURST=${BURST:-500}
NODES=${NODES:-600}
DURATION=${DURATION:-1s}
TIMEOUT=${TIMEOUT:-900}
if [ -z "${VOLRAYD:-}" ]; then
	VOLRAYD=$top/build/volrayd
	[ -x "$VOLRAYD" ] || VOLRAYD=$top/volrayd
fi
VOLRAY=$(dirname "$VOLRAYD")/volray
[ -x "$VOLRAYD" ] && [ -x "$VOLRAY" ] ||
	{ echo "burst.sh: build volrayd and volray first, or set VOLRAYD" >&2; exit 1; }
command -v kubectl >/dev/null || { echo "burst.sh: no kubectl (scripts/deps.sh)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/volray-burst.XXXXXX)
pid=""
pid2=""
cleanup() {
	[ -z "$pid2" ] || kill "$pid2" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
mport=$(free_port)
qps=${KUBE_QPS:-100}
burst=${KUBE_BURST:-200}

if [ "${EMBEDDED:-0}" = 1 ]; then
	mode="embedded"
	ROLES=""
elif [ "${KUBERAY:-0}" = 1 ]; then
	mode="KubeRay's operator (--qps $qps --burst $burst), volray's scheduler and nodes"
	ROLES="--controllers=*,-raycluster,-rayjob,-rayservice"
elif [ "${REMOTE:-1}" = ray ]; then
	mode="volray's Ray controllers alone in operator mode (--kube-api-qps $qps --kube-api-burst $burst), the scheduler and nodes embedded"
	ROLES="--controllers=*,-raycluster,-rayjob,-rayservice"
	OPROLES="--roles controllers --controllers raycluster,rayjob,rayservice"
else
	mode="operator mode (--kube-api-qps $qps --kube-api-burst $burst)"
	ROLES="--roles api,nodes,ray"
	OPROLES="--roles controllers,scheduler"
fi
"$VOLRAYD" --data-dir "$work/data" --listen "127.0.0.1:$port" --no-local-node \
	--share-dir "$top" $ROLES --metrics-listen "127.0.0.1:$mport" 2>"$work/log" &
pid=$!
until curl -fsk "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 &&
    [ -f "$work/data/kubeconfig" ]; do sleep 0.02; done
export KUBECONFIG="$work/data/kubeconfig"
if [ -n "${OPROLES:-}" ]; then
	mport=$(free_port)
	"$VOLRAYD" --data-dir "$work/ops" --kubeconfig "$KUBECONFIG" \
		$OPROLES --leader-elect=false --share-dir "$top" \
		--kube-api-qps "$qps" --kube-api-burst "$burst" \
		--metrics-listen "127.0.0.1:$mport" 2>"$work/log2" &
	pid2=$!
	until curl -fs "http://127.0.0.1:$mport/readyz" >/dev/null 2>&1; do sleep 0.05; done
fi
if [ "${KUBERAY:-0}" = 1 ]; then
	"$top/scripts/anchors.sh" kuberay-operator start "$work/op" \
		--kubeconfig "$KUBECONFIG" --batch-scheduler=volcano \
		--qps "$qps" --burst "$burst" >"$work/op.log" 2>&1 &
	pid2=$!
	i=0
	until [ "$(grep -c 'Starting workers' "$work/op.log")" -ge 3 ]; do
		i=$((i + 1))
		kill -0 $pid2 2>/dev/null && [ $i -lt 1200 ] || { tail -20 "$work/op.log"; exit 1; }
		sleep 0.1
	done
fi

"$VOLRAY" node add --virtual --count "$NODES" --cpu 16 --memory 64Gi >/dev/null
kubectl wait --for=condition=Ready node --all --timeout=120s >/dev/null
kubectl create namespace burst >/dev/null
kubectl create namespace lone >/dev/null

# rayjobs NS PREFIX COUNT: create them through 16 connections.
rayjobs() {
	python3 - "$@" "$DURATION" <<'PY'
import json, subprocess, sys, threading
import http.client, ssl, base64, os, tempfile
ns, prefix, n, duration = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
import yaml
kc = yaml.safe_load(open(os.environ["KUBECONFIG"]))
cl = kc["clusters"][0]["cluster"]
user = kc["users"][0]["user"]
host, port = cl["server"].split("//")[1].split(":")
ca = tempfile.NamedTemporaryFile(delete=False)
ca.write(base64.b64decode(cl["certificate-authority-data"])); ca.close()
ctx = ssl.create_default_context(cafile=ca.name)
headers = {"Content-Type": "application/json"}
if "token" in user:
    headers["Authorization"] = "Bearer " + user["token"]
else:
    for k, f in (("client-certificate-data", "crt"), ("client-key-data", "key")):
        p = ca.name + "." + f
        open(p, "wb").write(base64.b64decode(user[k]))
    ctx.load_cert_chain(ca.name + ".crt", ca.name + ".key")
def pod(name):
    return {"spec": {"containers": [{"name": name, "image": "rayproject/ray:2.46.0",
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
def work(t, nt):
    c = http.client.HTTPSConnection(host, int(port), context=ctx)
    for i in range(t, n, nt):
        name = prefix if n == 1 else "%s-%d" % (prefix, i)
        body = json.dumps({"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "labels": {"ray.io/scheduler-name": "volcano"}},
            "spec": {"submissionMode": "HTTPMode", "entrypoint": "python work.py",
                     "metadata": {"volray.io/sim-duration": duration},
                     "shutdownAfterJobFinishes": True,
                     "rayClusterSpec": {"headGroupSpec": {"rayStartParams": {}, "template": pod("ray-head")},
                                        "workerGroupSpecs": [{"groupName": "w", "replicas": 2,
                                                              "rayStartParams": {}, "template": pod("ray-worker")}]}}})
        c.request("POST", "/apis/ray.io/v1/namespaces/%s/rayjobs" % ns, body, headers)
        r = c.getresponse(); b = r.read()
        assert r.status == 201, (r.status, b)
ts = [threading.Thread(target=work, args=(t, 16)) for t in range(min(16, n))]
[t.start() for t in ts]; [t.join() for t in ts]
PY
}
now() { date +%s.%N; }
# timed NAME: create RayJob NAME in "lone" and print the seconds to Complete.
timed() {
	t0=$(now)
	rayjobs lone "$1" 1
	kubectl wait -n lone --for=jsonpath='{.status.jobDeploymentStatus}'=Complete \
		"rayjob/$1" --timeout="${TIMEOUT}s" >/dev/null ||
		{ kubectl get rayjob -n lone "$1" -o yaml >&2; exit 1; }
	python3 -c "import sys; print('%.2f' % ($(now) - $t0))"
}
complete_in() {	# how many RayJobs of namespace $1 are Complete
	kubectl get rayjobs -n "$1" -o jsonpath='{range .items[*]}{.status.jobDeploymentStatus}{"\n"}{end}' |
		grep -c '^Complete$' || true
}
qwait() {	# the operator's queue wait per namespace, for RayJobs
	curl -fs "http://127.0.0.1:$mport/metrics" 2>/dev/null |
		grep '^volray_workqueue_\(wait_seconds_sum\|wait_seconds_count\|longest_wait_seconds\){controller="rayjob"' || true
}

echo "burst benchmark: $mode; a lone RayJob beside $BURST in another namespace," \
    "head + 2 workers each, $DURATION entrypoint, $NODES simulated nodes" \
    "($(nproc) cores; tree $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $VOLRAYD)"
t_idle=$(timed lone-idle)
echo "idle: lone RayJob Complete after $t_idle s"
tb=$(now)
rayjobs burst job "$BURST"
t_sub=$(now)
t_burst=$(timed lone-burst)
echo "burst: $BURST RayJobs created in $(python3 -c "print('%.1f' % ($t_sub - $tb))") s;" \
    "then the lone RayJob Complete after $t_burst s" \
    "(burst jobs Complete by then: $(complete_in burst))"
i=0
until [ "$(complete_in burst)" = "$BURST" ]; do
	i=$((i + 1)); [ $i -lt "$TIMEOUT" ] || { echo "burst.sh: the burst did not complete" >&2; exit 1; }
	sleep 1
done
echo "burst: all $BURST Complete after $(python3 -c "print('%.1f' % ($(now) - $tb))") s"
qwait
python3 -c "
i, b = $t_idle, $t_burst
print('ratio=%.2f lone_idle=%.2f lone_burst=%.2f unit=s goal=%s' % (b / i, i, b, 'met' if b <= 2 * i else 'missed'))"
