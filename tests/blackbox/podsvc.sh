#!/bin/sh
# Services and cluster DNS on the local node's pod network
# (--pod-network=namespaces, volrayd(8) The pod network), from the
# Service range --service-cluster-ip-range gives: a ClusterIP
# with a named targetPort reaches both ready pods (kube-proxy's nftables
# mode in the node's namespace), a port the Service lacks or a Service
# with no ready pod is refused; DNS (dnsmasq in the node's namespace)
# answers SVC, SVC.NS, SVC.NS.svc.cluster.local, a headless Service's
# endpoints and HOST.SUBDOMAIN, with the kubelet's resolv.conf; a deleted
# Service's rules and records go; a kill -9 leaves dnsmasq for the next
# volrayd to replace; dnsmasq killed comes back (an Event on the Node); a
# clean stop leaves no dnsmasq.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: pods share the host's network"
PATH=$PATH:/usr/sbin:/sbin
for t in ip nft dnsmasq; do
	command -v $t >/dev/null 2>&1 ||
	    skip "no $t (Debian's iproute2, nftables, dnsmasq-base)"
done
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
PY=$(command -v python3)

LOCAL_NODE=1
start_daemon --pod-network=namespaces --service-cluster-ip-range 10.97.0.0/24
NODE=$(hostname | tr 'A-Z' 'a-z')
H=$(sed -n 's/.*podnet: the node.s namespace \(vr[0-9a-f]*\).*/\1/p' "$WORK/volrayd.log" | head -n 1)
[ -n "$H" ] || fail "no node namespace"

# --service-cluster-ip-range: the kubernetes Service has its first
# address; an address outside it is refused.
expect_eq 10.97.0.1 "$(k get svc kubernetes -o jsonpath='{.spec.clusterIP}')" "the kubernetes Service's ClusterIP"
out=$(k create service clusterip outside --clusterip=10.96.0.50 --tcp=80 2>&1) &&
	fail "a cluster IP outside the range was taken: $out"
expect_contains "$out" "the provided network does not match the current range" "outside the range"
pass "the Service range from --service-cluster-ip-range"

# Each pod answers with its host name.
SERVE="import http.server, socket; H = type('H', (http.server.BaseHTTPRequestHandler,), {'do_GET': lambda s: (s.send_response(200), s.end_headers(), s.wfile.write(socket.gethostname().encode()))}); http.server.HTTPServer(('', 8080), H).serve_forever()"
for p in a b; do
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $p, labels: {app: web}}
spec:
  nodeName: $NODE
  hostname: $p
  subdomain: hl
  containers:
  - name: c
    image: python
    command: [$PY, -c, "$SERVE"]
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {tcpSocket: {port: http}, periodSeconds: 1}
YAML
done
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: web, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: hl}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: web, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: empty}
spec:
  selector: {app: nothing}
  ports: [{port: 80}]
YAML
k wait --for=condition=Ready pod/a pod/b --timeout=30s >/dev/null || fail "pods not Ready"
A=$(k get pod a -o jsonpath='{.status.podIP}')
B=$(k get pod b -o jsonpath='{.status.podIP}')
WEB=$(k get svc web -o jsonpath='{.spec.clusterIP}')
case "$WEB" in 10.97.0.*) ;; *) fail "web's ClusterIP $WEB is not from 10.97.0.0/24" ;; esac
EMPTY=$(k get svc empty -o jsonpath='{.spec.clusterIP}')
# The endpoints controller lists both (the rules follow its Endpoints).
wait_eq 2 "web's ready endpoints" sh -c "kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w"

run_in() { # POD PYTHON-CODE ARGS...
	_p=$1 _c=$2
	shift 2
	k exec "$_p" -- "$PY" -c "$_c" "$@"
}
GET='import sys, urllib.request
seen = set()
for i in range(int(sys.argv[2])):
    try: seen.add(urllib.request.urlopen(sys.argv[1], timeout=3).read().decode())
    except Exception as e: seen.add("error: %s" % getattr(e, "reason", e))
print(" ".join(sorted(seen)))'
wait_eq "a b" "web's ClusterIP from pod a reaches both pods" run_in a "$GET" "http://$WEB/" 30
expect_eq "a b" "$(run_in b "$GET" "http://$WEB/" 30)" "web's ClusterIP from pod b"
expect_eq "error: [Errno 111] Connection refused" "$(run_in a "$GET" "http://$WEB:81/" 1)" \
	"a port web does not have"
expect_eq "error: [Errno 111] Connection refused" "$(run_in a "$GET" "http://$EMPTY/" 1)" \
	"a Service with no ready pod"
# volrayd's own sockets (podnet_socket, podnet_tcp_connect) are made in
# the node's namespace: a ClusterIP works from there too (nft's output
# hook).
got=$(ip netns exec "$H" "$PY" -c "$GET" "http://$WEB/" 30)
expect_eq "a b" "$got" "web's ClusterIP from the node's namespace"
NFT=$(ip netns exec "$H" nft list ruleset)
expect_contains "$NFT" "$WEB . tcp . 80" "web in the node's service-ips map"
expect_contains "$NFT" "dnat to $A:8080" "a DNAT to pod a's port (targetPort by name)"
pass "a ClusterIP with a named targetPort reaches both ready pods; no endpoint or port is refused"

# Cluster DNS.
expect_eq "search default.svc.cluster.local svc.cluster.local cluster.local
nameserver $(ip -n "$H" -4 -o addr show dev br0 | sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p')
options ndots:5" "$(k exec a -- cat /etc/resolv.conf)" "the pod's resolv.conf"
# dnsPolicy None: spec.dnsConfig alone, as the kubelet writes it.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: dnsnone}
spec:
  nodeName: $NODE
  dnsPolicy: None
  dnsConfig:
    nameservers: [192.0.2.53]
    searches: [one.example, two.example]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  containers:
  - {name: c, image: busybox, command: [sleep, "1000"]}
YAML
k wait --for=condition=Ready pod/dnsnone --timeout=20s >/dev/null || fail "dnsnone not Ready"
expect_eq "search one.example two.example
nameserver 192.0.2.53
options ndots:2 edns0" "$(k exec dnsnone -- cat /etc/resolv.conf)" "dnsPolicy None's resolv.conf"
k delete pod dnsnone --grace-period=0 >/dev/null
RESOLVE='import socket, sys
for n in sys.argv[1:]:
    try: print(n, " ".join(sorted({a[4][0] for a in socket.getaddrinfo(n, 80, socket.AF_INET, socket.SOCK_STREAM)})))
    except Exception as e: print(n, "error", e)'
got=$(run_in a "$RESOLVE" web web.default web.default.svc.cluster.local kubernetes.default hl b.hl)
expect_eq "web $WEB
web.default $WEB
web.default.svc.cluster.local $WEB
kubernetes.default $(k get svc kubernetes -o jsonpath='{.spec.clusterIP}')
hl $(printf '%s\n' "$A" "$B" | sort | tr '\n' ' ' | sed 's/ $//')
b.hl $B" "$got" "names from pod a"
expect_eq "b" "$(run_in a "$GET" "http://web.default.svc.cluster.local/" 30 | tr ' ' '\n' | grep -x b)" \
	"pod a to the Service by name"
expect_eq "b" "$(run_in a "$GET" "http://b.hl:8080/" 1)" "pod a to pod b by hostname.subdomain"
pass "cluster DNS: Services, a headless Service's endpoints, hostname.subdomain, the kubelet's resolv.conf (dnsPolicy None too)"

# A deleted Service: its rules and records go.
k delete svc web >/dev/null
wait_eq "" "web's rules after its deletion" sh -c "ip netns exec $H nft list ruleset | grep -F '$WEB . tcp'"
wait_eq "web error [Errno -2] Name or service not known" "web's name after its deletion" \
	run_in a "$RESOLVE" web
pass "a deleted Service's rules and records go"

# kill -9: dnsmasq stays; the next volrayd replaces it and answers.
DPID=$(cat "$DATA/dns/dnsmasq.pid")
kill -0 "$DPID" || fail "no dnsmasq"
stop_daemon KILL
kill -0 "$DPID" || fail "dnsmasq died with volrayd"
start_daemon --pod-network=namespaces --service-cluster-ip-range 10.97.0.0/24
i=0
while kill -0 "$DPID" 2>/dev/null && ! grep -q '^[^ ]* ([^)]*) Z' "/proc/$DPID/stat" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the old dnsmasq outlived the restart"; sleep 0.1
done
DPID2=$(cat "$DATA/dns/dnsmasq.pid")
[ "$DPID2" != "$DPID" ] || fail "no new dnsmasq"
wait_eq "b.hl $B" "b.hl after the restart" run_in a "$RESOLVE" b.hl
pass "kill -9 then restart: the old dnsmasq goes, a new one answers"

# The DNS server killed: volrayd says so on the Node and starts it again.
kill -9 "$DPID2"
wait_eq ClusterDNSDown "the Node's event" \
	k get events --field-selector "involvedObject.kind=Node,reason=ClusterDNSDown" \
	-o jsonpath='{.items[0].reason}'
msg=$(k get events --field-selector "involvedObject.kind=Node,reason=ClusterDNSDown" -o jsonpath='{.items[0].message}')
expect_contains "$msg" "signal 9): restarting it in 1000 ms" "the event's message"
wait_eq "b.hl $B" "b.hl after dnsmasq's restart" run_in a "$RESOLVE" b.hl
DPID3=$(cat "$DATA/dns/dnsmasq.pid")
[ "$DPID3" != "$DPID2" ] || fail "no new dnsmasq after the kill"
DPID2=$DPID3
pass "dnsmasq killed: a ClusterDNSDown Warning on the Node, started again, answering"

stop_daemon
i=0
while kill -0 "$DPID2" 2>/dev/null && ! grep -q '^[^ ]* ([^)]*) Z' "/proc/$DPID2/stat" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 40 ] || fail "dnsmasq outlived volrayd's SIGTERM"; sleep 0.05
done
! ip netns list | grep -q "^$H" || fail "namespaces left: $(ip netns list | grep "^$H")"
pass "a clean stop leaves no dnsmasq and no namespace"
