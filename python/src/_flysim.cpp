// flysim._flysim: the C library (include/flysim/flysim.h) for Python, through nanobind.
//
// One class, _Batch, over an fsBatch: the library's calls one for one, its views as arrays
// that share the batch's memory (numpy on the host; nanobind's array-API arrays, with
// __dlpack__, on a GPU), every status turned into an exception carrying the library's
// message. python/flysim/__init__.py builds the Python API on it (flysim.Batch).
//
// Lifetime: the batch lives in a State held by shared pointers: the _Batch's, and one in
// every array given out (its owner). close() drops the _Batch's (every later call raises);
// the library's batch is closed when the last array is gone too, so an array kept after
// close() is still memory of the batch's, never freed memory.
//
// Threads: step() and step_recorded() release the GIL for the whole call; a mutex a batch
// keeps calls on one batch from overlapping (the library's rule), taken with the GIL
// released so that a waiting thread never holds it.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <flysim/flysim.h>

namespace nb = nanobind;

namespace {

// The library's status as a Python exception with its message.
void raise(int status, const fsError& err) {
  std::string msg = err.msg;
  switch (status) {
  case FS_ERR_ARGUMENT:
  case FS_ERR_MODEL:
    throw nb::value_error(msg.c_str());
  case FS_ERR_MEMORY: // MemoryError with the library's message and fix (not std::bad_alloc's)
    PyErr_SetString(PyExc_MemoryError, msg.c_str());
    throw nb::python_error();
  case FS_ERR_CLOSED:
  case FS_ERR_UNAVAILABLE:
  default:
    throw std::runtime_error(msg);
  }
}

void check(int status, const fsError& err) {
  if (status != FS_OK) raise(status, err);
}

// The batch, shared by the _Batch and the arrays it gave out.
struct State {
  fsBatch b{0, 0};
  std::mutex mu;
  ~State() {
    fs_batch_close(b);
  }
};
using StatePtr = std::shared_ptr<State>;

// A lock on the batch's mutex taken with the GIL released.
struct Lock {
  std::unique_lock<std::mutex> lk;
  explicit Lock(State& s) : lk(s.mu, std::defer_lock) {
    nb::gil_scoped_release release;
    lk.lock();
  }
};

nb::dlpack::dtype dtype_of(fsDtype t) {
  return t == FS_DTYPE_F64   ? nb::dtype<double>()
         : t == FS_DTYPE_F32 ? nb::dtype<float>()
                             : nb::dtype<int32_t>();
}

const char* dtype_name(fsDtype t) {
  return t == FS_DTYPE_F64 ? "float64" : t == FS_DTYPE_F32 ? "float32" : "int32";
}

using HostArray = nb::ndarray<nb::numpy, nb::c_contig>;

class Batch {
public:
  Batch(uintptr_t model, int nworld, int backend, int precision, int max_contacts,
        int max_candidates, int nthread, int device, uintptr_t stream, const std::string& name)
      : s_(std::make_shared<State>()), name_(name) {
    if (!model) throw nb::value_error("flysim: the model is NULL");
    fsBatchOptions o = fs_batch_default_options();
    o.backend = (fsBackendKind)backend;
    o.precision = (fsPrecision)precision;
    o.nworld = nworld;
    o.nthread = nthread;
    o.max_contacts = max_contacts;
    o.max_candidates = max_candidates;
    o.device = device;
    o.stream = reinterpret_cast<void*>(stream); // cuda: the caller's cudaStream_t, 0: the batch's
    o.model_name = name_.c_str();
    fsError err;
    int rc;
    {
      nb::gil_scoped_release release; // building a GPU batch takes a while
      rc = fs_batch_open(reinterpret_cast<const mjModel*>(model), &o, &s_->b, &err);
    }
    check(rc, err);
    nworld_ = nworld;
  }

  // The batch's state, or an exception if closed.
  State& state() {
    if (!s_) throw std::runtime_error("flysim: the batch is closed; fix: open a new flysim.Batch");
    return *s_;
  }

  void close() {
    if (!s_) return;
    { Lock lock(*s_); }
    s_.reset(); // the library's batch closes with the last array that shares it
  }

  bool closed() const {
    return !s_;
  }

  // The view `name`: (ptr, shape, dtype name, memory, device, writable).
  nb::tuple view_info(const std::string& name) {
    State& s = state();
    Lock lock(s);
    fsView v;
    fsError err;
    check(fs_batch_view(s.b, name.c_str(), &v, &err), err);
    std::vector<int64_t> shape(v.shape, v.shape + v.ndim);
    return nb::make_tuple((uintptr_t)v.data, nb::tuple(nb::cast(shape)), dtype_name(v.dtype),
                          v.memory == FS_MEMORY_DEVICE ? "device" : "host", v.device,
                          (bool)v.writable);
  }

  // The view as an array sharing the batch's memory (its owner keeps the batch alive).
  nb::object view(const std::string& name) {
    State& s = state();
    Lock lock(s);
    fsView v;
    fsError err;
    check(fs_batch_view(s.b, name.c_str(), &v, &err), err);
    size_t shape[3];
    for (int k = 0; k < v.ndim; k++) shape[k] = (size_t)v.shape[k];
    auto* keep = new StatePtr(s_);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<StatePtr*>(p); });
    // strides: a host batch's worlds lie further apart than their shape (flysim.h's fsView)
    if (v.memory == FS_MEMORY_HOST)
      return nb::cast(nb::ndarray<nb::numpy>(v.data, (size_t)v.ndim, shape, owner, v.strides,
                                             dtype_of(v.dtype), nb::device::cpu::value, 0),
                      nb::rv_policy::reference);
    return nb::cast(nb::ndarray<nb::array_api>(v.data, (size_t)v.ndim, shape, owner, v.strides,
                                               dtype_of(v.dtype), nb::device::cuda::value,
                                               v.device),
                    nb::rv_policy::reference);
  }

  void read(const std::string& name, HostArray dst) {
    State& s = state();
    Lock lock(s);
    fsError err;
    check(fs_batch_read(s.b, name.c_str(), dst.data(), dst.nbytes(), &err), err);
  }

  void write(const std::string& name, HostArray src) {
    State& s = state();
    Lock lock(s);
    fsError err;
    check(fs_batch_write(s.b, name.c_str(), src.data(), src.nbytes(), &err), err);
  }

  void step(int nstep) {
    State& s = state();
    fsError err;
    int rc;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> g(s.mu);
      rc = fs_batch_step(s.b, nstep, &err);
    }
    check(rc, err);
  }

  // out: a recording's buffer address (the Python layer checks the array's shape, dtype
  // and memory against the recording's) or 0: not this time.
  void step_recorded(int nstep, const std::vector<uintptr_t>& out) {
    State& s = state();
    std::vector<float*> ptr;
    for (uintptr_t o : out) ptr.push_back(reinterpret_cast<float*>(o));
    fsError err;
    int rc;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> g(s.mu);
      rc = fs_batch_step_recorded(s.b, nstep, ptr.data(), &err);
    }
    check(rc, err);
  }

  void sync() {
    State& s = state();
    fsError err;
    int rc;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> g(s.mu);
      rc = fs_batch_sync(s.b, &err);
    }
    check(rc, err);
  }

  void forward() {
    State& s = state();
    fsError err;
    int rc;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> g(s.mu);
      rc = fs_batch_forward(s.b, &err);
    }
    check(rc, err);
  }

  int64_t steps() {
    return fs_batch_steps(state().b);
  }

  void reset(std::optional<nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>, nb::c_contig>> mask,
             int key) {
    State& s = state();
    if (mask && (int)mask->shape(0) != nworld_)
      throw nb::value_error(("flysim: reset: the mask has " + std::to_string(mask->shape(0)) +
                             " entries, the batch " + std::to_string(nworld_) +
                             " worlds; fix: one a world")
                                .c_str());
    Lock lock(s);
    fsError err;
    check(fs_batch_reset(s.b, mask ? mask->data() : nullptr, key, &err), err);
  }

  // mask: the address of N bytes of the batch's device memory (the Python layer checks).
  void reset_device(uintptr_t mask, int key) {
    State& s = state();
    Lock lock(s);
    fsError err;
    check(fs_batch_reset_device(s.b, reinterpret_cast<const uint8_t*>(mask), key, &err), err);
  }

  void set_param(const std::string& name,
                 std::optional<nb::ndarray<nb::numpy, int32_t, nb::ndim<1>, nb::c_contig>> worlds,
                 nb::ndarray<nb::numpy, double, nb::ndim<2>, nb::c_contig> values) {
    State& s = state();
    int nset = (int)values.shape(0);
    if (worlds && (int)worlds->shape(0) != nset)
      throw nb::value_error(("flysim: set_param('" + name +
                             "'): " + std::to_string(worlds->shape(0)) + " worlds but " +
                             std::to_string(nset) + " rows of values; fix: a row a world")
                                .c_str());
    Lock lock(s);
    fsError err;
    check(fs_batch_set_param(s.b, name.c_str(), worlds ? worlds->data() : nullptr, nset,
                             values.data(), &err),
          err);
  }

  void set_ctrl_sequence(nb::ndarray<nb::numpy, double, nb::ndim<2>, nb::c_contig> value,
                         nb::ndarray<nb::numpy, int32_t, nb::ndim<1>, nb::c_contig> actuator,
                         nb::ndarray<nb::numpy, int64_t, nb::ndim<1>, nb::c_contig> world_row) {
    State& s = state();
    if (actuator.shape(0) != value.shape(1))
      throw nb::value_error("flysim: set_ctrl_sequence: one actuator a column of the values");
    if ((int)world_row.shape(0) != nworld_)
      throw nb::value_error("flysim: set_ctrl_sequence: one starting row a world");
    Lock lock(s);
    fsCtrlSequence seq = {(int)value.shape(0), (int)value.shape(1), value.data(), actuator.data(),
                          world_row.data()};
    fsError err;
    check(fs_batch_set_ctrl_sequence(s.b, &seq, &err), err);
  }

  void clear_ctrl_sequence() {
    State& s = state();
    Lock lock(s);
    fsError err;
    check(fs_batch_set_ctrl_sequence(s.b, nullptr, &err), err);
  }

  int add_recording(const std::vector<std::string>& source,
                    nb::ndarray<nb::numpy, int32_t, nb::ndim<1>, nb::c_contig> index,
                    std::optional<nb::ndarray<nb::numpy, int32_t, nb::ndim<1>, nb::c_contig>> group,
                    int world0, int nworld, int capacity, bool device) {
    State& s = state();
    if (index.shape(0) != source.size())
      throw nb::value_error("flysim: add_recording: one index a source");
    std::vector<const char*> src;
    for (auto& x : source) src.push_back(x.c_str());
    fsRecordOptions o = {(int)source.size(),
                         src.data(),
                         index.data(),
                         group ? group->data() : nullptr,
                         world0,
                         nworld,
                         capacity,
                         device ? FS_MEMORY_DEVICE : FS_MEMORY_HOST};
    Lock lock(s);
    int id = -1;
    fsError err;
    check(fs_batch_add_recording(s.b, &o, &id, &err), err);
    return id;
  }

  // Every world's health: a dict of arrays (N, or N x 8 warnings).
  nb::dict health() {
    State& s = state();
    std::vector<fsWorldHealth> h((size_t)nworld_);
    {
      Lock lock(s);
      fsError err;
      check(fs_batch_health(s.b, h.data(), &err), err);
    }
    size_t n = (size_t)nworld_;
    auto col = [&](auto get) {
      auto* a = new int64_t[n];
      for (size_t w = 0; w < n; w++) a[w] = get(h[w]);
      nb::capsule own(a, [](void* p) noexcept { delete[] static_cast<int64_t*>(p); });
      return nb::ndarray<nb::numpy, int64_t>(a, {n}, own);
    };
    auto* warn = new int32_t[n * 8];
    for (size_t w = 0; w < n; w++) memcpy(warn + 8 * w, h[w].warnings, sizeof h[w].warnings);
    nb::capsule own(warn, [](void* p) noexcept { delete[] static_cast<int32_t*>(p); });
    nb::dict d;
    d["warnings"] = nb::ndarray<nb::numpy, int32_t>(warn, {n, 8}, own);
    d["first_warning"] = col([](const fsWorldHealth& x) { return (int64_t)x.first_warning; });
    d["first_warning_step"] = col([](const fsWorldHealth& x) { return x.first_warning_step; });
    d["solver_limit"] = col([](const fsWorldHealth& x) { return (int64_t)x.solver_limit; });
    d["solver_error"] = col([](const fsWorldHealth& x) { return (int64_t)x.solver_error; });
    d["peak_contacts"] = col([](const fsWorldHealth& x) { return (int64_t)x.peak_contacts; });
    d["fatal"] = col([](const fsWorldHealth& x) { return (int64_t)x.fatal; });
    d["problems"] = col([](const fsWorldHealth& x) { return (int64_t)x.problems; });
    return d;
  }

  nb::dict info() {
    State& s = state();
    fsBatchInfo i;
    {
      Lock lock(s);
      fsError err;
      check(fs_batch_info(s.b, &i, &err), err);
    }
    nb::dict d;
    d["backend"] = fs_backend_name(i.backend);
    d["precision"] = i.precision == FS_PRECISION_F32 ? "f32" : "f64";
    d["worlds"] = i.nworld;
    d["threads"] = i.nthread;
    d["contacts"] = i.contacts;
    d["world_bytes"] = i.world_bytes;
    d["model_bytes"] = i.model_bytes;
    d["chip_bytes"] = i.chip_bytes;
    d["kernel_registers"] = i.kernel_registers;
    d["kernel_occupancy"] = i.kernel_occupancy;
    d["uses_graph"] = (bool)i.uses_graph;
    d["description"] = std::string(i.description);
    return d;
  }

private:
  StatePtr s_;
  std::string name_;
  int nworld_ = 0;
};

} // namespace

// What a DLPack-exporting array (numpy, torch, CuPy, JAX, the batch's own) is: (address,
// shape, strides in elements or None: C-contiguous, dtype name or "", device type
// "cpu"/"cuda"/other, device id). Nothing is copied; the array stays the caller's.
nb::tuple array_info(nb::handle obj) {
  nb::ndarray<nb::ro> a; // read-only too: the callers check what they write
  if (!nb::try_cast(obj, a, false))
    throw nb::value_error(("flysim: a " + std::string(nb::type_name(obj.type()).c_str()) +
                           " is not an array; fix: a numpy array, or a device array with "
                           "__dlpack__ (torch, CuPy, JAX)")
                              .c_str());
  std::vector<int64_t> shape, strides;
  bool contig = true;
  int64_t want = 1;
  for (size_t k = a.ndim(); k-- > 0;) {
    if (a.shape(k) != 1 && a.stride(k) != want) contig = false;
    want *= a.shape(k);
  }
  for (size_t k = 0; k < a.ndim(); k++) {
    shape.push_back(a.shape(k));
    strides.push_back(a.stride(k));
  }
  nb::dlpack::dtype t = a.dtype();
  std::string dt = t == nb::dtype<float>()     ? "float32"
                   : t == nb::dtype<double>()  ? "float64"
                   : t == nb::dtype<int32_t>() ? "int32"
                   : t == nb::dtype<uint8_t>() ? "uint8"
                   : t == nb::dtype<bool>()    ? "bool"
                                               : "";
  int dev = a.device_type();
  const char* where = dev == nb::device::cpu::value    ? "cpu"
                      : dev == nb::device::cuda::value ? "cuda"
                                                       : "other";
  nb::object st = contig ? nb::none() : nb::cast(strides);
  return nb::make_tuple((uintptr_t)a.data(), nb::tuple(nb::cast(shape)), st, dt, where,
                        a.device_id());
}

NB_MODULE(_flysim, m) {
  m.doc() = "flysim's C library (include/flysim/flysim.h); use flysim.Batch";
  m.attr("BACKEND_CPU") = (int)FS_BACKEND_CPU;
  m.attr("BACKEND_HOST") = (int)FS_BACKEND_HOST;
  m.attr("BACKEND_CUDA") = (int)FS_BACKEND_CUDA;
  m.attr("PROBLEM_WARNING") = (int)FS_PROBLEM_WARNING;
  m.attr("PROBLEM_CONTACTS") = (int)FS_PROBLEM_CONTACTS;
  m.attr("PROBLEM_SOLVER") = (int)FS_PROBLEM_SOLVER;
  m.attr("PROBLEM_FAILED") = (int)FS_PROBLEM_FAILED;
  m.attr("STEPS_PER_LAUNCH") = FLYSIM_STEPS_PER_LAUNCH;
  m.def("version", []() { return std::string(fs_version_string()); });
  m.def("array_info", &array_info, nb::arg("array"));
  m.def("backend_available", [](int kind) {
    fsError err;
    int rc = fs_backend_available((fsBackendKind)kind, &err);
    return nb::make_tuple(rc == FS_OK, rc == FS_OK ? std::string() : std::string(err.msg));
  });
  nb::class_<Batch>(m, "_Batch")
      .def(nb::init<uintptr_t, int, int, int, int, int, int, int, uintptr_t, const std::string&>(),
           nb::arg("model"), nb::arg("worlds"), nb::arg("backend"), nb::arg("precision"),
           nb::arg("max_contacts"), nb::arg("max_candidates"), nb::arg("threads"),
           nb::arg("device"), nb::arg("stream"), nb::arg("name"))
      .def("close", &Batch::close)
      .def_prop_ro("closed", &Batch::closed)
      .def("view", &Batch::view, nb::arg("name"))
      .def("view_info", &Batch::view_info, nb::arg("name"))
      .def("read", &Batch::read, nb::arg("name"), nb::arg("dst"))
      .def("write", &Batch::write, nb::arg("name"), nb::arg("src"))
      .def("step", &Batch::step, nb::arg("n"))
      .def("step_recorded", &Batch::step_recorded, nb::arg("n"), nb::arg("out"))
      .def("sync", &Batch::sync)
      .def("forward", &Batch::forward)
      .def_prop_ro("steps", &Batch::steps)
      .def("reset", &Batch::reset, nb::arg("mask").none(), nb::arg("key"))
      .def("reset_device", &Batch::reset_device, nb::arg("mask"), nb::arg("key"))
      .def("set_param", &Batch::set_param, nb::arg("name"), nb::arg("worlds").none(),
           nb::arg("values"))
      .def("set_ctrl_sequence", &Batch::set_ctrl_sequence, nb::arg("value"), nb::arg("actuator"),
           nb::arg("world_row"))
      .def("clear_ctrl_sequence", &Batch::clear_ctrl_sequence)
      .def("add_recording", &Batch::add_recording, nb::arg("source"), nb::arg("index"),
           nb::arg("geom_group").none(), nb::arg("world0"), nb::arg("nworld"), nb::arg("capacity"),
           nb::arg("device"))
      .def("health", &Batch::health)
      .def("info", &Batch::info);
}
