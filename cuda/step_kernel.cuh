// The step kernel: nstep steps of every world in one launch. One template, step_kernel<V>,
// instantiated for its variants V, each in the file that compiles it:
//   Shared, Own  cuda/step_kernel.cu: the cuda backend's, each world with the batch's model
//                or with its own;
//   Convex       cuda/step_kernel_convex.cu: the cuda backend's for models with convex
//                pairs (nccdwork > 0), the convex collider in the step;
//   Bare         cuda/test_kernels.cu: the tests' steps (fs_device_step), nothing but fs_step.
// The convex collider is in a file's step or not as a whole (FS_DEVICE_CONVEX, read by
// common/engine/stage_collision.h), so the variants with it and those without it are
// compiled apart: the collider's registers compiled into every model's step cost the other
// variants spills around its call (ptxas, sm_90). The variants' host entry points are C
// functions (fs_step_kernel, fs_step_launch), so that the cuda backend launches any of them
// without compiling one. Included once per precision, in its namespace (FS_KERNELS).
#ifndef FLYSIM_CUDA_STEP_KERNEL_CUH
#define FLYSIM_CUDA_STEP_KERNEL_CUH

#include <cuda_runtime.h>

#include "common/api/backend.h"
#include "common/engine/stage_forward.h"
#include "common/model/health.h"
#include "common/model/onchip.h"
#include "common/model/record.h"
#include "cuda/device.h"
#include "cuda/kernel_world.cuh"

/// The step kernel's blocks: compiled for FS_MIN_BLOCKS_PER_SM resident blocks of
/// FS_BLOCK_THREADS (__launch_bounds__): 65,536 registers / (4 x 128 threads) = 128
/// registers a thread, the budget the on-chip plan and the occupancy are sized for. The
/// variants that read each world's own model (Own, Convex) read it through a pointer, its
/// arrays' addresses held in registers: 155-166 registers unpinned, and held to 128 they
/// spill (56-104 B a thread), so they are compiled for FS_MIN_BLOCKS_PER_SM_OWN blocks
/// (170 registers).
#define FS_MIN_BLOCKS_PER_SM     4
#define FS_MIN_BLOCKS_PER_SM_OWN 3

// This build's names (common/exec/real.h FS_PREC): both precisions link into one library.
#define fs_step_kernel        FS_PREC(fs_step_kernel)
#define fs_step_launch        FS_PREC(fs_step_launch)
#define fs_step_kernel_convex FS_PREC(fs_step_kernel_convex)
#define fs_step_launch_convex FS_PREC(fs_step_launch_convex)

/// The variants the cuda backend launches (fs_step_kernel, fs_step_launch).
enum fsStepVariant { FS_STEP_SHARED = 0, FS_STEP_OWN, FS_STEP_CONVEX };

namespace FS_KERNELS {

// What changes from call to call, in device memory (the cuda backend's start and advance
// kernels write it).
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

// What the step kernel reads and writes besides the worlds' data.
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

// The variants (step_kernel's template argument): which model world w steps with (models
// 0: the batch's, m, the kernel's parameter, whose arrays' addresses are read from the
// constant bank where they are used, where through a pointer the compiler would hold them
// in registers; 1: its own, models[w]; -1: its own where models is not NULL, one kernel for
// both), whether a launch drives the worlds (controls from the sequence, recordings,
// health) or only steps them, and whether the step has the convex collider (FSI_CONVEX:
// the file's FS_DEVICE_CONVEX).
struct Shared {
  enum { models = 0, drive = 1, convex = 0 };
};
struct Own {
  enum { models = 1, drive = 1, convex = 0 };
};
struct Convex {
  enum { models = -1, drive = 1, convex = 1 };
};
struct Bare {
  enum { models = 0, drive = 0, convex = 1 };
};

// 1 in the files whose step has the convex collider (FS_DEVICE_CONVEX): the variants
// compiled in a file agree with it.
#ifdef FS_DEVICE_CONVEX
#define FSI_FILE_CONVEX 1
#else
#define FSI_FILE_CONVEX 0
#endif

// nstep steps of every world in one launch, a world's steps back to back (no grid-wide
// wait between steps: a world whose solve takes more iterations delays only its own
// warp): per step, driven, ctrl of the sequence's actuators from the world's row of the
// table, the step (mj_step), the recordings (the columns over the world's lanes, as the
// host backend loops over them), and its health; bare, the step alone.
template <class V>
static __global__ void __launch_bounds__(FS_BLOCK_THREADS, V::models ? FS_MIN_BLOCKS_PER_SM_OWN
                                                                     : FS_MIN_BLOCKS_PER_SM)
    step_kernel(const __grid_constant__ fsModel m, const __grid_constant__ fsData base,
                const fsModel* models, const __grid_constant__ fsChipPlan plan,
                const __grid_constant__ StepArgs a, int nstep) {
  static_assert((int)V::convex == FSI_FILE_CONVEX,
                "a step kernel variant is compiled where FS_DEVICE_CONVEX is its own");
  int w = fs_kernel_world();
  if (w >= a.N) return;
  fsData* d = fs_kernel_view(&m, &base, w, &plan);
  const fsModel* mw = V::models > 0 || (V::models < 0 && models) ? models + w : &m;
  for (int s = 0; s < nstep; s++) {
    if (V::drive && a.seq.table) FS_CTRL_SEQ_APPLY(a.seq, w, a.counter->step + s, d->ctrl);
    fs_step(mw, d);
    if (V::drive) {
      if (a.counter->mask) record_world(a, d, w, s);
      FS_LANE0 fs_health_note_step(&a.health, w, mw, d, a.counter->step + s);
      FS_SYNC();
    }
  }
}

// A launch of the step kernel: its configuration and arguments.
struct StepLaunch {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  const fsModel* m;
  const fsData* d;
  const fsModel* models; // each world's own model, or NULL: m
  const fsChipPlan* plan;
  const StepArgs* a;
  int nstep;
};

// Variant V's launch, in the file that compiles V.
template <class V> static void launch_step(const StepLaunch& l) {
  step_kernel<V>
      <<<l.grid, l.block, l.smem, l.stream>>>(*l.m, *l.d, l.models, *l.plan, *l.a, l.nstep);
}

} // namespace FS_KERNELS

/// The kernel of a variant (fsStepVariant), for its attributes, occupancy and shared memory.
extern "C" const void* fs_step_kernel(int variant);

/// l->nstep steps of every world in the kernel of a variant (fsStepVariant) on l->stream
/// (not checked: the caller reads cudaGetLastError).
extern "C" void fs_step_launch(int variant, const FS_KERNELS::StepLaunch* l);

/// The Convex variant's kernel and launch (cuda/step_kernel_convex.cu), for the two above.
extern "C" const void* fs_step_kernel_convex(void);
extern "C" void fs_step_launch_convex(const FS_KERNELS::StepLaunch* l);

#endif
