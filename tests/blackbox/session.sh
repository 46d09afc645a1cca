#!/bin/sh
# volray session record / replay and volray policy dry-run: a recorded
# session replays offline with the same decisions every time; replayed
# with a changed plugin it decides differently; dry-run of the live
# policy finds nothing to change (exit 0), of a changed one lists the pods
# that would be placed (exit 1); a record is a policy test case
# (cluster: {from: FILE}); volrayd --record-sessions keeps the sessions
# whose input changed, the newest N, each one replayable.
. "$(dirname "$0")/lib.sh"
POL="$WORK/policies"
mkdir -p "$POL"
cp "$top_srcdir/policies/scheduler.yaml" "$POL/"
echo '  - name: teamquota' >>"$POL/scheduler.yaml"
quota() { # dir team-over-quota
	cat >"$1/teamquota.lua" <<LUA
-- Test plugin: team $2 is over its quota.
local P = {}
function P.job_valid(ssn, job)
  if job.labels.team == "$2" then
    return false, "TeamQuota", "team $2 is over its quota"
  end
  return true
end
return P
LUA
}
quota "$POL" blue
start_daemon --policy-dir "$POL" --record-sessions "$WORK/sessions" --record-sessions-keep 3
VR="$top_builddir/volray"
"$VR" node add --virtual --count 2 --cpu 4 --memory 8Gi --name-prefix n >/dev/null ||
	fail "add nodes"
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: blue, labels: {team: blue}}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: blue-0, annotations: {scheduling.k8s.io/group-name: blue}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: blue-1, annotations: {scheduling.k8s.io/group-name: blue}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: small, annotations: {volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 3}}}]}
YAML
k wait --for=jsonpath='{.status.phase}'=Running pod/small --timeout=30s >/dev/null ||
	fail "the small pod runs"
wait_eq TeamQuota "blue is held back" k get podgroup blue \
	-o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].reason}'

# --- record, replay twice: the same decisions ------------------------------
"$VR" session record "$WORK/rec.json" 2>"$WORK/record.err" || fail "record: $(cat "$WORK/record.err")"
case "$(cat "$WORK/record.err")" in *"recorded "*" objects and "*" policy files"*) ;;
*) fail "record says what it saved: $(cat "$WORK/record.err")" ;; esac
"$VR" session replay "$WORK/rec.json" >"$WORK/r1" || fail "replay: $(cat "$WORK/r1")"
"$VR" session replay "$WORK/rec.json" >"$WORK/r2" || fail "replay again"
cmp -s "$WORK/r1" "$WORK/r2" || fail "two replays differ: $(diff "$WORK/r1" "$WORK/r2")"
grep -q '^wait      default/blue: TeamQuota: team blue is over its quota (plugin teamquota)$' "$WORK/r1" ||
	fail "the replay says why blue waits: $(cat "$WORK/r1")"
grep -q '^0 binds, 0 pipelined, 0 evicted, 1 jobs waiting$' "$WORK/r1" ||
	fail "the replay's summary: $(cat "$WORK/r1")"
pass "a recorded session replays offline, the same twice"

# --- replayed with a changed plugin: another decision --------------------
NEW="$WORK/new"
mkdir -p "$NEW"
quota "$NEW" red
"$VR" session replay "$WORK/rec.json" --policy-dir "$NEW" >"$WORK/r3" || fail "replay --policy-dir"
grep -q '^bind      default/blue-0 -> n-' "$WORK/r3" && grep -q '^bind      default/blue-1 -> n-' "$WORK/r3" ||
	fail "with the changed plugin blue is placed: $(cat "$WORK/r3")"
pass "replayed with a changed plugin, a different decision"

# --- dry-run: the live policy changes nothing, the new one places blue -----
out=$("$VR" policy dry-run "$POL" 2>&1) || fail "dry-run of the live policy exits 1: $out"
case "$out" in *"0 differences"*) ;; *) fail "dry-run of the live policy: $out" ;; esac
if out=$("$VR" policy dry-run "$NEW" 2>&1); then fail "dry-run of a change exits 0: $out"; fi
case "$out" in
*"default/blue: would place default/blue-0 on n-"*"(live policy: not)"*"2 pods would be placed that the live policy does not place"*) ;;
*) fail "dry-run of the changed policy: $out" ;; esac
expect_eq "" "$(k get pod blue-0 -o jsonpath='{.spec.nodeName}')" "dry-run binds nothing"
pass "policy dry-run: exit 0 when nothing differs, 1 with the pods a change would place"

# --- a record as a policy test case ----------------------------------------
cp "$POL/scheduler.yaml" "$NEW/"
quota "$NEW" blue
cat >"$NEW/recorded.spec.yaml" <<'YAML'
cases:
- name: the recorded cluster, blue over its quota
  cluster: {from: rec.json}
  expect:
    binds: {}
    podgroups:
      blue: {reason: TeamQuota}
YAML
cp "$WORK/rec.json" "$NEW/"
out=$("$VR" policy test "$NEW" 2>&1) || fail "the recorded case: $out"
case "$out" in *"ok   recorded.spec.yaml: the recorded cluster"*) ;; *) fail "$out" ;; esac
pass "a recorded session is a policy test case (cluster: {from: FILE})"

# --- volrayd --record-sessions: the daemon's own records -------------------
metric() { k get --raw /metrics | awk -v m="$1" '$1 == m { print $2 }'; }
files() { ls "$WORK/sessions" | grep -c '^session-[0-9]*-[0-9]*\.json$' || true; }
r0=$(metric volray_scheduler_sessions_recorded_total)
[ "${r0:-0}" -ge 1 ] || fail "no session recorded: ${r0:-none}"
# A session whose input is that of the last one recorded writes
# nothing. The scheduler skips a cycle whose input did not change
# (cycles_skipped_total), so sessions are made to run by a policy reload
# (SIGHUP: the same files). Its input is every object of the kinds it
# reads, by revision: inputs() prints them. A round: inputs, three
# reloaded sessions, inputs again; when nothing changed meanwhile (the
# nodes' status and the scheduler's own writes may), the second and third
# sessions saw what the first did and must record nothing. Three such
# rounds, within 12.
sessions() { echo $(($(metric volray_scheduler_cycles_total) - $(metric volray_scheduler_cycles_skipped_total))); }
inputs() {
	k get nodes,pods,podgroups,queues,priorityclasses,resourcequotas,poddisruptionbudgets,hypernodes -A \
		-o jsonpath='{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}@{.metadata.resourceVersion} {end}'
}
# reloaded_session: SIGHUP, then until one more session has run.
reloaded_session() {
	_s=$(sessions)
	kill -HUP "$DAEMON_PID"
	_i=0
	until [ "$(sessions)" -gt "$_s" ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "no session ran after a reload"
		sleep 0.1
	done
}
rounds=0 tries=0
while [ $rounds -lt 3 ]; do
	tries=$((tries + 1)); [ $tries -le 12 ] || fail "only $rounds of 12 rounds had a cluster that did not change"
	in0=$(inputs) || fail "list the scheduler's inputs"
	reloaded_session
	r=$(metric volray_scheduler_sessions_recorded_total)
	reloaded_session
	reloaded_session
	got=$(($(metric volray_scheduler_sessions_recorded_total) - r))
	[ "$(inputs)" = "$in0" ] || continue
	expect_eq 0 "$got" "records by two sessions that saw what the one before them saw (round $((rounds + 1)))"
	rounds=$((rounds + 1))
done
r1=$(metric volray_scheduler_sessions_recorded_total)
# Changes are recorded; only the newest 3 files stay.
for i in 1 2 3 4; do
	k create configmap unseen-$i >/dev/null	# not read by the scheduler
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: more-$i, annotations: {volray.io/sim-duration: 1h}}
spec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: "100m"}}}]}
YAML
	k wait --for=jsonpath='{.status.phase}'=Running pod/more-$i --timeout=30s >/dev/null ||
		fail "more-$i runs"
done
[ "$(metric volray_scheduler_sessions_recorded_total)" -ge $((r1 + 4)) ] ||
	fail "4 new pods, $(($(metric volray_scheduler_sessions_recorded_total) - r1)) records"
expect_eq 3 "$(files)" "files kept with --record-sessions-keep 3"
last=$(ls "$WORK/sessions"/session-*.json | tail -n 1)
"$VR" session replay "$last" >"$WORK/r4" || fail "replay of the daemon's record: $(cat "$WORK/r4")"
grep -q '^wait      default/blue: TeamQuota: team blue is over its quota (plugin teamquota)$' "$WORK/r4" ||
	fail "the daemon's record replays: $(cat "$WORK/r4")"
"$VR" session replay "$last" >"$WORK/r5" && cmp -s "$WORK/r4" "$WORK/r5" || fail "two replays of the daemon's record differ"
pass "--record-sessions: changed sessions recorded, the newest 3 kept, each replays"
