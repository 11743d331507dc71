#!/usr/bin/env python3
"""`flysim replay --save-data` as a user runs it, beyond the CPU's world-0 outputs:
every world's series (--record), the plots of every backend (the tracking error over
all worlds), the grid video of --render-worlds worlds and the states it is rendered
from, checked against each other and against MuJoCo's kinematics.

Usage: test_save_data.py FLYSIM_BINARY ASSETS_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

import h5py
import mujoco
import numpy as np

import cliutil
from cliutil import check, summary

FLYSIM, ASSETS = sys.argv[1], sys.argv[2]
DT = 1e-4  # NeuroMechFly's timestep
W, H = 320, 240  # a world's tile (FlyGym's video size)


def run(*args, timeout=300):
    return cliutil.run(FLYSIM, *args, timeout=timeout)


def frame_steps(nstep, dt=DT, speed=0.2, fps=25):
    """FlyGym's FrameClock: the steps (0-based, time (s+1) dt) that get a frame."""
    interval, last, steps = speed / fps, -np.inf, []
    for s in range(nstep):
        t = (s + 1) * dt
        if t - last >= interval - 0.5 * dt:
            last = t
            steps.append(s)
    return steps


def probe(path):
    """(frames, width, height) of a video, by ffprobe."""
    p = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                        "-show_entries", "stream=nb_read_frames,width,height", "-of", "json",
                        path], capture_output=True, text=True)
    if p.returncode != 0:
        return (0, 0, 0)
    s = json.loads(p.stdout)["streams"][0]
    return int(s["nb_read_frames"]), int(s["width"]), int(s["height"])


def test_host_all_series(tmp):
    """host f32, 4 worlds, 3 in the grid: every series, their consistency, the plots,
    the grid video and its states."""
    out = os.path.join(tmp, "host")
    T, N, K = 600, 4, 3
    rc, stdout, err = run("replay", "--backend", "host", "--worlds", str(N), "--sim-steps",
                          str(T), "--render-worlds", str(K), "--save-data", out, "--quiet")
    check(rc == 0, f"host replay with every output exits 0: {err}")
    check(summary(stdout).get("steps") == str(T), "host summary")
    model = mujoco.MjModel.from_binary_path(os.path.join(ASSETS, "mesh.mjb"))
    P = model.nsite
    with h5py.File(os.path.join(out, "replay.h5")) as f:
        shapes = {k: f[k].shape for k in ("qpos_joint", "target", "actuator_force", "site_pos",
                                           "thorax_pos")}
        check(shapes == {"qpos_joint": (T, N, 66), "target": (T, N, 42),
                         "actuator_force": (T, N, 42), "site_pos": (T, N, 3 * P),
                         "thorax_pos": (T, N, 3)}, f"series shapes: {shapes}")
        check(f.attrs["recorded"] == "angles,targets,forces,sites,thorax", "attribute recorded")
        check(len(f["point_names"]) == P and f["thorax_pos"].attrs["body"] == "nmf/c_thorax",
              "point names and the thorax's body")
        q, tg = f["qpos_joint"][:], f["target"][:]
        force, sites, thorax = f["actuator_force"][:], f["site_pos"][:], f["thorax_pos"][:]
        col = f["target_joint_index"][:]
        # Forces: the fly's position actuators, kp (q_target - q) clamped, from the
        # angle at the start of the step (the previous step's recorded angle).
        kp = model.actuator_gainprm[0, 0]
        lo, hi = model.actuator_forcerange[0]
        want = np.clip(kp * (tg[1:].astype(np.float64) - q[:-1, :, col]), lo, hi)
        err_f = np.abs(force[1:] - want).max()
        check(err_f < 2e-3, f"forces = kp (target - angle at the step's start): {err_f:.3g}")
        late = np.abs(force[1:] - np.clip(kp * (tg[1:] - q[1:, :, col]), lo, hi)).max()
        check(late > 100 * err_f, f"the forces tell a step apart: {late:.3g} vs {err_f:.3g}")
        # World 0's pose is its recorded sites.
        pose = f["pose/points"][:]
        check(np.array_equal(pose, sites[:, 0].reshape(T, P, 3)), "/pose = world 0's /site_pos")
        # The tracking error of every world from the recorded series.
        rms = f["plots/tracking_error/rms"][:]
        want_rms = np.sqrt(((tg.astype(np.float64) - q[:, :, col]) ** 2).mean(axis=0))
        check(rms.shape == (N, 42) and np.allclose(rms, want_rms, rtol=1e-9, atol=0),
              f"tracking error = RMS of /target - /qpos_joint: {np.abs(rms - want_rms).max():.3g}")
        # The grid's states: at FlyGym's frame steps, equal to the recorded angles,
        # and MuJoCo's kinematics of them give the next step's recorded sites/thorax.
        rq, rt = f["render/qpos"][:], f["render/time"][:]
        steps = frame_steps(T)
        check(rq.shape == (len(steps), K, model.nq) and list(f["render/worlds"][:]) == [0, 1, 2],
              f"/render/qpos {rq.shape}, {len(steps)} frames")
        check(np.allclose(rt, (np.array(steps) + 1) * DT), "frame times")
        adr = model.jnt_qposadr[model.jnt_type >= 2]
        same = all(np.array_equal(rq[i, :, adr].T, q[s, :K]) for i, s in enumerate(steps))
        check(same, "the grid's states are the recorded angles at the frame steps")
        d = mujoco.MjData(model)
        worst = 0.0
        for i, s in enumerate(steps):
            if s + 1 >= T:
                continue
            for w in range(K):
                d.qpos[:] = rq[i, w]
                mujoco.mj_kinematics(model, d)
                worst = max(worst, np.abs(d.site_xpos.ravel() - sites[s + 1, w]).max(),
                            np.abs(d.xpos[1] - thorax[s + 1, w]).max())
        check(worst < 1e-4, f"sites/thorax = MuJoCo's kinematics of the state: {worst:.3g} mm")
    for name in ("joint_angle_tracking", "pose_over_time", "tracking_error"):
        check(os.path.getsize(os.path.join(out, name + ".png")) > 10000, f"{name}.png drawn")
    frames, width, height = probe(os.path.join(out, "grid.mp4"))
    check((frames, width, height) == (len(steps), 2 * W, 2 * H),
          f"grid.mp4: {frames} frames {width}x{height}, expected {len(steps)} at {2 * W}x{2 * H}")
    check("grid.mp4" in stdout and "worlds 0-2" in stdout, f"the grid is reported: {stdout!r}")
    check(not os.path.exists(os.path.join(out, "replay.mp4")), "host: no in-loop video")


def test_record_selection(tmp):
    """--record picks the series; what the plots need and do not get is skipped."""
    out = os.path.join(tmp, "angles")
    rc, stdout, err = run("replay", "--backend", "host", "--worlds", "2", "--sim-steps", "200",
                          "--record", "angles", "--no-video", "--save-data", out, "--quiet")
    check(rc == 0, f"--record angles exits 0: {err}")
    with h5py.File(os.path.join(out, "replay.h5")) as f:
        check("qpos_joint" in f and "target" not in f and "site_pos" not in f
              and "actuator_force" not in f and "thorax_pos" not in f and "pose" not in f
              and "render" not in f, f"--record angles: only /qpos_joint: {list(f)}")
    check(not os.path.exists(os.path.join(out, "grid.mp4")), "--no-video: no grid")
    out = os.path.join(tmp, "forces")
    rc, stdout, err = run("replay", "--worlds", "2", "--sim-steps", "200", "--record",
                          "forces,thorax", "--no-video", "--save-data", out, "--quiet")
    check(rc == 0, f"cpu --record forces,thorax exits 0: {err}")
    with h5py.File(os.path.join(out, "replay.h5")) as f:
        check(sorted(k for k in f if k in ("qpos_joint", "actuator_force", "thorax_pos"))
              == ["actuator_force", "thorax_pos"], f"--record forces,thorax: {list(f)}")
    # the fly's six leg contact sensors (FlyGym's), by name: host float64 against cpu
    sens = {}
    for backend, precision in (("cpu", []), ("host", ["--precision", "f64"])):
        out = os.path.join(tmp, "sensors-" + backend)
        rc, stdout, err = run("replay", "--backend", backend, *precision, "--worlds", "2",
                              "--sim-steps", "300", "--record", "sensors", "--no-video",
                              "--no-plots", "--save-data", out, "--quiet")
        check(rc == 0, f"{backend} --record sensors exits 0: {err}")
        with h5py.File(os.path.join(out, "replay.h5")) as f:
            sens[backend] = f["sensordata"][:]
            names = [n.decode() for n in f["sensor_names"][:]]
            check(f["sensordata"].attrs["columns"] == "sensor_names" and len(names) == 96
                  and names[0] == "nmf/ground_contact_lf_leg[0]"
                  and names[95] == "nmf/ground_contact_rh_leg[15]",
                  f"{backend}: /sensordata's columns are named: {names[:2]} ... {names[-1:]}")
    found = sens["cpu"][:, :, ::16]
    scale = np.abs(sens["cpu"]).max()
    check(sens["host"].shape == (300, 2, 96) and found.max() > 0
          and np.abs(sens["host"] - sens["cpu"]).max() <= 1e-5 * scale,
          f"host's recorded sensors are the cpu's within 1e-5 (float32 storage): "
          f"{np.abs(sens['host'] - sens['cpu']).max()} of {scale}")
    for args, text in [(["--record", "angles,wings"], "unknown series 'wings'"),
                       (["--record", "angles"], "--record only applies with --save-data"),
                       (["--render-worlds", "0", "--save-data", tmp], "--render-worlds")]:
        rc, _, err = run("replay", *args)
        check(rc == 2 and text in err and "fix:" in err, f"{args}: {rc} {err!r}")
    # more worlds in the grid than in the run: refused, not silently capped (the
    # default, 9, is capped: test_cpu_videos's 2 worlds make a grid of 2)
    rc, stdout, err = run("replay", "--worlds", "2", "--render-worlds", "999", "--save-data",
                          os.path.join(tmp, "render999"))
    check(rc == 2 and err.count("\n") == 1 and stdout == ""
          and "--render-worlds 999 is more than the 2 worlds of the run (--worlds 2)" in err
          and "fix: --render-worlds at most --worlds (e.g. --render-worlds 2)" in err
          and not os.path.exists(os.path.join(tmp, "render999")),
          f"--render-worlds 999 with --worlds 2: {rc} {err!r}")


def test_save_data_is_a_file(tmp):
    """--save-data naming an existing file (or a path through one): refused before the
    model loads and anything steps, the file left as it was."""
    path = os.path.join(tmp, "afile")
    with open(path, "w") as f:
        f.write("keep me")
    for target in (path, os.path.join(path, "run")):
        rc, stdout, err = run("replay", "--sim-steps", "10", "--save-data", target)
        check(rc == 1 and err.count("\n") == 1 and stdout == ""
              and f"--save-data {target}" in err and f"{path} is a file, not a folder" in err
              and "fix: name a folder with --save-data" in err and "remove the file" in err,
              f"--save-data {target} through a file: {rc} {stdout!r} {err!r}")
    with open(path) as f:
        check(f.read() == "keep me", "the file in the way is left as it was")


def test_cpu_videos(tmp):
    """cpu: world 0's in-loop video, and with 2 worlds the grid beside it."""
    out = os.path.join(tmp, "cpu")
    rc, stdout, err = run("replay", "--worlds", "2", "--sim-steps", "300", "--save-data", out,
                          "--quiet")
    check(rc == 0, f"cpu 2 worlds with videos exits 0: {err}")
    n = len(frame_steps(300))
    check(probe(os.path.join(out, "replay.mp4")) == (n, W, H), "cpu replay.mp4: world 0")
    check(probe(os.path.join(out, "grid.mp4")) == (n, 2 * W, H), "cpu grid.mp4: 2 worlds")
    out = os.path.join(tmp, "cpu1")
    rc, stdout, err = run("replay", "--sim-steps", "100", "--save-data", out, "--no-plots",
                          "--quiet")
    check(rc == 0 and os.path.exists(os.path.join(out, "replay.mp4"))
          and not os.path.exists(os.path.join(out, "grid.mp4")),
          f"cpu with one world: replay.mp4 alone: {err}")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-save-") as tmp:
        test_host_all_series(tmp)
        test_record_selection(tmp)
        test_save_data_is_a_file(tmp)
        test_cpu_videos(tmp)
    cliutil.finish("test_save_data")


if __name__ == "__main__":
    main()
