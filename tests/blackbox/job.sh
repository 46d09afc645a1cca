#!/bin/sh
# The Job controller (lua/controllers/job.lua) with stock kubectl: pods
# up to parallelism until completions succeed, failed pods replaced until
# backoffLimit, the back-off before a replacement, activeDeadlineSeconds,
# ttlSecondsAfterFinished, suspend and resume, and Indexed completion.
# There is no kubelet: the test ends pods by patching their status.
. "$(dirname "$0")/lib.sh"
start_daemon

# finish POD PHASE [AGO]: its container exited AGO seconds ago (default
# an hour, so no back-off applies) and the pod is Succeeded or Failed.
finish() {
	t=$(date -u -d "@$(($(date +%s) - ${3:-3600}))" +%Y-%m-%dT%H:%M:%SZ)
	code=0
	[ "$2" = Failed ] && code=1
	k patch pod "$1" --subresource=status --type=merge -p '{"status":{"phase":"'"$2"'","containerStatuses":[{"name":"c","image":"busybox","imageID":"","ready":false,"restartCount":0,"state":{"terminated":{"exitCode":'"$code"',"startedAt":"'"$t"'","finishedAt":"'"$t"'"}}}]}}' >/dev/null
}

# active_pods JOB: names of its pods not yet finished, one per line.
active_pods() {
	k get pods -l "job-name=$1" -o jsonpath='{range .items[?(@.status.phase=="Pending")]}{.metadata.name}{"\n"}{end}'
}
nactive() { active_pods "$1" | grep -c . || true; }
jstatus() { k get job "$1" -o jsonpath="{.status.$2}"; }
cond() { k get job "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"; }

job() { # job NAME SPEC-LINES: a Job with a one-container template
	k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
$2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
}

# --- completions with parallelism
job work '  completions: 3
  parallelism: 2'
wait_eq 2 "parallel pods" nactive work
wait_eq 2 "status.active" jstatus work active
p=$(active_pods work | head -n 1)
case "$p" in work-?????) ;; *) fail "pod name '$p' is not work-<5 chars>" ;; esac
uid=$(k get job work -o jsonpath='{.metadata.uid}')
expect_eq "$uid" "$(k get pod "$p" -o jsonpath='{.metadata.labels.batch\.kubernetes\.io/controller-uid}')" "controller-uid label"
expect_eq work "$(k get pod "$p" -o jsonpath='{.metadata.labels.batch\.kubernetes\.io/job-name}')" "job-name label"
expect_eq "Job work" "$(k get pod "$p" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')" "owner"
[ -n "$(jstatus work startTime)" ] || fail "startTime"
for p in $(active_pods work); do finish "$p" Succeeded; done
wait_eq 2 "succeeded" jstatus work succeeded
wait_eq 1 "one pod for the last completion" nactive work
expect_eq "" "$(cond work Complete status)" "not complete yet"
finish "$(active_pods work)" Succeeded
k wait --for=condition=complete job/work --timeout=10s >/dev/null || fail "Complete condition"
expect_eq 3 "$(jstatus work succeeded)" "succeeded at the end"
expect_eq "" "$(jstatus work active)" "no active pods at the end"
[ -n "$(jstatus work completionTime)" ] || fail "completionTime"
[ -n "$(cond work Complete lastTransitionTime)" ] || fail "lastTransitionTime"
ev=$(k get events --field-selector involvedObject.name=work -o jsonpath='{.items[*].reason}')
expect_contains "$ev" SuccessfulCreate "creation events"
expect_contains "$ev" Completed "completion event"
pass "completions with parallelism"

# --- a failed pod is replaced until backoffLimit, then the Job fails
job flaky '  completions: 4
  parallelism: 2
  backoffLimit: 1'
wait_eq 2 "flaky pods" nactive flaky
first=$(active_pods flaky | head -n 1)
finish "$first" Failed
wait_eq 1 "one failure counted" jstatus flaky failed
wait_eq 2 "the failed pod is replaced" nactive flaky
active_pods flaky | grep -qx "$first" && fail "the failed pod is not active"
expect_eq "" "$(cond flaky Failed status)" "not failed after one failure"
finish "$(active_pods flaky | head -n 1)" Failed
wait_eq True "Failed condition" cond flaky Failed status
expect_eq BackoffLimitExceeded "$(cond flaky Failed reason)" "Failed reason"
wait_eq 0 "running pods deleted" nactive flaky
expect_eq "" "$(jstatus flaky active)" "status.active after failure"
k get events --field-selector involvedObject.name=flaky -o jsonpath='{.items[*].reason}' |
	grep -q BackoffLimitExceeded || fail "BackoffLimitExceeded event"
pass "failed pods replaced until backoffLimit"

# --- a pod that failed just now is replaced only after the back-off
job backoff '  backoffLimit: 3'
wait_eq 1 "backoff pod" nactive backoff
finish "$(active_pods backoff)" Failed 6
wait_eq 1 "failure seen" jstatus backoff failed
expect_eq 0 "$(nactive backoff)" "no replacement during the back-off"
i=0
until [ "$(nactive backoff)" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 150 ] || fail "no replacement after the back-off"
	sleep 0.1
done
pass "back-off before replacing a failed pod"

# --- activeDeadlineSeconds
job deadline '  activeDeadlineSeconds: 2
  parallelism: 2
  completions: 2'
wait_eq 2 "deadline pods" nactive deadline
k wait --for=condition=failed job/deadline --timeout=10s >/dev/null || fail "deadline not enforced"
expect_eq DeadlineExceeded "$(cond deadline Failed reason)" "deadline reason"
wait_eq 0 "pods deleted at the deadline" nactive deadline
pass "activeDeadlineSeconds"

# --- ttlSecondsAfterFinished deletes the Job and its pods
job short '  ttlSecondsAfterFinished: 1'
wait_eq 1 "ttl pod" nactive short
wait_eq 1 "ttl job status" jstatus short active
finish "$(active_pods short)" Succeeded
gone() { k get job short -o name 2>/dev/null | wc -l | tr -d ' '; }
wait_eq 0 "job deleted after its ttl" gone
k get events --field-selector involvedObject.name=short -o jsonpath='{.items[*].reason}' |
	grep -q Completed || fail "ttl job completed before it was deleted"
podsleft() { k get pods -l job-name=short -o name | wc -l | tr -d ' '; }
wait_eq 0 "pods of the expired job" podsleft
pass "ttlSecondsAfterFinished"

# --- suspend and resume
job sus '  suspend: true
  parallelism: 2
  completions: 2'
wait_eq True "Suspended condition" cond sus Suspended status
expect_eq 0 "$(nactive sus)" "no pods while suspended"
expect_eq "" "$(jstatus sus startTime)" "no startTime while suspended"
k patch job sus --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
wait_eq 2 "pods after resume" nactive sus
expect_eq False "$(cond sus Suspended status)" "Suspended false after resume"
expect_eq JobResumed "$(cond sus Suspended reason)" "resume reason"
[ -n "$(jstatus sus startTime)" ] || fail "startTime after resume"
k patch job sus --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
wait_eq 0 "active pods deleted on suspend" nactive sus
wait_eq True "suspended again" cond sus Suspended status
expect_eq "" "$(jstatus sus failed)" "suspension is not failure"
pass "suspend and resume"

# --- Indexed: one pod per index, a failed index gets a new pod
job idx '  completionMode: Indexed
  completions: 3
  parallelism: 3'
wait_eq 3 "indexed pods" nactive idx
podof() {
	k get pods -l "job-name=idx,batch.kubernetes.io/job-completion-index=$1" \
		-o jsonpath='{range .items[?(@.status.phase=="Pending")]}{.metadata.name}{end}'
}
p1=$(podof 1)
case "$p1" in idx-1-?????) ;; *) fail "indexed pod name '$p1'" ;; esac
expect_eq 1 "$(k get pod "$p1" -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}')" "index annotation"
expect_eq JOB_COMPLETION_INDEX "$(k get pod "$p1" -o jsonpath='{.spec.containers[0].env[0].name}')" "index env"
finish "$p1" Succeeded
wait_eq 1 "completedIndexes" jstatus idx completedIndexes
p0=$(podof 0)
finish "$p0" Failed
i=0
until [ -n "$(podof 0)" ] && [ "$(podof 0)" != "$p0" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "no new pod for index 0"
	sleep 0.1
done
expect_eq "" "$(podof 1)" "no new pod for a completed index"
finish "$(podof 0)" Succeeded
finish "$(podof 2)" Succeeded
k wait --for=condition=complete job/idx --timeout=10s >/dev/null || fail "indexed job complete"
expect_eq 0-2 "$(jstatus idx completedIndexes)" "all indexes"
expect_eq 3 "$(jstatus idx succeeded)" "indexed succeeded"
pass "Indexed completion mode"

if grep -q "controller job: reconcile" "$WORK/volrayd.log"; then
	grep "controller job: reconcile" "$WORK/volrayd.log" | head -n 3
	fail "reconcile errors in the log"
fi
pass "no reconcile errors"
