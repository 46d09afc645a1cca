#!/bin/sh
# apiregistration.k8s.io/v1 APIServices as kube-apiserver's aggregator
# keeps them: the served group-versions' Local ones (made when asked, not
# deletable), stored ones beside them (create, get, list with selectors,
# patch, delete; kube-aggregator's validation), the Available condition
# its availability controller writes (Local; ServiceNotFound,
# EndpointsNotFound, MissingEndpoints, FailedDiscoveryCheck, Passed), and
# a service-backed one's group in discovery with its requests proxied to
# a small HTTPS server on loopback (an Endpoints object names it), who
# asks passed on in X-Remote-User, after RBAC on the request's group and
# resource as kube-apiserver authorizes it; 503 while it is not Available.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null 2>&1 || skip "no openssl to make the test server's certificate"
command -v python3 >/dev/null 2>&1 || skip "no python3 for the test server"
cat >"$WORK/tokens.csv" <<'EOF'
alice-token,alice,1001,"devs"
EOF
start_daemon --token-auth-file "$WORK/tokens.csv"
AS=v1alpha1.wardle.example.com

avail() {
	k get apiservice "$1" -o jsonpath='{.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}'
}

# --- Local ones: served group-versions, listed beside the stored ones
k apply -f - >/dev/null <<'YAML'
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.local.example.com, labels: {team: a}}
spec: {group: local.example.com, version: v1, groupPriorityMinimum: 100, versionPriority: 10}
YAML
expect_eq "True Local" "$(avail v1.local.example.com)" "a stored Local APIService is Available"
names=$(k get apiservices -o jsonpath='{.items[*].metadata.name}')
expect_contains " $names " " v1.apps " "the list holds the served group-versions"
expect_contains " $names " " v1.local.example.com " "the list holds the stored one"
expect_eq "$(printf '%s\n' $names | sort | tr '\n' ' ')" "$(printf '%s\n' $names | tr '\n' ' ')" "the list in name order"
expect_eq v1.local.example.com "$(k get apiservices -l team=a -o jsonpath='{.items[*].metadata.name}')" "label selector"
expect_eq v1.apps "$(k get apiservices --field-selector metadata.name=v1.apps -o jsonpath='{.items[*].metadata.name}')" "field selector"
k label apiservice v1.local.example.com team=b --overwrite >/dev/null
expect_eq b "$(k get apiservice v1.local.example.com -o jsonpath='{.metadata.labels.team}')" "a stored one updated"
out=$(k delete apiservice v1.apps 2>&1) && fail "a Local APIService was deleted"
expect_contains "$out" "served by this server itself" "delete of a Local one refused"
out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.batch}
spec: {group: batch, version: v1, groupPriorityMinimum: 100, versionPriority: 10, service: {namespace: default, name: x}}
YAML
) && fail "a Local APIService was overwritten"
expect_contains "$out" "served by this server itself" "apply over a Local one refused"
expect_eq "Local True" "$(k get apiservice v1.batch --no-headers | tr -s ' ' | cut -d' ' -f2-3)" "v1.batch still Local"
k delete apiservice v1.local.example.com >/dev/null
out=$(k get apiservice v1.local.example.com 2>&1) && fail "deleted APIService still there"
expect_contains "$out" "NotFound" "a stored one deleted"
pass "Local APIServices beside stored ones: list, selectors, update, delete; Local names refused"

# --- validation, as kube-aggregator's
out=$(k create -f - 2>&1 <<'YAML'
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.bad.example.com}
spec: {group: other.example.com, version: v1, groupPriorityMinimum: 0, versionPriority: 1001,
  caBundle: YWJj, insecureSkipTLSVerify: true, service: {name: x, port: 70000}}
YAML
) && fail "an invalid APIService was created"
for want in 'metadata.name: Invalid value: "v1.bad.example.com": must be `spec.version+"."+spec.group`' \
    'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000' \
    'spec.versionPriority: Invalid value: 1001: must be positive and less than 1000' \
    'spec.service.namespace: Required value' 'spec.service.port: Invalid value: 70000' \
    'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present'; do
	expect_contains "$out" "$want" "validation"
done
expect_eq "" "$(k get apiservices -o name | grep bad || true)" "nothing stored"
pass "invalid APIServices refused with kube-aggregator's causes"

# --- a service-backed one: its status, discovery and proxy
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
	fail "openssl could not make a certificate"
cat >"$WORK/wardle.py" <<'PY'
"""A stand-in for an aggregated API server: discovery and one list."""
import http.server, json, ssl, sys

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        gv = "/apis/wardle.example.com/v1alpha1"
        if self.path.split("?")[0] == gv:
            body = {"kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": "wardle.example.com/v1alpha1",
                    "resources": [{"name": "flunders", "singularName": "flunder",
                                   "namespaced": True, "kind": "Flunder",
                                   "verbs": ["get", "list"]}]}
        elif self.path.startswith(gv + "/namespaces/default/flunders"):
            body = {"kind": "FlunderList", "apiVersion": "wardle.example.com/v1alpha1",
                    "metadata": {}, "items": [{"kind": "Flunder",
                    "apiVersion": "wardle.example.com/v1alpha1",
                    "metadata": {"name": "f1", "namespace": "default"},
                    "spec": {"askedBy": self.headers.get("X-Remote-User", "")}}]}
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        b = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *args):
        pass

s = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = ctx.wrap_socket(s.socket, server_side=True)
with open(sys.argv[3], "w") as f:
    f.write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$WORK/wardle.py" "$WORK/cert.pem" "$WORK/key.pem" "$WORK/port.tmp" &
KILL_PIDS="$KILL_PIDS $!"
i=0
until [ -s "$WORK/port.tmp" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the test server did not start"
	sleep 0.05
done
SP=$(cat "$WORK/port.tmp")
# A port where nothing listens: the test server's, once it is closed.
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

k apply -f - >/dev/null <<YAML
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: $AS}
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {namespace: default, name: wardle}
YAML
expect_eq 443 "$(k get apiservice $AS -o jsonpath='{.spec.service.port}')" "service port defaulted"
wait_eq "False ServiceNotFound" "no Service" avail $AS
expect_contains "$(k get apiservice $AS -o jsonpath='{.status.conditions[0].message}')" 'service/wardle in "default" is not present' "its message"
out=$(k get --raw /apis/wardle.example.com/v1alpha1 2>&1) && fail "proxied while not Available"
expect_contains "$out" "ServiceUnavailable" "503 while not Available"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: wardle}
spec: {ports: [{name: https, port: 443, targetPort: $SP}]}
YAML
wait_eq "False EndpointsNotFound" "no Endpoints" avail $AS
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Endpoints
metadata: {name: wardle}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: other, port: $SP}]}]
YAML
wait_eq "False MissingEndpoints" "no address with the port's name" avail $AS
expect_eq "default/wardle False (MissingEndpoints)" "$(k get apiservice $AS --no-headers | tr -s ' ' | cut -d' ' -f2-4)" "kubectl get shows the reason"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Endpoints
metadata: {name: wardle}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: https, port: $DEAD}]}]
YAML
wait_eq "False FailedDiscoveryCheck" "nothing listening" avail $AS
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Endpoints
metadata: {name: wardle}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: https, port: $SP}]}]
YAML
k wait --for=condition=Available "apiservice/$AS" --timeout=15s >/dev/null || fail "never Available: $(avail $AS)"
expect_eq "True Passed all checks passed" "$(avail $AS) $(k get apiservice $AS -o jsonpath='{.status.conditions[0].message}')" "Available"
expect_eq "default/wardle True" "$(k get apiservice $AS --no-headers | tr -s ' ' | cut -d' ' -f2-3)" "kubectl get columns"
pass "the Available condition follows the Service, its Endpoints and the discovery check"

expect_contains "$(k get --raw /apis)" '"name":"wardle.example.com","versions":[{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}]' "the group in /apis"
expect_contains "$(k get --raw /apis/wardle.example.com)" '"kind":"APIGroup"' "/apis/GROUP"
expect_contains "$(k get --raw /apis/wardle.example.com/v1alpha1)" '"name": "flunders"' "the group-version's discovery, proxied"
expect_eq "flunders" "$(k api-resources --api-group=wardle.example.com --no-headers | cut -d' ' -f1)" "kubectl api-resources"
expect_eq "f1 volray-admin" "$(k get flunders -o jsonpath='{.items[0].metadata.name} {.items[0].spec.askedBy}')" "kubectl get flunders, proxied with X-Remote-User"
pass "discovery lists the aggregated group; its requests go to its Service's server"

# caBundle instead of insecureSkipTLSVerify: another CA fails the check,
# the server's own certificate passes it.
k patch apiservice $AS --type=merge -p "{\"spec\":{\"insecureSkipTLSVerify\":null,\"caBundle\":\"$(base64 -w0 "$DATA/pki/ca.crt")\"}}" >/dev/null
wait_eq "False FailedDiscoveryCheck" "a caBundle that does not sign the server's certificate" avail $AS
k patch apiservice $AS --type=merge -p "{\"spec\":{\"caBundle\":\"$(base64 -w0 "$WORK/cert.pem")\"}}" >/dev/null
wait_eq "True Passed" "the server's certificate as caBundle" avail $AS
expect_eq "f1" "$(k get flunders -o jsonpath='{.items[0].metadata.name}')" "proxied with the caBundle"
pass "caBundle: the server's certificate checked"

# RBAC before the proxy, on the aggregated group's resource.
out=$(k --token=alice-token get flunders 2>&1) && fail "alice listed flunders without a binding"
expect_contains "$out" 'flunders.wardle.example.com is forbidden: User "alice" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "default"' "403 before the proxy"
k create role flunder-reader -n default --verb=list --resource=flunders.wardle.example.com >/dev/null
k create rolebinding alice-flunders -n default --role=flunder-reader --user=alice >/dev/null
wait_eq "f1 alice" "alice through a RoleBinding" k --token=alice-token get flunders -o jsonpath='{.items[0].metadata.name} {.items[0].spec.askedBy}'
pass "RBAC on the aggregated resource before the proxy; the user passed on"
