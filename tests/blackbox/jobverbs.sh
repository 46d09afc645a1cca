#!/bin/sh
# vcctl's verbs for Volcano Jobs (issue 26): volray job run (flags and
# -f), list (vcctl's columns), view, suspend and resume (Commands the
# job controller acts on and deletes), delete.
. "$(dirname "$0")/lib.sh"
start_daemon
VR="$top_builddir/volray"
"$VR" node add --virtual --count 1 --cpu 8 --memory 16Gi >/dev/null || fail "node add"

out=$("$VR" job run --name hello --replicas 2 --min 2 --requests cpu=1,mem=1Gi) || fail "job run: $out"
expect_eq "run job hello successfully" "$out" "job run output"
expect_eq "2 2 1 1Gi volcano default" \
	"$(k get vcjob hello -o jsonpath='{.spec.minAvailable} {.spec.tasks[0].replicas} {.spec.tasks[0].template.spec.containers[0].resources.requests.cpu} {.spec.tasks[0].template.spec.containers[0].resources.requests.memory} {.spec.schedulerName} {.spec.queue}')" \
	"the job run made"
k wait --for=jsonpath='{.status.state.phase}'=Running vcjob/hello --timeout=30s >/dev/null ||
	fail "hello did not run: $(k get vcjob hello -o jsonpath='{.status}')"
pass "volray job run makes a one-task job from flags, and it runs"

list=$("$VR" job list) || fail "job list"
expect_eq "Name Creation Phase JobType Replicas Min Pending Running Succeeded Failed Unknown RetryCount" \
	"$(echo "$list" | head -1 | tr -s ' ')" "job list header"
expect_contains "$(echo "$list" | tr -s ' ')" "hello $(date -u +%Y-%m-%d) Running Batch 2 2 0 2 0 0 0 0" "job list row"
view=$("$VR" job view hello) || fail "job view"
expect_contains "$view" "Name:" "job view"
expect_contains "$view" "hello" "job view names the job"
pass "volray job list prints vcctl's columns; view describes the job"

out=$("$VR" job suspend hello) || fail "job suspend: $out"
expect_eq "suspend job hello successfully" "$out" "suspend output"
k wait --for=jsonpath='{.status.state.phase}'=Aborted vcjob/hello --timeout=30s >/dev/null ||
	fail "hello was not aborted: $(k get vcjob hello -o jsonpath='{.status.state}')"
expect_eq 0 "$(k get pods -l volcano.sh/job-name=hello -o name | wc -l | tr -d ' ')" "pods of the suspended job"
expect_eq 0 "$(k get commands.bus.volcano.sh -o name | wc -l | tr -d ' ')" "Commands left after suspend"
pass "volray job suspend aborts the job (its pods go, the Command is taken)"

before=$(k get vcjob hello -o jsonpath='{.status.version}')
"$VR" job resume hello >/dev/null || fail "job resume"
k wait --for=jsonpath='{.status.state.phase}'=Running vcjob/hello --timeout=30s >/dev/null ||
	fail "hello did not run again: $(k get vcjob hello -o jsonpath='{.status.state}')"
expect_eq 1 "$(k get vcjob hello -o jsonpath='{.status.retryCount}')" "retryCount after resume"
after=$(k get vcjob hello -o jsonpath='{.status.version}')
[ "$after" -gt "$before" ] || fail "the job's version after resume: $before, then $after"
pass "volray job resume starts an aborted job again as a new version"

cat >"$WORK/job.yaml" <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: fromfile}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: t
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
"$VR" job run -f "$WORK/job.yaml" >/dev/null || fail "job run -f"
k get vcjob fromfile >/dev/null 2>&1 || fail "job run -f made nothing"
expect_eq "delete job fromfile successfully" "$("$VR" job delete fromfile)" "job delete output"
set +e
"$VR" job delete fromfile 2>"$WORK/err"; rc=$?
"$VR" job run 2>/dev/null; rc2=$?
set -e
expect_eq "1 2" "$rc $rc2" "exit codes of deleting a missing job and run without --name"
expect_contains "$(cat "$WORK/err")" 'not found' "the missing job's message"
pass "volray job run -f and delete; refusals exit 1, usage errors 2"

# The svc plugin: hosts ConfigMap, headless Service, NetworkPolicy; each
# pod named under the Service, with the hosts as variables and files.
k apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins: {svc: [], env: []}
  tasks:
  - name: mpi-master
    replicas: 1
    template:
      metadata: {annotations: {volray.io/sim-duration: 1h}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
  - name: worker
    replicas: 2
    template:
      metadata: {annotations: {volray.io/sim-duration: 1h}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
k wait --for=jsonpath='{.status.state.phase}'=Running vcjob/mpi --timeout=30s >/dev/null ||
	fail "the svc job did not run: $(k get vcjob mpi -o jsonpath='{.status}')"
expect_eq "mpi-worker-0.mpi,mpi-worker-1.mpi 2 mpi-mpi-master-0.mpi" \
	"$(k get configmap mpi-svc -o jsonpath='{.data.VC_WORKER_HOSTS} {.data.VC_WORKER_NUM} {.data.mpi_master\.host}')" \
	"the hosts ConfigMap"
expect_eq "None" "$(k get service mpi -o jsonpath='{.spec.clusterIP}')" "the headless Service"
k get networkpolicy mpi >/dev/null 2>&1 || fail "no NetworkPolicy"
expect_eq "mpi-worker-1 mpi /etc/volcano VC_MPI_MASTER_HOSTS" \
	"$(k get pod mpi-worker-1 -o jsonpath='{.spec.hostname} {.spec.subdomain} {.spec.containers[0].volumeMounts[0].mountPath} {.spec.containers[0].env[0].name}')" \
	"a pod of the svc job"
pass "the svc plugin: hosts ConfigMap, headless Service, NetworkPolicy, pod names and variables"
