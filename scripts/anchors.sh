#!/bin/sh
# Build and run the anchors: the real programs volray is measured and
# tested against (kube-apiserver on etcd, kube-scheduler, KubeRay's
# operator, Volcano's scheduler and controllers, kwok).
#
#   anchors.sh build [NAME...]      build the versions pinned in
#                                   scripts/anchor-versions (or NAMEs)
#   anchors.sh path NAME            print a built binary's path
#   anchors.sh kube-apiserver start DIR
#   anchors.sh kube-apiserver stop DIR
#   anchors.sh kuberay-operator|vc-scheduler|vc-controller-manager|
#              kube-scheduler|kwok start DIR --kubeconfig FILE [ARG...]
#
# build: each NAME at VERSION from the Go module proxy (GOPROXY, default
# https://proxy.golang.org, no direct fetches) with the Go in
# $VOLRAY_GO (default /usr/local/go/bin/go, else go on PATH), niced and
# one package at a time (go build -p 1: the machine's cores are shared
# with tests), into DIR/NAME/VERSION/bin/NAME, where DIR is
# $VOLRAY_ANCHORS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/volray/anchors,
# outside the tree. Go's module and build caches are DIR/go-mod and
# DIR/go-build, so removing DIR removes everything. A module is built in
# DIR/NAME/VERSION/src with the go.mod scripts/anchors/BASENAME/go.mod
# when the tree has one (k8s.io/kubernetes and Volcano replace their
# staging modules with paths their zips lack), else one that requires
# the module alone. A binary built (DIR/NAME/VERSION/.volray-anchor
# written once it ran) is left alone, so a second run builds nothing;
# a failed build leaves no binary and makes the exit status 1.
#
# kube-apiserver start DIR: Debian's etcd (etcd-server) and kube-apiserver
# on free loopback ports, data, keys and logs in DIR: a CA (DIR/ca.crt), a
# serving certificate for 127.0.0.1 and localhost, service-account keys,
# the admin (user admin in system:masters) as a client certificate in
# DIR/kubeconfig and as a bearer token in DIR/token (--token-auth-file),
# --authorization-mode=Node,RBAC, as kubeadm a client certificate for
# kubelets (CN kube-apiserver-kubelet-client, O system:masters: volray's
# agent endpoints answer it) and kubelets reached at their InternalIP
# first (--kubelet-preferred-address-types), no endpoints for the kubernetes Service
# (its address would be loopback); returns once /readyz answers ok (60 s
# at most), pids in DIR/etcd.pid and DIR/kube-apiserver.pid, logs in
# DIR/etcd.log and DIR/kube-apiserver.log. stop DIR ends both (TERM, then
# KILL after 10 s) and removes the pid files.
#
# The other starts exec the binary in the foreground against the API server
# of --kubeconfig FILE (any: volrayd's, or the kube-apiserver above), with
# its logs on stderr and any state in DIR; further arguments are passed on.
# Their client-go lists through a watch (sendInitialEvents, the
# WatchListClient feature, on in client-go 0.35: KubeRay's operator); a
# server that ignores it leaves their caches unsynced, waiting for the
# initial-events-end bookmark (volrayd serves watch-lists:
# tests/blackbox/kuberayop.sh runs KubeRay's operator with them on);
# KUBE_FEATURE_WatchListClient=false in the environment makes them list and
# watch as before.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${VOLRAY_ANCHORS_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/volray/anchors}
versions=$top/scripts/anchor-versions

say() { echo "anchors: $*"; }
die() {
	echo "anchors: $*" >&2
	exit 1
}

usage() {
	cat >&2 <<EOF
usage: anchors.sh build [NAME...]
       anchors.sh path NAME
       anchors.sh kube-apiserver start|stop DIR
       anchors.sh kuberay-operator|vc-scheduler|vc-controller-manager|kube-scheduler|kwok start DIR --kubeconfig FILE [ARG...]
EOF
	exit 2
}

# pinned NAME: "VERSION MODULE PACKAGE" of NAME in scripts/anchor-versions.
pinned() {
	sed -e 's/#.*//' "$versions" | awk -v n="$1" \
	    '$1 == n { print $2, $3, $4; found = 1 } END { exit !found }'
}

names() {
	sed -e 's/#.*//' "$versions" | awk 'NF { print $1 }'
}

# known NAME: NAME is pinned, or fail naming the ones that are.
known() {
	pinned "$1" >/dev/null ||
	    die "$1: not an anchor (scripts/anchor-versions names:" $(names)")"
}

gobin() {
	if [ -n "${VOLRAY_GO:-}" ]; then
		echo "$VOLRAY_GO"
	elif [ -x /usr/local/go/bin/go ]; then
		echo /usr/local/go/bin/go
	else
		command -v go || die "no Go (/usr/local/go/bin/go, go on PATH, or \$VOLRAY_GO)"
	fi
}

# binpath NAME: where NAME's binary is (or would be) built.
binpath() {
	set -- "$1" $(pinned "$1")
	echo "$dir/$1/$2/bin/$1"
}

# built NAME: NAME's binary is there and ran once.
built() {
	b=$(binpath "$1")
	[ -x "$b" ] && [ -f "$(dirname "$(dirname "$b")")/.volray-anchor" ]
}

# build1 NAME
build1() {
	name=$1
	known "$name"
	set -- $(pinned "$name")
	version=$1 module=$2 pkg=$3
	out=$dir/$name/$version
	if built "$name"; then
		say "$name $version is built: $out/bin/$name"
		return 0
	fi
	go=$(gobin)
	rm -rf "$out"
	mkdir -p "$out/src" "$out/bin"
	gomod=$top/scripts/anchors/${module##*/}/go.mod
	if [ -f "$gomod" ]; then
		grep -Eq "^(require)?[[:space:]]+$module[[:space:]]+$version([[:space:]]|\$)" "$gomod" ||
		    die "$gomod does not require $module $version (scripts/anchor-versions pins it)"
		cp "$gomod" "$out/src/go.mod"
	else
		printf 'module volray.local/anchors/%s\n\ngo 1.24.0\n\nrequire %s %s\n' \
		    "$name" "$module" "$version" >"$out/src/go.mod"
	fi
	ldflags="-s -w"
	case "$module" in
	k8s.io/kubernetes)
		# What `kubectl version` shows (the default is v0.0.0-master).
		minor=${version#v1.}
		minor=${minor%%.*}
		v=k8s.io/component-base/version
		ldflags="$ldflags -X $v.gitVersion=$version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
		;;
	esac
	say "building $name $version ($pkg) into $out/bin (niced, go build -p 1)"
	t0=$(date +%s)
	if ! (cd "$out/src" &&
	    GOPROXY=${GOPROXY:-https://proxy.golang.org} GOTOOLCHAIN=local \
	    GOFLAGS="-mod=mod -modcacherw -buildvcs=false" \
	    GOMODCACHE="$dir/go-mod" GOCACHE="$dir/go-build" CGO_ENABLED=0 \
	    nice -n 19 "$go" build -p 1 -trimpath -ldflags "$ldflags" \
	    -o "$out/bin/$name.tmp" "$pkg") >"$out/build.log" 2>&1; then
		tail -n 20 "$out/build.log" >&2
		rm -f "$out/bin/$name.tmp"
		say "$name $version: build failed after $(($(date +%s) - t0)) s (log: $out/build.log)"
		return 1
	fi
	mv "$out/bin/$name.tmp" "$out/bin/$name"
	case "$module" in
	sigs.k8s.io/kwok)
		# kwok runs nothing without stages: kwokctl's defaults
		# (kustomize/stage/fast: nodes Ready with Leases, pods Ready,
		# Completed and deleted at once), from the module, as one file.
		st=$dir/go-mod/$module@$version/kustomize/stage
		for f in "$st"/node/fast/node-*.yaml \
		    "$st"/node/heartbeat-with-lease/node-*.yaml \
		    "$st"/pod/fast/pod-*.yaml; do
			[ -f "$f" ] || { say "$name $version: no stage $f"; return 1; }
			echo ---
			cat "$f"
		done >"$out/stages.yaml"
		;;
	esac
	# It runs: --help (exit 0 for most; 2 for Volcano's, whose
	# --version does).
	"$out/bin/$name" --help >/dev/null 2>&1 ||
	    "$out/bin/$name" --version >/dev/null 2>&1 ||
	    { say "$name $version: built but does not run (--help, --version)"; return 1; }
	printf 'name %s\nversion %s\npackage %s\ngo %s\nseconds %s\n' \
	    "$name" "$version" "$pkg" "$("$go" env GOVERSION)" \
	    "$(($(date +%s) - t0))" >"$out/.volray-anchor"
	say "$name $version built in $(($(date +%s) - t0)) s: $out/bin/$name"
}

cmd_build() {
	[ $# -gt 0 ] || set -- $(names)
	for n in "$@"; do
		known "$n"
	done
	rc=0
	for n in "$@"; do
		build1 "$n" || rc=1
	done
	return $rc
}

cmd_path() {
	[ $# -eq 1 ] || usage
	known "$1"
	built "$1" || die "$1 is not built ($(binpath "$1") is missing): run scripts/anchors.sh build $1"
	binpath "$1"
}

# free_ports N: N distinct loopback ports nobody listens on right now.
free_ports() {
	python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
' "$1"
}

# alive PIDFILE NAME: the process in PIDFILE runs and is NAME (not a
# zombie, not a pid used again by another program).
alive() {
	[ -f "$1" ] || return 1
	p=$(cat "$1")
	case "$p" in '' | *[!0-9]*) return 1 ;; esac
	kill -0 "$p" 2>/dev/null || return 1
	[ -r "/proc/$p/stat" ] || return 0
	[ "$(sed -e 's/.*) //' -e 's/ .*//' "/proc/$p/stat")" != Z ] || return 1
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "$2"
}

# stop1 DIR NAME: end the process of DIR/NAME.pid (TERM, KILL after 10 s).
stop1() {
	pf=$1/$2.pid
	if alive "$pf" "$2"; then
		p=$(cat "$pf")
		kill "$p" 2>/dev/null || true
		i=0
		while alive "$pf" "$2"; do
			i=$((i + 1))
			if [ $i -eq 100 ]; then
				say "$2 ($p) did not end in 10 s: killing it"
				kill -9 "$p" 2>/dev/null || true
			fi
			[ $i -lt 200 ] || die "$2 ($p) does not end"
			sleep 0.1
		done
		# An exiting process has no command line any more (alive says
		# no) before it is a zombie or gone: wait for that too.
		i=0
		while kill -0 "$p" 2>/dev/null && [ -r "/proc/$p/stat" ] &&
		    [ "$(sed -e 's/.*) //' -e 's/ .*//' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
		    [ $i -lt 50 ]; do
			i=$((i + 1))
			sleep 0.1
		done
	fi
	rm -f "$pf"
}

# certs DIR: a CA, a serving certificate for 127.0.0.1 and localhost, the
# admin's client certificate, the service-account key pair, and a static
# token of the admin's in DIR/token.
certs() {
	(
	cd "$1" || exit 1
	umask 077
	ssl() { openssl "$@" 2>/dev/null; }
	ssl req -x509 -newkey rsa:2048 -nodes -days 3650 \
	    -subj "/CN=volray-anchors-ca" -keyout ca.key -out ca.crt &&
	ssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
	    -keyout server.key -out server.csr &&
	printf '%s\n%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc" \
	    "extendedKeyUsage=serverAuth" >server.ext &&
	ssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key \
	    -CAcreateserial -days 3650 -extfile server.ext -out server.crt &&
	ssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" \
	    -keyout admin.key -out admin.csr &&
	printf 'extendedKeyUsage=clientAuth\n' >admin.ext &&
	ssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key \
	    -CAcreateserial -days 3650 -extfile admin.ext -out admin.crt &&
	ssl req -newkey rsa:2048 -nodes \
	    -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
	    -keyout kubelet-client.key -out kubelet-client.csr &&
	ssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key \
	    -CAcreateserial -days 3650 -extfile admin.ext \
	    -out kubelet-client.crt &&
	ssl genrsa -out sa.key 2048 &&
	ssl rsa -in sa.key -pubout -out sa.pub &&
	ssl rand -hex 24 >token &&
	printf '%s,admin,admin,system:masters\n' "$(cat token)" >tokens.csv &&
	rm -f server.csr admin.csr kubelet-client.csr server.ext admin.ext \
	    ca.srl
	)
}

apiserver_start() {
	d=$1
	bin=$(cmd_path kube-apiserver) || exit 1
	command -v etcd >/dev/null 2>&1 ||
	    die "no etcd on PATH (Debian's etcd-server; scripts/deps.sh installs it)"
	command -v openssl >/dev/null 2>&1 || die "no openssl on PATH"
	mkdir -p "$d"
	d=$(cd "$d" && pwd)
	for n in etcd kube-apiserver; do
		! alive "$d/$n.pid" "$n" ||
		    die "$n already runs from $d (pid $(cat "$d/$n.pid")): anchors.sh kube-apiserver stop $d"
	done
	rm -rf "$d/etcd-data" "$d/kubeconfig"
	certs "$d" || die "openssl could not make the certificates in $d"
	set -- $(free_ports 3)
	cport=$1 pport=$2 aport=$3
	etcd --name anchor --data-dir "$d/etcd-data" \
	    --listen-client-urls "http://127.0.0.1:$cport" \
	    --advertise-client-urls "http://127.0.0.1:$cport" \
	    --listen-peer-urls "http://127.0.0.1:$pport" \
	    --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
	    --initial-cluster "anchor=http://127.0.0.1:$pport" \
	    </dev/null >"$d/etcd.log" 2>&1 9>&- &
	echo $! >"$d/etcd.pid"
	"$bin" --etcd-servers "http://127.0.0.1:$cport" \
	    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
	    --secure-port "$aport" --cert-dir "$d/certs" \
	    --tls-cert-file "$d/server.crt" \
	    --tls-private-key-file "$d/server.key" \
	    --client-ca-file "$d/ca.crt" --token-auth-file "$d/tokens.csv" \
	    --service-account-issuer https://kubernetes.default.svc.cluster.local \
	    --service-account-key-file "$d/sa.pub" \
	    --service-account-signing-key-file "$d/sa.key" \
	    --service-cluster-ip-range 10.0.0.0/24 \
	    --kubelet-client-certificate "$d/kubelet-client.crt" \
	    --kubelet-client-key "$d/kubelet-client.key" \
	    --kubelet-preferred-address-types InternalIP,ExternalIP,Hostname \
	    --authorization-mode Node,RBAC --allow-privileged=true \
	    --endpoint-reconciler-type none --profiling=false \
	    </dev/null >"$d/kube-apiserver.log" 2>&1 9>&- &
	echo $! >"$d/kube-apiserver.pid"
	cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: anchor
  cluster:
    server: https://127.0.0.1:$aport
    certificate-authority: $d/ca.crt
users:
- name: admin
  user:
    client-certificate: $d/admin.crt
    client-key: $d/admin.key
contexts:
- name: anchor
  context: {cluster: anchor, user: admin}
current-context: anchor
EOF
	# Ready: /readyz answers ok (etcd reached, the post-start hooks and
	# the bootstrap RBAC policy done). Up to 60 s.
	i=0
	until [ "$(curl -s --max-time 2 --cacert "$d/ca.crt" \
	    -H "Authorization: Bearer $(cat "$d/token")" \
	    "https://127.0.0.1:$aport/readyz" 2>/dev/null)" = ok ]; do
		i=$((i + 1))
		if ! alive "$d/etcd.pid" etcd ||
		    ! alive "$d/kube-apiserver.pid" kube-apiserver ||
		    [ $i -ge 600 ]; then
			tail -n 15 "$d/etcd.log" "$d/kube-apiserver.log" >&2
			stop1 "$d" kube-apiserver
			stop1 "$d" etcd
			die "kube-apiserver did not become ready in $d (logs: $d/etcd.log, $d/kube-apiserver.log)"
		fi
		sleep 0.1
	done
	say "kube-apiserver $(pinned kube-apiserver | cut -d' ' -f1) on https://127.0.0.1:$aport (etcd http://127.0.0.1:$cport) ready after $((i / 10)) s; kubeconfig $d/kubeconfig"
}

apiserver_stop() {
	[ -d "$1" ] || die "$1: no such directory"
	stop1 "$1" kube-apiserver
	stop1 "$1" etcd
}

# run NAME DIR --kubeconfig FILE [ARG...]: exec NAME in the foreground.
run() {
	name=$1 d=$2
	shift 2
	[ $# -ge 2 ] && [ "$1" = --kubeconfig ] ||
	    die "$name start $d: want --kubeconfig FILE"
	kc=$2
	shift 2
	[ -r "$kc" ] || die "$kc: cannot read the kubeconfig"
	kc=$(cd "$(dirname "$kc")" && pwd)/$(basename "$kc")
	bin=$(cmd_path "$name") || exit 1
	mkdir -p "$d"
	cd "$d"
	case "$name" in
	kuberay-operator)
		# Go's flags (the last of a name wins); the kubeconfig is
		# controller-runtime's KUBECONFIG. Metrics and probes off
		# (0), so that it has no port to collide.
		KUBECONFIG=$kc exec "$bin" --use-kubernetes-proxy \
		    --enable-leader-election=false --metrics-addr=0 \
		    --health-probe-bind-address=0 \
		    --log-stdout-encoder=console "$@" ;;
	vc-scheduler | vc-controller-manager)
		# Healthz and metrics are off unless asked for.
		exec "$bin" --kubeconfig "$kc" --leader-elect=false "$@" ;;
	kube-scheduler)
		# --secure-port=0: no HTTPS endpoint (healthz, metrics).
		exec "$bin" --kubeconfig "$kc" --leader-elect=false \
		    --secure-port=0 "$@" ;;
	kwok)
		# The nodes annotated kwok.x-k8s.io/node=fake, as kwokctl's,
		# with kwokctl's default stages (built beside the binary); its
		# server (logs, exec, metrics) on a free loopback port.
		exec "$bin" --kubeconfig "$kc" \
		    --config "$(dirname "$(dirname "$bin")")/stages.yaml" \
		    --manage-all-nodes=false \
		    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		    --server-address "127.0.0.1:$(free_ports 1)" "$@" ;;
	esac
}

main() {
	[ $# -gt 0 ] || usage
	case "$1" in
	build) shift; cmd_build "$@" ;;
	path) shift; cmd_path "$@" ;;
	kube-apiserver)
		[ $# -eq 3 ] || usage
		case "$2" in
		start) apiserver_start "$3" ;;
		stop) apiserver_stop "$3" ;;
		*) usage ;;
		esac ;;
	kuberay-operator | vc-scheduler | vc-controller-manager | kube-scheduler | kwok)
		[ $# -ge 3 ] && [ "$2" = start ] || usage
		name=$1 d=$3
		shift 3
		run "$name" "$d" "$@" ;;
	*) usage ;;
	esac
}

# One line: sh has read the whole script before it runs, so a script
# edited during a long build does not change under it.
main "$@"; exit $?
