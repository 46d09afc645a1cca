#!/bin/sh
# The man pages are the manual: mandoc -Tlint finds no warning or error
# in any of them, and every flag volrayd --help shows is documented in
# volrayd(8) (.It Fl) and every flag documented there is in --help.
# The same for volray: each verb's --help against volray(1).
. "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null 2>&1 || skip "mandoc is missing (scripts/deps.sh installs it)"

out=$(mandoc -Tlint -Wwarning "$top_srcdir"/man/*.[0-9] 2>&1) || fail "mandoc: $out"
expect_eq "" "$out" "mandoc -Tlint -Wwarning"
pass "mandoc -Tlint: no warnings in man/"

# same_flags HELP PAGE: every --flag in the file HELP is on an .It line of
# the man page PAGE, and every flag on one there is in HELP.
same_flags() {
	python3 - "$1" "$2" <<'PY'
import os, re, sys
helps = set(re.findall(r"--([a-z][a-z-]*)", open(sys.argv[1]).read()))
man = open(sys.argv[2]).read()
page = os.path.basename(sys.argv[2])
# mdoc's Fl adds one dash: "Fl \-data\-dir" is --data-dir. An .It line
# may name several flags ("Fl \-a , Fl \-b").
documented = set()
for line in re.findall(r"^\.It (.*)$", man, re.M):
    for m in re.findall(r"Fl \\-((?:[a-z]|\\-)+)", line):
        documented.add(m.replace("\\-", "-"))
# --help and --version are documented as such; -h is the short form.
missing = sorted(helps - documented - {"help", "version"})
extra = sorted(documented - helps - {"help", "version"})
if missing:
    print("in --help, not in %s:" % page, missing)
if extra:
    print("in %s, not in --help:" % page, extra)
sys.exit(1 if missing or extra else 0)
PY
}

"$VOLRAYD" --help >"$WORK/help" || fail "volrayd --help"
same_flags "$WORK/help" "$top_srcdir/man/volrayd.8" || fail "volrayd --help and volrayd(8) disagree"
pass "every volrayd flag in --help is in volrayd(8), and the reverse"

# volray: every flag of every verb's --help (and the global ones) is in
# volray(1), and every flag there is in some verb's --help; every verb has
# its entry.
VR="$top_builddir/volray"
"$VR" help >"$WORK/verbs" || fail "volray help"
: >"$WORK/vhelp"
for verb in $(sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' "$WORK/verbs"); do
	"$VR" "$verb" --help >>"$WORK/vhelp" || fail "volray $verb --help"
	grep -Eq "^\.(It|Ic|Cm) ((Ic|Cm) )?$verb( |\$)" "$top_srcdir/man/volray.1" ||
		fail "volray(1) has no entry for the verb $verb"
done
[ "$(grep -c '^usage: volray' "$WORK/vhelp")" -ge 20 ] || fail "too few verbs in volray help"
same_flags "$WORK/vhelp" "$top_srcdir/man/volray.1" || fail "volray VERB --help and volray(1) disagree"
pass "every volray flag in VERB --help is in volray(1), and the reverse"

# volray-scheduler.yaml(5): every argument a plugin in policies/ declares,
# with its type and default, and every action the scheduler knows.
python3 - "$top_srcdir/policies" "$top_srcdir/man/volray-scheduler.yaml.5" <<'PY' || fail "plugins' arguments and volray-scheduler.yaml(5) disagree"
import glob, os, re, sys
man = open(sys.argv[2]).read()
bad = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.lua"))):
    name = os.path.basename(f)[:-4]
    if not re.search(r"^\.It Li %s$" % re.escape(name), man, re.M):
        bad.append("plugin %s has no entry" % name)
    for arg, typ, default in re.findall(
            r'\["([^"]+)"\]\s*=\s*\{\s*type\s*=\s*"(\w+)",\s*default\s*=\s*("[^"]*"|[\w.]+)', open(f).read()):
        default = "empty" if default == '""' else default.strip('"')
        want = ".It Li %s No (%s, default %s)" % (arg, typ, default)
        if want not in man:
            bad.append("%s: want the line %r" % (name, want))
for action in ("enqueue", "allocate", "backfill", "preempt", "reclaim"):
    if not re.search(r"^\.It Li %s$" % action, man, re.M):
        bad.append("action %s has no entry" % action)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
pass "every plugin argument with its default, and every action, is in volray-scheduler.yaml(5)"
