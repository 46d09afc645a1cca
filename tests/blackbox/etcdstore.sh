#!/bin/sh
# The API's scenarios against the etcd backend: create, update, delete,
# list, watch and 410, patch and apply, CRDs and their custom resources,
# RBAC, read options, cluster-scoped kinds, bad input and kill -9, each
# script as it is with VOLRAY_STORE=etcd (lib.sh then starts a one-member
# etcd and runs the daemon on it). etcd.sh has what only etcd has.
. "$(dirname "$0")/lib.sh"
command -v etcd >/dev/null 2>&1 ||
	skip "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"
dir=$(dirname "$0")
for t in basics kubectl watch rbac readopt clusterkinds badinput crash; do
	rc=0
	VOLRAY_STORE=etcd sh "$dir/$t.sh" >"$WORK/$t.log" 2>&1 || rc=$?
	if [ $rc = 77 ]; then
		echo "skipped on etcd: $t: $(grep SKIP "$WORK/$t.log")"
		continue
	fi
	if [ $rc != 0 ]; then
		cat "$WORK/$t.log"
		fail "$t.sh on etcd"
	fi
	pass "$t.sh on etcd ($(grep -c '^ok:' "$WORK/$t.log") checks)"
done
