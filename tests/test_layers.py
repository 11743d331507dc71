#!/usr/bin/env python3
"""The layers of the tree, from every #include "..." of its sources (test_layers.py ROOT).

LAYERS lists every folder that holds sources, bottom to top, with the folders below it that
its files may include (a folder always includes itself; <flysim/flysim.h> is the public
header, open to all). A folder may include only folders listed before it, so the drawing in
docs/ARCHITECTURE.md is a fact: nothing includes upward and nothing goes round in a circle.
A source in a folder that is not listed fails too (a new folder takes its place here).
"""
import os
import re
import sys

root = sys.argv[1]

LIB_BASE = ["common/base", "common/exec", "common/engine", "common/model"]
VERBS_SHARED = ["common/base", "common/sys", "common/recorder", "common/inputs", "common/cli",
                "common/replay", "common/profiling", "common/outputs"]

# folder -> the folders its files may include, bottom to top
LAYERS = [
    # libflysim
    ("include", []),
    ("common/base", []),  # errors, MuJoCo's hooks, random streams, NVTX
    ("common/exec", ["common/base"]),  # the real type, a world's lanes
    ("common/engine", ["common/base", "common/exec"]),  # the stages and the field tables
    ("common/model", ["common/base", "common/exec", "common/engine"]),  # built from mjModel
    ("common/parity", LIB_BASE),  # the engine against MuJoCo
    ("common/api", LIB_BASE),  # the public API and what a backend implements
    ("cpu", LIB_BASE + ["common/parity", "common/api"]),  # the steppers on CPU threads
    ("cuda", LIB_BASE + ["common/parity", "common/api"]),  # the engine's kernels
    # what the verbs share: clients of the public API, with the library's errors
    ("common/sys", ["common/base"]),  # files, signals, processes, JSON, the clock
    ("common/recorder", ["common/base", "common/sys"]),  # HDF5
    ("common/inputs", ["common/base", "common/sys", "common/recorder"]),  # model, clip
    ("common/cli", VERBS_SHARED[:4]),  # the options every verb takes, their parser
    ("common/replay", VERBS_SHARED[:5]),  # the driver, its options, its file
    ("common/profiling", VERBS_SHARED[:6]),  # perf, MuJoCo's timers, nsys, ncu
    ("common/outputs", VERBS_SHARED[:7]),  # plots, video
    # the verbs and the executable
    ("compare", VERBS_SHARED + ["common/parity"]),  # --stages: the parity checks
    ("generate", VERBS_SHARED),
    ("bench", VERBS_SHARED),
    ("app", VERBS_SHARED + ["compare", "generate", "bench"]),
    ("examples", []),
    ("python", []),  # the module: the public header only
]
# the engine's proxies, measuring the engine itself (bench/README.md)
EXCEPTIONS = {
    "bench/proxies/lanes_profile.c": LIB_BASE + ["cpu"],
    "bench/proxies/onchip_sizes.c": LIB_BASE + ["cpu"],
}
GENERATED = {"common/api/version.h"}
SOURCE = (".c", ".h", ".cu", ".cuh", ".cpp")
SKIP = ("tests", "docs", "scripts", "cmake", ".git", ".venv", "assets", "out")

bad = []
order = [f for f, _ in LAYERS]
for i, (folder, below) in enumerate(LAYERS):
    for b in below:
        if b not in order[:i]:
            bad.append("test_layers.py: %s may include %s, which is not below it" % (folder, b))


def layer_of(rel):
    best = None
    for f in order:
        if rel == f or rel.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
nfile = 0
for dirpath, dirs, files in os.walk(root):
    rel_dir = os.path.relpath(dirpath, root)
    top = rel_dir.split(os.sep)[0]
    if top in SKIP or top.startswith("build"):
        dirs[:] = []
        continue
    for f in files:
        if not f.endswith(SOURCE):
            continue
        rel = os.path.normpath(os.path.join(rel_dir, f))
        layer = layer_of(rel)
        if layer is None:
            bad.append("%s: in no layer (give its folder a place in tests/test_layers.py)" % rel)
            continue
        nfile += 1
        allowed = [layer] + dict(LAYERS)[layer] + EXCEPTIONS.get(rel, [])
        for n, line in enumerate(open(os.path.join(root, rel), errors="replace"), 1):
            m = include.match(line)
            if not m or m.group(1) in GENERATED:
                continue
            target = m.group(1)
            if "/" not in target:  # a file beside it (the precision wrappers, python/src)
                continue
            tl = layer_of(target)
            if tl not in allowed:
                bad.append('%s:%d: includes "%s" (%s/ may include %s)'
                           % (rel, n, target, layer, ", ".join(a + "/" for a in allowed)))
for b in bad:
    print(b)
print("test_layers: %d files, %s" % (nfile, "passed" if not bad else "%d faults" % len(bad)))
sys.exit(1 if bad else 0)
