# js_client_setup: install the official JavaScript client
# (@kubernetes/client-node, pinned in tests/js/package-lock.json) into the
# build tree with `npm ci` (again only when the lock file changes) and
# link it into $WORK, where the tests' scripts import it. Without node
# and npm, or when npm cannot reach the registry, the test is skipped
# (exit 77, with the reason); any other npm failure fails it. Sourced
# after lib.sh.
js_client_setup() {
	JS="$top_builddir/tests/js"
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		skip "node and npm are needed (scripts/deps.sh installs npm)"
	fi
	# One install at a time (tests run in parallel).
	mkdir -p "$top_builddir/tests"
	exec 9>"$top_builddir/tests/js.lock"
	flock 9
	if ! cmp -s "$top_srcdir/tests/js/package-lock.json" \
	    "$JS/node_modules/.volray-lock.json" 2>/dev/null; then
		mkdir -p "$JS"
		if [ "$(cd "$JS" && pwd -P)" != "$(cd "$top_srcdir/tests/js" && pwd -P)" ]; then
			cp "$top_srcdir/tests/js/package.json" \
				"$top_srcdir/tests/js/package-lock.json" "$JS/"
		fi
		if ! timeout 600 npm ci --prefix "$JS" --no-audit --no-fund --ignore-scripts \
			>"$WORK/npm.log" 2>&1; then
			grep -q 'ENOTFOUND\|EAI_AGAIN\|ECONNREFUSED\|ECONNRESET\|ETIMEDOUT\|ENETUNREACH\|network' "$WORK/npm.log" &&
				skip "npm ci cannot reach the registry, the client is not installed: $(grep -m1 'ENOTFOUND\|EAI_AGAIN\|ECONNREFUSED\|ECONNRESET\|ETIMEDOUT\|ENETUNREACH\|network' "$WORK/npm.log")"
			fail "npm ci in $JS: $(tail -n 20 "$WORK/npm.log")"
		fi
		cp "$top_srcdir/tests/js/package-lock.json" "$JS/node_modules/.volray-lock.json"
	fi
	flock -u 9
	version=$(node -p "require('$JS/node_modules/@kubernetes/client-node/package.json').version")
	case "$version" in
	1.*) ;;
	*) fail "client-node $version: this test is written for the 1.x API" ;;
	esac
	echo "client-node $version, node $(node --version)"
	# The scripts in $WORK import the client from the build tree.
	ln -s "$JS/node_modules" "$WORK/node_modules"
}
