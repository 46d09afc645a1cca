#!/bin/sh
# The Volcano Job controller (lua/controllers/vcjob.lua) on simulated
# nodes: a job's PodGroup <job>-<uid> and pods <job>-<task>-<i> with
# Volcano's annotations, labels and VC_TASK_INDEX; Pending -> Running ->
# Completed; PodFailed -> RestartJob up to maxRetry, then Failed;
# PodEvicted -> AbortJob; TaskCompleted -> CompleteJob; TaskFailed ->
# TerminateJob; dependsOn; a policy's timeout; the ssh plugin; a bad
# job and an
# unschedulable PodGroup are Warning events; Volcano's upstream sample
# job.yaml runs unchanged; a job survives a restart of volrayd.
#
# Volcano's job controller makes pods only once the scheduler's enqueue
# action has admitted the PodGroup (Pending -> Inqueue). Until core/sched/
# has enqueue, admit_podgroups below stands in for it: it watches
# PodGroups and moves each Pending one to Inqueue with a JSON patch whose
# test op makes it a no-op when the scheduler got there first.
. "$(dirname "$0")/lib.sh"
need_samples
start_daemon
VR="$top_builddir/volray"

"$VR" node add --virtual --count 3 --cpu 4 --memory 8Gi >/dev/null || fail "node add"
k wait --for=condition=Ready node/vnode-0 node/vnode-1 node/vnode-2 --timeout=10s >/dev/null

admit_podgroups() {
	k get podgroups -A -w -o jsonpath='{.metadata.namespace} {.metadata.name} {.status.phase}{"\n"}' |
	while read -r ns name phase; do
		[ "$phase" = Pending ] || continue
		k -n "$ns" patch podgroup "$name" --subresource=status --type=json \
			-p '[{"op":"test","path":"/status/phase","value":"Pending"},{"op":"replace","path":"/status/phase","value":"Inqueue"}]' \
			>/dev/null 2>&1 || true
	done
}
before=$(watchers)
admit_podgroups &
wait_watchers $((before + 1))

jphase() { k get vcjob "$1" -o jsonpath='{.status.state.phase}'; }
wait_phase() { # job phase
	k wait --for=jsonpath='{.status.state.phase}'="$2" "vcjob/$1" --timeout=30s >/dev/null ||
		fail "job $1 did not reach $2: $(jphase "$1")"
}
ann() { # pod key
	k get pod "$1" -o jsonpath="{.metadata.annotations.$(echo "$2" | sed 's/\./\\./g')}"
}

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: done}
spec:
  plugins: {env: []}
  tasks:
  - name: ps
    replicas: 1
    template:
      metadata: {annotations: {volray.io/sim-duration: 2s}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: 500m}}}]
  - name: worker
    replicas: 2
    minAvailable: 1
    template:
      metadata: {annotations: {volray.io/sim-duration: 2s}, labels: {role: worker}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
YAML
uid=$(k get vcjob done -o jsonpath='{.metadata.uid}')
pg="done-$uid"
k wait --for=jsonpath='{.spec.minMember}'=2 "podgroup/$pg" --timeout=10s >/dev/null ||
	fail "no PodGroup $pg with minMember 2"
expect_eq "default 1 1 1500m 1Gi Job/done" \
	"$(k get podgroup "$pg" -o jsonpath='{.spec.queue} {.spec.minTaskMember.ps} {.spec.minTaskMember.worker} {.spec.minResources.cpu} {.spec.minResources.memory} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" \
	"the job's PodGroup"
wait_phase done Running
pods=$(k get pods -l volcano.sh/job-name=done -o jsonpath='{.items[*].metadata.name}')
expect_eq "done-ps-0 done-worker-0 done-worker-1" "$pods" "pod names"
expect_eq "$pg worker 1 done 0 default" \
	"$(ann done-worker-1 scheduling.k8s.io/group-name) $(ann done-worker-1 volcano.sh/task-spec) $(ann done-worker-1 volcano.sh/task-index) $(ann done-worker-1 volcano.sh/job-name) $(ann done-worker-1 volcano.sh/job-version) $(ann done-worker-1 volcano.sh/queue-name)" \
	"a pod's annotations"
expect_eq "worker 1 done default worker volcano" \
	"$(k get pod done-worker-1 -o jsonpath='{.metadata.labels.volcano\.sh/task-spec} {.metadata.labels.volcano\.sh/task-index} {.metadata.labels.volcano\.sh/job-name} {.metadata.labels.volcano\.sh/job-namespace} {.metadata.labels.role} {.spec.schedulerName}')" \
	"a pod's labels and scheduler"
expect_eq "1 1" "$(k get pod done-worker-1 -o jsonpath='{.spec.containers[0].env[?(@.name=="VC_TASK_INDEX")].value} {.spec.containers[0].env[?(@.name=="VK_TASK_INDEX")].value}')" \
	"the env plugin's index"
expect_eq "Job/done" "$(k get pod done-ps-0 -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" "pods owned by the job"
wait_phase done Completed
expect_eq "3 0 0 2" "$(k get vcjob done -o jsonpath='{.status.succeeded} {.status.failed} {.status.running} {.status.minAvailable}')" \
	"the completed job's counts"
expect_eq "Pending Running Completed" "$(k get vcjob done -o jsonpath='{.status.conditions[*].status}')" "its conditions"
k wait --for=delete "podgroup/$pg" --timeout=10s >/dev/null || fail "a finished job keeps its PodGroup"
pass "a two-task vcjob: PodGroup, pods, annotations, env; Pending -> Running -> Completed"

head=$(k get vcjob | head -1 | tr -s ' ')
expect_eq "NAME STATUS MINAVAILABLE RUNNINGS AGE" "$head" "kubectl get vcjob columns"
pass "kubectl get vcjob prints Volcano's columns"

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: flaky}
spec:
  maxRetry: 2
  policies: [{event: PodFailed, action: RestartJob}]
  tasks:
  - name: w
    replicas: 2
    template:
      metadata: {annotations: {volray.io/sim-duration: 300ms, volray.io/sim-exit-code: "3"}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox}]
YAML
wait_phase flaky Failed
expect_eq "2 2" "$(k get vcjob flaky -o jsonpath='{.status.retryCount} {.status.version}')" "retries and versions"
reasons=$(k get events --field-selector involvedObject.name=flaky,reason=Restarting -o jsonpath='{.items[*].reason}')
expect_eq Restarting "$reasons" "a Restarting event"
# At the last retry Volcano keeps the failed pods: those of version 1.
expect_eq "1 1" "$(ann flaky-w-0 volcano.sh/job-version) $(ann flaky-w-1 volcano.sh/job-version)" "the pods kept"
expect_eq "Failed Failed" "$(k get pods flaky-w-0 flaky-w-1 -o jsonpath='{.items[*].status.phase}')" "they failed"
pass "PodFailed -> RestartJob restarts the job maxRetry times, then it is Failed"

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: evict}
spec:
  policies: [{event: PodEvicted, action: AbortJob}]
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: busybox}]
YAML
wait_phase evict Running
k wait --for=jsonpath='{.status.phase}'=Running pod/evict-w-0 pod/evict-w-1 --timeout=20s >/dev/null
k delete pod evict-w-0 --wait=false >/dev/null
wait_phase evict Aborted
k wait --for=delete pod/evict-w-1 --timeout=20s >/dev/null || fail "AbortJob left a running pod"
expect_eq "Pending Running Aborting Aborted" "$(k get vcjob evict -o jsonpath='{.status.conditions[*].status}')" "abort's phases"
pass "PodEvicted -> AbortJob: Aborting, its pods deleted, Aborted"

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: master}
spec:
  tasks:
  - name: master
    replicas: 1
    policies: [{event: TaskCompleted, action: CompleteJob}]
    template:
      metadata: {annotations: {volray.io/sim-duration: 1s}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox}]
  - name: worker
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: busybox}]
YAML
wait_phase master Completed
k wait --for=delete pod/master-worker-0 pod/master-worker-1 --timeout=20s >/dev/null ||
	fail "CompleteJob left the workers"
expect_eq Succeeded "$(k get pod master-master-0 -o jsonpath='{.status.phase}')" "the master pod is kept"
pass "a task's TaskCompleted -> CompleteJob ends the job and its other pods"

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: crashy}
spec:
  tasks:
  - name: w
    replicas: 1
    maxRetry: 1
    policies: [{event: TaskFailed, action: TerminateJob}]
    template:
      metadata: {annotations: {volray.io/sim-duration: 200ms, volray.io/sim-exit-code: "1"}}
      spec:
        restartPolicy: OnFailure
        containers: [{name: c, image: busybox}]
YAML
wait_phase crashy Terminated
k wait --for=delete pod/crashy-w-0 --timeout=20s >/dev/null || fail "TerminateJob left the pod"
expect_eq "Pending Running Terminating Terminated" "$(k get vcjob crashy -o jsonpath='{.status.conditions[*].status}')" "terminate's phases"
pass "a task whose containers restarted maxRetry times is TaskFailed -> TerminateJob: Terminated"

k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: 5
  tasks:
  - {name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
msg() { k get events --field-selector involvedObject.name=bad,reason=InvalidJob -o jsonpath='{.items[*].message}'; }
wait_eq "job 'minAvailable' should not be greater than total replicas in tasks" "the InvalidJob event" msg
expect_eq "" "$(k get pods -l volcano.sh/job-name=bad -o name)" "no pods for a bad job"
pass "a job that cannot run is a Warning event, and makes no pods"

# The scheduler's word on a PodGroup reaches its job. The condition is
# written here as Volcano's gang plugin writes it at session close.
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: stuck}
spec:
  tasks:
  - name: w
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "100"}}}]
YAML
pg="stuck-$(k get vcjob stuck -o jsonpath='{.metadata.uid}')"
k wait --for=jsonpath='{.status.phase}'=Inqueue "podgroup/$pg" --timeout=10s >/dev/null ||
	fail "stuck's PodGroup was not admitted"
k patch podgroup "$pg" --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Unschedulable","status":"True","reason":"NotEnoughResources","message":"1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable","lastTransitionTime":"2026-12-01T00:00:00Z"}]}}' >/dev/null
msg() { k get events --field-selector involvedObject.name=stuck,reason=PodGroupPending -o jsonpath='{.items[*].message}'; }
wait_eq "PodGroup default:stuck unschedulable, reason: 1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable" \
	"the PodGroupPending event" msg
expect_eq "vc-controller-manager vc-controller-manager" "$(k get events --field-selector involvedObject.name=stuck,reason=PodGroupPending \
	-o jsonpath='{.items[0].source.component} {.items[0].reportingComponent}')" \
	"the Event's source is Volcano's controller manager"
expect_eq Pending "$(jphase stuck)" "a job that cannot be placed stays Pending"
k delete vcjob stuck >/dev/null
pass "an unschedulable PodGroup is a PodGroupPending Warning on its job"

# Volcano's own sample, read from the upstream copy, unchanged: six nginx
# pods (1 CPU each), minAvailable 3, run until deleted.
k apply -f "$SAMPLES/volcano/job.yaml" >/dev/null || fail "the upstream job.yaml was refused"
wait_phase test-job Running
k wait --for=jsonpath='{.status.running}'=6 vcjob/test-job --timeout=30s >/dev/null ||
	fail "test-job does not run six pods: $(k get vcjob test-job -o jsonpath='{.status}')"
expect_eq "3 5 default" "$(k get vcjob test-job -o jsonpath='{.status.minAvailable} {.spec.maxRetry} {.spec.queue}')" "the sample's spec"
expect_eq 6 "$(k get pods -l volcano.sh/job-name=test-job --field-selector=status.phase=Running -o name | wc -l | tr -d ' ')" "running pods"
k delete vcjob test-job >/dev/null
k wait --for=delete pod -l volcano.sh/job-name=test-job --timeout=30s >/dev/null ||
	fail "the sample's pods outlived it"
pass "the upstream sample job.yaml runs six pods, and goes with its pods"

# dependsOn: the workers' pods are made once the master runs ready.
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: dep}
spec:
  minAvailable: 1
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        nodeSelector: {dep-role: master}
        containers: [{name: c, image: busybox}]
  - name: worker
    replicas: 2
    minAvailable: 0
    dependsOn: {name: [master]}
    template:
      spec:
        containers: [{name: c, image: busybox}]
YAML
i=0
until k get pod dep-master-0 >/dev/null 2>&1 && [ "$(k get vcjob dep -o jsonpath='{.status.pending}')" = 1 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "dep's master pod not made: $(k get vcjob dep -o jsonpath='{.status}')"
	sleep 0.1
done
expect_eq "" "$(k get pods -l volcano.sh/task-spec=worker,volcano.sh/job-name=dep -o name)" \
	"worker pods while the master cannot start"
k label node vnode-1 dep-role=master >/dev/null
k wait --for=condition=Ready pod/dep-master-0 --timeout=30s >/dev/null || fail "the master did not start"
i=0
until k get pod dep-worker-0 dep-worker-1 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the workers were not made after the master"
	sleep 0.1
done
k wait --for=jsonpath='{.status.phase}'=Running pod/dep-worker-0 pod/dep-worker-1 --timeout=30s >/dev/null ||
	fail "the workers did not run"
k delete vcjob dep --wait=false >/dev/null
pass "dependsOn: a task's pods wait until the task it depends on runs ready"

# A policy timeout: the PodPending policy acts once the pod has been
# pending 3s (a PodPending policy without a timeout does not apply).
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: stuck}
spec:
  policies: [{event: PodPending, action: AbortJob, timeout: 3s}]
  tasks:
  - name: w
    replicas: 1
    policies: [{event: PodPending, action: TerminateJob}]
    template:
      spec:
        nodeSelector: {no-such: node}
        containers: [{name: c, image: busybox}]
YAML
wait_phase stuck Aborted
created=$(k get vcjob stuck -o jsonpath='{.metadata.creationTimestamp}')
aborting=$(k get vcjob stuck -o jsonpath='{.status.conditions[?(@.status=="Aborting")].lastTransitionTime}')
waited=$(python3 -c 'import sys, datetime as d
f = lambda s: d.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
print(int((f(sys.argv[2]) - f(sys.argv[1])).total_seconds()))' "$created" "$aborting")
[ "$waited" -ge 2 ] || fail "AbortJob came ${waited}s after the job was made, before the 3s timeout"
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: badtimeout}
spec:
  policies: [{event: PodFailed, action: RestartJob, timeout: 3x}]
  tasks:
  - {name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
msg() { k get events --field-selector involvedObject.name=badtimeout,reason=InvalidJob -o jsonpath='{.items[*].message}'; }
wait_eq "invalid policy timeout 3x" "the InvalidJob event for a bad timeout" msg
pass "a policy's timeout delays its action (${waited}s after creation); a bad timeout is refused"

# The ssh plugin: a Secret <job>-ssh with a new RSA pair whose halves
# match (ssh-keygen -y), the ssh config of every pod, mounted at
# /root/.ssh with mode 0600; arguments move the keys and the port.
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  plugins: {ssh: [], svc: []}
  tasks:
  - {name: master, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
  - {name: worker, replicas: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
wait_phase mpi Running
sec() { k get secret "$1" -o jsonpath="{.data.$2}" | base64 -d; }
sec mpi-ssh id_rsa >"$WORK/id_rsa"
chmod 600 "$WORK/id_rsa"
head -n 1 "$WORK/id_rsa" | grep -q -- "-----BEGIN RSA PRIVATE KEY-----" || fail "id_rsa: $(head -n 1 "$WORK/id_rsa")"
pub=$(sec mpi-ssh id_rsa\\.pub)
expect_eq "$pub" "$(ssh-keygen -y -f "$WORK/id_rsa")" "the public key is the private key's"
expect_eq "$pub" "$(sec mpi-ssh authorized_keys)" "authorized_keys"
expect_eq "2048" "$(printf '%s\n' "$pub" | ssh-keygen -l -f - | cut -d' ' -f1)" "key bits"
cfg=$(sec mpi-ssh config)
case "$cfg" in "StrictHostKeyChecking no
UserKnownHostsFile /dev/null
Host mpi-master-0
  HostName mpi-master-0.mpi
  Port 22
Host mpi-worker-0
  HostName mpi-worker-0.mpi
  Port 22
Host mpi-worker-1"*) ;; *) fail "ssh config: $cfg" ;; esac
expect_eq "mpi-ssh 384 /root/.ssh .ssh" "$(k get pod mpi-worker-1 -o jsonpath='{.spec.volumes[?(@.name=="mpi-ssh")].secret.secretName} {.spec.volumes[?(@.name=="mpi-ssh")].secret.defaultMode} {.spec.containers[0].volumeMounts[?(@.name=="mpi-ssh")].mountPath} {.spec.containers[0].volumeMounts[?(@.name=="mpi-ssh")].subPath}')" \
	"the keys mounted in a pod"
expect_eq "Job mpi" "$(k get secret mpi-ssh -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')" "the Secret's owner"
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi2}
spec:
  plugins: {ssh: ["--ssh-key-file-path=/home/u/.ssh", "--ssh-port", "2222"]}
  tasks:
  - {name: w, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
wait_phase mpi2 Running
case "$(sec mpi2-ssh config)" in *"Port 2222"*) ;; *) fail "--ssh-port: $(sec mpi2-ssh config)" ;; esac
expect_eq "420 /home/u/.ssh" "$(k get pod mpi2-w-0 -o jsonpath='{.spec.volumes[?(@.name=="mpi2-ssh")].secret.defaultMode} {.spec.containers[0].volumeMounts[?(@.name=="mpi2-ssh")].mountPath}')" \
	"--ssh-key-file-path"
k delete vcjob mpi mpi2 >/dev/null
k wait --for=delete secret/mpi-ssh --timeout=30s >/dev/null || fail "the Secret outlived its job"
pass "the ssh plugin: a matching RSA pair, the hosts' config, mounted at the key path"

# spec.volumes: a claim made for the job from volumeClaim (named
# <job>-volume-<12 characters>, owned by the job, its name written back
# into the job), and a named claim not there yet: the job waits Pending,
# without pods, with a PVCError event, and runs once the claim is
# created; every container mounts both; the made claim goes with the job.
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vols}
spec:
  volumes:
  - mountPath: /data
    volumeClaim: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - {mountPath: /shared, volumeClaimName: team-share}
  tasks:
  - {name: w, replicas: 2, template: {spec: {containers: [{name: a, image: busybox}, {name: b, image: busybox}]}}}
YAML
wait_event vols PVCError "pvc team-share is not found, the job will be in the Pending state until the PVC is created"
expect_eq "Pending" "$(jphase vols)" "the job's phase while its claim is missing"
expect_eq "" "$(k get pods -l volcano.sh/job-name=vols -o name)" "pods while the claim is missing"
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: team-share}
spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}
YAML
wait_phase vols Running
made=$(k get vcjob vols -o jsonpath='{.spec.volumes[0].volumeClaimName}')
case "$made" in vols-volume-????????????) ;; *) fail "the made claim's name in the job: '$made'" ;; esac
expect_eq "Job vols 1Gi" "$(k get pvc "$made" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.spec.resources.requests.storage}')" \
	"the made claim: owner and request"
expect_eq "$made team-share" "$(k get vcjob vols -o jsonpath="{.status.controlledResources.volume-pvc-$made} {.status.controlledResources.volume-pvc-team-share}")" \
	"status.controlledResources"
expect_eq "1" "$(k get pvc -o name | grep -c "vols-volume-")" "claims made for the job (one, once)"
for c in 0 1; do
	# (and the service-account token's, which every pod gets)
	expect_eq "/data /shared /var/run/secrets/kubernetes.io/serviceaccount" "$(k get pod vols-w-1 -o jsonpath="{.spec.containers[$c].volumeMounts[*].mountPath}")" "container $c's mounts"
done
expect_eq "$made team-share" "$(k get pod vols-w-0 -o jsonpath='{.spec.volumes[*].persistentVolumeClaim.claimName}')" "the pod's claims"
k delete vcjob vols >/dev/null
k wait --for=delete "pvc/$made" --timeout=30s >/dev/null || fail "the made claim outlived its job"
k get pvc team-share >/dev/null 2>&1 || fail "the user's claim went with the job"
pass "spec.volumes: a claim made from volumeClaim and a named one (waited for), mounted in every container"

# The controller keeps no state of its own: a job carries on after a
# restart of the daemon from what the store says.
k create -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: survivor}
spec:
  tasks:
  - name: w
    replicas: 2
    template:
      metadata: {annotations: {volray.io/sim-duration: 3s}}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox}]
YAML
wait_phase survivor Running
stop_daemon
start_daemon
before=$(watchers)
admit_podgroups &
wait_watchers $((before + 1))
wait_phase survivor Completed
expect_eq 2 "$(k get vcjob survivor -o jsonpath='{.status.succeeded}')" "pods that succeeded across the restart"
pass "a running vcjob completes after a restart of volrayd"

if grep -q "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log"; then
	grep "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log" | head -n 3
	fail "a controller was refused something"
fi
errors=$(grep -c "controller vcjob: reconcile" "$WORK/volrayd.log" || true)
expect_eq 0 "$errors" "vcjob reconcile errors"
pass "the vcjob controller worked under its own role, without an error"
