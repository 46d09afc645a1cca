#!/bin/sh
# Two API servers on one 3-member etcd cluster (Debian's etcd-server,
# started here on loopback ports): objects under kube-apiserver's keys; one
# CA and admin token for both; a write through either seen by watches on
# both, in revision order, exactly once; 409 for a lost race and the
# retried update that wins; CRDs made through one served by the other; a
# value written into etcd by hand reported and skipped; writes resuming
# after kill -9 of the etcd leader and of a server.
. "$(dirname "$0")/lib.sh"
VOLRAY_STORE=etcd
etcd_start 3
start_daemon
A=$API
KC=$KUBECONFIG

# The second server: --roles api, its own data dir, the same etcd.
DATA2="$WORK/data2"
start_b() {
	rm -f "$DATA2/kubeconfig"
	"$VOLRAYD" --data-dir "$DATA2" --listen "127.0.0.1:${PORT_B:-0}" \
	    ${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles api \
	    --etcd-servers "$ETCD_ENDPOINTS" >>"$WORK/volrayd-b.log" 2>&1 &
	B_PID=$!
	KILL_PIDS="$KILL_PIDS $B_PID"
	i=0
	until [ -s "$DATA2/kubeconfig" ] && PORT_B=$(sed -n \
	    's|^ *server: https://127.0.0.1:\([0-9][0-9]*\)$|\1|p' \
	    "$DATA2/kubeconfig") && [ -n "$PORT_B" ] &&
	    command curl -fsk "https://127.0.0.1:$PORT_B/readyz" >/dev/null 2>&1
	do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "second volrayd did not start"
		kill -0 "$B_PID" 2>/dev/null ||
		    fail "second volrayd exited: $(tail -5 "$WORK/volrayd-b.log")"
		sleep 0.05
	done
	B="https://127.0.0.1:$PORT_B"
}
start_b
kb() { kubectl --server "$B" "$@"; }

# --- one cluster's credentials: A's kubeconfig (CA, token) works on B.
cmp -s "$DATA/pki/ca.crt" "$DATA2/pki/ca.crt" || fail "the servers' CAs differ"
cmp -s "$DATA/pki/admin.token" "$DATA2/pki/admin.token" ||
	fail "the servers' admin tokens differ"
kb get ns default >/dev/null || fail "A's kubeconfig against B"
ectl get /registry/volray.io/pki/ca.crt --print-value-only |
	grep -q "BEGIN CERTIFICATE" || fail "no CA under /registry/volray.io/pki"
pass "both servers serve one CA and accept one admin token (kept in etcd)"

# --- kube-apiserver's key layout, values as JSON, RV = mod_revision.
k create configmap c1 --from-literal=a=1 >/dev/null
rv=$(kb get cm c1 -o jsonpath='{.metadata.resourceVersion}')
mod=$(ectl get /registry/configmaps/default/c1 -w json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["kvs"][0]["mod_revision"])')
expect_eq "$mod" "$rv" "resourceVersion is etcd's mod_revision"
ectl get /registry/configmaps/default/c1 --print-value-only |
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["kind"]=="ConfigMap" and d["data"]=={"a":"1"}, d' ||
	fail "the value is not the object's JSON"
ectl get /registry/namespaces/default --keys-only | grep -q . ||
	fail "no /registry/namespaces/default"
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: etcd-node}\n' | k create -f - >/dev/null ||
	fail "create a Node"
ectl get /registry/minions/etcd-node --print-value-only |
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["kind"]=="Node" and d["metadata"]["name"]=="etcd-node", d' ||
	fail "the Node is not under /registry/minions/etcd-node: $(ectl get /registry/minions --prefix --keys-only)"
k delete node etcd-node >/dev/null || fail "delete the Node"
ectl get /registry/services/specs/default/kubernetes --keys-only | grep -q . ||
	fail "services are not under /registry/services/specs"
pass "objects under kube-apiserver's keys, as JSON, at their mod_revision"

# --- a CRD created through A serves on B; its objects under group/plural.
k apply -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
YAML
i=0
until kb get widgets >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "B never served widgets"; sleep 0.05
done
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n' |
	kb create -f - >/dev/null
ectl get /registry/example.com/widgets/default/w1 --keys-only | grep -q . ||
	fail "no /registry/example.com/widgets/default/w1"
expect_eq 3 "$(k get widget w1 -o jsonpath='{.spec.size}')" "A reads B's widget"
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {size: "x"}\n' |
	kb create -f - >/dev/null 2>"$WORK/w2.err" && fail "B took an invalid widget"
grep -q "spec.size" "$WORK/w2.err" || fail "B's schema error: $(cat "$WORK/w2.err")"
pass "a CRD made through A is served and validated by B"

# --- watches on both servers see every write, in order, exactly once.
rv0=$(k get cm c1 -o jsonpath='{.metadata.resourceVersion}')
curl -sN -m 60 "$A/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv0" >"$WORK/wa" &
WA=$!
curl -sN -m 60 "$B/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv0" >"$WORK/wb" &
WB=$!
wait_watchers 1
i=0
while [ "$(kb get --raw /metrics | sed -n 's/^volray_watchers //p')" -lt 1 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "no watcher on B"; sleep 0.05
done
n=0 jobs=""
while [ $n -lt 30 ]; do
	if [ $((n % 2)) = 0 ]; then s=$A; else s=$B; fi
	curl -fs -X POST -H 'Content-Type: application/json' \
	    -d "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"o$n\"}}" \
	    "$s/api/v1/namespaces/default/configmaps" >/dev/null &
	jobs="$jobs $!"
	n=$((n + 1))
done
for j in $jobs; do wait "$j" || fail "a create failed"; done
wait_cm() {
	i=0
	until [ "$(grep -c '"name":"o' "$1")" -ge 30 ]; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "watch $1 saw $(grep -c '"name":"o' "$1") of 30"
		sleep 0.05
	done
}
wait_cm "$WORK/wa"
wait_cm "$WORK/wb"
# A last write after the 30, through each server: once both watches have
# seen both, any duplicate of the 30 would have come before them (a watch
# is in revision order, checked below) or out of order after them.
for s in $A $B; do
	curl -fs -X POST -H 'Content-Type: application/json' \
	    -d "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"end-${s##*:}\"}}" \
	    "$s/api/v1/namespaces/default/configmaps" >/dev/null || fail "the last write through $s"
done
wait_end() {
	i=0
	until [ "$(grep -c '"name":"end-' "$1")" -ge 2 ]; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "watch $1 did not see the last writes"
		sleep 0.05
	done
}
wait_end "$WORK/wa"
wait_end "$WORK/wb"
kill $WA $WB 2>/dev/null || true
python3 - "$WORK/wa" "$WORK/wb" <<'PY' || fail "watch order"
import json, sys
seqs = []
for f in sys.argv[1:]:
    evs = [json.loads(l) for l in open(f) if l.strip()]
    seq = [(e["type"], e["object"]["metadata"]["name"],
            int(e["object"]["metadata"]["resourceVersion"])) for e in evs]
    revs = [s[2] for s in seq]
    assert revs == sorted(revs) and len(set(revs)) == len(revs), (f, seq)
    names = [s[1] for s in seq if s[1].startswith("o")]
    assert len(names) == 30 and len(set(names)) == 30, (f, names)
    seqs.append(seq)
assert seqs[0] == seqs[1], seqs
PY
pass "30 creates through both servers: each watch saw all, once, in revision order, the same"

# --- conflicts: a stale update is 409; two creates of one name, one wins;
# concurrent patches without preconditions all land (retried on the new).
old=$(k get cm c1 -o json)
k patch cm c1 -p '{"data":{"a":"2"}}' >/dev/null
echo "$old" | kb replace -f - >/dev/null 2>"$WORK/stale.err" &&
	fail "B took an update at a stale resourceVersion"
grep -q "the object has been modified\|Conflict" "$WORK/stale.err" ||
	fail "stale update: $(cat "$WORK/stale.err")"
n=0 jobs=""
while [ $n -lt 16 ]; do
	if [ $((n % 2)) = 0 ]; then s=$A; else s=$B; fi
	curl -fs -X PATCH -H 'Content-Type: application/merge-patch+json' \
	    -d "{\"data\":{\"k$n\":\"v\"}}" \
	    "$s/api/v1/namespaces/default/configmaps/c1" >/dev/null &
	jobs="$jobs $!"
	n=$((n + 1))
done
for j in $jobs; do wait "$j" || fail "a concurrent patch failed"; done
expect_eq 17 "$(kb get cm c1 -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]))')" \
	"16 concurrent patches through both servers all applied"
jobs=""
for s in $A $B; do
	curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' \
	    -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"race"}}' \
	    "$s/api/v1/namespaces/default/configmaps" >>"$WORK/race" &
	jobs="$jobs $!"
done
for j in $jobs; do wait "$j"; done
expect_eq "201 409" "$(sort "$WORK/race" | tr '\n' ' ' | sed 's/ $//')" "one create of a name wins"
pass "409 for a stale update and a lost create; unconditioned patches retried"

# --- a bad value under the prefix: reported once with its key, skipped.
ectl put /registry/configmaps/default/bad 'not json' >/dev/null
ectl put /registry/configmaps/default/pod-here '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-here"}}' >/dev/null
k create configmap after-bad >/dev/null
kb get cm after-bad >/dev/null || fail "B after a bad value"
i=0
until grep -q "configmaps/default/bad.*not a JSON object" "$WORK/volrayd.log" &&
    grep -q "configmaps/default/pod-here.*kind Pod, not ConfigMap" "$WORK/volrayd-b.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "bad values not reported"; sleep 0.05
done
expect_eq 1 "$(grep -c 'configmaps/default/bad' "$WORK/volrayd.log")" "reported once"
k get cm bad >/dev/null 2>&1 && fail "a bad value served"
pass "values that are no ConfigMap are reported once with their key and skipped"

# --- kill -9 the etcd leader: writes resume once the others elect one.
leader=$(ectl endpoint status -w json | python3 -c '
import json, sys
for i, s in enumerate(json.load(sys.stdin)):
    if s["Status"]["header"]["member_id"] == s["Status"]["leader"]:
        print(i + 1)')
[ -n "$leader" ] || fail "no etcd leader"
eval "kill -9 \$ETCD_PID_$leader"
t0=$(date +%s)
i=0
until k --request-timeout=5s create configmap after-leader >/dev/null 2>&1; do
	[ $(($(date +%s) - t0)) -lt 30 ] || fail "no write within 30 s of losing the etcd leader"
	sleep 0.1
done
t1=$(date +%s)
kb get cm after-leader >/dev/null || fail "B did not see the write"
etcd_member "$leader"
pass "etcd leader killed: writes resumed after $((t1 - t0)) s"

# --- kill -9 server B: A serves; B restarted has everything.
kill -9 $B_PID
k create configmap while-b-down >/dev/null
start_b
kb get cm while-b-down >/dev/null || fail "restarted B lacks a write made while it was down"
expect_eq "$(k get cm -o name | sort | tr '\n' ' ')" \
	"$(kb get cm -o name | sort | tr '\n' ' ')" "A and B list the same"
pass "server killed and restarted: it lists what the other wrote meanwhile"

# --- a --plain-http server on the same etcd: the same admin token (it
# had its own before: the servers of one cluster took different tokens).
DATA3="$WORK/data3"
PORT_C=$(free_port)
"$VOLRAYD" --data-dir "$DATA3" --listen "127.0.0.1:$PORT_C" --plain-http \
    ${SHARE_DIR:+--share-dir "$SHARE_DIR"} --roles api \
    --etcd-servers "$ETCD_ENDPOINTS" >>"$WORK/volrayd-c.log" 2>&1 &
KILL_PIDS="$KILL_PIDS $!"
i=0
until command curl -fs "http://127.0.0.1:$PORT_C/readyz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the plain-http server did not start"
	sleep 0.05
done
cmp -s "$DATA/pki/admin.token" "$DATA3/pki/admin.token" ||
	fail "the plain-http server has its own admin token"
code=$(command curl -s -o /dev/null -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$DATA/pki/admin.token")" \
    "http://127.0.0.1:$PORT_C/api/v1/namespaces/default/configmaps/while-b-down")
expect_eq 200 "$code" "the cluster's admin token on the plain-http server"
pass "a --plain-http server on the same etcd accepts the cluster's admin token"
