// The GPU replay backend (src/cuda/replay_cuda.h): replay kernels, the step graph,
// blocks of steps with asynchronous copies to pinned memory, world health.
#include "src/cuda/replay_cuda.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "src/base/nvtx.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/kernel_world.cuh"
#include "src/model/model.h"
#include "src/model/onchip.h"
#include "src/model/record.h"
#include "src/engine/stage_forward.h"

struct fsCudaReplay {
  const fsReplay* r;
  fsModel hm; // host model (sizes; the device copy is dev's)
  fsDevice* dev;
  cudaStream_t stream; // dev's
  int use_graph;
  int N, A, cap;        // worlds, targets, steps per record buffer
  int K, nq;            // the video's worlds (0..K-1) and their qpos size
  int record;           // the graph records (a series or the video's worlds)
  fsReal* d_table;      // (T x A) the clip at the model's timestep
  long* d_start;        // (N) clip row of each world's step 0
  int* d_actuator;      // (A) actuator driven by each target column
  int* d_counter;       // [0] replay step (negative in warm-up), [1] step in the block, [2] half
  int *d_src, *d_index; // (C) the record layout (common/replay/record.h) on the device
  int* d_geom_leg;      // (ngeom) each geom's leg (the legs series)
  fsRecordCols cols;    // with out[k] = half 0 of series k's buffer on the device
  // Recording, double-buffered: block b records into half (b & 1) of each buffer on
  // the device; a second stream copies that half into the same half of the pinned
  // buffer while the next block steps into the other half (fetch_block waits for it).
  float* d_rec[FS_NSERIES];   // (2 x cap x N x C_k) each selected series
  float* h_rec[FS_NSERIES];   // pinned copies
  float *d_render, *h_render; // (2 x cap x K x nq) the video's worlds' qpos
  int half;                   // the half of the last block begun
  const fsBlock* half_block[2];
  cudaStream_t copy;                     // the copies' stream
  cudaEvent_t copied[2];                 // half h copied to the host
  int *d_nseen, *d_first, *d_first_step; // (N) warnings seen, first warning, its step
  int *d_limit, *d_error;                // (N) steps at the solver's limit, failed solves
  int* d_peak;                           // (N) the most contacts made in a step
  int *h_warn, *h_first, *h_first_step;  // host copies for world_status
  int *h_limit, *h_error, *h_peak;
  int status_fresh;
  cudaGraphExec_t graph[2][2]; // [replay][FS_STEPS_PER_LAUNCH steps, else one]
  cudaEvent_t done[2];         // half h's block stepped
};

//---------------------------------- kernels -------------------------------------------------------
// (in this precision's namespace, src/cuda/kernel_world.cuh)
namespace FS_KERNELS {

// What the replay kernel reads and writes besides the worlds' data.
struct ReplayArgs {
  const fsReal* table; // (T x A) the clip
  const long* start;   // (N) clip row of each world's step 0
  const int* actuator; // (A) actuator of each target column
  const int* counter;  // [0] replay step of the launch's first, [1] its slot, [2] the half
  int N, A, replay;    // replay 0: warm-up (keyframe controls, nothing recorded)
  int record, cap;     // record: the series and the video's worlds, into half [2]
  fsRecordCols cols;   // the series' columns (out: half 0 of each buffer)
  int K, nq;           // the video's worlds and their qpos size
  float* render;       // (2 x cap x K x nq)
  int *nseen, *first, *first_step, *limit, *errors; // (N) world health
  int* peak;                                        // (N) the most contacts made in a step
  int iterations;                                   // the solver's limit
};

// World w's health after the step at replay step `step` (lane 0): the first warning
// and its step, steps whose Newton solve (an island's) ran to the iteration limit,
// failed solves, the most contacts the collision made (kept or dropped).
__device__ static void world_health(const ReplayArgs& a, const fsData* d, int w, int step) {
  int made = d->ncon[0] + d->contact_overflow[0];
  if (made > a.peak[w]) a.peak[w] = made;
  int ni = d->nisland[0] ? d->nisland[0] : 1, hit = 0;
  for (int k = 0; k < ni && k < FS_NISLAND; k++)
    hit |= d->solver_niter[k] - d->solver_nnoslip[k] >= a.iterations;
  a.limit[w] += hit;
  a.errors[w] += d->solver_error[0] != 0;
  int total = 0;
  for (int k = 0; k < FS_NWARNING; k++) total += d->warning_number[k];
  if (total == a.nseen[w]) return;
  a.nseen[w] = total;
  if (a.first[w] >= 0) return;
  for (int k = 0; k < FS_NWARNING; k++)
    if (d->warning_number[k] > 0) {
      a.first[w] = k;
      a.first_step[w] = step;
      return;
    }
}

// nstep replay steps of every world in one launch, a world's steps back to back (no
// grid-wide wait between steps: a world whose solve takes more iterations delays only
// its own warp): per step, ctrl of its driven actuators from its row of the clip, the
// step (mj_step), the selected series and the video's qpos into the current half of the
// record buffers (the columns over the world's lanes, as the host backend loops over
// them), and its health. kOwnModels: each world steps with its own model (models[w]),
// else with m (the kernel's parameter: its arrays' addresses are read from the constant
// bank where they are used; through a pointer the compiler would hold them in registers).
template <int kOwnModels>
static __global__ void __launch_bounds__(FS_BLOCK_THREADS, kOwnModels ? FS_MIN_BLOCKS_PER_SM_OWN
                                                                      : FS_MIN_BLOCKS_PER_SM)
    replay_kernel(const __grid_constant__ fsModel m, const __grid_constant__ fsData base,
                  const fsModel* models, const __grid_constant__ fsChipPlan plan,
                  const __grid_constant__ ReplayArgs a, int nstep) {
  int w = fs_kernel_world();
  if (w >= a.N) return;
  fsData* d = fs_kernel_view(&m, &base, w, &plan);
  const fsModel* mw = kOwnModels ? models + w : &m;
  int step0 = a.counter[0], slot0 = a.counter[1], half = a.counter[2];
  for (int s = 0; s < nstep; s++) {
    if (a.replay) {
      const fsReal* row = a.table + (a.start[w] + step0 + s) * a.A;
      FS_FOR_LANE(k, a.A) d->ctrl[a.actuator[k]] = row[k];
      FS_SYNC();
    }
    fs_step(mw, d);
    if (a.replay && a.record && slot0 + s < a.cap) {
      int k = half * a.cap + slot0 + s; // half h: steps h*cap.. of (2*cap)
      FS_FOR_LANE(c, a.cols.ncol_total) fs_record_column(&a.cols, d, c, k, w, a.N);
      if (w < a.K)
        FS_FOR_LANE(q, a.nq) a.render[((size_t)k * a.K + w) * a.nq + q] = (float)d->qpos[q];
    }
    FS_LANE0 world_health(a, d, w, step0 + s);
    FS_SYNC();
  }
}

static __global__ void advance_kernel(int* counter, int nstep) { // counter[2] (the half) stays
  counter[0] += nstep;
  counter[1] += nstep;
}

// A block's (or the warm-up's) start, in stream order: its values travel as the launch's
// arguments, so no host buffer is rewritten while an earlier copy from it may be pending.
static __global__ void start_kernel(int* counter, int step0, int slot0, int half) {
  counter[0] = step0;
  counter[1] = slot0;
  counter[2] = half;
}

// Every world's qpos and qvel perturbed (fsPerturb); x is (N x nq) then (N x nv).
static __global__ void perturb_kernel(fsReal* qpos, fsReal* qvel, int nq, int nv, int N, int how,
                                      unsigned seed) {
  int k = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= N * (nq + nv)) return;
  int w = k / (nq + nv), i = k % (nq + nv);
  fsReal* x = i < nq ? qpos + (size_t)w * nq + i : qvel + (size_t)w * nv + (i - nq);
  *x = how == FS_PERTURB_ROUND_F32
           ? (fsReal)(float)*x
           : fs_nextafter(*x, fs_perturb_up(seed, (unsigned)w, (unsigned)i));
}

} // namespace FS_KERNELS
using namespace FS_KERNELS;

// The replay kernel c launches: with each world's own model or with the plan's.
static const void* replay_kernel_of(const fsCudaReplay* c) {
  return fs_device_world_models(c->dev) ? (const void*)replay_kernel<1>
                                        : (const void*)replay_kernel<0>;
}

static int set_counter(fsCudaReplay* c, int step0, int half, fsError* err) {
  start_kernel<<<1, 1, 0, c->stream>>>(c->d_counter, step0, 0, half);
  FS_CUDA_TRY(cudaGetLastError(), err);
  return 0;
}

//---------------------------------- one step ------------------------------------------------------

static unsigned blocks_for(int n) {
  return (unsigned)((n + 255) / 256);
}

// Queue nstep steps (one launch of the replay kernel, then the counters) on the stream:
// what a graph captures.
static int launch_steps(fsCudaReplay* c, int replay, int nstep, fsError* err) {
  const fsData* d = fs_device_data(c->dev);
  ReplayArgs a;
  memset(&a, 0, sizeof a);
  a.table = c->d_table;
  a.start = c->d_start;
  a.actuator = c->d_actuator;
  a.counter = c->d_counter;
  a.N = c->N;
  a.A = c->A;
  a.replay = replay;
  a.record = c->record;
  a.cap = c->cap;
  a.cols = c->cols;
  a.K = c->K;
  a.nq = c->nq;
  a.render = c->d_render;
  a.nseen = c->d_nseen;
  a.first = c->d_first;
  a.first_step = c->d_first_step;
  a.limit = c->d_limit;
  a.errors = c->d_error;
  a.peak = c->d_peak;
  a.iterations = c->hm.iterations;
  const fsChipPlan* plan = fs_device_chip_plan(c->dev);
  const fsModel* models = fs_device_world_models(c->dev);
  int lanes = fs_device_lanes(c->dev);
  size_t smem = fs_world_smem(lanes, plan->bytes);
  dim3 grid = fs_world_grid(c->N, lanes), block = fs_world_block(lanes);
  if (models)
    replay_kernel<1>
        <<<grid, block, smem, c->stream>>>(*fs_device_model(c->dev), *d, models, *plan, a, nstep);
  else
    replay_kernel<0>
        <<<grid, block, smem, c->stream>>>(*fs_device_model(c->dev), *d, NULL, *plan, a, nstep);
  FS_CUDA_TRY(cudaGetLastError(), err);
  advance_kernel<<<1, 1, 0, c->stream>>>(c->d_counter, nstep);
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

// Capture nstep steps (replay or warm-up) into an executable graph.
static int capture(fsCudaReplay* c, int replay, int nstep, cudaGraphExec_t* exec, fsError* err) {
  cudaGraph_t g = NULL;
  FS_CUDA_TRY(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal), err);
  int rc = launch_steps(c, replay, nstep, err);
  fsError end_err;
  int end = end_capture(c->stream, &g, &end_err);
  if (!rc && !end) rc = instantiate(exec, g, err);
  if (!rc && end) *err = end_err;
  if (g) FS_CUDA_WARN(cudaGraphDestroy(g));
  return rc || end ? -1 : 0;
}

// Queue n steps: launches of FS_STEPS_PER_LAUNCH steps, then of one, each a graph (or
// the kernels themselves). Each replay launch is an NVTX range `step` around its
// host-side launch.
static int run_steps(fsCudaReplay* c, int replay, int n, fsError* err) {
  while (n > 0) {
    int many = n >= FS_STEPS_PER_LAUNCH, k = many ? FS_STEPS_PER_LAUNCH : 1;
    if (replay) fs_nvtx_push(FS_NVTX_STEP);
    int rc = 0;
    if (!c->use_graph) {
      rc = launch_steps(c, replay, k, err);
    } else {
      cudaError_t e = cudaGraphLaunch(c->graph[replay][many], c->stream);
      if (e != cudaSuccess)
        rc = fs_fail(err, "CUDA error %s (%s) in cudaGraphLaunch at %s:%d", cudaGetErrorName(e),
                     cudaGetErrorString(e), __FILE__, __LINE__);
    }
    if (replay) fs_nvtx_pop();
    if (rc) return -1;
    n -= k;
  }
  return 0;
}

//---------------------------------- backend operations --------------------------------------------

// host -> device on the stream (it does not synchronize with stream 0); src may be
// freed on return (pageable memory is staged before the call returns).
static int upload_async(fsCudaReplay* c, void* dst, const void* src, size_t n, fsError* err) {
  FS_CUDA_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, c->stream), err);
  return 0;
}

// Every world's state <- the keyframe (or qpos0), adhesion on (src/cpu/replay_cpu.c's reset),
// then the plan's init_world when it has one (each world its own start).
static int upload_reset_state(fsCudaReplay* c, fsError* err) {
  const fsReplay* r = c->r;
  enum { MAX_STATE = 64 };
  const fsFieldInfo* field[MAX_STATE];
  char* rep[MAX_STATE];
  size_t bytes[MAX_STATE];
  int nf = 0, rc = 0;
  for (int f = 0; f < fs_data_nfield && nf < MAX_STATE; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->stage != FS_STAGE_STATE) continue;
    field[nf] = fi;
    bytes[nf] = fs_field_bytes(&c->hm, fi);
    rep[nf] = (char*)malloc(bytes[nf] * c->N + 1);
    if (!rep[nf++]) rc = fs_fail_oom(err, "the initial state", (double)bytes[nf - 1] * c->N);
  }
  mjData* md = rc ? NULL : mj_makeData(r->m);
  if (!rc && !md) rc = fs_fail(err, "%s: cannot allocate MuJoCo data", r->model_path);
  fsWorlds one;
  memset(&one, 0, sizeof one);
  if (!rc) rc = fs_worlds_alloc(&c->hm, 1, &one, err);
  int per_world = r->world_model || r->init_world;
  for (int w = 0; !rc && w < c->N; w++) {
    if (w == 0 || per_world) {
      fs_replay_start_world(r, w, md);
      rc = fs_worlds_from_mj(&c->hm, &one, 0, fs_replay_model(r, w), md, FS_STAGE_STATE, err);
    }
    for (int k = 0; !rc && k < nf; k++)
      memcpy(rep[k] + bytes[k] * w, *fs_field_ptr(&one.base, field[k]), bytes[k]);
  }
  for (int k = 0; !rc && k < nf; k++)
    rc = upload_async(c, *fs_field_ptr((void*)fs_device_data(c->dev), field[k]), rep[k],
                      bytes[k] * c->N, err);
  if (md) mj_deleteData(md);
  fs_worlds_free(&one);
  for (int k = 0; k < nf; k++) free(rep[k]);
  return rc;
}

static int cuda_warmup(void* self, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  if (upload_reset_state(c, err)) return -1;
  if (set_counter(c, -c->r->nwarmup, 0, err)) return -1;
  FS_CUDA_TRY(cudaMemsetAsync(c->d_nseen, 0, c->N * sizeof(int), c->stream), err);
  FS_CUDA_TRY(cudaMemsetAsync(c->d_first, 0xff, c->N * sizeof(int), c->stream), err); // -1: none
  FS_CUDA_TRY(cudaMemsetAsync(c->d_first_step, 0xff, c->N * sizeof(int), c->stream), err);
  FS_CUDA_TRY(cudaMemsetAsync(c->d_limit, 0, c->N * sizeof(int), c->stream), err);
  FS_CUDA_TRY(cudaMemsetAsync(c->d_error, 0, c->N * sizeof(int), c->stream), err);
  FS_CUDA_TRY(cudaMemsetAsync(c->d_peak, 0, c->N * sizeof(int), c->stream), err);
  if (run_steps(c, 0, c->r->nwarmup, err)) return -1;
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  c->status_fresh = 0;
  return 0;
}

// Queue the block's steps into half h of the record buffers, then (on the copy
// stream, once they are done) the copy of that half to the host.
static int cuda_begin_block(void* self, fsBlock* b, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  if (c->record && b->nstep > c->cap)
    return fs_fail(err, "a block of %d steps: the CUDA stepper records at most %d per block",
                   b->nstep, c->cap);
  int h = c->half ^= 1;
  c->half_block[h] = b;
  if (c->half_block[h ^ 1] == b) c->half_block[h ^ 1] = NULL; // a caller reusing one block
  if (set_counter(c, b->step0, h, err)) return -1;
  // Half h's previous copy (two blocks ago) is done before this block records into it.
  if (c->record) FS_CUDA_TRY(cudaStreamWaitEvent(c->stream, c->copied[h], 0), err);
  if (run_steps(c, 1, b->nstep, err)) return -1;
  FS_CUDA_TRY(cudaEventRecord(c->done[h], c->stream), err);
  if (!c->record) return 0;
  FS_CUDA_TRY(cudaStreamWaitEvent(c->copy, c->done[h], 0), err);
  size_t off = (size_t)h * c->cap, n = (size_t)b->nstep;
  for (int k = 0; k < FS_NSERIES; k++) {
    if (!c->d_rec[k]) continue;
    size_t row = (size_t)c->N * c->cols.ncol[k];
    FS_CUDA_TRY(cudaMemcpyAsync(c->h_rec[k] + off * row, c->d_rec[k] + off * row,
                                n * row * sizeof(float), cudaMemcpyDeviceToHost, c->copy),
                err);
  }
  if (c->d_render) {
    size_t row = (size_t)c->K * c->nq;
    FS_CUDA_TRY(cudaMemcpyAsync(c->h_render + off * row, c->d_render + off * row,
                                n * row * sizeof(float), cudaMemcpyDeviceToHost, c->copy),
                err);
  }
  FS_CUDA_TRY(cudaEventRecord(c->copied[h], c->copy), err);
  return 0;
}

// Wait for the block's steps (its copy may still run: fetch_block waits for it).
static int cuda_end_block(void* self, fsBlock* b, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  int h = c->half_block[0] == b ? 0 : 1;
  FS_CUDA_TRY(cudaEventSynchronize(c->done[h]), err);
  FS_CUDA_TRY(cudaGetLastError(), err);
  b->ndone = b->nstep;
  c->status_fresh = 0;
  return 0;
}

// The block's half of the pinned buffers, once copied, into the driver's block.
static int cuda_fetch_block(void* self, fsBlock* b, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  if (!c->record) return 0;
  int h = c->half_block[0] == b ? 0 : 1;
  FS_CUDA_TRY(cudaEventSynchronize(c->copied[h]), err);
  size_t off = (size_t)h * c->cap, n = (size_t)b->ndone;
  for (int k = 0; k < FS_NSERIES; k++) {
    size_t row = (size_t)c->N * c->cols.ncol[k];
    if (c->h_rec[k] && b->series[k])
      memcpy(b->series[k], c->h_rec[k] + off * row, n * row * sizeof(float));
  }
  size_t row = (size_t)c->K * c->nq;
  if (c->h_render && b->render_qpos)
    memcpy(b->render_qpos, c->h_render + off * row, n * row * sizeof(float));
  return 0;
}

static int fetch_status(fsCudaReplay* c, fsError* err) {
  const fsData* d = fs_device_data(c->dev);
  size_t nw = (size_t)c->N * sizeof(int);
  FS_CUDA_TRY(cudaMemcpyAsync(c->h_warn, d->warning_number, nw * FS_NWARNING,
                              cudaMemcpyDeviceToHost, c->stream),
              err);
  FS_CUDA_TRY(cudaMemcpyAsync(c->h_first, c->d_first, nw, cudaMemcpyDeviceToHost, c->stream), err);
  FS_CUDA_TRY(
      cudaMemcpyAsync(c->h_first_step, c->d_first_step, nw, cudaMemcpyDeviceToHost, c->stream),
      err);
  FS_CUDA_TRY(cudaMemcpyAsync(c->h_limit, c->d_limit, nw, cudaMemcpyDeviceToHost, c->stream), err);
  FS_CUDA_TRY(cudaMemcpyAsync(c->h_error, c->d_error, nw, cudaMemcpyDeviceToHost, c->stream), err);
  FS_CUDA_TRY(cudaMemcpyAsync(c->h_peak, c->d_peak, nw, cudaMemcpyDeviceToHost, c->stream), err);
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  c->status_fresh = 1;
  return 0;
}

static void cuda_world_status(void* self, int w, fsWorldStatus* st) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  memset(st, 0, sizeof *st);
  st->first_warning = -1;
  st->first_warning_step = INT_MIN;
  fsError err;
  if (!c->status_fresh && fetch_status(c, &err)) {
    fprintf(stderr, "flysim: world health unavailable: %s\n", err.msg);
    return;
  }
  for (int k = 0; k < FS_NWARNING && k < mjNWARNING; k++)
    st->warnings[k] = c->h_warn[(size_t)w * FS_NWARNING + k];
  if (c->h_first[w] >= 0) {
    st->first_warning = c->h_first[w];
    st->first_warning_step = c->h_first_step[w];
  }
  st->solver_limit = c->h_limit[w];
  st->solver_error = c->h_error[w];
  st->peak_contacts = c->h_peak[w];
}

// qpos and ncon of every world into double / int host arrays.
static int cuda_read_worlds(void* self, double* qpos, int* ncon, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  const fsData* d = fs_device_data(c->dev);
  const fsModel* m = &c->hm;
  size_t nq = (size_t)c->N * m->nq;
  fsReal* q = (fsReal*)fs_calloc(err, "the worlds' state", nq, sizeof(fsReal));
  if (!q) return -1;
  cudaError_t e =
      cudaMemcpyAsync(q, d->qpos, nq * sizeof(fsReal), cudaMemcpyDeviceToHost, c->stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(ncon, d->ncon, (size_t)c->N * sizeof(int), cudaMemcpyDeviceToHost,
                        c->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
  for (size_t k = 0; k < nq && e == cudaSuccess; k++) qpos[k] = q[k];
  free(q);
  FS_CUDA_TRY(e, err);
  return 0;
}

static int cuda_perturb_state(void* self, int how, unsigned seed, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  const fsData* d = fs_device_data(c->dev);
  int n = c->N * (c->hm.nq + c->hm.nv);
  perturb_kernel<<<blocks_for(n), 256, 0, c->stream>>>(d->qpos, d->qvel, c->hm.nq, c->hm.nv, c->N,
                                                       how, seed);
  FS_CUDA_TRY(cudaGetLastError(), err);
  FS_CUDA_TRY(cudaStreamSynchronize(c->stream), err);
  return 0;
}

static int cuda_cost(void* self, fsBackendCost* out, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)self;
  memset(out, 0, sizeof *out);
  out->world_bytes = (double)fs_world_bytes(&c->hm);
  out->contacts = c->hm.nconmax;
  out->model_bytes = (double)fs_model_bytes(&c->hm);
  fsKernelInfo k;
  const void* kernel = replay_kernel_of(c);
  if (fs_device_kernel_info(c->dev, kernel, &k, err)) return -1;
  out->has_kernel = 1;
  out->registers = k.registers;
  out->local_bytes = k.local_bytes;
  out->shared_bytes = k.shared_bytes;
  out->chip_bytes = k.chip_bytes;
  out->block_threads = k.block_threads;
  out->occupancy = k.occupancy;
  return 0;
}

const fsBackendOps fs_cuda_ops = {
    "cuda",           cuda_warmup,        cuda_begin_block, cuda_end_block,  cuda_world_status,
    cuda_read_worlds, cuda_perturb_state, cuda_cost,        cuda_fetch_block};

//---------------------------------- create / destroy ----------------------------------------------

// Device memory, zeroed (nothing is ever copied back uninitialised) on the replay's
// stream, in order with the uploads and kernels that follow there (the stream does not
// wait for the legacy stream a plain cudaMemset runs on).
template <typename T> static int device_alloc(fsCudaReplay* c, T** p, size_t n, fsError* err) {
  FS_CUDA_TRY(cudaMalloc((void**)p, (n ? n : 1) * sizeof(T)), err);
  FS_CUDA_TRY(cudaMemsetAsync(*p, 0, (n ? n : 1) * sizeof(T), c->stream), err);
  return 0;
}

template <typename T> static int pinned_alloc(T** p, size_t n, fsError* err) {
  FS_CUDA_TRY(cudaMallocHost((void**)p, (n ? n : 1) * sizeof(T)), err);
  return 0;
}

// The clip (as fsReal), world offsets and the binding, on the device.
static int upload_replay(fsCudaReplay* c, fsError* err) {
  const fsReplay* r = c->r;
  size_t T = (size_t)r->targets->nstep;
  if (device_alloc(c, &c->d_table, T * c->A, err) ||
      device_alloc(c, &c->d_start, (size_t)c->N, err) ||
      device_alloc(c, &c->d_actuator, (size_t)c->A, err) || device_alloc(c, &c->d_counter, 3, err))
    return -1;
  fsReal* table = (fsReal*)fs_calloc(err, "the clip", T * c->A, sizeof(fsReal));
  if (!table) return -1;
  for (size_t k = 0; k < T * c->A; k++) table[k] = (fsReal)r->targets->value[k];
  int rc = upload_async(c, c->d_table, table, T * c->A * sizeof(fsReal), err);
  free(table);
  if (rc) return -1;
  if (upload_async(c, c->d_start, r->world_start, c->N * sizeof(long), err)) return -1;
  if (upload_async(c, c->d_actuator, r->bind->actuator, c->A * sizeof(int), err)) return -1;
  return 0;
}

// The record layout and the double-buffered record buffers (device and pinned).
static int alloc_record(fsCudaReplay* c, fsError* err) {
  const fsRecordLayout* l = &c->r->rec;
  size_t C = (size_t)l->ncol_total;
  memset(&c->cols, 0, sizeof c->cols);
  c->cols.ncol_total = l->ncol_total;
  if (device_alloc(c, &c->d_src, C, err) || device_alloc(c, &c->d_index, C, err)) return -1;
  if (upload_async(c, c->d_src, l->src, C * sizeof(int), err)) return -1;
  if (upload_async(c, c->d_index, l->index, C * sizeof(int), err)) return -1;
  c->cols.src = c->d_src;
  c->cols.index = c->d_index;
  size_t ngeom = (size_t)c->r->m->ngeom;
  if (device_alloc(c, &c->d_geom_leg, ngeom, err)) return -1;
  if (upload_async(c, c->d_geom_leg, l->geom_leg, ngeom * sizeof(int), err)) return -1;
  c->cols.geom_leg = c->d_geom_leg;
  for (int k = 0; k < FS_NSERIES; k++) {
    c->cols.col0[k] = l->col0[k];
    c->cols.ncol[k] = l->ncol[k];
    if (!l->ncol[k]) continue;
    size_t n = 2 * (size_t)c->cap * c->N * l->ncol[k];
    if (device_alloc(c, &c->d_rec[k], n, err) || pinned_alloc(&c->h_rec[k], n, err)) return -1;
    c->cols.out[k] = c->d_rec[k];
  }
  if (c->K > 0) {
    size_t n = 2 * (size_t)c->cap * c->K * c->nq;
    if (device_alloc(c, &c->d_render, n, err) || pinned_alloc(&c->h_render, n, err)) return -1;
  }
  FS_CUDA_TRY(cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking), err);
  for (int h = 0; h < 2; h++)
    FS_CUDA_TRY(cudaEventCreateWithFlags(&c->copied[h], cudaEventDisableTiming), err);
  return 0;
}

static int alloc_buffers(fsCudaReplay* c, fsError* err) {
  if (alloc_record(c, err) || device_alloc(c, &c->d_nseen, (size_t)c->N, err) ||
      device_alloc(c, &c->d_first, (size_t)c->N, err) ||
      device_alloc(c, &c->d_first_step, (size_t)c->N, err) ||
      device_alloc(c, &c->d_limit, (size_t)c->N, err) ||
      device_alloc(c, &c->d_error, (size_t)c->N, err) ||
      device_alloc(c, &c->d_peak, (size_t)c->N, err))
    return -1;
  c->h_warn = (int*)fs_calloc(err, "world warnings", (size_t)c->N * FS_NWARNING, sizeof(int));
  c->h_first = (int*)fs_calloc(err, "world warnings", (size_t)c->N, sizeof(int));
  c->h_first_step = (int*)fs_calloc(err, "world warnings", (size_t)c->N, sizeof(int));
  c->h_limit = (int*)fs_calloc(err, "world warnings", (size_t)c->N, sizeof(int));
  c->h_error = (int*)fs_calloc(err, "world warnings", (size_t)c->N, sizeof(int));
  c->h_peak = (int*)fs_calloc(err, "world warnings", (size_t)c->N, sizeof(int));
  if (!c->h_warn || !c->h_first || !c->h_first_step || !c->h_limit || !c->h_error || !c->h_peak)
    return -1;
  for (int h = 0; h < 2; h++)
    FS_CUDA_TRY(cudaEventCreateWithFlags(&c->done[h], cudaEventDisableTiming), err);
  return 0;
}

static int sync_device(fsError* err) {
  FS_CUDA_TRY(cudaDeviceSynchronize(), err);
  return 0;
}

// The step's on-chip fields (src/model/onchip.h): the budget (FLYSIM_ONCHIP_BYTES, else what
// keeps the replay kernel's resident worlds), at most what a block's shared memory gives
// each of its worlds.
static int set_chip_plan(fsCudaReplay* c, fsError* err) {
  const void* kernel = replay_kernel_of(c);
  long share = fs_device_chip_budget(c->dev, kernel, 1, err);
  long most = fs_device_chip_budget(c->dev, kernel, 0, err);
  long all = fs_chip_all_bytes(&c->hm);
  long budget = share < 0 || most < 0 ? -1 : fs_chip_budget(share, all, err);
  if (budget < 0) return -1;
  const char* env = getenv("FLYSIM_ONCHIP_BYTES");
  if (env && !strcmp(env, "all") && all > most)
    return fs_fail(err,
                   "FLYSIM_ONCHIP_BYTES=all: a world's intermediates take %ld bytes, and each of "
                   "a block's %d worlds has %ld; fix: more lanes a world (FLYSIM_WORLD_LANES=32: "
                   "4 worlds a block), a smaller --max-contacts, or a number of bytes",
                   all, FS_BLOCK_THREADS / fs_device_lanes(c->dev), most);
  fsChipPlan plan;
  fs_chip_plan(&c->hm, budget < most ? budget : most, &plan);
  if (fs_device_set_chip_plan(c->dev, &plan, err)) return -1;
  return fs_device_kernel_smem(kernel, fs_world_smem(fs_device_lanes(c->dev), plan.bytes), err);
}

// World w's host model (fs_device_set_world_models' source).
static int build_world(void* arg, int w, fsModel* out, fsError* err) {
  const fsCudaReplay* c = (const fsCudaReplay*)arg;
  return fs_model_build_bounded(c->r->world_model[w], c->r->model_path, c->r->max_contacts, out,
                                err);
}

fsCudaReplay* fs_cuda_create(const fsReplay* r, fsError* err) {
  fsCudaReplay* c = (fsCudaReplay*)fs_calloc(err, "the CUDA stepper", 1, sizeof(fsCudaReplay));
  if (!c) return NULL;
  c->r = r;
  c->N = r->nworld;
  c->A = r->bind->nact;
  c->K = r->nrender;
  c->nq = (int)r->m->nq;
  c->record = r->rec.ncol_total > 0 || r->nrender > 0;
  c->cap = fs_replay_block_steps(r->nworld, r->nstep);
  const char* env = getenv("FLYSIM_NO_GRAPH");
  c->use_graph = !(env && !strcmp(env, "1"));
  // The model check first: what the GPU stepper cannot run is worth knowing anywhere.
  if (fs_model_build_bounded(r->m, r->model_path, r->max_contacts, &c->hm, err)) goto fail;

  if (fs_cuda_device_count() == 0) {
    fs_fail(err, "--backend cuda: no CUDA device (no NVIDIA GPU or driver on this machine); fix: "
                 "use --backend cpu, or run on a machine with a GPU");
    goto fail;
  }
  c->dev = fs_device_create(&c->hm, c->N, err);
  if (!c->dev) goto fail;
  c->stream = (cudaStream_t)fs_device_stream(c->dev);
  if (r->world_model && fs_device_set_world_models(c->dev, &c->hm, build_world, c, err)) goto fail;
  if (set_chip_plan(c, err)) goto fail;
  if (upload_replay(c, err) || alloc_buffers(c, err)) goto fail;
  for (int replay = 0; replay < 2 && c->use_graph; replay++)
    for (int many = 0; many < 2; many++)
      if (capture(c, replay, many ? FS_STEPS_PER_LAUNCH : 1, &c->graph[replay][many], err))
        goto fail;
  if (sync_device(err)) goto fail; // the zeroing and uploads (the stream's) are done
  return c;
fail:
  fs_cuda_destroy(c);
  return NULL;
}

void fs_cuda_destroy(fsCudaReplay* c) {
  if (!c) return;
  if (c->stream) FS_CUDA_WARN(cudaStreamSynchronize(c->stream));
  for (int replay = 0; replay < 2; replay++)
    for (int many = 0; many < 2; many++)
      if (c->graph[replay][many]) FS_CUDA_WARN(cudaGraphExecDestroy(c->graph[replay][many]));
  if (c->copy) FS_CUDA_WARN(cudaStreamSynchronize(c->copy));
  for (int h = 0; h < 2; h++) {
    if (c->done[h]) FS_CUDA_WARN(cudaEventDestroy(c->done[h]));
    if (c->copied[h]) FS_CUDA_WARN(cudaEventDestroy(c->copied[h]));
  }
  if (c->copy) FS_CUDA_WARN(cudaStreamDestroy(c->copy));
  void* dev_ptrs[] = {c->d_geom_leg,   c->d_table, c->d_start,  c->d_actuator, c->d_counter,
                      c->d_src,        c->d_index, c->d_render, c->d_nseen,    c->d_first,
                      c->d_first_step, c->d_limit, c->d_error,  c->d_peak};
  for (void* p : dev_ptrs)
    if (p) FS_CUDA_WARN(cudaFree(p));
  for (int k = 0; k < FS_NSERIES; k++) {
    if (c->d_rec[k]) FS_CUDA_WARN(cudaFree(c->d_rec[k]));
    if (c->h_rec[k]) FS_CUDA_WARN(cudaFreeHost(c->h_rec[k]));
  }
  if (c->h_render) FS_CUDA_WARN(cudaFreeHost(c->h_render));
  free(c->h_warn);
  free(c->h_first);
  free(c->h_first_step);
  free(c->h_limit);
  free(c->h_peak);
  free(c->h_error);
  fs_device_destroy(c->dev);
  fs_model_free(&c->hm);
  free(c);
}

int fs_cuda_uses_graph(const fsCudaReplay* c) {
  return c->use_graph;
}

fsDevice* fs_cuda_device(fsCudaReplay* c) {
  return c->dev;
}

static int device_props(int* dev, cudaDeviceProp* p, int* runtime, int* driver, int* clock_khz,
                        fsError* err) {
  FS_CUDA_TRY(cudaGetDevice(dev), err);
  FS_CUDA_TRY(cudaGetDeviceProperties(p, *dev), err);
  FS_CUDA_TRY(cudaRuntimeGetVersion(runtime), err);
  FS_CUDA_TRY(cudaDriverGetVersion(driver), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(clock_khz, cudaDevAttrClockRate, *dev), err);
  return 0;
}

void fs_cuda_describe(const fsCudaReplay* c, char* out, size_t n) {
  int dev = 0, rt = 0, drv = 0, khz = 0;
  cudaDeviceProp p;
  fsError err;
  if (device_props(&dev, &p, &rt, &drv, &khz, &err)) {
    snprintf(out, n, "unknown CUDA device (%s)", err.msg);
    return;
  }
  const fsChipPlan* plan = fs_device_chip_plan(c->dev);
  char world[128];
  fs_world_describe(&c->hm, world, sizeof world);
  snprintf(out, n,
           "%s (sm_%d%d, %d SMs, %.1f GiB, %d MHz), driver %d.%d, CUDA runtime %d.%d, %s, %s, %d "
           "lanes a world, %d of %d intermediates (%d B of %.1f KiB) a world on-chip",
           p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0,
           khz / 1000, drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, FS_REAL_NAME,
           world, fs_device_lanes(c->dev), plan->nfield, plan->nallow, plan->bytes,
           (double)plan->allow_bytes / 1024.0);
}
