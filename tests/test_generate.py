#!/usr/bin/env python3
"""`flysim generate` as a user runs it: the example spec, the layout, each variation
axis checked against the clip and the physics it should change, determinism across
threads and block sizes, kill (SIGKILL) and Ctrl-C then --resume giving the same bytes,
the reader (scripts/dataset.py), and every error path of the spec and the run.

Usage: test_generate.py FLYSIM_BINARY ASSETS_DIR
"""

import fcntl
import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"  # read the partial file while it is written

import h5py  # noqa: E402
import numpy as np  # noqa: E402

import cliutil  # noqa: E402
from cliutil import check, summary  # noqa: E402

FLYSIM, ASSETS = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
from dataset import FlyDataset  # noqa: E402

BASE = """backend: cpu
worlds: 4
steps: 300
record_every: 1
block_worlds: 2
warmup_sec: 0.001
seed: 7
record: [angles, targets, forces, thorax, qpos, qvel]
vary:
  clip:
    start_row: {uniform: [0, 15000]}
    time_scale: {uniform: [0.7, 1.3]}
    amplitude_scale: {list: [0.8, 1.0, 1.2]}
  model:
    kp: {uniform: [100, 200]}
"""


def run(*args, env=None, timeout=300):
    return cliutil.run(FLYSIM, *args, env=env, timeout=timeout)


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def generate(tmp, name, text, *extra):
    spec = write(tmp, name + ".yaml", text)
    out = os.path.join(tmp, name)
    rc, stdout, err = run("generate", spec, "--out", out, "--quiet", *extra)
    check(rc == 0, f"generate {name}: exit {rc}: {err}")
    return os.path.join(out, "dataset.h5"), stdout


def test_example(tmp):
    rc, text, _ = run("generate", "--example-spec")
    check(rc == 0 and "vary:" in text and text.count("\n") > 30, "--example-spec prints a spec")
    path, out = generate(tmp, "example", text)
    s = summary(out)
    check(s.get("complete") == "1" and s.get("worlds") == "8" and s.get("problem_worlds") == "0",
          f"example summary: {s}")
    ds = FlyDataset(path)
    check(ds.nworld == 8 and ds.nrow == 200 and "qpos" in ds.series and "adhesion_force" in ds.series,
          f"example layout: {ds.series} {ds.nworld} {ds.nrow}")
    legs = ds.world(0, ["leg_contact_force"])["leg_contact_force"]
    check(legs.shape == (200, 18) and (legs[:, 2::3].sum(axis=1) > 0).mean() > 0.9,
          f"the legs' contact forces push the fly up: {legs.shape}")
    kp = ds.params[:, ds.param_names.index("vary.model.kp")]
    check(kp.min() >= 120 and kp.max() <= 180 and np.ptp(kp) > 1, f"kp in [120, 180]: {kp}")
    windows = list(ds.windows(["qpos"], window=50, worlds=[0, 3]))
    check(len(windows) == 8 and windows[0]["qpos"].shape == (50, 73), "dataset.py windows")
    with h5py.File(path) as f:
        check(f["worlds/qpos"].compression == "gzip" and f["worlds/qpos"].chunks[0] == 1,
              "series compressed, chunked by world and a window of rows")
        check("blocks_done" not in f and int(f.attrs["complete"]) == 1, "final file marks")
        peak = f["world_peak_contacts"][()]
        check(peak.shape == (8,) and 0 < peak.min() <= peak.max() <= 220,
              f"each world's peak contacts: {peak}")


def test_axes(tmp):
    """The clip axes against the clip itself, kp against the forces, noise, height."""
    path, _ = generate(tmp, "base", BASE)
    with h5py.File(os.path.join(ASSETS, "walking_clip.h5")) as f:
        clip = f["targets"][()]
    mean = clip.mean(axis=0)
    with h5py.File(path) as f:
        p = f["params"][()]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["param_names"][()]]
        tg, q, force = f["worlds/target"][()], f["worlds/qpos_joint"][()], f["worlds/actuator_force"][()]
        col = f["target_joint_index"][()]
    ix = {n: i for i, n in enumerate(names)}
    worst = 0.0
    for w in range(4):
        r = p[w, ix["vary.clip.start_row"]] + np.arange(300) * p[w, ix["vary.clip.time_scale"]]
        i = np.floor(r).astype(int)
        u = (r - i)[:, None]
        v = clip[i] + u * (clip[np.minimum(i + 1, len(clip) - 1)] - clip[i])
        want = mean + p[w, ix["vary.clip.amplitude_scale"]] * (v - mean)
        worst = max(worst, np.abs(tg[w] - want).max())
    check(worst < 1e-6, f"targets = the clip window, time-scaled and amplified: {worst:.3g}")
    check(len({round(x, 3) for x in p[:, ix["vary.clip.time_scale"]]}) == 4, "time scales differ")
    errs, late = [], []
    for w in range(4):
        kp = p[w, ix["vary.model.kp"]]
        want = np.clip(kp * (tg[w, 1:] - q[w, :-1][:, col]), -30, 30)
        errs.append(np.abs(force[w, 1:] - want).max())
        other = np.clip(150 * (tg[w, 1:] - q[w, :-1][:, col]), -30, 30)
        late.append(np.abs(force[w, 1:] - other).max())
    check(max(errs) < 3e-3, f"forces = each world's kp (target - angle): {max(errs):.3g}")
    check(min(late) > 0.05, f"the kp differs from the model's 150 in every world: {late}")
    # Target noise: the same spec with noise differs from the noiseless by ~ its std.
    noisy, _ = generate(tmp, "noise", BASE.replace("  model:", "    target_noise: 0.01\n  model:"))
    with h5py.File(noisy) as f:
        d = f["worlds/target"][()] - tg
    check(0.009 < d.std() < 0.011 and abs(d.mean()) < 1e-3, f"target noise std 0.01: {d.std():.4g}")
    # Spawn height, no warm-up: the thorax starts higher by the amount.
    high, _ = generate(tmp, "high", BASE.replace("warmup_sec: 0.001", "warmup_sec: 0") +
                       "  initial:\n    spawn_height: 0.4\n")
    low, _ = generate(tmp, "low", BASE.replace("warmup_sec: 0.001", "warmup_sec: 0"))
    with h5py.File(high) as fh, h5py.File(low) as fl:
        dz = fh["worlds/thorax_pos"][:, 0, 2] - fl["worlds/thorax_pos"][:, 0, 2]
    check(np.allclose(dz, 0.4, atol=1e-3), f"spawn height 0.4: {dz}")


def test_determinism(tmp):
    a, _ = generate(tmp, "det_a", BASE, "--threads", "1")
    b, _ = generate(tmp, "det_b", BASE, "--threads", "2")
    check(filecmp.cmp(a, b, shallow=False), "the same bytes with 1 and 2 threads")
    c, _ = generate(tmp, "det_c", BASE.replace("block_worlds: 2", "block_worlds: 3"))
    with h5py.File(a) as fa, h5py.File(c) as fc:
        same = all(np.array_equal(fa["worlds"][s][()], fc["worlds"][s][()]) for s in fa["worlds"])
        same &= np.array_equal(fa["params"][()], fc["params"][()], equal_nan=True)
    check(same, "the same worlds with blocks of 2 and of 3 worlds")


def wait_blocks(partial, least, timeout=120):
    """Wait until the partial file marks at least `least` blocks (and not all)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with h5py.File(partial, "r") as f:
                done = f["blocks_done"][()]
            if least <= done.sum() < len(done):
                return True
        except (OSError, KeyError):
            pass
        time.sleep(0.05)
    return False


def test_kill_and_resume(tmp):
    text = BASE.replace("worlds: 4", "worlds: 6").replace("block_worlds: 2", "block_worlds: 1")
    text = text.replace("steps: 300", "steps: 1500")
    whole, _ = generate(tmp, "whole", text)
    for how, sig in (("kill", signal.SIGKILL), ("int", signal.SIGINT)):
        spec = write(tmp, f"{how}.yaml", text)
        out = os.path.join(tmp, how)
        p = subprocess.Popen([FLYSIM, "generate", spec, "--out", out, "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ok = wait_blocks(os.path.join(out, "dataset.partial.h5"), 2)
        p.send_signal(sig)
        stdout, _ = p.communicate(timeout=120)
        check(ok, f"{how}: the run was stopped mid-way")
        if sig == signal.SIGINT:
            check(p.returncode == 130 and "--resume" in stdout, f"Ctrl-C: exit {p.returncode}")
        check(os.path.exists(os.path.join(out, "dataset.partial.h5"))
              and not os.path.exists(os.path.join(out, "dataset.h5")), f"{how}: partial kept")
        rc, stdout, err = run("generate", spec, "--out", out, "--resume", "--quiet")
        s = summary(stdout)
        check(rc == 0 and s.get("complete") == "1" and int(s.get("blocks_before", 0)) >= 2,
              f"{how}: --resume finishes it: {rc} {s} {err}")
        check(filecmp.cmp(whole, os.path.join(out, "dataset.h5"), shallow=False),
              f"{how} + --resume: the same bytes as an uninterrupted run")
    rc, out_text, err = run("generate", write(tmp, "kill.yaml", text), "--out",
                            os.path.join(tmp, "kill"), "--resume")
    check(rc == 0 and "complete already" in out_text, f"--resume of a complete dataset: {err!r}")


def test_mpi(tmp):
    """2 MPI ranks: the same bytes as one process; a rank killed mid-run, then
    --resume on 2 ranks: the same bytes again."""
    rc, help_text, _ = run("generate", "--help")
    mpirun = shutil.which("mpirun")
    if "built with MPI: yes" not in help_text or not mpirun:
        print("test_generate: MPI not built or no mpirun: the 2-rank checks are skipped")
        return
    # Open MPI's own allocations (MPI_Init, its plugins) are not freed at exit: an ASan
    # build checks leaks in the single-process runs, not under mpirun.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               ASAN_OPTIONS=(asan + ":" if asan else "") + "detect_leaks=0")
    text = BASE.replace("worlds: 4", "worlds: 6").replace("block_worlds: 2", "block_worlds: 1")
    text = text.replace("steps: 300", "steps: 1500")
    whole, _ = generate(tmp, "mpi_whole", text)
    spec = write(tmp, "mpi.yaml", text)
    out = os.path.join(tmp, "mpi")
    base = [mpirun, "-n", "2", FLYSIM, "generate", spec, "--threads", "1", "--quiet"]
    p = subprocess.run(base + ["--out", out], capture_output=True, text=True, env=env, timeout=300)
    check(p.returncode == 0 and "2 MPI ranks" in p.stdout and summary(p.stdout).get("complete") == "1",
          f"mpirun -n 2: {p.returncode} {p.stdout} {p.stderr}")
    check(filecmp.cmp(whole, os.path.join(out, "dataset.h5"), shallow=False),
          "2 ranks: the same bytes as one process")
    out = os.path.join(tmp, "mpi_kill")
    p = subprocess.Popen(base + ["--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    ok = wait_blocks(os.path.join(out, "dataset.partial.1-of-2.h5"), 1)
    ranks = subprocess.run(["pgrep", "-f", "--", f"--out {out}"], capture_output=True, text=True)
    pids = [int(x) for x in ranks.stdout.split() if int(x) != p.pid]
    check(ok and pids, f"a rank to kill: {pids}")
    if pids:
        os.kill(pids[-1], signal.SIGKILL)
    p.communicate(timeout=120)
    check(p.returncode != 0 and not os.path.exists(os.path.join(out, "dataset.h5")),
          f"mpirun after a rank was killed: {p.returncode}")
    q = subprocess.run(base + ["--out", out, "--resume"], capture_output=True, text=True, env=env,
                       timeout=300)
    s = summary(q.stdout)
    check(q.returncode == 0 and s.get("complete") == "1" and int(s.get("blocks_before", 0)) >= 1,
          f"2 ranks --resume: {q.returncode} {s} {q.stderr}")
    check(os.path.exists(os.path.join(out, "dataset.h5"))
          and filecmp.cmp(whole, os.path.join(out, "dataset.h5"), shallow=False),
          "2 ranks killed and resumed: the same bytes as one process")
    check(not [n for n in os.listdir(out) if "partial" in n], "the ranks' partial files removed")


def test_disk_full(tmp):
    """A disk that fills up mid-run: a clear error, the blocks already marked kept, and
    --resume (with space) the same bytes as an uninterrupted run. On a small tmpfs where
    the test may mount one, and on a disk tests/full_disk.c injects below HDF5."""
    text = BASE.replace("steps: 300", "steps: 1000").replace("block_worlds: 2", "block_worlds: 1")
    text = text.replace("record: [angles, targets, forces, thorax, qpos, qvel]", "record: [qpos, qvel]")
    whole, _ = generate(tmp, "full_whole", text)
    spec = write(tmp, "full.yaml", text)
    for kind, mnt, disk in cliutil.small_disks(tmp, "small", "2M", "test_generate"):
        out = os.path.join(mnt, "data")
        rc, stdout, err = run("generate", spec, "--out", out, "--quiet", env=disk.env)
        check(rc == 1 and "No space left" in err and "--resume" in err and "kept" in err,
              f"{kind} disk full: {rc} {err[-300:]!r}")
        with h5py.File(os.path.join(out, "dataset.partial.h5"), "r") as f:
            done = int(f["blocks_done"][()].sum())
        check(0 < done < 4, f"{kind}: the blocks written before the disk filled are kept: "
              f"{done}")
        disk.resize("64M")
        rc, stdout, err = run("generate", spec, "--out", out, "--quiet", "--resume",
                              env=disk.env)
        check(rc == 0 and filecmp.cmp(whole, os.path.join(out, "dataset.h5"), shallow=False),
              f"{kind} --resume after freeing space: the same bytes: {rc} {err[-300:]!r}")


def test_errors(tmp):
    bad = [
        ("worlds: 4\nstepz: 10\n", "spec.yaml:2: stepz: unknown key"),
        ("vary:\n  clip:\n    time_scale: {uniform: [1.2, 0.8]}\n", "spec.yaml:3: "
         "vary.clip.time_scale: uniform [1.2, 0.8]: lo > hi"),
        ("vary:\n  model:\n    kp: {gauss: [1, 2]}\n", "unknown distribution 'gauss'"),
        ("vary:\n  model:\n    kp: {normal: [150, 10]}\n", "a normal distribution can leave"),
        ("vary:\n  wind:\n    x: 1\n", "unknown group 'wind'"),
        ("vary:\n  clip:\n    speed: 2\n", "unknown axis 'clip.speed'"),
        ("worlds: many\n", "spec.yaml:1: worlds: 'many' is not an integer"),
        ("record: [angles, wings]\n", "unknown series 'wings'"),
        ("steps: [1\n", "not valid YAML"),
        ("targets: [/nonexistent/clip.h5]\n", "/nonexistent/clip.h5"),
        ("max_contacts: 16\n", "max_contacts bounds the buffers of flysim's stepper"),
        ("backend: host\nmax_contacts: 0\n", "spec.yaml:2: max_contacts"),
        # more warm-up steps than an int holds: refused, not wrapped to 1 step
        ("warmup_sec: 429496.7297\n", "spec.yaml: warmup_sec 429496.7297: 4.295e+09 steps"),
        # a key given twice is not the last one silently; 100,000 brackets refused at once
        ("worlds: 4\nsteps: 10\nworlds: 8\n", "spec.yaml:3: worlds: given twice (also at line 1)"),
        ("vary:\n  model:\n    kp: 1\n    kp: 2\n", "spec.yaml:4: kp: given twice"),
        ("steps: " + "[" * 100000 + "\n", "brackets nested 100000 deep"),
    ]
    for text, want in bad:
        spec = write(tmp, "spec.yaml", text)
        rc, _, err = run("generate", spec, "--out", os.path.join(tmp, "err"), timeout=30)
        check(rc in (1, 2) and want in err and "fix" in err, f"spec {text[:60]!r}: {rc} {err[:300]!r}")
        check(not os.path.exists(os.path.join(tmp, "err", "dataset.h5")) and
              not os.path.exists(os.path.join(tmp, "err", "dataset.partial.h5")),
              f"spec {text!r}: nothing written")
    spec = write(tmp, "long.yaml", "steps: 2000\nvary:\n  clip:\n    start_row: 19000\n")
    rc, _, err = run("generate", spec, "--out", os.path.join(tmp, "long"))
    check(rc == 1 and "world 0" in err and "start_row" in err, f"window past the clip: {err!r}")
    rc, _, err = run("generate", write(tmp, "ok.yaml", BASE), "--out", "/proc/forbidden/data")
    check(rc == 1 and "/proc/forbidden" in err and "fix" in err, f"unwritable --out: {err!r}")
    # An unstable world is reported, flagged and kept (a timestep MuJoCo cannot hold).
    path, out = generate(tmp, "wild", BASE + "  initial:\n    velocity_noise: 1e6\n")
    with h5py.File(path) as f:
        flagged = int(f["world_problem"][()].sum())
        kept = f["worlds/qpos"].shape[0] == 4
    check(flagged >= 1 and kept and int(summary(out).get("problem_worlds", 0)) == flagged,
          f"unstable worlds flagged and kept: {flagged}")
    rc, _, err = run("generate", os.path.join(tmp, "nope.yaml"), "--out", tmp)
    check(rc == 2 and "--example-spec" in err, f"missing spec: {err!r}")
    rc, _, err = run("generate", write(tmp, "ok.yaml", BASE))
    check(rc == 2 and "--out" in err, f"no --out: {err!r}")
    # A dataset there already; --resume with another spec.
    generate(tmp, "again", BASE)
    rc, _, err = run("generate", os.path.join(tmp, "again.yaml"), "--out", os.path.join(tmp, "again"))
    check(rc == 1 and "already holds" in err and "--resume" in err, f"existing dataset: {err!r}")
    # --resume of a finished dataset: nothing to do, and nothing wrong (issue 46: exit 1,
    # complete=0); from another spec, said so
    rc, out, err = run("generate", os.path.join(tmp, "again.yaml"), "--out",
                       os.path.join(tmp, "again"), "--resume")
    check(rc == 0 and "complete already" in out and summary(out).get("complete") == "1",
          f"resume of a complete dataset: {rc} {out[-200:]!r} {err!r}")
    rc, _, err = run("generate", write(tmp, "again2.yaml", BASE.replace("seed: 7", "seed: 9")),
                     "--out", os.path.join(tmp, "again"), "--resume")
    check(rc == 1 and "made from another spec" in err and "fix:" in err,
          f"resume of a complete dataset, another spec: {rc} {err!r}")
    text = BASE.replace("block_worlds: 2", "block_worlds: 1").replace("steps: 300", "steps: 2000")
    spec = write(tmp, "other.yaml", text)
    out = os.path.join(tmp, "other")
    p = subprocess.Popen([FLYSIM, "generate", spec, "--out", out, "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_blocks(os.path.join(out, "dataset.partial.h5"), 1)
    p.kill()
    p.wait()
    rc, _, err = run("generate", write(tmp, "other.yaml", text.replace("seed: 7", "seed: 8")),
                     "--out", out, "--resume")
    check(rc == 1 and "another spec" in err and "fix" in err, f"resume, spec changed: {err!r}")
    # --resume while another process writes the file: said so, with the fix (issue 46: raw
    # HDF5 "unable to lock file")
    with open(os.path.join(out, "dataset.partial.h5"), "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as HDF5's writer holds it
        rc, _, err = cliutil.run(FLYSIM, "generate", write(tmp, "other.yaml", text), "--out", out,
                                 "--resume", env={"HDF5_USE_FILE_LOCKING": "TRUE"})
    check(rc == 1 and "another process is writing the file" in err,
          f"resume while the file is held: {rc} {err!r}")
    # Per-world models on the host stepper; the GPU says it cannot (yet).
    host, _ = generate(tmp, "host", BASE.replace("backend: cpu", "backend: host"))
    check(os.path.exists(host), "the host stepper takes per-world models")
    rc, _, err = run("generate", write(tmp, "cuda.yaml", BASE.replace("backend: cpu",
                                                                      "backend: cuda")),
                     "--out", os.path.join(tmp, "cuda"))
    check(rc == 1 and ("per-world model" in err or cliutil.no_cuda(err)), f"cuda: {err!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="flysim-generate-") as tmp:
        test_example(tmp)
        test_axes(tmp)
        test_determinism(tmp)
        test_kill_and_resume(tmp)
        test_mpi(tmp)
        test_disk_full(tmp)
        test_errors(tmp)
    cliutil.finish("test_generate")


if __name__ == "__main__":
    main()
