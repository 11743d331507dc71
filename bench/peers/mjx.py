#!/usr/bin/env python3
"""A GPU peer: MuJoCo MJX (JAX) replaying the same exported model and clip.

What a user of MuJoCo would pick for batched worlds on a GPU besides MuJoCo Warp:
the exported MJB (flysim's assets, the same MuJoCo version's wheel `mujoco-mjx`),
N worlds vmapped, one jitted step function that sets the 42 position targets of each
world from its clip row and steps; FlyGym's warm-up (0.05 s at the keyframe's
controls, adhesion on) first, then only the steps are timed (each timed chunk ends
with block_until_ready). World w starts at clip row (w mod floor(T/S)) x S, as
flysim replay. Prints flysim's summary line (`flysim bench --peer mjx`).

Physics differences from flysim's and MuJoCo's step: MJX's JAX backend cannot take
NeuroMechFly as exported (see load_model: contact sensors, plane-mesh margins and gaps,
and the adhesion actuators are removed, so this fly walks without adhesion), it drops
noslip, works in float32 by default (JAX_ENABLE_X64=1 for float64), and has its own
collision and solver (contact sets and iteration counts may differ). It is a
throughput reference for a model of this size, not the same simulation.

Usage: mjx.py [--worlds N] [--steps S] [--model PATH] [--targets PATH] [--chunk K]
"""

import argparse
import os
import sys
import time

import h5py
import numpy as np


def load_targets(path, model, mujoco):
    """The clip's targets (T x A) in actuator order, at the model's timestep."""
    with h5py.File(path) as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["dof_names"][:]]
        values = f["targets"][:]
        dt = float(f.attrs["timestep"])
    if abs(dt - model.opt.timestep) > 1e-12:
        sys.exit(f"mjx.py: {path} is at {dt} s, the model at {model.opt.timestep} s; fix: use "
                 "the clip exported at the model's timestep (assets/walking_clip.h5)")
    act = []
    for name in names:
        found = -1
        for a in range(model.nu):
            if model.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
                continue
            j = model.joint(model.actuator_trnid[a, 0]).name
            if j == name or j.endswith("/" + name):
                found = a
        if found < 0:
            sys.exit(f"mjx.py: no position actuator drives '{name}'")
        act.append(found)
    return values, np.array(act)


def load_model(path, mujoco):
    """The model MJX can take. MJX's JAX backend does not implement three things
    NeuroMechFly as exported uses: contact sensors (FlyGym's tarsus touch sensors; they
    do not act on the dynamics), margins and gaps on plane-mesh pairs, and body
    transmission (the leg adhesion actuators). They are removed through MjSpec, so the
    peer's physics is the fly without adhesion and with margin-free contacts, besides
    MJX's own differences; the note lists what was removed. An MJB is read from its
    MJCF beside it (assets/mesh.mjb: assets/mesh/neuromechfly.xml; the two agree to
    2.4e-5, the MJCF's rounding)."""
    xml = path
    if path.endswith(".mjb"):
        xml = os.path.join(path[:-4], "neuromechfly.xml")
        if not os.path.exists(xml):
            sys.exit(f"mjx.py: {path} has no MJCF beside it ({xml}); fix: pass --model XML")
    spec = mujoco.MjSpec.from_file(xml)
    removed = []
    sensors = [s for s in spec.sensors if s.type == mujoco.mjtSensor.mjSENS_CONTACT]
    for s in sensors:
        spec.delete(s)
    if sensors:
        removed.append(f"{len(sensors)} contact sensors")
    acts = list(spec.actuators)
    drop = {i for i, a in enumerate(acts) if a.trntype == mujoco.mjtTrn.mjTRN_BODY}
    adhesion = [acts[i] for i in sorted(drop)]
    for key in spec.keys:  # the keyframes' controls lose the removed actuators' entries
        if len(key.ctrl) == len(acts):
            key.ctrl = [c for i, c in enumerate(key.ctrl) if i not in drop]
    for a in adhesion:
        spec.delete(a)
    if adhesion:
        removed.append(f"{len(adhesion)} adhesion actuators")
    npair = 0
    for p in spec.pairs:
        if p.margin or p.gap:
            p.margin, p.gap = 0.0, 0.0
            npair += 1
    if npair:
        removed.append(f"the margin and gap of {npair} contact pairs")
    if spec.option.enableflags & mujoco.mjtEnableBit.mjENBL_ENERGY:
        spec.option.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_ENERGY)
        removed.append("the energy flag (diagnostics only)")
    if removed:
        print("note: for MJX, removed " + ", ".join(removed) + " (not implemented in its JAX "
              "backend); noslip is dropped too", file=sys.stderr)
    return spec.compile()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    assets = os.environ.get("FLYSIM_ASSETS", os.path.join(here, "..", "..", "assets"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--model", default=os.path.join(assets, "mesh.mjb"))
    ap.add_argument("--targets", default=os.path.join(assets, "walking_clip.h5"))
    ap.add_argument("--chunk", type=int, default=50, help="steps per jitted scan")
    a = ap.parse_args()

    try:
        import jax
        import jax.numpy as jnp
        import mujoco
        from mujoco import mjx
    except ImportError as e:
        sys.exit(f"mjx.py: {e}; this peer needs jax and mujoco-mjx 3.16 (pip install "
                 "mujoco-mjx==3.16.0 jax; jax[cuda12] on a GPU)")

    model = load_model(a.model, mujoco)
    targets, act = load_targets(a.targets, model, mujoco)
    nrow = targets.shape[0]
    if a.steps > nrow:
        sys.exit(f"mjx.py: --steps {a.steps} > the clip's {nrow} rows")
    slices = nrow // a.steps
    start = np.array([(w % slices) * a.steps for w in range(a.worlds)])

    data = mujoco.MjData(model)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "neutral")
    if key >= 0:
        mujoco.mj_resetDataKeyframe(model, data, key)
    mx = mjx.put_model(model)
    dx = mjx.put_data(model, data)
    batch = jax.vmap(lambda _: dx)(jnp.arange(a.worlds))
    table = jnp.asarray(targets, dtype=dx.qpos.dtype)
    starts = jnp.asarray(start)
    act = jnp.asarray(act)

    def chunk(d, t0):
        def body(d, t):
            rows = table[starts + t]  # (N x A)
            d = d.replace(ctrl=d.ctrl.at[:, act].set(rows))
            return jax.vmap(mjx.step, in_axes=(None, 0))(mx, d), None
        d, _ = jax.lax.scan(body, d, t0 + jnp.arange(a.chunk))
        return d

    def warm(d, _):
        return jax.vmap(mjx.step, in_axes=(None, 0))(mx, d), None

    nwarm = int(round(0.05 / model.opt.timestep))
    batch, _ = jax.jit(lambda d: jax.lax.scan(warm, d, None, length=nwarm))(batch)
    jax.block_until_ready(batch)
    chunk = jax.jit(chunk).lower(batch, 0).compile()  # compiled outside the clock
    done = 0
    t0 = time.perf_counter()
    while done + a.chunk <= a.steps:
        batch = chunk(batch, done)
        done += a.chunk
    jax.block_until_ready(batch)
    wall = time.perf_counter() - t0
    bad = int(jnp.sum(~jnp.all(jnp.isfinite(batch.qpos), axis=1)))
    wsps = a.worlds * done / wall if done else 0
    prec = "f64" if batch.qpos.dtype == jnp.float64 else "f32"
    print(f"summary backend=mjx precision={prec} worlds={a.worlds} threads=0 steps={done} "
          f"wall_s={wall:.6f} world_steps_per_s={wsps:.6g} realtime_x={wsps * model.opt.timestep:.6g} "
          f"problem_worlds={bad} interrupted=0 device={jax.devices()[0].platform}")


if __name__ == "__main__":
    main()
