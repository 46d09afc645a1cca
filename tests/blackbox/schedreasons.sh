#!/bin/sh
# Why a job waits, as the daemon tells it: a plugin's job_valid that
# holds a gang back names its reason and itself in the PodGroup's
# condition, a PodGroup event of that reason, each pod's PodScheduled and
# a FailedScheduling event on each pod (kubectl describe shows it); a
# plugin that fails gets the PluginFailed event on the root queue that
# the metric counts; with failurePolicy Fail a failing job_valid holds
# its job back (PluginFailed as the reason) instead of letting it pass,
# and a failing job_enqueueable keeps its job Pending with PluginFailed
# and the error (PodGroup condition and event, pods, explain) rather
# than a quota's words; the PluginFailed event counts its repeats, and
# after a reload to failurePolicy Ignore says so at once;
# the stored default queue's spec is the one the scheduler uses.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL"
cat >"$POL/scheduler.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: teamquota
    failurePolicy: Fail
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
cat >"$POL/teamquota.lua" <<'LUA'
-- Test plugin: team blue is over its quota; a job of team boom makes
-- the plugin fail, one of team late at enqueue.
local P = {}
function P.job_valid(ssn, job)
  if job.labels.team == "boom" then error("kaboom") end
  if job.labels.team == "blue" then
    return false, "TeamQuota", "team blue is over its quota"
  end
  return true
end
function P.job_enqueueable(ssn, job)
  if job.labels.team == "late" then error("late kaboom") end
  return 0
end
return P
LUA
start_daemon --policy-dir "$POL"
VR="$top_builddir/volray"
"$VR" node add --virtual --count 1 --cpu 8 --memory 16Gi --name-prefix n >/dev/null ||
	fail "add a node"

gang() { # team
	k apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg-$1, labels: {team: $1}}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: $1-0, annotations: {scheduling.k8s.io/group-name: pg-$1, volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: $1-1, annotations: {scheduling.k8s.io/group-name: pg-$1, volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
YAML
}
cond() { # podgroup field
	k get podgroup "$1" -o jsonpath="{.status.conditions[?(@.type==\"Unschedulable\")].$2}"
}
scheduled() { # pod field
	k get pod "$1" -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].$2}"
}
events_of() { # reason object-name
	k get events --field-selector "reason=$1,involvedObject.name=$2" \
	    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
}

# --- a plugin's job_valid holds a gang back -----------------------------
gang blue
gang red
k wait --for=jsonpath='{.status.phase}'=Running pod/red-0 pod/red-1 --timeout=30s >/dev/null ||
	fail "the valid gang runs"
wait_eq TeamQuota "the condition's reason is the plugin's" cond pg-blue reason
expect_eq "team blue is over its quota (plugin teamquota)" "$(cond pg-blue message)" \
	"the condition's message names the plugin"
expect_eq "Unschedulable" "$(scheduled blue-0 reason)" "blue-0's PodScheduled reason"
expect_eq "TeamQuota: team blue is over its quota (plugin teamquota)" \
	"$(scheduled blue-1 message)" "blue-1's PodScheduled message"
wait_eq "team blue is over its quota (plugin teamquota)" "the PodGroup's event" \
	events_of TeamQuota pg-blue
# Not gang's words for it.
case "$(k get events -o jsonpath='{.items[*].message}')" in
*"tasks in gang unschedulable"*) fail "gang's reason was reported for a job a plugin held back" ;;
esac
wait_eq "TeamQuota: team blue is over its quota (plugin teamquota)" "blue-0's event" \
	events_of FailedScheduling blue-0
out=$(k describe pod blue-0)
case "$out" in *"FailedScheduling"*"TeamQuota: team blue is over its quota"*) ;;
*) fail "kubectl describe pod shows the event: $out" ;; esac
pass "a plugin's job_valid reason: condition, PodGroup and pod events, PodScheduled, describe"

# --- a plugin that fails: the event, the metric, failurePolicy Fail -----
gang boom
wait_eq PluginFailed "the failed plugin's job is held back (failurePolicy Fail)" cond pg-boom reason
case "$(cond pg-boom message)" in *"plugin teamquota failed in job_valid"*"kaboom"*) ;;
*) fail "the condition says which plugin failed: $(cond pg-boom message)" ;; esac
expect_eq "" "$(k get pod boom-0 -o jsonpath='{.spec.nodeName}')" "boom-0 is not bound"
events=$(k get events -A --field-selector reason=PluginFailed \
	-o jsonpath='{range .items[*]}{.involvedObject.kind}/{.involvedObject.name}: {.message}{"\n"}{end}')
case "$events" in *"Queue/root: plugin teamquota failed in job_valid"*"kaboom"*) ;;
*) fail "kubectl get events --field-selector reason=PluginFailed: '$events'" ;; esac
n=$(curl -fs "$API/metrics" | sed -n 's/^volray_scheduler_plugin_failures_total //p')
[ "${n:-0}" -ge 1 ] || fail "the metric counts the failure: $n"
# Each session fails again (a change to the PodGroup starts one): the
# one Event counts them.
fail_count() { # words in the message of root's event
	k get events -A --field-selector reason=PluginFailed,involvedObject.name=root \
	    -o jsonpath='{range .items[*]}{.count} {.message}{"\n"}{end}' |
	    grep -F "$1" | cut -d' ' -f1 | head -n 1
}
i=0
until [ "$(fail_count "failed in job_valid")" -ge 2 ] 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the PluginFailed event's count: '$(fail_count "failed in job_valid")'"
	k label podgroup pg-boom --overwrite "try=$i" >/dev/null
	sleep 0.2
done
pass "PluginFailed on the root queue with the metric and a growing count; failurePolicy Fail holds the job back"

# --- a plugin that fails at enqueue under failurePolicy Fail -------------
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg-late, labels: {team: late}}
spec: {minMember: 1, minResources: {cpu: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: late-0, annotations: {scheduling.k8s.io/group-name: pg-late, volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
YAML
wait_eq PluginFailed "the PodGroup's reason when its plugin failed at enqueue" cond pg-late reason
case "$(cond pg-late message)" in *"plugin teamquota failed in job_enqueueable"*"late kaboom"*) ;;
*) fail "the condition has the error: $(cond pg-late message)" ;; esac
expect_eq Pending "$(k get podgroup pg-late -o jsonpath='{.status.phase}')" "pg-late's phase"
case "$(scheduled late-0 message)" in
"pod group pg-late is Pending: PluginFailed: plugin teamquota failed in job_enqueueable"*"late kaboom"*) ;;
*) fail "late-0's PodScheduled message: $(scheduled late-0 message)" ;; esac
case "$(events_of PluginFailed pg-late)" in *"failed in job_enqueueable"*"late kaboom"*) ;;
*) fail "the PodGroup's PluginFailed event: $(events_of PluginFailed pg-late)" ;; esac
ex=$("$VR" explain podgroup/pg-late -o json) || fail "explain podgroup/pg-late"
reason=$(printf '%s' "$ex" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["reason"], "late kaboom" in d["message"])')
expect_eq "PluginFailed True" "$reason" "explain's reason for pg-late"
case "$(k get events -o jsonpath='{.items[*].message}')" in
*"queue resource quota insufficient"*) fail "a quota's words for a plugin's failure" ;; esac
k delete podgroup pg-late >/dev/null
k delete pod late-0 --wait=false >/dev/null
pass "a plugin failing at enqueue (failurePolicy Fail): PluginFailed with its error on the PodGroup, pod and explain"

# --- with failurePolicy Ignore, the same failure lets the job pass --------
sed -i '/failurePolicy: Fail/d' "$POL/scheduler.yaml"
"$VR" policy reload >/dev/null || fail "reload without failurePolicy"
k wait --for=jsonpath='{.status.phase}'=Running pod/boom-0 pod/boom-1 --timeout=30s >/dev/null ||
	fail "with Ignore (the default) the job is scheduled"
# The event says what the policy now in force did, not the last one.
i=0
until [ -n "$(fail_count "failed in job_valid")" ] &&
    [ -n "$(fail_count "skipped for the rest of this session")" ]; do
	i=$((i + 1)); [ $i -lt 50 ] || fail "no PluginFailed event of the reloaded policy (Ignore): $(k get events -A --field-selector reason=PluginFailed -o jsonpath='{.items[*].message}')"
	sleep 0.1
done
pass "failurePolicy Ignore (the default): a failing job_valid is skipped, and its event says so"

# --- the stored default queue is the one the scheduler reads --------------
# A capability on the default Queue object bounds what it runs.
k patch queue default --type merge -p '{"spec":{"capability":{"cpu":"5"}}}' >/dev/null ||
	fail "set the default queue's capability"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: big, annotations: {volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 2}}}]}
YAML
wait_eq Unschedulable "the capped queue holds the pod back" scheduled big reason
expect_eq "" "$(k get pod big -o jsonpath='{.spec.nodeName}')" \
	"no bind past the default queue's capability (4 of 5 cpu in use)"
pass "the default Queue object's capability is honoured"
