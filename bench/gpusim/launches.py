#!/usr/bin/env python3
"""The kernels a GPGPU-Sim log shows executed, and how many times each.

    launches.py LOG [LOG...]     prints `f32 kernel xN, f64 kernel xM` (demangled, by count;
                                 flysim's kernels named with their precision)
    launches.py --json LOG...    the same as a JSON object {kernel: count}
    launches.py --step NAME WHAT RC WALL_S RESULT LOG
                                 one line of bench/gpusim/gpusim_check.sh's steps.jsonl

GPGPU-Sim prints `GPGPU-Sim: Performing Functional Simulation, executing kernel NAME...`
for every launch it runs, stream-ordered launches and a CUDA graph's kernel nodes alike.
"""
import collections
import json
import re
import subprocess
import sys

LINE = re.compile(r"executing kernel (\S+?)\.\.\.")


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}
    # "void fs_f32::step_kernel<fs_f32::Shared>(fsModel, ...)" -> "f32 step_kernel<Shared>"
    # (the precision's namespace, cuda/kernel_world.cuh, as bench/proxies/ptxas_table.py names it),
    # another kernel by its name alone
    short = []
    for o in out[:len(names)]:
        o = re.sub(r"^void ", "", o).split("(")[0]
        m = re.match(r"fs_(f32|f64)::(.*)", o)
        short.append(f"{m.group(1)} {re.sub(r'fs_f(?:32|64)::', '', m.group(2))}" if m else o)
    return dict(zip(names, short))


def count(paths):
    c = collections.Counter()
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    c[m.group(1)] += 1
    names = demangle(list(c))
    out = collections.Counter()
    for k, n in c.items():
        out[names[k]] += n
    return out


def step_record(argv):
    """--step NAME WHAT RC WALL_S RESULT LOG: one JSON line for bench/gpusim/report.py."""
    name, what, rc, wall, result, log = argv
    c = count([log])
    precs = sorted({k.split(" ", 1)[0] for k in c if k[:3] in ("f32", "f64")})
    print(json.dumps({"name": name, "what": what, "precision": ",".join(precs) or "-",
                      "rc": int(rc), "wall_s": float(wall), "kernels": dict(sorted(c.items())),
                      "result": result}))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--step":
        return step_record(args[1:])
    as_json = bool(args) and args[0] == "--json"
    if as_json:
        args = args[1:]
    if not args:
        sys.exit("usage: launches.py [--json] LOG [LOG...] | --step NAME WHAT RC WALL_S RESULT LOG")
    c = count(args)
    if as_json:
        print(json.dumps(dict(sorted(c.items()))))
    else:
        print(", ".join(f"{k} x{n}" for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
              or "no kernel executed")


if __name__ == "__main__":
    main()
