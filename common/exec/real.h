// The batched stepper's scalar type and execution model, shared by the host
// builds (C compiler) and the CUDA build (nvcc) of the same stage functions.
//
// Real type: fsReal is double unless FS_REAL_FLOAT is defined (float). The build
// chooses (cpu/CMakeLists.txt, cuda/CMakeLists.txt): flysim_engine_f64 and flysim_cuda_f64_obj
// (double), flysim_engine_f32 and flysim_cuda_f32_obj (float). Per-world time is always double (it
// only accumulates).
//
// Execution model (docs/engine/lanes-and-onchip.md): every stage function works on ONE world.
// On the device a group of a warp's lanes runs a world (FS_WORLD_LANES, below): its lanes share
// loops over elements (FS_FOR_LANE), meet at FS_SYNC() between dependent passes, agree on
// world-wide flags with FS_ANY() and add up their parts of a sum with fs_lane_sum(). FS_ANY and
// fs_lane_sum are also FS_SYNC (on the device they start with __syncwarp, which
// orders memory; __any_sync and the shuffles alone do not), so the lane emulation's
// barriers and the device agree on what is ordered. On the host one thread is the
// only lane: FS_FOR_LANE is a plain loop, FS_SYNC() does nothing, FS_ANY(p) is p and
// fs_lane_sum(x) is x -- a sum of lane parts started on lane 0 is then MuJoCo's own
// sequential sum, in its order. A block marked FS_LANE0 runs on one lane (work that
// is serial in MuJoCo's order). FS_EMULATE_LANES runs the device's model on host
// threads (common/exec/lanes.h).
#ifndef FLYSIM_COMMON_EXEC_REAL_H
#define FLYSIM_COMMON_EXEC_REAL_H

#include <math.h>
#include <string.h>

#ifdef FS_REAL_FLOAT
typedef float fsReal;
#define FS_REAL_NAME "float32"
#define FS_MINVAL    1e-15f // MuJoCo's mjMINVAL in single precision
#define FS_MAXVAL    1e10f  // MuJoCo's mjMAXVAL: larger |qpos|, |qvel|, |qacc| is bad
#else
typedef double fsReal;
#define FS_REAL_NAME "float64"
#define FS_MINVAL    1e-15
#define FS_MAXVAL    1e10
#endif

/// A symbol of the build's precision: the float32 and float64 builds of the engine and
/// its backends (flysim_engine_f32/_f64, flysim_host_f32/_f64_obj, flysim_cuda_f32/_f64_obj)
/// define the same API under different names, so that libflysim holds both and a batch
/// picks at run time (common/api/batch.c). The headers rename their symbols with it.
#ifdef FS_REAL_FLOAT
#define FS_PREC(name) name##_f32
#else
#define FS_PREC(name) name##_f64
#endif

/// The constraint solver's real: double in every build. The Newton iteration and
/// noslip work with differences of large terms (NeuroMechFly's J qacc and aref are
/// ~1e6 where the forces that matter are ~1e-3), which float32 cannot resolve to
/// MuJoCo's tolerance; the solver reads the step's fields in fsReal, iterates in
/// double and writes its results back in fsReal (docs/engine/constraints-and-solver.md,
/// "Precision").
typedef double fsSol;
#define FS_SOL_MINVAL 1e-15 // mjMINVAL in double

// Functions compiled for both sides. Under nvcc they are __host__ __device__.
#ifdef __CUDACC__
#define FS_HD __host__ __device__ static inline
#else
#define FS_HD static inline
#endif

/// Lanes per world: a power of two from 1 to 32, chosen when the kernels are launched
/// (FLYSIM_WORLD_LANES in the environment, else FS_WORLD_LANES, the build's default).
/// A block is (lanes, 128 / lanes): threadIdx.x is the lane, threadIdx.y the world in
/// the block, so each warp runs 32 / lanes worlds, each group of lanes syncing, voting
/// and summing among itself (a mask of its lanes). The fly's tree passes give 6 lanes
/// work (its legs) and its serial parts one, so a world wastes fewer lane slots on a
/// narrow group (bench/results/lanes.csv sweeps the widths). The emulation runs the same
/// default width unless told otherwise (FLYSIM_EMU_LANES, fs_lanes_set_count).
#ifndef FS_WORLD_LANES
#define FS_WORLD_LANES 4
#endif
#if FS_WORLD_LANES < 1 || FS_WORLD_LANES > 32 || (FS_WORLD_LANES & (FS_WORLD_LANES - 1))
#error "FS_WORLD_LANES must be a power of two from 1 to 32"
#endif

/// 1 if n lanes a world is a width the kernels and the emulation take (a power of two
/// from 1 to 32).
static inline int fs_lanes_valid(long n) {
  return n >= 1 && n <= 32 && !(n & (n - 1));
}

// Lanes of a world (see the header comment). FS_ONE_LANE: every world on one lane
// (the host's plain builds), so lane sums are MuJoCo's sequential sums.
#ifdef __CUDA_ARCH__
#define FS_NLANE ((int)blockDim.x)
#define FS_LANE  ((int)threadIdx.x)
/// The lanes of this thread's world in its warp (the warp's threads are 32 consecutive
/// of the block's, x fastest).
__device__ static inline unsigned fs_lane_mask(void) {
  unsigned n = blockDim.x;
  return n == 32 ? 0xffffffffu : ((1u << n) - 1u) << ((threadIdx.y * n) & 31u);
}
#define FS_LANE_MASK fs_lane_mask()
#define FS_SYNC()    __syncwarp(FS_LANE_MASK)
#define FS_ANY(p)    (__syncwarp(FS_LANE_MASK), __any_sync(FS_LANE_MASK, (p)))
#elif defined(FS_EMULATE_LANES) // the device's model on host threads (common/exec/lanes.h)
#include "common/exec/lanes.h"
#define FS_NLANE  fs_lane_count()
#define FS_LANE   fs_lane_id()
#define FS_SYNC() fs_lane_sync()
#define FS_ANY(p) fs_lane_any(p)
#else
#define FS_NLANE    1
#define FS_LANE     0
#define FS_SYNC()   ((void)0)
#define FS_ANY(p)   (p)
#define FS_ONE_LANE 1
#endif

/// The lane-utilisation profile (bench/proxies/lanes_profile.c, flysim bench --lanes): its
/// build of the emulation (FS_LANES_PROFILE) charges each span between two syncs to
/// the part of the step the lanes are in, set by FSI_MARK at the stages' starts (the
/// fsStage values) and at the solver's phases below; elsewhere FSI_MARK is nothing.
enum {
  FS_MARK_CHECKS = 32,  // the state and acceleration checks of mj_step
  FS_MARK_SOLVER_SETUP, // the solver's rows, islands, warm start
  FS_MARK_NEWTON,       // Newton's gradient, direction and updates
  FS_MARK_HESSIAN,      // the Hessian: factor and incremental updates
  FS_MARK_LINESEARCH,   // the exact line search
  FS_MARK_NOSLIP,       // noslip and the dual finish
  FS_MARK_RESULTS,      // the solver's results
  FS_NMARK
};
#if defined(FS_EMULATE_LANES) && defined(FS_LANES_PROFILE)
#define FSI_MARK(label) fs_lane_mark(label)
#else
#define FSI_MARK(label) ((void)0)
#endif

/// for (i over [0, n)) split across the world's lanes.
#define FS_FOR_LANE(i, n) for (int i = FS_LANE; i < (n); i += FS_NLANE)

/// The same over [a, b): each index on the lane FS_FOR_LANE gives it (i mod FS_NLANE).
#define FS_FOR_LANE_RANGE(i, a, b)                                                                 \
  for (int i = (a) + (FS_LANE - (a) % FS_NLANE + FS_NLANE) % FS_NLANE; i < (b); i += FS_NLANE)

/// The statement or block that follows runs on lane 0 only.
#define FS_LANE0 if (FS_LANE == 0)

/// The sum over the world's lanes of x (every lane gets it). Device: a butterfly of
/// shuffles within the world's lanes (lane l adds lane l ^ (FS_NLANE / 2), then ... ^ 1:
/// every lane ends with the same bits); the emulation adds in the same tree; one lane: x.
#ifdef __CUDA_ARCH__
__device__ static inline float fs_lane_sum(float x) {
  unsigned mask = FS_LANE_MASK;
  __syncwarp(mask);
  for (int o = FS_NLANE / 2; o > 0; o >>= 1) x += __shfl_xor_sync(mask, x, o);
  return x;
}
__device__ static inline double fs_lane_sum(double x) {
  unsigned mask = FS_LANE_MASK;
  __syncwarp(mask);
  for (int o = FS_NLANE / 2; o > 0; o >>= 1) x += __shfl_xor_sync(mask, x, o);
  return x;
}
#elif defined(FS_EMULATE_LANES)
#define fs_lane_sum(x) fs_lane_sum_emu(x)
#else
#define fs_lane_sum(x) (x)
#endif

// Math in the real type.
#ifdef FS_REAL_FLOAT
FS_HD fsReal fs_sqrt(fsReal x) {
  return sqrtf(x);
}
FS_HD fsReal fs_sin(fsReal x) {
  return sinf(x);
}
FS_HD fsReal fs_cos(fsReal x) {
  return cosf(x);
}
FS_HD fsReal fs_abs(fsReal x) {
  return fabsf(x);
}
FS_HD fsReal fs_atan2(fsReal y, fsReal x) {
  return atan2f(y, x);
}
FS_HD fsReal fs_pow(fsReal x, fsReal y) {
  return powf(x, y);
}
FS_HD fsReal fs_exp(fsReal x) {
  return expf(x);
}
#else
FS_HD fsReal fs_sqrt(fsReal x) {
  return sqrt(x);
}
FS_HD fsReal fs_sin(fsReal x) {
  return sin(x);
}
FS_HD fsReal fs_cos(fsReal x) {
  return cos(x);
}
FS_HD fsReal fs_abs(fsReal x) {
  return fabs(x);
}
FS_HD fsReal fs_atan2(fsReal y, fsReal x) {
  return atan2(y, x);
}
FS_HD fsReal fs_pow(fsReal x, fsReal y) {
  return pow(x, y);
}
FS_HD fsReal fs_exp(fsReal x) {
  return exp(x);
}
#endif

#define FS_PI ((fsReal)3.14159265358979323846)

FS_HD fsReal fs_clip(fsReal x, fsReal lo, fsReal hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/// MuJoCo's mju_isBad: NaN or beyond +-mjMAXVAL.
FS_HD int fs_is_bad(fsReal x) {
  return x != x || x > FS_MAXVAL || x < -FS_MAXVAL;
}

/// A pointer whose memory no other pointer of its scope reaches (C's restrict): for loops
/// over a few rows that store into several fields, which the host compiler otherwise
/// vectorizes behind a run-time overlap test of every pair of them, dearer than the loop.
/// The host compiler's alone: nvcc adds no such test, and kept the restrict pointers of the
/// contact rows' loop live across it (the stage-by-stage kernels spilled more).
#ifdef __CUDACC__
#define FS_RESTRICT
#else
#define FS_RESTRICT __restrict__
#endif

/// Before a loop: its iterations' stores and loads are independent (GCC's ivdep), for the
/// same run-time test where the overlap runs through a stride the compiler cannot bound.
/// The host compiler's alone.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define FS_IVDEP _Pragma("GCC ivdep")
#else
#define FS_IVDEP
#endif

// ---------------------------------------------------------------------------------
// Register allocation (device). The step kernel is one function: every stage is
// inlined into it, so that the world's field pointers stay computable from the kernel's
// parameters instead of living in memory behind a call. FS_FORCEINLINE holds that for
// the large stage functions whose inlining the compiler would otherwise weigh against
// their size (a call there put the whole fsData on the stack: ~1 KB a lane). Nothing on
// the host.
#ifdef __CUDACC__
#define FS_FORCEINLINE __attribute__((always_inline))
#else
#define FS_FORCEINLINE
#endif

// FS_HD_OUTLINE in place of FS_HD: a path only some models take, kept out of line by the
// C compiler so that its code does not shift the inlining of the step around it for every
// model (inlined into its stage, fsi_fixed_tendon cost NeuroMechFly 1.2 % more
// instructions a step through the helpers the compiler then left out of line). The
// kernels inline it as the rest.
#ifdef __CUDACC__
#define FS_HD_OUTLINE FS_HD
#else
#define FS_HD_OUTLINE static __attribute__((noinline, unused))
#endif

#endif
