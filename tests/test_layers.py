#!/usr/bin/env python3
"""The folders' layers, from every #include "..." of the tree (test_layers.py SOURCE_DIR).

Bottom to top: include/ (the public header: MuJoCo and the C library only); src/ (libflysim:
its own folders only); common/ (what the verbs share: a client of the public API, with the
library's base layer, src/base, for errors and MuJoCo's hooks); the verbs' folders
compare/, generate/, bench/ (common/, their own; the engine's own tools where named below);
app/ (the executable: all of those). Nothing includes app/ or tests/ but themselves.
A folder that includes upward, or a verb that reaches into the engine's internals, fails
here with the file and the line.
"""
import os
import re
import sys

root = sys.argv[1]

# folder -> the folders (prefixes) its files may include
ALLOWED = {
    "include": [],
    "src": ["src/"],
    "common": ["common/", "src/base/"],
    "compare": ["compare/", "common/", "src/base/", "src/check/"],  # --stages: the stage checks
    "generate": ["generate/", "common/", "src/base/"],
    "bench": ["bench/", "common/", "src/base/"],
    "app": ["app/", "compare/", "generate/", "bench/", "common/", "src/base/"],
    "examples": [],
    "python": [],  # the module: the public header only
}
# the engine's proxies, measuring the engine itself (bench/README.md)
EXCEPTIONS = {
    "bench/lanes_profile.c": ["src/"],
    "bench/onchip_sizes.c": ["src/"],
}
GENERATED = {"src/api/version.h"}

bad = []
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
for top in ALLOWED:
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if not f.endswith((".c", ".h", ".cu", ".cuh", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            allowed = ALLOWED[top] + EXCEPTIONS.get(rel, [])
            for n, line in enumerate(open(path, errors="replace"), 1):
                m = include.match(line)
                if not m or m.group(1) in GENERATED:
                    continue
                target = m.group(1)
                if not any(target.startswith(a) for a in allowed):
                    bad.append("%s:%d: includes \"%s\" (%s/ may include %s)"
                               % (rel, n, target, top, ", ".join(allowed) or "nothing of ours"))
for b in bad:
    print(b)
print("test_layers: %s" % ("passed" if not bad else "%d includes across the layers" % len(bad)))
sys.exit(1 if bad else 0)
