#!/bin/sh
# The CronJob controller (lua/controllers/cronjob.lua) with stock kubectl.
# Its schedule arithmetic (lua/lib/cron.lua) is checked through a test
# controller from --policy-dir that answers ConfigMaps with the next
# times of a schedule: steps, ranges, names, day-of-month OR day-of-week,
# leap days, descriptors, @every, time zones and the parser's errors.
# Real runs without waiting for the clock: a suspended CronJob is given a
# lastScheduleTime two minutes back and resumed, so the minute just past
# is a missed time it runs at once, as the upstream controller would;
# the Job's name, status.active, lastScheduleTime, lastSuccessfulTime,
# the history limit and kubectl create job --from follow. One real
# minute boundary shows Forbid skipping and Replace replacing.
. "$(dirname "$0")/lib.sh"
POL="$WORK/pol"
mkdir -p "$POL/controllers"
cat >"$POL/controllers/crontest.lua" <<'LUA'
-- Test controller for cronjob.sh: a ConfigMap with data.schedule,
-- data.after (RFC 3339), data.count and data.zone gets data.result, the
-- next count times of the schedule after "after" as lua/lib/cron.lua
-- computes them (or "error: " and the parser's message).
local v = volray
local cron = require("cron")

local function result(d)
  local s, err = cron.parse(d.schedule)
  if s == nil then return "error: " .. err end
  local t, out = v.time(d.after), {}
  for _ = 1, tonumber(d.count or "1") do
    t = cron.next(s, t, d.zone)
    if t == nil then out[#out + 1] = "none"; break end
    out[#out + 1] = cron.format(t, d.zone)
  end
  return table.concat(out, " ")
end

return {
  primary = "v1/configmaps",
  reconcile = function(req)
    local cm = v.get("v1/configmaps", req.namespace, req.name)
    if cm == nil or cm.data == nil or cm.data.schedule == nil or
        cm.data.result ~= nil then
      return nil
    end
    cm.data.result = result(cm.data)
    local _, err, code = v.update(cm)
    if err ~= nil and code ~= 409 then error(err) end
    return nil
  end,
}
LUA
start_daemon --policy-dir "$POL"
k create clusterrole crontest --verb=get,list,watch,update --resource=configmaps >/dev/null
k create clusterrolebinding crontest --clusterrole=crontest --user=system:controller:crontest-controller >/dev/null

# next_times SCHEDULE AFTER COUNT ZONE: what the test controller computes
# (each question a ConfigMap named by its checksum: it runs in $(...)).
next_times() {
	n=$(printf '%s|' "$@" | cksum | cut -d' ' -f1)
	k create configmap "c$n" --from-literal=schedule="$1" --from-literal=after="$2" \
		--from-literal=count="$3" ${4:+--from-literal=zone="$4"} >/dev/null
	i=0
	until r=$(k get configmap "c$n" -o jsonpath='{.data.result}') && [ -n "$r" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "no result for '$1'"; sleep 0.1
	done
	echo "$r"
}
expect_eq "2026-01-01T00:15:00Z 2026-01-01T00:30:00Z 2026-01-01T00:45:00Z" \
	"$(next_times '*/15 * * * *' 2026-01-01T00:07:00Z 3)" "*/15"
expect_eq "2026-01-05T09:00:00Z" "$(next_times '0 9 * * 1-5' 2026-01-02T10:00:00Z 1)" "weekdays skip the weekend"
expect_eq "2026-02-01T00:00:00Z 2026-03-01T00:00:00Z" "$(next_times '@monthly' 2026-01-31T12:00:00Z 2)" "@monthly"
expect_eq "2028-02-29T00:00:00Z" "$(next_times '0 0 29 2 *' 2026-03-01T00:00:00Z 1)" "a leap day"
expect_eq "2026-02-06T00:00:00Z 2026-02-13T00:00:00Z 2026-02-20T00:00:00Z" \
	"$(next_times '0 0 13 * fri' 2026-02-01T00:00:00Z 3)" "the 13th or a Friday"
expect_eq "2026-02-13T00:00:00Z 2026-03-13T00:00:00Z" \
	"$(next_times '0 0 13 * *' 2026-02-01T00:00:00Z 2)" "day of week a star: the 13th only"
expect_eq "2026-01-01T01:30:00Z" "$(next_times '@every 90m' 2026-01-01T00:00:00Z 1)" "@every"
expect_eq "2026-07-01T09:00:00+02:00 2026-07-02T09:00:00+02:00" \
	"$(next_times '0 9 * * *' 2026-07-01T00:00:00Z 2 Europe/Berlin)" "Berlin in summer"
expect_eq "2026-01-10T09:00:00+01:00" "$(next_times '0 9 * * *' 2026-01-10T00:00:00Z 1 Europe/Berlin)" "Berlin in winter"
expect_eq "2026-03-09T06:00:00-04:00" "$(next_times '0 6 * * *' 2026-03-08T12:00:00Z 1 America/New_York)" "New York after the spring change"
expect_eq "error: end of range (61) above maximum (59): 61" "$(next_times '61 * * * *' 2026-01-01T00:00:00Z 1)" "a minute out of range"
expect_eq "error: expected exactly 5 fields, found 4: * * * *" "$(next_times '* * * *' 2026-01-01T00:00:00Z 1)" "four fields"
pass "the schedule's next times (lua/lib/cron.lua)"

out=$(k create cronjob bad --image=busybox --schedule='TZ=UTC * * * * *' 2>&1) && fail "TZ in a schedule accepted"
expect_contains "$out" "cannot use TZ or CRON_TZ in schedule, use timeZone field instead" "TZ refused"
out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: batch/v1
kind: CronJob
metadata: {name: bad}
spec:
  schedule: "* * * * *"
  timeZone: Mars/Olympus
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
YAML
) && fail "an unknown time zone accepted"
expect_contains "$out" "unknown time zone Mars/Olympus" "unknown zone refused"
pass "admission refuses TZ in the schedule and unknown zones"

k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {volray.io/runtime: virtual}}
YAML

cronjob() { # cronjob NAME POLICY SIM-DURATION-ANNOTATION
	k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: CronJob
metadata: {name: $1}
spec:
  schedule: "* * * * *"
  suspend: true
  concurrencyPolicy: $2
  successfulJobsHistoryLimit: 1
  jobTemplate:
    metadata: {labels: {cron: $1}}
    spec:
      template:
        metadata: {annotations: {$3}}
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
YAML
}
# missed NAME: two minutes ago was the last run; resume it.
missed() {
	then=$(python3 -c 'import time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120)))')
	k patch cronjob "$1" --subresource=status --type=merge -p "{\"status\":{\"lastScheduleTime\":\"$then\"}}" >/dev/null
	k patch cronjob "$1" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
}
njobs() { k get jobs -l "cron=$1" -o name | wc -l | tr -d ' '; }
jobs_of() { k get jobs -l "cron=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort | tr '\n' ' ' | sed 's/ $//'; }
cjstatus() { k get cronjob "$1" -o jsonpath="{.status.$2}"; }
minutes() { python3 -c 'import sys, datetime; print(int(datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()) // 60)' "$1"; }

# --- a missed time runs at once
cronjob tick Allow 'volray.io/sim-duration: "1s"'
expect_eq "" "$(jobs_of tick)" "a suspended CronJob starts nothing"
missed tick
wait_eq 1 "one Job for the missed time" njobs tick
job=$(jobs_of tick)
last=$(cjstatus tick lastScheduleTime)
expect_eq "tick-$(minutes "$last")" "$job" "the Job is named by the minutes of its scheduled time"
expect_eq "00" "$(date -u -d "$last" +%S)" "a schedule time is on the minute"
expect_eq "CronJob tick" "$(k get job "$job" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')" "owned by the CronJob"
# Read at once: on a loaded machine the next minute's Job can complete and
# push this one out of the history before a later read.
k get job "$job" -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/cronjob-scheduled-timestamp}' | grep -q "$last" ||
	fail "cronjob-scheduled-timestamp annotation"
# status.active names it until it ends (1 s: under load it may have
# ended already, and then lastSuccessfulTime says it ran).
active_or_done() {
	a=$(k get cronjob tick -o jsonpath='{.status.active[0].name}')
	[ -n "$a" ] && { echo "$a"; return; }
	[ -n "$(cjstatus tick lastSuccessfulTime)" ] && echo "$job"
	return 0
}
wait_eq "$job" "status.active names it (or it has ended)" active_or_done
succ() { cjstatus tick lastSuccessfulTime; }
# It completes -- or, on a slow machine, it completed and the next
# minute's Job already pushed it out of the history of one.
complete_or_gone() {
	st=$(k get job "$job" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' 2>/dev/null || echo gone)
	case "$st" in True) echo done ;; gone) [ -n "$(succ)" ] && echo done ;; esac
	return 0
}
i=0; until [ "$(complete_or_gone)" = done ]; do i=$((i + 1)); [ $i -lt 300 ] || fail "the Job completes"; sleep 0.2; done
i=0; until [ -n "$(succ)" ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "lastSuccessfulTime"; sleep 0.1; done
case " $(k get cronjob tick -o jsonpath='{.status.active[*].name}') " in
*" $job "*) fail "a finished Job is still in status.active" ;; esac
pass "a missed schedule time runs at once: name, owner, lastScheduleTime, lastSuccessfulTime"

hdr=$(k get cronjob tick | head -1 | tr -s ' ')
expect_eq "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE" "$hdr" "kubectl get cronjob columns"
expect_eq "tick * * * * * <none> False 0" "$(k get cronjob tick --no-headers | tr -s ' ' | cut -d' ' -f1-9)" "kubectl get cronjob row"
k get all | grep -q '^cronjob.batch/tick' || fail "kubectl get all lists the CronJob"
pass "kubectl get cronjob and get all"

# --- kubectl create job --from, and the history limit of one
k create job manual --from=cronjob/tick >/dev/null || fail "kubectl create job --from=cronjob/tick"
expect_eq "manual tick" "$(k get job manual -o jsonpath='{.metadata.annotations.cronjob\.kubernetes\.io/instantiate} {.metadata.ownerReferences[0].name}')" "a manual Job of the CronJob"
k wait --for=condition=Complete job/manual --timeout=60s >/dev/null || fail "the manual Job completes"
# tick runs every minute: a boundary crossed meanwhile adds a scheduled Job
# newer than manual, which is then the one kept.
manual_ts=$(k get job manual -o jsonpath='{.metadata.creationTimestamp}' 2>/dev/null || true)
# The completed ones: a Job of the next minute may be running beside.
done_of() {
	k get jobs -l cron=tick -o jsonpath='{range .items[?(@.status.succeeded==1)]}{.metadata.name}{"\n"}{end}' |
		sort | tr '\n' ' ' | sed 's/ $//'
}
ndone() { done_of | wc -w | tr -d ' '; }
wait_eq 1 "successfulJobsHistoryLimit 1 keeps one" ndone
kept=$(done_of)
if [ "$kept" != manual ]; then
	case "$kept" in tick-*) ;; *) fail "successfulJobsHistoryLimit kept $kept" ;; esac
	kept_ts=$(k get job "$kept" -o jsonpath='{.metadata.creationTimestamp}')
	[ "$(printf '%s\n%s\n' "$manual_ts" "$kept_ts" | sort | tail -1)" = "$kept_ts" ] ||
		fail "successfulJobsHistoryLimit kept $kept ($kept_ts), older than manual ($manual_ts)"
fi
pass "kubectl create job --from=cronjob; successfulJobsHistoryLimit"

# --- one real minute boundary: Forbid skips, Replace replaces, Allow adds
cronjob forbid Forbid ''
cronjob replace Replace ''
cronjob allow Allow ''
for c in forbid replace allow; do missed $c; done
for c in forbid replace allow; do wait_eq 1 "$c: the missed time's Job" njobs $c; done
first=$(jobs_of replace)
last=$(cjstatus replace lastScheduleTime)
# The next minute: wait for Replace's new schedule time (at most ~60 s).
i=0
until [ "$(cjstatus replace lastScheduleTime)" != "$last" ]; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "no run at the next minute"; sleep 0.5
done
wait_eq 1 "Replace keeps one Job" njobs replace
[ "$(jobs_of replace)" != "$first" ] || fail "Replace kept the old Job"
wait_eq 2 "Allow runs the next Job beside the first" njobs allow
reason() { k get events --field-selector "involvedObject.name=forbid,reason=JobAlreadyActive" -o name | wc -l | tr -d ' '; }
i=0; until [ "$(reason)" -ge 1 ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "no JobAlreadyActive event"; sleep 0.1; done
expect_eq 1 "$(njobs forbid)" "Forbid starts nothing while its Job runs"
pass "concurrencyPolicy Forbid, Replace and Allow at the next minute"
