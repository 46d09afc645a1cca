#!/bin/sh
# Nobody gets in without credentials: TLS by default with a generated CA
# (certificates reused across restarts, reissued for a new --tls-san), the
# admin's token in the kubeconfig, kube-apiserver's token file, client
# certificates signed by the CA, 401 for everything but the health checks
# and /version, plain HTTP only on loopback, TLS 1.2+ with ALPN http/1.1,
# the user's own serving certificate, and no token in the logs.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/tokens.csv" <<'CSV'
alice-token-0123456789abcdef,alice,1001,"dev,qa"
bob-token-0123456789abcdef,bob,1002
CSV
start_daemon --token-auth-file "$WORK/tokens.csv" --debug

# --- files and modes
for f in pki/ca.key pki/server.key pki/admin.token kubeconfig; do
	expect_eq 600 "$(stat -c %a "$DATA/$f")" "mode of $f"
done
for f in pki/ca.crt pki/server.crt; do
	[ -s "$DATA/$f" ] || fail "$f missing"
done
grep -q "certificate-authority-data: " "$DATA/kubeconfig" || fail "no CA in kubeconfig"
grep -q "server: https://127.0.0.1:$PORT" "$DATA/kubeconfig" || fail "kubeconfig server"
pass "DATA_DIR/pki and kubeconfig, keys 0600"

# --- the certificate: verified with the CA, for the names clients use
openssl verify -CAfile "$DATA/pki/ca.crt" "$DATA/pki/server.crt" >/dev/null ||
	fail "server.crt does not chain to ca.crt"
sans=$(openssl x509 -in "$DATA/pki/server.crt" -noout -ext subjectAltName)
for n in DNS:localhost "IP Address:127.0.0.1" "IP Address:0:0:0:0:0:0:0:1" \
    "DNS:$(hostname)"; do
	expect_contains "$sans" "$n" "server certificate SANs"
done
expect_eq ok "$(command curl -fsS --cacert "$CA" "https://localhost:$PORT/healthz")" \
	"https://localhost verified"
rc=0
command curl -fsS -o /dev/null "$API/healthz" 2>/dev/null || rc=$?
expect_eq 60 "$rc" "curl without the CA refuses the certificate"
pass "serving certificate verified by the CA, SANs localhost/127.0.0.1/::1/hostname"

# --- 401 without credentials or with wrong ones
for path in /api/v1/namespaces /apis /api /openapi/v3 /metrics \
    /apis/ray.io/v1/namespaces/default/rayjobs; do
	code=$(command curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$CA" "$API$path")
	expect_eq 401 "$code" "no credentials: $path"
done
expect_contains "$(cat "$WORK/body")" '"reason":"Unauthorized"' "401 Status body"
expect_contains "$(cat "$WORK/body")" '"kind":"Status"' "401 Status kind"
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	-H "Authorization: Bearer wrong-$TOKEN" "$API/api/v1/namespaces")
expect_eq 401 "$code" "wrong token"
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	-H "Authorization: Basic YWRtaW46YWRtaW4=" "$API/api/v1/namespaces")
expect_eq 401 "$code" "basic auth is not a credential"
for path in /healthz /livez /readyz /version /healthz/ping; do
	code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" "$API$path")
	expect_eq 200 "$code" "open path $path"
done
k --token=wrong get ns >/dev/null 2>"$WORK/err" && fail "kubectl with a wrong token"
expect_contains "$(cat "$WORK/err")" "You must be logged in to the server" "kubectl wrong token"
pass "401 without or with wrong credentials; health and /version open"

# --- tokens: the admin's, the token file's
# Authenticated, then refused by RBAC (no binding): 403 names the user.
k get ns default -o name >/dev/null || fail "admin kubeconfig"
k --token=alice-token-0123456789abcdef get ns default -o name 2>"$WORK/err" &&
	fail "alice has no binding but got in"
expect_contains "$(cat "$WORK/err")" 'User "alice" cannot get resource "namespaces"' "alice is authenticated"
k --token=bob-token-0123456789abcdef get ns default -o name 2>"$WORK/err" &&
	fail "bob has no binding but got in"
expect_contains "$(cat "$WORK/err")" 'User "bob" cannot get' "bob (no groups column) is authenticated"
k create rolebinding alice-view --clusterrole=view --group=qa -n default >/dev/null
k --token=alice-token-0123456789abcdef get cm -n default -o name >/dev/null ||
	fail "alice's group qa from the token file"
pass "admin token and --token-auth-file users with their groups"

# --- client certificates signed by the CA (CN user, O groups)
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$WORK/carol.key" -out "$WORK/carol.csr" -subj "/O=dev/O=ops/CN=carol" 2>/dev/null
openssl x509 -req -in "$WORK/carol.csr" -CA "$DATA/pki/ca.crt" -CAkey "$DATA/pki/ca.key" \
	-CAcreateserial -out "$WORK/carol.crt" -days 1 2>/dev/null || fail "signing carol"
k create clusterrolebinding ops-view --clusterrole=view --group=ops >/dev/null
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	--cert "$WORK/carol.crt" --key "$WORK/carol.key" "$API/api/v1/namespaces")
expect_eq 200 "$code" "client certificate signed by the CA (O=ops bound to view)"
code=$(command curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$CA" \
	--cert "$WORK/carol.crt" --key "$WORK/carol.key" -X POST \
	-H 'Content-Type: application/json' -d '{"metadata":{"name":"x"}}' \
	"$API/api/v1/namespaces/default/configmaps")
expect_eq 403 "$code" "carol may view, not create"
expect_contains "$(cat "$WORK/body")" 'User \"carol\" cannot create' "carol's 403"
k --token= --client-certificate="$WORK/carol.crt" --client-key="$WORK/carol.key" \
	--username= get ns default -o name >/dev/null 2>"$WORK/err" ||
	fail "kubectl with a client certificate: $(cat "$WORK/err")"
# volray with carol's certificate from a kubeconfig: file names relative
# to the kubeconfig's directory, then the same PEMs as *-data.
mkdir -p "$WORK/kc/pki"
cp "$CA" "$WORK/kc/pki/ca.crt"
cp "$WORK/carol.crt" "$WORK/carol.key" "$WORK/kc/pki/"
cat >"$WORK/kc/config" <<EOF
clusters:
- {name: c, cluster: {server: "$API", certificate-authority: pki/ca.crt}}
users:
- {name: carol, user: {client-certificate: pki/carol.crt, client-key: pki/carol.key}}
contexts:
- {name: carol, context: {cluster: c, user: carol}}
current-context: carol
EOF
expect_eq namespace/default "$(cd / && "$top_builddir/volray" --kubeconfig \
	"$WORK/kc/config" get ns default -o name 2>&1)" \
	"volray: a client certificate by relative file names"
cat >"$WORK/kc/data" <<EOF
clusters:
- {name: c, cluster: {server: "$API", certificate-authority-data: $(base64 -w0 "$CA")}}
users:
- name: carol
  user:
    client-certificate-data: $(base64 -w0 "$WORK/carol.crt")
    client-key-data: $(base64 -w0 "$WORK/carol.key")
contexts:
- {name: carol, context: {cluster: c, user: carol}}
current-context: carol
EOF
expect_eq namespace/default "$("$top_builddir/volray" --kubeconfig \
	"$WORK/kc/data" get ns default -o name 2>&1)" \
	"volray: a client certificate as *-data"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$WORK/rogue.key" -out "$WORK/rogue.crt" -subj "/O=system:masters/CN=mallory" \
	-days 1 2>/dev/null
rc=0
command curl -s -o /dev/null --cacert "$CA" --cert "$WORK/rogue.crt" \
	--key "$WORK/rogue.key" "$API/api/v1/namespaces" || rc=$?
[ "$rc" -ne 0 ] || fail "a self-signed client certificate was accepted"
pass "client certificates (curl, kubectl, volray from a kubeconfig): the CA's accepted, others refused in the handshake"

# --- TLS versions, ALPN, plain HTTP on the TLS port
echo | openssl s_client -connect "127.0.0.1:$PORT" -tls1_1 >/dev/null 2>&1 &&
	fail "TLS 1.1 accepted"
out=$(echo | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$CA" \
	-alpn h2,http/1.1 2>/dev/null)
expect_contains "$out" "ALPN protocol: http/1.1" "ALPN"
expect_contains "$out" "Verify return code: 0 (ok)" "s_client verifies"
out=$(command curl -s "http://127.0.0.1:$PORT/api/v1/namespaces")
expect_contains "$out" "Client sent an HTTP request to an HTTPS server." "plain HTTP to TLS"
curl -fs "$API/readyz" >/dev/null || fail "daemon unhealthy"
pass "TLS 1.2+, ALPN http/1.1, plain HTTP answered 400"

# --- no token in the logs (the daemon runs with --debug)
for t in "$TOKEN" alice-token-0123456789abcdef wrong-; do
	grep -q -- "$t" "$WORK/volrayd.log" && fail "a token reached the log"
done
pass "no token in the log"

# --- restart: certificates and token reused; a new --tls-san reissues
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256; }
ca0=$(fp "$DATA/pki/ca.crt")
srv0=$(fp "$DATA/pki/server.crt")
tok0=$TOKEN
stop_daemon
start_daemon
expect_eq "$ca0" "$(fp "$DATA/pki/ca.crt")" "CA reused"
expect_eq "$srv0" "$(fp "$DATA/pki/server.crt")" "serving certificate reused"
expect_eq "$tok0" "$TOKEN" "admin token reused"
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
	--cert "$WORK/carol.crt" --key "$WORK/carol.key" "$API/api/v1/namespaces")
expect_eq 200 "$code" "client certificate after a restart"
stop_daemon
start_daemon --tls-san api.example.internal --tls-san 10.1.2.3
expect_eq "$ca0" "$(fp "$DATA/pki/ca.crt")" "CA kept for a new SAN"
[ "$srv0" != "$(fp "$DATA/pki/server.crt")" ] || fail "serving certificate not reissued"
sans=$(openssl x509 -in "$DATA/pki/server.crt" -noout -ext subjectAltName)
expect_contains "$sans" "DNS:api.example.internal" "--tls-san DNS"
expect_contains "$sans" "IP Address:10.1.2.3" "--tls-san IP"
k get ns default -o name >/dev/null || fail "kubeconfig after reissue"
stop_daemon
pass "restarts reuse the CA, certificate and token; --tls-san reissues"

# --- the user's own serving certificate
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$WORK/myca.key" -out "$WORK/myca.crt" -subj "/CN=my-ca" -days 1 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$WORK/my.key" -out "$WORK/my.csr" -subj "/CN=my-server" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/my.ext"
openssl x509 -req -in "$WORK/my.csr" -CA "$WORK/myca.crt" -CAkey "$WORK/myca.key" \
	-CAcreateserial -extfile "$WORK/my.ext" -out "$WORK/my.crt" -days 1 2>/dev/null
start_daemon --tls-cert-file "$WORK/my.crt" --tls-private-key-file "$WORK/my.key"
code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/myca.crt" \
	-H "Authorization: Bearer $TOKEN" "$API/api/v1/namespaces")
expect_eq 200 "$code" "--tls-cert-file served"
stop_daemon
pass "--tls-cert-file and --tls-private-key-file"

# --- plain HTTP: loopback only, and credentials still required
if "$VOLRAYD" --data-dir "$WORK/p2" --listen 0.0.0.0:1 --plain-http \
    --share-dir "$top_srcdir" 2>"$WORK/err"; then
	fail "--plain-http accepted on 0.0.0.0"
fi
expect_contains "$(cat "$WORK/err")" "loopback" "--plain-http refusal"
[ ! -e "$WORK/p2/store" ] || fail "refused daemon opened a store"
printf 'only-two,columns\n' >"$WORK/bad.csv"
if "$VOLRAYD" --data-dir "$WORK/p3" --listen 127.0.0.1:1 \
    --token-auth-file "$WORK/bad.csv" --share-dir "$top_srcdir" 2>"$WORK/err"; then
	fail "a bad token file was accepted"
fi
expect_contains "$(cat "$WORK/err")" "line 1" "bad token file names the line"
start_daemon --plain-http
grep -q "server: http://127.0.0.1:$PORT" "$DATA/kubeconfig" || fail "plain kubeconfig"
code=$(command curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/namespaces")
expect_eq 401 "$code" "plain HTTP without a token"
code=$(command curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
	"http://127.0.0.1:$PORT/api/v1/namespaces")
expect_eq 200 "$code" "plain HTTP with the token"
# kubectl sends no bearer token over plain HTTP; volray does.
expect_eq namespace/default "$("$top_builddir/volray" get ns default -o name)" \
	"volray over plain HTTP"
pass "--plain-http only on loopback, still authenticated"
