#!/usr/bin/env python3
"""Draw flysim compare's divergence plot from its HDF5 file.

Usage: plot_compare.py DIR/compare.h5 DIR  ->  DIR/divergence.png

Top: B's joint-angle difference from A over time (log scale): the largest over worlds
and joints, and the geometric mean over worlds of each world's largest (what the
verdict's ratio averages); the floor (A rerun with its state perturbed at float
size) as a band from its geometric mean to its largest; and --max-ratio times the
floor's geometric mean (the bound holds for the ratio's mean over the run). Bottom: tracking error of A and B (RMS
|joint angle - target| over worlds and driven joints, degrees).
"""

import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def positive(x):
    """Zeros (identical runs) are not drawn on a log scale."""
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x, np.nan)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_compare.py DIR/compare.h5 DIR")
    path, out_dir = sys.argv[1], sys.argv[2]
    with h5py.File(path, "r") as f:
        a, b = f.attrs["backend_a"], f.attrs["backend_b"]
        floor_mode = f.attrs["floor"]
        runs = int(f.attrs.get("floor_runs", 1))  # files before --floor-runs: one run
        ratio, bound = float(f.attrs["ratio"]), float(f.attrs["max_ratio"])
        verdict = f.attrs["verdict"]
        t = f["time"][:] * 1e3  # ms
        bmax, bgeo = f["b_vs_a/dq_max"][:], f["b_vs_a/dq_geomean"][:]
        fmax, fgeo = f["floor_vs_a/dq_max"][:], f["floor_vs_a/dq_geomean"][:]
        ta, tb = np.degrees(f["tracking/a"][:]), np.degrees(f["tracking/b"][:])
        nworld = int(f.attrs["worlds"])
    if len(t) == 0:
        sys.exit(f"{path}: no steps compared, nothing to plot")

    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 2]})
    ax.fill_between(t, positive(fgeo), positive(fmax), color="0.8",
                    label=f"floor: {a} perturbed ({floor_mode}"
                    + (f", the largest of {runs} runs in a world" if runs > 1 else "")
                    + "), geometric mean to max")
    ax.plot(t, positive(fgeo), color="0.4", lw=1.2)
    ax.plot(t, positive(bmax), color="C3", lw=0.8, label=f"{b} vs {a}: max over worlds, joints")
    ax.plot(t, positive(bgeo), color="C3", lw=1.6, label=f"{b} vs {a}: geometric mean over worlds")
    ax.plot(t, bound * positive(fgeo), color="k", ls=":", lw=1,
            label=f"{bound:g} x the floor's geometric mean (the bound, on average)")
    ax.set_yscale("log")
    ax.set_ylabel("|joint angle difference| (rad)")
    ax.set_title(f"{b} vs {a}, {nworld} worlds: {ratio:.3g}x the floor ({verdict})")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, which="major", alpha=0.3)

    ax2.plot(t, ta, color="C0", lw=1, label=a)
    ax2.plot(t, tb, color="C3", lw=1, ls="--", label=b)
    ax2.set_xlabel("simulated time (ms)")
    ax2.set_ylabel("tracking RMS (deg)")
    ax2.legend(loc="upper right", fontsize=8)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(f"{out_dir}/divergence.png", dpi=120)


if __name__ == "__main__":
    main()
