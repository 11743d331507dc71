"""flysim.flygym.GPUSimulation against FlyGym 2.1's CPU Simulation.

The world is FlyGym's own, built as scripts/export_assets.py builds it (the mesh variant);
the walking clip comes from assets/walking_clip.h5 (FLYSIM_ASSETS, default
<source>/assets), its columns mapped to the fly's actuated DoFs by name as FlyGym's replay
orders them. Every world gets the clip's targets, adhesion on, after warmup(), as FlyGym's
replay does. Skipped without flygym, h5py or the clip.
"""
import os

import numpy as np
import pytest

flygym = pytest.importorskip("flygym")
h5py = pytest.importorskip("h5py")

from flygym import Simulation  # noqa: E402
from flygym.anatomy import ActuatedDOFPreset, AxisOrder, JointPreset, Skeleton  # noqa: E402
from flygym.compose import (ActuatorType, FlatGroundWorld, GeomFittingOption,  # noqa: E402
                            KinematicPosePreset, NeuroMechFly)
from flygym.utils.math import Rotation3D  # noqa: E402

import flysim  # noqa: E402
from flysim.flygym import GPUSimulation, HostArray  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets"))
CLIP = os.path.join(ASSETS, "walking_clip.h5")
STEPS = 1000        # clip steps compared with FlyGym's Simulation
GETTER_STEP = 200   # the step after which every getter is compared
N = 3               # worlds
# Measured over the 1,000 steps (every step, every joint angle, all three worlds) on an
# x86-64 CPU: host f64 2.7e-15 rad, host f32 2.2e-6 rad (its largest at step 7, 5e-7 at
# the last). f64 is rounding only: a bound of 1e-12 is ~400x it. f32 is float32 rounding
# (eps 1.2e-7 on angles of ~1-2 rad) which the position servos (kp 150) keep from
# growing over these steps; 1e-4 allows ~50x it for another CPU's or compiler's
# float32 rounding, and stays 10x under the ~1e-3 rad float32 floor that flysim compare
# reports after 1,000 contact steps of the clip.
BOUND = {"f64": 1e-12, "f32": 1e-4}


def build():
    """NeuroMechFly and its world, as scripts/export_assets.py's build() (mesh)."""
    fly = NeuroMechFly(geom_fitting_option=GeomFittingOption.UNMODIFIED)
    skeleton = Skeleton(axis_order=AxisOrder.YAW_PITCH_ROLL,
                        joint_preset=JointPreset.LEGS_ONLY)
    fly.add_joints(skeleton, neutral_pose=KinematicPosePreset.NEUTRAL)
    dofs = fly.skeleton.get_actuated_dofs_from_preset(ActuatedDOFPreset.LEGS_ACTIVE_ONLY)
    fly.add_actuators(dofs, actuator_type=ActuatorType.POSITION, kp=150.0,
                      neutral_input=KinematicPosePreset.NEUTRAL)
    fly.add_joint_sites(JointPreset.LEGS_ONLY.to_joint_list())
    fly.colorize()
    fly.add_tracking_camera()
    fly.add_leg_adhesion()
    world = FlatGroundWorld()
    world.add_fly(fly, [0.0, 0.0, 0.7], Rotation3D(format="quat", values=[1.0, 0, 0, 0]))
    return fly, world


def getters(sim, name):
    """Every getter's value (GPUSimulation: (N, ...); Simulation: one world's)."""
    return {
        "joint_angles": sim.get_joint_angles(name),
        "joint_velocities": sim.get_joint_velocities(name),
        "body_positions": sim.get_body_positions(name),
        "body_rotations": sim.get_body_rotations(name),
        "site_positions": sim.get_site_positions(name),
        "actuator_forces": sim.get_actuator_forces(name, ActuatorType.POSITION),
        **{"ground_contact_" + k: v for k, v in zip(
            ("found", "forces", "torques", "positions", "normals", "tangents"),
            sim.get_ground_contact_info(name))},
    }


@pytest.fixture(scope="module")
def setup():
    """(fly, world, targets (T x 42) in the fly's actuator order, and FlyGym's CPU
    Simulation's replay: joint angles after each step, getters after GETTER_STEP)."""
    if not os.path.exists(CLIP):
        pytest.skip(f"no {CLIP} (scripts/setup.sh exports it)")
    fly, world = build()
    with h5py.File(CLIP) as f:
        clip = f["targets"][:]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["dof_names"][:]]
    order = [d.name for d in fly.get_actuated_jointdofs_order(ActuatorType.POSITION)]
    targets = clip[:, [names.index(n) for n in order]]

    sim = Simulation(world)
    sim.reset()
    angles, at = [], {}

    def keep(t, sim):
        angles.append(sim.get_joint_angles(fly.name).copy())
        if t + 1 == GETTER_STEP:
            at.update({k: np.array(v) for k, v in getters(sim, fly.name).items()})
            at["time"] = sim.time
            at["base_linvel"] = sim.mj_data.qvel[:3].copy()
            at["base_angvel"] = sim.mj_data.qvel[3:6].copy()

    flygym_replay(sim, fly, targets, STEPS, keep)
    return fly, world, targets, np.array(angles), at


def flygym_replay(sim, fly, targets, steps, each=None):
    """FlyGym's replay on its CPU Simulation (one world): adhesion on, warmup, the clip's
    targets; each(t, sim) after every step."""
    sim.set_leg_adhesion_states(fly.name, np.ones(6, dtype=bool))
    sim.warmup()
    for t in range(steps):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, targets[t])
        sim.step()
        if each is not None:
            each(t, sim)


def replay(sim, fly, targets, steps, each=None):
    """FlyGym's replay on a GPUSimulation: adhesion on, warmup, the same targets in
    every world; each(t, sim) after every step."""
    sim.set_leg_adhesion_states(fly.name, np.ones((sim.n_worlds, 6)))
    sim.warmup()
    for t in range(steps):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION,
                                np.broadcast_to(targets[t], (sim.n_worlds, targets.shape[1])))
        sim.step()
        if each is not None:
            each(t, sim)


def test_cpu_is_flygym_simulation_to_the_bit(setup):
    fly, world, targets, ref, _ = setup
    sim = GPUSimulation(world, n_worlds=N, backend="cpu")

    def check(t, sim):
        a = sim.get_joint_angles(fly.name)
        assert a.shape == (N, ref.shape[1]) and a.dtype == np.float64
        for w in range(N):
            np.testing.assert_array_equal(a[w], ref[t], err_msg=f"step {t}, world {w}")

    replay(sim, fly, targets, STEPS, check)
    assert not sim.problems.any()
    sim.close()


@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_host_is_flygym_simulation_within_bound(setup, precision):
    fly, world, targets, ref, at = setup
    sim = GPUSimulation(world, n_worlds=N, backend="host", precision=precision)
    err = np.zeros(STEPS)

    def check(t, sim):
        a = sim.get_joint_angles(fly.name)
        assert a.dtype == np.dtype(np.float32 if precision == "f32" else np.float64)
        np.testing.assert_array_equal(a[1:], np.broadcast_to(a[0], a[1:].shape))  # same worlds
        err[t] = np.abs(a[0].astype(np.float64) - ref[t]).max()
        if t + 1 == GETTER_STEP and precision == "f64":  # the contact sensors: flysim's stage
            found, forces = sim.get_ground_contact_info(fly.name)[:2]
            np.testing.assert_array_equal(found[0], at["ground_contact_found"])
            scale = np.abs(at["ground_contact_forces"]).max()
            assert np.abs(forces[0] - at["ground_contact_forces"]).max() <= 1e-6 * scale

    replay(sim, fly, targets, STEPS, check)
    print(f"host {precision}: largest |angle - FlyGym's| {err.max():.2e} rad (step "
          f"{err.argmax() + 1}), {err[-1]:.2e} at step {STEPS}")
    assert err.max() <= BOUND[precision], (precision, err.max(), err.argmax())
    assert not sim.problems.any(), sim.health()
    sim.close()


def test_getters_are_flygym_simulation_to_the_bit(setup):
    fly, world, targets, _, at = setup
    sim = GPUSimulation(world, n_worlds=N, backend="cpu")
    # the model FlyGym's CPU Simulation steps: noslip and its tolerance kept
    assert sim.mj_model.opt.noslip_iterations == world.mjcf_root.option.noslip_iterations > 0
    assert sim.mj_model.opt.tolerance == Simulation(world).mj_model.opt.tolerance
    replay(sim, fly, targets, GETTER_STEP)
    got = getters(sim, fly.name)
    assert at["ground_contact_found"].max() > 0 and np.abs(at["ground_contact_forces"]).max() > 0
    for k, v in got.items():
        assert isinstance(v, HostArray) and v.numpy() is v, k
        assert v.shape == (N,) + at[k].shape, (k, v.shape, at[k].shape)
        for w in range(N):
            np.testing.assert_array_equal(v[w], at[k], err_msg=f"{k}, world {w}")
    np.testing.assert_array_equal(sim.get_base_linear_velocity(fly.name)[1], at["base_linvel"])
    np.testing.assert_array_equal(sim.get_base_angular_velocity(fly.name)[2], at["base_angvel"])
    assert sim.time == at["time"] and sim.timestep == 1e-4
    # dst: filled and returned
    dst = np.empty((N,) + at["body_positions"].shape)
    assert sim.get_body_positions(fly.name, dst=dst) is dst
    np.testing.assert_array_equal(dst[0], at["body_positions"])
    health = sim.health()
    assert (health["problems"] == 0).all() and (health["peak_contacts"] > 0).all()
    sim.close()


def test_cuda_code_path_on_host(setup):
    """The cuda backend's code path (inputs gathered and written before the step,
    outputs read through Batch.read) on a host batch, against the host path."""
    fly, world, targets, _, _ = setup
    a = GPUSimulation(world, n_worlds=2, backend="host")
    b = GPUSimulation(world, n_worlds=2, backend="host")
    b._host = False  # what a cuda batch takes: Batch.read/write, not views
    for sim in (a, b):
        replay(sim, fly, targets, 20)
        sim.set_state(qvel=np.zeros((2, sim.mj_model.nv)), worlds_mask=[False, True])
        replay(sim, fly, targets, 20)
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, np.stack(targets[:2]))
        sim.reset(worlds_mask=[True, False])  # world 1 keeps its new inputs
        sim.step()
    np.testing.assert_array_equal(a.batch.read("ctrl"), b.batch.read("ctrl"))
    ids = a._intern_actuatorids_by_type_by_fly[ActuatorType.POSITION][fly.name]
    np.testing.assert_array_equal(a.batch.ctrl[1, ids], targets[1].astype(np.float32))
    ga, gb = getters(a, fly.name), getters(b, fly.name)
    for k in ga:
        np.testing.assert_array_equal(ga[k], gb[k], err_msg=k)
    assert a.time == b.time
    a.close()
    b.close()


def test_set_state_and_reset(setup):
    fly, world, targets, _, _ = setup
    sim = GPUSimulation(world, n_worlds=N, backend="cpu")
    qpos0 = sim.batch.qpos.copy()  # the neutral keyframe, every world
    replay(sim, fly, targets, 10)
    qpos = np.array(sim.batch.qpos)
    qpos[1, 2] += 1.0
    sim.set_state(qpos=qpos, worlds_mask=np.array([False, True, False]))
    np.testing.assert_array_equal(sim.batch.qpos, qpos)
    before = np.array(sim.batch.qpos)
    sim.reset(worlds_mask=[True, False, False])
    np.testing.assert_array_equal(sim.batch.qpos[0], qpos0[0])
    np.testing.assert_array_equal(sim.batch.qpos[1:], before[1:])
    sim.reset()
    np.testing.assert_array_equal(sim.batch.qpos, qpos0)
    assert sim.time == 0.0
    sim.close()


def test_unimplemented_and_bad_inputs(setup):
    fly, world, _, _, _ = setup
    sim = GPUSimulation(world, n_worlds=N, backend="cpu")
    for name, call in [("get_raw_vision", lambda: sim.get_raw_vision(fly.name)),
                       ("mjw_data", lambda: sim.mjw_data)]:
        with pytest.raises(NotImplementedError, match=name):
            call()
    nact = len(fly.get_actuated_jointdofs_order(ActuatorType.POSITION))
    with pytest.raises(ValueError, match=rf"shape \({nact},\); fix: \({N}, {nact}\)"):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, np.zeros(nact))
    with pytest.raises(ValueError, match=rf"\({N}, {nact}\)"):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION, np.zeros((N, nact - 1)))
    with pytest.raises(ValueError, match=rf"\({N}, 6\)"):
        sim.set_leg_adhesion_states(fly.name, np.ones(6))
    with pytest.raises(ValueError, match="dtype"):
        sim.set_leg_adhesion_states(fly.name, np.full((N, 6), "on"))
    with pytest.raises(ValueError, match=rf"qpos: shape \(1, {sim.mj_model.nq}\)"):
        sim.set_state(qpos=np.zeros((1, sim.mj_model.nq)))
    with pytest.raises(ValueError, match="worlds_mask"):
        sim.set_state(qvel=np.zeros((N, sim.mj_model.nv)), worlds_mask=[True])
    with pytest.raises(ValueError, match="dst"):
        sim.get_joint_angles(fly.name, dst=np.empty((N, 1)))
    with pytest.raises(KeyError, match="no fly 'nofly'"):
        sim.get_joint_angles("nofly")
    with pytest.raises(ValueError, match="n_worlds"):
        GPUSimulation(world, n_worlds=0, backend="cpu")
    with pytest.raises(ValueError):  # the cpu backend is float64 only
        GPUSimulation(world, n_worlds=1, backend="cpu", precision="f32")
    sim.close()


def make_model(position_gain=50.0, spawn_position=(0, 0, 0.8)):
    """flygym_demo/benchmark/time_gpu_simulation.py's make_model() with its defaults
    (that module imports warp, so it is repeated here)."""
    fly = NeuroMechFly(geom_fitting_option=GeomFittingOption.UNMODIFIED)
    skeleton = Skeleton(axis_order=AxisOrder.YAW_PITCH_ROLL,
                        joint_preset=JointPreset.LEGS_ONLY)
    fly.add_joints(skeleton, neutral_pose=KinematicPosePreset.NEUTRAL)
    dofs = fly.skeleton.get_actuated_dofs_from_preset(ActuatedDOFPreset.LEGS_ACTIVE_ONLY)
    fly.add_actuators(dofs, actuator_type=ActuatorType.POSITION, kp=position_gain,
                      neutral_input=KinematicPosePreset.NEUTRAL)
    fly.add_leg_adhesion()
    fly.colorize()
    cam = fly.add_tracking_camera()
    world = FlatGroundWorld()
    world.add_fly(fly, spawn_position, Rotation3D("quat", (1, 0, 0, 0)))
    return fly, world, cam


def test_script_that_swaps_one_import(setup):
    """time_gpu_simulation.py's set-up and loop (minus warp's graph capture) with
    `from flygym.warp import GPUSimulation` swapped for flysim's, on backend="host"."""
    from flysim.flygym import GPUSimulation  # the swapped import

    _, _, dof_angles, _, _ = setup  # the clip (FlyGym's MotionSnippet at 1e-4 s)
    n_worlds, n_steps, timestep = 4, 300, 1e-4
    # ReplayTargetData.make_target_angles_all_worlds: world w replays its own slice
    replay_data = np.zeros((n_worlds, n_steps, dof_angles.shape[1]), dtype=np.float32)
    n_partitions = dof_angles.shape[0] // n_steps
    for world_id in range(n_worlds):
        start = (world_id % n_partitions) * n_steps
        replay_data[world_id] = dof_angles[start:start + n_steps]

    fly, world, cam = make_model()
    fly_name = fly.name
    sim = GPUSimulation(world, n_worlds, timestep=timestep, backend="host")
    assert sim.mj_model.opt.timestep == timestep
    sim.set_leg_adhesion_states(fly_name, np.ones((n_worlds, 6), dtype=np.float32))
    sim.warmup()
    for step in range(n_steps):
        sim.set_actuator_inputs(fly_name, ActuatorType.POSITION, replay_data[:, step])
        sim.step()
    angles = sim.get_joint_angles(fly_name).numpy()
    positions = sim.get_body_positions(fly_name).numpy()
    assert angles.shape == (n_worlds, len(fly.get_jointdofs_order()))
    assert np.isfinite(angles).all() and np.isfinite(positions).all()
    assert abs(sim.time - (0.05 + n_steps * timestep)) < 1e-6
    assert not sim.problems.any(), sim.health()
    assert not np.array_equal(angles[0], angles[1])  # the worlds replayed their own slices
    sim.close()


def test_trajectory_recorder_and_performance_report(setup, capsys):
    """set_trajectory_recorder/record_as_needed as FlyGym's: on cpu the chosen worlds'
    trajectories equal FlyGym's CPU Simulation's recorder's to the bit (frame times and
    qpos), host f64 within round-off; FlyGym's render_trajectories renders them (the same
    frames as the CPU Simulation's trajectory); step_with_profile feeds FlyGym's report."""
    from flygym.recording import RecordedTrajectory, render_trajectories

    fly, world, targets, _, _ = setup
    steps, fps = 240, 250  # a frame every 8 steps (playback 0.2: 0.8 ms of simulated time)
    ref = Simulation(world)
    ref.reset()
    ref.set_trajectory_recorder(output_fps=fps)
    flygym_replay(ref, fly, targets, steps, lambda t, s: s.record_as_needed())
    want = ref.recorder.trajectory
    assert want.n_frames == steps // 8

    for backend, precision in (("cpu", None), ("host", "f64")):
        sim = GPUSimulation(world, n_worlds=N, backend=backend, precision=precision)
        with pytest.raises(RuntimeError, match="set_trajectory_recorder"):
            sim.record_as_needed()
        with pytest.raises(ValueError, match=rf"worlds \[{N}\] out of range"):
            sim.set_trajectory_recorder(worlds=[0, N])
        rec = sim.set_trajectory_recorder(output_fps=fps, worlds=[0, 2])
        replay(sim, fly, targets, steps, lambda t, s: s.record_as_needed())
        got = rec.trajectories
        assert [g.world_id for g in got] == [0, 2]
        for g in got:
            assert isinstance(g, RecordedTrajectory) and g.mocap_pos is None
            assert g.output_fps == fps and g.playback_speed == 0.2
            np.testing.assert_array_equal(g.time, want.time)
            if backend == "cpu":
                np.testing.assert_array_equal(g.qpos, want.qpos)
            else:
                np.testing.assert_allclose(g.qpos, want.qpos, rtol=0, atol=1e-9)
        if backend == "cpu":
            cam = sim.mj_model.camera(0).name
            frames = render_trajectories(sim.mj_model, got[1], cam, camera_res=(48, 64))
            expect = render_trajectories(ref.mj_model, want, cam, camera_res=(48, 64))
            assert frames[0][cam].shape == (want.n_frames, 48, 64, 3)
            assert frames[0][cam].std() > 0  # not a blank image
            np.testing.assert_array_equal(frames[0][cam], expect[0][cam])
        sim.reset()  # FlyGym's reset clears the recorder
        with pytest.raises(RuntimeError, match="No frames"):
            rec.trajectories
        sim.close()
    ref.close()

    sim = GPUSimulation(world, n_worlds=N, backend="host")
    for _ in range(20):
        sim.step_with_profile()
    capsys.readouterr()
    sim.print_performance_report(show_in_notebook=False)
    report = capsys.readouterr().out
    assert "Physics simulation advancement" in report and "TOTAL" in report, report
    sim.close()


def test_renderer(setup, tmp_path):
    """set_renderer/render_as_needed as FlyGym's WarpCPURenderer: on cpu each chosen world's
    frames are those of FlyGym's CPU Simulation's Renderer to the bit (the same states);
    save_video writes one world's video and a grid of worlds; reset clears the frames;
    the performance report counts the rendered worlds."""
    fly, world, targets, _, _ = setup
    steps, fps, res = 160, 250, (48, 64)
    ref = Simulation(world)
    ref.reset()
    cam = ref.mj_model.camera(0).name
    ref.set_renderer(cam, camera_res=res, output_fps=fps)
    flygym_replay(ref, fly, targets, steps, lambda t, s: s.render_as_needed())
    want = ref.renderer.frames[cam]
    assert len(want) == steps // 8

    sim = GPUSimulation(world, n_worlds=N, backend="cpu")
    with pytest.raises(RuntimeError, match="set_renderer"):
        sim.render_as_needed()
    with pytest.raises(NotImplementedError, match="use_gpu_batch_rendering"):
        sim.set_renderer(cam, use_gpu_batch_rendering=True)
    with pytest.raises(ValueError, match="RGB frames only"):
        sim.set_renderer(cam, render_depth=True)
    r = sim.set_renderer(cam, camera_res=res, output_fps=fps, worlds=[1, 2])
    sim.set_leg_adhesion_states(fly.name, np.ones((N, 6)))
    sim.warmup()
    for t in range(steps):
        sim.set_actuator_inputs(fly.name, ActuatorType.POSITION,
                                np.broadcast_to(targets[t], (N, targets.shape[1])))
        sim.step_with_profile()
        sim.render_as_needed_with_profile()
    for w in (1, 2):
        got = r.world_frames(w, cam)
        assert len(got) == len(want) and got[0].std() > 0
        np.testing.assert_array_equal(np.stack(got), np.stack(want))
    with pytest.raises(ValueError, match="not among the rendered worlds"):
        r.world_frames(0)
    r.save_video(1, tmp_path / "one.mp4")
    r.save_video([1, 2], tmp_path / "grid.mp4")
    assert (tmp_path / "one.mp4").stat().st_size > 0 and (tmp_path / "grid.mp4").stat().st_size > 0
    sim.print_performance_report(show_in_notebook=False)
    sim.reset()
    with pytest.raises(RuntimeError, match="No frames"):
        r.world_frames(1)
    sim.close()
    ref.close()


@pytest.mark.parametrize("backend,precision", [("cpu", None), ("host", "f64"), ("host", "f32")])
def test_forward(setup, backend, precision):
    """forward() after set_state: every getter (contact sensors included) as FlyGym's CPU
    Simulation's after its forward() of the same state (cpu to the bit, host within its
    bound), in every world; the state unchanged."""
    fly, world, _, _, _ = setup
    ref = Simulation(world)
    ref.reset()
    q = ref.mj_data.qpos.copy()
    q[7:] += 0.1 * np.sin(np.arange(q.size - 7))  # the legs off the neutral pose
    q[2] -= 0.9  # lower (2 mm at the keyframe, standing near 1.1): the feet touch the floor
    ref.mj_data.qpos[:] = q
    ref.forward()
    want = getters(ref, fly.name)
    assert want["ground_contact_found"].any(), "no contact: the contact sensors go untested"
    sim = GPUSimulation(world, n_worlds=N, backend=backend, precision=precision)
    sim.set_state(qpos=np.broadcast_to(q, (N, q.size)))
    before = np.array(sim.batch.qpos)
    sim.forward()
    got = getters(sim, fly.name)
    np.testing.assert_array_equal(np.asarray(sim.batch.qpos), before)
    bound = 0 if backend == "cpu" else BOUND[precision]
    for k, v in want.items():
        v = np.asarray(v, dtype=np.float64)
        for w in range(N):
            g = np.asarray(got[k][w], dtype=np.float64)
            if bound == 0:
                np.testing.assert_array_equal(g, v, err_msg=f"{k} world {w}")
            else:  # forces scale with the contact stiffness: relative to the largest
                np.testing.assert_allclose(g, v, rtol=0, atol=bound * (1 + np.abs(v).max()),
                                           err_msg=f"{k} world {w}")
    sim.close()
    ref.close()
