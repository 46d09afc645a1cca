#!/bin/sh
# PodDisruptionBudgets (lua/controllers/disruption.lua) and pods/eviction
# (core/registry/registry_evict.c) with stock kubectl: the budget's
# status from the pods and their Deployment's scale, an eviction that
# uses the one disruption allowed, kube-apiserver's 429 when none is, a
# Pending pod evicted regardless, and kubectl drain refused by the budget
# until there is somewhere for the pods to go.
. "$(dirname "$0")/lib.sh"
start_daemon

node() {
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {volray.io/runtime: virtual}}
YAML
}
pdbstatus() { k get pdb web -o jsonpath="{.status.$1}"; }
evict() { # evict POD [QUERY]: the HTTP code, the body in $WORK/evict
	curl -s -o "$WORK/evict" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		"$API/api/v1/namespaces/default/pods/$1/eviction${2:-}" \
		-d "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"}}"
}
ready_pods() {
	k get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}|{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
		grep -c '^|True$' || true
}

node n1
k create deployment web --image=img:1 --replicas=3 >/dev/null
k rollout status deploy/web --timeout=30s >/dev/null || fail "deployment ready"

k apply -f - >/dev/null <<'YAML'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
YAML
wait_eq 1 "disruptionsAllowed" pdbstatus disruptionsAllowed
expect_eq "3 2 3" "$(pdbstatus currentHealthy) $(pdbstatus desiredHealthy) $(pdbstatus expectedPods)" "current, desired, expected"
expect_eq "$(k get pdb web -o jsonpath='{.metadata.generation}')" "$(pdbstatus observedGeneration)" "observedGeneration"
expect_eq "True SufficientPods" "$(k get pdb web -o jsonpath='{.status.conditions[0].status} {.status.conditions[0].reason}')" "DisruptionAllowed condition"
expect_eq "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE" "$(k get pdb | head -1 | tr -s ' ')" "kubectl get pdb columns"
expect_eq "web N/A 1 1" "$(k get pdb web --no-headers | tr -s ' ' | cut -d' ' -f1-4)" "kubectl get pdb row"
pass "status from the pods and the Deployment's scale (maxUnavailable 1 of 3)"

victim=$(k get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
expect_eq 201 "$(evict "$victim" '?dryRun=All')" "a dry-run eviction"
expect_eq 1 "$(pdbstatus disruptionsAllowed)" "a dry run uses no disruption"
expect_eq "" "$(k get pod "$victim" -o jsonpath='{.metadata.deletionTimestamp}')" "a dry run deletes nothing"
expect_eq 201 "$(evict "$victim")" "an eviction the budget allows"
state=$(k get pod "$victim" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null || echo gone)
[ -n "$state" ] || fail "the evicted pod is not being deleted"
wait_eq 3 "the Deployment replaces the evicted pod" ready_pods
wait_eq 1 "the budget recovers" pdbstatus disruptionsAllowed
pass "an eviction within the budget deletes the pod"

k patch pdb web --type=merge -p '{"spec":{"maxUnavailable":null,"minAvailable":3}}' >/dev/null
wait_eq 3 "desiredHealthy after the change" pdbstatus desiredHealthy
wait_eq "$(k get pdb web -o jsonpath='{.metadata.generation}')" "observed" pdbstatus observedGeneration
expect_eq 0 "$(pdbstatus disruptionsAllowed)" "no disruption allowed"
victim=$(k get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
expect_eq 429 "$(evict "$victim")" "an eviction past the budget"
python3 - "$WORK/evict" <<'PY' || fail "429 body: $(cat "$WORK/evict")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["kind"] == "Status" and s["status"] == "Failure", s
assert s["code"] == 429 and s["reason"] == "TooManyRequests", s
assert s["message"] == "Cannot evict pod as it would violate the pod's disruption budget.", s
c = s["details"]["causes"][0]
assert c["reason"] == "DisruptionBudget", c
assert c["message"] == "The disruption budget web needs 3 healthy pods and has 3 currently", c
PY
k get pod "$victim" -o jsonpath='{.metadata.deletionTimestamp}' | grep -q . && fail "a refused eviction deleted the pod"
pass "429 TooManyRequests with kube-apiserver's message and cause"

k run pending --image=img:1 --labels=app=web --overrides='{"spec":{"nodeSelector":{"nowhere":"true"}}}' >/dev/null
expect_eq 201 "$(evict pending)" "a Pending pod is evicted whatever the budget"
pass "a pod that is not running is evicted regardless"

# --- kubectl drain: refused while the pods have nowhere to go
k patch pdb web --type=merge -p '{"spec":{"minAvailable":2}}' >/dev/null
wait_eq 1 "one disruption allowed again" pdbstatus disruptionsAllowed
if k drain n1 --timeout=8s >"$WORK/drain" 2>&1; then
	fail "drain finished with no room for the pods: $(cat "$WORK/drain")"
fi
grep -q "Cannot evict pod as it would violate the pod's disruption budget." "$WORK/drain" ||
	fail "drain output: $(cat "$WORK/drain")"
expect_eq 2 "$(ready_pods)" "drain stopped at the budget: two ready pods left"
pass "kubectl drain stops at the budget"

node n2
k drain n1 --timeout=60s >"$WORK/drain" 2>&1 || fail "drain with a second node: $(cat "$WORK/drain")"
on_n2() { k get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}|{.spec.nodeName}{"\n"}{end}' | grep -c '^|n2$' || true; }
wait_eq 3 "every pod on n2" on_n2
pass "kubectl drain completes within the budget once the pods can move"
