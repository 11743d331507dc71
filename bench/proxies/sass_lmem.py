#!/usr/bin/env python3
"""Where a kernel uses local memory (its stack: spills and addressed locals), by source
line: the STL/LDL instructions of one kernel in a CUDA object's SASS, counted per
file:line (the objects carry -lineinfo). The question ptxas's report cannot answer when a
change raises a kernel's stack or spills (the cuda_ptxas test): which code it is.

  sass_lmem.py OBJECT KERNEL [--min-offset N]

OBJECT: a CUDA object of the build (e.g. build/cuda/CMakeFiles/.../step_kernel_f64.cu.o;
one object alone: make -C build/cuda f64/step_kernel_f64.o); KERNEL: a substring of the
kernel's mangled name (step_kernelINS_6Shared, forward_kernel); --min-offset: only
accesses at or beyond this stack offset (the bytes a change added sit at the top).
Needs cuobjdump and nvdisasm (the toolkit's, or PyPI's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm on PATH).
"""

import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile


def sass(obj):
    """The object's SASS with line information (nvdisasm -g) of every cubin in it."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["cuobjdump", "-xelf", "all", os.path.abspath(obj)], cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL)
        text = []
        for cubin in sorted(glob.glob(os.path.join(tmp, "*.cubin"))):
            text.append(subprocess.run(["nvdisasm", "-g", "-c", cubin], check=True,
                                       capture_output=True, text=True).stdout)
        return "\n".join(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("object")
    ap.add_argument("kernel")
    ap.add_argument("--min-offset", type=lambda s: int(s, 0), default=0)
    a = ap.parse_args()
    counts = collections.Counter()
    inside, where = False, "?"
    for line in sass(a.object).splitlines():
        if line.startswith("//----"):  # a function's section
            inside = a.kernel in line
            continue
        if not inside:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            where = f"{os.path.basename(m.group(1))}:{m.group(2)}"
            continue
        m = re.search(r"\b(STL|LDL)[.\w]*\s+(?:\w+, )?\[R1(?:\+(0x[0-9a-f]+))?\]", line)
        if m and int(m.group(2) or "0", 16) >= a.min_offset:
            counts[(where, m.group(1))] += 1
    if not counts:
        print(f"no local memory in functions matching {a.kernel!r}", file=sys.stderr)
        return 1
    for (where, op), n in sorted(counts.items()):
        print(f"{n:6d} {op} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
