"""flysim.Batch: the C library through Python, against MuJoCo and `flysim replay`.

Run as `PYTHONPATH=<build>/python python -m pytest python/tests` (ctest test_python). The
assets come from FLYSIM_ASSETS (default <source>/assets); FLYSIM_BINARY names the flysim
executable for the comparison with `flysim replay` (skipped without it).
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest

import mujoco
import flysim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets"))
MESH = os.path.join(ASSETS, "mesh.mjb")
CLIP = os.path.join(ASSETS, "walking_clip.h5")
BACKENDS = [("cpu", None), ("host", "f64"), ("host", "f32")]


@pytest.fixture(scope="module")
def model():
    if not os.path.exists(MESH):
        pytest.skip(f"no {MESH} (scripts/setup.sh exports it)")
    return mujoco.MjModel.from_binary_path(MESH)


@pytest.fixture(scope="module")
def clip(model):
    h5py = pytest.importorskip("h5py")
    with h5py.File(CLIP) as f:
        targets = f["targets"][:]
        names = [n.decode() for n in f["dof_names"][:]]
    act = []
    for n in names:  # the position actuator on the joint of that name (after "nmf/")
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "nmf/" + n)
        act.append(next(a for a in range(model.nu) if model.actuator_trnid[a, 0] == j
                        and model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT))
    return targets, np.array(act)


def adhesion_on(b, model):
    ad = [a for a in range(model.nu) if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_BODY]
    ctrl = b.read("ctrl")
    ctrl[:, ad] = 1
    b.write("ctrl", ctrl)


# A Python loop writing the clip through b.ctrl is flysim replay, to the bit.
@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_clip_loop_is_flysim_replay(model, clip, backend, precision, tmp_path):
    exe = os.environ.get("FLYSIM_BINARY")
    if not exe:
        pytest.skip("FLYSIM_BINARY is not set (the flysim executable: ctest sets it)")
    h5py = pytest.importorskip("h5py")
    targets, act = clip
    N, S, W = 8, 60, 40
    with flysim.Batch(model, N, backend=backend, precision=precision) as b:
        b.reset()
        adhesion_on(b, model)
        b.step(W)
        ctrl = b.ctrl  # the batch's memory (cpu, host)
        slices = targets.shape[0] // S
        for s in range(S):
            for w in range(N):
                ctrl[w, act] = targets[(w % slices) * S + s]
            b.step()
        q = b.qpos.copy()
    cmd = [exe, "replay", "--backend", backend, "--worlds", str(N), "--sim-steps", str(S),
           "--warmup-sec", str(W * 1e-4), "--save-data", str(tmp_path), "--record", "qpos",
           "--no-video", "--no-plots", "--quiet"]
    if precision:
        cmd += ["--precision", precision]
    # the flysim executable links its own sanitizers; the runtimes that ctest preloads into
    # the interpreter (LD_PRELOAD) must not reach it, nor the h5repack it runs (which hangs
    # at exit with ASan preloaded)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run(cmd, check=True, capture_output=True, env=env, timeout=300)
    with h5py.File(tmp_path / "replay.h5") as f:
        rec = f["qpos"][-1]
    assert np.array_equal(q.astype(np.float32), rec), np.abs(q - rec).max()


# The arrays are the batch's memory: a write is the next step's input, for that world only.
@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_zero_copy(model, backend, precision):
    with flysim.Batch(model, 4, backend=backend, precision=precision) as a, \
            flysim.Batch(model, 4, backend=backend, precision=precision) as b:
        for x in (a, b):
            x.reset()
            x.step(5)
        assert np.shares_memory(a.ctrl, a.view("ctrl"))
        assert a.ctrl.__array_interface__["data"][0] == a.ctrl.__array_interface__["data"][0]
        for name in ("qpos", "ctrl", "xpos", "time"):
            v = a.view(name)
            assert np.array_equal(v, a.read(name)), name  # the strides are the batch's
            if backend == "host":  # no two worlds share a cache line (flysim.h's fsView)
                start = v.__array_interface__["data"][0] + v.strides[0] * np.arange(4)
                last = start + v[0].nbytes - 1
                assert np.all(last[:-1] // 64 < start[1:] // 64), name
        a.ctrl[3, 5] += 0.3
        a.step(20)
        b.step(20)
        qa, qb = a.qpos, b.qpos
        assert np.array_equal(qa[:3], qb[:3])  # the other worlds: untouched
        assert not np.array_equal(qa[3], qb[3])  # world 3 moved otherwise


def test_arrays_outlive_close_safely(model):
    b = flysim.Batch(model, 2, backend="host")
    b.reset()
    b.step(3)
    q = b.qpos
    before = q.copy()
    b.close()
    assert np.array_equal(q, before)  # still the batch's memory, kept alive by q
    with pytest.raises(RuntimeError, match="closed"):
        b.qpos
    with pytest.raises(RuntimeError, match="closed"):
        b.step()
    del q  # the library's batch goes now


# step() releases the GIL: another Python thread runs meanwhile.
@pytest.mark.parametrize("n", [200000, 2**31])
def test_ctrl_c_during_a_long_step(n):
    """Ctrl-C during b.step(200000) on the host arrives within the call, between the slices
    b.step makes, not after the whole call (issue 46: 78 s later): the steps taken when the
    KeyboardInterrupt arrives are a few slices, not the 200,000 (no clock read). A count
    beyond the C library's int, step(2**31), is taken the same way (issue 46: the binding's
    'incompatible function arguments')."""
    if not os.path.exists(MESH):
        pytest.skip(f"no {MESH}")
    code = ("import sys, flysim\n"
            f"b = flysim.Batch({MESH!r}, 1, backend='host', threads=1)\n"
            "b.reset()\nb.step(1)\nprint('stepping', flush=True)\n"
            f"try:\n    b.step({n})\nexcept KeyboardInterrupt:\n"
            "    print(f'interrupted at {b.steps}', flush=True)\n"
            "    sys.exit(3)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    assert p.stdout.readline().strip() == "stepping"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=1200)
    assert p.returncode == 3 and "interrupted at" in out, out
    steps = int(out.split("interrupted at")[1])
    assert 1 <= steps < 100000, f"the interrupt arrived after {steps} of 200,001 steps"


def test_step_releases_the_gil(model):
    with flysim.Batch(model, 4, backend="host", threads=1) as b:
        b.reset()
        count, stop = [0], threading.Event()

        def spin():
            while not stop.is_set():
                count[0] += 1

        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.05)
        c0 = count[0]
        start = time.perf_counter()
        b.step(400)
        took = time.perf_counter() - start
        c1 = count[0]
        stop.set()
        t.join()
        assert took > 0.05 and c1 - c0 > 1000, (took, c1 - c0)


@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_reset_by_mask(model, backend, precision):
    with flysim.Batch(model, 4, backend=backend, precision=precision) as a, \
            flysim.Batch(model, 4, backend=backend, precision=precision) as b, \
            flysim.Batch(model, 4, backend=backend, precision=precision) as fresh:
        for x in (a, b, fresh):
            x.reset()
            x.ctrl[:, :] = 0.05
        a.step(30)
        b.step(30)
        mask = np.array([True, False, False, True])
        a.reset(mask)
        for x in (a, b, fresh):
            x.ctrl[:, :] = 0.05
            x.step(20)
        assert np.array_equal(a.qpos[~mask], b.qpos[~mask])
        assert np.array_equal(a.qpos[mask], fresh.qpos[mask])


# A world's kp and friction set per world equal a model built with them.
@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_set_param_is_a_model_with_the_value(model, backend, precision):
    m2 = mujoco.MjModel.from_binary_path(MESH)
    gain, bias = model.actuator_gainprm.copy(), model.actuator_biasprm.copy()
    gain[:42, 0] *= 1.5
    bias[:42, 1] *= 1.5
    fric = model.geom_friction.copy()
    fric[:, 0] *= 0.5
    pfric = model.pair_friction.copy()
    pfric[:, :2] *= 0.5
    m2.actuator_gainprm[:] = gain
    m2.actuator_biasprm[:] = bias
    m2.geom_friction[:] = fric
    m2.pair_friction[:] = pfric
    mujoco.mj_setConst(m2, mujoco.MjData(m2))
    with flysim.Batch(model, 2, backend=backend, precision=precision) as b, \
            flysim.Batch(m2, 2, backend=backend, precision=precision) as ref:
        for name, v in (("actuator_gainprm", gain), ("actuator_biasprm", bias),
                        ("geom_friction", fric), ("pair_friction", pfric)):
            b.set_param(name, v[None], worlds=[1])
        for x in (b, ref):
            x.reset()
            adhesion_on(x, model)
            x.step(200)  # the fly lands: contacts and friction matter
        assert np.array_equal(b.qpos[1], ref.qpos[1])
        assert not np.array_equal(b.qpos[0], b.qpos[1])


def test_health_and_problems(model):
    with flysim.Batch(model, 3, backend="host") as b:
        b.reset()
        b.ctrl[1, 0] = np.nan
        b.step(2)
        assert list(b.problems != 0) == [False, True, False]
        h = b.health()
        assert h["first_warning"][1] == int(mujoco.mjtWarning.mjWARN_BADCTRL)
        assert h["problems"][0] == 0


def test_errors(model):
    with pytest.raises(ValueError, match="backend 'gpu'"):
        flysim.Batch(model, 2, backend="gpu")
    with pytest.raises(ValueError, match="cpu backend is MuJoCo's own, in float64"):
        flysim.Batch(model, 2, backend="cpu", precision="f32")
    with pytest.raises(ValueError, match="nworld 0"):
        flysim.Batch(model, 0, backend="host")
    with pytest.raises(MemoryError, match="16777216 worlds need .* fix: at most"):
        flysim.Batch(model, 2**24, backend="cpu")  # refused up front, not OOM-killed
    with pytest.raises(MemoryError, match="host backend's 16777216 worlds need .* fix: at most"):
        flysim.Batch(model, 2**24, backend="host")  # (was "out of memory allocating M")
    with pytest.raises(ValueError, match=r"worlds=2147483648: .* fix: at most 2147483647"):
        flysim.Batch(model, 2**31, backend="host")
    with pytest.raises(ValueError, match="no such file"):
        flysim.Batch("/nonexistent/model.xml", 2)
    with pytest.raises(ValueError, match="not a file; fix:"):
        flysim.load_model(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, fix in (("bad.mjb", "garbage", "an MJB saved by"),
                                ("bad.xml", "<mujoco><bad", "valid MJCF")):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            with pytest.raises(ValueError,
                               match=f"flysim: {path}: MuJoCo cannot load it: .*fix: {fix}"):
                flysim.Batch(path, 2)
    with pytest.raises(ValueError, match="for the cuda backend only"):
        flysim.Batch(model, 2, backend="host", stream=7)
    with pytest.raises(ValueError, match=r"max_candidates 2: .* of its pairs every step"):
        flysim.Batch(model, 2, backend="host", max_candidates=2)
    with pytest.raises(ValueError, match="max_candidates=1.5: fix: an integer"):
        flysim.Batch(model, 2, backend="host", max_candidates=1.5)
    with pytest.raises(ValueError, match="a CUDA stream's handle"):
        flysim.Batch(model, 2, backend="cuda", stream="fast")
    ok, why = flysim.backend_available("cuda")
    if not ok:
        with pytest.raises(RuntimeError, match="cpu or host"):
            flysim.Batch(model, 2, backend="cuda")
    with flysim.Batch(model, 2, backend="host") as b:
        with pytest.raises(ValueError, match="nope"):
            b.view("nope")
        with pytest.raises(AttributeError):
            b.not_a_field
        with pytest.raises(ValueError, match="dtype float64"):
            b.write("ctrl", np.zeros((2, model.nu)))  # host f32: float32 controls
        with pytest.raises(ValueError, match="shape"):
            b.write("ctrl", np.zeros((3, model.nu), dtype=np.float32))
        with pytest.raises(ValueError, match="not an input"):
            b.write("xpos", np.zeros((2, model.nbody, 3), dtype=np.float32))
        with pytest.raises(ValueError, match="mask of shape"):
            b.reset(mask=[True])
        with pytest.raises(ValueError, match="no keyframe 'jump'"):
            b.reset(keyframe="jump")
        with pytest.raises(ValueError, match="not a real-valued array of mjModel"):
            b.set_param("no_such_param", np.zeros((1, 3)))
        with pytest.raises(ValueError, match="step"):
            b.step(-1)
        for bad in (True, 2.0, "3"):
            with pytest.raises(ValueError, match="fix: a number of steps"):
                b.step(bad)


@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_named_arrays_are_the_batch(model, backend, precision):
    """b.ctrl = values writes into the batch (never an attribute hiding its view); what the
    step computes is read-only; set_param refuses too few or too many values; a recording
    of a stepped range of worlds is refused, not silently made consecutive (issue 46)."""
    with flysim.Batch(model, 2, backend=backend, precision=precision) as b:
        b.reset()
        mine = np.full((2, model.nu), 0.3)
        b.ctrl = mine
        assert b.ctrl is not mine and b.ctrl is b.view("ctrl")
        assert np.all(b.ctrl == np.asarray(0.3, dtype=b.ctrl.dtype))
        mine[:] = 0
        assert np.all(b.ctrl != 0)
        b.ctrl = 0.1  # broadcast, as b.ctrl[:] = 0.1
        b.step(5)
        assert np.all(b.view("ctrl") == np.asarray(0.1, dtype=b.ctrl.dtype))
        with pytest.raises(AttributeError, match="xpos is read-only"):
            b.xpos = np.zeros((2, model.nbody, 3))
        with pytest.raises(ValueError, match="read-only"):
            b.xpos[0, 0, 0] = 1.0
        b.label = "mine"  # other attributes are the caller's
        assert b.label == "mine"
        with pytest.raises(ValueError, match=r"3 values for 1 world; fix: 50 a world"):
            b.set_param("body_mass", np.ones(3))
        with pytest.raises(ValueError, match=r"20 values for 2 worlds; fix: 50 a world"):
            b.set_param("body_mass", np.ones((2, 10)))
        b.set_param("body_mass", model.body_mass)  # one world: the array's own shape
        b.set_param("body_mass", np.tile(model.body_mass, (2, 1)))
        with pytest.raises(ValueError, match=r"range\(0, 4, 2\).*consecutive worlds"):
            b.add_recording([("qpos", 0)], worlds=range(0, 4, 2))
        with pytest.raises(ValueError, match="consecutive worlds"):
            b.add_recording([("qpos", 0)], worlds=[0, 1])


def test_sensordata_is_mujocos(model, clip):
    """The fly's six ground-contact sensors (FlyGym's, 16 values each: a leg's net contact
    force, torque and centre) on the host backend in float64 follow the cpu backend's (MuJoCo's
    own) over a walk with adhesion on, within 1e-9 of the largest value (the solver's last bits
    spread over the steps; from one state they are equal to the bit: engine_stages), with
    contacts found, not only zeros. A sensor the host engine does not compute makes the view
    fail naming it; the cuda backend has none."""
    targets, act = clip
    out = {}
    for backend, precision in (("cpu", None), ("host", "f64")):
        with flysim.Batch(model, 2, backend=backend, precision=precision) as b:
            b.reset()
            adhesion_on(b, model)
            seen = []
            for t in range(300):
                ctrl = b.read("ctrl")
                ctrl[:, act] = targets[t]
                b.write("ctrl", ctrl)
                b.step(1)
                seen.append(b.read("sensordata").copy())
            out[backend] = np.array(seen)
    assert out["host"].shape == (300, 2, model.nsensordata)
    scale = np.abs(out["cpu"]).max()
    assert np.abs(out["host"] - out["cpu"]).max() <= 1e-9 * scale
    found = out["cpu"][:, :, model.sensor_adr]  # each leg's count of contacts
    assert found.max() > 0 and np.abs(out["cpu"][:, :, model.sensor_adr + 1]).max() > 0
    spec = mujoco.MjSpec.from_file(os.path.join(ROOT, "tests", "models", "sensors.xml"))
    spec.worldbody.first_body().add_site(name="pad")
    spec.add_sensor(type=mujoco.mjtSensor.mjSENS_RANGEFINDER, name="pad_range",
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname="pad", intprm=[1, 0, 0])
    with flysim.Batch(spec.compile(), 1, backend="host") as b:
        with pytest.raises(ValueError, match=r"'sensordata'.*'pad_range' \(rangefinder: its kind\)"):
            b.view("sensordata")
        b.step(1)  # the sensors never change the state: the model steps
    if flysim.backend_available("cuda")[0]:
        with flysim.Batch(model, 1, backend="cuda") as b:
            with pytest.raises(ValueError, match="does not compute sensors"):
                b.view("sensordata")


class _FakeBatch:
    """What DeviceArray asks of its batch: its stream (0: its own) and sync()."""

    def __init__(self, stream):
        self.stream, self.syncs = stream, 0

    def sync(self):
        self.syncs += 1


class _FakeArray:
    def __init__(self):
        self.kwargs = None

    def __dlpack__(self, *args, **kwargs):
        self.kwargs = kwargs
        return "capsule"


def test_device_array_exports_after_the_queued_steps():
    # A cuda batch's steps are queued on its stream; an exported array must not be read
    # before they are done (no GPU needed: the export's side, with a stand-in batch).
    info = (0x1000, (2, 3), "float32", "device", 0, True)
    own = _FakeBatch(0)  # the batch's own stream: each export waits for its steps
    a = flysim.DeviceArray(own, "ctrl", _FakeArray(), info)
    iface = a.__cuda_array_interface__
    assert own.syncs == 1 and "stream" not in iface
    assert iface["data"] == (0x1000, False) and iface["shape"] == (2, 3) and iface["version"] == 3
    assert a.__dlpack__(stream=None) == "capsule" and own.syncs == 2  # legacy default stream
    a.__dlpack__(stream=5)
    assert own.syncs == 3
    a.__dlpack__(stream=-1)  # the consumer asks for no synchronization
    assert own.syncs == 3
    shared = _FakeBatch(0xBEEF)  # the caller's stream: given to the consumer, no host wait
    iface = flysim.DeviceArray(shared, "ctrl", _FakeArray(), info).__cuda_array_interface__
    assert iface["stream"] == 0xBEEF and shared.syncs == 0


def test_recording_and_sequence(model, clip):
    targets, act = clip
    N, S = 3, 16
    with flysim.Batch(model, N, backend="host", precision="f64") as a, \
            flysim.Batch(model, N, backend="host", precision="f64") as b:
        rows = np.array([0, 100, 200])
        rid = a.add_recording([("qpos", 7), ("ctrl", int(act[0]))], capacity=S)
        for x in (a, b):
            x.reset()
        a.set_ctrl_sequence(targets[:1000], act, rows)
        out = np.zeros((S, N, 2), dtype=np.float32)
        a.step_recorded(S, [out])
        for s in range(S):
            b.ctrl[:, act] = targets[rows + s]
            b.step()
        assert np.array_equal(a.qpos, b.qpos)
        assert np.array_equal(out[-1, :, 0], b.qpos[:, 7].astype(np.float32))
        assert np.array_equal(out[:, :, 1], targets[rows[None, :] + np.arange(S)[:, None], 0]
                              .astype(np.float32))
        assert rid == 0
        # another library's host array (DLPack) is a recording buffer too; bad ones are refused
        xs = pytest.importorskip("array_api_strict")
        out2 = xs.zeros((S, N, 2), dtype=xs.float32)
        for x in (a, b):
            x.reset()
        a.step_recorded(S, [out2])  # the sequence goes on: rows + S + s
        for s in range(S):
            b.ctrl[:, act] = targets[rows + S + s]
            b.step()
        assert np.array_equal(np.from_dlpack(out2)[-1, :, 0], b.qpos[:, 7].astype(np.float32))
        for bad in (np.zeros((S, N, 3), np.float32), np.zeros((S, N, 2)),
                    np.zeros((N, S, 2), np.float32).transpose(1, 0, 2), out[:, :1]):
            with pytest.raises(ValueError, match=r"out\[0\].*fix: a writable C-contiguous"):
                a.step_recorded(S, [bad])
        ro = np.zeros((S, N, 2), np.float32)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="writable"):
            a.step_recorded(S, [ro])
        with pytest.raises(ValueError, match="2 buffers"):
            a.step_recorded(S, [out, out])
        # the device forms are cuda's: refused on host with the fix
        with pytest.raises(ValueError, match=r"device=True.*host batch.*fix: device=False"):
            a.add_recording([("qpos", 0)], device=True)
        a.reset(xs.asarray([True, False, True]))  # a host array of another library: a mask

        class OnGpu:  # a CUDA array interface alone (Numba's kind)
            __cuda_array_interface__ = {"shape": (N,), "typestr": "|u1", "data": (8, False),
                                        "version": 3}
        with pytest.raises(ValueError, match=r"device mask for a host batch.*fix: a numpy"):
            a.reset(OnGpu())


# README's "Use from Python" example runs as written (fewer steps).
def test_readme_example(model, tmp_path):
    text = open(os.path.join(ROOT, "README.md")).read()
    section = text[text.index("## Use from Python"):]
    code = section[section.index("```python\n") + 10:]
    code = code[:code.index("```")].replace("range(1000)", "range(20)")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)


# The tethered world's mocap pose per world through the arrays: the moved world's thorax
# goes there, the others stay bit-identical to a batch left alone.
@pytest.mark.parametrize("backend,precision", BACKENDS)
def test_mocap_pose_per_world(backend, precision):
    path = os.path.join(ASSETS, "worlds", "tethered.mjb")
    if not os.path.exists(path):
        pytest.skip(f"no {path} (scripts/setup.sh exports it)")
    m = mujoco.MjModel.from_binary_path(path)
    with flysim.Batch(m, worlds=3, backend=backend, precision=precision) as a, \
            flysim.Batch(m, worlds=3, backend=backend, precision=precision) as b:
        for x in (a, b):
            x.reset()
        assert b.mocap_pos.shape == (3, 1, 3) and b.mocap_quat.shape == (3, 1, 4)
        b.mocap_pos[1, 0] += [0.1, -0.2, 0.05]  # in place: the batch's memory
        b.mocap_quat[1, 0] = [0.5, 0.5, 0.5, 0.5]
        a.step(50)
        b.step(50)
        thorax = np.nonzero(m.body_mocapid == 0)[0][0]
        assert np.array_equal(b.xpos[1, thorax], b.mocap_pos[1, 0])
        assert np.array_equal(b.xquat[1, thorax], b.mocap_quat[1, 0])
        for w in (0, 2):
            assert np.array_equal(a.qpos[w], b.qpos[w]) and np.array_equal(a.xpos[w], b.xpos[w])
        assert np.min(np.linalg.norm(b.xpos[1, 1:] - a.xpos[1, 1:], axis=1)) > 0.05


# Where MuJoCo's Jacobian is dense (nv < 60), the host keeps the rows and the Newton
# Hessian dense and runs MuJoCo's loops over them (sqrMatTD, cholFactor, cholUpdate,
# cholSolve): without noslip, whose sums differ in order, its float64 steps are MuJoCo's
# to the bit (the tree factor's order drifted from step 90-282 of these runs).
@pytest.mark.parametrize("name", ["cuda_efc_walker", "cuda_contact_primitives",
                                  "cuda_contact_mesh"])
def test_host_f64_is_mujoco_where_jacobians_are_dense(name):
    path = os.path.join(ROOT, "tests", "models", name + ".xml")
    m = mujoco.MjModel.from_xml_path(path)
    assert m.nv < 60 and m.opt.jacobian != mujoco.mjtJacobian.mjJAC_SPARSE
    assert m.opt.noslip_iterations == 0
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    with flysim.Batch(path, 1, backend="host", precision="f64", threads=1) as b:
        b.qpos[0], b.qvel[0], b.ctrl[0] = d.qpos, d.qvel, d.ctrl
        rows = 0
        for i in range(600):
            mujoco.mj_step(m, d)
            b.step(1)
            rows = max(rows, d.nefc)
            assert np.array_equal(b.qpos[0], d.qpos) and np.array_equal(b.qvel[0], d.qvel), \
                f"{name}: step {i}: qpos or qvel differs from MuJoCo's"
        assert rows > 0  # the solver ran


# Activations as state (tests/models/activation.xml: filter, filterexact, integrator,
# actearly, a disabled group's): `act` is the batch's, set per world, reset to 0, and the
# host's float64 steps from a set activation are MuJoCo's to the bit.
@pytest.mark.parametrize("backend,precision", [("cpu", None), ("host", "f64")])
def test_activations_are_state(backend, precision):
    path = os.path.join(ROOT, "tests", "models", "activation.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    with flysim.Batch(path, 2, backend=backend, precision=precision, threads=1) as b:
        assert b.act.shape == (2, m.na) and m.na == 6
        b.act[0] = d.act[:] = np.linspace(-0.4, 0.5, m.na)
        u = np.linspace(-0.9, 0.9, m.nu)
        for _ in range(200):
            b.ctrl[:] = d.ctrl[:] = u
            b.step(1)
            mujoco.mj_step(m, d)
        assert np.array_equal(b.act[0], d.act) and np.array_equal(b.qpos[0], d.qpos)
        assert not np.array_equal(b.act[1], d.act)  # world 1 started from 0
        b.reset()
        assert not b.act.any()
