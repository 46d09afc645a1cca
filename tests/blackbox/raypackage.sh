#!/bin/sh
# volray ray job submit --working-dir on the local node (cli/cli_ray_package.c,
# core/ray/packages.c): the directory is zipped and uploaded to the head's
# package store as Ray's CLI does (GET, then PUT /api/packages/gcs/NAME),
# the job's runtime_env working_dir is gcs://NAME, and the entrypoint runs
# as a real process in the extracted directory; a second submission of the
# same directory to the same head (through a proxy that points the second
# RayJob at the first cluster) packs the same name and skips the upload,
# and its job runs on the stored package; a job naming a package
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

# The same directory to the same head: no second upload. Each `ray job
# submit` makes its own RayJob and cluster, so the second one goes through
# a proxy (plain HTTP to the CLI, the admin's TLS and token to the daemon)
# that says its RayJob's cluster is the first one: the CLI then packs
# the directory again, finds the package on that head (GET 200), skips
# the PUT and runs the job there. The proxy logs every request it passes.
cat >"$WORK/proxy.py" <<'PY'
import http.server, json, sys, vrtest
redirect, cluster, log = sys.argv[1], sys.argv[2], open(sys.argv[3], "a")
class P(http.server.BaseHTTPRequestHandler):
    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        log.write("%s %s\n" % (self.command, self.path)); log.flush()
        c = vrtest.https(timeout=30)
        h = dict(vrtest.HEADERS)
        if self.headers.get("Content-Type"):
            h["Content-Type"] = self.headers["Content-Type"]
        c.request(self.command, self.path, body, h)
        r = c.getresponse()
        data = r.read()
        if self.command == "GET" and self.path == redirect and r.status == 200:
            o = json.loads(data)
            if o.get("status", {}).get("rayClusterName"):
                o["status"]["rayClusterName"] = cluster
            data = json.dumps(o).encode()
        self.send_response(r.status)
        self.send_header("Content-Type", r.getheader("Content-Type") or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = forward
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), P)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$WORK/proxy.py" /apis/ray.io/v1/namespaces/default/rayjobs/pkg2 "$cl" "$WORK/proxy.log" \
	>"$WORK/proxy.port" 2>"$WORK/proxy.err" &
KILL_PIDS="$KILL_PIDS $!"
i=0
until [ -s "$WORK/proxy.port" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the proxy did not start: $(cat "$WORK/proxy.err")"
	sleep 0.05
done
out=$(KUBECONFIG=/dev/null vr --server "http://127.0.0.1:$(cat "$WORK/proxy.port")" \
	ray job submit --name pkg2 --head-cpu 100m --head-memory 256Mi --worker-replicas 0 \
	--working-dir "$WORK/app" --timeout 120s --no-wait -- sh run.sh 2>&1) ||
	fail "the second job submit --working-dir: $out ($(cat "$WORK/proxy.err"))"
expect_contains "$out" "Package gcs://$name already exists, skipping upload." "the second submission"
case "$out" in *Uploading*) fail "the second submission uploaded again: $out" ;; esac
grep -q "^GET $head/api/packages/gcs/$name\$" "$WORK/proxy.log" ||
	fail "the second submission did not ask the head for $name: $(cat "$WORK/proxy.log")"
if grep "^PUT " "$WORK/proxy.log"; then fail "a PUT went through the proxy"; fi
id=$(echo "$out" | sed -n 's/^Ray job submitted with ID //p')
[ -n "$id" ] || fail "no submission id in: $out"
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
for bad in '..%2Fescape.zip' 'semi%3Bcolon.zip' 'nozip'; do
	code=$(curl -s -o "$WORK/bad.out" -w '%{http_code}' -X PUT --data-binary x "$API$head/api/packages/gcs/$bad")
	expect_eq "400 Invalid package URI" "$code $(cat "$WORK/bad.out")" "PUT of the package name $bad"
done
pass "a second submission skips the upload and runs on the package; a missing one fails the job (RUNTIME_ENV_SETUP_FAILED); a bad name is refused (400)"
