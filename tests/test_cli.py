#!/usr/bin/env python3
"""`flysim replay` as a user runs it: help, exit codes, error messages, the
summary line, the saved file's layout, --targets sine on a model that is not a fly, and
Ctrl-C / SIGKILL mid-run.

Usage: test_cli.py FLYSIM_BINARY ASSETS_DIR
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

# Read the live file while flysim writes it (the writer holds HDF5's file lock).
os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import h5py  # noqa: E402
import numpy as np  # noqa: E402

import cliutil  # noqa: E402
from cliutil import check, summary  # noqa: E402

FLYSIM, ASSETS = sys.argv[1], sys.argv[2]


def run(*args, env=None, timeout=300):
    return cliutil.run(FLYSIM, *args, env=env, timeout=timeout)


def test_help():
    rc, out, _ = run("--help")
    check(rc == 0 and "replay" in out, "flysim --help")
    rc, _, _ = run()
    check(rc == 2, "flysim without a command is a usage error")
    rc, out, _ = run("replay", "--help")
    check(rc == 0, "flysim replay --help exits 0")
    for opt in ["--backend", "--model", "--targets", "--worlds", "--threads",
                "--sim-duration-sec", "--sim-steps", "--warmup-sec", "--save-data",
                "--profile", "--disable", "--mujoco-timing", "--no-video", "--no-plots",
                "--plot-leg", "--record", "--render-worlds", "--max-contacts", "--quiet",
                "--help"]:
        check(opt in out, f"--help documents {opt}")
    rc, out, _ = run("--version")
    check(rc == 0 and "MuJoCo 3.16" in out, "--version names MuJoCo's version")
    # the version and the commit built from (".dirty": tracked files changed), refreshed by
    # every build (cmake/FlysimVersion.cmake)
    check(re.match(r"flysim \d+\.\d+\.\d+(\+g[0-9a-f]{4,}(\.dirty)?)? \(", out) is not None,
          f"--version: 'flysim X.Y.Z+g<commit>[.dirty] (...)': {out!r}")


def test_usage_errors():
    cases = [
        (["--worlds", "0"], "--worlds"),
        (["--worlds", "abc"], "'abc' is not an integer"),
        (["--backend", "tpu"], "--backend cpu, cuda or host"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--sim-steps", "5", "--sim-duration-sec", "1"], "pass one of them"),
        (["--sim-steps", "999999"], "--sim-steps <= 20000"),
        (["--disable", "gravity2"], "not a MuJoCo disable flag"),
        (["--worlds"], "needs a value"),
    ]
    for args, text in cases:
        rc, _, err = run("replay", *args)
        check(rc == 2, f"replay {' '.join(args)}: exit {rc}, expected 2")
        check(text in err, f"replay {' '.join(args)}: {text!r} in {err!r}")


def test_precision_usage():
    rc, _, err = run("replay", "--precision", "f64")
    check(rc == 2 and "--backend cuda or --backend host" in err and "fix:" in err,
          f"--precision on cpu: {rc} {err!r}")
    rc, _, err = run("replay", "--backend", "cuda", "--precision", "f16")
    check(rc == 2 and "f16" in err and "fix:" in err, f"--precision f16: {rc} {err!r}")


def test_host_backend(tmp):
    """--backend host: the GPU's stage code on CPU threads, both precisions, the
    summary and the file name it."""
    for precision, bits in (("f32", "float32"), ("f64", "float64")):
        out_dir = os.path.join(tmp, f"host-{precision}")
        rc, out, err = run("replay", "--backend", "host", "--precision", precision, "--worlds", "2",
                           "--sim-steps", "300", "--save-data", out_dir, "--quiet")
        check(rc == 0, f"host {precision} replay exits 0: {err}")
        s = summary(out)
        check(s.get("backend") == "host" and s.get("precision") == precision
              and s.get("steps") == "300" and s.get("problem_worlds") == "0",
              f"host {precision} summary: {s}")
        check(f"on host: 2 threads, {bits}" in out, f"host {precision} header: {out!r}")
        with h5py.File(os.path.join(out_dir, "replay.h5")) as f:
            q = f["qpos_joint"][:]
            check(f.attrs["backend"] == "host" and f.attrs["precision"] == precision,
                  f"host {precision} file attributes")
            check(q.shape == (300, 2, 66) and np.isfinite(q).all() and np.abs(q).max() > 0.01,
                  f"host {precision} angles: {q.shape}")
        for name in ("joint_angle_tracking.png", "pose_over_time.png", "tracking_error.png",
                     "grid.mp4"):
            check(os.path.exists(os.path.join(out_dir, name)) and name.split(".")[0] in out,
                  f"host {precision}: {name} written and named: {out!r}")
    rc, _, err = run("replay", "--backend", "host", "--mujoco-timing")
    check(rc == 2 and "--backend cpu" in err, f"--mujoco-timing on host: {rc} {err!r}")
    os.environ["FLYSIM_PERTURB_PASSIVE"] = "x1"
    rc, _, err = run("replay", "--backend", "host", "--sim-steps", "10")
    del os.environ["FLYSIM_PERTURB_PASSIVE"]
    check(rc == 1 and "FLYSIM_PERTURB_PASSIVE" in err and "fix:" in err,
          f"bad FLYSIM_PERTURB_PASSIVE: {rc} {err!r}")
    # the on-chip plan's switches (common/model/onchip.h): said in the header, bad values refused
    rc, out, err = run("replay", "--backend", "host", "--sim-steps", "10")
    m = re.search(r"(\d+) of (\d+) intermediates \(\d+ B of [\d.]+ KiB\) a world in the thread's "
                  r"cache region", out)
    check(rc == 0 and m and 0 < int(m.group(1)) < int(m.group(2)),
          f"host header names its plan (every intermediate but the views' fields): {out!r}")
    for var, value in (("FLYSIM_ONCHIP_BYTES", "lots"), ("FLYSIM_ONCHIP_POISON", "2")):
        os.environ[var] = value
        rc, _, err = run("replay", "--backend", "host", "--sim-steps", "10")
        del os.environ[var]
        check(rc == 1 and var in err and "fix:" in err, f"bad {var}: {rc} {err!r}")


def test_sine_any_model(tmp):
    """--targets sine on a model that is not a fly: a robot arm of motors and a position
    servo, no legs. Every actuator driven, the servo's column alone tracked, the
    tracking-error figure written and no leg figure; --plot-leg asked of it refused."""
    model = os.path.join(tmp, "arm.xml")
    with open(model, "w") as f:
        f.write("<mujoco><option timestep='0.005'/><default><geom contype='0' conaffinity='0'/>"
                "</default><worldbody><body><joint name='shoulder' axis='0 1 0' damping='0.1'/>"
                "<geom size='0.05'/><body pos='0 0 -0.3'><joint name='elbow' axis='0 1 0'/>"
                "<geom size='0.05'/></body></body></worldbody><actuator>"
                "<motor name='torque' joint='shoulder' ctrlrange='-1 1'/>"
                "<position name='servo' joint='elbow' kp='5' ctrlrange='-0.5 0.5'/>"
                "</actuator></mujoco>")
    out_dir = os.path.join(tmp, "sine")
    for backend in ("cpu", "host"):
        rc, out, err = run("replay", "--model", model, "--targets", "sine", "--backend", backend,
                           "--worlds", "2", "--sim-steps", "400", "--save-data", out_dir,
                           "--record", "angles,targets", "--no-video")
        check(rc == 0, f"sine replay on {backend} exits 0: {err}")
        check("tracking_error.png" in out and "joint_angle_tracking" not in out,
              f"sine replay on {backend} names the tracking error alone: {out!r}")
        check(os.path.exists(os.path.join(out_dir, "tracking_error.png")) and
              not os.path.exists(os.path.join(out_dir, "joint_angle_tracking.png")),
              f"sine replay on {backend}: the figures")
        with h5py.File(os.path.join(out_dir, "replay.h5")) as f:
            t, q = f["target"][:], f["qpos_joint"][:]
            rms = f["plots/tracking_error/rms"][:]
            check(list(f["target_joint_index"][:]) == [-1, 1], "sine: the servo's column alone")
            top = np.abs(t).max(axis=(0, 1))
            check(t.shape == (400, 2, 2) and 0.7 < top[0] <= 0.8 + 1e-6 and
                  0.35 < top[1] <= 0.4 + 1e-6 and not np.array_equal(t[:, 0], t[:, 1]),
                  f"sine: every actuator driven, the worlds at their own phases: {t.shape}")
            check(np.abs(q[:, :, 0]).max() > 0.01, "sine: the motor moves its joint")
            check(np.isnan(rms[:, 0]).all() and np.isfinite(rms[:, 1]).all(),
                  f"sine: the motor's column untracked, the servo's tracked: {rms}")
    rc, _, err = run("replay", "--model", model, "--targets", "sine", "--sim-steps", "10",
                     "--save-data", out_dir, "--plot-leg", "lf", "--no-video")
    check(rc == 2 and "--plot-leg lf" in err and "fix:" in err, f"--plot-leg without legs: {err!r}")


def test_step_overflow():
    """Seconds that take more steps than a run may (or than an int holds) are refused with
    the option, the steps and the most seconds allowed, in every verb, as a usage error
    (exit 2; bench said it as a runtime one): never wrapped to a negative count or to 1
    warm-up step; more cpu worlds than memory holds refused up front (issue 46)."""
    cases = [("replay", "--warmup-sec", "429496.7297"), ("replay", "--warmup-sec", "214748.3648"),
             ("replay", "--warmup-sec", "1e9"), ("replay", "--sim-duration-sec", "429496.7297"),
             ("compare", "--warmup-sec", "1e9"), ("compare", "--sim-duration-sec", "214748.3648"),
             ("bench", "--warmup-sec", "1e9")]
    for verb, opt, val in cases:
        extra = ["--backends", "cpu,host"] if verb != "replay" else ["--backend", "host"]
        rc, out, err = run(verb, opt, val, *extra, timeout=60)
        check(rc == 2 and f"{opt} {float(val):.10g}:" in err and "fix: at most" in err
              and "steps at the model's timestep" in err and "summary" not in out,
              f"{verb} {opt} {val}: refused with the fix ({rc}, {err!r})")
    # more cpu worlds than the machine's memory holds: refused up front, not OOM-killed
    rc, out, err = run("replay", "--backend", "cpu", "--worlds", "16777216", "--sim-steps", "10",
                       timeout=60)
    check(rc == 1 and "16777216 worlds need" in err and "available; fix: at most" in err,
          f"cpu --worlds 16777216: refused with the fix ({rc}, {err!r})")
    # the host backend the same (was 'out of memory allocating M', or worse, the OOM killer
    # where each array fit but not all of them)
    rc, out, err = run("replay", "--backend", "host", "--worlds", "16777216", "--sim-steps", "10",
                       timeout=60)
    check(rc == 1 and "the host backend's 16777216 worlds need" in err and "fix: at most" in err
          and "mesh.mjb" in err, f"host --worlds 16777216: refused with the fix ({rc}, {err!r})")


def test_partial_clip(tmp):
    """A clip driving 3 of the fly's 42 position actuators runs, with a note saying so (issue
    46: accepted without a word); the whole clip has no note."""
    three = os.path.join(tmp, "three.h5")
    with h5py.File(os.path.join(ASSETS, "walking_clip.h5")) as s, h5py.File(three, "w") as d:
        d["targets"] = s["targets"][:, :3]
        d["dof_names"] = s["dof_names"][:3]
        for k, v in s.attrs.items():
            d.attrs[k] = v
    rc, out, err = run("replay", "--targets", three, "--backend", "host", "--sim-steps", "10")
    check(rc == 0 and "the clip drives 3 of the model's 42 position actuators" in out,
          f"a partial clip is noted: {rc} {out!r} {err!r}")
    rc, out, _ = run("replay", "--backend", "host", "--sim-steps", "10")
    check(rc == 0 and "position actuators; the others" not in out, "the whole clip: no note")


def test_runtime_errors(tmp):
    rc, _, err = run("replay", "--model", "/nonexistent/fly.mjb")
    check(rc == 1 and "/nonexistent/fly.mjb" in err and "fix:" in err,
          f"missing model: exit {rc}, {err!r}")
    bad = os.path.join(tmp, "bad.h5")
    with open(bad, "w") as f:
        f.write("not hdf5")
    rc, _, err = run("replay", "--targets", bad)
    check(rc == 1 and bad in err and "not an HDF5 file" in err, f"bad targets: {err!r}")
    # A broken MJCF: MuJoCo's parser text on one line, with the file, the line and a fix.
    for name, geom in (("syntax.xml", '<geom type="sphere" size="1"'),
                       ("attribute.xml", '<geom type="sphere" size="1" bogus="3"/>')):
        xml = os.path.join(tmp, name)
        with open(xml, "w") as f:
            f.write(f'<mujoco>\n  <worldbody>\n    <body name="a">\n      {geom}\n'
                    '    </body>\n  </worldbody>\n</mujoco>\n')
        rc, _, err = run("replay", "--model", xml, "--sim-steps", "10")
        check(rc == 1 and err.count("\n") == 1 and err.startswith("flysim replay: error: ")
              and f"{xml}, line 4: cannot load the model: " in err
              and "fix: correct the MJCF at line 4" in err and "--model" in err,
              f"broken MJCF {name}: one line with the file, the line and a fix: {rc} {err!r}")
    # The default model as exported (contacts, noslip) on the GPU stepper, in both
    # precisions: without a GPU the only error is the missing device (the model check
    # runs first and accepts it); with one it runs (the GPU tests cover it).
    for precision in ("f32", "f64"):
        rc, _, err = run("replay", "--backend", "cuda", "--precision", precision, "--sim-steps", "10")
        if rc != 0:
            check(rc == 1 and cliutil.no_cuda(err) and "fix:" in err
                  and "does not implement" not in err,
                  f"cuda {precision} without a GPU: exit {rc}, {err!r}")
    rc, _, err = run("replay", "--save-data", "/proc/forbidden/dir", "--sim-steps", "10")
    check(rc == 1 and "/proc/forbidden" in err, f"unwritable --save-data: {err!r}")


def test_max_contacts(tmp):
    """--max-contacts: the contact buffer of flysim's stepper; refused on cpu, said in the
    header, the peak in the summary and the file, and a bound too small flagged with the
    fix (tests/engine/test_contact_bound.c checks the physics: bit-identical at the peak)."""
    for args, text in ((["--max-contacts", "16"], "--backend cuda or --backend host"),
                       (["--backend", "host", "--max-contacts", "0"], "--max-contacts"),
                       (["--backend", "host", "--max-contacts", "many"], "not an integer")):
        rc, _, err = run("replay", *args)
        check(rc == 2 and text in err and "fix:" in err, f"replay {args}: {rc} {err!r}")
    rc, out, err = run("replay", "--sim-steps", "300", "--worlds", "2", "--quiet")
    peak = int(summary(out).get("peak_contacts", 0))
    check(rc == 0 and peak > 0 and f"at most {peak} in a world's step" in out,
          f"cpu reports its peak contacts: {out!r}")
    out_dir = os.path.join(tmp, "bounded")
    rc, out, err = run("replay", "--backend", "host", "--precision", "f64", "--sim-steps", "300",
                       "--worlds", "2", "--max-contacts", str(peak), "--save-data", out_dir,
                       "--record", "qpos", "--no-video", "--no-plots", "--quiet")
    s = summary(out)
    check(rc == 0 and s.get("problem_worlds") == "0" and s.get("peak_contacts") == str(peak)
          and f"{peak} contacts, {4 * peak} rows" in out,
          f"host bounded at the cpu's peak ({peak}): {s} {out!r}")
    with h5py.File(os.path.join(out_dir, "replay.h5")) as f:
        check(f["world_peak_contacts"][:].max() == peak, "the file keeps each world's peak")
    rc, out, err = run("replay", "--backend", "host", "--sim-steps", "300", "--worlds", "2",
                       "--max-contacts", str(peak - 4), "--quiet")
    s = summary(out)
    check(rc == 0 and s.get("problem_worlds") == "2" and "contact-buffer-full" in err
          and f"fix: --max-contacts {peak} or more" in err,
          f"a bound under the peak is flagged with the fix: {s} {err!r}")
    # FLYSIM_ONCHIP_BYTES=all: the host runs the GPU's plan, every intermediate on-chip
    os.environ["FLYSIM_ONCHIP_BYTES"] = "all"
    rc, out, err = run("replay", "--backend", "host", "--sim-steps", "10", "--max-contacts", "24")
    del os.environ["FLYSIM_ONCHIP_BYTES"]
    m = re.search(r"(\d+) of (\d+) intermediates .* on-chip as on the GPU", out)
    check(rc == 0 and m and m.group(1) == m.group(2), f"FLYSIM_ONCHIP_BYTES=all: {out!r}")


def test_run_and_file(tmp):
    out_dir = os.path.join(tmp, "run")
    rc, out, err = run("replay", "--worlds", "3", "--sim-steps", "600", "--threads", "2",
                       "--save-data", out_dir, "--no-video", "--no-plots", "--quiet")
    check(rc == 0, f"short replay exits 0: {err}")
    s = summary(out)
    check(s.get("backend") == "cpu" and s.get("worlds") == "3" and s.get("steps") == "600"
          and s.get("problem_worlds") == "0" and s.get("interrupted") == "0",
          f"summary fields: {s}")
    check(float(s.get("world_steps_per_s", 0)) > 0, "throughput reported")
    path = os.path.join(out_dir, "replay.h5")
    layout = subprocess.run(["h5dump", "-H", path], capture_output=True, text=True).stdout
    for line in [r'DATASET "qpos_joint"[\s\S]*?\( 600, 3, 66 \)',
                 r'DATASET "target"[\s\S]*?\( 600, 3, 42 \)',
                 r'DATASET "time"[\s\S]*?\( 600 \)',
                 r'DATASET "joint_names"[\s\S]*?\( 66 \)',
                 r'DATASET "actuator_names"[\s\S]*?\( 42 \)']:
        check(re.search(line, layout), f"h5dump -H shows {line}")
    with h5py.File(path) as f:
        for attr in ["units", "timestep", "model_file", "targets_file", "mujoco_version",
                     "flysim_version", "command_line", "backend", "complete", "stop_reason"]:
            check(attr in f.attrs, f"attribute {attr}")
        check(f.attrs["complete"] == 1 and f.attrs["stop_reason"] == "completed",
              "complete run")
        check(f.attrs["mujoco_version"] == "3.16.0", "MuJoCo version attribute")
        check("--worlds 3" in f.attrs["command_line"], "command line attribute")
        check(list(f["world_start"][:]) == [0, 600, 1200], "world offsets")
        check(f["qpos_joint"].compression == "gzip", "compressed when complete")
        check(f["qpos_joint"].chunks[0] == 600, "chunks are whole blocks of steps")
        q = f["qpos_joint"][:]
        check(np.isfinite(q).all() and np.ptp(q[:, 0, :], axis=0).max() > 0.1, "joints move")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["joint_names"][:]]
        check(names[0].endswith("c_thorax-lf_coxa-yaw"), f"joint names: {names[:2]}")
        check(np.allclose(f["time"][:3], [0, 1e-4, 2e-4]), "time")


def test_repack_hangs(tmp):
    """An h5repack that hangs (as one did in CI under a sanitizer's preload) is stopped at
    its limit: the run ends, says which file is left uncompressed, and the file is whole."""
    bin_dir = os.path.join(tmp, "hung-bin")
    os.makedirs(bin_dir)
    tool = os.path.join(bin_dir, "h5repack")
    with open(tool, "w") as f:
        f.write('#!/bin/sh\necho partial > "$6"\nexec sleep 300\n')
    os.chmod(tool, 0o755)
    out_dir = os.path.join(tmp, "hung")
    path = os.path.join(out_dir, "replay.h5")
    env = {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
           "FLYSIM_H5REPACK_TIMEOUT": "2"}
    start = time.time()
    rc, out, err = cliutil.run(FLYSIM, "replay", "--worlds", "2", "--sim-steps", "300",
                               "--save-data", out_dir, "--no-video", "--no-plots", "--quiet",
                               env=env, timeout=120)
    took = time.time() - start
    check(rc == 0, f"a hung h5repack: exit {rc}: {err!r}")
    check(took < 60, f"a hung h5repack is stopped at its limit: the run took {took:.0f} s")
    check(f"warning: {path}: left uncompressed: h5repack did not finish within 2 s" in err,
          f"the warning names the file and the timeout: {err!r}")
    check(not os.path.exists(path + ".repack"), "no partial copy left beside the file")
    with h5py.File(path) as f:
        check(f["qpos_joint"].compression is None, "left uncompressed")
        check(f.attrs["complete"] == 1 and f["qpos_joint"].shape[0] == 300,
              "the uncompressed file is whole")
        check(np.isfinite(f["qpos_joint"][:]).all(), "its data are finite")


def blocked_opening_fifo(proc, limit=120):
    """Whether flysim is blocked in the open() of a FIFO that has no writer (the kernel's
    wait_for_partner, read from /proc): it is then waiting on it, not guessed by the clock."""
    start = time.time()
    while time.time() - start < limit and proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/wchan") as f:
                if f.read().strip() == "wait_for_partner":
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def test_fifo(tmp):
    """A FIFO as the model or the clip is refused before it is opened; a model that
    includes one, Ctrl-C while MuJoCo waits on it, exits 130 at once saying so."""
    d = os.path.join(tmp, "fifo")
    os.makedirs(d)
    fifo = os.path.join(d, "part.xml")
    os.mkfifo(fifo)
    rc, _, err = run("replay", "--model", fifo, timeout=60)
    check(rc == 1 and f"{fifo}: a special file, not a model file; fix:" in err,
          f"--model FIFO: refused at once: {rc} {err!r}")
    rc, _, err = run("replay", "--targets", fifo, timeout=60)
    check(rc == 1 and f"{fifo}: a FIFO, not a targets file; fix:" in err,
          f"--targets FIFO: refused at once: {rc} {err!r}")
    model = os.path.join(d, "m.xml")
    with open(model, "w") as f:
        f.write('<mujoco><include file="part.xml"/></mujoco>\n')
    proc = subprocess.Popen([FLYSIM, "replay", "--model", model, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    blocked = blocked_opening_fifo(proc)
    check(blocked, "flysim waits on the FIFO its model includes")
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # the signal did not cut the open short: free it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        _, err = proc.communicate(timeout=60)
    check(proc.returncode == 130 and
          f"{model}: interrupted by signal 2 while loading the model" in err,
          f"Ctrl-C on a FIFO the model includes: {proc.returncode} {err!r}")


def fake_repack(tmp, name):
    """A PATH whose h5repack writes its pid beside its copy, starts the copy and waits."""
    bin_dir = os.path.join(tmp, name + "-bin")
    os.makedirs(bin_dir)
    tool = os.path.join(bin_dir, "h5repack")
    with open(tool, "w") as f:
        f.write('#!/bin/sh\necho partial > "$6"\necho $$ > "$6.pid"\nexec sleep 300\n')
    os.chmod(tool, 0o755)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


def start_at_repack(tmp, name, env):
    """flysim replay, its own process group, paused in its compression: the h5repack on
    env's PATH has written its pid (the moment is the fixture's, not the clock's)."""
    out_dir = os.path.join(tmp, name)
    path = os.path.join(out_dir, "replay.h5")
    proc = subprocess.Popen([FLYSIM, "replay", "--sim-steps", "200", "--save-data", out_dir,
                             "--no-video", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    start, pid = time.time(), None
    while time.time() - start < 120 and proc.poll() is None and pid is None:
        try:
            with open(path + ".repack.pid") as f:
                pid = int(f.read())
        except (OSError, ValueError):
            time.sleep(0.05)
    check(pid is not None, f"{name}: the run reaches its compression")
    return proc, path, pid


def gone(pid, limit=30):
    """Whether process pid ends (or is a zombie) within limit seconds."""
    start = time.time()
    while time.time() - start < limit:
        try:
            with open(f"/proc/{pid}/status") as f:
                if "State:\tZ" in f.read():
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_repack_signals(tmp):
    """Ctrl-C in the compression stops it (to the process group, as a terminal sends it, or
    to flysim alone): exit 130 saying so, the file whole and uncompressed, no copy beside
    it, no plots. SIGKILL leaves no h5repack running, and the next run on the folder names
    the copy it removes."""
    for name, group in (("repack-ctrl-c", True), ("repack-sigint", False)):
        proc, path, pid = start_at_repack(tmp, name, fake_repack(tmp, name))
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        check(proc.returncode == 130 and "interrupted by signal 2 after the run" in err and
              f"{path}: left uncompressed: h5repack was stopped" in err,
              f"{name}: exit 130 with the message: {proc.returncode} {err!r}")
        check(summary(out).get("interrupted") == "1", f"{name}: the summary says interrupted")
        check(pid is None or gone(pid), f"{name}: h5repack stopped")
        check(not os.path.exists(path + ".repack"), f"{name}: no partial copy left")
        check(not [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".png")],
              f"{name}: no plots drawn after the interrupt")
        with h5py.File(path) as f:
            check(f.attrs["complete"] == 1 and f["qpos_joint"].shape[0] == 200 and
                  f["qpos_joint"].compression is None,
                  f"{name}: the file is whole, uncompressed")
    proc, path, pid = start_at_repack(tmp, "repack-kill", fake_repack(tmp, "repack-kill"))
    proc.kill()  # flysim alone: its h5repack must not go on as an orphan
    proc.communicate(timeout=60)
    check(pid is None or gone(pid), "SIGKILL: h5repack dies with flysim")
    check(os.path.exists(path + ".repack"), "SIGKILL: the unfinished copy stays (the fixture)")
    rc, out, err = run("replay", "--sim-steps", "20", "--save-data", os.path.dirname(path),
                       "--no-video", "--no-plots", "--quiet")
    check(rc == 0 and f"note    {path}.repack: a compressed copy an earlier run left unfinished"
          in out and not os.path.exists(path + ".repack"),
          f"the next run names and removes the stale copy: {rc} {out!r} {err!r}")


def start_long_run(out_dir, env=None):
    return subprocess.Popen([FLYSIM, "replay", "--worlds", "2", "--sim-steps", "20000",
                             "--threads", "2", "--save-data", out_dir, "--no-video",
                             "--no-plots", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def wait_for_steps(path, proc, minimum, limit=120):
    """Poll the file's /steps_recorded until it reaches minimum."""
    start = time.time()
    while time.time() - start < limit and proc.poll() is None:
        try:
            with h5py.File(path, "r") as f:
                if int(f["steps_recorded"][()]) >= minimum:
                    return True
        except (OSError, KeyError):
            pass
        time.sleep(0.1)
    return False


def test_ctrl_c(tmp):
    out_dir = os.path.join(tmp, "interrupted")
    path = os.path.join(out_dir, "replay.h5")
    proc = start_long_run(out_dir)
    check(wait_for_steps(path, proc, 1), "the run records steps before the interrupt")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    check(proc.returncode == 130, f"Ctrl-C exits 130, got {proc.returncode}: {err}")
    s = summary(out)
    check(s.get("interrupted") == "1", "summary says interrupted")
    with h5py.File(path) as f:
        n = int(f.attrs["steps_recorded"])
        check(0 < n < 20000 and f["qpos_joint"].shape == (n, 2, 66) and f["time"].shape == (n,),
              f"interrupted file holds its {n} steps: {f['qpos_joint'].shape}")
        check(f.attrs["complete"] == 0 and "interrupted by signal 2" in f.attrs["stop_reason"],
              f"stop reason: {f.attrs['stop_reason']}")
        check(int(s["steps"]) == n, f"summary steps {s['steps']} == recorded {n}")
        check(np.isfinite(f["qpos_joint"][:]).all(), "recorded angles are finite")


def test_ctrl_c_in_warmup(tmp):
    """Ctrl-C in the warm-up (the file is created before it, with 0 steps): exit 130 with the
    run's lines and the summary, 0 steps, and the file saying why (issue 46: exit 130 with no
    message or summary)."""
    out_dir = os.path.join(tmp, "warmup")
    path = os.path.join(out_dir, "replay.h5")
    proc = subprocess.Popen([FLYSIM, "replay", "--warmup-sec", "100", "--sim-steps", "100",
                             "--save-data", out_dir, "--no-video", "--no-plots", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.time()
    while time.time() - start < 120 and proc.poll() is None and not os.path.exists(path):
        time.sleep(0.05)
    check(os.path.exists(path), "warm-up: the file is created before the warm-up")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    s = summary(out)
    check(proc.returncode == 130 and "Replayed 0 steps" in out and "(interrupted)" in out and
          s.get("interrupted") == "1" and s.get("steps") == "0",
          f"Ctrl-C in the warm-up: exit 130, said, with the summary: {proc.returncode} {out!r} "
          f"{err!r}")
    with h5py.File(path) as f:
        check(f.attrs["complete"] == 0 and
              f.attrs["stop_reason"] == "interrupted by signal 2 after 0 steps",
              f"warm-up: the file's stop reason: {f.attrs.get('stop_reason')}")


def test_two_runs_one_folder(tmp):
    """A second replay onto the --save-data folder that a first is writing is refused before
    it touches anything; the first finishes with its whole file (issue 46: the second's
    H5Fcreate used to empty the first's file)."""
    out_dir = os.path.join(tmp, "shared")
    path = os.path.join(out_dir, "replay.h5")
    proc = start_long_run(out_dir)
    check(wait_for_steps(path, proc, 1), "the first run records steps")
    rc, out, err = run("replay", "--sim-steps", "100", "--save-data", out_dir, "--no-video",
                       "--no-plots")
    check(rc == 1 and "another flysim run is writing there now" in err and "fix:" in err
          and "summary" not in out, f"the second run is refused: {rc} {err!r}")
    proc.send_signal(signal.SIGINT)  # the first stops early, its file intact
    out, err = proc.communicate(timeout=120)
    check(proc.returncode == 130, f"the first run exits 130: {proc.returncode} {err}")
    with h5py.File(path) as f:
        n = int(f.attrs["steps_recorded"])
        check(n > 0 and f["qpos_joint"].shape == (n, 2, 66), f"the first run's file: {n} steps")
    rc, _, err = run("replay", "--sim-steps", "100", "--save-data", out_dir, "--no-video",
                     "--no-plots", "--quiet")
    check(rc == 0, f"the folder is free again once the first is done: {rc} {err!r}")


def test_earlier_outputs(tmp):
    """A folder holding an earlier run's outputs: they are replaced, and said so; a replay.h5
    that is a link is removed, not written through; a stale plot does not stay beside the
    new file (issue 46)."""
    out_dir = os.path.join(tmp, "again")
    os.makedirs(out_dir)
    precious = os.path.join(tmp, "precious.txt")
    with open(precious, "w") as f:
        f.write("keep me")
    os.symlink(precious, os.path.join(out_dir, "replay.h5"))
    open(os.path.join(out_dir, "tracking_error.png"), "w").close()
    rc, out, err = run("replay", "--backend", "host", "--sim-steps", "20", "--save-data", out_dir,
                       "--no-video", "--no-plots")
    check(rc == 0 and "the 2 files of an earlier run replaced" in out, f"replaced: {rc} {err!r}")
    with open(precious) as f:
        check(f.read() == "keep me", "the link's target is untouched")
    check(not os.path.islink(os.path.join(out_dir, "replay.h5")) and
          not os.path.exists(os.path.join(out_dir, "tracking_error.png")),
          "the new file in place of the link, no stale plot")


def test_disk_full(tmp):
    """A disk that fills up during --save-data: exit 1 with the fix, no HDF5 diagnostics and
    no crash, the steps written before readable, the summary saying what was saved (issue
    46: a segfault at exit and a file that could not be opened). On a small tmpfs where the
    test may mount one, and on a disk tests/full_disk.c injects below HDF5."""
    for kind, mnt, disk in cliutil.small_disks(tmp, "small", "32M", "test_cli"):
        out_dir = os.path.join(mnt, "run")
        rc, out, err = run("replay", "--backend", "host", "--worlds", "2", "--sim-steps",
                           "20000", "--save-data", out_dir, "--no-video", "--no-plots",
                           env=disk.env)
        check(rc == 1 and "fix: free space on that disk" in err and "HDF5-DIAG" not in err,
              f"{kind} disk full: exit 1 with the fix, no diagnostics ({rc}, "
              f"{err[-400:]!r})")
        with h5py.File(os.path.join(out_dir, "replay.h5")) as f:
            n = int(f.attrs["steps_recorded"])
            check(0 < n < 20000 and f["qpos_joint"].shape == (n, 2, 66) and
                  np.isfinite(f["qpos_joint"][:]).all() and f.attrs["complete"] == 0,
                  f"{kind} disk full: the {n} steps written before are kept and readable")
        check(f"({n} of the" in out,
              f"{kind} disk full: the summary says what was saved: {out!r}")


def test_disk_filled_by_another(tmp):
    """A disk that another program fills while a replay records: the run stops, and the file
    is left as its last block left it, readable, rather than half-ended (issue 46: the steps
    written before lost, the file's metadata pointing past its end, the message saying they
    were kept). A disk too small for a block: no plots of the empty file (their script's fix
    was wrong). Each kind of small disk, as test_disk_full."""
    for kind, mnt, disk in cliutil.small_disks(tmp, "filled", "64M", "test_cli"):
        out_dir = os.path.join(mnt, "run")
        path = os.path.join(out_dir, "replay.h5")
        proc = start_long_run(out_dir, disk.env)
        check(wait_for_steps(path, proc, 1), f"{kind} filled: the run records steps")
        disk.fill()
        out, err = proc.communicate(timeout=120)
        check(proc.returncode == 1 and "fix: free space on that disk" in err and
              "too little for the file's ending" in err and "HDF5-DIAG" not in err,
              f"{kind} filled: exit 1 with the fix ({proc.returncode}, {err[-600:]!r})")
        try:
            with h5py.File(path) as f:
                n = int(f["steps_recorded"][()])
                check(0 < n < 20000 and np.isfinite(f["qpos_joint"][:n]).all() and
                      f.attrs["complete"] == 0,
                      f"{kind} filled: the {n} steps written before are kept and readable")
        except (OSError, KeyError) as e:
            check(False, f"{kind} filled: the file opens: {e}")
    for kind, mnt, disk in cliutil.small_disks(tmp, "tiny", "6M", "test_cli"):
        rc, out, err = run("replay", "--worlds", "2", "--sim-steps", "5000", "--save-data",
                           os.path.join(mnt, "run"), "--no-video", env=disk.env)
        check(rc == 1 and "fix: free space on that disk" in err and "plots" not in err and
              "(0 of the" in out,
              f"{kind} 6 MB disk: the fix, no plots of 0 steps ({rc}, {err!r})")


def test_sigkill(tmp):
    out_dir = os.path.join(tmp, "killed")
    path = os.path.join(out_dir, "replay.h5")
    proc = start_long_run(out_dir)
    check(wait_for_steps(path, proc, 1), "the run records steps before the kill")
    time.sleep(0.3)
    proc.kill()
    proc.communicate(timeout=60)
    # Plain HDF5 opens it; /steps_recorded steps are data.
    dump = subprocess.run(["h5dump", "-d", "steps_recorded", path], capture_output=True,
                          text=True)
    check(dump.returncode == 0, f"h5dump reads the killed run's file: {dump.stderr}")
    with h5py.File(path) as f:
        n = int(f["steps_recorded"][()])
        q = f["qpos_joint"][:n]
        check(n > 0 and np.isfinite(q).all() and np.abs(q).max() > 0.01,
              f"killed file holds {n} steps of data")
        check(f.attrs["complete"] == 0, "killed file is not complete")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-cli-") as tmp:
        test_help()
        test_usage_errors()
        test_precision_usage()
        test_runtime_errors(tmp)
        test_step_overflow()
        test_partial_clip(tmp)
        test_sine_any_model(tmp)
        test_host_backend(tmp)
        test_max_contacts(tmp)
        test_run_and_file(tmp)
        test_repack_hangs(tmp)
        test_repack_signals(tmp)
        test_fifo(tmp)
        test_ctrl_c(tmp)
        test_ctrl_c_in_warmup(tmp)
        test_two_runs_one_folder(tmp)
        test_disk_full(tmp)
        test_disk_filled_by_another(tmp)
        test_earlier_outputs(tmp)
        test_sigkill(tmp)
    cliutil.finish("test_cli")


if __name__ == "__main__":
    main()
