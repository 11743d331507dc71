#!/usr/bin/env python3
"""A copy of a model whose keyframe is MuJoCo's state after a settling replay warm-up.

    settled_model.py IN.mjb OUT.mjb [SECONDS]

flysim's replay resets each world to the keyframe with the adhesion actuators on and
settles it at the keyframe's controls for --warmup-sec (FlyGym's 0.05 s: 500 steps) before
the clip starts. Under the GPU simulator those steps would take most of the check; this
model's keyframe (qpos, qvel, act, ctrl) is MuJoCo's state after that warm-up (the same
reset: the keyframe, adhesion actuators, those on a body, at 1), so a run with --warmup-sec 0 starts with
the fly standing on the ground, its contacts made.
"""
import sys

import mujoco


def main():
    src, dst = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    m = mujoco.MjModel.from_binary_path(src) if src.endswith(".mjb") else \
        mujoco.MjModel.from_xml_path(src)
    if m.nkey < 1:
        sys.exit(f"settled_model: {src} has no keyframe to settle from")
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    for a in range(m.nu):  # adhesion: the actuators on a body (fs_replay_reset_world)
        if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_BODY:
            d.ctrl[a] = 1.0
    for _ in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
    m.key_qpos[0] = d.qpos
    m.key_qvel[0] = d.qvel
    if m.na:
        m.key_act[0] = d.act
    m.key_ctrl[0] = d.ctrl
    mujoco.mj_saveModel(m, dst, None)
    print(f"settled_model: {dst}: keyframe after {seconds} s ({d.ncon} contacts)")


if __name__ == "__main__":
    main()
