#!/usr/bin/env python3
"""The host stepper against MuJoCo's mj_step on one core, on NeuroMechFly and on the test
suite's held models (tests/models): world-steps per CPU-second of one world on one thread,
cpu (MuJoCo) against host f32 and f64, through the library (flysim.Batch).

CPU time (time.process_time), not wall time, so that other work on the machine slows
the clock less; each point is the median of R runs of S steps after W warm-up steps,
the steppers interleaved run by run so that drifts in the machine's speed hit all
alike. Models the host stepper refuses (its model check) are listed as refused.
Each model starts at its first keyframe, controls included, and keeps them (NeuroMechFly:
standing in its neutral pose, so contacts, adhesion and noslip are at work; the walk is
`flysim bench`'s); a model without keyframes runs with zero controls.

  PYTHONPATH=build/python python3 bench/cpu/per_core.py [--steps S] [--repeat R] [--csv PATH]

--worlds NAME,... runs FlyGym's exported worlds instead (flysim's --world names: flat,
flat_capsule, assets/worlds/NAME.mjb: gapped_capsule, blocks_capsule, ...), the fly
falling from its spawn onto the ground during the warm-up and then standing:

  PYTHONPATH=build/python python3 bench/cpu/per_core.py --warmup 1000 \
      --worlds flat_capsule,gapped_capsule,blocks_capsule,mixed_capsule,flat,gapped,blocks,mixed \
      --csv bench/results/per-core-terrains.csv

--suite runs dm_control's suite models (the dm-control wheel's MJCF, models no one here
wrote) instead, from qpos0 with zero controls, and writes bench/results/per-core-suite.csv:

  PYTHONPATH=build/python python3 bench/cpu/per_core.py --suite --repeat 11

--only NAME,... runs those models alone and replaces their rows in the CSV, keeping the
others (a model the engine has just learned to run, measured without the whole suite):

  PYTHONPATH=build/python python3 bench/cpu/per_core.py --suite --repeat 11 --only ball_in_cup
"""

import argparse
import csv
import importlib.util
import os
import re
import statistics
import sys
import time

import mujoco
import numpy as np

import flysim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPPERS = [("cpu", None), ("host", "f32"), ("host", "f64")]


def models():
    """(name, path) of NeuroMechFly and every held model, in name order."""
    out = [("neuromechfly", os.path.join(ROOT, "assets", "mesh.mjb"))]
    held = os.path.join(ROOT, "tests", "models")
    for f in sorted(os.listdir(held)):
        if f.endswith(".xml"):
            out.append((f[:-4], os.path.join(held, f)))
    return out


def world_models(names):
    """(name, path) of FlyGym's exported worlds by flysim's --world names."""
    fixed = {"flat": "mesh.mjb", "flat_capsule": "capsule.mjb"}
    return [(n, os.path.join(ROOT, "assets", fixed.get(n, os.path.join("worlds", n + ".mjb"))))
            for n in names.split(",")]


def suite_models():
    """(name, path) of dm_control's suite models (the dm-control wheel), in name order."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("per_core.py: the dm-control wheel is not in this Python's environment; fix: "
                 "scripts/setup.sh installs it (scripts/requirements-models.txt)")
    suite = os.path.join(list(spec.submodule_search_locations)[0], "suite")
    return [(f[:-4], os.path.join(suite, f)) for f in sorted(os.listdir(suite))
            if f.endswith(".xml")]


def open_batch(path, backend, precision):
    """A one-world, one-thread batch at the model's first keyframe (if any), or the
    library's error message."""
    try:
        b = flysim.Batch(path, worlds=1, backend=backend, precision=precision, threads=1)
    except (ValueError, RuntimeError) as e:
        return None, str(e).splitlines()[0].replace(ROOT + os.sep, "")
    if b.model.nkey:
        b.reset(keyframe=mujoco.mj_id2name(b.model, mujoco.mjtObj.mjOBJ_KEY, 0) or 0)
    return b, None


def run(b, steps, warmup):
    """CPU seconds of `steps` steps after `warmup` steps, and whether the world had a
    problem (a bad state that MuJoCo's checks reset, a solver failure: the time is then
    not that of a plain step)."""
    b.step(warmup)
    t0 = time.process_time()
    b.step(steps)
    return time.process_time() - t0, int(b.problems[0]) != 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--csv", help="default: bench/results/per-core.csv (per-core-suite.csv "
                    "with --suite)")
    ap.add_argument("--worlds", default="", help="FlyGym's worlds by name, comma-separated")
    ap.add_argument("--suite", action="store_true", help="dm_control's suite models")
    ap.add_argument("--only", default="",
                    help="these models (comma-separated) alone, their rows replaced in the CSV")
    a = ap.parse_args()
    if a.csv is None:
        a.csv = os.path.join(ROOT, "bench", "results",
                             "per-core-suite.csv" if a.suite else "per-core.csv")
    todo = world_models(a.worlds) if a.worlds else (suite_models() if a.suite else models())
    if a.only:
        only = set(a.only.split(","))
        missing = only - {name for name, _ in todo}
        if missing:
            sys.exit(f"per_core.py: --only {','.join(sorted(missing))}: no such model here; fix: "
                     f"one of {', '.join(name for name, _ in todo)}")
        todo = [(name, path) for name, path in todo if name in only]
    rows = []
    for name, path in todo:
        times, refused, problem = {k: [] for k in STEPPERS}, None, False
        for _ in range(a.repeat):
            for backend, precision in STEPPERS:
                b, why = open_batch(path, backend, precision)
                if b is None:  # the suite's models named from dm_control/
                    refused = re.sub(r"\S*dm_control/", "dm_control/", why)
                    break
                with b:
                    t, bad = run(b, a.steps, a.warmup)
                times[(backend, precision)].append(t)
                problem |= bad
            if refused:
                break
        if refused:
            print(f"{name:28s} refused by the host stepper: {refused}")
            rows.append({"model": name, "refused": refused})
            continue
        rate = {k: a.steps / statistics.median(v) for k, v in times.items()}
        cpu = rate[("cpu", None)]
        row = {"model": name, "steps": a.steps, "repeats": a.repeat,
               "cpu_steps_per_cpu_s": round(cpu),
               "host_f32_steps_per_cpu_s": round(rate[("host", "f32")]),
               "host_f64_steps_per_cpu_s": round(rate[("host", "f64")]),
               "host_f32_over_cpu": round(rate[("host", "f32")] / cpu, 3),
               "host_f64_over_cpu": round(rate[("host", "f64")] / cpu, 3),
               "problem": int(problem), "refused": ""}
        rows.append(row)
        print(f"{name:28s} cpu {cpu:10.0f}  host f32 {row['host_f32_steps_per_cpu_s']:10d} "
              f"({row['host_f32_over_cpu']:.2f}x)  host f64 {row['host_f64_steps_per_cpu_s']:10d} "
              f"({row['host_f64_over_cpu']:.2f}x)  world-steps per CPU-second"
              + ("  [a world had problems: not plain steps]" if problem else ""))
    fields = ["model", "steps", "repeats", "cpu_steps_per_cpu_s", "host_f32_steps_per_cpu_s",
              "host_f64_steps_per_cpu_s", "host_f32_over_cpu", "host_f64_over_cpu", "problem",
              "refused"]
    if a.only and os.path.exists(a.csv):  # the others' rows as they were, ours in their place
        new = {r["model"]: r for r in rows}
        with open(a.csv, newline="") as f:
            old = list(csv.DictReader(f))
        rows = [new.pop(r["model"], r) for r in old] + list(new.values())
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})
    print(f"wrote {a.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
