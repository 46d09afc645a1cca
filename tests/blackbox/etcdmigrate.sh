#!/bin/sh
# --migrate-to-etcd: the objects of an embedded store copied into etcd as
# they are (the same uid), more than one transaction's worth (100 a
# chunk), with the CA and admin token; a server started on that etcd with
# the same data dir serves them to the same admin; a second run finds
# them there and leaves them alone.
. "$(dirname "$0")/lib.sh"
etcd_start 1
start_daemon

i=1
while [ $i -le 150 ]; do
	printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%s, namespace: default}\ndata: {k: v%s}\n' $i $i
	i=$((i + 1))
done >"$WORK/cms.yaml"
k apply -f "$WORK/cms.yaml" >/dev/null || fail "creating 150 ConfigMaps"
uid=$(k get configmap cm7 -o jsonpath='{.metadata.uid}')
[ -n "$uid" ] || fail "cm7 has no uid"
stop_daemon

migrate() {
	"$VOLRAYD" --data-dir "$DATA" --etcd-servers "$ETCD_ENDPOINTS" \
	    ${SHARE_DIR:+--share-dir "$SHARE_DIR"} --migrate-to-etcd \
	    >"$WORK/migrate$1.log" 2>&1 ||
	    fail "migration $1 failed: $(tail -3 "$WORK/migrate$1.log")"
}
migrate 1
expect_eq 150 "$(ectl get /registry/configmaps/default/ --prefix \
    --keys-only | grep -c '/cm[0-9]*$')" "ConfigMaps in etcd"
grep -q ' 0 already in etcd' "$WORK/migrate1.log" ||
    fail "first migration found objects in etcd: $(tail -1 "$WORK/migrate1.log")"
expect_eq "$(cat "$DATA/pki/admin.token")" \
    "$(ectl get /registry/volray.io/pki/admin.token --print-value-only)" \
    "the admin token in etcd"
ectl get /registry/volray.io/pki/ca.crt --print-value-only |
    grep -q "BEGIN CERTIFICATE" || fail "no CA in etcd"
pass "150 ConfigMaps and the CA and admin token copied into etcd"

VOLRAY_STORE=etcd
start_daemon
expect_eq "$uid" "$(k get configmap cm7 -o jsonpath='{.metadata.uid}')" \
    "cm7's uid on etcd"
expect_eq v150 "$(k get configmap cm150 -o jsonpath='{.data.k}')" \
    "cm150's data on etcd"
pass "a server on etcd serves them, with their uids, to the same admin"
stop_daemon

migrate 2
grep -q ' 0 objects copied' "$WORK/migrate2.log" ||
    fail "second migration copied: $(tail -1 "$WORK/migrate2.log")"
grep -q 'copied, [1-9][0-9]* already in etcd' "$WORK/migrate2.log" ||
    fail "second migration found nothing there: $(tail -1 "$WORK/migrate2.log")"
pass "a second migration leaves what etcd has alone"
