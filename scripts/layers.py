#!/usr/bin/env python3
"""The order of volrayd's folders, checked.

Prints the include graph between the folders of core/ and fails when:
- a folder includes a header of a folder above it (ORDER, top first);
- files call each other in a cycle (read from the objects' symbols with
  nm: file A calls a function defined in file B); a cycle of files is a
  knot a reader cannot follow from one end;
- units include each other in a cycle, in core/ or in the client (cli/):
  a unit is a .c file with its .h and its _int.h (api/api.c, api/api.h,
  api/api_int.h), and unit A includes B when a file of A includes a
  header of B; a header that needs a header which needs it back is the
  same knot, met by a reader of the headers;
- a folder above the client (the seam, core/client/) calls the store or
  the registry directly instead of through the client.

Usage: scripts/layers.py [BUILD_DIR]   (default: build; the objects are
read from there, the sources from the tree this script is in)
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Top first: a folder may include the headers of folders below it.
ORDER = ["volrayd", "daemon", "api", "ray", "sched", "ctrl", "node", "client",
         "luahost", "auth", "registry", "store", "net", "lib"]
# Above the seam: these reach objects only through client/.
ABOVE_SEAM = ["ray", "sched", "ctrl", "node"]
# What the seam lets through: a version's own accessors, and the
# descriptors and Status helpers that describe objects.
SEAM_ALLOWED = re.compile(r"^(store_obj_[a-z_]+|resource_[a-z_]+|status_[a-z_]+)$")
SEAM_CALL = re.compile(r"\b((?:store|registry|gc|wal|admission|schema|patch)_[a-z0-9_]+)\s*\(")

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build")
core = os.path.join(top, "core")
cli = os.path.join(top, "cli")
failed = []
sys.setrecursionlimit(100000)


def cycles(graph):
    """The strongly connected parts of graph (node -> set of nodes) with
    more than one node, each sorted (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def strongconnect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


def folder_of(path):
    rel = os.path.relpath(path, core)
    return rel.split(os.sep)[0] if os.sep in rel else "volrayd"


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*",
                  lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


# 1. Includes between folders.
rank = {f: i for i, f in enumerate(ORDER)}
edges = collections.Counter()
sources = sorted(glob.glob(os.path.join(core, "**", "*.[ch]"), recursive=True))
for path in sources:
    src = folder_of(path)
    if src not in rank:
        failed.append(f"{os.path.relpath(path, top)}: folder {src} is not in ORDER")
        continue
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r'\s*#\s*include\s+"([a-z0-9_]+)/[^"]+"', line)
            if not m:
                continue
            dst = m.group(1)
            if dst == src:
                continue
            edges[(src, dst)] += 1
            if dst not in rank:
                failed.append(f"{os.path.relpath(path, top)}: includes unknown folder {dst}")
            elif rank[dst] < rank[src]:
                failed.append(f"{os.path.relpath(path, top)}: {src}/ includes "
                              f"{line.strip()[9:]} from {dst}/, a folder above it")

print("folders, top first, and the folders each includes:")
for f in ORDER:
    below = [d for d in ORDER if edges.get((f, d))]
    print(f"  {f + '/':10} -> {' '.join(d + '/' for d in below) or '(none)'}")

# 2. Above the seam, no direct calls into the store or the registry.
for path in sources:
    if folder_of(path) not in ABOVE_SEAM:
        continue
    with open(path, encoding="utf-8") as fh:
        text = strip_comments(fh.read())
    for m in SEAM_CALL.finditer(text):
        name = m.group(1)
        if SEAM_ALLOWED.match(name):
            continue
        line = text.count("\n", 0, m.start()) + 1
        failed.append(f"{os.path.relpath(path, top)}:{line}: {name} called above "
                      "the seam (use client/)")

# 3. Cycles between units, from their includes (core/ and cli/).
def unit_of(path):
    return re.sub(r"_int$", "", os.path.splitext(os.path.relpath(path, top))[0])


includes = collections.defaultdict(set)
for path in sources + sorted(glob.glob(os.path.join(cli, "*.[ch]"))):
    src = unit_of(path)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r'\s*#\s*include\s+"([^"]+\.h)"', line)
            if not m:
                continue
            near = os.path.join(os.path.dirname(path), m.group(1))
            header = near if os.path.exists(near) else os.path.join(core, m.group(1))
            dst = unit_of(header)
            if dst != src:
                includes[src].add(dst)
for comp in cycles(includes):
    failed.append("units that include each other in a cycle: " + ", ".join(comp))

# 4. Cycles between files, from the objects' symbols.
objs = glob.glob(os.path.join(build, "core", "**", "*.o"), recursive=True)
if not objs:
    print(f"layers: no objects under {build}/core: build first", file=sys.stderr)
    sys.exit(2)
defined, used = {}, collections.defaultdict(set)
for o in objs:
    name = os.path.basename(o)[:-2]
    name = re.sub(r"^[a-z_]+-", "", name)   # automake's per-target prefix
    unit = os.path.join(os.path.relpath(os.path.dirname(o), build), name)
    if not os.path.exists(os.path.join(top, unit + ".c")):
        continue                            # left over from a renamed file
    out = subprocess.run(["nm", o], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBR":
            defined.setdefault(p[2], unit)
        elif len(p) == 2 and p[0] == "U":
            used[unit].add(p[1])
calls = collections.defaultdict(set)
for unit, syms in used.items():
    for s in syms:
        d = defined.get(s)
        if d is not None and d != unit:
            calls[unit].add(d)

for comp in cycles(calls):
    failed.append("files that call each other in a cycle: " + ", ".join(comp))

if failed:
    print("\n".join("layers: " + f for f in failed), file=sys.stderr)
    sys.exit(1)
print("layers: no upward include, no call or include cycle, nothing around the seam")
