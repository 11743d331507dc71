#!/usr/bin/env python3
"""`flysim compare` as a user runs it: cpu,host in float64 and float32 on NeuroMechFly
(contacts, adhesion, noslip) and on the walker on box terrain (box-mesh contacts), the table, the summary, compare.h5 and divergence.png,
--stages, the exit codes (0 within the bounds, 3 outside, 1 error, 2 usage, 130
interrupted), a deliberately broken stepper (FLYSIM_PERTURB_PASSIVE) caught, and bad
input named with its fix.

Usage: test_compare.py FLYSIM_BINARY ASSETS_DIR MODELS_DIR
"""

import math
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import mujoco
import numpy as np

import cliutil
from cliutil import check, summary

FLYSIM, ASSETS, MODELS = sys.argv[1], sys.argv[2], sys.argv[3]


def run(*args, env=None, timeout=600):
    return cliutil.run(FLYSIM, "compare", *args, env=env, timeout=timeout)


def test_help_and_usage():
    rc, out, _ = run("--help")
    check(rc == 0, "compare --help exits 0")
    for opt in ["--backends", "--precision", "--model-b", "--targets-b", "--worlds", "--sim-steps",
                "--floor", "--floor-runs", "--max-ratio", "--stages", "--save", "--no-plot",
                "Exit status"]:
        check(opt in out, f"compare --help documents {opt}")
    cases = [
        (["--backends", "cpu"], "not two backends"),
        (["--backends", "cpu,tpu"], "'tpu' is not a backend"),
        (["--backends", "cpu:f32,host"], "cpu is MuJoCo's mj_step in float64"),
        (["--backends", "cpu,host:f16"], "'f16' is not a precision"),
        (["--floor", "f16"], "--floor ulp, f32 or f32-step"),
        (["--floor-runs", "0"], "--floor-runs: '0' is not an integer in [1, 64]"),
        (["--floor-runs", "65"], "--floor-runs: '65' is not an integer in [1, 64]"),
        (["--max-ratio", "0"], "--max-ratio"),
        (["--no-plot"], "--no-plot only applies with --save"),
        (["--backends", "cpu,cpu", "--stages"], "both backends are cpu"),
        (["--backends", "cpu,cpu", "--max-contacts", "8"],
         "--max-contacts bounds the buffers of flysim's stepper"),
        (["--sim-steps", "5", "--sim-duration-sec", "1"], "pass one of them"),
        (["--bogus"], "unknown option '--bogus'"),
    ]
    for args, text in cases:
        rc, _, err = run(*args)
        check(rc == 2 and text in err, f"compare {' '.join(args)}: exit {rc} (2), {err!r}")


def test_f64(tmp):
    """cpu,host in float64 with the stage check, saved: exit 0, the file and the plot."""
    out_dir = os.path.join(tmp, "f64")
    rc, out, err = run("--backends", "cpu,host", "--precision", "f64", "--worlds", "3",
                       "--sim-steps", "1500", "--stages", "--save", out_dir, "--quiet")
    check(rc == 0, f"cpu,host f64: exit {rc}: {err}\n{out}")
    s = summary(out)
    check(s.get("backend_b") == "host:f64" and s.get("floor") == "ulp" and s.get("verdict") == "pass"
          and s.get("stages") == "pass" and s.get("steps") == "1500", f"f64 summary: {s}")
    ratio = float(s["ratio"])
    check(0 < ratio <= 3, f"f64 ratio to the floor {ratio} in (0, 3]")
    check(float(s["max_dq_b"]) < 1e-9, f"f64 host stays at double round-off: {s['max_dq_b']}")
    for text in ["B vs A", "floor vs A", "per world", "stages (host float64", "fwd_constraint",
                 "collision", "verdict: pass"]:
        check(text in out, f"f64 report shows {text!r}")
    path = os.path.join(out_dir, "compare.h5")
    with h5py.File(path) as f:
        check(f.attrs["verdict"] == "pass" and f.attrs["steps_compared"] == 1500,
              "compare.h5 verdict and steps")
        check(abs(f.attrs["ratio"] - ratio) <= 1e-5 * ratio, "compare.h5 ratio = the summary's")
        geo_b, geo_f = f["b_vs_a/dq_geomean"][:], f["floor_vs_a/dq_geomean"][:]
        check(geo_b.shape == (1500,) and f["time"].shape == (1500,), "series have one row per step")
        # against the file's ratio: the summary's has 6 digits (off by up to 5e-6)
        again = math.exp(np.mean(np.log(geo_b) - np.log(geo_f)))
        check(abs(again - f.attrs["ratio"]) <= 1e-9 * ratio,
              f"the ratio is the series' geometric mean: {again} vs {f.attrs['ratio']}")
        track = f["worlds/tracking_rms_a"][:]
        check(track.shape == (3,) and np.all((track > 0.01) & (track < 0.12)),
              f"tracking RMS of the replay (rad): {track}")
        check(np.allclose(f["worlds/tracking_rms_a"][:], f["worlds/tracking_rms_b"][:], atol=1e-6),
              "float64 tracking equal on both")
        stages = [s.decode() if isinstance(s, bytes) else s for s in f["stages/stage"][:]]
        check("collision" in stages and "fwd_constraint" in stages and "step 1" in stages,
              f"/stages rows: {stages}")
        check(np.all(f["stages/error"][:] <= f["stages/bound"][:]), "stages within bounds")
        check("compare" in f.attrs["command_line"] and f.attrs["mujoco_version"].startswith("3."),
              "command line and versions recorded")
    png = os.path.join(out_dir, "divergence.png")
    check(os.path.exists(png) and os.path.getsize(png) > 20000, "divergence.png written")


def test_f32(tmp):
    """cpu,host in float32 (the default floor f32-step with 4 runs, bound 3). The floor's
    first run is the one-run floor to the bit, so its |dq| is at least that run's after
    every step; the stochastic runs differ from it."""
    series = {}
    for runs in ("default", "1"):
        out_dir = os.path.join(tmp, f"f32-runs-{runs}")
        extra = [] if runs == "default" else ["--floor-runs", runs]
        rc, out, err = run("--backends", "cpu,host", "--worlds", "3", "--sim-steps", "1500",
                           "--save", out_dir, "--no-plot", "--quiet", *extra)
        check(rc == 0, f"cpu,host f32 (floor runs {runs}): exit {rc}: {err}\n{out}")
        s = summary(out)
        check(s.get("backend_b") == "host:f32" and s.get("floor") == "f32-step"
              and s.get("floor_runs") == ("4" if runs == "default" else "1")
              and s.get("max_ratio") == "3" and s.get("verdict") == "pass",
              f"f32 summary (floor runs {runs}): {s}")
        check(float(s["max_dq_b"]) > 0, "float32 differs from MuJoCo")
        with h5py.File(os.path.join(out_dir, "compare.h5")) as f:
            check(f.attrs["floor_runs"] == int(s["floor_runs"]), "compare.h5 floor_runs")
            series[runs] = f["floor_vs_a/dq_max"][:]
    many, one = series["default"], series["1"]
    check(np.all(many >= one), "the floor of 4 runs is at least its first run's, every step")
    check(np.any(many > one), "the stochastic runs differ from rounding to nearest")


def test_f64_runs(tmp):
    """--floor-runs 2 in float64 (the ulp floor: its runs plan over A's loaded model and
    clip, nothing read twice): the first run is the one-run floor to the bit, the second
    moves its ulps in its own directions."""
    series = {}
    for runs in ("2", "1"):
        out_dir = os.path.join(tmp, f"f64-runs-{runs}")
        rc, out, err = run("--backends", "cpu,host", "--precision", "f64", "--worlds", "3",
                           "--sim-steps", "300", "--floor-runs", runs, "--save", out_dir,
                           "--no-plot", "--quiet")
        check(rc == 0, f"cpu,host f64 (floor runs {runs}): exit {rc}: {err}\n{out}")
        s = summary(out)
        check(s.get("floor") == "ulp" and s.get("floor_runs") == runs
              and s.get("verdict") == "pass", f"f64 summary (floor runs {runs}): {s}")
        with h5py.File(os.path.join(out_dir, "compare.h5")) as f:
            series[runs] = f["floor_vs_a/dq_max"][:]
    two, one = series["2"], series["1"]
    check(two.shape == one.shape == (300,), "one row per step")
    check(np.all(two >= one), "the floor of 2 runs is at least its first run's, every step")
    check(np.any(two > one), "the second run's ulps move in their own directions")


def test_broken_stepper(tmp):
    """A deliberately broken stepper: the host's passive forces off by 1e-3 (relative)
    in every step. It must fail (exit 3) in both precisions, and keep its file."""
    for precision in ("f64", "f32"):
        out_dir = os.path.join(tmp, f"broken-{precision}")
        rc, out, err = run("--backends", "cpu,host", "--precision", precision, "--worlds", "3",
                           "--sim-steps", "1500", "--save", out_dir, "--no-plot", "--quiet",
                           env={"FLYSIM_PERTURB_PASSIVE": "1e-3"})
        check(rc == 3, f"broken {precision}: exit {rc} (3): {err}\n{out}")
        s = summary(out)
        check(s.get("verdict") == "fail" and float(s["ratio"]) > float(s["max_ratio"]),
              f"broken {precision} summary: {s}")
        check("OUTSIDE" in out and "FLYSIM_PERTURB_PASSIVE" in out,
              f"broken {precision}: the report says so and names the switch")
        with h5py.File(os.path.join(out_dir, "compare.h5")) as f:
            check(f.attrs["verdict"] == "fail", f"broken {precision}: file verdict")
    # the stage check catches it too, in the stage that is wrong
    rc, out, _ = run("--backends", "cpu,host", "--precision", "f64", "--worlds", "2",
                     "--sim-steps", "20", "--stages", "--quiet",
                     env={"FLYSIM_PERTURB_PASSIVE": "1e-3"})
    check(rc == 3, f"broken stepper with --stages: exit {rc} (3)")


def walker_clip(tmp, model="walker.xml"):
    """A clip for tests/models/walker.xml (its position actuators' joints)."""
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, model))
    names = [m.joint(m.actuator_trnid[a, 0]).name for a in range(m.nu)
             if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]
    path = os.path.join(tmp, "walker_clip.h5")
    with h5py.File(path, "w") as f:
        f["targets"] = np.zeros((20000, len(names)))
        f["dof_names"] = np.array(names, dtype=h5py.string_dtype())
        f.attrs["timestep"] = m.opt.timestep
    return path


def test_terrain(tmp):
    """The walker on terrain (tests/models/walker_terrain.xml: convex-mesh feet on static
    boxes, margins 1e-3 and 0): cpu,host in float64 and float32 with the stage check."""
    model = os.path.join(MODELS, "walker_terrain.xml")
    clip = walker_clip(tmp, "walker_terrain.xml")
    for precision in ("f64", "f32"):
        rc, out, err = run("--model", model, "--targets", clip, "--backends", "cpu,host",
                           "--precision", precision, "--worlds", "3", "--sim-steps", "1500",
                           "--stages", "--quiet")
        check(rc == 0, f"terrain {precision}: exit {rc}: {err}\n{out}")
        s = summary(out)
        check(s.get("verdict") == "pass" and s.get("stages") == "pass",
              f"terrain {precision} summary: {s}")
        if precision == "f64":
            check(float(s["max_dq_b"]) < 1e-9, f"terrain f64 at round-off: {s['max_dq_b']}")


def test_bad_input(tmp):
    rc, _, err = run("--backends", "cpu,cuda", "--sim-steps", "10")
    if rc != 0:  # no GPU here
        check(rc == 1 and "cuda" in err and "fix:" in err and "cpu,host" in err,
              f"cuda without a GPU: exit {rc}, {err!r}")
    rc, _, err = run("--model-b", os.path.join(MODELS, "walker.xml"), "--targets-b",
                     walker_clip(tmp), "--backends", "cpu,host", "--sim-steps", "10")
    check(rc == 1 and "models differ" in err and "fix:" in err, f"mismatched models: {rc} {err!r}")
    short = os.path.join(tmp, "short_clip.h5")
    with h5py.File(os.path.join(ASSETS, "walking_clip.h5")) as src, h5py.File(short, "w") as dst:
        dst["targets"] = src["targets"][:15000]
        dst["dof_names"] = src["dof_names"][:]
        for k, v in src.attrs.items():
            dst.attrs[k] = v
    rc, _, err = run("--targets-b", short, "--backends", "cpu,host", "--sim-steps", "10")
    check(rc == 1 and "clips differ in length" in err and "fix:" in err and short in err
          and "walking_clip.h5" in err, f"mismatched clips, each named: {rc} {err!r}")
    rc, _, err = run("--backends", "cpu,host", "--sim-steps", "10", "--save", "/proc/forbidden/x")
    check(rc == 1 and "/proc/forbidden" in err, f"unwritable --save: {rc} {err!r}")
    rc, _, err = run("--model", "/nonexistent/fly.mjb", "--backends", "cpu,host")
    check(rc == 1 and "/nonexistent/fly.mjb" in err, f"missing model: {rc} {err!r}")


def test_interrupt(tmp):
    """Ctrl-C mid-run: exit 130, the steps compared so far reported and saved."""
    out_dir = os.path.join(tmp, "interrupted")
    # Ctrl-C after 2.5 s; on a loaded machine that may come before the first step is
    # compared (loading and warm-up), so a run interrupted at step 0 is tried again later.
    for delay in (2.5, 6, 15):
        proc = subprocess.Popen([FLYSIM, "compare", "--backends", "cpu,host", "--worlds", "8",
                                 "--sim-steps", "10000", "--warmup-sec", "0.001", "--save",
                                 out_dir, "--no-plot", "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        check(proc.returncode == 130, f"interrupted compare: exit {proc.returncode} (130): {err}")
        s = summary(out)
        n = int(s.get("steps", 0))
        if n > 0:
            break
    check(s.get("interrupted") == "1" and s.get("verdict") == "incomplete" and 0 < n < 10000,
          f"interrupted summary: {s}")
    with h5py.File(os.path.join(out_dir, "compare.h5")) as f:
        check(f.attrs["verdict"] == "incomplete" and f.attrs["steps_compared"] == n
              and f["b_vs_a/dq_max"].shape == (n,), "interrupted file keeps what was compared")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-compare-") as tmp:
        test_help_and_usage()
        test_f64(tmp)
        test_f32(tmp)
        test_f64_runs(tmp)
        test_broken_stepper(tmp)
        test_terrain(tmp)
        test_bad_input(tmp)
        test_interrupt(tmp)
    cliutil.finish("test_compare")


if __name__ == "__main__":
    main()
