#!/usr/bin/env python3
"""bench/results/gpusim.md from a bench/gpusim/gpusim_check.sh run.

    report.py STEPS.jsonl PTXAS.csv OUT.md [--header TEXT_FILE]

STEPS.jsonl: one JSON object a step (bench/gpusim/gpusim_check.sh writes them): name, what,
precision, rc, wall_s, kernels ({kernel: launches}), result (a line the step's output or
comparison gave: its largest error, or why it failed), and optionally status (the
table's word for it, instead of rc's: a probe of the simulator itself). PTXAS.csv
(bench/results/ptxas-sm90.csv) lists every kernel of the project per precision: the
coverage table says which of them the simulator executed and how often. Exit 1 if a step
failed or a kernel never ran.
"""
import collections
import csv
import json
import sys


def status(rc):
    return {0: "pass", 77: "not run"}.get(rc, f"FAIL (exit {rc})")


def main():
    args = sys.argv[1:]
    header = ""
    if "--header" in args:
        i = args.index("--header")
        with open(args[i + 1]) as f:
            header = f.read()
        del args[i:i + 2]
    steps_path, ptxas_path, out_path = args
    steps = [json.loads(line) for line in open(steps_path) if line.strip()]
    kernels = collections.OrderedDict()
    with open(ptxas_path) as f:
        for row in csv.DictReader(f):
            kernels[(row["precision"], row["kernel"])] = 0
    for s in steps:  # kernels named "f32 step_kernel<Shared>" (bench/gpusim/launches.py)
        for k, n in s.get("kernels", {}).items():
            prec, _, name = k.partition(" ")
            if prec not in ("f32", "f64"):
                continue  # the probes' own kernels, not the project's
            if (prec, name) not in kernels and (prec, name.split("<")[0]) in kernels:
                name = name.split("<")[0]  # ptxas lists a kernel of one instance untemplated
            kernels[(prec, name)] = kernels.get((prec, name), 0) + n

    lines = [header.rstrip(), ""] if header else []
    lines += ["## Each program", "",
              "| step | what | precision | result | wall | kernels executed (launches) |",
              "|---|---|---|---|---|---|"]
    failed = 0
    for s in steps:
        st = s.get("status") or status(s["rc"])
        failed += st.startswith("FAIL")
        ks = ", ".join(f"{k} x{n}" for k, n in sorted(s.get("kernels", {}).items(),
                                                         key=lambda kv: (-kv[1], kv[0])))
        res = s.get("result", "").replace("|", "\\|")
        lines.append(f"| {s['name']} | {s['what']} | {s['precision']} | {st}: {res} | "
                     f"{s['wall_s']:.0f} s | {ks or 'none'} |")
    total = sum(s["wall_s"] for s in steps)
    lines += ["", f"{len(steps)} steps, {failed} failed; {total / 60:.1f} min of simulator "
              "time in all (two at a time).", "", "## Every kernel", "",
              "| precision | kernel | launches under the simulator |", "|---|---|---|"]
    never = 0
    for (prec, k), n in kernels.items():
        never += n == 0
        lines.append(f"| {prec} | {k} | {n if n else '**never executed**'} |")
    lines.append("")
    with open(out_path, "w") as f:
        f.write("\n".join(lines))
    print(f"report: {out_path}: {len(steps)} steps, {failed} failed, {never} kernels never run")
    sys.exit(1 if failed or never else 0)


if __name__ == "__main__":
    main()
