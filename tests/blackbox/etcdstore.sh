#!/bin/sh
# The API's scenarios against the etcd backend: create, update, delete,
# list, watch and 410, patch and apply, CRDs and their custom resources,
# RBAC, read options, cluster-scoped kinds, bad input and kill -9, each
# script as it is with VOLRAY_STORE=etcd (lib.sh then starts a one-member
# etcd and runs the daemon on it). etcd.sh has what only etcd has. A
# script that skips makes this test skip (77) once all have run, naming
# it and its reason: a skip is never counted as a pass.
. "$(dirname "$0")/lib.sh"
command -v etcd >/dev/null 2>&1 ||
	skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"
dir=$(dirname "$0")
skipped=""
for t in basics kubectl watch rbac readopt clusterkinds badinput crash; do
	rc=0
	VOLRAY_STORE=etcd sh "$dir/$t.sh" >"$WORK/$t.log" 2>&1 || rc=$?
	if [ $rc = 77 ]; then
		why=$(sed -n 's/^SKIP: [^:]*: //p' "$WORK/$t.log" | head -n 1)
		echo "skipped on etcd: $t.sh: ${why:-no reason given}"
		skipped="${skipped:+$skipped; }$t.sh (${why:-no reason given})"
		continue
	fi
	if [ $rc != 0 ]; then
		cat "$WORK/$t.log"
		fail "$t.sh on etcd"
	fi
	pass "$t.sh on etcd ($(grep -c '^ok:' "$WORK/$t.log") checks)"
done
[ -z "$skipped" ] || skip "on etcd, skipped: $skipped"
