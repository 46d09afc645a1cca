# Helpers of the volray client's tests (cli*.sh), after lib.sh: $VR, the
# client; vr, the client with a bound on each request; status, its exit
# status checked with stderr kept in $err.
VR="$top_builddir/volray"
[ -x "$VR" ] || fail "no volray binary at $VR"

# vr ARGS: volray with a bound on each request.
vr() {
	"$VR" --request-timeout 20s "$@"
}

# status WANT WHAT ARGS: volray must exit WANT; stderr left in $err.
status() {
	want=$1 what=$2
	shift 2
	rc=0
	vr "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	err=$(cat "$WORK/err")
	[ "$rc" -eq "$want" ] || fail "$what: want exit $want, got $rc ($err)"
}
