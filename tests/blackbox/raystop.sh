#!/bin/sh
# ray stop in a pod of the local node stops what ray start started in that
# pod, and nothing of another pod's: a `ray start --head --block` that is
# the container's command ends (the container exits 0) and Ray's own line
# says how many processes it stopped; --force kills one; a second ray stop
# finds nothing; a bad --grace-period is a usage error.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: head}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - {name: ray-head, image: rayproject/ray, command: [ray, start, --head, --block]}
---
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: rayproject/ray
    command: [sh, -c, 'for i in 1 2; do ray start --block; echo "block ended: \$?"; done; exec sleep 600']
YAML
k wait --for=condition=Ready pod/head pod/other --timeout=20s >/dev/null ||
	fail "the pods did not start"
# Both blocks are under way before either is stopped.
for p in head other; do
	wait_eq "This command will now block forever until terminated by a signal." \
		"$p's ray start blocks" sh -c "kubectl logs $p | tail -n 1"
done

# The block is the container's command: the container ends with it and
# takes the exec'd ray stop along, which may not have printed by then
# (as in a real pod): its line is checked in pod other below.
if out=$(k exec head -- ray stop 2>&1); then
	expect_eq "Stopped all 1 Ray processes." "$out" "ray stop's line"
else
	expect_contains "$out" "exit code 137" "ray stop in head"
fi
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/head --timeout=20s >/dev/null ||
	fail "the head's container did not exit: $(k get pod head -o jsonpath='{.status.containerStatuses[0].state}')"
expect_eq 0 "$(k get pod head -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" \
	"the block's exit code"
expect_eq Running "$(k get pod other -o jsonpath='{.status.phase}')" "the other pod"
case "$(k logs other)" in
*"block ended"*) fail "ray stop in pod head stopped pod other's ray start" ;;
esac
pass "ray stop ends its own pod's ray start --block, and not another pod's"

out=$(k exec other -- ray stop 2>&1) || fail "ray stop failed: $out"
expect_eq "Stopped all 1 Ray processes." "$out" "ray stop's line"
wait_eq 1 "ray start stopped (SIGTERM), exit 0" sh -c "kubectl logs other | grep -c 'block ended: 0'"
wait_eq 2 "the second ray start blocks" sh -c "kubectl logs other | grep -c 'will now block forever'"
out=$(k exec other -- ray stop --force -g 5 2>&1) || fail "ray stop --force failed: $out"
expect_eq "Stopped all 1 Ray processes." "$out" "ray stop --force's line"
wait_eq 1 "ray start killed (SIGKILL)" sh -c "kubectl logs other | grep -c 'block ended: 137'"
out=$(k exec other -- ray stop 2>&1) || fail "a second ray stop failed: $out"
expect_eq "Did not find any active Ray processes." "$out" "a second ray stop"
pass "ray stop prints Ray's line; --force kills; another ray stop finds nothing"

if out=$(k exec other -- ray stop --grace-period soon 2>&1); then
	fail "ray stop --grace-period soon succeeded: $out"
fi
expect_contains "$out" "'soon' is not a valid integer" "a bad grace period"
pass "a bad --grace-period is refused"
