#!/usr/bin/env python3
"""MuJoCo's own batch on CPU threads as flysim bench's peer: mujoco.rollout.

The bench's model file and clip: the worlds start as flysim's do, at the "neutral"
keyframe (else the first) with every body-transmission (adhesion) actuator at 1, settled
--warmup steps of mj_step at those controls (one world settled, its full physical state
and warm start given to every world: they are the same); then world w replays the clip's
rows from (w mod floor(T/S)) x S, each clip column driving the position actuator of the
joint of its name, as flysim replay binds them. mujoco.rollout.rollout steps the N worlds S
steps on --threads threads (an MjData a thread, a persistent pool), --repeat times from the
same settled state (after one untimed step that starts the pool); each rollout is timed,
and the summary line gives the median and the range. The clip must be at the model's timestep (flysim resamples others; this script
does not).

Physics: MuJoCo's mj_step in float64 (noslip included), the cpu backend's; rollout adds
writing each step's state into its output array.

Usage: rollout.py --model PATH --targets PATH [--worlds N] [--steps S] [--threads T]
                  [--warmup W] [--repeat R]
"""

import argparse
import os
import statistics
import sys
import time

import h5py
import mujoco
import numpy as np
from mujoco import rollout


def fail(msg):
    sys.exit(f"rollout.py: {msg}")


def clip_columns(m, names):
    """The actuator each clip column drives: the position actuator of the joint named
    like the column (or ending in '/' + the name)."""
    cols = []
    for name in names:
        found = -1
        for a in range(m.nu):
            if m.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
                continue
            jn = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, m.actuator_trnid[a, 0]) or ""
            if jn == name or jn.endswith("/" + name):
                found = a
                break
        if found < 0:
            fail(f"the clip's DoF '{name}' drives no actuator of the model")
        cols.append(found)
    return cols


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--worlds", type=int, default=1)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--threads", type=int, default=0, help="0: one per core")
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    if a.worlds < 1 or a.steps < 1 or a.warmup < 0 or a.repeat < 1 or a.threads < 0:
        fail("--worlds, --steps and --repeat must be at least 1, --warmup and --threads 0 or more")
    if a.targets == "sine":
        fail("the sine clip is flysim's own; fix: a clip file (--targets PATH) or drop --peer")
    m = (mujoco.MjModel.from_binary_path(a.model) if a.model.endswith(".mjb")
         else mujoco.MjModel.from_xml_path(a.model))
    with h5py.File(a.targets, "r") as f:
        value = np.asarray(f["targets"], dtype=np.float64)
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["dof_names"][()]]
        dt = f["targets"].attrs.get("timestep", f.attrs.get("timestep", m.opt.timestep))
    if abs(float(dt) - m.opt.timestep) > 1e-12 * m.opt.timestep:
        fail(f"the clip's timestep {dt} is not the model's {m.opt.timestep}; fix: a clip at it")
    nrow = value.shape[0]
    if a.steps > nrow:
        fail(f"--steps {a.steps} > the clip's {nrow} rows")
    cols = clip_columns(m, names)

    # One world settled at the keyframe's controls, adhesion on.
    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "neutral")
    key = key if key >= 0 else (0 if m.nkey else -1)
    d = mujoco.MjData(m)
    if key >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key)
    adhesion = [u for u in range(m.nu) if m.actuator_trntype[u] == mujoco.mjtTrn.mjTRN_BODY]
    d.ctrl[adhesion] = 1
    for _ in range(a.warmup):
        mujoco.mj_step(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state0, spec)
    initial = np.tile(state0, (a.worlds, 1))
    warm = np.tile(d.qacc_warmstart, (a.worlds, 1))

    # The controls: the settled ctrl, the clip's columns from each world's row.
    slices = nrow // a.steps
    control = np.tile(d.ctrl, (a.worlds, a.steps, 1))
    for w in range(a.worlds):
        r0 = (w % slices) * a.steps
        control[w][:, cols] = value[r0:r0 + a.steps]

    nthread = a.threads or os.cpu_count() or 1
    datas = [mujoco.MjData(m) for _ in range(nthread)]
    nstate = initial.shape[1]
    out = np.empty((a.worlds, a.steps, nstate))
    # untimed: the pool's threads started, their MjData touched
    rollout.rollout(m, datas, initial, control[:, :1], initial_warmstart=warm, state=out[:, :1],
                    persistent_pool=True)
    rates, walls = [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        rollout.rollout(m, datas, initial, control, initial_warmstart=warm, state=out,
                        persistent_pool=True)
        wall = time.perf_counter() - t0
        walls.append(wall)
        rates.append(a.worlds * a.steps / wall)
    bad = int(np.sum(~np.isfinite(out[:, -1, :]).all(axis=1)))
    med = statistics.median(rates)
    print(f"rollout: {a.worlds} worlds x {a.steps} steps on {nthread} threads, {a.repeat} "
          f"repeats: {med:.6g} world-steps/s (min {min(rates):.6g}, max {max(rates):.6g})")
    print(f"summary backend=rollout precision=f64 worlds={a.worlds} threads={nthread} "
          f"steps={a.steps} wall_s={statistics.median(walls):.6f} world_steps_per_s={med:.6g} "
          f"world_steps_per_s_min={min(rates):.6g} world_steps_per_s_max={max(rates):.6g} "
          f"realtime_x={med * m.opt.timestep:.6g} problem_worlds={bad} interrupted=0")


if __name__ == "__main__":
    main()
