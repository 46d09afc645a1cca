#!/bin/sh
# volray apply is kubectl's client-side apply: it writes the same
# last-applied-configuration annotation byte for byte, and the two take
# turns on one object in both orders, a field removed from the file being
# removed from the object while fields others set are kept: a ConfigMap
# and a Deployment (strategic merge patch: env and containers by name) and
# a Volcano Queue (a custom resource: JSON merge patch). Then -f DIR,
# -R, -f -, multi-document YAML, JSON Lists, and --server-side.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clilib.sh"
start_daemon

LA='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'

# annotation KIND NAME: the last-applied annotation as kubectl reads it.
annotation() {
	k get "$1" "$2" -o jsonpath="$LA"
}

# --- the same annotation as kubectl's, for a built-in kind and a CR
cat >"$WORK/cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  labels: {team: a, tier: gold}
data:
  x: "1 < 2 & 3 > 2"
  z: "two\nlines \u2028 é"
  num: "3"
YAML
cat >"$WORK/q.yaml" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: q1
  labels: {team: a}
spec:
  weight: 3
  capability: {cpu: "4", memory: 8Gi}
YAML
for f in cm q; do
	kind=$(sed -n 's/^kind: //p' "$WORK/$f.yaml")
	k apply -f "$WORK/$f.yaml" >/dev/null || fail "kubectl apply $f"
	annotation "$kind" "$(sed -n 's/^  name: //p' "$WORK/$f.yaml")" >"$WORK/k.ann"
	k delete -f "$WORK/$f.yaml" >/dev/null
	vr apply -f "$WORK/$f.yaml" >/dev/null || fail "volray apply $f"
	annotation "$kind" "$(sed -n 's/^  name: //p' "$WORK/$f.yaml")" >"$WORK/v.ann"
	cmp -s "$WORK/k.ann" "$WORK/v.ann" ||
		fail "$kind annotation: kubectl $(cat "$WORK/k.ann") volray $(cat "$WORK/v.ann")"
	expect_eq "$(echo "$kind" | tr A-Z a-z)$( [ "$f" = q ] && echo .scheduling.volcano.sh)/$(sed -n 's/^  name: //p' "$WORK/$f.yaml") unchanged" \
		"$(vr apply -f "$WORK/$f.yaml")" "$kind applied twice"
done
pass "the last-applied annotation is kubectl's, byte for byte"

# --- kubectl apply, then volray apply with a field removed, and back
sed '/^  num: /d; s/, tier: gold//' "$WORK/cm.yaml" >"$WORK/cm2.yaml"
k annotate cm cm1 owner=someone-else >/dev/null
k apply -f "$WORK/cm.yaml" >/dev/null
expect_eq "configmap/cm1 configured" "$(vr apply -f "$WORK/cm2.yaml")" \
	"volray apply after kubectl"
expect_eq "{} a someone-else" "$(k get cm cm1 -o jsonpath='{.data.num}{"{}"} {.metadata.labels.team}{.metadata.labels.tier} {.metadata.annotations.owner}')" \
	"volray removed what kubectl applied and the file dropped"
vr apply -f "$WORK/cm.yaml" >/dev/null
expect_eq "3 gold" "$(k get cm cm1 -o jsonpath='{.data.num} {.metadata.labels.tier}')" \
	"volray apply adds them back"
k apply -f "$WORK/cm2.yaml" >/dev/null || fail "kubectl apply after volray"
expect_eq "{} a someone-else" "$(k get cm cm1 -o jsonpath='{.data.num}{"{}"} {.metadata.labels.team}{.metadata.labels.tier} {.metadata.annotations.owner}')" \
	"kubectl removed what volray applied and the file dropped"
pass "ConfigMap: kubectl then volray, volray then kubectl"

cat >"$WORK/d.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: main
        image: busybox
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
      - name: side
        image: busybox
YAML
python3 - "$WORK/d.yaml" "$WORK/d2.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace('        - {name: B, value: "2"}\n', '')
s = s.replace('      - name: side\n        image: busybox\n', '')
open(sys.argv[2], "w").write(s)
PY
containers() {
	k get deploy web -o jsonpath='{.spec.template.spec.containers[*].name}/{.spec.template.spec.containers[0].env[*].name}'
}
k apply -f "$WORK/d.yaml" >/dev/null
k set env deploy/web -c main C=3 >/dev/null
expect_eq "deployment.apps/web configured" "$(vr apply -f "$WORK/d2.yaml")" \
	"volray apply of a Deployment"
expect_eq "main/A C" "$(containers)" \
	"container and env var removed by volray, kubectl set env's kept"
vr apply -f "$WORK/d.yaml" >/dev/null
expect_eq "main side/A B C" "$(containers)" "volray adds them back"
k apply -f "$WORK/d2.yaml" >/dev/null
expect_eq "main/A C" "$(containers)" "kubectl removes what volray applied"
# $retainKeys: a strategy switched to Recreate loses its rollingUpdate.
sed 's/^  replicas: 2$/  replicas: 2\n  strategy: {type: Recreate}/' "$WORK/d.yaml" >"$WORK/d3.yaml"
vr apply -f "$WORK/d3.yaml" >/dev/null || fail "apply Recreate"
expect_eq '{"type":"Recreate"}' "$(k get deploy web -o jsonpath='{.spec.strategy}')" \
	"strategy with \$retainKeys"
pass "Deployment: strategic merge both ways (containers and env by name, \$retainKeys)"

sed 's/, memory: 8Gi//; s/labels: {team: a}/labels: {}/' "$WORK/q.yaml" >"$WORK/q2.yaml"
k label queue q1 extra=kept >/dev/null
k apply -f "$WORK/q.yaml" >/dev/null
vr apply -f "$WORK/q2.yaml" >/dev/null || fail "volray apply q2"
expect_eq '{"cpu":"4"} kept' "$(k get queue q1 -o jsonpath='{.spec.capability} {.metadata.labels.team}{.metadata.labels.extra}')" \
	"Queue: volray removed what kubectl applied"
vr apply -f "$WORK/q.yaml" >/dev/null
k apply -f "$WORK/q2.yaml" >/dev/null
expect_eq '{"cpu":"4"} kept' "$(k get queue q1 -o jsonpath='{.spec.capability} {.metadata.labels.team}{.metadata.labels.extra}')" \
	"Queue: kubectl removed what volray applied"
pass "Queue: JSON merge patch both ways"

# --- an object made without apply: patched, with kubectl's warning
k create configmap made --from-literal=a=1 >/dev/null
cat >"$WORK/made.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: made}
data: {b: "2"}
YAML
vr apply -f "$WORK/made.yaml" >"$WORK/out" 2>"$WORK/err" || fail "apply over create"
expect_contains "$(cat "$WORK/err")" "is missing the kubectl.kubernetes.io/last-applied-configuration annotation" \
	"warning for an object without the annotation"
expect_eq "1 2" "$(k get cm made -o jsonpath='{.data.a} {.data.b}')" "others' fields kept"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: saved}\ndata: {a: "1", b: "2"}\n' >"$WORK/saved.yaml"
vr create --save-config -f "$WORK/saved.yaml" >/dev/null || fail "create --save-config"
k get cm saved -o jsonpath="$LA" >"$WORK/v.ann"
k delete cm saved >/dev/null
k create --save-config -f "$WORK/saved.yaml" >/dev/null
cmp -s "$WORK/v.ann" "$(k get cm saved -o jsonpath="$LA" >"$WORK/k.ann"; echo "$WORK/k.ann")" ||
	fail "create --save-config annotation differs from kubectl's"
k delete cm saved >/dev/null
vr create --save-config -f "$WORK/saved.yaml" >/dev/null
sed -i 's/, b: "2"//' "$WORK/saved.yaml"
vr apply -f "$WORK/saved.yaml" >"$WORK/out" 2>"$WORK/err" || fail "apply after create --save-config"
expect_eq "" "$(cat "$WORK/err")" "no warning after create --save-config"
expect_eq "1/" "$(k get cm saved -o jsonpath='{.data.a}/{.data.b}')" "apply removed b"
pass "apply over an object made by create, create --save-config"

# --- paths: a directory (not its subdirectories), -R, stdin, Lists
mkdir -p "$WORK/dir/sub"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d2}\n' >"$WORK/dir/a.yaml"
printf '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d3"}}]}\n' >"$WORK/dir/b.json"
printf 'not: a manifest\n' >"$WORK/dir/notes.txt"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d4}\n' >"$WORK/dir/sub/c.yml"
expect_eq "configmap/d1 created
configmap/d2 created
configmap/d3 created" "$(vr apply -f "$WORK/dir")" "-f DIR: its files, not its subdirectories"
expect_eq "configmap/d1 unchanged
configmap/d2 unchanged
configmap/d3 unchanged
configmap/d4 created" "$(vr apply -R -f "$WORK/dir")" "-R: subdirectories too"
expect_eq "configmap/d5 created" "$(printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d5}\n' | vr apply -f -)" "-f -"
expect_eq 'configmap "d4" deleted' "$(vr delete -R -f "$WORK/dir/sub")" \
	"delete -R -f"
pass "-f DIR, -R, -f -, multi-document YAML and JSON Lists"

# --- --server-side: the server's apply, with its field manager
expect_eq "configmap/ssa created" "$(printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "1"}\n' | vr apply --server-side --field-manager me -f -)" "--server-side"
expect_eq "me" "$(k get cm ssa -o jsonpath='{.metadata.managedFields[0].manager}')" "--field-manager"
expect_eq "" "$(annotation cm ssa)" "no annotation from a server-side apply"
pass "--server-side"
