#!/usr/bin/env python3
"""The kernels' registers, stack, spills and shared memory, from the ptxas reports the
build keeps next to each CUDA object (cmake/ptxas_log.sh): the GPU-free proxy of the
step's cost.

  ptxas_table.py BUILD_DIR                   print the table (every arch)
  ptxas_table.py BUILD_DIR --write CSV [--arch sm_90]
                                             write it (bench/proxies/ptxas_report.sh does)
  ptxas_table.py BUILD_DIR --check CSV [--arch sm_90]
                                             fail (exit 1) if a kernel uses more
                                             registers, stack or spills than CSV records

The check is a no-regression bound; it prints the registers and spills of the step
kernel (cuda/step_kernel.cuh) as the cuda backend launches it for a model without
convex pairs (its Shared variant: no spills) and as the tests launch it (Bare).
"""

import argparse
import csv
import glob
import os
import re
import sys

FIELDS = ["precision", "arch", "kernel", "registers", "stack_bytes", "spill_store_bytes",
          "spill_load_bytes", "shared_bytes"]


def template_argument(rest):
    """'<argument>' of a kernel template of one argument, from the mangled name after the
    kernel's own: an int (IL<i|j>[n]<digits>E, n: negative) or a type of the precision's
    namespace (INS_<n>nameE, the step kernel's variants: step_kernel<Shared>); else ''."""
    t = re.match(r"IL[ij](n?)(\d+)EE", rest)
    if t:
        return f"<{'-' if t.group(1) else ''}{t.group(2)}>"
    t = re.match(r"I(?:NS_)?(\d+)", rest)
    if t:
        return f"<{rest[t.end():t.end() + int(t.group(1))]}>"
    return ""


def parse(path, precision):
    """Rows of one object's report: an entry function, then its stack/spill line, then
    its register line."""
    rows, cur = [], None
    for line in open(path):
        m = re.search(r"Compiling entry function '(_Z\w+)' for '(sm_\d+)'", line)
        if m:
            mangled = m.group(1)
            # _Z<n>name... or, in the precision's namespace (cuda/kernel_world.cuh's
            # FS_KERNELS), _ZN<n>fs_f32<n>name[I<argument>E]E...
            k = re.match(r"_ZN\d+fs_f(?:32|64)(\d+)", mangled)
            rest = mangled[k.end() - len(k.group(1)):] if k else mangled[2:]
            n = re.match(r"(\d+)", rest)
            name = rest[len(n.group(1)):len(n.group(1)) + int(n.group(1))]
            name += template_argument(rest[len(n.group(1)) + int(n.group(1)):])
            cur = {"precision": precision, "arch": m.group(2), "kernel": name,
                   "stack_bytes": 0, "spill_store_bytes": 0, "spill_load_bytes": 0,
                   "shared_bytes": 0}
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m:
            cur["stack_bytes"], cur["spill_store_bytes"], cur["spill_load_bytes"] = map(
                int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            cur["shared_bytes"] = int(s.group(1)) if s else 0
            rows.append(cur)
            cur = None
    return rows


def collect(build):
    rows = []
    for precision in ("f32", "f64"):
        # cuda/CMakeLists.txt's object libraries of the precision's CUDA sources (the
        # library's and the tests' kernels)
        pattern = os.path.join(build, "cuda", "CMakeFiles", f"flysim_cuda*_{precision}_obj.dir",
                               "**", "*.cu.o.ptxas.txt")
        for path in sorted(glob.glob(pattern, recursive=True)):
            rows += parse(path, precision)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--write")
    ap.add_argument("--check")
    ap.add_argument("--arch", default=None)
    a = ap.parse_args()
    rows = collect(a.build)
    if not rows:
        sys.exit(f"ptxas_table: no ptxas reports under {a.build}/cuda (was it built with nvcc "
                 "through cmake/ptxas_log.sh?)")
    if a.arch:
        rows = [r for r in rows if r["arch"] == a.arch]
    rows.sort(key=lambda r: (r["precision"], r["arch"], r["kernel"]))
    print(" ".join(f"{f:>17}" for f in FIELDS))
    for r in rows:
        print(" ".join(f"{str(r[f]):>17}" for f in FIELDS))
    if a.write:
        with open(a.write, "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            w.writeheader()
            w.writerows(rows)
    if a.check:
        base = {(r["precision"], r["kernel"]): r for r in csv.DictReader(open(a.check))}
        bad = []
        for r in rows:
            b = base.get((r["precision"], r["kernel"]))
            if b is None:
                bad.append(f"{r['precision']} {r['kernel']}: not in {a.check}")
                continue
            for f in ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes"):
                if int(r[f]) > int(b[f]):
                    bad.append(f"{r['precision']} {r['kernel']}: {f} {r[f]} > {b[f]} recorded")
        step = [r for r in rows if r["kernel"] in ("step_kernel<Bare>", "step_kernel<Shared>")]
        for r in step:
            spill = r["spill_store_bytes"] + r["spill_load_bytes"]
            print(f"{r['precision']} {r['kernel']} ({r['arch']}): {r['registers']} registers, "
                  f"{r['stack_bytes']} B stack, {spill} B of spill traffic"
                  + (" (goal: none)" if spill else ""))
        if bad:
            print("ptxas_table: the kernels grew beyond bench/results (update it only for a "
                  "reason you can state):\n  " + "\n  ".join(bad), file=sys.stderr)
            sys.exit(1)
        print(f"ptxas_table: within {a.check}")


if __name__ == "__main__":
    main()
