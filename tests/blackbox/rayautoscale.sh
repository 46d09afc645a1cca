#!/bin/sh
# The in-tree autoscaler (issue 24; lua/controllers/rayautoscaler.lua and
# the head's /api/volray/autoscaler, core/ray/demand.c) on simulated
# nodes with stock kubectl: the head pod gets KubeRay's autoscaler sidecar,
# service account and --no-monitor, with its ServiceAccount, Role and
# RoleBinding; a job whose bundles need 3 workers brings 3 (no more), runs
# once they are there, and after the idle timeout exactly those workers
# are named in workersToDelete and go; workersToDelete written by hand
# removes exactly the pods it names; upscalingMode Conservative grows by
# at most the cluster's size at a time; the group of higher priority grows
# first; a multi-host group grows and shrinks a whole replica; with Volcano
# the PodGroup's gang stays the minimum.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 8 --cpu 8 --memory 32Gi >/dev/null ||
	fail "volray node add"

# cluster NAME 'AUTOSCALER OPTIONS' 'GROUPS YAML'
cluster() {
	k apply -f - >/dev/null <<YAML || fail "create RayCluster $1"
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: $1
  labels: {ray.io/scheduler-name: volcano}
spec:
  rayVersion: "2.52.0"
  enableInTreeAutoscaling: true
  autoscalerOptions: {$2}
  headGroupSpec:
    rayStartParams: {num-cpus: "0"}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
          resources: {limits: {cpu: "1", memory: 2Gi}}
  workerGroupSpecs:
$3
YAML
}
group() {	# group NAME MAX [PRIORITY]
	cat <<YAML
  - groupName: $1
    replicas: 0
    minReplicas: 0
    maxReplicas: $2
    priority: ${3:-0}
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
          resources: {limits: {cpu: "2", memory: 4Gi}}
YAML
}
# submit CLUSTER ID BUNDLES DURATION: a simulated Ray job through the
# head Service's proxy, declaring its bundles.
submit() {
	b=$(printf '%s' "$3" | sed 's/"/\\"/g')
	out=$(curl -fsS -X POST -H 'Content-Type: application/json' \
		"$API/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/" \
		-d "{\"entrypoint\": \"python work.py\", \"submission_id\": \"$2\",
		     \"metadata\": {\"volray.io/sim-bundles\": \"$b\", \"volray.io/sim-duration\": \"$4\"}}") ||
		fail "submit $2 to $1: $out"
}
job_status() {
	k get --raw "/api/v1/namespaces/default/services/$1-head-svc:8265/proxy/api/jobs/$2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'
}
wait_job() {	# wait_job CLUSTER ID STATUS
	i=0
	until [ "$(job_status "$1" "$2" 2>/dev/null)" = "$3" ]; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "job $2 on $1 is $(job_status "$1" "$2"), not $3"
		sleep 0.1
	done
}
replicas() { k get raycluster "$1" -o jsonpath="{.spec.workerGroupSpecs[${2:-0}].replicas}"; }
workers() {	# the live worker pods of a cluster, by name
	k get pods -l "ray.io/cluster=$1,ray.io/node-type=worker" -o json |
		python3 -c 'import json,sys
for p in json.load(sys.stdin)["items"]:
    if not p["metadata"].get("deletionTimestamp"): print(p["metadata"]["name"])' | sort
}
wait_workers() {	# wait_workers CLUSTER N: until it has N live worker pods
	i=0
	until [ "$(workers "$1" | wc -l)" -eq "$2" ]; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "$1: $2 worker pods wanted, have $(workers "$1" | wc -l)"
		sleep 0.1
	done
}
wait_head() {
	k wait --for=condition=Ready pod -l "ray.io/cluster=$1,ray.io/node-type=head" --timeout=30s >/dev/null ||
		fail "$1's head is not ready"
}

# --- the head pod as KubeRay builds it with the autoscaler
cluster as "idleTimeoutSeconds: 3" "$(group small 4)"
wait_head as
head=$(k get pods -l ray.io/cluster=as,ray.io/node-type=head -o jsonpath='{.items[0].metadata.name}')
expect_eq "autoscaler|ray kuberay-autoscaler --cluster-name \$(RAY_CLUSTER_NAME) --cluster-namespace \$(RAY_CLUSTER_NAMESPACE)|500m|as" \
	"$(k get pod "$head" -o jsonpath='{.spec.containers[1].name}|{.spec.containers[1].args[0]}|{.spec.containers[1].resources.limits.cpu}|{.spec.serviceAccountName}')" \
	"the head's autoscaler sidecar and service account"
expect_contains "$(k get pod "$head" -o jsonpath='{.spec.containers[0].args[0]}')" "--no-monitor" "the head's ray start"
expect_eq "RayCluster|RayCluster|RayCluster" \
	"$(k get serviceaccount as -o jsonpath='{.metadata.ownerReferences[0].kind}')|$(k get role as -o jsonpath='{.metadata.ownerReferences[0].kind}')|$(k get rolebinding as -o jsonpath='{.metadata.ownerReferences[0].kind}')" \
	"the autoscaler's ServiceAccount, Role and RoleBinding, owned"
expect_eq "get list watch patch|get patch|as" \
	"$(k get role as -o jsonpath='{.rules[0].verbs[*]}|{.rules[2].verbs[*]}')|$(k get rolebinding as -o jsonpath='{.subjects[0].name}')" \
	"the autoscaler's Role and binding"
pass "the head gets KubeRay's autoscaler sidecar, --no-monitor, its service account and RBAC"

# --- a job needing 3 workers brings 3, runs, and they go when idle
k get raycluster as -w -o jsonpath='{.spec.workerGroupSpecs[0].replicas} {.spec.workerGroupSpecs[0].scaleStrategy.workersToDelete}{"\n"}' \
	>"$WORK/as.watch" 2>/dev/null &
WATCH=$!
KILL_PIDS="$KILL_PIDS $WATCH"
# Every worker pod made while the job runs and after, by name.
k get pods -l ray.io/cluster=as,ray.io/node-type=worker -w -o name >"$WORK/as.pods" 2>/dev/null &
PODW=$!
KILL_PIDS="$KILL_PIDS $PODW"
wait_watchers 2
submit as big '[{"CPU": 2, "count": 3}]' 3s
wait_job as big RUNNING
# The job is in the head's autoscaler state: its three bundles pending,
# or, once they are placed, two CPUs used on each of three workers.
state=$(k get --raw "/api/v1/namespaces/default/services/as-head-svc:8265/proxy/api/volray/autoscaler")
echo "$state" | python3 -c 'import json, sys
s = json.load(sys.stdin)
big = [j for j in s["pending"] if j["submission_id"] == "big"]
if big:
    b = big[0]["bundles"]
    ok = len(b) == 3 and all(x["CPU"] == 2 for x in b)
else:
    ok = sum(1 for n in s["nodes"] if n["group"] == "small" and n["used"]["CPU"] == 2) == 3
sys.exit(0 if ok else 1)' || fail "big is not in the head's autoscaler state: $state"
wait_eq 3 "replicas after the demand" replicas as
wait_workers as 3
first=$(workers as | tr '\n' ' ')
wait_job as big SUCCEEDED
wait_workers as 0
wait_eq "0" "replicas after the idle timeout" replicas as
wait_eq "" "workersToDelete cleared once they are gone" \
	k get raycluster as -o jsonpath='{.spec.workerGroupSpecs[0].scaleStrategy.workersToDelete[*]}'
kill $WATCH $PODW 2>/dev/null || true
# No fourth worker, ever: the replicas never went over 3 and no other
# worker pod was made.
expect_eq 3 "$(sed 's/ .*//; /^$/d' "$WORK/as.watch" | sort -n | tail -n 1)" \
	"the most replicas the watch saw while the job ran and after (no fourth worker)"
expect_eq "$(echo "$first" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')" \
	"$(sed 's|^pod/||' "$WORK/as.pods" | sort -u | tr '\n' ' ')" "every worker pod made for the job"
named=$(python3 - "$WORK/as.watch" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r, _, names = line.strip().partition(" ")
    if names:
        print(" ".join(sorted(json.loads(names))))
        break
PY
)
expect_eq "$(echo "$first" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')" "$named" \
	"the workers named in workersToDelete"
pass "3 workers for a job that needs 3; it ran; after the idle timeout exactly they went"

# --- workersToDelete by hand: exactly the named pod goes
submit as long '[{"CPU": 2, "count": 2}]' 600s
wait_eq 2 "replicas for the long job" replicas as
wait_workers as 2
victim=$(workers as | head -1)
keep=$(workers as | tail -1)
k patch raycluster as --type=json -p "[
  {\"op\": \"replace\", \"path\": \"/spec/workerGroupSpecs/0/replicas\", \"value\": 1},
  {\"op\": \"add\", \"path\": \"/spec/workerGroupSpecs/0/scaleStrategy\", \"value\": {\"workersToDelete\": [\"$victim\"]}}]" >/dev/null ||
	fail "patch workersToDelete"
k wait --for=delete "pod/$victim" --timeout=30s >/dev/null || fail "$victim was not deleted"
# The other worker stays. (The long job still asks for two workers, so
# the autoscaler may already be bringing a new one: only the named pod
# going and the other staying are what workersToDelete says.)
left=$(workers as)
case " $(echo $left) " in *" $keep "*) ;; *) fail "the worker not named went: $keep not in '$left'" ;; esac
case " $(echo $left) " in *" $victim "*) fail "the named worker is back: $left" ;; esac
pass "workersToDelete removes exactly the pods it names"

# --- Conservative: at most the cluster's size pending at a time
cluster slow "upscalingMode: Conservative, idleTimeoutSeconds: 600" "$(group small 4)"
wait_head slow
k get raycluster slow -w -o jsonpath='{.spec.workerGroupSpecs[0].replicas}{"\n"}' >"$WORK/slow.watch" 2>/dev/null &
WATCH=$!
KILL_PIDS="$KILL_PIDS $WATCH"
submit slow wide '[{"CPU": 2, "count": 4}]' 1s
wait_eq 4 "Conservative's replicas in the end" replicas slow
wait_job slow wide SUCCEEDED
kill $WATCH 2>/dev/null || true
expect_eq 1 "$(grep -v '^0*$' "$WORK/slow.watch" | head -1)" "Conservative's first step (the head alone: one pending worker)"
pass "upscalingMode Conservative grows by the cluster's size at a time"

# --- priority: the higher group grows first
cluster prio "idleTimeoutSeconds: 600" "$(group low 2 0)
$(group high 2 5)"
wait_head prio
submit prio one '[{"CPU": 2}]' 1s
wait_eq 1 "the high-priority group's replicas" replicas prio 1
expect_eq 0 "$(replicas prio 0)" "the low-priority group's replicas"
pass "the worker group of higher priority grows first"

# --- a multi-host group: a replica is numOfHosts pods, up and down whole
cluster mh "idleTimeoutSeconds: 3" "$(group hosts 2 | sed 's/^    priority: 0$/    priority: 0\n    numOfHosts: 2/')"
wait_head mh
submit mh pair '[{"CPU": 2, "count": 2}]' 1s
wait_eq 1 "the multi-host group's replicas" replicas mh
wait_workers mh 2
wait_job mh pair SUCCEEDED
wait_workers mh 0
expect_eq 0 "$(replicas mh)" "the multi-host group's replicas after the idle timeout"
pass "a multi-host group grows and shrinks a whole replica at a time"

# --- Volcano: the gang is the minimum, whatever the size
expect_eq 1 "$(k get podgroup ray-as-pg -o jsonpath='{.spec.minMember}')" "as's PodGroup minMember (head + minReplicas 0)"
pass "with Volcano the PodGroup's minMember stays the minimum"
