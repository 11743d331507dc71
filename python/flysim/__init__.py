"""flysim: many worlds of one MuJoCo model, stepped at once.

    import mujoco, numpy as np, flysim

    model = mujoco.MjModel.from_binary_path("assets/mesh.mjb")
    with flysim.Batch(model, worlds=64, backend="host") as b:
        b.reset()                                   # keyframe "neutral" (else qpos0)
        for t in range(1000):
            b.ctrl[:, :42] = my_policy(b.qpos, b.qvel)  # every world's controls, in place
            b.step()

A Batch holds N worlds of one model on a backend: "cpu" (MuJoCo's own mj_step on
threads, float64), "host" (flysim's engine on threads, float32 or float64) or "cuda" (the
same engine on a GPU). Its arrays (b.qpos, b.ctrl, ..., and b.view(name) for any other
mjData field) are the batch's memory, worlds first: numpy arrays on cpu and host, writing
one changes the next step; on cuda they are device arrays that torch.from_dlpack,
cupy.asarray and jax.dlpack.from_dlpack take without a copy (__dlpack__,
__cuda_array_interface__). b.step() releases the GIL. Errors are exceptions carrying the
library's message (what was wrong and the fix): ValueError for a bad name, shape or value,
RuntimeError for a backend this machine cannot run (naming the ones it can) or a closed
batch. The C library's reference is include/flysim/flysim.h.
"""
import os

import numpy as np

try:  # libmujoco first: the module shares the one `import mujoco` loads
    import mujoco as _mujoco
except ImportError as e:  # pragma: no cover
    raise ImportError("flysim needs the mujoco package (pip install mujoco)") from e

from . import _flysim

__all__ = ["Batch", "DeviceArray", "backend_available", "load_model", "version", "PROBLEM_WARNING",
           "PROBLEM_CONTACTS", "PROBLEM_SOLVER", "PROBLEM_FAILED", "STEPS_PER_LAUNCH"]

PROBLEM_WARNING = _flysim.PROBLEM_WARNING
PROBLEM_CONTACTS = _flysim.PROBLEM_CONTACTS
PROBLEM_SOLVER = _flysim.PROBLEM_SOLVER
PROBLEM_FAILED = _flysim.PROBLEM_FAILED
STEPS_PER_LAUNCH = _flysim.STEPS_PER_LAUNCH

_BACKENDS = {"cpu": _flysim.BACKEND_CPU, "host": _flysim.BACKEND_HOST,
             "cuda": _flysim.BACKEND_CUDA}
_PRECISIONS = {None: 0, "f32": 32, "f64": 64, "float32": 32, "float64": 64}


def version():
    """The library's version and the commit it was built from ("0.2.0+g<commit>", with
    ".dirty" when the tree had local changes)."""
    return _flysim.version()


def backend_available(backend):
    """(True, "") if `backend` ("cpu", "host", "cuda") runs here, else (False, why)."""
    if backend not in _BACKENDS:
        raise ValueError(f"flysim: backend {backend!r}: fix: one of {sorted(_BACKENDS)}")
    return _flysim.backend_available(_BACKENDS[backend])


_INT_MAX = 2**31 - 1  # the C library's counts (worlds, steps a call) are ints


class DeviceArray:
    """A cuda batch's array: device memory, worlds first, the batch's (no copy).

    torch.from_dlpack(a), cupy.asarray(a) (or cupy.from_dlpack) and
    jax.dlpack.from_dlpack(a) see it without a copy. Its address never moves, so a CUDA
    graph or a kernel of the caller's may keep it. numpy() copies it to the host.

    Streams: the batch's steps run on its stream. Exporting the array (__dlpack__ with
    any stream but -1, or __cuda_array_interface__) first waits for the steps queued so
    far, so a consumer on any stream sees their results. A batch opened on the caller's
    stream (Batch(..., stream=s)) exports it as the interface's "stream" instead, and the
    consumer orders its work after it. Work the caller queues on its own stream (a
    controller writing ctrl) is ordered before the next step only on that shared stream;
    otherwise synchronize it before stepping.
    """

    def __init__(self, batch, name, array, info):
        self._batch, self._name, self._array = batch, name, array
        ptr, shape, dtype, _, device, writable = info
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), np.dtype(dtype)
        self.device, self.writable = device, writable

    def __dlpack__(self, *args, stream=None, **kwargs):
        # DLPack: stream -1 asks for no synchronization; any other value (None: the legacy
        # default stream) must see the data ready. The batch's queued steps are waited for.
        if stream != -1:
            self._batch.sync()
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        iface = {"shape": self.shape, "typestr": self.dtype.str,
                 "data": (self.ptr, not self.writable), "strides": None, "version": 3}
        if self._batch.stream:
            iface["stream"] = self._batch.stream  # the consumer orders its work after it
        else:
            self._batch.sync()  # no stream to give: the data are ready when exported
        return iface

    def numpy(self):
        """A host copy (the batch's pending steps done first)."""
        return self._batch.read(self._name)

    def __repr__(self):
        return f"DeviceArray({self._name!r}, shape={self.shape}, dtype={self.dtype}, cuda:{self.device})"


def _stream_handle(stream, backend):
    """The cudaStream_t (an int, 0: none) of Batch's `stream` argument."""
    if stream is None:
        return 0
    if backend != "cuda":
        raise ValueError(f"flysim: stream={stream!r} with backend {backend!r}: fix: a stream "
                         "is for the cuda backend only; leave it None")
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        stream = getattr(stream, attr, stream)
    if not isinstance(stream, (int, np.integer)) or isinstance(stream, bool) or stream < 0:
        raise ValueError(f"flysim: stream={stream!r}: fix: a CUDA stream's handle (an int), a "
                         "torch.cuda.Stream or a cupy.cuda.Stream")
    return int(stream)


def _cai(a):
    """The __cuda_array_interface__ of an array that offers it and not DLPack (Numba's, a
    caller's own), else None (read from the class first: a property may synchronize)."""
    t = type(a)
    if hasattr(t, "__dlpack__") or not hasattr(t, "__cuda_array_interface__"):
        return None
    return a.__cuda_array_interface__


_CAI_DTYPES = {"|b1": "bool", "|u1": "uint8", "<f4": "float32", "<f8": "float64",
               "<i4": "int32"}


def _on_device(a):
    """True for an array whose memory is a GPU's (DLPack device type CUDA, or a CUDA array
    interface)."""
    if _cai(a) is not None:
        return True
    f = getattr(a, "__dlpack_device__", None)
    return f is not None and f()[0] == 2  # kDLCUDA


def _host_array(a):
    """A numpy array of a (numpy's own, another library's host array through DLPack, or
    anything np.asarray takes)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack__"):
        return np.asarray(a)
    return np.from_dlpack(a)


def load_model(path):
    """The mujoco.MjModel of an MJB (.mjb) or MJCF file, the error naming the file."""
    return _as_model(path)[0]


def _as_model(model):
    """(mujoco.MjModel, name): a model, or one loaded from a path (.mjb or MJCF)."""
    if isinstance(model, _mujoco.MjModel):
        return model, "the model"
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise ValueError(f"flysim: {path}: no such file; fix: the path of an MJCF or MJB model")
        if not os.path.isfile(path):
            raise ValueError(f"flysim: {path}: not a file; fix: the path of an MJCF (.xml) or MJB "
                             "(.mjb) model")
        try:
            m = (_mujoco.MjModel.from_binary_path(path) if path.endswith(".mjb")
                 else _mujoco.MjModel.from_xml_path(path))
        except ValueError as e:  # MuJoCo's message, which may not name the file
            kind = ("an MJB saved by this MuJoCo's mj_saveModel" if path.endswith(".mjb")
                    else "valid MJCF (or an .mjb file)")
            why = " ".join(str(e).split())  # MuJoCo's message on one line
            raise ValueError(f"flysim: {path}: MuJoCo cannot load it: {why}; fix: {kind}") from e
        return m, path
    raise ValueError(f"flysim: model {type(model).__name__}: fix: a mujoco.MjModel or a path")


class Batch:
    """N worlds of one MuJoCo model, stepped together (see the module's doc).

    Args:
        model: a mujoco.MjModel, or the path of an MJCF or MJB file.
        worlds: N.
        backend: "cpu", "host" or "cuda".
        precision: "f32" or "f64" (host, cuda; default f32); cpu is float64 only.
        max_contacts: host, cuda: contacts a world holds (None: every pair's bound).
        max_candidates: host, cuda, where pairs with static geoms are culled (FlyGym's
            terrains): candidate pairs a world tests in a step (None: those tested every
            step and 8 per moving geom); a world with more is a problem world.
        threads: cpu, host: threads, the caller's included (None: one per core).
        device: cuda: the GPU's ordinal.
        stream: cuda: the caller's CUDA stream for all the batch's work (an int handle, or
            an object with `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream));
            None: the batch's own. On a shared stream a controller's kernels and the steps
            are ordered with no synchronization.
    """

    # the named arrays: attribute -> mjData field
    _VIEWS = {"ctrl": "ctrl", "act": "act", "qpos": "qpos", "qvel": "qvel", "qacc": "qacc",
              "qfrc_applied": "qfrc_applied", "mocap_pos": "mocap_pos",
              "mocap_quat": "mocap_quat", "time": "time", "xpos": "xpos", "xquat": "xquat",
              "site_xpos": "site_xpos", "actuator_force": "actuator_force",
              "sensordata": "sensordata", "contact_count": "ncon", "problems": "problems",
              "solver_iterations": "solver_iterations"}

    def __init__(self, model, worlds=1, backend="cpu", precision=None, max_contacts=None,
                 threads=None, device=0, stream=None, max_candidates=None):
        if backend not in _BACKENDS:
            raise ValueError(f"flysim: backend {backend!r}: fix: one of {sorted(_BACKENDS)}")
        if precision not in _PRECISIONS:
            raise ValueError(f"flysim: precision {precision!r}: fix: 'f32' or 'f64'")
        for name, v in (("worlds", worlds), ("max_contacts", max_contacts or 0),
                        ("max_candidates", max_candidates or 0), ("threads", threads or 0),
                        ("device", device)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise ValueError(f"flysim: {name}={v!r}: fix: an integer")
            if v > _INT_MAX:
                raise ValueError(f"flysim: {name}={v}: more than the library takes; fix: at most "
                                 f"{_INT_MAX}")
        self.stream = _stream_handle(stream, backend)
        self.model, name = _as_model(model)
        self.worlds = int(worlds)
        self.backend = backend
        self._b = _flysim._Batch(self.model._address, self.worlds, _BACKENDS[backend],
                                 _PRECISIONS[precision], int(max_contacts or 0),
                                 int(max_candidates or 0), int(threads or 0), int(device), self.stream, str(name))
        self.precision = self._b.info()["precision"]
        self._device = int(device)
        self._arrays = {}
        self._recordings = []  # (worlds, columns, device) of each recording
        self._neutral = _mujoco.mj_name2id(self.model, _mujoco.mjtObj.mjOBJ_KEY, "neutral")

    # -- arrays ---------------------------------------------------------------------------
    def view(self, name):
        """mjData field `name` of every world (worlds first): the batch's memory. What the
        step computes (xpos, actuator_force, ...) is read-only: a write would be lost at
        the next step. On cuda (and host under FLYSIM_ONCHIP_BYTES), an intermediate the
        step kept on-chip until now (xmat, cvel, qfrc_bias, ... as the model's plan has it)
        reads NaN until the next step: ask for the arrays you read before stepping."""
        a = self._arrays.get(name)
        if a is None or self._b.closed:
            a = self._b.view(name)  # raises once closed
            info = self._b.view_info(name)
            if info[3] == "device":
                a = DeviceArray(self, name, a, info)
            elif not info[5]:
                a.flags.writeable = False
            self._arrays[name] = a
        return a

    def __getattr__(self, attr):
        field = Batch._VIEWS.get(attr)
        if field is None:
            raise AttributeError(f"flysim.Batch has no attribute {attr!r}")
        return self.view(field)

    def __setattr__(self, attr, value):
        """b.ctrl = values writes into the batch's ctrl (as b.ctrl[:] = values, numpy's
        broadcasting and casting), never hides the view behind an attribute of its own."""
        field = Batch._VIEWS.get(attr)
        if field is None:
            object.__setattr__(self, attr, value)
            return
        _, shape, dtype, where, _, writable = self._b.view_info(field)
        if not writable:
            raise AttributeError(f"flysim: Batch.{attr} is read-only (each step computes it); "
                                 "fix: read it, or write a writable array (ctrl, qpos, qvel, "
                                 "qfrc_applied, mocap_pos, mocap_quat)")
        if where == "device":
            values = np.broadcast_to(np.asarray(value, dtype=dtype), tuple(shape))
            self.write(field, np.ascontiguousarray(values))
        else:
            self.view(field)[...] = value

    def read(self, name):
        """A host copy of view `name` (any backend)."""
        _, shape, dtype, _, _, _ = self._b.view_info(name)
        out = np.empty(shape, dtype=dtype)
        self._b.read(name, out)
        return out

    def write(self, name, values):
        """Copy values (the view's shape and dtype) into the writable view `name`."""
        _, shape, dtype, _, _, writable = self._b.view_info(name)
        a = np.asarray(values)
        if a.shape != tuple(shape):
            raise ValueError(f"flysim: write('{name}'): shape {a.shape}, the view is {tuple(shape)}")
        if a.dtype != np.dtype(dtype):
            raise ValueError(f"flysim: write('{name}'): dtype {a.dtype}, the view is {dtype}; "
                             f"fix: values.astype(np.{dtype})")
        self._b.write(name, np.ascontiguousarray(a))

    # -- stepping -------------------------------------------------------------------------
    def step(self, n=1):
        """n steps of every world (the GIL released); cuda: queued, sync() waits. On cpu and
        host the steps go in slices of about 4,096 world-steps, so that Ctrl-C (Python's
        signals) arrives between them, not after the whole call."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"flysim: step({n!r}): fix: a number of steps, 0 or more")
        n = int(n)
        if n == 0 or self.backend == "cuda":
            while n > _INT_MAX:  # queued: no wait to slice for signals
                self._b.step(_INT_MAX)
                n -= _INT_MAX
            self._b.step(n)
            return
        chunk = max(1, 4096 // self.worlds)
        while n > 0:
            k = min(n, chunk)
            self._b.step(k)
            n -= k

    def sync(self):
        """Wait for the queued steps (cuda); report a CUDA error."""
        self._b.sync()

    def forward(self):
        """What mj_forward computes for every world's current state, without stepping
        (positions, velocities, forces, the constraint solve, sensors: the views), the state
        unchanged: after a reset or a write of qpos or qvel. cpu: mj_forward; host: the
        engine's forward; cuda: not yet (a FlysimError names the fix)."""
        self._b.forward()

    @property
    def steps(self):
        """Steps taken since the batch was opened."""
        return self._b.steps

    def reset(self, mask=None, keyframe="neutral"):
        """Reset the worlds of mask (N bools; None: all) to `keyframe` (a name, an index, or
        None: qpos0; "neutral" falls back to qpos0 when the model has no such keyframe).
        The other worlds are left as they are, to the bit.

        On cuda the mask may be a device array (torch, CuPy, JAX: bool or uint8, (N,),
        contiguous, on the batch's GPU): it is read on the device in the order of the
        batch's stream, with no copy to the host, so a policy's termination test on the
        GPU resets its worlds without a round trip. Queue the work that writes it on the
        batch's stream (Batch(..., stream=)) or synchronize it first."""
        if isinstance(keyframe, str):
            key = _mujoco.mj_name2id(self.model, _mujoco.mjtObj.mjOBJ_KEY, keyframe)
            if key < 0 and keyframe != "neutral":
                raise ValueError(f"flysim: reset: the model has no keyframe {keyframe!r}")
        else:
            key = -1 if keyframe is None else int(keyframe)
        m = None
        if mask is not None and _on_device(mask):
            if self.backend != "cuda":
                raise ValueError(f"flysim: reset: a device mask for a {self.backend} batch; "
                                 "fix: a numpy mask (this batch's memory is the host's)")
            ptr = self._buffer_arg("reset", "mask", mask, (self.worlds,), ("bool", "uint8"),
                                   device=True)
            self._b.reset_device(ptr, key)
            return
        if mask is not None:
            m = _host_array(mask)
            if m.shape != (self.worlds,):
                raise ValueError(f"flysim: reset: mask of shape {m.shape}; fix: ({self.worlds},)")
            m = np.ascontiguousarray(m != 0, dtype=np.uint8)
        self._b.reset(m, key)

    def set_param(self, name, values, worlds=None):
        """Model parameter `name` (a real mjModel array, e.g. "actuator_gainprm",
        "geom_friction", "body_mass", or "opt.gravity") of `worlds` (None: 0 .. rows-1):
        values, a world's whole array each (shape (len(worlds), ...) or, for one world, the
        array's own shape); what MuJoCo derives from it (mj_setConst) follows, from the
        next step."""
        v = np.asarray(values, dtype=np.float64)
        w = None if worlds is None else np.ascontiguousarray(np.atleast_1d(worlds), dtype=np.int32)
        size = self._param_size(name)
        one = size is not None and v.size == size and (w is None or len(w) == 1)
        n = len(w) if w is not None else (1 if one or v.ndim <= 1 else v.shape[0])
        if size is not None and v.size != n * size:
            raise ValueError(f"flysim: set_param('{name}'): {v.size} values for {n} world"
                             f"{'s' if n != 1 else ''}; fix: {size} a world (the model's "
                             f"{name} has {size}), shape ({n}, {size}) or, for one world, "
                             "the array's own shape")
        if size is None and v.size % n:
            raise ValueError(f"flysim: set_param('{name}'): {v.size} values for {n} worlds; fix: "
                             "the same number of values a world")
        self._b.set_param(name, w, np.ascontiguousarray(v.reshape(n, -1)))

    def _param_size(self, name):
        """Reals a world's parameter `name` holds (the mjModel array's size, 3 for
        opt.gravity); None for a name the model lacks (the library's error names it)."""
        if name == "opt.gravity":
            return 3
        a = getattr(self.model, name, None) if not name.startswith("_") else None
        return int(np.asarray(a).size) if isinstance(a, np.ndarray) else None

    def set_ctrl_sequence(self, values, actuator, world_row):
        """An open-loop control sequence: before each step, world w's
        ctrl[actuator[c]] = values[world_row[w] + steps since this call, c]."""
        self._b.set_ctrl_sequence(np.ascontiguousarray(values, dtype=np.float64),
                                  np.ascontiguousarray(actuator, dtype=np.int32),
                                  np.ascontiguousarray(world_row, dtype=np.int64))

    def clear_ctrl_sequence(self):
        self._b.clear_ctrl_sequence()

    def add_recording(self, columns, geom_group=None, worlds=None, capacity=1000,
                      device=False):
        """A recording of columns [(source, index), ...] (source: qpos, qvel, ctrl,
        actuator_force, xpos, xquat, site_xpos, solver_iterations, group_contact_force)
        of the worlds range(worlds) (None: all) after every step: returns its id for
        step_recorded. device=True (cuda only): step_recorded writes it into device arrays
        (torch, CuPy, JAX), in the order of the batch's stream, never through the host."""
        if device and self.backend != "cuda":
            raise ValueError(f"flysim: add_recording(device=True) on a {self.backend} batch; "
                             "fix: device=False (this batch's memory is the host's)")
        src = [c[0] for c in columns]
        idx = np.ascontiguousarray([c[1] for c in columns], dtype=np.int32)
        g = None if geom_group is None else np.ascontiguousarray(geom_group, dtype=np.int32)
        if worlds is not None and (not isinstance(worlds, range) or worlds.step != 1 or
                                   len(worlds) == 0):
            raise ValueError(f"flysim: add_recording(worlds={worlds!r}): a recording takes a "
                             "run of consecutive worlds; fix: range(first, last + 1), or one "
                             "recording a run")
        w0, nw = (0, 0) if worlds is None else (worlds.start, len(worlds))
        rid = self._b.add_recording(src, idx, g, w0, nw, int(capacity), bool(device))
        self._recordings.append((nw or self.worlds - w0, len(src), bool(device)))
        return rid

    def step_recorded(self, n, out):
        """step(n), each recording's columns into out[id] (float32, n x worlds x columns,
        C-contiguous; None: not this time): numpy arrays, or for a device recording device
        arrays on the batch's GPU. cuda: a host recording lands once a later step or sync()
        returns; a device recording is written in the order of the batch's stream."""
        self._b.step_recorded(int(n), self._recorded_args("step_recorded", out, n))

    def _recorded_args(self, call, out, n=1):
        """step_recorded's buffers, checked for n steps (ValueError otherwise), as the
        library takes them: one address a recording (0: none)."""
        out = list(out)
        if len(out) > len(self._recordings):
            raise ValueError(f"flysim: {call}: {len(out)} buffers, the batch has "
                             f"{len(self._recordings)} recordings; fix: one a recording (None: "
                             "not this time)")
        ptrs = []
        for rid, o in enumerate(out):
            if o is None:
                ptrs.append(0)
                continue
            nw, nc, device = self._recordings[rid]
            ptrs.append(self._buffer_arg(call, f"out[{rid}]", o, (int(n), nw, nc),
                                         ("float32",), device, writable=True))
        return ptrs + [0] * (len(self._recordings) - len(out))

    def _step_recorded_args(self, n, args):
        """step_recorded(n) into buffers that _recorded_args checked for n steps and whose
        owner keeps them as they were (flysim.gym's own recording buffer)."""
        self._b.step_recorded(n, args)

    def _buffer_arg(self, call, what, array, shape, dtypes, device, writable=False):
        """The address of `array`, checked: `shape`, one of `dtypes`, C-contiguous, in host
        memory or (device) on this batch's GPU, and writable numpy where `writable`. DLPack
        arrays (numpy, torch, CuPy, JAX), or arrays with only the CUDA array interface
        (Numba's): that interface names no device (the batch's is taken) and its stream is
        not waited for (order the array's writer before this call)."""
        cai = _cai(array)
        if cai is None:
            ptr, ashape, strides, dtype, where, dev = _flysim.array_info(array)
        else:
            ptr, ashape = cai["data"][0], tuple(cai["shape"])
            dtype, where, dev = _CAI_DTYPES.get(cai["typestr"], ""), "cuda", self._device
            strides = cai.get("strides")
            if strides is not None:  # C-contiguous strides given explicitly are C-contiguous
                size, want = np.dtype(cai["typestr"]).itemsize, []
                for n in reversed(ashape):
                    want.insert(0, size)
                    size *= n
                strides = None if tuple(strides) == tuple(want) else strides
        memory_ok = where == "cuda" and dev == self._device if device else where == "cpu"
        if not memory_ok or tuple(ashape) != tuple(shape) or strides is not None \
                or dtype not in dtypes \
                or (writable and isinstance(array, np.ndarray) and not array.flags.writeable):
            raise ValueError(f"flysim: {call}: {what} is {where}:{dev} {dtype or 'other'} "
                             f"{tuple(ashape)}{'' if strides is None else ' (strided)'}; fix: "
                             f"a{' writable' if writable else ''} C-contiguous "
                             f"{' or '.join(dtypes)} array of shape {shape} "
                             f"{f'on cuda:{self._device}' if device else 'in host memory'}")
        return ptr

    # -- health and cost ------------------------------------------------------------------
    def health(self):
        """Every world's health: a dict of arrays (problems, warnings, first_warning, ...)."""
        return self._b.health()

    def info(self):
        """What the batch is and costs (threads, a world's bytes, the kernel's registers)."""
        return self._b.info()

    # -- lifetime -------------------------------------------------------------------------
    def close(self):
        """Close the batch: every later call raises. Arrays taken before stay valid memory
        (the library's batch goes with the last of them)."""
        self._arrays.clear()
        self._b.close()

    @property
    def closed(self):
        return self._b.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"{self.steps} steps"
        return f"flysim.Batch({self.worlds} worlds, {self.backend} {self.precision}, {state})"
