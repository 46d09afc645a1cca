# bench/anchors.sh nodes (sourced by anchors.sh, which says what it
# measures): volray's simulated nodes against kwok's, each a process of
# its own against the same kind of volrayd API server (--roles api), by
# bench/nodes.sh REMOTE=1 (volrayd --roles nodes) and REMOTE=kwok, runs
# alternating, both over HTTPS.

if [ "$SMALL" = 1 ]; then
	: "${NODES:=50}" "${PODS:=500}" "${RUNS_NODES:=1}"
else
	: "${NODES:=5000}" "${PODS:=20000}" "${RUNS_NODES:=3}"
fi
"$ANCHORS" path kwok >/dev/null 2>&1 || die "kwok is not built: scripts/anchors.sh build kwok"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/anchors-nodes.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# one WHO RUN: a nodes.sh run, its figures as "idle_pct agent_rss_mb running_per_s".
one() {
	local who=$1 r=$2 mode=1 log
	[ "$who" = kwok ] && mode=kwok
	log=$OUT/$who-$r.log
	TLS=1 REMOTE=$mode NODES=$NODES PODS=$PODS bash "$(dirname "$0")/nodes.sh" >"$log" 2>&1 || {
		tail -30 "$log"
		die "nodes.sh REMOTE=$mode failed"
	}
	local idle rss run
	idle=$(sed -n 's/^idle with [0-9]* Ready nodes: \([0-9.]*\)% of one core.*/\1/p' "$log")
	rss=$(sed -n 's/^the agent alone: RSS \([0-9]*\) MB/\1/p' "$log")
	run=$(sed -n 's/^RESULT .*running_per_s=\([0-9]*\).*/\1/p' "$log")
	printf '  %-6s run %s: %d nodes idle %5.1f%% of one core (both processes), the node process RSS %4d MB; %d pods to Running at %6d/s\n' \
	    "$who" "$r" "$NODES" "$idle" "$rss" "$PODS" "$run"
	echo "$idle $rss $run" >>"$OUT/$who"
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# anchors nodes: NODES=$NODES PODS=$PODS RUNS_NODES=$RUNS_NODES, each side a process against volrayd --roles api (bench/nodes.sh REMOTE=1 / REMOTE=kwok)"
echo "# volray $commit ($VOLRAYD --roles nodes); anchor: kwok $(basename "$(dirname "$(dirname "$("$ANCHORS" path kwok)")")") (kwokctl's default stages, node leases of 40 s)"
for r in $(seq 1 "$RUNS_NODES"); do
	one volray "$r"
	one kwok "$r"
done
echo
read -r vi _ _ <<<"$(stats "$OUT/volray" 1)"
read -r ki _ _ <<<"$(stats "$OUT/kwok" 1)"
read -r vr _ _ <<<"$(stats "$OUT/volray" 2)"
read -r kr _ _ <<<"$(stats "$OUT/kwok" 2)"
read -r vp vplo vphi <<<"$(stats "$OUT/volray" 3)"
read -r kp kplo kphi <<<"$(stats "$OUT/kwok" 3)"
printf 'idle CPU (both processes) | volray %5.1f%% | kwok %5.1f%%\n' "$vi" "$ki"
printf 'node process RSS          | volray %4d MB | kwok %4d MB\n' "$vr" "$kr"
printf 'pods to Running           | volray %6d/s (%d-%d) | kwok %6d/s (%d-%d)\n' "$vp" "$vplo" "$vphi" "$kp" "$kplo" "$kphi"
echo
echo "ratio=$(awk -v a="$vr" -v b="$kr" 'BEGIN { printf "%.2f", b / a }') volray=$vr anchor=$kr unit=MB-RSS anchor_name=kwok what=$NODES-nodes-memory"
echo "ratio=$(awk -v a="$vp" -v b="$kp" 'BEGIN { printf "%.2f", a / b }') volray=$vp anchor=$kp unit=pods/s anchor_name=kwok what=$PODS-pods-to-Running"
