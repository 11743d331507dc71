// The cuda backend's kernels (cuda/backend_cuda.cu launches them): the replay kernel
// (a launch's steps of every world: its controls from the sequence, the step, its
// recordings, its health), the counter's start and advance, the masked reset's scatter.
// Included once per precision, in its namespace (cuda/kernel_world.cuh FS_KERNELS).
#ifndef FLYSIM_CUDA_STEP_KERNELS_CUH
#define FLYSIM_CUDA_STEP_KERNELS_CUH

/// The data fields of the state (FS_STAGE_STATE), counted off the table: the most a
/// reset uploads.
#define FSI_COUNT_STATE(type, name, size, cols, stage, kind) +(FS_STAGE_##stage == FS_STAGE_STATE)
enum { FS_MAX_STATE = 0 FS_DATA_FIELDS(FSI_COUNT_STATE) };
#undef FSI_COUNT_STATE

namespace FS_KERNELS {

// What changes from call to call, in device memory (start_kernel, advance_kernel).
struct Counter {
  long long step; // the batch's step count before the launch's first step
  int slot;       // that step's place in the call (a recording's row)
  int half;       // the half of the record buffers the call writes
  int mask;       // the recordings the call records (bit r: recording r)
};

// A recording as the kernel reads it (device memory).
struct RecArgs {
  fsRecordCols cols; // device arrays
  float* buf;        // (2 x cap x nworld x ncol): half h holds steps h * cap ...
  int cap;
};

// What the replay kernel reads and writes besides the worlds' data.
struct StepArgs {
  const Counter* counter;
  fsCtrlRows seq;        // the control sequence (device arrays; table NULL: none)
  int N, nrec;           // worlds; recordings
  const RecArgs* rec;    // (nrec)
  fsHealthArrays health; // (N) device arrays
};

// The recordings of this call (counter->mask) at step s of the launch: world w's columns
// over its lanes into its row of the step's slot in the current half.
__device__ static void record_world(const StepArgs& a, const fsData* d, int w, int s) {
  const Counter* cnt = a.counter;
  int slot = cnt->slot + s, half = cnt->half, mask = cnt->mask;
  for (int r = 0; r < a.nrec; r++) {
    const RecArgs* q = a.rec + r;
    int k = w - q->cols.world0;
    if (!((mask >> r) & 1) || k < 0 || k >= q->cols.nworld || slot >= q->cap) continue;
    float* row = q->buf + ((size_t)(half * q->cap + slot) * q->cols.nworld + k) * q->cols.ncol;
    FS_FOR_LANE(c, q->cols.ncol) fs_record_column(&q->cols, d, c, row);
  }
}

// The replay kernel's name: cuda/replay_convex.cu compiles it again, with the box-mesh
// collider in the step, as replay_convex_kernel (and this file's other kernels not).
#ifndef FS_REPLAY_KERNEL
#define FS_REPLAY_KERNEL replay_kernel
#endif

// nstep steps of every world in one launch, a world's steps back to back (no grid-wide
// wait between steps: a world whose solve takes more iterations delays only its own
// warp): per step, ctrl of the sequence's actuators from the world's row of the table,
// the step (mj_step), the recordings (the columns over the world's lanes, as the host
// backend loops over them), and its health. kOwnModels 1: each world steps with its own
// model (models[w]); 0: with m (the kernel's parameter: its arrays' addresses are read
// from the constant bank where they are used; through a pointer the compiler would hold
// them in registers); -1: its own if models is not NULL (one kernel for both).
template <int kOwnModels>
static __global__ void __launch_bounds__(FS_BLOCK_THREADS, kOwnModels ? FS_MIN_BLOCKS_PER_SM_OWN
                                                                      : FS_MIN_BLOCKS_PER_SM)
    FS_REPLAY_KERNEL(const __grid_constant__ fsModel m, const __grid_constant__ fsData base,
                     const fsModel* models, const __grid_constant__ fsChipPlan plan,
                     const __grid_constant__ StepArgs a, int nstep) {
  int w = fs_kernel_world();
  if (w >= a.N) return;
  fsData* d = fs_kernel_view(&m, &base, w, &plan);
  const fsModel* mw = kOwnModels > 0 || (kOwnModels < 0 && models) ? models + w : &m;
  for (int s = 0; s < nstep; s++) {
    if (a.seq.table) FS_CTRL_SEQ_APPLY(a.seq, w, a.counter->step + s, d->ctrl);
    fs_step(mw, d);
    if (a.counter->mask) record_world(a, d, w, s);
    FS_LANE0 fs_health_note_step(&a.health, w, mw, d, a.counter->step + s);
    FS_SYNC();
  }
}

#ifndef FS_REPLAY_KERNEL_ONLY
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
#endif // FS_REPLAY_KERNEL_ONLY

} // namespace FS_KERNELS

#endif
