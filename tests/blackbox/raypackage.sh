#!/bin/sh
# volray ray job submit --working-dir on the local node (cli/cli_ray_package.c,
# core/ray/packages.c): the directory is zipped and uploaded to the head's
# package store as Ray's CLI does (GET, then PUT /api/packages/gcs/NAME),
# the job's runtime_env working_dir is gcs://NAME, and the entrypoint runs
# as a real process in the extracted directory; a second submission of the
# same directory to the same head skips the upload; a job naming a package
# that is not there FAILED with RUNTIME_ENV_SETUP_FAILED; a package name
# that is not Ray's is refused.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
vr() { "$top_builddir/volray" "$@"; }

mkdir -p "$WORK/app/data"
echo "print-me-42" >"$WORK/app/data/word.txt"
printf 'cat data/word.txt\n' >"$WORK/app/run.sh"
out=$(vr ray job submit --name pkg --head-cpu 100m --head-memory 256Mi --worker-replicas 0 \
	--working-dir "$WORK/app" --timeout 120s -- sh run.sh 2>&1) || fail "job submit --working-dir: $out"
expect_contains "$out" "Creating a file package for local directory '$WORK/app'." "packing"
expect_contains "$out" "Uploading package gcs://_ray_pkg_" "uploading"
expect_contains "$out" "print-me-42" "the job ran in the extracted working dir"
expect_contains "$out" "finished with status SUCCEEDED" "the job's end"
cl=$(k get rayjob pkg -o jsonpath='{.status.rayClusterName}')
head="/api/v1/namespaces/default/services/$cl-head-svc:8265/proxy"
name=$(echo "$out" | sed -n 's|^Uploading package gcs://\(_ray_pkg_[0-9a-f]*\.zip\)\.$|\1|p')
[ -n "$name" ] || fail "no package name in: $out"
k get --raw "$head/api/packages/gcs/$name" >/dev/null || fail "the head does not have $name"
pass "working dir packed, uploaded, extracted; the entrypoint read its file"

# The same directory to the same head: no second upload.
out=$(curl -fsS -X POST -H 'Content-Type: application/json' "$API$head/api/jobs/" \
	-d "{\"entrypoint\": \"sh run.sh\", \"runtime_env\": {\"working_dir\": \"gcs://$name\"}}") ||
	fail "submit again: $out"
id=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["submission_id"])')
i=0
until [ "$(k get --raw "$head/api/jobs/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" = SUCCEEDED ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "second job on the same package did not succeed"
	sleep 0.1
done
expect_contains "$(k get --raw "$head/api/jobs/$id/logs")" "print-me-42" "second job's output"
out=$(curl -fsS -X POST -H 'Content-Type: application/json' "$API$head/api/jobs/" \
	-d '{"entrypoint": "sh run.sh", "runtime_env": {"working_dir": "gcs://_ray_pkg_0000000000000000.zip"}}') ||
	fail "submit with a missing package: $out"
id=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["submission_id"])')
i=0
until k get --raw "$head/api/jobs/$id" | grep -q RUNTIME_ENV_SETUP_FAILED; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "a missing package did not fail the job: $(k get --raw "$head/api/jobs/$id")"
	sleep 0.1
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary x "$API$head/api/packages/gcs/..%2Fescape.zip")
[ "$code" = 400 ] || [ "$code" = 404 ] || fail "a bad package name answered $code"
pass "the package is reused, a missing one fails the job (RUNTIME_ENV_SETUP_FAILED), a bad name is refused"
