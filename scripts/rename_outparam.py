#!/usr/bin/env python3
"""Rename the error out-parameters `char **why` and `char **err` to
`char **cause` (issue 42).

For each file given: every parameter `char **why` / `char **err` (not
`const char **`: those receive a static string, not a malloc'd message)
in a parameter list (a prototype, a definition, a function-pointer type)
becomes `char **cause`. In a definition, the name's uses inside the body
(identifiers only: not `.err`, `->err`, strings or comments) follow; in
comments of the body, `*why` / `*err` become `*cause`. A function whose
body already uses `cause`, or declares the old name again, is left alone
and reported (fix it by hand). Comments just above a renamed prototype
saying `*why` / `*err` are updated too, and so are those just above
a definition. Lines the rename takes past 80 columns are reported.

Usage: rename_outparam.py FILE...   (prints what it did and refused)
"""
import re
import sys

OLD = ("why", "err")
PARAM = re.compile(r"(?<!const )(?<![\w*])char\s*\*\*\s*(why|err)\b(?=\s*[,)])")


def code_mask(s):
    """A list of booleans: True where s[i] is code (not a string, char
    literal or comment)."""
    mask = [True] * len(s)
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if s.startswith("/*", i):
            j = s.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                mask[k] = False
            i = j
        elif s.startswith("//", i):
            j = s.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                mask[k] = False
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and s[j] != c:
                j += 2 if s[j] == "\\" else 1
            for k in range(i, min(j + 1, n)):
                mask[k] = False
            i = j + 1
        else:
            i += 1
    return mask


def match_paren(s, mask, i):
    """Index of the bracket closing the one at i (code only)."""
    open_c = s[i]
    close_c = {"(": ")", "{": "}"}[open_c]
    depth = 0
    for j in range(i, len(s)):
        if not mask[j]:
            continue
        if s[j] == open_c:
            depth += 1
        elif s[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return -1


def enclosing_open_paren(s, mask, i):
    depth = 0
    for j in range(i, -1, -1):
        if not mask[j]:
            continue
        if s[j] == ")":
            depth += 1
        elif s[j] == "(":
            if depth == 0:
                return j
            depth -= 1
    return -1


def rename_file(path):
    s = open(path, encoding="utf-8").read()
    done, refused = [], []
    while True:
        mask = code_mask(s)
        m = None
        for cand in PARAM.finditer(s):
            if mask[cand.start()]:
                m = cand
                break
        if m is None:
            break
        old = m.group(1)
        line = s.count("\n", 0, m.start()) + 1
        op = enclosing_open_paren(s, mask, m.start())
        cp = match_paren(s, mask, op)
        # The function's name: the identifier before the parameter list.
        fname = re.search(r"(\w+)\s*\)?\s*$", s[:op])
        fname = fname.group(1) if fname else "?"
        k = cp + 1
        while k < len(s) and s[k] in " \t\n":
            k += 1
        edits = [(m.start(1), m.end(1), "cause")]
        if k < len(s) and s[k] == "{":
            body_end = match_paren(s, mask, k)
            body = s[k:body_end + 1]
            bmask = mask[k:body_end + 1]
            ident = re.compile(r"(?<![\w.>])%s\b" % old)
            uses = [u for u in ident.finditer(body) if bmask[u.start()]]
            clash = [u for u in re.finditer(r"(?<![\w.>])cause\b", body)
                     if bmask[u.start()]]
            redecl = [d for d in re.finditer(
                r"\b(\w+)\s+\**\s*%s\s*[;=,\[]" % old, body)
                if bmask[d.start()] and d.group(1) not in
                ("return", "else", "case", "goto", "sizeof")]
            plist = s[op:cp]
            if clash or redecl or re.search(r"\bcause\b", plist):
                refused.append(f"{path}:{line}: {fname}: "
                               f"{'uses cause already' if clash or 'cause' in plist else 'declares ' + old + ' again'}")
                # Mark this parameter so the loop moves on: skip by
                # renaming to a placeholder, restored below.
                s = s[:m.start(1)] + "\0" + old + s[m.end(1):]
                continue
            for u in uses:
                edits.append((k + u.start(), k + u.end(), "cause"))
            for u in re.finditer(r"\*%s\b" % old, body):
                if not bmask[u.start()]:
                    edits.append((k + u.start() + 1, k + u.end(), "cause"))
            done.append(f"{path}:{line}: {fname}: {old} -> cause "
                        f"({len(uses)} uses)")
        else:
            done.append(f"{path}:{line}: {fname}: {old} -> cause (declaration)")
        if True:
            # The comment just above the prototype or definition.
            start = max((j for j in range(op) if mask[j] and
                         s[j] in ";{}"), default=-1)
            cstart = s.rfind("/*", 0, op)
            if cstart > start and s.find("*/", cstart) < op:
                cend = s.find("*/", cstart) + 2
                if True:
                    for u in re.finditer(r"\*%s\b" % old, s[cstart:cend]):
                        edits.append((cstart + u.start() + 1,
                                      cstart + u.end(), "cause"))
        for a, b, t in sorted(set(edits), reverse=True):
            s = s[:a] + t + s[b:]
    s = s.replace("\0", "")
    open(path, "w", encoding="utf-8").write(s)
    for no, text in enumerate(s.split("\n"), 1):
        if "cause" in text and len(text.expandtabs(8)) > 80:
            refused.append(f"{path}:{no}: over 80 columns: wrap it")
    return done, refused


def main():
    for path in sys.argv[1:]:
        done, refused = rename_file(path)
        for d in done:
            print("renamed", d)
        for r in refused:
            print("REFUSED", r)


main()
