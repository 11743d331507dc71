// The cuda backend (common/api/backend.h): every world of a batch on one GPU, stepped by the
// step kernel (cuda/step_kernel.cuh) from CUDA graphs on the batch's stream.
//
// A step call queues launches of FLYSIM_STEPS_PER_LAUNCH steps (the rest one at a time), each
// a graph captured once (the step kernel, then the counter's advance) and replayed, or
// the kernels themselves under FLYSIM_NO_GRAPH=1; each launch is an NVTX `step` range. The
// call returns without waiting. Per world and step the kernel sets ctrl from the control
// sequence (when one is set), steps (fs_step), writes the recordings this call records
// into the current half of their device double buffers, and notes the world's health
// (common/model/health.h). The kernel's arguments that change from call to call (the batch's
// step count, the recordings it records, the half) live in a device counter set in stream
// order by a one-thread kernel, so one graph serves every call.
//
// Recording: a call that records writes half h of each recorded buffer; an event after its
// launches, then on the copy stream the copy of that half into the same half of the
// pinned buffer, and the event copied[h]. The NEXT step call (or sync), after queuing its
// own work, waits for copied[h] and copies the pinned half into the caller's out[r]: the
// copy and the caller's use of one buffer overlap the next call's steps. A call never
// writes a half whose copy is pending (its steps wait for copied[h] on the device). A device
// recording (FS_MEMORY_DEVICE) is instead copied from half h into the caller's device buffer on
// the batch's stream right after the launches: nothing is pending, nothing lands later.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <mujoco/mjxmacro.h>

#include "common/api/backend.h"
#include "common/base/nvtx.h"
#include "cuda/cuda_try.h"
#include "cuda/device.h"
#include "cuda/kernel_world.cuh"
#include "common/model/health.h"
#include "common/model/model.h"
#include "common/model/onchip.h"
#include "common/model/record.h"
#include "common/model/worlds.h"
#include "cuda/step_kernel.cuh"

// This build's names (common/exec/real.h FS_PREC), as common/api/backend.h declares them.
#define fs_cuda_open FS_PREC(fs_cuda_open)
#define fs_cuda_ops  FS_PREC(fs_cuda_ops)

/// The data fields of the state (FS_STAGE_STATE), counted off the table: the most a
/// reset uploads.
#define FSI_COUNT_STATE(type, name, size, cols, stage, kind) +(FS_STAGE_##stage == FS_STAGE_STATE)
enum { FS_MAX_STATE = 0 FS_DATA_FIELDS(FSI_COUNT_STATE) };
#undef FSI_COUNT_STATE

//---------------------------------- the backend's kernels -----------------------------------------
// (the step kernel's: cuda/step_kernel.cuh) the counter's start and advance, in stream order
// around the step kernel's launches, and the masked reset's scatter

namespace FS_KERNELS {

static __global__ void advance_kernel(Counter* counter, int nstep) {
  counter->step += nstep;
  counter->slot += nstep;
}

// A call's start, in stream order: its values travel as the launch's arguments, so no
// host buffer is rewritten while an earlier launch may still read it.
static __global__ void start_kernel(Counter* counter, long long step, int half, int mask) {
  counter->step = step;
  counter->slot = 0;
  counter->half = half;
  counter->mask = mask;
}

// What a reset scatters: the state fields of n worlds, packed world after world in src[f],
// into world worlds[k]'s slice of dst[f]; and their health from zero.
struct ResetArgs {
  int n, nfield;
  const int* worlds;       // (n)
  const uint8_t* mask;     // (n = N) device memory, or NULL: the n worlds of `worlds`
  char* dst[FS_MAX_STATE]; // each field's base pointer
  const char* src[FS_MAX_STATE];
  int words[FS_MAX_STATE]; // a world's 4-byte words of the field
  fsHealthArrays health;
};

// A block a reset world.
static __global__ void reset_kernel(const __grid_constant__ ResetArgs a) {
  int k = (int)blockIdx.x;
  if (k >= a.n || (a.mask && !a.mask[k])) return;
  int w = a.worlds[k]; // (with a mask, every world packed: worlds[k] = k)
  for (int f = 0; f < a.nfield; f++) {
    int n = a.words[f];
    int* dst = (int*)(void*)a.dst[f] + (size_t)w * n;
    const int* src = (const int*)(const void*)a.src[f] + (size_t)k * n;
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x) dst[i] = src[i];
  }
  if (threadIdx.x == 0) fs_health_clear(&a.health, w);
}

} // namespace FS_KERNELS
using namespace FS_KERNELS;

//---------------------------------- the batch -----------------------------------------------------

namespace {

// A recording (fs_batch_add_recording).
struct Recording {
  int capacity;
  fsMemory memory; // of the caller's buffers
  size_t row;      // floats a step: nworld x ncol
  float* d_buf;    // (2 x capacity x row) on the device
  float* h_buf;    // its pinned copy
  int *d_src, *d_index, *d_group;
};

// A step call's recordings, landing in the caller's buffers at the next call or sync.
struct Pending {
  int active, half, nstep;
  float* out[FS_MAX_RECORDINGS];
};

struct Batch {
  const mjModel* m;   // the batch's model (the library's copy)
  fsBatchOptions opt; // model_name: the library's, alive as long as the batch
  int N, device, use_graph;
  fsModel hm; // the host model (sizes; the device copy is dev's)
  fsDevice* dev;
  cudaStream_t stream;      // the batch's: the caller's, or dev's own
  cudaStream_t capture;     // where the graphs are captured (never the caller's stream)
  cudaStream_t copy;        // the recordings' copies to pinned memory
  cudaEvent_t stepped;      // a recording call's steps done
  cudaEvent_t copied[2];    // half h copied to the pinned buffers
  cudaGraphExec_t graph[2]; // [0]: FLYSIM_STEPS_PER_LAUNCH steps, [1]: one
  int models_stale, plan_stale, graphs_stale;
  Counter* d_counter;
  long long cnt_step; // the counter's step after the queued work (-1: unknown)
  int cnt_mask;       // ... and its mask
  // the worlds' own models (set_world_model): the library's mjModel and its build
  const mjModel** wmj; // (N) or NULL entries: the batch's
  fsModel* wm;         // (N)
  int nwm;
  unsigned char global[FS_NDATA_FIELD]; // fields viewed: never on-chip
  // the control sequence: the host's copy (nrow 0: none), and the device's
  fsCtrlSeq seq;
  fsReal* d_table;
  size_t table_cap;
  int* d_actuator;
  int actuator_cap;
  int64_t* d_world_row;
  // recordings
  int nrec, half;
  Recording rec[FS_MAX_RECORDINGS];
  RecArgs* d_rec; // (FS_MAX_RECORDINGS)
  Pending pend;
  // health: device arrays and their host copies
  fsHealthArrays dh, hh;
  int* h_warn; // (N x FS_NWARNING)
  // reset: the state fields, MuJoCo's data, one world's data, the device's staging
  int nstate;
  const fsFieldInfo* state[FS_MAX_STATE];
  size_t state_bytes; // a world's state
  mjData* md;
  fsWorlds one;
  char* d_reset; // (N x state_bytes, then N ints)
  char* d_image; // a device mask's reset: every world's state for keyframe image_key, as
                 // d_reset's (allocated at the first such reset)
  int image_key; // -2: none (a world's model changed since)
  size_t image_off[FS_MAX_STATE];
  void* write_buf; // fs_batch_write's staging copy (pageable)
  size_t write_cap;
};

// The batch's device current for a call, the caller's again after it.
struct DeviceScope {
  int prev, want;
  cudaError_t error;
  explicit DeviceScope(int device) : prev(-1), want(device), error(cudaSuccess) {
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != want) error = cudaSetDevice(want);
  }
  ~DeviceScope() {
    if (prev >= 0 && prev != want) (void)cudaSetDevice(prev);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
};

#define FS_ON_DEVICE(c, err)                                                                       \
  DeviceScope scope_((c)->device);                                                                 \
  FS_CUDA_TRY(scope_.error, err)

} // namespace

// The step kernel's variant c launches (fsStepVariant): Convex, the convex collider in the
// step, if c's model has convex pairs (nccdwork > 0); else Own, each world with its own
// model, where the worlds have them, or Shared, every world with the batch's.
static int variant_of(const Batch* c) {
  return fs_device_model(c->dev)->nccdwork > 0 ? FS_STEP_CONVEX
         : fs_device_world_models(c->dev)      ? FS_STEP_OWN
                                               : FS_STEP_SHARED;
}

// The step kernel c launches.
static const void* kernel_of(const Batch* c) {
  return fs_step_kernel(variant_of(c));
}

//---------------------------------- launches and graphs -------------------------------------------

static StepArgs step_args(const Batch* c) {
  StepArgs a;
  memset(&a, 0, sizeof a);
  a.counter = c->d_counter;
  a.seq = fs_ctrl_rows(&c->seq, c->d_table); // its sizes, with the device's arrays
  a.seq.actuator = c->d_actuator;
  a.seq.world_row = c->d_world_row;
  a.N = c->N;
  a.nrec = c->nrec;
  a.rec = c->d_rec;
  a.health = c->dh;
  return a;
}

// Queue nstep steps on `stream` (the step kernel, then the counter's advance): what a
// graph captures.
static int launch_steps(Batch* c, cudaStream_t stream, int nstep, fsError* err) {
  StepArgs a = step_args(c);
  StepLaunch l;
  l.plan = fs_device_chip_plan(c->dev);
  int lanes = fs_device_lanes(c->dev);
  l.grid = fs_world_grid(c->N, lanes);
  l.block = fs_world_block(lanes);
  l.smem = fs_world_smem(lanes, l.plan->bytes);
  l.stream = stream;
  l.m = fs_device_model(c->dev);
  l.d = fs_device_data(c->dev);
  l.models = fs_device_world_models(c->dev);
  l.a = &a;
  l.nstep = nstep;
  fs_step_launch(variant_of(c), &l);
  FS_CUDA_TRY(cudaGetLastError(), err);
  advance_kernel<<<1, 1, 0, stream>>>(c->d_counter, nstep);
  FS_CUDA_TRY(cudaGetLastError(), err);
  return 0;
}

static int end_capture(cudaStream_t s, cudaGraph_t* g, fsError* err) {
  FS_CUDA_TRY(cudaStreamEndCapture(s, g), err);
  return 0;
}

static int instantiate(cudaGraphExec_t* exec, cudaGraph_t g, fsError* err) {
  FS_CUDA_TRY(cudaGraphInstantiate(exec, g, 0), err);
  return 0;
}

// Capture nstep steps into an executable graph (on the capture stream: the graph is
// launched on the batch's).
static int capture(Batch* c, int nstep, cudaGraphExec_t* exec, fsError* err) {
  cudaGraph_t g = NULL;
  FS_CUDA_TRY(cudaStreamBeginCapture(c->capture, cudaStreamCaptureModeThreadLocal), err);
  int rc = launch_steps(c, c->capture, nstep, err);
  fsError end_err;
  int end = end_capture(c->capture, &g, &end_err);
  if (!rc && !end) rc = instantiate(exec, g, err);
  if (!rc && end) *err = end_err;
  if (g) FS_CUDA_IGNORE(cudaGraphDestroy(g));
  return rc || end ? -1 : 0;
}

static void destroy_graphs(Batch* c) {
  for (int k = 0; k < 2; k++) {
    // an executable graph still running is freed when it completes
    if (c->graph[k]) FS_CUDA_IGNORE(cudaGraphExecDestroy(c->graph[k]));
    c->graph[k] = NULL;
  }
}

// Queue n steps: launches of FLYSIM_STEPS_PER_LAUNCH steps, then of one, each a graph (or the
// kernels themselves), each an NVTX range `step` around its host-side launch.
static int run_steps(Batch* c, int n, fsError* err) {
  while (n > 0) {
    int many = n >= FLYSIM_STEPS_PER_LAUNCH, k = many ? FLYSIM_STEPS_PER_LAUNCH : 1;
    fs_nvtx_push(FS_NVTX_STEP);
    int rc = 0;
    if (!c->use_graph) {
      rc = launch_steps(c, c->stream, k, err);
    } else {
      cudaError_t e = cudaGraphLaunch(c->graph[many ? 0 : 1], c->stream);
      if (e != cudaSuccess)
        rc = fs_fail(err, "CUDA error %s (%s) in cudaGraphLaunch at %s:%d", cudaGetErrorName(e),
                     cudaGetErrorString(e), __FILE__, __LINE__);
    }
    fs_nvtx_pop();
    if (rc) return -1;
    n -= k;
  }
  return 0;
}

// The step's on-chip fields (common/model/onchip.h) but the viewed ones: the budget
// (FLYSIM_ONCHIP_BYTES, else what keeps the step kernel's resident worlds), at most what
// a block's shared memory gives each of its worlds; the kernel's shared-memory attributes.
static int set_chip_plan(Batch* c, fsError* err) {
  const void* kernel = kernel_of(c);
  long share = fs_device_chip_budget(c->dev, kernel, 1, err);
  long most = share < 0 ? -1 : fs_device_chip_budget(c->dev, kernel, 0, err);
  long all = fs_chip_all_bytes(&c->hm);
  long budget = share < 0 || most < 0 ? -1 : fs_chip_budget(share, all, err);
  if (budget < 0) return -1;
  const char* env = getenv("FLYSIM_ONCHIP_BYTES");
  if (env && !strcmp(env, "all") && all > most)
    return fs_fail(err,
                   "FLYSIM_ONCHIP_BYTES=all: a world of %s takes %ld bytes of intermediates, and "
                   "each of a block's %d worlds has %ld; fix: more lanes a world "
                   "(FLYSIM_WORLD_LANES=32: 4 worlds a block), a smaller max_contacts, or a "
                   "number of bytes",
                   c->opt.model_name, all, FS_BLOCK_THREADS / fs_device_lanes(c->dev), most);
  fsChipPlan plan;
  fs_chip_plan_except(&c->hm, budget < most ? budget : most, c->global, &plan);
  if (fs_device_set_chip_plan(c->dev, &plan, err)) return -1;
  return fs_device_kernel_smem(kernel, fs_world_smem(fs_device_lanes(c->dev), plan.bytes), err);
}

// World w's own host model, or NULL: the batch's (fs_device_set_world_models' source).
static const fsModel* world_model(void* arg, int w) {
  const Batch* c = (const Batch*)arg;
  return c->wmj && c->wmj[w] ? &c->wm[w] : NULL;
}

// Before a launch: the worlds' models, the plan and the graphs, when a call changed them.
static int prepare(Batch* c, fsError* err) {
  if (c->models_stale) {
    int rc = 0;
    if (c->nwm > 0)
      rc = fs_device_set_world_models(c->dev, &c->hm, world_model, c, err);
    else if (fs_device_world_models(c->dev))
      rc = fs_device_clear_world_models(c->dev, err);
    if (rc) return -1;
    c->models_stale = 0;
    c->plan_stale = 1; // the other kernel: its own budget and attributes
  }
  if (c->plan_stale) {
    if (set_chip_plan(c, err)) return -1;
    c->plan_stale = 0;
    c->graphs_stale = 1;
  }
  if (c->graphs_stale) {
    destroy_graphs(c);
    for (int k = 0; k < 2 && c->use_graph; k++)
      if (capture(c, k == 0 ? FLYSIM_STEPS_PER_LAUNCH : 1, &c->graph[k], err)) return -1;
    c->graphs_stale = 0;
  }
  return 0;
}

//---------------------------------- stepping ------------------------------------------------------

// The recordings of a step call into the caller's buffers, once their copy is done.
static int land(Batch* c, const Pending* p, fsError* err) {
  if (!p->active) return 0;
  FS_CUDA_TRY(cudaEventSynchronize(c->copied[p->half]), err);
  for (int r = 0; r < c->nrec; r++) {
    const Recording* q = &c->rec[r];
    if (!p->out[r]) continue;
    size_t off = (size_t)p->half * q->capacity * q->row;
    memcpy(p->out[r], q->h_buf + off, (size_t)p->nstep * q->row * sizeof(float));
  }
  return 0;
}

static int cuda_step(void* self, int64_t step, int nstep, float* const* out, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  if (prepare(c, err)) return -1;
  int mask = 0, h = c->half;
  int host_mask = 0; // the recorded ones copied through the pinned buffers
  for (int r = 0; out && r < c->nrec; r++)
    if (out[r]) {
      mask |= 1 << r;
      if (c->rec[r].memory == FS_MEMORY_HOST) host_mask |= 1 << r;
    }
  // never write a half whose copy to the host is pending
  if (mask) FS_CUDA_TRY(cudaStreamWaitEvent(c->stream, c->copied[h], 0), err);
  if (mask || c->cnt_mask || c->cnt_step != (long long)step) {
    c->cnt_step = -1;
    start_kernel<<<1, 1, 0, c->stream>>>(c->d_counter, (long long)step, h, mask);
    FS_CUDA_TRY(cudaGetLastError(), err);
  }
  c->cnt_step = -1;
  if (run_steps(c, nstep, err)) return -1;
  c->cnt_step = (long long)step + nstep;
  c->cnt_mask = mask;
  Pending prev = c->pend;
  memset(&c->pend, 0, sizeof c->pend);
  for (int r = 0; r < c->nrec; r++) { // device recordings: copied in stream order
    const Recording* q = &c->rec[r];
    if (!((mask >> r) & 1) || q->memory != FS_MEMORY_DEVICE) continue;
    FS_CUDA_TRY(cudaMemcpyAsync(out[r], q->d_buf + (size_t)h * q->capacity * q->row,
                                (size_t)nstep * q->row * sizeof(float), cudaMemcpyDeviceToDevice,
                                c->stream),
                err);
  }
  if (host_mask) {
    FS_CUDA_TRY(cudaEventRecord(c->stepped, c->stream), err);
    FS_CUDA_TRY(cudaStreamWaitEvent(c->copy, c->stepped, 0), err);
    for (int r = 0; r < c->nrec; r++) {
      const Recording* q = &c->rec[r];
      if (!((host_mask >> r) & 1)) continue;
      size_t off = (size_t)h * q->capacity * q->row;
      FS_CUDA_TRY(cudaMemcpyAsync(q->h_buf + off, q->d_buf + off,
                                  (size_t)nstep * q->row * sizeof(float), cudaMemcpyDeviceToHost,
                                  c->copy),
                  err);
    }
    FS_CUDA_TRY(cudaEventRecord(c->copied[h], c->copy), err);
    c->pend.active = 1;
    c->pend.half = h;
    c->pend.nstep = nstep;
    for (int r = 0; r < c->nrec; r++) c->pend.out[r] = (host_mask >> r) & 1 ? out[r] : NULL;
  }
  if (mask) c->half = h ^ 1;
  return land(c, &prev, err); // the previous call's, while this call's steps run
}

static int cuda_sync(void* self, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  Pending p = c->pend;
  memset(&c->pend, 0, sizeof c->pend);
  return land(c, &p, err);
}

//---------------------------------- reset ---------------------------------------------------------

// The masked worlds' (mask NULL: every world's) state from MuJoCo's reset of their model
// (keyframe key, -1: qpos0), packed on the host field after field (field f of the k-th
// world at off[f] + k x its bytes), then the worlds' indices: n x state_bytes + n ints,
// allocated (free it).
static char* pack_reset(Batch* c, const uint8_t* mask, int key, int* n_out, size_t* off,
                        fsError* err) {
  int n = 0;
  for (int w = 0; w < c->N; w++) n += !mask || mask[w];
  *n_out = n;
  if (n == 0) return NULL;
  size_t bytes = (size_t)n * (c->state_bytes + sizeof(int)), fb[FS_MAX_STATE];
  char* pack = (char*)fs_calloc(err, "the worlds' reset state", bytes, 1);
  if (!pack) return NULL;
  int* worlds = (int*)(void*)(pack + (size_t)n * c->state_bytes);
  for (int f = 0, at = 0; f < c->nstate; f++) {
    fb[f] = fs_field_bytes(&c->hm, c->state[f]);
    off[f] = (size_t)at * n;
    at += (int)fb[f];
  }
  int kbase = -1;
  for (int w = 0, k = 0; w < c->N; w++) {
    if (mask && !mask[w]) continue;
    const mjModel* mm = c->wmj && c->wmj[w] ? c->wmj[w] : c->m;
    worlds[k] = w;
    if (mm == c->m && kbase >= 0) { // the batch's model: one reset serves every such world
      for (int f = 0; f < c->nstate; f++)
        memcpy(pack + off[f] + k * fb[f], pack + off[f] + kbase * fb[f], fb[f]);
      k++;
      continue;
    }
    if (key >= 0)
      mj_resetDataKeyframe(mm, c->md, key);
    else
      mj_resetData(mm, c->md);
    if (fs_worlds_from_mj(&c->hm, &c->one, 0, mm, c->md, FS_STAGE_STATE, err)) {
      free(pack);
      return NULL;
    }
    for (int f = 0; f < c->nstate; f++)
      memcpy(pack + off[f] + k * fb[f], *fs_field_ptr(&c->one.base, c->state[f]), fb[f]);
    if (mm == c->m) kbase = k;
    k++;
  }
  return pack;
}

// reset_kernel's arguments: n packed worlds at src (pack_reset's layout) into the data.
static ResetArgs reset_args(const Batch* c, int n, const char* src, const size_t* off) {
  ResetArgs a;
  memset(&a, 0, sizeof a);
  a.n = n;
  a.nfield = c->nstate;
  a.worlds = (const int*)(const void*)(src + (size_t)n * c->state_bytes);
  for (int f = 0; f < c->nstate; f++) {
    a.dst[f] = (char*)*fs_field_ptr((void*)fs_device_data(c->dev), c->state[f]);
    a.src[f] = src + off[f];
    a.words[f] = (int)(fs_field_bytes(&c->hm, c->state[f]) / sizeof(int));
  }
  a.health = c->dh;
  return a;
}

// The masked worlds (host mask): their packed state uploaded and scattered by
// reset_kernel, which clears their health too; all in stream order.
static int reset_worlds(Batch* c, const uint8_t* mask, int key, fsError* err) {
  int n;
  size_t off[FS_MAX_STATE];
  char* pack = pack_reset(c, mask, key, &n, off, err);
  if (!pack) return n == 0 ? 0 : -1;
  // pageable: staged before the call returns, so pack may go at once
  cudaError_t e = cudaMemcpyAsync(c->d_reset, pack, (size_t)n * (c->state_bytes + sizeof(int)),
                                  cudaMemcpyHostToDevice, c->stream);
  free(pack);
  FS_CUDA_TRY(e, err);
  reset_kernel<<<(unsigned)n, 32, 0, c->stream>>>(reset_args(c, n, c->d_reset, off));
  FS_CUDA_TRY(cudaGetLastError(), err);
  return 0;
}

static int cuda_reset(void* self, const uint8_t* mask, int key, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  return reset_worlds(c, mask, key, err);
}

// A device mask: every world's reset state for keyframe `key` is packed and uploaded once
// into d_image (again after a world's model changed: image_key -2), then reset_kernel
// copies the worlds whose mask entry, read on the device, is non-zero.
static int cuda_reset_device(void* self, const uint8_t* mask, int key, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  if (!c->d_image)
    FS_CUDA_TRY(cudaMalloc((void**)&c->d_image, (size_t)c->N * (c->state_bytes + sizeof(int))),
                err);
  if (c->image_key != key) {
    int n;
    char* pack = pack_reset(c, NULL, key, &n, c->image_off, err);
    if (!pack) return -1;
    cudaError_t e = cudaMemcpyAsync(c->d_image, pack, (size_t)n * (c->state_bytes + sizeof(int)),
                                    cudaMemcpyHostToDevice, c->stream);
    free(pack);
    FS_CUDA_TRY(e, err);
    c->image_key = key;
  }
  ResetArgs a = reset_args(c, c->N, c->d_image, c->image_off);
  a.mask = mask;
  reset_kernel<<<(unsigned)c->N, 32, 0, c->stream>>>(a);
  FS_CUDA_TRY(cudaGetLastError(), err);
  return 0;
}

//---------------------------------- views ---------------------------------------------------------

// 1 if name is one of MuJoCo's mjData members (arrays, scalars and statistics).
static int is_mjdata(const char* name) {
#define X(type, field, rows, cols)                                                                 \
  if (!strcmp(name, #field)) return 1;
#define XNV X
  MJDATA_POINTERS
  MJDATA_ARENA_POINTERS
  MJDATA_VECTOR
#undef XNV
#undef X
#define X(type, field)                                                                             \
  if (!strcmp(name, #field)) return 1;
  MJDATA_SCALAR
#undef X
  return 0;
}

// The views this backend has, for messages.
static void view_names(char* out, size_t n) {
  size_t at = 0;
  out[0] = 0;
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (!fs_field_is_view(fi)) continue;
    int k = snprintf(out + at, n - at, "%s, ", fi->name);
    if (k < 0 || (size_t)k >= n - at) return;
    at += (size_t)k;
  }
  snprintf(out + at, n - at, "problems, solver_iterations");
}

// Why `name` is no view of this backend (FS_ERR_ARGUMENT).
static int no_view(const Batch* c, const char* name, fsError* err) {
  char names[2048];
  view_names(names, sizeof names);
  int field = 0;
  for (int f = 0; f < fs_data_nfield; f++) field |= !strcmp(fs_data_fields[f].name, name);
  const char* why = field && is_mjdata(name)
                        ? "the cuda backend keeps it in its own layout (a world's contacts and "
                          "constraint rows change from step to step), not as a view"
                    : is_mjdata(name) ? "MuJoCo's data has it, but the cuda backend does not "
                                        "compute it"
                    : field           ? "it is the engine's own working array, not a view"
                                      : "no such view";
  return fs_fail_status(err, FS_ERR_ARGUMENT,
                        "flysim: %s: view '%s': %s; fix: the cpu backend (FS_BACKEND_CPU), which "
                        "has every mjData array, or one of the cuda backend's views: %s",
                        c->opt.model_name, name, why, names);
}

static int cuda_view(void* self, const char* name, int extra, fsView* out, fsError* err) {
  Batch* c = (Batch*)self;
  if (!name) { // problems, solver_iterations
    fs_extra_view(&c->dh, c->N, extra, FS_MEMORY_DEVICE, c->device, out);
    return 0;
  }
  if (!strcmp(name, "sensordata") && c->hm.nsensor > 0)
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: %s: view 'sensordata': the cuda backend does not compute "
                          "sensors yet; fix: the host backend (FS_BACKEND_HOST), which computes "
                          "them on the CPU's threads, or the cpu backend (FS_BACKEND_CPU)",
                          c->opt.model_name);
  int f = 0;
  while (f < fs_data_nfield &&
         (strcmp(fs_data_fields[f].name, name) || !fs_field_is_view(&fs_data_fields[f])))
    f++;
  if (f == fs_data_nfield) return no_view(c, name, err);
  const fsFieldInfo* fi = &fs_data_fields[f];
  fs_data_field_view(&c->hm, fi, c->N, out);
  out->data = *fs_field_ptr((void*)fs_device_data(c->dev), fi);
  out->memory = FS_MEMORY_DEVICE;
  out->device = c->device;
  // a field the step keeps on-chip is never written to global memory: from the next step
  // on it stays there; until then every world's copy reads NaN (ints -1), not a stale or
  // zero value that looks like one (what the last step computed of it is gone)
  if (!c->global[f]) {
    c->global[f] = 1;
    if (fs_device_chip_plan(c->dev)->off[f] >= 0) {
      c->plan_stale = 1;
      FS_CUDA_TRY(
          cudaMemsetAsync(out->data, 0xff, (size_t)c->N * fs_field_bytes(&c->hm, fi), c->stream),
          err);
    }
  }
  return 0;
}

static size_t view_bytes(const fsView* v) {
  return (size_t)(v->shape[0] * v->shape[1] * v->shape[2]) * (v->dtype == FS_DTYPE_F64 ? 8 : 4);
}

static int cuda_copy(void* self, const fsView* v, void* host, int to_host, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  size_t n = view_bytes(v);
  if (to_host) {
    FS_CUDA_TRY(cudaMemcpyAsync(host, v->data, n, cudaMemcpyDeviceToHost, c->stream), err);
    FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  } else { // through the batch's pageable copy, which CUDA stages before the call returns:
           // the caller may reuse its buffer at once, even a pinned one
    if (n > c->write_cap) {
      void* p = realloc(c->write_buf, n);
      if (!p) return fs_fail_oom(err, "a staging copy of a view", (double)n);
      c->write_buf = p;
      c->write_cap = n;
    }
    memcpy(c->write_buf, host, n);
    FS_CUDA_TRY(cudaMemcpyAsync(v->data, c->write_buf, n, cudaMemcpyHostToDevice, c->stream), err);
  }
  return 0;
}

//---------------------------------- models, sequences, recordings ---------------------------------

// Build an mjModel of the batch's as the backend steps it: a check failure is the model's
// (FS_ERR_MODEL). The lanes read the rows' chains (efc_J) and factor the Hessian in its
// tree layout, so no world holds the rows or the Hessian dense.
static int build(const mjModel* m, const char* name, const fsBatchOptions* o, fsModel* out,
                 fsError* err) {
  if (!fs_model_build_bounded(m, name, o->max_contacts, o->max_candidates, out, err)) {
    if (fs_model_kernels_lack(out, name, err)) {
      fs_model_free(out);
      return -1;
    }
    fs_model_without_sensors(out); // no sensordata view here: no_view says so
    if (!fs_model_for_lanes(out, name, err)) return 0;
    fs_model_free(out);
    return -1;
  }
  if (err && err->status != FS_ERR_MEMORY && err->status != FS_ERR_ARGUMENT)
    err->status = FS_ERR_MODEL;
  return -1;
}

static int cuda_set_world_model(void* self, int w, const mjModel* m, fsError* err) {
  Batch* c = (Batch*)self;
  if (!m) {
    if (!c->wmj[w]) return 0;
    fs_model_free(&c->wm[w]);
    memset(&c->wm[w], 0, sizeof c->wm[w]);
    c->wmj[w] = NULL;
    c->nwm--;
    c->models_stale = 1;
    c->image_key = -2;
    return 0;
  }
  fsModel fm;
  char name[600];
  snprintf(name, sizeof name, "world %d's model of %s", w, c->opt.model_name);
  if (build(m, name, &c->opt, &fm, err)) return -1;
#define FS_X(size)                                                                                 \
  if (fm.size != c->hm.size) {                                                                     \
    fs_fail_status(err, FS_ERR_ARGUMENT,                                                           \
                   "flysim: world %d's model has %s %d, the batch's model (%s) %d; fix: change "   \
                   "values, not the model's structure",                                            \
                   w, #size, fm.size, c->opt.model_name, c->hm.size);                              \
    fs_model_free(&fm);                                                                            \
    return -1;                                                                                     \
  }
  FS_MODEL_SIZES(FS_X)
#undef FS_X
  if (c->wmj[w])
    fs_model_free(&c->wm[w]);
  else
    c->nwm++;
  c->wm[w] = fm;
  c->wmj[w] = m;
  c->models_stale = 1;
  c->image_key = -2; // its reset state may differ
  return 0;
}

// Device memory of n T, zeroed in stream order (the stream does not wait for the legacy
// stream a plain cudaMemset runs on).
template <typename T> static int device_alloc(const Batch* c, T** p, size_t n, fsError* err) {
  FS_CUDA_TRY(cudaMalloc((void**)p, (n ? n : 1) * sizeof(T)), err);
  FS_CUDA_TRY(cudaMemsetAsync(*p, 0, (n ? n : 1) * sizeof(T), c->stream), err);
  return 0;
}

// host -> device on the batch's stream; src may go on return (pageable memory is staged).
static int upload(const Batch* c, void* dst, const void* src, size_t n, fsError* err) {
  FS_CUDA_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, c->stream), err);
  return 0;
}

// The device's copy of sequence q (the host's, pageable: the caller's may be pinned, whose
// copy would still be pending on return).
static int upload_sequence(Batch* c, const fsCtrlSeq* q, fsError* err) {
  size_t n = (size_t)q->nrow * q->ncol;
  if (n > c->table_cap || q->ncol > c->actuator_cap) { // queued steps may read the old ones
    FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
    if (n > c->table_cap) {
      if (c->d_table) FS_CUDA_TRY(cudaFree(c->d_table), err);
      c->d_table = NULL;
      c->table_cap = 0;
      if (device_alloc(c, &c->d_table, n, err)) return -1;
      c->table_cap = n;
    }
    if (q->ncol > c->actuator_cap) {
      if (c->d_actuator) FS_CUDA_TRY(cudaFree(c->d_actuator), err);
      c->d_actuator = NULL;
      c->actuator_cap = 0;
      if (device_alloc(c, &c->d_actuator, (size_t)q->ncol, err)) return -1;
      c->actuator_cap = q->ncol;
    }
  }
  if (!c->d_world_row && device_alloc(c, &c->d_world_row, (size_t)c->N, err)) return -1;
  fsReal* table = fs_ctrl_seq_reals(q, err);
  if (!table) return -1;
  int rc = upload(c, c->d_table, table, n * sizeof(fsReal), err);
  free(table);
  if (rc || upload(c, c->d_actuator, q->actuator, sizeof(int) * q->ncol, err) ||
      upload(c, c->d_world_row, q->world_row, sizeof(int64_t) * c->N, err))
    return -1;
  return 0;
}

static int cuda_set_ctrl_sequence(void* self, const fsCtrlSeqSpec* seq, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  if (!seq) {
    c->graphs_stale |= c->seq.nrow > 0;
    fs_ctrl_seq_free(&c->seq);
    return 0;
  }
  fsCtrlSeq q = {};
  if (fs_ctrl_seq_set(&q, seq, c->N, err)) return -1;
  if (upload_sequence(c, &q, err)) {
    fs_ctrl_seq_free(&q);
    return -1;
  }
  fs_ctrl_seq_free(&c->seq);
  c->seq = q;
  c->graphs_stale = 1;
  return 0;
}

static int cuda_add_recording(void* self, int id, const fsRecordSpec* spec, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  const fsRecordCols* l = &spec->cols;
  Recording* q = &c->rec[id];
  memset(q, 0, sizeof *q);
  q->capacity = spec->capacity;
  q->memory = spec->memory;
  q->row = (size_t)l->nworld * l->ncol;
  size_t n = 2 * (size_t)q->capacity * q->row, C = (size_t)l->ncol, ngeom = (size_t)c->hm.ngeom;
  if (device_alloc(c, &q->d_src, C, err) || device_alloc(c, &q->d_index, C, err) ||
      upload(c, q->d_src, l->src, C * sizeof(int), err) ||
      upload(c, q->d_index, l->index, C * sizeof(int), err) || device_alloc(c, &q->d_buf, n, err))
    return -1;
  if (l->geom_group && (device_alloc(c, &q->d_group, ngeom, err) ||
                        upload(c, q->d_group, l->geom_group, ngeom * sizeof(int), err)))
    return -1;
  FS_CUDA_TRY(cudaMallocHost((void**)&q->h_buf, n * sizeof(float)), err);
  RecArgs a;
  memset(&a, 0, sizeof a);
  a.cols = *l;
  a.cols.src = q->d_src;
  a.cols.index = q->d_index;
  a.cols.geom_group = q->d_group;
  a.buf = q->d_buf;
  a.cap = q->capacity;
  // a struct of the host's in the device's layout (the same compiler's)
  RecArgs* staged = (RecArgs*)fs_calloc(err, "a recording", 1, sizeof(RecArgs));
  if (!staged) return -1;
  *staged = a;
  int rc = upload(c, c->d_rec + id, staged, sizeof(RecArgs), err);
  free(staged);
  if (rc) return -1;
  c->nrec = id + 1;
  c->graphs_stale = 1;
  return 0;
}

//---------------------------------- health and cost -----------------------------------------------

static int cuda_health(void* self, fsWorldHealth* out, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  size_t ni = (size_t)c->N * sizeof(int);
  const fsData* d = fs_device_data(c->dev);
  struct {
    void* dst;
    const void* src;
    size_t n;
  } copies[] = {
      {c->h_warn, d->warning_number, ni * FS_NWARNING},
      {c->hh.first, c->dh.first, ni},
      {c->hh.first_step, c->dh.first_step, (size_t)c->N * sizeof(long long)},
      {c->hh.limit, c->dh.limit, ni},
      {c->hh.errors, c->dh.errors, ni},
      {c->hh.peak, c->dh.peak, ni},
      {c->hh.problems, c->dh.problems, ni},
      {c->hh.iterations, c->dh.iterations, 2 * ni},
  };
  for (const auto& k : copies)
    FS_CUDA_TRY(cudaMemcpyAsync(k.dst, k.src, k.n, cudaMemcpyDeviceToHost, c->stream), err);
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  for (int w = 0; w < c->N; w++)
    fs_health_read(&c->hh, w, c->h_warn + (size_t)w * FS_NWARNING, &out[w]);
  return 0;
}

static int device_props(int dev, cudaDeviceProp* p, int* runtime, int* driver, int* clock_khz,
                        fsError* err) {
  FS_CUDA_TRY(cudaGetDeviceProperties(p, dev), err);
  FS_CUDA_TRY(cudaRuntimeGetVersion(runtime), err);
  FS_CUDA_TRY(cudaDriverGetVersion(driver), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(clock_khz, cudaDevAttrClockRate, dev), err);
  return 0;
}

// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, 1980 MHz), driver 13.0, CUDA runtime 13.0,
// float32, 220 contacts, ..., 4 lanes a world, 10 of 81 intermediates ... on-chip"
static void describe(const Batch* c, char* out, size_t n) {
  int rt = 0, drv = 0, khz = 0;
  cudaDeviceProp p;
  fsError err;
  if (device_props(c->device, &p, &rt, &drv, &khz, &err)) {
    if (snprintf(out, n, "unknown CUDA device (%s)", err.msg) < 0) out[0] = 0; // (truncated)
    return;
  }
  const fsChipPlan* plan = fs_device_chip_plan(c->dev);
  char world[128];
  fs_world_describe(&c->hm, world, sizeof world);
  int k = snprintf(
      out, n,
      "%s (sm_%d%d, %d SMs, %.1f GiB, %d MHz), driver %d.%d, CUDA runtime %d.%d, %s, %s, %d "
      "lanes a world, %d of %d intermediates (%d B of %.1f KiB) a world on-chip%s",
      p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, khz / 1000,
      drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, FS_REAL_NAME, world,
      fs_device_lanes(c->dev), plan->nfield, plan->nallow, plan->bytes,
      (double)plan->allow_bytes / 1024.0, c->nwm ? ", worlds with their own models" : "");
  if (k < 0) out[0] = 0; // (a longer one is cut at n)
}

static int cuda_info(void* self, fsBatchInfo* out, fsError* err) {
  Batch* c = (Batch*)self;
  FS_ON_DEVICE(c, err);
  if (prepare(c, err)) return -1; // what the next step launches
  out->nthread = 0;
  out->contacts = c->hm.nconmax;
  out->world_bytes = (double)fs_world_bytes(&c->hm);
  out->model_bytes = (double)fs_model_bytes(&c->hm);
  fsKernelInfo k;
  if (fs_device_kernel_info(c->dev, kernel_of(c), &k, err)) return -1;
  out->chip_bytes = k.chip_bytes;
  out->kernel_registers = k.registers;
  out->kernel_local_bytes = k.local_bytes;
  out->kernel_shared_bytes = k.shared_bytes;
  out->kernel_block = k.block_threads;
  out->kernel_occupancy = k.occupancy;
  out->uses_graph = c->use_graph;
  describe(c, out->description, sizeof out->description);
  return 0;
}

static mjData* cuda_mjdata(void* self, int w) {
  (void)self, (void)w;
  return NULL;
}

//---------------------------------- open and destroy ----------------------------------------------

static void cuda_destroy(void* self) {
  Batch* c = (Batch*)self;
  if (!c) return;
  if (c->dev) { // (nothing else is on the device without it)
    DeviceScope scope(c->device);
    if (c->stream) FS_CUDA_IGNORE(cudaStreamSynchronize(c->stream));
    if (c->copy) FS_CUDA_IGNORE(cudaStreamSynchronize(c->copy));
    destroy_graphs(c);
    if (c->stepped) FS_CUDA_IGNORE(cudaEventDestroy(c->stepped));
    for (int h = 0; h < 2; h++)
      if (c->copied[h]) FS_CUDA_IGNORE(cudaEventDestroy(c->copied[h]));
    if (c->copy) FS_CUDA_IGNORE(cudaStreamDestroy(c->copy));
    if (c->capture) FS_CUDA_IGNORE(cudaStreamDestroy(c->capture));
    for (int r = 0; r < FS_MAX_RECORDINGS; r++) {
      Recording* q = &c->rec[r];
      void* ptrs[] = {q->d_buf, q->d_src, q->d_index, q->d_group};
      for (void* p : ptrs)
        if (p) FS_CUDA_IGNORE(cudaFree(p));
      if (q->h_buf) FS_CUDA_IGNORE(cudaFreeHost(q->h_buf));
    }
    void* ptrs[] = {c->d_counter, c->d_table,   c->d_actuator, c->d_world_row, c->d_rec,
                    c->d_reset,   c->d_image,   c->dh.nseen,   c->dh.first,    c->dh.first_step,
                    c->dh.limit,  c->dh.errors, c->dh.peak,    c->dh.problems, c->dh.iterations};
    for (void* p : ptrs)
      if (p) FS_CUDA_IGNORE(cudaFree(p));
    fs_device_destroy(c->dev);
  }
  void* host[] = {c->hh.nseen, c->hh.first,    c->hh.first_step, c->hh.limit, c->hh.errors,
                  c->hh.peak,  c->hh.problems, c->hh.iterations, c->h_warn};
  for (void* p : host) free(p);
  free(c->write_buf);
  fs_ctrl_seq_free(&c->seq);
  for (int w = 0; c->wmj && w < c->N; w++)
    if (c->wmj[w]) fs_model_free(&c->wm[w]);
  free(c->wmj);
  free(c->wm);
  if (c->md) mj_deleteData(c->md);
  fs_worlds_free(&c->one);
  fs_model_free(&c->hm);
  free(c);
}

// The health arrays of N worlds: device memory (zeroed) or host memory.
static int alloc_health(Batch* c, fsError* err) {
  size_t N = (size_t)c->N;
  fsHealthArrays* d = &c->dh;
  if (device_alloc(c, &d->nseen, N, err) || device_alloc(c, &d->first, N, err) ||
      device_alloc(c, &d->first_step, N, err) || device_alloc(c, &d->limit, N, err) ||
      device_alloc(c, &d->errors, N, err) || device_alloc(c, &d->peak, N, err) ||
      device_alloc(c, &d->problems, N, err) || device_alloc(c, &d->iterations, 2 * N, err))
    return -1;
  fsHealthArrays* h = &c->hh;
  const char* what = "the worlds' health";
  h->nseen = (int*)fs_calloc(err, what, N, sizeof(int));
  h->first = (int*)fs_calloc(err, what, N, sizeof(int));
  h->first_step = (long long*)fs_calloc(err, what, N, sizeof(long long));
  h->limit = (int*)fs_calloc(err, what, N, sizeof(int));
  h->errors = (int*)fs_calloc(err, what, N, sizeof(int));
  h->peak = (int*)fs_calloc(err, what, N, sizeof(int));
  h->problems = (int*)fs_calloc(err, what, N, sizeof(int));
  h->iterations = (int*)fs_calloc(err, what, 2 * N, sizeof(int));
  c->h_warn = (int*)fs_calloc(err, what, N * FS_NWARNING, sizeof(int));
  if (!h->nseen || !h->first || !h->first_step || !h->limit || !h->errors || !h->peak ||
      !h->problems || !h->iterations || !c->h_warn)
    return -1;
  return 0;
}

// What a reset needs: the state fields, MuJoCo's data, a world's data, device staging.
static int alloc_reset(Batch* c, fsError* err) {
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->stage != FS_STAGE_STATE) continue; // (FS_MAX_STATE of them: the table's count)
    if (fs_field_bytes(&c->hm, fi) % sizeof(int))
      return fs_fail(err, "state field %s is not whole 4-byte words", fi->name);
    c->state[c->nstate++] = fi;
    c->state_bytes += fs_field_bytes(&c->hm, fi);
  }
  c->md = mj_makeData(c->m);
  if (!c->md)
    return fs_fail_oom(err, "MuJoCo's data", (double)c->m->narena + (double)c->m->nbuffer);
  if (fs_worlds_alloc(&c->hm, 1, &c->one, err)) return -1;
  return device_alloc(c, &c->d_reset, (size_t)c->N * (c->state_bytes + sizeof(int)), err);
}

// Everything on the device, the worlds at qpos0.
static int open_device(Batch* c, fsError* err) {
  c->dev = fs_device_create_on(&c->hm, c->N, c->opt.stream, err);
  if (!c->dev) return -1;
  c->stream = (cudaStream_t)fs_device_stream(c->dev);
  FS_CUDA_TRY(cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking), err);
  if (c->use_graph) FS_CUDA_TRY(cudaStreamCreateWithFlags(&c->capture, cudaStreamNonBlocking), err);
  FS_CUDA_TRY(cudaEventCreateWithFlags(&c->stepped, cudaEventDisableTiming), err);
  for (int h = 0; h < 2; h++)
    FS_CUDA_TRY(cudaEventCreateWithFlags(&c->copied[h], cudaEventDisableTiming), err);
  c->wmj = (const mjModel**)fs_calloc(err, "the worlds' models", (size_t)c->N, sizeof(mjModel*));
  c->wm = (fsModel*)fs_calloc(err, "the worlds' models", (size_t)c->N, sizeof(fsModel));
  if (!c->wmj || !c->wm) return -1;
  if (device_alloc(c, &c->d_counter, 1, err) ||
      device_alloc(c, &c->d_rec, FS_MAX_RECORDINGS, err) || alloc_health(c, err) ||
      alloc_reset(c, err))
    return -1;
  if (reset_worlds(c, NULL, -1, err)) return -1; // qpos0, health from zero
  c->cnt_step = -1;
  c->plan_stale = 1;
  if (prepare(c, err)) return -1;
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  return 0;
}

static int open_on_device(Batch* c, fsError* err) {
  DeviceScope scope(c->device);
  FS_CUDA_TRY(scope.error, err);
  return open_device(c, err);
}

void* fs_cuda_open(const mjModel* m, const fsBatchOptions* opt, fsError* err) {
  Batch* c = (Batch*)fs_calloc(err, "a cuda batch", 1, sizeof(Batch));
  if (!c) return NULL;
  c->m = m;
  c->opt = *opt;
  c->N = opt->nworld;
  c->device = opt->device;
  c->image_key = -2;
  const char* env = getenv("FLYSIM_NO_GRAPH");
  c->use_graph = !(env && !strcmp(env, "1"));
  // the model check first: what the GPU stepper cannot run is worth knowing anywhere
  if (build(m, opt->model_name, opt, &c->hm, err)) goto fail;
  {
    int count = fs_cuda_device_count();
    if (count == 0) {
      fs_fail_status(err, FS_ERR_UNAVAILABLE,
                     "flysim: backend cuda: no CUDA device (no NVIDIA GPU or driver on this "
                     "machine); fix: run on a machine with a GPU, or use the cpu or host backend");
      goto fail;
    }
    if (c->device < 0 || c->device >= count) {
      fs_fail_status(err, FS_ERR_ARGUMENT,
                     "flysim: backend cuda: device %d, but this machine has %d CUDA device%s; "
                     "fix: a device from 0 to %d",
                     c->device, count, count == 1 ? "" : "s", count - 1);
      goto fail;
    }
  }
  if (open_on_device(c, err)) goto fail;
  return c;
fail:
  cuda_destroy(c);
  return NULL;
}

const fsBackendOps fs_cuda_ops = {"cuda",
                                  cuda_destroy,
                                  cuda_step,
                                  cuda_sync,
                                  cuda_reset,
                                  cuda_reset_device,
                                  cuda_view,
                                  cuda_copy,
                                  cuda_set_world_model,
                                  cuda_set_ctrl_sequence,
                                  cuda_add_recording,
                                  cuda_health,
                                  cuda_info,
                                  cuda_mjdata,
                                  NULL}; // forward: not yet (fs_batch_forward says so)
