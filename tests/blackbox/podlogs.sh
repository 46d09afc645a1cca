#!/bin/sh
# pods/log as a kubelet serves it, through kubectl: the file is in the CRI
# format (TIMESTAMP STREAM F|P TEXT); kubectl logs shows the text, stdout
# and stderr interleaved; --timestamps prefixes RFC3339Nano; --since,
# --since-time, --limit-bytes, --tail, -f and -p; a line longer than
# 16 KiB is split into P records and served whole; bad options are
# refused as kube-apiserver refuses them.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
NODE=$(hostname | tr 'A-Z' 'a-z')
k wait --for=condition=Ready "node/$NODE" --timeout=10s >/dev/null || fail "local node not Ready"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command:
    - sh
    - -c
    - |
      echo early; sleep 0.2; echo oops >&2; sleep 0.2
      python3 -c 'print("x" * 40000)'
      while [ ! -f "\$VOLRAY_POD_ROOT/go" ]; do sleep 0.1; done
      echo late
      while [ ! -f "\$VOLRAY_POD_ROOT/stop" ]; do sleep 0.1; done
      echo last
YAML
k wait --for=condition=Ready pod/talker --timeout=10s >/dev/null || fail "talker not Ready"
LOG="$DATA/pods/default/talker/c.log"
until [ "$(wc -l <"$LOG")" -ge 5 ]; do sleep 0.05; done

ts='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]*[1-9])?Z'
head -n 2 "$LOG" | grep -Eq "^$ts (stdout F early|stderr F oops)\$" || fail "the file's format: $(head -n 2 "$LOG")"
expect_eq 2 "$(grep -Ec "^$ts stdout P x+\$" "$LOG")" "P records of a 40,000-byte line (16 KiB each, the rest F)"
expect_eq "early
oops" "$(k logs talker | head -n 2)" "stdout and stderr interleaved in time order"
expect_eq 40000 "$(k logs talker | sed -n 3p | tr -d '\n' | wc -c)" "a long line served whole"
pass "CRI records in the file; kubectl logs: text only, streams interleaved, P records joined"

out=$(k logs talker --timestamps)
echo "$out" | head -n 2 | grep -Eq "^$ts early\$" || fail "--timestamps: $(echo "$out" | head -n 1)"
expect_eq "$(echo "$out" | wc -l)" "$(echo "$out" | grep -Ec "^$ts ")" "every line has its timestamp"
stamp=$(echo "$out" | head -n 1 | cut -d' ' -f1)
expect_eq "$stamp" "$(head -n 1 "$LOG" | cut -d' ' -f1)" "the timestamp as the file has it (RFC3339Nano)"
pass "--timestamps: RFC3339Nano, trailing zeros trimmed, once per line"

expect_eq ear "$(k logs talker --limit-bytes=3)" "--limit-bytes=3"
expect_eq "$(k logs talker --timestamps | head -c 10)" "$(k logs talker --timestamps --limit-bytes=10)" "--limit-bytes with --timestamps"
# The kubelet's tail counts the file's records: the long line is three.
expect_eq oops "$(k logs talker --tail=4 | head -n 1)" "--tail=4"
expect_eq 7232 "$(k logs talker --tail=1 | tr -d '\n' | wc -c)" "--tail=1: the long line's last record"
expect_eq "" "$(k logs talker --tail=0)" "--tail=0"
pass "--limit-bytes cuts the output, --tail counts records"

sleep 2	# so that what was written so far is older than --since=2s
: >"$DATA/pods/default/talker/root/go"
until k logs talker | grep -q late; do sleep 0.05; done
expect_eq late "$(k logs talker --since=2s)" "--since=2s"
late=$(k logs talker --timestamps | grep ' late$' | cut -d' ' -f1)
second=$(echo "$late" | sed 's/\.[0-9]*Z$/Z/')
expect_eq late "$(k logs talker --since-time="$second")" "--since-time at the second of the last line"
expect_contains "$(k logs talker --since-time=2000-01-01T00:00:00Z)" early "--since-time long ago"
pass "--since and --since-time drop older lines"

k logs -f talker >"$WORK/follow.txt" 2>&1 &
fpid=$!
until grep -q late "$WORK/follow.txt"; do sleep 0.05; done
: >"$DATA/pods/default/talker/root/stop"
wait $fpid || fail "kubectl logs -f failed: $(cat "$WORK/follow.txt")"
expect_eq last "$(tail -n 1 "$WORK/follow.txt")" "-f: the line written after it started, then the end"
expect_eq "$(k logs talker)" "$(cat "$WORK/follow.txt")" "-f: everything, once"
pass "-f follows until the container ends"

k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: again}
spec:
  nodeName: $NODE
  restartPolicy: OnFailure
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'echo "run \$(cat \$VOLRAY_POD_ROOT/n 2>/dev/null || echo 1)"; echo 2 >\$VOLRAY_POD_ROOT/n; exit 1']}
YAML
k wait --for=jsonpath='{.status.containerStatuses[0].restartCount}'=1 pod/again --timeout=15s >/dev/null || fail "again did not restart"
expect_eq "run 1" "$(k logs again -p)" "-p: the previous instance"
k logs again -p --timestamps | grep -Eq "^$ts run 1\$" || fail "-p --timestamps"
pass "-p serves the previous instance, with --timestamps too"

code=$(curl -s -o "$WORK/err.json" -w '%{http_code}' "$API/api/v1/namespaces/default/pods/talker/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z")
expect_eq 422 "$code" "sinceSeconds with sinceTime"
expect_contains "$(cat "$WORK/err.json")" 'at most one of `sinceTime` or `sinceSeconds`' "its message"
expect_eq 422 "$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/namespaces/default/pods/talker/log?limitBytes=0")" "limitBytes=0"
expect_eq 400 "$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/namespaces/default/pods/talker/log?sinceTime=yesterday")" "a bad sinceTime"
pass "bad options: 422 (both since*, limitBytes=0), 400 (a malformed time)"
