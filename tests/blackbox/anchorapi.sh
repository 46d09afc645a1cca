#!/bin/sh
# The real kube-apiserver anchor (scripts/anchors.sh, issue 39): started
# on etcd into the test's directory, stock kubectl works with its
# kubeconfig, volray's CRDs (crds/) install into it as they are, and stop
# leaves nothing running. Skips when kube-apiserver is not built
# (scripts/anchors.sh build kube-apiserver; VOLRAY_ANCHORS=1
# scripts/check.sh).
. "$(dirname "$0")/lib.sh"
anchors=$top_srcdir/scripts/anchors.sh

"$anchors" path kube-apiserver >/dev/null 2>&1 ||
	skip "kube-apiserver is not built (scripts/anchors.sh build kube-apiserver needs the Go module proxy)"
command -v etcd >/dev/null 2>&1 ||
	skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"

A=$WORK/anchor
# Whatever happens, the anchor does not outlive the test.
anchor_stop() { "$anchors" kube-apiserver stop "$A" >/dev/null 2>&1 || true; }
trap 'rc=$?; anchor_stop; (exit $rc); cleanup' EXIT INT TERM

"$anchors" kube-apiserver start "$A" >"$WORK/start.log" 2>&1 ||
	fail "kube-apiserver start: $(cat "$WORK/start.log")"
pids="$(cat "$A/etcd.pid") $(cat "$A/kube-apiserver.pid")"
export KUBECONFIG="$A/kubeconfig"
want=$("$anchors" path kube-apiserver | sed 's|.*/\(v[^/]*\)/bin/.*|\1|')
got=$(k version -o json) || fail "kubectl version: $got"
expect_contains "$got" "\"gitVersion\": \"$want\"" "the server's version"
ns=$(k get ns -o name) || fail "kubectl get ns: $ns"
expect_contains "$ns" namespace/kube-system "kubectl get ns"
pass "kube-apiserver $want on etcd answers stock kubectl"

out=$(k apply -f "$top_srcdir/crds/" 2>&1) || fail "kubectl apply crds/: $out"
n=$(ls "$top_srcdir"/crds/*.yaml | wc -l)
for f in "$top_srcdir"/crds/*.yaml; do
	name=$(sed -n 's/^  name: //p' "$f" | head -n 1)
	k wait --for=condition=Established "crd/$name" --timeout=30s >/dev/null ||
		fail "crd/$name not Established"
done
pass "volray's $n CRDs install into kube-apiserver and are Established"

"$anchors" kube-apiserver stop "$A" || fail "kube-apiserver stop"
for p in $pids; do
	if kill -0 "$p" 2>/dev/null &&
	    [ "$(sed -e 's/.*) //' -e 's/ .*//' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
		what=$(tr '\0' ' ' <"/proc/$p/cmdline")
		kill -9 "$p" 2>/dev/null || true
		fail "pid $p ($what) still ran after stop"
	fi
done
[ ! -e "$A/etcd.pid" ] && [ ! -e "$A/kube-apiserver.pid" ] ||
	fail "stop left pid files"
pass "stop ends etcd and kube-apiserver"
