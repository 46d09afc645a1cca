#!/bin/sh
# The man pages are the manual: mandoc -Tlint finds no warning or error
# in any of them, and every flag volrayd --help shows is documented in
# volrayd(8) (.It Fl) and every flag documented there is in --help.
# (volray's own verbs and flags are checked against volray(1) by cli2.sh.)
. "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null 2>&1 || fail "mandoc is missing (scripts/deps.sh installs it)"

out=$(mandoc -Tlint -Wwarning "$top_srcdir"/man/*.[0-9] 2>&1) || fail "mandoc: $out"
expect_eq "" "$out" "mandoc -Tlint -Wwarning"
pass "mandoc -Tlint: no warnings in man/"

"$VOLRAYD" --help >"$WORK/help" || fail "volrayd --help"
python3 - "$WORK/help" "$top_srcdir/man/volrayd.8" <<'PY' || fail "volrayd --help and volrayd(8) disagree"
import re, sys
helps = set(re.findall(r"--([a-z][a-z-]*)", open(sys.argv[1]).read()))
man = open(sys.argv[2]).read()
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
    print("in --help, not in volrayd(8):", missing)
if extra:
    print("in volrayd(8), not in --help:", extra)
sys.exit(1 if missing or extra else 0)
PY
pass "every volrayd flag in --help is in volrayd(8), and the reverse"
