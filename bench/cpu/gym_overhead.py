#!/usr/bin/env python3
"""The Gymnasium env's cost per step, against the bare steps it makes.

  PYTHONPATH=build/python .venv/bin/python bench/cpu/gym_overhead.py [--worlds 8,64] [--out CSV]

flysim.gym.FlyWalkVectorEnv(N, backend="host") steps control_substeps (10) physics steps
an env step: it writes the actions into ctrl, steps, records the observation, computes
rewards and ends episodes. Its step is timed against what a bare controller does on the
env's own batch: the same actions written into the position actuators' ctrl, then
Batch.step(10). The actions are the clip's rows at a clock both share (the fly walks, as
in the reward's open loop; random actions topple the flies, and the env's resets of
fallen worlds would step them in the air, and a held ctrl lets a standing fly settle:
either makes the steps cheaper than the other's). The two take turns round by round; the
ratio is the median of the rounds' (the issue's bound: within 5 %). Worlds that end while
timed are counted and printed.
"""
import argparse
import os
import platform
import time

import numpy as np

import flysim.gym

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets"))

ap = argparse.ArgumentParser()
ap.add_argument("--worlds", default="8,64")
ap.add_argument("--calls", type=int, default=20, help="env steps a round")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--out", default=None)
a = ap.parse_args()

rows = []
for n in (int(x) for x in a.worlds.split(",")):
    env = flysim.gym.FlyWalkVectorEnv(n, model=os.path.join(ASSETS, "mesh.mjb"),
                                      clip=os.path.join(ASSETS, "walking_clip.h5"),
                                      backend="host", precision="f32", seed=0)
    env.reset(seed=0)
    S = env.control_substeps

    clip = np.asarray(env.clip, dtype=np.float32)  # (T, 42) the actuated joints' angles
    row0 = np.arange(n) * 97  # each world its own phase of the walk
    clock = [0]

    def clip_action():  # each world's clip row at the shared clock, then the clock ticks
        clock[0] += 1
        return clip[(row0 + clock[0] * S) % len(clip)]

    for _ in range(50):  # warm: the fly lands and walks
        env.step(clip_action())
    ctrl, pos = env.batch.ctrl, env._pos_act  # the batch's ctrl, the position actuators
    ratios, t_env, t_bare, ended = [], [], [], 0
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        for _ in range(a.calls):
            _, _, term, trunc, _ = env.step(clip_action())
            ended += int(np.sum(term | trunc))
        e = (time.perf_counter() - t0) / a.calls
        t0 = time.perf_counter()
        for _ in range(a.calls):
            ctrl[:, pos] = clip_action()
            env.batch.step(S)
        b = (time.perf_counter() - t0) / a.calls
        ratios.append(e / b)
        t_env.append(e)
        t_bare.append(b)
    r = float(np.median(ratios))
    threads = env.batch.info()["threads"]
    print(f"{n} worlds, host f32, {threads} threads: env.step {np.median(t_env) * 1e3:.3f} ms, "
          f"Batch.step({S}) {np.median(t_bare) * 1e3:.3f} ms: the env {r:.3f}x bare stepping "
          f"({ended} world-episodes ended while timed)")
    rows.append((n, threads, S, float(np.median(t_env)) * 1e3, float(np.median(t_bare)) * 1e3, r))
    env.close()

if a.out:
    new = not os.path.exists(a.out)
    with open(a.out, "a") as f:
        if new:
            f.write("machine,worlds,threads,substeps,env_step_ms,bare_step_ms,env_over_bare\n")
        for n, t, s, e, b, r in rows:
            f.write(f"{platform.processor() or platform.machine()} {os.cpu_count()} cores,"
                    f"{n},{t},{s},{e:.4f},{b:.4f},{r:.4f}\n")
