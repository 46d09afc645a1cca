#!/bin/sh
# Binds that wait against a remote API (issue 40): the scheduler runs in
# its own process (--roles scheduler --kubeconfig) with a low client rate
# (10 requests a second), so the binds of its first session take seconds
# to go out while later sessions run. A pod whose bind is on its way is
# assumed on its node (sched/assume.c): no later session decides it
# again, so the sessions' binds add up to the pods, every bind is taken
# (none refused as already assigned) and every pod runs.
. "$(dirname "$0")/lib.sh"

EXTRA=""
trap 'rc=$?; for p in $EXTRA; do kill -9 $p 2>/dev/null || true; done; (exit $rc); cleanup' EXIT INT TERM
N=40
start_daemon --roles api,nodes
M=$(free_port)
"$VOLRAYD" --data-dir "$WORK/s1" --kubeconfig "$DATA/kubeconfig" --no-local-node \
	${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles scheduler --leader-elect=false \
	--kube-api-qps 10 --kube-api-burst 1 \
	--metrics-listen "127.0.0.1:$M" >>"$WORK/s1.log" 2>&1 &
EXTRA="$!"
i=0
until command curl -fs "http://127.0.0.1:$M/readyz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || { tail -5 "$WORK/s1.log"; fail "the scheduler's process is not ready"; }
	sleep 0.1
done
"$top_builddir/volray" node add --virtual --count 2 --cpu 32 --memory 64Gi --name-prefix n >/dev/null ||
	fail "volray node add"
i=0
while [ $i -lt $N ]; do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%02d, annotations: {volray.io/sim-duration: 1h}}\nspec: {schedulerName: volcano, containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]}\n' $i
	i=$((i + 1))
done >"$WORK/pods.yaml"
k apply -f "$WORK/pods.yaml" >/dev/null || fail "create $N pods"
k wait --for=jsonpath='{.status.phase}'=Running pod --all --timeout=90s >/dev/null ||
	{ k get pods -o wide; tail -20 "$WORK/s1.log"; fail "not every pod runs"; }
metric() {
	command curl -fs "http://127.0.0.1:$M/metrics" | sed -n "s/^$1 //p"
}
# A session that starts now has seen every pod bound: once it is done,
# every session that decided binds has logged them.
c0=$(metric volray_scheduler_cycles_total)
i=0
while [ "$(metric volray_scheduler_cycles_total)" -le "$c0" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no session after the pods ran"
	sleep 0.1
done
decided=$(sed -n 's/.*scheduler: cycle: .* \([0-9][0-9]*\) binds (.*/\1/p' "$WORK/s1.log" |
	awk '{ n += $1 } END { print n + 0 }')
sessions=$(grep -c "scheduler: cycle: .* [1-9][0-9]* binds" "$WORK/s1.log" || true)
expect_eq "$N" "$decided" "binds decided by the sessions (in $sessions)"
# An answer can come after the watch's event that the pod runs.
wait_eq "$N" "binds the API took" metric volray_scheduler_binds_total
expect_eq 0 "$(grep -c 'Binding rejected' "$WORK/s1.log" || true)" "binds refused"
pass "binds waiting for a remote API's rate limit: each pod decided once, every bind taken"
