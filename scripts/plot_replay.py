"""Draw the plots of a flysim replay from its HDF5 file.

    python scripts/plot_replay.py DIR/replay.h5 DIR

`flysim replay --save-data DIR` runs this after the loop (with the venv's Python
found at build time, or $FLYSIM_PYTHON). It reads only what flysim wrote for the
plots, so that the numbers in the file are the numbers in the figures:

- /plots/joint_tracking (world 0, one leg): target and simulated angles (rad,
  plotted in degrees), one panel per DoF -> DIR/joint_angle_tracking.{png,pdf}
  (FlyGym's tutorial 2 / replay_behavior_cpu.py figure of the same name).
- /pose (world 0): positions of the model's sites (NeuroMechFly: the legs' joint
  sites) at every step; snapshots of each leg every 0.3 s, fading in with time ->
  DIR/pose_over_time.{png,pdf}. Missing when the sites were not recorded
  (--record without sites): that figure is skipped.
- /plots/tracking_error (every world): each world's RMS tracking error per DoF
  (rad, plotted in degrees); per DoF the median over worlds, the interquartile
  range and the range -> DIR/tracking_error.{png,pdf}. FlyGym has no such figure.

Exit status 0 on success, 1 with a message on stderr otherwise.
"""

import argparse
import sys
from pathlib import Path

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

SNAPSHOT_INTERVAL_S = 0.3  # as FlyGym's plot_pose_over_time


def strings(dataset) -> list[str]:
    return [s.decode() if isinstance(s, bytes) else str(s) for s in dataset[()]]


def short_dof_name(name: str) -> str:
    """'nmf/c_thorax-lf_coxa-yaw' -> 'c_thorax-lf_coxa yaw'."""
    base = name.rsplit("/", 1)[-1]
    parts = base.rsplit("-", 1)
    return f"{parts[0]} {parts[1]}" if len(parts) == 2 else base


def plot_joint_tracking(group, out: Path) -> list[Path]:
    time = group["time"][()]
    target = np.rad2deg(group["target"][()])
    simulated = np.rad2deg(group["simulated"][()])
    names = strings(group["dof_names"])
    leg = group.attrs["leg"]
    leg = leg.decode() if isinstance(leg, bytes) else str(leg)
    ndof = len(names)
    fig, axes = plt.subplots(
        ndof, 1, figsize=(9, 1.0 + 0.8 * ndof), sharex=True, squeeze=False, layout="tight"
    )
    for k, ax in enumerate(axes[:, 0]):
        ax.plot(time, target[:, k], linestyle=":", color="C0", label="Target")
        ax.plot(time, simulated[:, k], color="C1", label="Simulated")
        ax.set_ylabel("Angle\n(°)")
        ax.set_title(short_dof_name(names[k]), fontsize="medium")
        if k == 0:
            ax.legend(bbox_to_anchor=(1.04, 0.5), loc="center left")
    axes[-1, 0].set_xlabel("Time (s)")
    fig.suptitle(f"{leg.upper()} leg joint angles, world 0: target vs. simulated")
    return save(fig, out / "joint_angle_tracking")


def plot_pose(group, out: Path) -> list[Path]:
    points = group["points"][()]  # (T, P, 3)
    time = group["time"][()]
    point_leg = group["point_leg"][()]
    legs = strings(group["leg_names"])
    nstep = points.shape[0]
    dt = time[1] - time[0] if nstep > 1 else 1.0
    interval = max(int(round(SNAPSHOT_INTERVAL_S / dt)), 1)
    nsnap = max(nstep // interval, 1)
    fig = plt.figure(figsize=(8, 8))
    ax = fig.add_subplot(projection="3d")
    for s in range(nsnap):
        k = s * interval
        alpha = (s / nsnap) * 0.8 + 0.2
        first = None
        for leg in range(len(legs)):
            chain = points[k, point_leg == leg, :]
            if len(chain) == 0:
                continue
            ax.plot(chain[:, 0], chain[:, 1], chain[:, 2], color="black", alpha=alpha)
            first = chain[0] if first is None else first
        if first is not None:
            x, y, z = first
            ax.plot([x, x], [y, y], [z + 1, z + 3], color="black", alpha=0.5)
            ax.text(x, y, z + 3.2, f"t={time[k]:.1f}s", color="black", ha="center", va="bottom")
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("y (mm)")
    ax.set_zlabel("z (mm)")
    ax.set_aspect("equal")
    fig.suptitle("Leg-joint pose over time, world 0")
    return save(fig, out / "pose_over_time")


def plot_tracking_error(group, out: Path) -> list[Path]:
    rms = np.rad2deg(group["rms"][()])  # (N, A)
    names = [short_dof_name(n) for n in strings(group["dof_names"])]
    nworld, ndof = rms.shape
    q = np.percentile(rms, [0, 25, 50, 75, 100], axis=0)
    x = np.arange(ndof)
    fig, ax = plt.subplots(figsize=(max(8, 0.22 * ndof + 2), 4.5), layout="tight")
    ax.vlines(x, q[0], q[4], color="C0", alpha=0.35, linewidth=1, label="range")
    ax.vlines(x, q[1], q[3], color="C0", linewidth=4, label="interquartile range")
    ax.plot(x, q[2], "o", color="C1", markersize=3.5, label="median")
    ax.set_xticks(x, names, rotation=90, fontsize=6)
    ax.set_xlim(-0.8, ndof - 0.2)
    ax.set_ylabel("RMS tracking error (°)")
    ax.set_title(
        f"Tracking error per DoF over {nworld} world{'s' if nworld != 1 else ''} "
        f"({int(group.attrs['steps'])} steps): target - simulated"
    )
    ax.legend(loc="upper right", fontsize="small")
    return save(fig, out / "tracking_error")


def save(fig, stem: Path) -> list[Path]:
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    fig.savefig(paths[0], dpi=120)
    fig.savefig(paths[1])
    plt.close(fig)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("h5", type=Path, help="the replay's HDF5 file (DIR/replay.h5)")
    parser.add_argument("out", type=Path, help="folder for the figures")
    args = parser.parse_args()
    written = []
    with h5py.File(args.h5, "r") as f:
        if not any(k in f for k in ("plots/joint_tracking", "plots/tracking_error", "pose")):
            print(f"{args.h5}: no /plots/joint_tracking, /plots/tracking_error or /pose: "
                  "not a flysim --save-data file with plots (angles, targets or sites recorded)",
                  file=sys.stderr)
            return 1
        if "plots/joint_tracking" in f:
            written += plot_joint_tracking(f["plots/joint_tracking"], args.out)
        if "plots/tracking_error" in f:
            written += plot_tracking_error(f["plots/tracking_error"], args.out)
        if "pose" in f:
            written += plot_pose(f["pose"], args.out)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
