#!/usr/bin/env python3
"""The peer a FlyGym user would pick for flysim's CPU replay: FlyGym's own CPU loop.

NeuroMechFly is built through FlyGym's API exactly as flysim's assets are
(scripts/export_assets.py's build(), FlyGym 2.1's replay_behavior_cpu.py: legs only,
position actuators kp 150, adhesion, flat ground), and replayed through FlyGym's
Simulation as replay_behavior_cpu.py does, without rendering: reset, leg adhesion on,
warmup(), then per step set_actuator_inputs(targets) and step(). N worlds are N
Simulations stepped in turn by one Python thread (FlyGym's CPU path has no batch);
world w starts at clip row (w mod floor(T/S)) x S, as flysim replay. Only the steps
are timed. Prints flysim's summary line, which `flysim bench --peer flygym` reads.

Physics: the same model and MuJoCo version as flysim's cpu backend (MuJoCo's mj_step
in float64, noslip included); FlyGym adds Python overhead per step.

Usage: flygym_cpu.py [--worlds N] [--steps S] [--model mesh|capsule]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from export_assets import TIMESTEP, VARIANTS, build  # noqa: E402
from flygym.compose import ActuatorType  # noqa: E402
from flygym_demo.spotlight_data import MotionSnippet  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=1)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--model", choices=sorted(VARIANTS), default="mesh")
    a = ap.parse_args()
    if a.worlds < 1 or a.steps < 1:
        sys.exit("flygym_cpu.py: --worlds and --steps must be at least 1")

    sims, flies = [], []
    for _ in range(a.worlds):
        fly, _world, sim = build(VARIANTS[a.model])
        sims.append(sim)
        flies.append(fly)
    targets = MotionSnippet().get_joint_angles(
        TIMESTEP, flies[0].get_actuated_jointdofs_order(ActuatorType.POSITION))
    nrow = targets.shape[0]
    if a.steps > nrow:
        sys.exit(f"flygym_cpu.py: --steps {a.steps} > the clip's {nrow} rows")
    slices = nrow // a.steps
    start = [(w % slices) * a.steps for w in range(a.worlds)]
    for fly, sim in zip(flies, sims):
        sim.reset()
        sim.set_leg_adhesion_states(fly.name, np.ones(6, dtype=bool))
        sim.warmup()

    t0 = time.perf_counter()
    for step in range(a.steps):
        for w, (fly, sim) in enumerate(zip(flies, sims)):
            sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, targets[start[w] + step, :])
            sim.step()
    wall = time.perf_counter() - t0
    wsps = a.worlds * a.steps / wall
    print(f"summary backend=flygym precision=f64 worlds={a.worlds} threads=1 steps={a.steps} "
          f"wall_s={wall:.6f} world_steps_per_s={wsps:.6g} realtime_x={wsps * TIMESTEP:.6g} "
          f"problem_worlds=0 interrupted=0")


if __name__ == "__main__":
    main()
