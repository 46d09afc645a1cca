# bench/anchors.sh rayjobs (sourced by anchors.sh, which says what it
# measures): volray's Ray controllers (Lua) against KubeRay's operator,
# each the one thing that differs on the same kind of volrayd, by
# bench/kuberay.sh. Each run is a fresh volrayd (API, store, scheduler,
# simulated nodes and every controller but the Ray ones, as
# --controllers '*,-raycluster,-rayjob,-rayservice') and, as a client of
# it over HTTPS with a kubeconfig, either
#   volray:   a second volrayd --roles controllers --controllers
#             raycluster,rayjob,rayservice (kuberay.sh REMOTE=ray), or
#   KubeRay:  ray-operator --batch-scheduler=volcano (kuberay.sh KUBERAY=1),
# both at the same client rate limits: KubeRay's defaults (QPS 100, burst
# 200; client-go's token bucket, which volrayd's --kube-api-qps and
# --kube-api-burst are too), then lifted (QPS 2000, burst 4000). volray as
# it is deployed (its controllers inside volrayd, no client and so no
# limit: kuberay.sh alone) runs once a round too, and is set against
# KubeRay lifted. RAYJOBS RayJobs (head + 2 workers, 1 CPU each, HTTPMode,
# a simulated DURATION entrypoint, shutdownAfterJobFinishes) through two
# Volcano queues on NODES simulated nodes; wall time from the first create
# until every RayJob is Complete and every cluster and pod is gone, and
# the API requests per RayJob (volrayd's apiserver_request_total over the
# run: the client's requests, and the benchmark's one poll a second).
# "The same limits" is the same flags, meaning the same: KubeRay's
# operator has a token bucket of those limits per kind (controller-runtime
# makes a REST client per kind, client-go gives each a bucket), plus its
# recorder's and its Volcano clientset's; volrayd's remote client has one
# per kind too, Events' and Leases' own, and one for watches and lists.

if [ "$SMALL" = 1 ]; then
	: "${RAYJOBS:=20}" "${NODES:=20}" "${DURATION:=1s}" "${RUNS_RAYJOBS:=1}"
else
	: "${RAYJOBS:=1000}" "${NODES:=500}" "${DURATION:=10s}" "${RUNS_RAYJOBS:=3}"
fi
: "${LIMITS:=100/200 2000/4000}" "${EMBEDDED:=1}"
"$ANCHORS" path kuberay-operator >/dev/null 2>&1 ||
	die "kuberay-operator is not built: scripts/anchors.sh build kuberay-operator"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/anchors-rayjobs.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# one WHO LIMIT RUN: a kuberay.sh run; appends "seconds requests_per_job
# writes_per_job" to OUT/WHO-LIMIT.
one() {
	local who=$1 lim=$2 r=$3 log qps burst mode
	qps=${lim%/*} burst=${lim#*/}
	log=$OUT/$who-${lim%/*}-$r.log
	case $who in
	volray) mode="REMOTE=ray KUBE_QPS=$qps KUBE_BURST=$burst" ;;
	kuberay) mode="KUBERAY=1 KUBE_QPS=$qps KUBE_BURST=$burst" ;;
	embedded) mode="" ;;
	esac
	wait_quiet
	# shellcheck disable=SC2086
	env $mode N="$RAYJOBS" NODES="$NODES" DURATION="$DURATION" VOLRAYD="$VOLRAYD" \
	    sh "$TOP/bench/kuberay.sh" >"$log" 2>&1 || {
		tail -30 "$log"
		die "kuberay.sh ${mode:-(embedded)} failed"
	}
	local secs req wr
	secs=$(sed -n 's/.*all Complete and cleaned up after \([0-9.]*\) s.*/\1/p' "$log")
	req=$(sed -n 's/.*API requests \([0-9.]*\) per RayJob.*/\1/p' "$log")
	wr=$(sed -n 's/^API writes [0-9]* (\([0-9.]*\) per RayJob).*/\1/p' "$log")
	[ -n "$secs" ] && [ -n "$req" ] && [ -n "$wr" ] || {
		tail -30 "$log"
		die "no figures from kuberay.sh ${mode:-(embedded)}"
	}
	printf '  %-8s %-13s run %s: %4d RayJobs in %7.1f s; API requests %6.1f, writes %5.1f per RayJob (idle before: %s%%)\n' \
	    "$who" "$( [ "$who" = embedded ] && echo "no limit" || echo "QPS $lim")" "$r" \
	    "$RAYJOBS" "$secs" "$req" "$wr" "$IDLE"
	echo "$secs $req $wr" >>"$OUT/$who-${lim%/*}"
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
kr_version=$(basename "$(dirname "$(dirname "$("$ANCHORS" path kuberay-operator)")")")
echo "# anchors rayjobs: RAYJOBS=$RAYJOBS (head + 2 workers, HTTPMode, $DURATION simulated)" \
    "NODES=$NODES (16 CPUs, 64Gi, simulated) RUNS_RAYJOBS=$RUNS_RAYJOBS LIMITS=\"$LIMITS\" (QPS/burst)"
echo "# both: volrayd $commit ($VOLRAYD --no-local-node" \
    "--controllers '*,-raycluster,-rayjob,-rayservice': API, scheduler, nodes, other controllers)"
echo "# volray: volrayd --kubeconfig --roles controllers --controllers raycluster,rayjob,rayservice" \
    "--kube-api-qps Q --kube-api-burst B (bench/kuberay.sh REMOTE=ray)"
echo "# anchor: KubeRay ray-operator $kr_version --use-kubernetes-proxy --batch-scheduler=volcano" \
    "--qps Q --burst B (bench/kuberay.sh KUBERAY=1)"
[ "$EMBEDDED" = 0 ] || echo "# embedded: volrayd alone, its controllers inside (no client limit; bench/kuberay.sh)"
for r in $(seq 1 "$RUNS_RAYJOBS"); do
	for lim in $LIMITS; do
		# Who goes first alternates run by run.
		if [ $((r % 2)) = 1 ]; then
			one volray "$lim" "$r"
			one kuberay "$lim" "$r"
		else
			one kuberay "$lim" "$r"
			one volray "$lim" "$r"
		fi
	done
	[ "$EMBEDDED" = 0 ] || one embedded none "$r"
done

echo
echo "# $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s | %-36s | %-36s | %s\n' "" "volray's Ray controllers" "KubeRay's operator $kr_version" ""
printf '%-16s | %-22s %13s | %-22s %13s | %s\n' "client limit" "wall s (min-max)" "requests/job" \
    "wall s (min-max)" "requests/job" "ratio"
lines=()
last=""
for lim in $LIMITS; do
	q=${lim%/*}
	read -r vm vlo vhi <<<"$(stats "$OUT/volray-$q" 1)"
	read -r km klo khi <<<"$(stats "$OUT/kuberay-$q" 1)"
	vq=$(stats "$OUT/volray-$q" 2 | cut -d' ' -f1)
	kq=$(stats "$OUT/kuberay-$q" 2 | cut -d' ' -f1)
	ratio=$(awk -v a="$vm" -v b="$km" 'BEGIN { printf "%.2f", b / a }')
	printf '%-16s | %6.1f (%6.1f-%6.1f) %13.1f | %6.1f (%6.1f-%6.1f) %13.1f | %sx\n' \
	    "QPS $lim" "$vm" "$vlo" "$vhi" "$vq" "$km" "$klo" "$khi" "$kq" "$ratio"
	lines+=("ratio=$(awk -v a="$vq" -v b="$kq" 'BEGIN { printf "%.2f", b / a }') volray=$vq anchor=$kq unit=requests/RayJob anchor_name=kuberay-operator what=$RAYJOBS-rayjobs-requests-qps-$q")
	line="ratio=$ratio volray=$vm anchor=$km unit=s anchor_name=kuberay-operator what=$RAYJOBS-rayjobs-wall-qps-$q"
	# The headline: the first LIMITS (KubeRay's defaults), printed last.
	if [ -z "$last" ]; then last=$line; else lines+=("$line"); fi
	lifted=$km
done
if [ "$EMBEDDED" = 1 ]; then
	read -r em elo ehi <<<"$(stats "$OUT/embedded-none" 1)"
	ew=$(stats "$OUT/embedded-none" 3 | cut -d' ' -f1)
	printf '%-16s | %6.1f (%6.1f-%6.1f) %13s | (against the last limit above)       | %sx\n' \
	    "embedded" "$em" "$elo" "$ehi" "$ew writes" \
	    "$(awk -v a="$em" -v b="$lifted" 'BEGIN { printf "%.2f", b / a }')"
	lines+=("ratio=$(awk -v a="$em" -v b="$lifted" 'BEGIN { printf "%.2f", b / a }') volray=$em anchor=$lifted unit=s anchor_name=kuberay-operator what=$RAYJOBS-rayjobs-wall-embedded-against-qps-${lim%/*}")
fi
echo
for l in "${lines[@]}" "$last"; do
	echo "$l"
done
