#!/bin/sh
# Gang admission of Ray clusters through a Volcano queue: two RayJobs
# that together need more than their queue's capability do not both start
# half-placed. One gang runs whole while every pod of the other waits
# unbound; when the first finishes and its cluster is deleted, the second
# gets the room and completes too.
. "$(dirname "$0")/lib.sh"
start_daemon
"$top_builddir/volray" node add --virtual --count 4 --cpu 16 --memory 64Gi >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: small}
spec:
  weight: 1
  capability: {cpu: "4", memory: 16Gi}
YAML
for j in gang-a gang-b; do
	k apply -f - >/dev/null <<YAML
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: $j
  labels: {volcano.sh/queue-name: small}
spec:
  submissionMode: HTTPMode
  entrypoint: python work.py
  metadata: {volray.io/sim-duration: 3s}
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    workerGroupSpecs:
    - groupName: w
      replicas: 2
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
done

# bound JOB: how many of its cluster's pods have a node.
bound() {
	c=$(k get rayjob "$1" -o jsonpath='{.status.rayClusterName}')
	[ -n "$c" ] || { echo 0; return; }
	k get pods -l ray.io/cluster="$c" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
# Until one gang is placed: 3 pods bound for one job, none for the other.
i=0
while :; do
	a=$(bound gang-a) b=$(bound gang-b)
	case "$a$b" in 30 | 03) break ;; esac
	i=$((i + 1)); [ $i -lt 200 ] || fail "no single whole gang placed: gang-a $a bound, gang-b $b bound"
	sleep 0.1
done
first=gang-a second=gang-b
[ "$a" = 3 ] || { first=gang-b; second=gang-a; }
pass "$first placed whole (3 pods), $second waits with no pod bound"

# While the first runs, the second never gets part of its gang.
until [ "$(k get rayjob $first -o jsonpath='{.status.jobDeploymentStatus}')" = Complete ]; do
	n=$(bound $second)
	[ "$n" = 0 ] || [ "$n" = 3 ] || fail "$second half-placed: $n of 3 pods bound"
	[ "$n" = 0 ] || [ "$(bound $first)" = 0 ] || fail "both gangs bound at once: over the queue's capability"
	sleep 0.2
done
k wait --for=jsonpath='{.status.jobDeploymentStatus}'=Complete rayjob/$second --timeout=40s >/dev/null ||
	fail "$second did not complete after $first: $(k get rayjob $second -o jsonpath='{.status}')"
pass "$second completes once $first has finished and given the room back"
