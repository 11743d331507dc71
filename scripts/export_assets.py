#!/usr/bin/env python3
"""Export flysim's default assets from the pinned FlyGym package.

Builds NeuroMechFly exactly as FlyGym 2.1's CPU replay script
(scripts/replay_behavior_cpu.py) does -- legs-only joints in yaw-pitch-roll
order, the legs' active DoFs as position actuators (kp 150) starting at the
neutral pose, joint sites, colours, the tracking camera, leg adhesion, a flat
ground, spawn at (0, 0, 0.7) mm with no rotation -- in two geometry variants:

  mesh     the script's default (convex meshes, FlyGym's UNMODIFIED fitting)
  capsule  every collision geom fitted to a capsule (ALL_TO_CAPSULES)

Each variant is written as MJCF with its meshes and as MJB (the compiled model,
bit for bit what FlyGym simulates). The same fly is also built into FlyGym's other
worlds (WORLDS), at the same spawn, both variants, under worlds/:

  worlds/tethered.mjb, worlds/tethered_capsule.mjb   TetheredWorld: the thorax is a
      mocap body held at the spawn (no free joint), the legs move freely, no ground
  worlds/gapped.mjb, worlds/gapped_capsule.mjb       GappedTerrainWorld: 27 floor
      boxes with transverse gaps over a plane (1540 explicit pairs)
  worlds/blocks.mjb, worlds/blocks_capsule.mjb       BlocksTerrainWorld: 837 boxes
      of two heights (46035 explicit pairs, every fly geom against every box)
  worlds/mixed.mjb, worlds/mixed_capsule.mjb         MixedTerrainWorld: blocks, gaps
      and flat floor, 288 boxes and 3 planes (16005 explicit pairs)

The terrains are FlyGym's classes with their default arguments (rand_seed 0). The
spawn is the replay script's (0, 0, 0.7) mm for every world: the installed FlyGym
2.1.1 and flygym_demo hold no example that puts the fly on a terrain (the only other
spawn there, flygym_demo/benchmark/time_gpu_simulation.py's (0, 0, 0.8) mm, is on
flat ground), and at (0, 0, 0.7) the neutral fly's lowest geom (bounding sphere) is
0.62 mm up, above every terrain's top under it (blocks 0.45 mm, gapped and mixed 0).

The recorded walking clip (FlyGym's
MotionSnippet) is written to HDF5 twice, with the actuated DoFs' names in the
actuators' order:

  walking_clip.h5        resampled to the timestep by FlyGym itself (10 kHz)
  walking_clip_330hz.h5  the smoothed recording at its own 330 Hz, which flysim
                         resamples itself (a test checks both agree)

and FlyGym's own CPU replay loop (Simulation: reset, adhesion on, warm-up, then
set_actuator_inputs + step) of the mesh model's first REFERENCE_STEPS steps, as
reference_replay.h5 (qpos after every step), which flysim's CPU stepper must
reproduce bit for bit.

A manifest.json records versions, sizes and checksums. The model's sizes are
printed and checked against the expected NeuroMechFly sizes.

Usage: export_assets.py OUTDIR
"""

import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

import h5py
import mujoco
import numpy as np
from scipy.interpolate import interp1d
from scipy.signal import savgol_filter

from flygym import Simulation
from flygym.anatomy import ActuatedDOFPreset, AxisOrder, JointPreset, Skeleton
from flygym.compose import (
    ActuatorType,
    BlocksTerrainWorld,
    FlatGroundWorld,
    GappedTerrainWorld,
    MixedTerrainWorld,
    TetheredWorld,
    GeomFittingOption,
    KinematicPosePreset,
    NeuroMechFly,
)
from flygym.utils.math import Rotation3D
from flygym_demo.spotlight_data import MotionSnippet

# FlyGym 2.1's replay_behavior_cpu.py defaults.
TIMESTEP = 1e-4
ACTUATOR_GAIN = 150.0
SPAWN_POS = [0.0, 0.0, 0.7]
SPAWN_QUAT = [1.0, 0.0, 0.0, 0.0]
# MotionSnippet.get_joint_angles defaults (Savitzky-Golay window and order).
SG_WINDOW_SEC = 0.03
SG_POLYORDER = 3

# NeuroMechFly built as above: world + thorax (head, abdomen, antennae and wings
# fused into it) + 6 legs x 8 segments; a free joint plus 6 x 11 hinges; 42
# position + 6 adhesion actuators; 69 body geoms + the ground; 55 ground contact
# pairs (legs, thorax, abdomen, head).
EXPECTED_SIZES = {
    "nbody": 50,
    "njnt": 67,
    "nq": 73,
    "nv": 72,
    "nu": 48,
    "ngeom": 70,
    "npair": 55,
}

# FlyGym's other worlds, each with the fly above at the same spawn: the world's
# class and its expected sizes (differences from EXPECTED_SIZES).
WORLDS = {
    # No free joint (nq, nv, njnt lose its 7, 6, 1), no ground geom and no pairs, the
    # thorax a mocap body: six kinematic trees (a leg each) under it.
    "tethered": (TetheredWorld, {"njnt": 66, "nq": 66, "nv": 66, "ngeom": 69,
                                 "npair": 0, "nmocap": 1}),
    # The terrains: static ground geoms (contype/conaffinity 0) in the world body and
    # every contact geom of the fly (55) paired explicitly with every ground geom.
    # gapped: 27 boxes + 1 plane; blocks: 837 boxes; mixed: 288 boxes + 3 planes.
    "gapped": (GappedTerrainWorld, {"ngeom": 97, "npair": 1540}),
    "blocks": (BlocksTerrainWorld, {"ngeom": 906, "npair": 46035}),
    "mixed": (MixedTerrainWorld, {"ngeom": 360, "npair": 16005}),
}

REFERENCE_STEPS = 1000

VARIANTS = {
    "mesh": GeomFittingOption.UNMODIFIED,
    "capsule": GeomFittingOption.ALL_TO_CAPSULES,
}


def build(geom_fitting, world_class=FlatGroundWorld):
    """NeuroMechFly and its world, as replay_behavior_cpu.py's build_model() (another
    of FlyGym's worlds with world_class)."""
    fly = NeuroMechFly(geom_fitting_option=geom_fitting)
    skeleton = Skeleton(axis_order=AxisOrder.YAW_PITCH_ROLL,
                        joint_preset=JointPreset.LEGS_ONLY)
    fly.add_joints(skeleton, neutral_pose=KinematicPosePreset.NEUTRAL)
    dofs = fly.skeleton.get_actuated_dofs_from_preset(
        ActuatedDOFPreset.LEGS_ACTIVE_ONLY)
    fly.add_actuators(dofs, actuator_type=ActuatorType.POSITION,
                      kp=ACTUATOR_GAIN,
                      neutral_input=KinematicPosePreset.NEUTRAL)
    fly.add_joint_sites(JointPreset.LEGS_ONLY.to_joint_list())
    fly.colorize()
    fly.add_tracking_camera()
    fly.add_leg_adhesion()
    world = world_class()
    world.add_fly(fly, SPAWN_POS, Rotation3D(format="quat", values=SPAWN_QUAT))
    sim = Simulation(world)
    return fly, world, sim


def sizes(model, expected=EXPECTED_SIZES):
    return {k: int(getattr(model, k)) for k in expected}


def check_sizes(label, model, expected=EXPECTED_SIZES):
    got = sizes(model, expected)
    line = " ".join(f"{k} {v}" for k, v in got.items())
    print(f"  {label}: {line}")
    bad = {k: (v, expected[k]) for k, v in got.items() if v != expected[k]}
    if bad:
        detail = ", ".join(f"{k} is {v} (expected {e})" for k, (v, e) in bad.items())
        sys.exit(f"export_assets: {label}: unexpected model sizes: {detail}. "
                 "The pinned flygym build changed; update EXPECTED_SIZES only "
                 "after checking the new model.")


def max_rel_diff(a, b):
    """Largest relative difference over the float arrays of two models."""
    worst, field = 0.0, ""
    for name in dir(a):
        x = getattr(a, name, None)
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.size == 0:
            continue
        y = getattr(b, name)
        if x.shape != y.shape:
            return float("inf"), name
        scale = np.maximum(np.abs(x), 1e-6)
        rel = float(np.max(np.abs(x - y) / scale))
        if rel > worst:
            worst, field = rel, name
    return worst, field


def export_model(outdir, name, geom_fitting, world_class=FlatGroundWorld,
                 expected=EXPECTED_SIZES):
    """Build and write one model: outdir/name.mjb and outdir/name/neuromechfly.xml
    (name may hold a folder: worlds/tethered)."""
    fly, world, sim = build(geom_fitting, world_class)
    model = sim.mj_model
    if model.opt.timestep != TIMESTEP:
        sys.exit(f"export_assets: {name}: timestep {model.opt.timestep}, "
                 f"expected {TIMESTEP}")
    check_sizes(name, model, expected)
    xml_dir = outdir / name
    world.save_xml_with_assets(xml_dir, "neuromechfly.xml")
    mjb_path = outdir / f"{name}.mjb"
    mujoco.mj_saveModel(model, str(mjb_path), None)

    # Both files must load; MJCF stores numbers with fewer digits, so record by
    # how much its compiled model differs from the MJB.
    from_xml = mujoco.MjModel.from_xml_path(str(xml_dir / "neuromechfly.xml"))
    from_mjb = mujoco.MjModel.from_binary_path(str(mjb_path))
    check_sizes(f"{name} (reloaded MJCF)", from_xml, expected)
    check_sizes(f"{name} (reloaded MJB)", from_mjb, expected)
    rel, field = max_rel_diff(from_mjb, from_xml)
    print(f"  {name}: MJCF vs MJB largest relative difference {rel:.2e} ({field})")
    return fly, {
        "mjcf": str((xml_dir / "neuromechfly.xml").relative_to(outdir)),
        "mjb": str(mjb_path.relative_to(outdir)),
        "sizes": sizes(model, expected),
        "mjcf_vs_mjb_max_rel_diff": rel,
        "mjcf_vs_mjb_worst_field": field,
    }


def smoothed_clip(snippet, dof_order):
    """The recording smoothed as MotionSnippet does, at its own rate, with the
    columns in the actuators' order: (n_frames, n_dofs)."""
    window = int(SG_WINDOW_SEC * snippet.data_fps)
    window += 1 - (window % 2)
    filtered = savgol_filter(snippet.joint_angles, window_length=window,
                             polyorder=SG_POLYORDER, axis=0)
    cols = [(snippet.legs.index(d.child.pos),
             snippet.dofs_per_leg.index((d.parent.link, d.child.link,
                                         d.axis.value)))
            for d in dof_order]
    legs, dofs = np.array(cols).T
    return filtered[:, legs, dofs]


def write_targets(path, angles, dof_names, timestep, snippet, how):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("targets", data=angles.astype(np.float64))
        d.attrs["units"] = "rad"
        d.attrs["dims"] = "(T, A): sample x actuated DoF"
        f.create_dataset("dof_names", data=np.array(dof_names, dtype=object),
                         dtype=h5py.string_dtype())
        f.attrs["timestep"] = timestep
        f.attrs["source"] = (f"flygym {version('flygym')}: "
                             "flygym_demo.spotlight_data.MotionSnippet")
        f.attrs["experiment_trial"] = str(snippet.experiment_trial)
        f.attrs["recording_fps"] = float(snippet.data_fps)
        f.attrs["recording_frames"] = list(snippet.framerange_in_raw_recording)
        f.attrs["processing"] = how


def export_clip(outdir, fly):
    snippet = MotionSnippet()
    dof_order = fly.get_actuated_jointdofs_order(ActuatorType.POSITION)
    dof_names = [d.name for d in dof_order]
    fine = snippet.get_joint_angles(TIMESTEP, dof_order)
    coarse = smoothed_clip(snippet, dof_order)

    # The 330 Hz file must be what FlyGym resamples: check that scipy's cubic
    # interpolation of it (as MotionSnippet does) gives FlyGym's targets back.
    n = coarse.shape[0]
    src_t = np.arange(n) / snippet.data_fps
    out_t = np.arange(0, n / snippet.data_fps, TIMESTEP)
    again = interp1d(src_t, coarse, kind="cubic", axis=0, bounds_error=False,
                     fill_value=(coarse[0], coarse[-1]))(out_t)
    err = float(np.max(np.abs(again - fine)))
    if err > 1e-12:
        sys.exit(f"export_assets: the 330 Hz clip does not reproduce FlyGym's "
                 f"targets (max error {err:.3e} rad)")

    sg = (f"Savitzky-Golay smoothing (window {SG_WINDOW_SEC} s, order "
          f"{SG_POLYORDER}) of the recorded angles")
    write_targets(outdir / "walking_clip.h5", fine, dof_names, TIMESTEP, snippet,
                  sg + f", then cubic interpolation to {TIMESTEP} s by "
                  "MotionSnippet.get_joint_angles")
    write_targets(outdir / "walking_clip_330hz.h5", coarse, dof_names,
                  1.0 / snippet.data_fps, snippet, sg + ", at the recording rate")
    print(f"  clip: {fine.shape[0]} steps x {fine.shape[1]} DoFs at {TIMESTEP} s "
          f"({coarse.shape[0]} frames at {snippet.data_fps} Hz)")
    return {"targets": "walking_clip.h5", "targets_330hz": "walking_clip_330hz.h5",
            "steps": int(fine.shape[0]), "dofs": int(fine.shape[1]),
            "recording_fps": float(snippet.data_fps)}


def export_reference(outdir):
    """FlyGym's replay loop (replay_behavior_cpu.py's, minus rendering) on the
    mesh model: qpos after each of the first REFERENCE_STEPS steps."""
    fly, world, sim = build(VARIANTS["mesh"])
    snippet = MotionSnippet()
    targets = snippet.get_joint_angles(
        TIMESTEP, fly.get_actuated_jointdofs_order(ActuatorType.POSITION))
    sim.reset()
    sim.set_leg_adhesion_states(fly.name, np.ones(6, dtype=bool))
    sim.warmup()
    warmup_steps = int(0.05 / TIMESTEP)
    qpos = np.zeros((REFERENCE_STEPS, sim.mj_model.nq))
    for step in range(REFERENCE_STEPS):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, targets[step, :])
        sim.step()
        qpos[step] = sim.mj_data.qpos
    with h5py.File(outdir / "reference_replay.h5", "w") as f:
        d = f.create_dataset("qpos", data=qpos)
        d.attrs["dims"] = "(steps, nq): qpos after each step"
        f.attrs["model"] = "mesh.mjb"
        f.attrs["targets"] = "walking_clip.h5"
        f.attrs["warmup_steps"] = warmup_steps
        f.attrs["source"] = (f"flygym {version('flygym')} Simulation: reset(), "
                             "set_leg_adhesion_states(ones), warmup(), then per step "
                             "set_actuator_inputs(targets[step]) and step()")
    print(f"  reference: FlyGym's replay loop, {REFERENCE_STEPS} steps after "
          f"{warmup_steps} warm-up steps")
    return {"reference": "reference_replay.h5", "steps": REFERENCE_STEPS,
            "warmup_steps": warmup_steps}


def export_worlds(outdir):
    """Each of WORLDS in both variants: worlds/NAME (mesh) and worlds/NAME_capsule."""
    (outdir / "worlds").mkdir(exist_ok=True)
    out = {}
    for world, (world_class, diff) in WORLDS.items():
        expected = EXPECTED_SIZES | diff
        out[world] = {"class": world_class.__name__, "spawn_pos": SPAWN_POS,
                      "spawn_quat": SPAWN_QUAT, "models": {}}
        for variant, fitting in VARIANTS.items():
            name = world if variant == "mesh" else f"{world}_{variant}"
            _, info = export_model(outdir, f"worlds/{name}", fitting, world_class,
                                   expected)
            out[world]["models"][variant] = info
    return out


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_assets.py OUTDIR")
    outdir = Path(sys.argv[1]).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    print(f"Exporting NeuroMechFly (flygym {version('flygym')}, "
          f"mujoco {mujoco.__version__}) to {outdir}")
    manifest = {"flygym": version("flygym"), "mujoco": mujoco.__version__,
                "timestep": TIMESTEP, "actuator_gain": ACTUATOR_GAIN,
                "spawn_pos": SPAWN_POS, "models": {}}
    fly = None
    for name, fitting in VARIANTS.items():
        fly_v, info = export_model(outdir, name, fitting)
        fly = fly or fly_v
        manifest["models"][name] = info
    manifest["worlds"] = export_worlds(outdir)
    manifest["clip"] = export_clip(outdir, fly)
    manifest["reference_replay"] = export_reference(outdir)
    manifest["sha256"] = {
        str(p.relative_to(outdir)): sha256(p)
        for p in sorted(outdir.glob("*.mjb")) + sorted(outdir.glob("worlds/*.mjb"))
    } | {p.name: sha256(p) for p in sorted(outdir.glob("*.h5"))}
    manifest["exporter_sha256"] = sha256(__file__)
    (outdir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"  wrote {outdir / 'manifest.json'}")


if __name__ == "__main__":
    main()
