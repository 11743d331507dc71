"""flysim for FlyGym 2.1: GPUSimulation, a drop-in for flygym.warp.GPUSimulation.

    from flysim.flygym import GPUSimulation        # instead of: from flygym.warp import ...

    sim = GPUSimulation(world, n_worlds=1024, backend="cuda")   # or "host", "cpu"
    sim.set_leg_adhesion_states(fly.name, np.ones((1024, 6)))
    sim.warmup()
    for t in range(n_steps):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, targets[:, t])  # (1024, 42)
        sim.step()
    angles = sim.get_joint_angles(fly.name)        # (1024, n_jointdofs), numpy

FlyGym's own CPU `flygym.Simulation` compiles the world and maps the fly's joints, bodies,
actuators and sites to the model's ids; a `flysim.Batch` of that model steps the worlds
("cpu": MuJoCo's mj_step on threads, float64, FlyGym's CPU Simulation to the bit; "host":
flysim's engine on CPU threads; "cuda": the same engine on a GPU). Needs FlyGym 2.1
(pip install flygym==2.1.1) but not warp or mujoco_warp.
"""
import warnings
from time import perf_counter_ns

import numpy as np

try:
    from flygym.compose.fly import ActuatorType
    from flygym.recording import RecordedTrajectory
    from flygym.rendering import FrameClock, Renderer as _Renderer, update_render_geometry
    from flygym.utils.video import write_video_from_frames
    from flygym.simulation import Simulation as _Simulation
    from flygym.utils.profiling import print_perf_report_parallel
except ImportError as e:  # pragma: no cover
    raise ImportError("flysim.flygym needs FlyGym 2.1 (pip install flygym==2.1.1)") from e

import mujoco as _mujoco

from . import Batch

__all__ = ["GPUSimulation", "HostArray", "TrajectoryRecorder", "WorldsRenderer"]


class HostArray(np.ndarray):
    """A numpy array (host memory) that a FlyGym script may treat as a Warp array: its
    numpy() returns the array itself, as wp.array.numpy() returns a host copy."""

    def numpy(self):
        return self


def _unsupported(name, why):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"flysim.flygym.GPUSimulation.{name}: not implemented ({why}); "
            f"flygym.warp.GPUSimulation.{name} is FlyGym's")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Not implemented: raises NotImplementedError ({why})."
    return method


class TrajectoryRecorder:
    """FlyGym 2.1's `flygym.warp.recording.WarpTrajectoryRecorder` over a GPUSimulation's
    worlds: the state of the chosen worlds (qpos, and mocap poses if the model has mocap
    bodies) at the video frame rate, as FlyGym's `flygym.recording.RecordedTrajectory`
    objects, which `flygym.recording.render_trajectories` renders (MuJoCo's renderer on the
    CPU) or saves. Frames fall at FlyGym's times (its FrameClock, world 0's time); qpos in
    float64. Created by GPUSimulation.set_trajectory_recorder; its record_as_needed() reads
    the simulation's batch (FlyGym's takes the Warp data)."""

    def __init__(self, sim, worlds=None, *, playback_speed=0.2, output_fps=25):
        self.world_ids = _world_ids(sim.n_worlds, worlds, "TrajectoryRecorder")
        self._sim = sim
        self._clock = FrameClock(playback_speed, output_fps, sim.mj_model.opt.timestep)
        self._has_mocap = sim.mj_model.nmocap > 0
        self.reset()

    def record_as_needed(self):
        """Record the chosen worlds' state if a frame is due. Returns True if it did."""
        t = self._sim.time
        if not self._clock.tick(t):
            return False
        qpos, mpos, mquat = self._sim._poses(self.world_ids)
        self._time.append(t)
        self._qpos.append(qpos)
        if self._has_mocap:
            self._mocap_pos.append(mpos)
            self._mocap_quat.append(mquat)
        return True

    def reset(self):
        """Discard the recorded frames and restart the frame clock."""
        self._clock.reset()
        self._time, self._qpos, self._mocap_pos, self._mocap_quat = [], [], [], []

    @property
    def trajectories(self):
        """The trajectories recorded so far, one a chosen world (RecordedTrajectory)."""
        if not self._qpos:
            raise RuntimeError("No frames have been recorded yet.")
        time = np.array(self._time)
        qpos = np.stack(self._qpos)  # (frames, worlds, nq)
        mpos = np.stack(self._mocap_pos) if self._has_mocap else None
        mquat = np.stack(self._mocap_quat) if self._has_mocap else None
        return [RecordedTrajectory(time=time, qpos=qpos[:, i],
                                   output_fps=self._clock.output_fps,
                                   playback_speed=self._clock.playback_speed, world_id=w,
                                   mocap_pos=mpos[:, i] if mpos is not None else None,
                                   mocap_quat=mquat[:, i] if mquat is not None else None)
                for i, w in enumerate(self.world_ids)]


class WorldsRenderer(_Renderer):
    """FlyGym 2.1's `flygym.warp.rendering.WarpCPURenderer` over a GPUSimulation's worlds:
    at FlyGym's frame times (world 0's time), each chosen world's state (qpos, mocap poses)
    into a private MjData, its render geometry recomputed (FlyGym's update_render_geometry),
    rendered by MuJoCo's renderer on the CPU for every camera. Frames are kept as
    (worlds, cameras, height, width, 3) uint8 a frame; save_video and show_in_notebook take
    a world or a list of worlds (a grid, each labelled) as FlyGym's. RGB only. Created by
    GPUSimulation.set_renderer; its render_as_needed() reads the simulation's batch."""

    def __init__(self, sim, cameras, worlds=None, *, camera_res=(240, 320), playback_speed=0.2,
                 output_fps=25, buffer_frames=True, scene_option=None, **kwargs):
        ids = _world_ids(sim.n_worlds, worlds, "WorldsRenderer")
        if kwargs.get("render_depth") or kwargs.get("render_segmentation") or \
                not kwargs.get("render_rgb", True):
            raise ValueError("flysim.flygym.WorldsRenderer: RGB frames only (as FlyGym's "
                             "WarpCPURenderer); fix: no render_depth, render_segmentation or "
                             "render_rgb=False")
        super().__init__(sim.mj_model, cameras, camera_res=camera_res,
                         playback_speed=playback_speed, output_fps=output_fps,
                         buffer_frames=buffer_frames, scene_option=scene_option, **kwargs)
        self._sim = sim
        self.world_ids = ids
        self.enabled_cam_names = list(self._cameras_names2id)
        self._frames = [] if buffer_frames else None

    def render_as_needed(self):
        """Render every chosen world from every camera if a frame is due. Returns True if
        it did."""
        if not self._clock.tick(self._sim.time):
            return False
        ids = self.world_ids
        qpos, mpos, mquat = self._sim._poses(ids)
        out = np.zeros((len(ids), len(self.enabled_cam_names), *self.camera_res, 3), np.uint8)
        d = self._render_data
        for i in range(len(ids)):
            d.qpos[:] = qpos[i]
            if mpos is not None:
                d.mocap_pos[:] = mpos[i]
                d.mocap_quat[:] = mquat[i]
            update_render_geometry(self.mj_model, d)
            for c, cam in enumerate(self.enabled_cam_names):
                self.mj_renderer.update_scene(d, self._cameras_names2id[cam], self.scene_option)
                out[i, c] = self.mj_renderer.render()
        if self.buffer_frames:
            self._frames.append(out)
        return True

    def reset(self):
        """Clear the frames and restart the frame clock."""
        self._clock.reset()
        if self.buffer_frames:
            self._frames = []

    def world_frames(self, world_id, camera=None):
        """The frames of world world_id from a camera (None: the first), a list of
        (height, width, 3) uint8 arrays."""
        if not self.buffer_frames:
            raise RuntimeError("flysim.flygym.WorldsRenderer: buffer_frames=False keeps no "
                               "frames; fix: set_renderer(..., buffer_frames=True)")
        if world_id not in self.world_ids:
            raise ValueError(f"world_id {world_id} was not among the rendered worlds: "
                             f"{self.world_ids}")
        cam = self._normalize_camera_spec(camera)[0]
        if not self._frames:
            raise RuntimeError("No frames have been recorded yet.")
        w, c = self.world_ids.index(world_id), self.enabled_cam_names.index(cam)
        return [f[w, c] for f in self._frames]

    def _video(self, world_id, camera, scale):
        """world_id's frames, or a labelled grid of a list of worlds' (FlyGym's layout)."""
        from PIL import Image, ImageDraw

        def resized(frame, res):
            return np.array(Image.fromarray(frame).resize(res[::-1], Image.Resampling.LANCZOS))

        if not isinstance(world_id, (list, tuple)):
            frames = self.world_frames(world_id, camera)
            if scale is None:
                return frames
            return [resized(f, tuple(int(x * scale) for x in self.camera_res)) for f in frames]
        n = len(world_id)
        rows = int(np.ceil(np.sqrt(n)))
        cols = int(np.ceil(n / rows))
        res = tuple(int(x * (1 / cols if scale is None else scale)) for x in self.camera_res)
        grid = np.zeros((len(self._frames), res[0] * rows, res[1] * cols, 3), np.uint8)
        for i, w in enumerate(world_id):
            r, c = divmod(i, cols)
            for j, f in enumerate(self.world_frames(w, camera)):
                img = Image.fromarray(resized(f, res))
                ImageDraw.Draw(img).text((0.03 * res[1], 0.02 * res[0]), f"World {w}",
                                         fill=(255, 255, 255))
                grid[j, r * res[0]:(r + 1) * res[0], c * res[1]:(c + 1) * res[1]] = np.array(img)
        return list(grid)

    def save_video(self, world_id, output_path, scale=None, **kwargs):
        """Write world_id's frames (a list of worlds: a grid) as video, one file a camera
        (output_path: a file for one camera, a folder for several, or {camera: path})."""
        for cam, path in self._resolve_output_paths(output_path).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_video_from_frames(path, self._video(world_id, cam, scale),
                                    fps=self.output_fps, codec="libx264", **kwargs)

    def show_in_notebook(self, world_id, camera=None, scale=None, **kwargs):
        """Show world_id's frames (a list of worlds: a grid) in a Jupyter notebook."""
        import mediapy

        for cam in self._normalize_camera_spec(camera):
            mediapy.show_video(self._video(world_id, cam, scale), fps=self.output_fps,
                               title=f"world {world_id}, camera {cam}", **kwargs)


def _world_ids(n, worlds, who):
    """The world indices asked for (None: all n), checked."""
    ids = list(range(n)) if worlds is None else [int(w) for w in worlds]
    if not ids:
        raise ValueError(f"flysim.flygym.{who}: worlds is empty; fix: the indices of the "
                         f"worlds (0 to {n - 1}), or None: all")
    bad = [w for w in ids if not 0 <= w < n]
    if bad:
        raise ValueError(f"flysim.flygym.{who}: worlds {bad} out of range; fix: indices 0 "
                         f"to {n - 1}")
    return ids


class GPUSimulation(_Simulation):
    """FlyGym 2.1's `flygym.warp.GPUSimulation` over a flysim.Batch: n_worlds copies of a
    FlyGym world stepped together, with the same methods and (n_worlds, ...) shapes.

    Args:
        world: a FlyGym world with at least one fly (as for flygym.Simulation).
        n_worlds: the number of worlds.
        max_contacts: contacts a world holds (host, cuda; flysim sizes the constraint
            rows from it). None: every contact pair's bound, which no world can exceed.
        backend: "cuda" (flysim's engine on the GPU), "host" (the same engine on CPU
            threads) or "cpu" (MuJoCo's own mj_step on threads: FlyGym's CPU Simulation
            to the bit, world by world).
        precision: "f32" or "f64" for host and cuda; None: float32 there (as MuJoCo
            Warp), float64 on cpu (its only precision).
        threads: cpu, host: threads, the caller's included (None: one per core).
        timestep: as FlyGym's: the physics timestep (None: the model's).
        solver_tolerance: option/tolerance. None (the default): the model's (1e-8 for
            NeuroMechFly); FlyGym's GPUSimulation defaults to 1e-5 instead.
        max_constraints: accepted for FlyGym's signature and not used (a warning):
            flysim's constraint rows follow max_contacts.
        device: cuda: the GPU's ordinal.

    Unlike FlyGym's GPUSimulation, this keeps the model's noslip solver
    (option/noslip_iterations, which FlyGym strips because MuJoCo Warp lacks it, editing
    the world) and its solver tolerance (FlyGym loosens it to 1e-5): the worlds step the
    model that FlyGym's CPU Simulation steps. flysim's per-world health is never
    silent: `problems` (n_worlds bits: flysim.PROBLEM_WARNING, PROBLEM_CONTACTS,
    PROBLEM_SOLVER, PROBLEM_FAILED since the world's reset) and `health()` (warning
    counters, solver limits, peak contacts, ...).

    Getters return numpy arrays (n_worlds, ...) in the batch's precision (float64 on cpu
    and with "f64"; FlyGym's return float32 Warp arrays): on cpu and host gathered from
    the batch's memory; on cuda the batch's arrays are read to the host (flysim.Batch.read,
    after the queued steps) and gathered in numpy. They are HostArray, whose numpy()
    returns the array itself, so that FlyGym code calling .numpy() on results keeps
    working; a `dst` numpy array of the result's shape, if given, is filled and returned.
    Inputs are numpy arrays or anything np.asarray takes, of shape (n_worlds, ...)
    exactly (a ValueError names the shape otherwise). On cuda, inputs are gathered on
    the host and written to the GPU before the next step (one read and one write of ctrl a
    step), so a controller computed on the GPU pays a round trip: for GPU-resident
    control write `sim.batch.ctrl` (a flysim.DeviceArray, DLPack) directly.

    Body positions and rotations are FlyGym's: a body segment that the compiler fused
    into an ancestor is that ancestor's frame offset by the segment's relative pose
    (position xpos + xmat @ relpos, rotation xquat * relquat, Hamilton product in
    (w, x, y, z)), which the Warp kernels of flygym/warp/utils.py compute; here numpy
    evaluates it with the einsum of FlyGym's CPU Simulation, so the cpu backend gives
    the CPU Simulation's values to the bit.

    As FlyGym's, reset() and set_state() change the state but not what is derived from it
    (xpos, site positions, actuator forces, ...) until the next step or forward() (on cpu
    and host; the cuda backend's forward raises NotImplementedError).
    get_ground_contact_info reads the fly's contact sensors on cpu and host (the cuda
    backend computes no sensors yet). Trajectories are recorded as FlyGym's
    (set_trajectory_recorder, record_as_needed: FlyGym's RecordedTrajectory, rendered by
    flygym.recording.render_trajectories), frames are rendered during the run as FlyGym's
    WarpCPURenderer does (set_renderer, render_as_needed: MuJoCo's renderer on the CPU), and
    step_with_profile feeds FlyGym's print_performance_report. GPU batch rendering,
    vision and per-segment contact forces raise NotImplementedError naming FlyGym's method. Changes to mj_model after
    construction do not reach the worlds (the batch holds its own copy); per-world
    model parameters go through `sim.batch.set_param`.

    Attributes:
        n_worlds: the number of worlds.
        batch: the flysim.Batch (its views, set_param, health, info).
        mj_model, mj_data: the CPU Simulation's model and data (mj_data is not the
            worlds' state; the getters read the batch).
    """

    # the mjData arrays the getters read (sensordata apart: never an intermediate)
    _READS = ("qpos", "qvel", "time", "xpos", "xquat", "xmat", "site_xpos", "actuator_force")

    def __init__(self, world, n_worlds, *, max_contacts=None, backend="cuda", precision=None,
                 threads=None, timestep=None, solver_tolerance=None, max_constraints=None,
                 device=0):
        if not isinstance(n_worlds, (int, np.integer)) or isinstance(n_worlds, bool) \
                or n_worlds < 1:
            raise ValueError(f"flysim.flygym.GPUSimulation: n_worlds={n_worlds!r}; "
                             "fix: a number of worlds, 1 or more")
        if max_constraints is not None:
            warnings.warn("flysim.flygym.GPUSimulation: max_constraints is not used: "
                          "flysim's constraint rows follow max_contacts", stacklevel=2)
        self._batch = None
        super().__init__(world, timestep=timestep)
        if solver_tolerance is not None:
            self.mj_model.opt.tolerance = solver_tolerance
        self.n_worlds = int(n_worlds)
        self.max_contacts = max_contacts
        self._batch = Batch(self.mj_model, worlds=self.n_worlds, backend=backend,
                            precision=precision, max_contacts=max_contacts, threads=threads,
                            device=device)
        self.backend = backend
        self.precision = self._batch.precision
        self._host = isinstance(self._batch.view("qpos"), np.ndarray)
        self._dtype = np.dtype(self._batch.view("qpos").dtype)
        self._pending_ctrl = []  # cuda: (ids, values) written before the next step
        self._constants = {}
        # the arrays the getters read, asked for before any step: the step then keeps them
        # in the worlds' memory (one asked for later reads NaN until the next step)
        for name in self._READS:
            self._batch.view(name)
        self._map_base_veladrs()
        self._batch.reset(keyframe=self._neutral_keyframe_id)

    # -- the batch --------------------------------------------------------------------------
    @property
    def batch(self):
        """The flysim.Batch stepping the worlds (pending inputs written first)."""
        self._flush()
        return self._batch

    def _flush(self):
        """cuda: write the inputs set since the last step into the batch's ctrl."""
        if self._pending_ctrl:
            ctrl = self._batch.read("ctrl")
            for ids, values in self._pending_ctrl:
                ctrl[:, ids] = values
            self._pending_ctrl = []
            self._batch.write("ctrl", ctrl)

    def _array(self, name):
        """View `name` of every world on the host: the batch's memory (cpu, host) or a
        copy read after the queued steps (cuda)."""
        return self._batch.view(name) if self._host else self._batch.read(name)

    def _constant(self, key, values):
        """A constant of the getters, in the batch's precision (cached)."""
        c = self._constants.get(key)
        if c is None:
            c = self._constants[key] = np.ascontiguousarray(values, dtype=self._dtype)
        return c

    @staticmethod
    def _lookup(table, fly_name, what):
        try:
            return table[fly_name]
        except KeyError:
            raise KeyError(f"flysim.flygym.GPUSimulation: no fly {fly_name!r} with {what}; "
                           f"the world's: {sorted(table)}") from None

    def _actuator_ids(self, fly_name, actuator_type):
        if isinstance(actuator_type, str):
            actuator_type = ActuatorType(actuator_type)
        by_fly = self._intern_actuatorids_by_type_by_fly.get(actuator_type)
        if by_fly is None:
            raise KeyError(f"flysim.flygym.GPUSimulation: no {actuator_type} actuators; the "
                           f"world's: {[t.name for t in self._intern_actuatorids_by_type_by_fly]}")
        return self._lookup(by_fly, fly_name, f"{actuator_type.name} actuators")

    def _out(self, result, dst):
        if dst is None:
            return result.view(HostArray)
        if not isinstance(dst, np.ndarray):
            raise ValueError(f"flysim.flygym.GPUSimulation: dst is a {type(dst).__name__}; "
                             f"fix: a numpy array of shape {result.shape}, or None")
        if dst.shape != result.shape:
            raise ValueError(f"flysim.flygym.GPUSimulation: dst of shape {dst.shape}; fix: "
                             f"shape {result.shape}")
        np.copyto(dst, result, casting="same_kind")
        return dst

    def _inputs(self, values, ncol, what):
        """values as an (n_worlds, ncol) numeric array, or a ValueError naming the shape."""
        try:
            a = np.asarray(values)
        except Exception as e:
            raise ValueError(f"flysim.flygym.GPUSimulation: {what}: not an array "
                             f"({type(values).__name__}); fix: shape ({self.n_worlds}, {ncol})"
                             ) from e
        if a.dtype.kind not in "biuf":
            raise ValueError(f"flysim.flygym.GPUSimulation: {what}: dtype {a.dtype}; fix: "
                             "numbers")
        if a.shape != (self.n_worlds, ncol):
            raise ValueError(f"flysim.flygym.GPUSimulation: {what}: shape {a.shape}; fix: "
                             f"({self.n_worlds}, {ncol}) (n_worlds, {ncol}); the same values "
                             f"in every world: np.broadcast_to(x, ({self.n_worlds}, {ncol}))")
        return a

    def _set_ctrl(self, ids, values):
        if self._host:
            self._batch.view("ctrl")[:, ids] = values
        else:
            self._pending_ctrl.append((ids, np.array(values, dtype=self._dtype)))

    # -- stepping -------------------------------------------------------------------------
    def reset(self, worlds_mask=None):
        """Reset every world (or those of worlds_mask, (n_worlds,) bools: flysim's
        extension) to the neutral keyframe; the other worlds stay as they are. As
        FlyGym's, what is derived from the state (body positions, ...) is the old
        state's until the next step."""
        super().reset()
        self._flush()  # inputs set before a masked reset stay in the other worlds
        if worlds_mask is not None:
            m = np.asarray(worlds_mask)
            if m.shape != (self.n_worlds,):
                raise ValueError(f"flysim.flygym.GPUSimulation.reset: worlds_mask of shape "
                                 f"{m.shape}; fix: ({self.n_worlds},)")
            worlds_mask = m.astype(bool)
        self._batch.reset(worlds_mask, keyframe=self._neutral_keyframe_id)

    def step(self):
        """Advance every world by one timestep (cuda: queued; getters wait for it)."""
        self._flush()
        self._batch.step(1)

    def step_with_profile(self):
        """step(), its wall time added to the performance report's physics time (cuda:
        until the step has run: the call waits for it, where step() only queues it)."""
        start = perf_counter_ns()
        self.step()
        if not self._host:
            self._batch.sync()
        self._total_physics_time_ns += perf_counter_ns() - start
        self._curr_step += 1

    def print_performance_report(self, show_in_notebook="auto"):
        """FlyGym's parallel performance report (flygym.utils.profiling's, as FlyGym's
        GPUSimulation prints it) over the steps made with step_with_profile: time a step,
        steps a second, and both times n_worlds; rendering's time from
        render_as_needed_with_profile (FlyGym's)."""
        print_perf_report_parallel(
            n_steps=self._curr_step, n_frames_rendered=self._frames_rendered,
            total_physics_time_ns=self._total_physics_time_ns,
            total_render_time_ns=self._total_render_time_ns, timestep=self.timestep,
            n_worlds=self.n_worlds,
            n_worlds_rendered=len(self.renderer.world_ids) if self.renderer else 0,
            show_in_notebook=show_in_notebook)

    # -- rendering and trajectories ---------------------------------------------------------
    def set_renderer(self, cameras, *, camera_res=(240, 320), playback_speed=0.2,
                     output_fps=25, buffer_frames=True, scene_option=None, worlds=None,
                     use_gpu_batch_rendering=False, **kwargs):
        """Attach a WorldsRenderer of the worlds `worlds` (None: all): MuJoCo's renderer on
        the CPU, as FlyGym's WarpCPURenderer (FlyGym's signature). MuJoCo Warp's GPU batch
        rendering is not here: use_gpu_batch_rendering=True raises."""
        if use_gpu_batch_rendering:
            raise NotImplementedError(
                "flysim.flygym.GPUSimulation.set_renderer: use_gpu_batch_rendering is MuJoCo "
                "Warp's batch renderer, not here; fix: use_gpu_batch_rendering=False "
                "(MuJoCo's renderer on the CPU, FlyGym's WarpCPURenderer)")
        if self.renderer is not None:
            self.renderer.close()
        self.renderer = WorldsRenderer(self, cameras, worlds, camera_res=camera_res,
                                       playback_speed=playback_speed, output_fps=output_fps,
                                       buffer_frames=buffer_frames, scene_option=scene_option,
                                       **kwargs)
        return self.renderer

    def render_as_needed(self):
        """Render the chosen worlds if a frame is due (set_renderer first). Returns True if
        it did."""
        if self.renderer is None:
            raise RuntimeError("flysim.flygym.GPUSimulation.render_as_needed: no renderer; "
                               "fix: sim.set_renderer(camera) first")
        return self.renderer.render_as_needed()

    def set_trajectory_recorder(self, *, playback_speed=0.2, output_fps=25, worlds=None):
        """Attach a TrajectoryRecorder of the worlds `worlds` (None: all) at FlyGym's frame
        rate (FlyGym's signature); render its trajectories with
        flygym.recording.render_trajectories(sim.mj_model, recorder.trajectories, camera)."""
        self.recorder = TrajectoryRecorder(self, worlds, playback_speed=playback_speed,
                                           output_fps=output_fps)
        return self.recorder

    def record_as_needed(self):
        """Record the chosen worlds' state if a frame is due (set_trajectory_recorder
        first). Returns True if a frame was recorded."""
        if self.recorder is None:
            raise RuntimeError("flysim.flygym.GPUSimulation.record_as_needed: no recorder; "
                               "fix: sim.set_trajectory_recorder() first")
        return self.recorder.record_as_needed()

    def forward(self):
        """What mj_forward computes for every world's state, without stepping (FlyGym's
        forward: the getters then read the state set by reset or set_state). cpu and host;
        cuda: not yet (NotImplementedError)."""
        self._flush()
        if self.backend == "cuda":
            raise NotImplementedError(
                "flysim.flygym.GPUSimulation.forward: the cuda backend does not compute "
                "mj_forward yet; fix: backend=\"host\" or \"cpu\", or read the getters after "
                "the next step")
        self._batch.forward()

    def warmup(self, duration_s=0.05):
        """int(duration_s / timestep) steps with the inputs as they are (FlyGym's warmup)."""
        self._flush()
        self._batch.step(int(duration_s / self.mj_model.opt.timestep))

    def set_state(self, qpos=None, qvel=None, worlds_mask=None):
        """Write qpos (n_worlds, nq) and/or qvel (n_worlds, nv) of the worlds of
        worlds_mask ((n_worlds,) bools; None: every world); the others keep theirs. As
        FlyGym's, derived quantities follow at the next step()."""
        if qpos is None and qvel is None:
            return
        if worlds_mask is None:
            mask = np.ones(self.n_worlds, dtype=bool)
        else:
            mask = np.asarray(worlds_mask)
            if mask.shape != (self.n_worlds,):
                raise ValueError(f"flysim.flygym.GPUSimulation.set_state: worlds_mask of "
                                 f"shape {mask.shape}; fix: ({self.n_worlds},)")
            mask = mask.astype(bool)
        for name, src, n in (("qpos", qpos, self.mj_model.nq), ("qvel", qvel, self.mj_model.nv)):
            if src is None:
                continue
            a = self._inputs(src, n, f"set_state: {name}")
            if self._host:
                self._batch.view(name)[mask] = a[mask]
            else:
                cur = self._batch.read(name)
                cur[mask] = a[mask]
                self._batch.write(name, cur)

    # -- inputs ---------------------------------------------------------------------------
    def set_actuator_inputs(self, fly_name, actuator_type, inputs):
        """Control inputs (n_worlds, n_actuators), ordered as
        fly.get_actuated_jointdofs_order(actuator_type), from the next step on."""
        ids = self._actuator_ids(fly_name, actuator_type)
        what = f"set_actuator_inputs({fly_name!r}, {getattr(actuator_type, 'name', actuator_type)})"
        self._set_ctrl(ids, self._inputs(inputs, len(ids), what))

    def set_leg_adhesion_states(self, fly_name, leg_to_adhesion_state):
        """Adhesion controls (n_worlds, 6) in [0, 1], ordered as fly.get_legs_order()."""
        ids = self._lookup(self._intern_adhesionactuatorids_by_fly, fly_name,
                           "leg adhesion actuators")
        self._set_ctrl(ids, self._inputs(leg_to_adhesion_state, len(ids),
                                         f"set_leg_adhesion_states({fly_name!r})"))

    def set_tendon_actuator_inputs(self, fly_name, inputs):
        """Tendon actuator inputs (n_worlds, n_tendon_actuators), ordered as
        fly.get_actuated_jointdofs_order(ActuatorType.TENDON)."""
        ids = self._intern_tendonactuatorids_by_fly.get(fly_name, np.empty(0, dtype=np.int32))
        self._set_ctrl(ids, self._inputs(inputs, len(ids),
                                         f"set_tendon_actuator_inputs({fly_name!r})"))

    # -- outputs --------------------------------------------------------------------------
    def get_joint_angles(self, fly_name, dst=None):
        """(n_worlds, n_jointdofs) radians, ordered as fly.get_jointdofs_order()."""
        ids = self._lookup(self._intern_qposadrs_by_fly, fly_name, "joints")
        return self._out(self._array("qpos")[:, ids], dst)

    def get_joint_velocities(self, fly_name, dst=None):
        """(n_worlds, n_jointdofs) rad/s, ordered as fly.get_jointdofs_order()."""
        ids = self._lookup(self._intern_qveladrs_by_fly, fly_name, "joints")
        return self._out(self._array("qvel")[:, ids], dst)

    def get_base_linear_velocity(self, fly_name, dst=None):
        """(n_worlds, 3) mm/s in the world frame: the fly's free joint's (KeyError when
        the fly has none, e.g. tethered)."""
        ids = self._require_base_veladrs(fly_name, self._base_linveladrs_by_fly)
        return self._out(self._array("qvel")[:, ids], dst)

    def get_base_angular_velocity(self, fly_name, dst=None):
        """(n_worlds, 3) rad/s in the root body's frame: the fly's free joint's."""
        ids = self._require_base_veladrs(fly_name, self._base_angveladrs_by_fly)
        return self._out(self._array("qvel")[:, ids], dst)

    @staticmethod
    def _require_base_veladrs(fly_name, adrs_by_fly):
        if fly_name not in adrs_by_fly:
            raise KeyError(f"Fly '{fly_name}' has no free (base) joint, so its base velocity "
                           "is undefined (is it tethered?).")
        return adrs_by_fly[fly_name]

    def _map_base_veladrs(self):
        self._base_linveladrs_by_fly, self._base_angveladrs_by_fly = {}, {}
        for fly_name in self._intern_qveladrs_by_fly:
            jid = _mujoco.mj_name2id(self.mj_model, _mujoco.mjtObj.mjOBJ_JOINT, fly_name)
            if jid < 0 or self.mj_model.jnt_type[jid] != _mujoco.mjtJoint.mjJNT_FREE:
                continue
            v = int(self.mj_model.jnt_dofadr[jid])
            self._base_linveladrs_by_fly[fly_name] = np.array([v, v + 1, v + 2], dtype=np.int32)
            self._base_angveladrs_by_fly[fly_name] = np.array([v + 3, v + 4, v + 5],
                                                              dtype=np.int32)

    def get_body_positions(self, fly_name, dst=None):
        """(n_worlds, n_bodies, 3) mm, ordered as fly.get_bodysegs_order(): xpos, offset
        by xmat @ relpos for segments fused into an ancestor."""
        ids = self._lookup(self._internal_bodyids_by_fly, fly_name, "bodies")
        xpos = self._array("xpos")[:, ids, :]
        if fly_name in self._flies_with_fused_bodies:
            xmat = self._array("xmat")[:, ids, :].reshape(self.n_worlds, len(ids), 3, 3)
            relpos = self._constant(("relpos", fly_name), self._body_relpos_by_fly[fly_name])
            xpos = xpos + np.einsum("wnij,nj->wni", xmat, relpos)
        return self._out(xpos, dst)

    def get_body_rotations(self, fly_name, dst=None):
        """(n_worlds, n_bodies, 4) quaternions (w, x, y, z), ordered as
        fly.get_bodysegs_order(): xquat * relquat for segments fused into an ancestor."""
        ids = self._lookup(self._internal_bodyids_by_fly, fly_name, "bodies")
        xquat = self._array("xquat")[:, ids, :]
        if fly_name in self._flies_with_fused_bodies:
            # xquat * relquat == M @ xquat, M the right-multiplication matrix of relquat
            mat = self._constant(("relquat", fly_name),
                                 self._body_relquat_matrix_by_fly[fly_name])
            xquat = np.einsum("nij,wnj->wni", mat, xquat)
        return self._out(xquat, dst)

    def get_site_positions(self, fly_name, dst=None):
        """(n_worlds, n_sites, 3) mm, ordered as fly.get_sites_order()."""
        ids = self._lookup(self._internal_siteids_by_fly, fly_name, "sites")
        return self._out(self._array("site_xpos")[:, ids, :], dst)

    def get_actuator_forces(self, fly_name, actuator_type, dst=None):
        """(n_worlds, n_actuators), ordered as fly.get_actuated_jointdofs_order(type)."""
        ids = self._actuator_ids(fly_name, actuator_type)
        return self._out(self._array("actuator_force")[:, ids], dst)

    def get_ground_contact_info(self, fly_name):
        """FlyGym's six-tuple from the fly's six ground-contact sensors, each with the
        worlds first: contact_found (n_worlds, 6); forces, torques (contact frame),
        positions, normals, tangents (global frame) (n_worlds, 6, 3); legs ordered as
        fly.get_legs_order(). MuJoCo's sensordata on cpu (FlyGym's Simulation to the bit),
        flysim's sensor stage on host; the cuda backend computes no sensors yet
        (NotImplementedError: backend="host" computes them on the CPU's threads)."""
        ids = self._lookup(self._intern_groundcontactsensorids_by_fly, fly_name,
                           "ground contact sensors")
        if not self._host and self.backend == "cuda":
            raise NotImplementedError(
                "flysim.flygym.GPUSimulation.get_ground_contact_info: the cuda backend "
                "computes no sensors yet; fix: backend=\"host\" (flysim's engine on the CPU's "
                "threads) or \"cpu\" (MuJoCo's)")
        data = self._array("sensordata")[:, ids].reshape(self.n_worlds, 6, 16)
        parts = (data[:, :, 0], data[:, :, 1:4], data[:, :, 4:7], data[:, :, 7:10],
                 data[:, :, 10:13], data[:, :, 13:16])
        return tuple(np.ascontiguousarray(p).view(HostArray) for p in parts)

    @property
    def time(self):
        """Simulated time in seconds (world 0's)."""
        return float(self._array("time")[0])

    def _poses(self, ids):
        """The worlds ids' qpos (k, nq) and mocap poses (k, nmocap, 3 and 4; None without
        mocap bodies), float64: what a recorded or rendered frame holds."""
        nm, k = self.mj_model.nmocap, len(ids)
        qpos = np.array(self._array("qpos")[ids], dtype=np.float64)
        if not nm:
            return qpos, None, None
        return (qpos, np.array(self._array("mocap_pos")[ids], dtype=np.float64).reshape(k, nm, 3),
                np.array(self._array("mocap_quat")[ids], dtype=np.float64).reshape(k, nm, 4))

    @property
    def timestep(self):
        """The physics timestep in seconds."""
        return self.mj_model.opt.timestep

    # -- health ---------------------------------------------------------------------------
    @property
    def problems(self):
        """(n_worlds,) flysim.PROBLEM_* bits of each world since its reset (0: healthy)."""
        return self._array("problems").copy().view(HostArray)

    def health(self):
        """Every world's health (flysim.Batch.health): problems, warnings, solver limits,
        peak contacts, ..."""
        return self._batch.health()

    def close(self):
        """Close the batch and FlyGym's renderers (idempotent)."""
        super().close()
        if self._batch is not None and not self._batch.closed:
            self._batch.close()

    # -- FlyGym's, not here ---------------------------------------------------------------
    @property
    def mjw_model(self):
        raise NotImplementedError("flysim.flygym.GPUSimulation.mjw_model: no MuJoCo Warp "
                                  "model here; the worlds are sim.batch (a flysim.Batch)")

    @property
    def mjw_data(self):
        raise NotImplementedError("flysim.flygym.GPUSimulation.mjw_data: no MuJoCo Warp data "
                                  "here; the worlds' arrays are sim.batch's views "
                                  "(sim.batch.qpos, sim.batch.view('xpos'), ...)")

    get_bodysegment_contact_forces = _unsupported("get_bodysegment_contact_forces",
                                                  "no per-contact data")
    get_raw_vision = _unsupported("get_raw_vision", "no vision")
    get_ommatidia_readouts = _unsupported("get_ommatidia_readouts", "no vision")
    _render_eye_frames = _unsupported("_render_eye_frames", "no vision")

    def __repr__(self):
        return (f"flysim.flygym.GPUSimulation({self.n_worlds} worlds, {self.backend} "
                f"{self.precision})")
