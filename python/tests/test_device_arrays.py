"""A cuda batch's device arrays, consumed as torch and CuPy would: __cuda_array_interface__
and __dlpack__ read by ctypes (no torch, no CuPy), the device memory they name copied with
CUDA's own calls, ctrl written through the pointer and stepped; and device memory of the
test's own (cudaMalloc, offered through the CUDA array interface) taken by the batch: a
reset mask read on the device and a recording written there.

Skipped where no CUDA device is (CI). On a GPU, or under the GPU simulator
(bench/gpusim/gpusim_check.sh runs it with a module built with -DFLYSIM_CUDART_SHARED=ON), it
opens 2 worlds and takes 1 step a batch: the simulator runs one world-step in seconds.
"""
import ctypes
import ctypes.util
import os

import numpy as np
import pytest

import mujoco
import flysim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MESH = os.path.join(os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets")), "mesh.mjb")
N = 2
# (the cuda backend has no sensordata: it does not compute the sensors)
NAMES = ["ctrl", "qpos", "qvel", "qacc", "xpos", "site_xpos", "actuator_force", "contact_count",
         "problems", "solver_iterations"]
# float64: the bound test_batch.c holds the cuda backend to (the engine's last bits); float32:
# its rounding over a step
BOUND = {"f64": 1e-10, "f32": 1e-3}

_ok, _why = flysim.backend_available("cuda")
pytestmark = pytest.mark.skipif(not _ok, reason=f"no CUDA device: {_why}")


# --- CUDA from ctypes: a consumer of the pointers --------------------------------------------
class Cuda:
    """cudaMemcpy and cudaDeviceSynchronize of a libcudart (the process's own first: the
    module's, when it links the shared one; under the simulator, the simulator's), else the
    driver's cuMemcpy in the device's primary context (the one the runtime uses)."""

    H2D, D2H = 1, 2

    def __init__(self, device):
        names = ["libcudart.so.13", "libcudart.so.12", ctypes.util.find_library("cudart")]
        home = os.environ.get("CUDA_HOME", os.environ.get("CUDA_PATH", "/usr/local/cuda"))
        names += [os.path.join(home, d, "libcudart.so") for d in ("lib64", "lib")]
        self.rt = self.drv = None
        for n in filter(None, names):
            try:
                self.rt = ctypes.CDLL(n)
                self.name = n
                break
            except OSError:
                pass
        if self.rt is None:  # the driver: always there with a GPU
            self.drv = ctypes.CDLL("libcuda.so.1")
            self.name = "libcuda.so.1"
            self.ctx = ctypes.c_void_p()
            self._drv("cuInit", 0)
            self._drv("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), device)

    def _rt(self, fn, *args):
        rc = getattr(self.rt, fn)(*args)
        assert rc == 0, f"{fn}: CUDA error {rc} ({self.name})"

    def _drv(self, fn, *args):
        rc = getattr(self.drv, fn)(*args)
        assert rc == 0, f"{fn}: CUDA driver error {rc}"

    def _memcpy(self, dst, src, nbytes, kind):
        if self.rt is not None:
            self._rt("cudaMemcpy", ctypes.c_void_p(dst), ctypes.c_void_p(src),
                     ctypes.c_size_t(nbytes), kind)
            self._rt("cudaDeviceSynchronize")  # a pageable copy to the device may return early
            return
        self._drv("cuCtxPushCurrent_v2", self.ctx)
        fn = "cuMemcpyHtoD_v2" if kind == self.H2D else "cuMemcpyDtoH_v2"
        self._drv(fn, ctypes.c_uint64(dst) if kind == self.H2D else ctypes.c_void_p(dst),
                  ctypes.c_uint64(src) if kind == self.D2H else ctypes.c_void_p(src),
                  ctypes.c_size_t(nbytes))
        self._drv("cuCtxSynchronize")
        self._drv("cuCtxPopCurrent_v2", ctypes.byref(ctypes.c_void_p()))

    def malloc(self, nbytes):
        """Device memory of nbytes (the caller frees it)."""
        p = ctypes.c_void_p() if self.rt is not None else ctypes.c_uint64()
        if self.rt is not None:
            self._rt("cudaMalloc", ctypes.byref(p), ctypes.c_size_t(nbytes))
        else:
            self._drv("cuCtxPushCurrent_v2", self.ctx)
            self._drv("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(nbytes))
            self._drv("cuCtxPopCurrent_v2", ctypes.byref(ctypes.c_void_p()))
        return p.value

    def free(self, ptr):
        if self.rt is not None:
            self._rt("cudaFree", ctypes.c_void_p(ptr))
        else:
            self._drv("cuMemFree_v2", ctypes.c_uint64(ptr))

    def download(self, ptr, shape, dtype):
        out = np.empty(shape, dtype)
        self._memcpy(out.ctypes.data, ptr, out.nbytes, self.D2H)
        return out

    def upload(self, ptr, values):
        values = np.ascontiguousarray(values)
        self._memcpy(ptr, values.ctypes.data, values.nbytes, self.H2D)


# --- DLPack from ctypes: the capsule's struct (dlpack.h) ------------------------------------
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version_major", ctypes.c_uint32), ("version_minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

KDLCUDA = 2
DL_CODE = {"i": 0, "u": 1, "f": 2}
_capi = ctypes.pythonapi
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def consume_dlpack(capsule, versioned):
    """What a consumer does: take the DLManagedTensor out of the capsule, rename the capsule
    used_dltensor[_versioned] (its destructor then leaves the tensor alone), read the tensor,
    and call the deleter once done. Returns (data, device, ndim, dtype, shape, strides, flags)."""
    name = b"dltensor_versioned" if versioned else b"dltensor"
    assert _capi.PyCapsule_IsValid(capsule, name), f"the capsule is not named {name}"
    p = _capi.PyCapsule_GetPointer(capsule, name)
    assert _capi.PyCapsule_SetName(capsule, b"used_" + name) == 0
    mt = ctypes.cast(p, ctypes.POINTER(DLManagedTensorVersioned if versioned else
                                       DLManagedTensor)).contents
    t = mt.dl_tensor
    shape = tuple(t.shape[k] for k in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[k] for k in range(t.ndim))
    out = (t.data + t.byte_offset, (t.device.device_type, t.device.device_id), t.ndim,
           (t.dtype.code, t.dtype.bits, t.dtype.lanes), shape, strides,
           (mt.version_major, mt.flags) if versioned else None)
    mt.deleter(ctypes.cast(p, type(ctypes.pointer(mt))))
    assert not _capi.PyCapsule_IsValid(capsule, name), "a used capsule must not be taken again"
    return out


# --- the tests -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model():
    if not os.path.exists(MESH):
        pytest.skip(f"no {MESH} (scripts/setup.sh exports it)")
    return mujoco.MjModel.from_binary_path(MESH)


@pytest.fixture(scope="module", params=["f64", "f32"])
def batch(request, model):
    with flysim.Batch(model, N, backend="cuda", precision=request.param) as b:
        b.reset()
        b.sync()
        yield b


@pytest.fixture(scope="module")
def cuda(batch):
    return Cuda(batch.ctrl.device)


def test_cuda_array_interface(batch, cuda):
    for name in NAMES:
        a, want = getattr(batch, name), batch.read(flysim.Batch._VIEWS[name])
        cai = a.__cuda_array_interface__
        assert cai["version"] == 3 and cai["shape"] == want.shape, name
        assert cai["typestr"] == want.dtype.str, name  # '<f8', '<f4', '<i4'
        assert cai["strides"] is None, name  # C-contiguous
        ptr, read_only = cai["data"]
        assert isinstance(ptr, int) and ptr != 0 and ptr == a.ptr, name
        assert read_only == (not a.writable), name
        got = cuda.download(ptr, cai["shape"], np.dtype(cai["typestr"]))
        np.testing.assert_array_equal(got, want, err_msg=f"{name} through its CAI pointer")
    assert batch.ctrl.writable and batch.qpos.writable and not batch.xpos.writable


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack(batch, cuda, versioned):
    for name in NAMES:
        a, want = getattr(batch, name), batch.read(flysim.Batch._VIEWS[name])
        assert a.__dlpack_device__() == (KDLCUDA, a.device), name
        cap = a.__dlpack__(max_version=(1, 0)) if versioned else a.__dlpack__()
        data, device, ndim, dtype, shape, strides, version = consume_dlpack(cap, versioned)
        assert data == a.ptr and device == (KDLCUDA, a.device), name
        assert ndim == want.ndim and shape == want.shape, name
        assert dtype == (DL_CODE[want.dtype.kind], 8 * want.dtype.itemsize, 1), name
        c_strides = tuple(int(s) // want.itemsize for s in want.strides)
        assert strides in (None, c_strides), f"{name}: strides {strides}, not C-contiguous"
        if versioned:  # DLPack 1.x's struct
            assert version[0] == 1, f"{name}: DLPack major version {version[0]}"
        np.testing.assert_array_equal(cuda.download(data, shape, want.dtype), want,
                                      err_msg=f"{name} through its DLPack pointer")
    assert not batch.closed  # the deleter released its hold, not the batch


def test_ctrl_written_on_the_device(model, batch, cuda):
    """ctrl written through the pointers (world 0 through the CAI, world 1 through DLPack),
    then a step: the same as the controls fed through Batch.write (to the bit: one device,
    one code) and as a host batch's step (test_batch.c's bound)."""
    rng = np.random.default_rng(19)
    print(f"seed 19, {batch.precision}, consumer {cuda.name}")
    lo, hi = model.actuator_ctrlrange.T  # (0, 0) where unlimited: 0
    ctrl = (lo + rng.random((N, model.nu)) * (hi - lo)).astype(batch.ctrl.dtype)

    batch.reset()
    batch.sync()  # the batch's stream is not the consumer's: its work done first
    cuda.upload(batch.ctrl.__cuda_array_interface__["data"][0], ctrl[0])
    data = consume_dlpack(batch.ctrl.__dlpack__(), False)[0]
    cuda.upload(data + ctrl[1].nbytes, ctrl[1])
    np.testing.assert_array_equal(batch.read("ctrl"), ctrl)
    batch.step()
    through_pointer = batch.read("qpos")

    batch.reset()
    batch.write("ctrl", ctrl)
    batch.step()
    through_write = batch.read("qpos")
    np.testing.assert_array_equal(through_pointer, through_write)
    assert np.all(np.isfinite(through_pointer))

    with flysim.Batch(model, N, backend="host", precision=batch.precision) as h:
        h.reset()
        h.ctrl[:] = ctrl
        h.step()
        worst = np.abs(h.qpos - through_pointer).max()
    print(f"{batch.precision}: largest |qpos(cuda) - qpos(host)| after a step: {worst:.3g}")
    assert worst <= BOUND[batch.precision]


class CaiArray:
    """Device memory of the test's own, offered as Numba's arrays are: the CUDA array
    interface alone (no DLPack)."""

    def __init__(self, ptr, shape, typestr):
        self._iface = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                       "strides": None, "version": 3}

    @property
    def __cuda_array_interface__(self):
        return self._iface


def test_device_mask_and_device_recording(model, batch, cuda):
    """A reset mask in device memory (Batch.reset with a CUDA array: fs_batch_reset_device)
    resets what the same mask on the host resets, and a device recording (add_recording(
    device=True)) writes into device memory what a host recording lands, to the bit."""
    p = batch.precision
    rec_bytes, cols = N * 2 * 4, [("qpos", 2), ("qvel", 3)]
    out_ptr, mask_ptr = cuda.malloc(rec_bytes), cuda.malloc(N)
    try:
        with flysim.Batch(model, N, backend="cuda", precision=p) as d, \
                flysim.Batch(model, N, backend="cuda", precision=p) as h:
            d.add_recording(cols, capacity=1, device=True)
            h.add_recording(cols, capacity=1)
            for x in (d, h):
                x.reset()
            got = np.zeros((1, N, 2), np.float32)
            d.step_recorded(1, [CaiArray(out_ptr, (1, N, 2), "<f4")])
            h.step_recorded(1, [got])
            d.sync()
            h.sync()
            np.testing.assert_array_equal(cuda.download(out_ptr, (1, N, 2), np.float32), got)
            assert np.isfinite(got).all() and (got != 0).any()
            mask = np.zeros(N, np.uint8)
            mask[-1] = 1
            cuda.upload(mask_ptr, mask)
            d.reset(CaiArray(mask_ptr, (N,), "|u1"), keyframe=None)
            h.reset(mask.astype(bool), keyframe=None)
            qd, qh = d.read("qpos"), h.read("qpos")
            np.testing.assert_array_equal(qd, qh)
            np.testing.assert_array_equal(qd[-1], model.qpos0.astype(qd.dtype))  # qpos0
            assert not np.array_equal(qd[0], qd[-1])  # world 0 kept its step
            with pytest.raises(ValueError, match=r"mask is cuda.*\(3,\).*fix"):
                d.reset(CaiArray(mask_ptr, (N + 1,), "|u1"))
            with pytest.raises(ValueError, match=r"out\[0\] is cuda.*float64"):
                d.step_recorded(1, [CaiArray(out_ptr, (1, N, 1), "<f8")])
    finally:
        cuda.free(out_ptr)
        cuda.free(mask_ptr)


def test_torch_and_cupy(batch):
    """Where torch or CuPy is importable (never under the simulator)."""
    ran = []
    try:
        import torch
        t = torch.from_dlpack(batch.ctrl)
        assert t.data_ptr() == batch.ctrl.ptr and tuple(t.shape) == batch.ctrl.shape
        ran.append("torch")
    except ImportError:
        pass
    try:
        import cupy
        c = cupy.asarray(batch.qpos)
        assert c.data.ptr == batch.qpos.ptr and c.shape == batch.qpos.shape
        np.testing.assert_array_equal(cupy.asnumpy(c), batch.read("qpos"))
        ran.append("cupy")
    except ImportError:
        pass
    if not ran:
        pytest.skip("neither torch nor cupy is importable")
