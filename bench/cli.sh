#!/usr/bin/env bash
# The command-line client against kubectl on the same daemon, in one run:
# the wall time of `volray get pods` and `kubectl get pods` with PODS pods
# in the namespace (the median of RUNS runs each, output to /dev/null),
# and of APPLIES sequential `volray apply -f` calls, each creating its
# own ConfigMap from its own file, against the same with `kubectl apply
# -f`, then both again with every file changed (each client's three-way
# patch: volray's client-side apply is kubectl's). volrayd serves HTTPS with its own CA and the admin's token, from
# the kubeconfig it writes, which both clients read (kubectl sends tokens
# over TLS only). Figures only; it fails only when something does not
# work. Knobs: PODS (10000), APPLIES (100), RUNS (5), QUIET_WAIT.
#   bash bench/cli.sh          SMALL=1 for a quick run
set -eu
. "$(dirname "$0")/lib.sh"

: "${SMALL:=0}"
if [ "$SMALL" = 1 ]; then
	: "${PODS:=500}" "${APPLIES:=10}" "${RUNS:=3}"
else
	: "${PODS:=10000}" "${APPLIES:=100}" "${RUNS:=5}"
fi
: "${VOLRAY:=$TOP/build/volray}"
[ -x "$VOLRAY" ] || VOLRAY=$TOP/volray
[ -x "$VOLRAY" ] || die "no volray at $VOLRAY: build it first, or set VOLRAY"
command -v kubectl >/dev/null || die "no kubectl"
: "${KUBECTL:=$(command -v kubectl)}"

bench_init
TLS=1
start_volrayd
export KUBECONFIG="$RUN_DIR/vr/kubeconfig"
for i in $(seq 300); do [ -f "$KUBECONFIG" ] && break; sleep 0.1; done
echo "# cli: PODS=$PODS APPLIES=$APPLIES RUNS=$RUNS"
echo "# volray $("$VOLRAY" version --client | sed 's/.*: //')," \
	"kubectl $("$KUBECTL" version --client 2>/dev/null | sed -n 's/^Client Version: //p')"

# Create the pods over one kept-alive HTTPS connection per writer.
cat >"$RUN_DIR/pods.py" <<'PY'
import http.client, json, os, ssl, sys, threading
n, writers, port, ca, token = int(sys.argv[1]), 8, int(sys.argv[2]), sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
def work(k):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=60)
    for i in range(k, n, writers):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "bench-%05d" % i, "labels": {"app": "bench"}},
               "spec": {"containers": [{"name": "c", "image": "busybox",
                        "resources": {"requests": {"cpu": "10m"}}}]}}
        c.request("POST", "/api/v1/namespaces/default/pods", json.dumps(pod),
                  {"Content-Type": "application/json", "Authorization": "Bearer " + token})
        r = c.getresponse(); r.read()
        if r.status != 201:
            sys.exit("POST %d: %d" % (i, r.status))
ts = [threading.Thread(target=work, args=(k,)) for k in range(writers)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
python3 "$RUN_DIR/pods.py" "$PODS" "$VR_PORT" "$RUN_DIR/vr/pki/ca.crt" \
	"$(cat "$RUN_DIR/vr/pki/admin.token")" || die "creating pods"
got=$("$VOLRAY" get pods -o name | wc -l)
[ "$got" -eq "$PODS" ] || die "volray lists $got pods, want $PODS"
got=$("$KUBECTL" get pods -o name | wc -l)
[ "$got" -eq "$PODS" ] || die "kubectl lists $got pods, want $PODS"

now() { date +%s.%N; }
# median of the wall times (s) of RUNS runs of a command
median_of() {
	local t=() i s
	for i in $(seq "$RUNS"); do
		wait_quiet
		s=$(now)
		"$@" >/dev/null || die "failed: $*"
		t+=("$(echo "$(now) - $s" | bc)")
	done
	printf '%s\n' "${t[@]}" | sort -n | awk '{ v[NR] = $1 }
	    END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

vg=$(median_of "$VOLRAY" get pods)
kg=$(median_of "$KUBECTL" get pods)
echo "get pods ($PODS pods): volray ${vg} s, kubectl ${kg} s," \
	"kubectl/volray $(echo "scale=1; $kg / $vg" | bc)x"

mkdir -p "$RUN_DIR/apply"
for who in volray kubectl; do
	for i in $(seq "$APPLIES"); do
		cat >"$RUN_DIR/apply/$who-$i.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $who-$i
  labels: {bench: apply}
data:
  key: value-$i
YAML
	done
done
applies() { # CLIENT WHO: APPLIES sequential apply -f calls, one file each
	local i
	for i in $(seq "$APPLIES"); do
		"$1" apply -f "$RUN_DIR/apply/$2-$i.yaml" >/dev/null ||
			die "$2 apply $i failed"
	done
}
wait_quiet
s=$(now); applies "$VOLRAY" volray; va=$(echo "$(now) - $s" | bc)
wait_quiet
s=$(now); applies "$KUBECTL" kubectl; ka=$(echo "$(now) - $s" | bc)
n=$("$VOLRAY" get configmaps -l bench=apply -o name | wc -l)
[ "$n" -eq $((2 * APPLIES)) ] || die "$n ConfigMaps, want $((2 * APPLIES))"
printf 'apply -f x %d (sequential, new objects): volray %.2f s (%.1f ms each), kubectl %.2f s (%.1f ms each), kubectl/volray %.1fx\n' \
	"$APPLIES" "$va" "$(echo "$va * 1000 / $APPLIES" | bc -l)" "$ka" \
	"$(echo "$ka * 1000 / $APPLIES" | bc -l)" "$(echo "$ka / $va" | bc -l)"

# The same files changed (a key removed, one added): each client's
# three-way patch of its own objects.
sed -i 's/^  key: value-\(.*\)/  other: changed-\1/' "$RUN_DIR"/apply/*.yaml
wait_quiet
s=$(now); applies "$VOLRAY" volray; vc=$(echo "$(now) - $s" | bc)
wait_quiet
s=$(now); applies "$KUBECTL" kubectl; kc=$(echo "$(now) - $s" | bc)
[ -z "$("$VOLRAY" get configmaps -l bench=apply -o 'jsonpath={.items[*].data.key}')" ] ||
	die "a removed key is still there"
printf 'apply -f x %d (sequential, changed: configured): volray %.2f s (%.1f ms each), kubectl %.2f s (%.1f ms each), kubectl/volray %.1fx\n' \
	"$APPLIES" "$vc" "$(echo "$vc * 1000 / $APPLIES" | bc -l)" "$kc" \
	"$(echo "$kc * 1000 / $APPLIES" | bc -l)" "$(echo "$kc / $vc" | bc -l)"
