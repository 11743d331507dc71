// The public API (include/flysim/flysim.h) over the backends (common/api/backend.h): the
// batches' handles, every argument checked, the worlds' own models, the control
// sequence's bounds and the recordings' columns.
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mjxmacro.h>

#include "common/api/backend.h"
#include "common/base/error.h"
#include "common/base/mujoco_hooks.h"

// A batch.
typedef struct Batch {
  const fsBackendOps* ops;
  void* self;
  fsBatchOptions opt;
  char model_name[512];
  mjModel* m;      // the library's copy of the model
  mjModel** wm;    // (N) each world's own model (fs_batch_set_param), or NULL: m
  mjData* scratch; // for mj_setConst on a world's model
  int64_t steps;
  // the control sequence's bounds (set: nrow > 0)
  int seq_nrow;
  int64_t seq_maxrow0, seq_step0;
  int64_t seq_maxrow0_world;
  int nrec;
  fsRecordSpec rec[FS_MAX_RECORDINGS];
} Batch;

//---------------------------------- handles -------------------------------------------------------

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static Batch** g_slot;  // (g_nslot) live batches, NULL: free
static uint32_t* g_gen; // (g_nslot) each slot's generation
static uint32_t g_nslot;

static int closed_error(fsBatch b, fsError* err) {
  return fs_fail_status(err, FS_ERR_CLOSED,
                        b.index == 0 ? "flysim: no batch (a zero handle); fix: open one with "
                                       "fs_batch_open and check its status"
                                     : "flysim: the batch was closed (or its open failed); fix: "
                                       "open a new batch with fs_batch_open");
}

static Batch* lookup(fsBatch b) {
  Batch* out = NULL;
  pthread_mutex_lock(&g_lock);
  if (b.index >= 1 && b.index <= g_nslot && g_gen[b.index - 1] == b.generation)
    out = g_slot[b.index - 1];
  pthread_mutex_unlock(&g_lock);
  return out;
}

static int add_handle(Batch* x, fsBatch* out, fsError* err) {
  pthread_mutex_lock(&g_lock);
  uint32_t i = 0;
  while (i < g_nslot && g_slot[i]) i++;
  if (i == g_nslot) {
    Batch** slot = realloc(g_slot, (g_nslot + 1) * sizeof *slot);
    if (slot) g_slot = slot;
    uint32_t* gen = slot ? realloc(g_gen, (g_nslot + 1) * sizeof *gen) : NULL;
    if (gen) g_gen = gen;
    if (!slot || !gen) {
      pthread_mutex_unlock(&g_lock);
      return fs_fail_oom(err, "a batch handle", sizeof(Batch*));
    }
    g_slot[i] = NULL;
    g_gen[i] = 1;
    g_nslot++;
  }
  g_slot[i] = x;
  out->index = i + 1;
  out->generation = g_gen[i];
  pthread_mutex_unlock(&g_lock);
  return 0;
}

static Batch* take_handle(fsBatch b) {
  Batch* out = NULL;
  pthread_mutex_lock(&g_lock);
  if (b.index >= 1 && b.index <= g_nslot && g_gen[b.index - 1] == b.generation) {
    out = g_slot[b.index - 1];
    g_slot[b.index - 1] = NULL;
    g_gen[b.index - 1]++;
  }
  pthread_mutex_unlock(&g_lock);
  return out;
}

// A call's error: the caller's, or a local one when it passed NULL.
#define FS_ERR_LOCAL(err)                                                                          \
  fsError err##_local;                                                                             \
  if (!err) err = &err##_local;                                                                    \
  err->msg[0] = 0;                                                                                 \
  err->status = FS_OK

// The status an internal failure returns.
static int status_of(const fsError* err) {
  return err->status != FS_OK ? (int)err->status : (int)FS_ERR_RUNTIME;
}

#define FS_GET(b, x, err)                                                                          \
  Batch* x = lookup(b);                                                                            \
  if (!x) return closed_error(b, err), FS_ERR_CLOSED

static int arg_error(fsError* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int arg_error(fsError* err, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->status = FS_ERR_ARGUMENT;
  return FS_ERR_ARGUMENT;
}

//---------------------------------- open and close ------------------------------------------------

#ifdef FLYSIM_WITH_CUDA
int fs_cuda_device_count_f32(void); // cuda/device.h's, either real's
int fs_cuda_devices(void) {
  return fs_cuda_device_count_f32();
}
#else
int fs_cuda_devices(void) {
  return 0;
}
#endif

const char* fs_backend_name(fsBackendKind backend) {
  switch (backend) {
  case FS_BACKEND_CPU:
    return "cpu";
  case FS_BACKEND_HOST:
    return "host";
  case FS_BACKEND_CUDA:
    return "cuda";
  }
  return "unknown";
}

fsBatchOptions fs_batch_default_options(void) {
  fsBatchOptions o;
  memset(&o, 0, sizeof o);
  o.backend = FS_BACKEND_CPU;
  o.precision = FS_PRECISION_DEFAULT;
  o.nworld = 1;
  o.model_name = "the model";
  return o;
}

int fs_backend_available(fsBackendKind backend, fsError* err) {
  FS_ERR_LOCAL(err);
  if (backend == FS_BACKEND_CPU || backend == FS_BACKEND_HOST) return FS_OK;
  if (backend != FS_BACKEND_CUDA)
    return arg_error(err, "flysim: backend %d is not one of FS_BACKEND_CPU, _HOST, _CUDA",
                     (int)backend);
#ifdef FLYSIM_WITH_CUDA
  if (fs_cuda_devices() > 0) return FS_OK;
  return fs_fail_status(err, FS_ERR_UNAVAILABLE,
                        "flysim: backend cuda: no CUDA device (no NVIDIA GPU or driver on this "
                        "machine); fix: run on a machine with a GPU, or use the cpu or host "
                        "backend, which work here");
#else
  return fs_fail_status(err, FS_ERR_UNAVAILABLE,
                        "flysim: backend cuda: this flysim was built without CUDA "
                        "(" FLYSIM_NO_CUDA_WHY "); fix: install the CUDA toolkit and rebuild "
                        "with -DFLYSIM_CUDA=ON, or use the cpu or host backend, which work here");
#endif
}

// The backend's open and operations.
static int pick(const fsBatchOptions* o, fsBackendOpen* open, const fsBackendOps** ops) {
  int f64 = o->precision == FS_PRECISION_F64;
  switch (o->backend) {
  case FS_BACKEND_CPU:
    *open = fs_cpu_open, *ops = &fs_cpu_ops;
    return 0;
  case FS_BACKEND_HOST:
    *open = f64 ? fs_host_open_f64 : fs_host_open_f32;
    *ops = f64 ? &fs_host_ops_f64 : &fs_host_ops_f32;
    return 0;
#ifdef FLYSIM_WITH_CUDA
  case FS_BACKEND_CUDA:
    *open = f64 ? fs_cuda_open_f64 : fs_cuda_open_f32;
    *ops = f64 ? &fs_cuda_ops_f64 : &fs_cuda_ops_f32;
    return 0;
#endif
  default:
    return -1;
  }
}

static int check_options(const mjModel* m, fsBatchOptions* o, fsError* err) {
  if (!m) return arg_error(err, "flysim: fs_batch_open: the model is NULL; fix: pass an mjModel");
  if (o->backend != FS_BACKEND_CPU && o->backend != FS_BACKEND_HOST &&
      o->backend != FS_BACKEND_CUDA)
    return arg_error(err, "flysim: backend %d is not one of FS_BACKEND_CPU, _HOST, _CUDA",
                     (int)o->backend);
  if (o->precision == FS_PRECISION_DEFAULT)
    o->precision = o->backend == FS_BACKEND_CPU ? FS_PRECISION_F64 : FS_PRECISION_F32;
  if (o->precision != FS_PRECISION_F32 && o->precision != FS_PRECISION_F64)
    return arg_error(err, "flysim: precision %d is not FS_PRECISION_F32 or _F64",
                     (int)o->precision);
  if (o->backend == FS_BACKEND_CPU && o->precision != FS_PRECISION_F64)
    return arg_error(err, "flysim: the cpu backend is MuJoCo's own, in float64; fix: "
                          "precision FS_PRECISION_F64 (or 0), or the host backend for float32");
  if (o->nworld < 1) return arg_error(err, "flysim: nworld %d: fix: one world or more", o->nworld);
  if (o->nthread < 0)
    return arg_error(err, "flysim: nthread %d: fix: 0 (one per core) or more", o->nthread);
  if (o->max_contacts < 0)
    return arg_error(err, "flysim: max_contacts %d: fix: 0 (every pair's bound) or more",
                     o->max_contacts);
  if (o->max_contacts > 0 && o->backend == FS_BACKEND_CPU)
    return arg_error(err,
                     "flysim: max_contacts %d: the cpu backend is MuJoCo's, which grows its "
                     "arena instead; fix: 0, or the host or cuda backend",
                     o->max_contacts);
  if (o->max_candidates < 0)
    return arg_error(err,
                     "flysim: max_candidates %d: fix: 0 (the pairs tested every step and 8 per "
                     "moving geom) or more",
                     o->max_candidates);
  if (o->max_candidates > 0 && o->backend == FS_BACKEND_CPU)
    return arg_error(err,
                     "flysim: max_candidates %d: the cpu backend is MuJoCo's, which tests every "
                     "pair; fix: 0, or the host or cuda backend",
                     o->max_candidates);
  if (!o->model_name) o->model_name = "the model";
  if (o->backend != FS_BACKEND_CUDA) return 0;
  if (fs_backend_available(FS_BACKEND_CUDA, err)) return -1;
  if (o->device < 0 || o->device >= fs_cuda_devices())
    return arg_error(err, "flysim: device %d, but this machine has %d CUDA device%s; fix: 0 to %d",
                     o->device, fs_cuda_devices(), fs_cuda_devices() == 1 ? "" : "s",
                     fs_cuda_devices() - 1);
  return 0;
}

static void destroy(Batch* x) {
  if (!x) return;
  if (x->self) x->ops->destroy(x->self);
  if (x->wm) {
    for (int w = 0; w < x->opt.nworld; w++)
      if (x->wm[w]) mj_deleteModel(x->wm[w]);
    free(x->wm);
  }
  for (int r = 0; r < x->nrec; r++) {
    free((void*)x->rec[r].cols.src);
    free((void*)x->rec[r].cols.index);
    free((void*)x->rec[r].cols.geom_group);
  }
  if (x->scratch) mj_deleteData(x->scratch);
  if (x->m) mj_deleteModel(x->m);
  free(x);
}

int fs_batch_open(const mjModel* m, const fsBatchOptions* opt, fsBatch* out, fsError* err) {
  FS_ERR_LOCAL(err);
  if (!out) return arg_error(err, "flysim: fs_batch_open: out is NULL; fix: pass a fsBatch*");
  memset(out, 0, sizeof *out);
  fsBatchOptions o = opt ? *opt : fs_batch_default_options();
  if (check_options(m, &o, err)) return status_of(err);
  Batch* x = fs_calloc(err, "a batch", 1, sizeof *x);
  if (!x) return status_of(err);
  snprintf(x->model_name, sizeof x->model_name, "%s", o.model_name);
  o.model_name = x->model_name;
  x->opt = o;
  fsBackendOpen open = NULL;
  pick(&o, &open, &x->ops);
  fs_mujoco_trap_errors();
  x->m = mj_copyModel(NULL, m);
  if (!x->m) {
    fs_fail_oom(err, "a copy of the model", (double)m->nbuffer);
    goto fail;
  }
  x->self = open(x->m, &x->opt, err);
  if (!x->self) goto fail;
  if (add_handle(x, out, err)) goto fail;
  return FS_OK;
fail:;
  int status = status_of(err);
  destroy(x);
  return status;
}

void fs_batch_close(fsBatch b) {
  Batch* x = take_handle(b);
  if (!x) return;
  fsError err;
  (void)x->ops->sync(x->self, &err); // a pending CUDA error goes with the batch
  destroy(x);
}

//---------------------------------- views ---------------------------------------------------------

static int extra_view(const char* name) {
  return !strcmp(name, "problems")            ? FS_VIEW_PROBLEMS
         : !strcmp(name, "solver_iterations") ? FS_VIEW_SOLVER_ITERATIONS
                                              : -1;
}

int fs_batch_view(fsBatch b, const char* name, fsView* out, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!name || !out)
    return arg_error(err, "flysim: fs_batch_view: %s is NULL; fix: pass a view name and an fsView*",
                     !name ? "the name" : "out");
  memset(out, 0, sizeof *out);
  int extra = extra_view(name);
  if (x->ops->view(x->self, extra >= 0 ? NULL : name, extra, out, err)) return status_of(err);
  out->name = extra >= 0 ? (extra == FS_VIEW_PROBLEMS ? "problems" : "solver_iterations") : name;
  return FS_OK;
}

static size_t dtype_size(fsDtype t) {
  return t == FS_DTYPE_F64 ? 8 : 4;
}

static size_t view_bytes(const fsView* v) {
  return (size_t)(v->shape[0] * v->shape[1] * v->shape[2]) * dtype_size(v->dtype);
}

static int copy_view(Batch* x, const char* name, void* host, size_t bytes, int to_host,
                     fsError* err) {
  const char* call = to_host ? "fs_batch_read" : "fs_batch_write";
  if (!host) return arg_error(err, "flysim: %s('%s'): the buffer is NULL", call, name ? name : "");
  fsView v;
  int extra = name ? extra_view(name) : -1;
  if (!name) return arg_error(err, "flysim: %s: the view name is NULL", call);
  memset(&v, 0, sizeof v);
  if (x->ops->view(x->self, extra >= 0 ? NULL : name, extra, &v, err)) return status_of(err);
  if (bytes != view_bytes(&v))
    return arg_error(err,
                     "flysim: %s('%s'): %zu bytes, but the view holds %lld x %lld x %lld %s "
                     "(%zu bytes); fix: a buffer of the view's size",
                     call, name, bytes, (long long)v.shape[0], (long long)v.shape[1],
                     (long long)v.shape[2],
                     v.dtype == FS_DTYPE_F64   ? "float64"
                     : v.dtype == FS_DTYPE_F32 ? "float32"
                                               : "int32",
                     view_bytes(&v));
  if (!to_host && !v.writable)
    return arg_error(err,
                     "flysim: fs_batch_write('%s'): not an input; fix: write ctrl, qpos, qvel, "
                     "qfrc_applied, mocap_pos or mocap_quat (and act, xfrc_applied on the cpu "
                     "backend)",
                     name);
  if (v.memory == FS_MEMORY_DEVICE) {
    if (x->ops->copy(x->self, &v, host, to_host, err)) return status_of(err);
    return FS_OK;
  }
  // world by world: a host batch's worlds lie strides[0] elements apart
  size_t world = bytes / (size_t)v.shape[0], stride = (size_t)v.strides[0] * dtype_size(v.dtype);
  for (int64_t w = 0; w < v.shape[0]; w++) {
    char* data = (char*)v.data + (size_t)w * stride;
    char* buf = (char*)host + (size_t)w * world;
    if (to_host)
      memcpy(buf, data, world);
    else
      memcpy(data, buf, world);
  }
  return FS_OK;
}

int fs_batch_read(fsBatch b, const char* name, void* dst, size_t bytes, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  return copy_view(x, name, dst, bytes, 1, err);
}

int fs_batch_write(fsBatch b, const char* name, const void* src, size_t bytes, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  return copy_view(x, name, (void*)src, bytes, 0, err);
}

//---------------------------------- stepping ------------------------------------------------------

static int step(Batch* x, int nstep, float* const* out, fsError* err) {
  if (nstep < 0) return arg_error(err, "flysim: fs_batch_step: nstep %d; fix: 0 or more", nstep);
  if (nstep == 0) return FS_OK;
  if (x->seq_nrow > 0) {
    int64_t last = x->seq_maxrow0 + (x->steps - x->seq_step0) + nstep - 1;
    if (last >= x->seq_nrow)
      return arg_error(err,
                       "flysim: fs_batch_step(%d): world %lld's control sequence would read row "
                       "%lld, past its last row %d; fix: fewer steps, a longer sequence, or clear "
                       "it (fs_batch_set_ctrl_sequence(b, NULL))",
                       nstep, (long long)x->seq_maxrow0_world, (long long)last, x->seq_nrow - 1);
  }
  for (int r = 0; out && r < x->nrec; r++)
    if (out[r] && nstep > x->rec[r].capacity)
      return arg_error(err,
                       "flysim: fs_batch_step_recorded(%d): recording %d records at most %d steps "
                       "a call; fix: step in calls of at most %d, or a larger capacity",
                       nstep, r, x->rec[r].capacity, x->rec[r].capacity);
  if (x->ops->step(x->self, x->steps, nstep, out, err)) return status_of(err);
  x->steps += nstep;
  return FS_OK;
}

int fs_batch_step(fsBatch b, int nstep, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  return step(x, nstep, NULL, err);
}

int fs_batch_step_recorded(fsBatch b, int nstep, float* const* out, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!out)
    return arg_error(err, "flysim: fs_batch_step_recorded: out is NULL; fix: an array of one "
                          "buffer a recording (NULL entries skip one), or fs_batch_step");
  return step(x, nstep, out, err);
}

int fs_batch_forward(fsBatch b, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!x->ops->forward)
    return arg_error(err,
                     "flysim: fs_batch_forward: the %s backend does not compute mj_forward "
                     "yet; fix: the host or cpu backend, or a step (its derived quantities are "
                     "those of the state before it)",
                     x->ops->name);
  return x->ops->forward(x->self, err) ? status_of(err) : FS_OK;
}

int fs_batch_sync(fsBatch b, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  return x->ops->sync(x->self, err) ? status_of(err) : FS_OK;
}

int64_t fs_batch_steps(fsBatch b) {
  Batch* x = lookup(b);
  return x ? x->steps : -1;
}

// FS_OK, or FS_ERR_ARGUMENT (call `fn`) where key is neither -1 nor one of the model's keyframes.
static int check_keyframe(const Batch* x, const char* fn, int key, fsError* err) {
  if (key >= -1 && key < x->m->nkey) return FS_OK;
  return arg_error(err,
                   "flysim: %s: keyframe %d, but %s has %d keyframe%s; fix: -1 (qpos0) or a "
                   "keyframe's index (mj_name2id(m, mjOBJ_KEY, name))",
                   fn, key, x->model_name, (int)x->m->nkey, x->m->nkey == 1 ? "" : "s");
}

int fs_batch_reset(fsBatch b, const uint8_t* mask, int key, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (check_keyframe(x, "fs_batch_reset", key, err)) return FS_ERR_ARGUMENT;
  return x->ops->reset(x->self, mask, key, err) ? status_of(err) : FS_OK;
}

int fs_batch_reset_device(fsBatch b, const uint8_t* mask, int key, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!x->ops->reset_device)
    return arg_error(err,
                     "flysim: fs_batch_reset_device: a %s batch's memory is the host's; fix: "
                     "fs_batch_reset with a host mask",
                     x->ops->name);
  if (!mask)
    return arg_error(err, "flysim: fs_batch_reset_device: the mask is NULL; fix: N bytes of "
                          "device memory (or fs_batch_reset(b, NULL, key) for every world)");
  if (check_keyframe(x, "fs_batch_reset_device", key, err)) return FS_ERR_ARGUMENT;
  return x->ops->reset_device(x->self, mask, key, err) ? status_of(err) : FS_OK;
}

//---------------------------------- parameters ----------------------------------------------------

// A real-valued array of mjModel by name: its address in m and its size (rows x cols).
static mjtNum* model_array(mjModel* m, const char* name, int* size) {
  MJMODEL_POINTERS_PREAMBLE(m)
  (void)nuser_body, (void)nuser_jnt, (void)nuser_geom, (void)nuser_site, (void)nuser_cam;
  (void)nuser_tendon, (void)nuser_actuator, (void)nuser_sensor, (void)nq, (void)nv, (void)na;
  (void)nu, (void)nmocap;
  if (!strcmp(name, "opt.gravity")) {
    *size = 3;
    return m->opt.gravity;
  }
#define X(type, field, rows, cols)                                                                 \
  if (!strcmp(name, #field) && !strcmp(#type, "mjtNum")) {                                         \
    *size = (int)(m->rows * (cols));                                                               \
    return (mjtNum*)(void*)m->field;                                                               \
  }
  MJMODEL_POINTERS
#undef X
  return NULL;
}

// mj_setConst on world w's model: what MuJoCo derives from its parameters.
static int set_const(Batch* x, int w, const char* name, fsError* err) {
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: fs_batch_set_param('%s'): world %d: MuJoCo's mj_setConst "
                          "failed: %s; fix: values MuJoCo accepts",
                          name, w, trap.msg);
  }
  mj_setConst(x->wm[w], x->scratch);
  fs_mj_trap_set(NULL);
  return 0;
}

int fs_batch_set_param(fsBatch b, const char* name, const int* worlds, int nset,
                       const double* values, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!name || !values)
    return arg_error(err, "flysim: fs_batch_set_param: %s is NULL", !name ? "the name" : "values");
  int N = x->opt.nworld, size = 0;
  if (nset < 1 || nset > N)
    return arg_error(err, "flysim: fs_batch_set_param('%s'): %d worlds; fix: 1 to %d", name, nset,
                     N);
  if (!model_array(x->m, name, &size))
    return arg_error(err,
                     "flysim: fs_batch_set_param('%s'): not a real-valued array of mjModel; fix: "
                     "an mjModel array of that name (e.g. actuator_gainprm, body_mass, "
                     "geom_friction, dof_damping) or opt.gravity",
                     name);
  if (size == 0)
    return arg_error(err, "flysim: fs_batch_set_param('%s'): %s has no such elements", name,
                     x->model_name);
  for (int k = 0; k < nset; k++) {
    int w = worlds ? worlds[k] : k;
    if (w < 0 || w >= N)
      return arg_error(err, "flysim: fs_batch_set_param('%s'): worlds[%d] = %d; fix: 0 to %d", name,
                       k, w, N - 1);
  }
  for (long i = 0; i < (long)nset * size; i++)
    if (!isfinite(values[i]))
      return arg_error(err,
                       "flysim: fs_batch_set_param('%s'): values[%ld] is not finite; fix: finite "
                       "values",
                       name, i);
  if (!x->wm) {
    x->wm = fs_calloc(err, "the worlds' models", (size_t)N, sizeof *x->wm);
    if (!x->wm) return status_of(err);
  }
  if (!x->scratch && !(x->scratch = mj_makeData(x->m)))
    return fs_fail_oom(err, "MuJoCo data", (double)x->m->narena), FS_ERR_MEMORY;
  for (int k = 0; k < nset; k++) {
    int w = worlds ? worlds[k] : k;
    if (!x->wm[w] && !(x->wm[w] = mj_copyModel(NULL, x->m)))
      return fs_fail_oom(err, "a world's model", (double)x->m->nbuffer), FS_ERR_MEMORY;
    int n = 0;
    memcpy(model_array(x->wm[w], name, &n), values + (size_t)k * size, sizeof(mjtNum) * size);
    if (set_const(x, w, name, err)) return FS_ERR_ARGUMENT;
    if (x->ops->set_world_model(x->self, w, x->wm[w], err)) return status_of(err);
  }
  return FS_OK;
}

int fs_batch_set_ctrl_sequence(fsBatch b, const fsCtrlSequence* seq, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!seq) {
    x->seq_nrow = 0;
    return x->ops->set_ctrl_sequence(x->self, NULL, err) ? status_of(err) : FS_OK;
  }
  const char* f = "flysim: fs_batch_set_ctrl_sequence";
  if (seq->nrow < 1 || seq->ncol < 1)
    return arg_error(err, "%s: %d rows, %d columns; fix: one or more of each", f, seq->nrow,
                     seq->ncol);
  if (!seq->value || !seq->actuator || !seq->world_row)
    return arg_error(err, "%s: %s is NULL", f,
                     !seq->value      ? "value"
                     : !seq->actuator ? "actuator"
                                      : "world_row");
  for (int c = 0; c < seq->ncol; c++)
    if (seq->actuator[c] < 0 || seq->actuator[c] >= x->m->nu)
      return arg_error(err, "%s: actuator[%d] = %d, but %s has %d actuators; fix: 0 to %d", f, c,
                       seq->actuator[c], x->model_name, (int)x->m->nu, (int)x->m->nu - 1);
  int64_t maxrow = -1, maxw = 0;
  for (int w = 0; w < x->opt.nworld; w++) {
    if (seq->world_row[w] < 0 || seq->world_row[w] >= seq->nrow)
      return arg_error(err, "%s: world_row[%d] = %lld; fix: 0 to %d (the sequence's rows)", f, w,
                       (long long)seq->world_row[w], seq->nrow - 1);
    if (seq->world_row[w] > maxrow) maxrow = seq->world_row[w], maxw = w;
  }
  for (long i = 0; i < (long)seq->nrow * seq->ncol; i++)
    if (!isfinite(seq->value[i]))
      return arg_error(err, "%s: value[%ld] (row %ld, column %ld) is not finite", f, i,
                       i / seq->ncol, i % seq->ncol);
  fsCtrlSeqSpec spec = {seq->nrow, seq->ncol, seq->value, seq->actuator, seq->world_row, x->steps};
  if (x->ops->set_ctrl_sequence(x->self, &spec, err)) return status_of(err);
  x->seq_nrow = seq->nrow;
  x->seq_maxrow0 = maxrow;
  x->seq_maxrow0_world = maxw;
  x->seq_step0 = x->steps;
  return FS_OK;
}

//---------------------------------- recording -----------------------------------------------------

// Elements of record source s in a world (FS_SRC_GROUP_FORCE: 3 x the geom groups).
static int source_size(const mjModel* m, int s, int ngroup) {
  switch (s) {
  case FS_SRC_QPOS:
    return (int)m->nq;
  case FS_SRC_CTRL:
  case FS_SRC_ACTUATOR_FORCE:
    return (int)m->nu;
  case FS_SRC_SITE_XPOS:
    return 3 * (int)m->nsite;
  case FS_SRC_XPOS:
    return 3 * (int)m->nbody;
  case FS_SRC_XQUAT:
    return 4 * (int)m->nbody;
  case FS_SRC_QVEL:
    return (int)m->nv;
  case FS_SRC_SOLVER:
    return 2;
  case FS_SRC_SENSORDATA:
    return (int)m->nsensordata;
  default:
    return 3 * ngroup;
  }
}

static const char* const kSourceName[FS_NSRC] = {
#define FS_X(id, name) name,
    FS_RECORD_SOURCES(FS_X)
#undef FS_X
};

int fs_batch_add_recording(fsBatch b, const fsRecordOptions* o, int* id, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  const char* f = "flysim: fs_batch_add_recording";
  if (!o || !id) return arg_error(err, "%s: %s is NULL", f, !o ? "the options" : "id");
  if (x->nrec == FS_MAX_RECORDINGS)
    return arg_error(err, "%s: a batch holds %d recordings; fix: record more columns in one", f,
                     FS_MAX_RECORDINGS);
  if (o->ncol < 1 || !o->source || !o->index)
    return arg_error(err, "%s: %d columns (source and index: one each); fix: one or more", f,
                     o->ncol);
  int N = x->opt.nworld, nw = o->nworld ? o->nworld : N - o->world0;
  if (o->world0 < 0 || o->world0 >= N || nw < 1 || o->world0 + nw > N)
    return arg_error(err, "%s: worlds %d to %d of %d; fix: a range within 0 to %d", f, o->world0,
                     o->world0 + nw - 1, N, N - 1);
  if (o->capacity < 1)
    return arg_error(err, "%s: capacity %d; fix: the most steps a call records, 1 or more", f,
                     o->capacity);
  if (o->memory != FS_MEMORY_HOST && o->memory != FS_MEMORY_DEVICE)
    return arg_error(err, "%s: memory %d; fix: FS_MEMORY_HOST or FS_MEMORY_DEVICE", f,
                     (int)o->memory);
  if (o->memory == FS_MEMORY_DEVICE && x->opt.backend != FS_BACKEND_CUDA)
    return arg_error(err,
                     "%s: memory FS_MEMORY_DEVICE, but a %s batch's memory is the host's; fix: "
                     "FS_MEMORY_HOST",
                     f, x->ops->name);
  int ngroup = 0;
  if (o->geom_group)
    for (int g = 0; g < x->m->ngeom; g++) {
      if (o->geom_group[g] >= FS_RECORD_MAX_GROUPS)
        return arg_error(err, "%s: geom_group[%d] = %d; fix: groups 0 to %d, or -1", f, g,
                         o->geom_group[g], FS_RECORD_MAX_GROUPS - 1);
      if (o->geom_group[g] + 1 > ngroup) ngroup = o->geom_group[g] + 1;
    }
  fsRecordSpec* r = &x->rec[x->nrec];
  memset(r, 0, sizeof *r);
  int* src = fs_calloc(err, "a recording", (size_t)o->ncol, sizeof(int));
  int* index = fs_calloc(err, "a recording", (size_t)o->ncol, sizeof(int));
  int* group =
      o->geom_group ? fs_calloc(err, "a recording", (size_t)x->m->ngeom, sizeof(int)) : NULL;
  int rc = !src || !index || (o->geom_group && !group) ? status_of(err) : FS_OK;
  fsView probe; // sensordata: whether the backend computes it
  for (int c = 0; c < o->ncol && !rc; c++) {
    const char* name = o->source[c] ? o->source[c] : "(NULL)";
    int s = 0;
    while (s < FS_NSRC && strcmp(name, kSourceName[s])) s++;
    int size = s < FS_NSRC ? source_size(x->m, s, ngroup) : 0;
    if (s == FS_NSRC)
      rc = arg_error(err,
                     "%s: column %d's source '%s' cannot be recorded; fix: qpos, qvel, ctrl, "
                     "actuator_force, xpos, xquat, site_xpos, solver_iterations, "
                     "group_contact_force or sensordata (other views: fs_batch_read after the "
                     "step)",
                     f, c, name);
    else if (s == FS_SRC_GROUP_FORCE && !o->geom_group)
      rc = arg_error(err,
                     "%s: column %d is group_contact_force, but geom_group is NULL; fix: "
                     "each geom's group",
                     f, c);
    else if (s == FS_SRC_SENSORDATA && x->ops->view(x->self, "sensordata", -1, &probe, err))
      rc = status_of(err); // the backend's reason: it does not compute them (all)
    else if (o->index[c] < 0 || o->index[c] >= size)
      rc = arg_error(err, "%s: column %d: index %d of %s, which has %d a world; fix: 0 to %d", f, c,
                     o->index[c], name, size, size - 1);
    else
      src[c] = s, index[c] = o->index[c];
  }
  if (rc) {
    free(src), free(index), free(group);
    return rc;
  }
  if (group) memcpy(group, o->geom_group, sizeof(int) * (size_t)x->m->ngeom);
  r->cols = (fsRecordCols){o->ncol, src, index, group, o->world0, nw};
  r->capacity = o->capacity;
  r->memory = o->memory;
  if (x->ops->add_recording(x->self, x->nrec, r, err)) {
    free(src), free(index), free(group);
    memset(r, 0, sizeof *r);
    return status_of(err);
  }
  *id = x->nrec++;
  return FS_OK;
}

//---------------------------------- health and cost -----------------------------------------------

int fs_batch_health(fsBatch b, fsWorldHealth* out, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!out) return arg_error(err, "flysim: fs_batch_health: out is NULL; fix: N fsWorldHealth");
  return x->ops->health(x->self, out, err) ? status_of(err) : FS_OK;
}

int fs_batch_info(fsBatch b, fsBatchInfo* out, fsError* err) {
  FS_ERR_LOCAL(err);
  FS_GET(b, x, err);
  if (!out) return arg_error(err, "flysim: fs_batch_info: out is NULL");
  memset(out, 0, sizeof *out);
  if (x->ops->info(x->self, out, err)) return status_of(err);
  out->backend = x->opt.backend;
  out->precision = x->opt.precision;
  out->nworld = x->opt.nworld;
  return FS_OK;
}

mjData* fs_batch_mjdata(fsBatch b, int w) {
  Batch* x = lookup(b);
  if (!x || w < 0 || w >= x->opt.nworld || !x->ops->mjdata) return NULL;
  return x->ops->mjdata(x->self, w);
}
