#!/bin/sh
# RayCronJob (KubeRay 1.7, lua/controllers/raycronjob.lua) with stock
# kubectl: the upstream 1.7 samples apply unchanged with nothing pruned and
# print KubeRay's columns; the CRD's jobTemplate is the RayJob spec schema;
# times missed while suspended are made up one RayJob each, in order, with
# KubeRay's name, label, annotation and owner; a time zone moves the
# schedule; invalid specs get InvalidRayCronJobSpec and make nothing; the
# RayJobs go with their RayCronJob.
. "$(dirname "$0")/lib.sh"
need_samples
K17="$SAMPLES/kuberay-1.7"
[ -d "$K17" ] || skip "no $K17: the KubeRay 1.7 samples are not here"
start_daemon

# --- the CRD: jobTemplate repeats the RayJob spec schema
k get crd rayjobs.ray.io -o json >"$WORK/rj.json"
k get crd raycronjobs.ray.io -o json >"$WORK/rcj.json"
same=$(python3 - "$WORK/rj.json" "$WORK/rcj.json" <<'PY'
import json, sys
def spec(path, *keys):
    s = json.load(open(path))["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for k in keys:
        s = s["properties"][k]
    s = dict(s)
    s.pop("description", None)
    return s
print(spec(sys.argv[1], "spec") == spec(sys.argv[2], "spec", "jobTemplate"))
PY
)
expect_eq True "$same" "raycronjobs' jobTemplate against rayjobs' spec schema"

# --- the upstream samples: accepted as written (strict: nothing pruned)
for f in ray-cronjob.sample.yaml ray-cronjob-timezone.sample.yaml; do
	out=$(k apply --dry-run=server --validate=strict -f "$K17/$f" 2>&1) ||
		fail "$f refused: $out"
done
k apply -f "$K17/ray-cronjob-timezone.sample.yaml" >/dev/null || fail "apply the timezone sample"
expect_eq "Asia/Taipei|45 21 * * *" \
	"$(k get raycronjob raycronjob-timezone-sample -o jsonpath='{.spec.timeZone}|{.spec.schedule}')" \
	"the sample as stored"
cols=$(k get raycronjobs 2>&1 | head -1)
expect_contains "$cols" "SCHEDULE" "kubectl get raycronjobs"
expect_contains "$cols" "TIMEZONE" "kubectl get raycronjobs"
expect_contains "$cols" "LAST SCHEDULE" "kubectl get raycronjobs"
expect_contains "$(k get all 2>&1)" "raycronjob.ray.io/raycronjob-timezone-sample" "category all"
pass "the KubeRay 1.7 samples apply unchanged; jobTemplate is the RayJob spec"

# --- missed times are made up, one RayJob each, in order
# rcj NAME SCHEDULE 'MORE SPEC': a suspended RayCronJob whose RayJobs are
# created suspended (no cluster, nothing to run).
rcj() {
	k apply -f - >/dev/null <<YAML || fail "create $1"
apiVersion: ray.io/v1
kind: RayCronJob
metadata: {name: $1}
spec:
  schedule: "$2"
  suspend: true
  $3
  jobTemplate:
    entrypoint: python -c 'print(42)'
    shutdownAfterJobFinishes: true
    suspend: true
    rayClusterSpec:
      headGroupSpec:
        rayStartParams: {}
        template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0}]}}
YAML
}
events() {	# events NAME REASON: how many Events of that reason NAME has
	k get events --field-selector "involvedObject.name=$1,reason=$2" -o name | wc -l | tr -d ' '
}
jobs_of() {	# the RayJobs of a RayCronJob, by name
	k get rayjobs -l "ray.io/cronjob-name=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort
}
rcj tick "* * * * *" ""
wait_eq 1 "the SuspendedRayCronJob event" events tick SuspendedRayCronJob
expect_eq "" "$(jobs_of tick)" "RayJobs of a suspended RayCronJob"
# resume_from NAME T: lastScheduleTime T (Unix seconds), then resumed.
resume_from() {
	k patch raycronjob "$1" --subresource=status --type=merge \
		-p "{\"status\":{\"lastScheduleTime\":\"$(date -u -d "@$2" +%Y-%m-%dT%H:%M:%SZ)\"}}" >/dev/null ||
		fail "set $1's lastScheduleTime"
	k patch raycronjob "$1" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null || fail "resume $1"
}
wait_jobs() {	# wait_jobs NAME N: until it has made at least N RayJobs
	i=0
	until [ "$(jobs_of "$1" | wc -l)" -ge "$2" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "$1: $2 RayJobs wanted, have $(jobs_of "$1" | wc -l)"
		sleep 0.1
	done
}
now=$(date +%s)
t0=$((now / 60 * 60 - 180))
resume_from tick $t0
wait_jobs tick 3
last=$(k get raycronjob tick -o jsonpath='{.status.lastScheduleTime}')
lastmin=$(($(date -u -d "$last" +%s) / 60))
[ "$lastmin" -ge $((t0 / 60 + 3)) ] || fail "lastScheduleTime $last is before the third missed time"
want=""
m=$((t0 / 60 + 1))
while [ $m -le $lastmin ]; do want="$want tick-$m"; m=$((m + 1)); done
expect_eq "$want" "$(jobs_of tick | sed 's/^/ /' | tr -d '\n')" "one RayJob per missed minute, none else"
first=tick-$((t0 / 60 + 1))
expect_eq "$(date -u -d "@$((t0 + 60))" +%Y-%m-%dT%H:%M:%SZ)|RayCronJob|tick|true|python -c 'print(42)'|true" \
	"$(k get rayjob "$first" -o jsonpath='{.metadata.annotations.ray\.io/cronjob-scheduled-timestamp}|{.metadata.ownerReferences[0].kind}|{.metadata.ownerReferences[0].name}|{.metadata.ownerReferences[0].controller}|{.spec.entrypoint}|{.spec.suspend}')" \
	"the first RayJob's annotation, owner and spec"
pass "missed times made up one RayJob each, named <cronjob>-<minutes>, owned, annotated"

# --- a time zone moves the schedule: 0 * * * * in Asia/Kolkata is :30 UTC
rcj kolkata "0 * * * *" "timeZone: Asia/Kolkata"
t0=$((now / 3600 * 3600 - 7200))
resume_from kolkata $t0
wait_jobs kolkata 2
for j in $(jobs_of kolkata); do
	at=$(k get rayjob "$j" -o jsonpath='{.metadata.annotations.ray\.io/cronjob-scheduled-timestamp}')
	case "$at" in *:30:00Z) ;; *) fail "$j scheduled at $at, not at half past an hour UTC" ;; esac
done
pass "timeZone: the schedule is read in the zone's wall clock"

# --- invalid specs: a Warning with KubeRay's words, nothing made
bad() {	# bad NAME SCHEDULE 'MORE SPEC' 'TEMPLATE LINE' WORDS
	k apply -f - >/dev/null <<YAML || fail "create $1"
apiVersion: ray.io/v1
kind: RayCronJob
metadata: {name: $1}
spec:
  schedule: "$2"
  $3
  jobTemplate:
    entrypoint: python -c 'print(42)'
    $4
    rayClusterSpec:
      headGroupSpec:
        rayStartParams: {}
        template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0}]}}
YAML
	wait_eq 1 "$1's InvalidRayCronJobSpec event" events "$1" InvalidRayCronJobSpec
	msg=$(k get events --field-selector "involvedObject.name=$1,reason=InvalidRayCronJobSpec" \
		-o jsonpath='{.items[0].type}: {.items[0].message}')
	expect_contains "$msg" "Warning: default/$1: $5" "$1's event"
	expect_eq "" "$(jobs_of "$1")" "RayJobs of the invalid $1"
}
bad bad-tz "CRON_TZ=UTC * * * * *" "" "" "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
bad bad-sched "61 * * * *" "" "" "invalid cron schedule"
bad bad-zone "* * * * *" "timeZone: Mars/Olympus_Mons" "" "invalid time zone"
bad bad-tmpl "* * * * *" "" "ttlSecondsAfterFinished: 10" \
	"invalid RayJob template: a RayJob with ttlSecondsAfterFinished > 0 requires shutdownAfterJobFinishes to be true"
bad a-name-of-thirty-seven-characters-xyz "* * * * *" "" "" "RayCronJob name should be no more than 36 characters"
pass "invalid RayCronJobs: InvalidRayCronJobSpec in KubeRay's words, no RayJob"

# --- the RayJobs go with their RayCronJob
k delete raycronjob tick >/dev/null || fail "delete tick"
i=0
until [ -z "$(jobs_of tick)" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "tick's RayJobs outlived it: $(jobs_of tick)"
	sleep 0.1
done
[ -n "$(jobs_of kolkata)" ] || fail "kolkata's RayJobs went with tick"
pass "deleting a RayCronJob deletes its RayJobs (owner references)"
