"""Gymnasium environments over a flysim.Batch: NeuroMechFly imitating a walking clip.

    import flysim.gym
    env = flysim.gym.FlyWalkVectorEnv(64, model="assets/mesh.mjb",
                                      clip="assets/walking_clip.h5", backend="host")
    obs, info = env.reset(seed=0)
    for _ in range(100):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

FlyWalkVectorEnv is a gymnasium.vector.VectorEnv whose num_envs sub-environments are the
worlds of one flysim.Batch, all stepped by one call; FlyWalkEnv is a gymnasium.Env over a
1-world batch (for gymnasium's check_env and single-environment code). Both are registered
as "flysim/FlyWalk-v0": gymnasium.make(ENV_ID, model=..., clip=...) and
gymnasium.make_vec(ENV_ID, n, vectorization_mode="vector_entry_point", model=..., clip=...).

A world's episode
-----------------
* Reset: the model's keyframe "neutral" (Batch.reset; the model's qpos0 when it has none),
  the keyframe's controls, every adhesion actuator on (ctrl 1), and a clip row r0 drawn
  uniformly at random from the env's seeded generator. No settling steps: the fly starts
  at the keyframe's pose (thorax 2 mm high in mesh.mjb) and lands on its legs in the first
  tens of milliseconds (the thorax settles near 1.12 mm).
* Step: the action's position targets (clipped to the action Box) are written to the 42
  position actuators (and, with action_adhesion=True, the last 6 values to the adhesion
  actuators), then control_substeps physics steps run (Batch.step, then
  Batch.step_recorded of the last one: the recording's columns are the observation).
* Observation (float32, 109 values; `obs_slices` names them):
  joint_pos (42, rad) and joint_vel (42, rad/s) of the actuated joints, in the position
  actuators' order; thorax_pos (3, the free joint's position, model units: mm) and
  thorax_quat (4, w x y z, the free joint's orientation); contact_force (6 x 3: the contact
  force on each leg's geoms, world frame, summed over the leg's contacts, legs in the order
  of `legs`, lf lm lh rf rm rh), recorded after the last physics step of the env step
  (Batch.add_recording with "group_contact_force"); zero in the observation of a reset.
* Reward: exp(-reward_scale * mean over the 42 joints of (joint_pos - clip[row])^2), row =
  r0 + k * control_substeps after the world's k-th step since its reset (the clip's row at
  the world's time; the clip's rows are at the model's timestep). In (0, 1]; 0 where the
  observation is not finite. With the default reward_scale 50 (measured on mesh.mjb, host
  f32, 16 worlds): sending the clip's own rows as targets (open loop, the actuators' PD
  tracking them) scores about 0.9 a step once the fly has landed (from about 20 ms), holding
  the clip's mean pose about 0.13, uniform random actions about 0.04.
* Termination: the world fell (thorax below fall_height, or tilted past 90 degrees: its z
  axis pointing down), its observation is not finite, or flysim flagged it (Batch.problems
  & terminate_problems: by default a MuJoCo warning such as a bad qacc, a full contact
  buffer, a failed solve; not a solve at its iteration limit). fall_height defaults to
  0.95 mm: in mesh.mjb the thorax's origin is 0.64 mm above the lowest point of its mesh,
  and the fly lying on the floor with its leg actuators slack rests at 0.81 mm (MuJoCo,
  0.5 s), while standing at the keyframe's pose (1.12 to 1.14 mm) and replaying the clip
  (1.14 to 1.53 mm) keep it higher.
* Truncation: after episode_steps env steps.
* Autoreset (metadata["autoreset_mode"], gymnasium 1.x's conventions): NEXT_STEP (the
  default): the step after a world ended resets it (its action ignored) and returns its
  reset observation, reward 0, terminated and truncated False. SAME_STEP: the step that
  ends a world resets it and returns the reset observation, the last one in
  info["final_obs"] (and info["final_info"]). DISABLED: nothing is reset by step; reset
  the ended worlds with reset(options={"reset_mask": mask}).
* Seeding: reset(seed=s) re-seeds the generator of the clip rows; with the same seed, the
  same actions and the same backend and precision, the run is the same to the bit (on
  host and cpu, tested: a world's steps depend neither on the other worlds, nor on their
  resets, nor on the threads).
* info (every key with its gymnasium "_key" mask, all True): "clip_row" (the clip row of
  the observation's time), "fell", "unstable" (not finite or flagged), "problems" (the
  flysim problem bits since the world's reset).

Backends and array libraries
----------------------------
"cpu" (float64) and "host" (float32 or float64) with numpy (arrays=None, the default) read
and write the batch's numpy views in place. "cuda" with numpy goes through host copies:
each step writes ctrl with Batch.write, the observation comes back through the recording
(gathered on the device, copied into a host buffer, then Batch.sync()), the problem flags
and reset states through Batch.read; the physics stays on the GPU, the policy's arrays are
numpy.

arrays=torch (or cupy) with backend="cuda" keeps everything on the GPU: the env opens the
batch on the library's current stream, takes the batch's ctrl, qpos, qvel and problems as
that library's arrays without a copy (DLPack), records the observation into a device array
(the library gathers it on the device), resets worlds by a device mask (the ended worlds;
the library reads the mask on the device) and computes rewards, terminations and
truncations on the device; it returns the library's device arrays. No call waits for the
GPU: step() queues its work and returns. The clip rows of reset worlds are drawn on the
host (one per world at every reset call, whichever worlds reset) and copied up without a
wait. Actions are not tested for NaN there (that would wait for the device): a NaN
target is a bad ctrl, MuJoCo's warning flags the world and it terminates. With SAME_STEP,
info["final_obs"] is then the (num_envs, obs) array of every step (the ended worlds' rows
are their last observations), present at every step. The same code runs any array-API
library on the host and cpu backends (torch on the CPU, array_api_strict: the tests run it
there, and its runs equal numpy's to the bit); it has not run on a GPU here (none was
lent): the library calls it rests on (the device-mask reset, the device recording) are
tested against their host forms on the cuda backend (test_batch) and under the GPU
simulator. A cpu world that MuJoCo stops with an error makes step() raise flysim's
RuntimeError (the cpu backend stops the other worlds' steps too); reset() recovers.

Rendering: none (render_mode must be None).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover
    raise ImportError("flysim.gym needs gymnasium (pip install 'gymnasium>=1.0')") from e

import mujoco

import flysim

def _array_mode(arrays, backend, host_round_trip):
    """(xp, mode): the array namespace (array_api_compat's, for numpy too) and how the env
    reaches the batch: "views" (numpy, in place), "round_trip" (numpy on cuda: copies) or
    "device" (another library's arrays, in place through DLPack)."""
    try:
        import array_api_compat
    except ImportError as e:  # pragma: no cover
        raise ImportError("flysim.gym needs array-api-compat (pip install array-api-compat, "
                          "or flysim's [gym] extra)") from e
    if arrays is None or arrays is np:
        mode = "round_trip" if backend == "cuda" or host_round_trip else "views"
        # numpy's own namespace where it is the standard's (2.1 on: np.astype; no wrapper a
        # call to pay), else through array-api-compat
        std = all(hasattr(np, f) for f in ("astype", "concat", "bool"))
        return (np if std else array_api_compat.array_namespace(np.zeros(1))), mode
    if host_round_trip:
        raise ValueError("flysim.gym: host_round_trip=True is the numpy path's; fix: arrays=None")
    name = getattr(arrays, "__name__", "")
    if name.startswith("jax"):
        raise ValueError("flysim.gym: arrays=jax: JAX arrays cannot be written in place (the "
                         "env writes the batch's ctrl through them); fix: arrays=torch or cupy")
    if backend == "cuda" and name not in ("torch", "cupy"):
        raise ValueError(f"flysim.gym: arrays={name or arrays!r} on cuda: the env shares the "
                         "library's CUDA stream, which it finds for torch and cupy; fix: "
                         "arrays=torch or cupy (or None: numpy through host copies)")
    try:
        sample = arrays.asarray([0.0])
        if backend == "cuda" and getattr(arrays, "__name__", "") == "torch":
            sample = sample.cuda()
        xp = array_api_compat.array_namespace(sample)
    except Exception as e:
        raise ValueError(f"flysim.gym: arrays={arrays!r}: fix: None (numpy) or an array "
                         f"library's module (torch, cupy) ({e})") from e
    return xp, "device"


def _current_stream(arrays, device):
    """The CUDA stream handle the array library queues its work on (its current stream on
    `device`), for the batch to share: its steps and the library's kernels are ordered with
    no synchronization. 0 (the legacy default stream) is passed as cudaStreamLegacy (1)."""
    name = getattr(arrays, "__name__", "")
    if name == "torch":
        handle = arrays.cuda.current_stream(device).cuda_stream
    elif name == "cupy":
        with arrays.cuda.Device(device):
            handle = arrays.cuda.get_current_stream().ptr
    else:
        return None  # a CPU library (the host and cpu backends): no stream
    return handle or 1


def _device_of(x):
    import array_api_compat
    return array_api_compat.device(x)


__all__ = ["FlyWalkVectorEnv", "FlyWalkEnv", "LEGS", "DEFAULT_TERMINATE_PROBLEMS", "ENV_ID"]

LEGS = ("lf", "lm", "lh", "rf", "rm", "rh")
DEFAULT_TERMINATE_PROBLEMS = (flysim.PROBLEM_WARNING | flysim.PROBLEM_CONTACTS
                              | flysim.PROBLEM_FAILED)
_INFO_KEYS = ("clip_row", "fell", "unstable", "problems")


def _asset(path, name, what):
    """`path`, or FLYSIM_ASSETS/name, or a ValueError naming the fix."""
    if path is not None:
        return path
    d = os.environ.get("FLYSIM_ASSETS")
    if d and os.path.exists(os.path.join(d, name)):
        return os.path.join(d, name)
    raise ValueError(f"flysim.gym: no {what} given; fix: pass it (the path of {name}, "
                     "exported by scripts/setup.sh into assets/) or set FLYSIM_ASSETS to the "
                     "folder holding it")


def _tail(name):
    return name.rsplit("/", 1)[-1] if name else ""


def _load_clip(clip, model, joints):
    """(T x len(joints) float64 targets, in the order of `joints`, the clip's timestep or
    None) from a clip path (HDF5: /targets, /dof_names) or an array in that order."""
    if not isinstance(clip, (str, os.PathLike)):
        targets = np.asarray(clip, dtype=np.float64)
        if targets.ndim != 2 or targets.shape[1] != len(joints) or len(targets) < 1:
            raise ValueError(f"flysim.gym: clip array of shape {targets.shape}; fix: (T, "
                             f"{len(joints)}): a row of targets (rad) for each position "
                             "actuator, in the actuators' order, one row a timestep")
        return targets, None
    try:
        import h5py
    except ImportError as e:
        raise ImportError("flysim.gym: reading a clip file needs h5py (pip install h5py); "
                          "or pass the clip as a (T, 42) array") from e
    path = os.fspath(clip)
    if not os.path.exists(path):
        raise ValueError(f"flysim.gym: {path}: no such file; fix: the path of the walking "
                         "clip (walking_clip.h5: /targets and /dof_names)")
    with h5py.File(path, "r") as f:
        if "targets" not in f or "dof_names" not in f:
            raise ValueError(f"flysim.gym: {path}: fix: a file with /targets (T x A, rad) "
                             "and /dof_names (A)")
        targets = np.asarray(f["targets"][:], dtype=np.float64)
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["dof_names"][:]]
        dt = f.attrs.get("timestep", None)
    col = {}
    for c, n in enumerate(names):
        col[n] = c
        col[_tail(n)] = c
    order = []
    for j in joints:
        jn = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        c = col.get(jn, col.get(_tail(jn)))
        if c is None:
            raise ValueError(f"flysim.gym: {path}: no column for joint {jn!r} (a position "
                             "actuator's); fix: a clip whose /dof_names name every "
                             "actuated joint")
        order.append(c)
    if targets.ndim != 2 or targets.shape[1] != len(names) or not np.isfinite(targets).all():
        raise ValueError(f"flysim.gym: {path}: /targets of shape {targets.shape} (or not "
                         f"finite); fix: (T, {len(names)}) finite angles in rad")
    return np.ascontiguousarray(targets[:, order]), (None if dt is None else float(dt))


def _leg_groups(model, legs):
    """Each geom's leg (its index in legs), or -1: from the names of the geom's body and
    of the bodies above it ("nmf/lf_tibia": leg "lf"), else the geom's own name."""
    def leg_of(name):
        head = _tail(name).split("_", 1)[0]
        return legs.index(head) if head in legs else -1

    group = np.full(model.ngeom, -1, dtype=np.int32)
    for g in range(model.ngeom):
        b = int(model.geom_bodyid[g])
        while b > 0 and group[g] < 0:
            group[g] = leg_of(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b))
            b = int(model.body_parentid[b])
        if group[g] < 0:
            group[g] = leg_of(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g))
    for i, leg in enumerate(legs):
        if not (group == i).any():
            raise ValueError(f"flysim.gym: no geom of leg {leg!r} (bodies named "
                             f"'{leg}_...'); fix: a NeuroMechFly model, or legs= the model's")
    return group


class FlyWalkVectorEnv(VectorEnv):
    """num_envs flies imitating a walking clip, the worlds of one flysim.Batch (see the
    module's doc for the observation, reward, termination and autoreset).

    Args:
        num_envs: the worlds.
        model: a mujoco.MjModel or the path of one (None: FLYSIM_ASSETS/mesh.mjb).
        clip: the walking clip: a path (HDF5 /targets T x A rad, /dof_names: the joint of
            each column, "nmf/<name>" in the model) or a (T, n) array in the position
            actuators' order (None: FLYSIM_ASSETS/walking_clip.h5). Rows at the model's
            timestep.
        backend, precision, threads, max_contacts: flysim.Batch's (precision None: f32 on
            host and cuda, f64 on cpu).
        control_substeps: physics steps an env step (10 at 0.1 ms: 1 ms control).
        episode_steps: env steps before truncation.
        action_adhesion: the action also sets the 6 adhesion actuators (in [0, 1]);
            otherwise adhesion stays on.
        reward_scale: k of the reward exp(-k * MSE), MSE in rad^2.
        fall_height: the thorax height (model units) under which a world fell.
        terminate_problems: the flysim.PROBLEM_* bits that end a world.
        action_margin: the action Box is each joint's clip range widened by this (rad),
            within [-pi, pi].
        autoreset_mode: gymnasium.vector.AutoresetMode (or its value); NEXT_STEP default.
        seed: seeds the clip rows' generator before the first reset (reset(seed=) also).
        render_mode: None (no rendering).
        legs: the leg prefixes of the contact-force groups (bodies "<leg>_...").
        host_round_trip: run the cuda path of numpy arrays (Batch.read/write) on any
            backend (tests).
        arrays: the array library of actions, observations, rewards and flags: None
            (numpy), or a module of the array API standard (torch, cupy; array_api_strict):
            the env's arrays are then that library's, on the batch's device, and on cuda
            nothing goes through the host (see the module's doc).
        device: cuda: the GPU's ordinal.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, model=None, clip=None, *, backend: str = "host",
                 precision: str | None = None, control_substeps: int = 10,
                 episode_steps: int = 1000, action_adhesion: bool = False,
                 reward_scale: float = 50.0, fall_height: float = 0.95,
                 terminate_problems: int = DEFAULT_TERMINATE_PROBLEMS,
                 action_margin: float = 0.5,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 seed: int | None = None, render_mode: str | None = None,
                 threads: int | None = None, max_contacts: int | None = None,
                 legs=LEGS, host_round_trip: bool = False, arrays=None, device: int = 0):
        if render_mode is not None:
            raise ValueError(f"flysim.gym: render_mode={render_mode!r}: fix: None (the env "
                             "does not render)")
        for name, v in (("num_envs", num_envs), ("control_substeps", control_substeps),
                        ("episode_steps", episode_steps)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"flysim.gym: {name}={v!r}: fix: an integer, 1 or more")
        for name, v in (("reward_scale", reward_scale), ("fall_height", fall_height),
                        ("action_margin", action_margin)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(v) or (name != "fall_height" and v < 0):
                what = "a finite number" if name == "fall_height" else "a finite number, 0 or more"
                raise ValueError(f"flysim.gym: {name}={v!r}: fix: {what}")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = dict(type(self).metadata, autoreset_mode=self.autoreset_mode)
        self.render_mode = None
        self.num_envs = int(num_envs)
        self.control_substeps = int(control_substeps)
        self.episode_steps = int(episode_steps)
        self.action_adhesion = bool(action_adhesion)
        self.reward_scale = float(reward_scale)
        self.fall_height = float(fall_height)
        self.terminate_problems = int(terminate_problems)
        self.legs = tuple(legs)

        m = _asset(model, "mesh.mjb", "model")
        self.model = m if isinstance(m, mujoco.MjModel) else flysim.load_model(m)
        m = self.model
        trn = m.actuator_trntype
        self._pos_act = np.flatnonzero(trn == mujoco.mjtTrn.mjTRN_JOINT)
        self._adh_act = np.flatnonzero(trn == mujoco.mjtTrn.mjTRN_BODY)
        if len(self._pos_act) == 0:
            raise ValueError("flysim.gym: the model has no joint actuators; fix: "
                             "NeuroMechFly's mesh.mjb (42 position actuators)")
        if self.action_adhesion and len(self._adh_act) == 0:
            raise ValueError("flysim.gym: action_adhesion=True, the model has no adhesion "
                             "actuators; fix: action_adhesion=False")
        joints = m.actuator_trnid[self._pos_act, 0]
        free = np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
        if len(free) == 0:
            raise ValueError("flysim.gym: the model has no free joint (the thorax's); fix: "
                             "NeuroMechFly's mesh.mjb")
        fq = int(m.jnt_qposadr[free[0]])
        self._jq = m.jnt_qposadr[joints].astype(np.int32)
        self._jv = m.jnt_dofadr[joints].astype(np.int32)
        self._fq = fq

        self.clip, clip_dt = _load_clip(_asset(clip, "walking_clip.h5", "clip"), m, joints)
        if clip_dt is not None and abs(clip_dt - m.opt.timestep) > 1e-9 * m.opt.timestep:
            raise ValueError(f"flysim.gym: the clip's timestep {clip_dt} s is not the model's "
                             f"{m.opt.timestep} s; fix: resample the clip to the model's")
        T = len(self.clip)
        span = self.episode_steps * self.control_substeps
        # rows r0 .. r0 + span stay inside the clip when it is long enough; else they wrap
        self._row_high = T - span if span < T else T

        nj = len(self._pos_act)
        self._geom_group = _leg_groups(m, self.legs)
        nl = len(self.legs)
        self.obs_slices = {"joint_pos": slice(0, nj), "joint_vel": slice(nj, 2 * nj),
                           "thorax_pos": slice(2 * nj, 2 * nj + 3),
                           "thorax_quat": slice(2 * nj + 3, 2 * nj + 7),
                           "contact_force": slice(2 * nj + 7, 2 * nj + 7 + 3 * nl)}
        nobs = 2 * nj + 7 + 3 * nl
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (nobs,), np.float32)
        lo = np.maximum(self.clip.min(0) - action_margin, -np.pi)
        hi = np.minimum(self.clip.max(0) + action_margin, np.pi)
        if self.action_adhesion:
            lo = np.concatenate([lo, np.zeros(len(self._adh_act))])
            hi = np.concatenate([hi, np.ones(len(self._adh_act))])
        self.single_action_space = spaces.Box(lo.astype(np.float32), hi.astype(np.float32),
                                              dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._act_lo = self.single_action_space.low.astype(np.float64)
        self._act_hi = self.single_action_space.high.astype(np.float64)

        self.backend = backend
        xp, self._mode = _array_mode(arrays, backend, host_round_trip)
        self._xp = xp
        self._np_arrays = arrays is None or arrays is np
        stream = _current_stream(arrays, device) if self._mode == "device" \
            and backend == "cuda" else None
        self.batch = flysim.Batch(m, worlds=self.num_envs, backend=backend,
                                  precision=precision, threads=threads,
                                  max_contacts=max_contacts, device=device, stream=stream)
        columns = ([("qpos", int(i)) for i in self._jq] + [("qvel", int(i)) for i in self._jv]
                   + [("qpos", fq + i) for i in range(7)]
                   + [("group_contact_force", i) for i in range(3 * nl)])
        # the last physics step of an env step is recorded (step(S - 1), then
        # step_recorded(1)): the observation, gathered by the library (on the device for cuda)
        on_device = self._mode == "device" and backend == "cuda"
        self._rec = self.batch.add_recording(columns, geom_group=self._geom_group, capacity=1,
                                             device=on_device)

        N, nu = self.num_envs, m.nu
        # the batch's arrays this env uses: in place ("views": numpy; "device": the array
        # library's, through DLPack, no copy) or host copies ("round_trip")
        if self._mode == "round_trip":
            self._dev = None
            self._ctrl = self.batch.read("ctrl")
        else:
            def view(name):
                v = self.batch.view(name)
                return v if self._np_arrays else xp.from_dlpack(v)
            self._ctrl, self._qpos, self._qvel = view("ctrl"), view("qpos"), view("qvel")
            self._problems_view = view("problems")
            self._dev = None if self._np_arrays else _device_of(self._ctrl)
        dev = self._dev

        def arr(values, dtype):
            return xp.asarray(values, dtype=dtype, device=dev) if dev is not None else \
                xp.asarray(values, dtype=dtype)
        self._arr = arr
        self._rec_buf = arr(np.zeros((1, N, nobs), np.float32), xp.float32)
        self._rec_out = [None] * (self._rec + 1)
        self._rec_out[self._rec] = self._rec_buf
        # ctrl column c: action column col_action[c] where is_action[c]; adhesion on at reset
        col_action = np.zeros(nu, np.int64)
        is_action = np.zeros(nu, bool)
        col_action[self._pos_act] = np.arange(nj)
        is_action[self._pos_act] = True
        if self.action_adhesion:
            col_action[self._adh_act] = nj + np.arange(len(self._adh_act))
            is_action[self._adh_act] = True
        is_adh = np.zeros(nu, bool)
        is_adh[self._adh_act] = True
        self._col_action = arr(col_action, xp.int64)
        self._is_action = arr(is_action, xp.bool)
        self._is_adh = arr(is_adh, xp.bool)
        self._jq_x = arr(self._jq, xp.int64)
        self._jv_x = arr(self._jv, xp.int64)
        self._fq_x = arr(fq + np.arange(7), xp.int64)
        self._clip_x = arr(self.clip, xp.float64)
        self._act_lo_x = arr(self._act_lo, xp.float64)
        self._act_hi_x = arr(self._act_hi, xp.float64)

        self._obs = arr(np.zeros((N, nobs), np.float32), xp.float32)
        self._row0 = arr(np.zeros(N, np.int64), xp.int64)
        self._steps = arr(np.zeros(N, np.int64), xp.int64)
        self._fell = arr(np.zeros(N, bool), xp.bool)
        self._unstable = arr(np.zeros(N, bool), xp.bool)
        self._problems = arr(np.zeros(N, np.int32), xp.int32)
        self._autoreset = arr(np.zeros(N, bool), xp.bool)
        self._none = arr(np.zeros(N, bool), xp.bool)
        # constants of every step (read, never written): ones and zeros, the clip's length
        self._all = arr(np.ones(N, bool), xp.bool)
        self._one32 = arr(np.ones(N, np.float32), xp.float32)
        self._zero64 = arr(np.zeros(N, np.float64), xp.float64)
        self._nclip = len(self.clip)
        self._njoint = nj
        # the recording's buffer as step_recorded takes it, checked once (_rec_buf is the env's)
        self._rec_args = self.batch._recorded_args("step_recorded", self._rec_out)
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)

    # -- the batch's arrays: in place (views, device) or through host copies (round_trip) ---
    def _state(self):
        """(qpos, qvel): the batch's, or host copies."""
        if self._mode == "round_trip":
            return self.batch.read("qpos"), self.batch.read("qvel")
        return self._qpos, self._qvel

    def _problems_now(self):
        if self._mode == "round_trip":
            return self.batch.read("problems")
        return self._xp.asarray(self._problems_view, copy=True)

    def _set_ctrl(self, values):
        """ctrl <- values (N x nu, ctrl's dtype): in place, or written (round_trip)."""
        self._ctrl[...] = values
        if self._mode == "round_trip":
            self.batch.write("ctrl", self._ctrl)

    # -- reset ------------------------------------------------------------------------------
    def _reset_worlds(self, mask, draw=True):
        """Reset the worlds of mask ((N,) bool array of the env's library, any number of them
        True: nothing is read back to test it on a device) to the keyframe, adhesion on, their
        observation; draw new clip rows for them (draw: N rows are drawn, so that the
        generator advances alike whichever worlds reset) and zero their steps."""
        xp = self._xp
        if draw:
            new = self.np_random.integers(0, self._row_high, self.num_envs)
            self._row0 = xp.where(mask, self._arr(new, xp.int64), self._row0)
        if self._np_arrays and not mask.any():
            return  # (numpy: the same result, sooner)
        self.batch.reset(mask, "neutral")
        if self._mode == "round_trip":
            self._ctrl = self.batch.read("ctrl")
        ctrl = self._ctrl
        on = mask[:, None] & self._is_adh[None, :]
        self._set_ctrl(xp.where(on, xp.ones_like(ctrl), ctrl))
        self._steps = xp.where(mask, xp.zeros_like(self._steps), self._steps)
        qpos, qvel = self._state()
        pos = xp.astype(xp.take(qpos, self._jq_x, axis=1), xp.float32)
        vel = xp.astype(xp.take(qvel, self._jv_x, axis=1), xp.float32)
        free = xp.astype(xp.take(qpos, self._fq_x, axis=1), xp.float32)
        zero = xp.zeros_like(self._obs[:, self.obs_slices["contact_force"]])
        o = xp.concat([pos, vel, free, zero], axis=1)
        self._obs = xp.where(mask[:, None], o, self._obs)
        self._fell = self._fell & ~mask
        self._unstable = self._unstable & ~mask
        self._problems = xp.where(mask, xp.zeros_like(self._problems), self._problems)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset every world (options={"reset_mask": (num_envs,) bools}: only those) to
        the keyframe, adhesion on, with new clip rows; seed re-seeds the rows' generator.
        Returns (observations, info)."""
        super().reset(seed=seed)
        xp = self._xp
        mask = xp.ones_like(self._none)
        if options is not None and "reset_mask" in options:
            mask = options["reset_mask"]
            if self._np_arrays:
                mask = np.asarray(mask)
                ok = mask.shape == (self.num_envs,) and mask.dtype == np.bool_ and mask.any()
            else:
                ok = tuple(mask.shape) == (self.num_envs,) and mask.dtype == xp.bool
            if not ok:
                raise ValueError(f"flysim.gym: options['reset_mask']: fix: a ({self.num_envs},)"
                                 " bool array with at least one True")
        self._reset_worlds(mask)
        self._autoreset = self._autoreset & ~mask
        return self._copy(self._obs), self._info()

    # -- step -------------------------------------------------------------------------------
    def _copy(self, a):
        return self._xp.asarray(a, copy=True)

    def _info(self):
        info = {"clip_row": (self._row0 + self._steps * self.control_substeps) % self._nclip,
                "fell": self._copy(self._fell), "unstable": self._copy(self._unstable),
                "problems": self._copy(self._problems)}
        for k in _INFO_KEYS:
            info["_" + k] = self._copy(self._all)
        return info

    def _actions(self, actions):
        """The actions as an (N, A) float64 array of the env's library, clipped to the Box."""
        xp = self._xp
        if self._np_arrays:
            a = np.asarray(actions, dtype=np.float64)
            if a.shape != self.action_space.shape:
                raise ValueError(f"flysim.gym: actions of shape {a.shape}; fix: "
                                 f"{self.action_space.shape}")
            if not np.isfinite(a).all():
                raise ValueError("flysim.gym: actions hold NaN or Inf; fix: finite targets")
        else:  # (not tested for NaN: that would wait for the device; a NaN target flags
            #    its world, MuJoCo's bad-ctrl warning, and ends it)
            a = self._arr(actions, None)  # (the library's own array on its device: itself)
            if tuple(a.shape) != self.action_space.shape:
                raise ValueError(f"flysim.gym: actions of shape {tuple(a.shape)}; fix: "
                                 f"{self.action_space.shape}")
            a = xp.astype(a, xp.float64)
        # (clip's array bounds, as maximum then minimum: array-api-compat's clip is slower)
        return xp.minimum(xp.maximum(a, self._act_lo_x), self._act_hi_x)

    def step(self, actions):
        """One env step of every world: control_substeps physics steps with the actions'
        targets. Returns (observations, rewards, terminations, truncations, info)."""
        xp = self._xp
        a = self._actions(actions)
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        pending = self._autoreset if next_step else self._none
        if next_step:  # NEXT_STEP: start them clean (their step is discarded below)
            self._reset_worlds(pending)
        # (numpy: whether any is, to skip the masks' work where none is)
        any_pending = next_step and (not self._np_arrays or bool(pending.any()))
        ctrl = self._ctrl
        targets = xp.astype(xp.take(a, self._col_action, axis=1), ctrl.dtype)
        self._set_ctrl(xp.where(self._is_action[None, :], targets, ctrl))

        if self.control_substeps > 1:
            self.batch.step(self.control_substeps - 1)
        self.batch._step_recorded_args(1, self._rec_args)
        if self._mode == "round_trip":
            self.batch.sync()  # the recording's copy lands
        obs = self._copy(self._rec_buf[0, ...])
        self._steps = self._steps + 1
        self._problems = self._problems_now()
        finite = xp.all(xp.isfinite(obs), axis=1)
        s = self.obs_slices
        t0 = s["thorax_pos"].start
        z = obs[:, t0 + 2]
        q0 = s["thorax_quat"].start
        qw, qx, qy, qz = (obs[:, q0 + i] for i in range(4))
        norm2 = qw * qw + qx * qx + qy * qy + qz * qz
        one = self._one32
        up_z = one - 2 * (qx * qx + qy * qy) / xp.where(norm2 > 0, norm2, one)  # thorax z . z
        with np.errstate(invalid="ignore", over="ignore"):
            self._fell = finite & ((z < self.fall_height) | (up_z < 0))
            self._unstable = ~finite | ((self._problems & self.terminate_problems) != 0)
            terminated = self._fell | self._unstable
            truncated = self._steps >= self.episode_steps
            row = (self._row0 + self._steps * self.control_substeps) % self._nclip
            err = xp.astype(obs[:, s["joint_pos"]], xp.float64) - xp.take(self._clip_x, row,
                                                                         axis=0)
            # (the mean as numpy's: the sum over the joints, over their count)
            reward = xp.exp(-self.reward_scale * (xp.sum(err * err, axis=1) / self._njoint))
        reward = xp.where(finite & xp.isfinite(reward), reward, self._zero64)
        self._obs = obs

        info_extra = {}
        if any_pending:  # NEXT_STEP: the reset's observation, no reward, not ended
            self._reset_worlds(pending, draw=False)
            reward = xp.where(pending, self._zero64, reward)
            terminated = terminated & ~pending
            truncated = truncated & ~pending
        ended = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            # numpy: only when a world ended, an object array of observations (gymnasium's
            # form); other libraries: every step (testing would wait for the device), the
            # (N, obs) observations, the ended worlds' rows theirs
            if not self._np_arrays or ended.any():
                if self._np_arrays:
                    final_obs = np.full(self.num_envs, None, dtype=object)
                    for w in np.flatnonzero(ended):
                        final_obs[w] = self._obs[w].copy()
                else:
                    final_obs = self._copy(self._obs)
                final_info = self._info()
                for k in _INFO_KEYS:
                    final_info["_" + k] = self._copy(ended)
                info_extra = {"final_obs": final_obs, "_final_obs": self._copy(ended),
                              "final_info": final_info, "_final_info": self._copy(ended)}
            self._reset_worlds(ended)
        self._autoreset = self._copy(ended)
        info = self._info()
        info.update(info_extra)
        return self._copy(self._obs), reward, terminated, truncated, info

    def close_extras(self, **kwargs):
        if not self.batch.closed:
            self.batch.close()

    def __repr__(self):
        return (f"FlyWalkVectorEnv(num_envs={self.num_envs}, {self.backend} "
                f"{self.batch.precision if not self.batch.closed else ''}, "
                f"{self.control_substeps} substeps, {self.autoreset_mode.name})")


class FlyWalkEnv(gym.Env):
    """One fly imitating the walking clip: a FlyWalkVectorEnv of one world with autoreset
    DISABLED (call reset() after an episode ends). Same arguments (less num_envs and
    autoreset_mode); same observation, action and reward."""

    metadata = {"render_modes": []}

    def __init__(self, model=None, clip=None, **kwargs):
        for k in ("num_envs", "autoreset_mode"):
            if k in kwargs:
                raise ValueError(f"flysim.gym: FlyWalkEnv takes no {k}")
        seed = kwargs.pop("seed", None)
        self.render_mode = kwargs.get("render_mode")
        self._vec = FlyWalkVectorEnv(1, model, clip, autoreset_mode=AutoresetMode.DISABLED,
                                     **kwargs)
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.obs_slices = self._vec.obs_slices
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)

    @property
    def vector_env(self):
        return self._vec

    @staticmethod
    def _one(info):
        return {k: v[0].item() for k, v in info.items() if not k.startswith("_")}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._vec._np_random = self.np_random  # one generator: the env's
        obs, info = self._vec.reset()
        return obs[0], self._one(info)

    def step(self, action):
        a = np.asarray(action, dtype=np.float32)
        obs, reward, terminated, truncated, info = self._vec.step(a[None])
        return (obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]),
                self._one(info))

    def close(self):
        self._vec.close()
        super().close()


# gymnasium.make("flysim/FlyWalk-v0", model=..., clip=...) and
# gymnasium.make_vec("flysim/FlyWalk-v0", num_envs, vectorization_mode="vector_entry_point",
# model=..., clip=...): the vector entry point is FlyWalkVectorEnv, one batch.
ENV_ID = "flysim/FlyWalk-v0"
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="flysim.gym:FlyWalkEnv",
                 vector_entry_point="flysim.gym:FlyWalkVectorEnv",
                 max_episode_steps=None, disable_env_checker=False)
