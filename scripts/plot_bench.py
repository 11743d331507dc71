#!/usr/bin/env python3
"""Draw flysim bench's throughput plot from its bench.json.

Usage: plot_bench.py DIR/bench.json DIR  ->  DIR/throughput.png

World-steps/s against worlds, log-log: a line per stepper and variant (median of the
repeats, bars from min to max), the peers dashed, and as reference lines the
published anchor (MuJoCo Warp on FlyGym's replay, about 6e5 world-steps/s on an
H100) and flysim's targets on an H200 (1e7 in float32, 3e6 in float64).
"""

import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ANCHORS = [
    (6e5, "MuJoCo Warp, FlyGym replay, H100 (published)", "0.2", "-."),
    (1e7, "flysim target, H200, float32", "0.45", ":"),
    (3e6, "flysim target, H200, float64", "0.65", ":"),
]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_bench.py DIR/bench.json DIR")
    with open(sys.argv[1]) as f:
        bench = json.load(f)
    lines = defaultdict(list)
    for r in bench["rows"]:
        if not r["ok"]:
            continue
        key = r["stepper"] + (f" graph {r['graph']}" if r["graph"] not in ("-", "") else "")
        key += " recording" if r.get("record") == "on" else ""
        lines[(key, r["peer"])].append(r)
    if not lines:
        sys.exit(f"{sys.argv[1]}: no successful rows, nothing to plot")

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, ((key, peer), rows) in enumerate(sorted(lines.items())):
        rows.sort(key=lambda r: r["worlds"])
        x = [r["worlds"] for r in rows]
        y = [r["world_steps_per_s"] for r in rows]
        lo = [r["world_steps_per_s"] - r["world_steps_per_s_min"] for r in rows]
        hi = [r["world_steps_per_s_max"] - r["world_steps_per_s"] for r in rows]
        ax.errorbar(x, y, yerr=[lo, hi], marker="o", ms=4, capsize=2,
                    ls="--" if peer else "-", color=f"C{i % 10}",
                    label=f"{key} (peer)" if peer else key)
    for value, label, color, style in ANCHORS:
        ax.axhline(value, color=color, ls=style, lw=1, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("worlds")
    ax.set_ylabel("world-steps/s")
    where = bench["gpu"] or bench["machine"]["cpu"]
    ax.set_title(f"NeuroMechFly replay, contacts on: {where}", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(f"{sys.argv[2]}/throughput.png", dpi=120)


if __name__ == "__main__":
    main()
