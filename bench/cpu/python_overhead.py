#!/usr/bin/env python3
"""Python's cost per flysim.Batch.step(1), against a host world-step.

  PYTHONPATH=build/python .venv/bin/python bench/cpu/python_overhead.py [--worlds 64] [--out CSV]

The binding's own cost is a call that steps nothing: step(0) goes through the Python
wrapper's checks, nanobind, the GIL's release and the batch's lock, into the library and
back. It is compared with step(1) of N worlds on the host backend (float32, every core),
the same call with a step of every world in it; the ratio is the share of a step that
Python adds (the issue's bound: under 5 % at 64 worlds). Medians of R runs.
"""
import argparse
import os
import platform
import time

import mujoco
import numpy as np

import flysim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ap = argparse.ArgumentParser()
ap.add_argument("--worlds", type=int, default=64)
ap.add_argument("--calls", type=int, default=200)
ap.add_argument("--repeats", type=int, default=7)
ap.add_argument("--out", default=None)
a = ap.parse_args()

model = mujoco.MjModel.from_binary_path(os.path.join(os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets")), "mesh.mjb"))
b = flysim.Batch(model, a.worlds, backend="host", precision="f32")
b.reset()
b.ctrl[:, 42:] = 1
b.step(200)  # on the ground, contacts on


def per_call(n):
    runs = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for _ in range(a.calls):
            b.step(n)
        runs.append((time.perf_counter() - t0) / a.calls)
    return float(np.median(runs))


empty = per_call(0)
step = per_call(1)
share = empty / step
print(f"{a.worlds} worlds, host f32, {b.info()['threads']} threads: step(1) {step * 1e3:.3f} ms "
      f"({a.worlds / step:.4g} world-steps/s); step(0), the binding alone, {empty * 1e6:.2f} us: "
      f"{100 * share:.3f} % of a step")
if a.out:
    new = not os.path.exists(a.out)
    with open(a.out, "a") as f:
        if new:
            f.write("machine,worlds,threads,step_ms,binding_us,binding_share_pct\n")
        f.write(f"{platform.processor() or platform.machine()} {os.cpu_count()} cores,{a.worlds},"
                f"{b.info()['threads']},{step * 1e3:.4f},{empty * 1e6:.3f},{100 * share:.4f}\n")
b.close()
