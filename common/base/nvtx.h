// NVTX ranges for Nsight Systems, compiled away when off.
//
// flysim marks its host-side phases with NVTX push/pop ranges in its own NVTX
// domain, "flysim", so that nsys draws them on the timeline above the CUDA work
// they launch. The replay uses four names (FS_NVTX_*):
//
//   warmup        the warm-up steps, one range (common/replay/replay.c)
//   timed_run     the measured steps, one range (common/replay/replay.c)
//     step        one range per launch of the cuda backend (FLYSIM_STEPS_PER_LAUNCH
//                 steps, or one), around its host-side graph launch
//                 (cuda/backend_cuda.cu), under warmup and timed_run
//     record      writing a recorded block to HDF5 (beside the next block's steps)
//
// Build. The CMake option FLYSIM_NVTX (default ON when the CUDA toolkit's header-only
// nvtx3, nvtx3/nvToolsExt.h, is found; no library to link) defines FLYSIM_NVTX=1 for
// every part of libflysim and what builds on it (flysim_includes, common/CMakeLists.txt)
// and compiles common/base/nvtx.c into it. With
// -DFLYSIM_NVTX=OFF it defines FLYSIM_NVTX=0 and the functions below are empty
// static inline functions: no NVTX code, no dlopen, nothing left in the binary.
// With NVTX on but no tool attached, a push or pop costs a pthread_once check and
// nvtx3's null-pointer check.
//
// Profiling (a machine with a GPU and Nsight Systems' `nsys` on PATH):
//
//   flysim replay --backend cuda --disable contact --worlds 4096 --profile out/cuda
//
// re-executes flysim under nsys (common/profiling/profile_nsys.h) as
//
//   nsys profile --trace=cuda,nvtx,osrt --cuda-graph-trace=node --force-overwrite=true
//        --output out/cuda /abs/path/flysim replay --backend cuda --disable contact
//        --worlds 4096
//
// which writes out/cuda.nsys-rep. Then:
//
//   nsys stats --report cuda_gpu_kern_sum out/cuda.nsys-rep   time per kernel (each graph
//                                                            node is traced as a kernel)
//   nsys stats --report nvtx_sum out/cuda.nsys-rep            the flysim ranges: count,
//                                                            total and mean time
//   nsys stats --report nvtx_gpu_proj_sum out/cuda.nsys-rep   GPU time under each range
//   nsys stats --help-reports                                 every report nsys knows
//
// In the GUI (nsys-ui out/cuda.nsys-rep) the ranges are on the "NVTX" row of the
// main thread, domain "flysim": warmup, then timed_run with one step per launch
// under it; each step's kernels are on the CUDA rows below. To record only the timed
// run, run nsys by hand, without --profile: `nsys profile --capture-range=nvtx
// --nvtx-capture=timed_run@flysim ... flysim replay --backend cuda ...`.
//
// Tests (tests/profiling): an NVTX injection library (NVTX_INJECTION64_PATH) records
// every push and pop with its domain and name; no nsys and no GPU needed.
#ifndef FLYSIM_COMMON_BASE_NVTX_H
#define FLYSIM_COMMON_BASE_NVTX_H

#ifndef FLYSIM_NVTX
#define FLYSIM_NVTX 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// The NVTX domain of every flysim range.
#define FS_NVTX_DOMAIN "flysim"

/// Range names used by the replay driver and the cuda backend (the tests check these
/// exact strings).
#define FS_NVTX_WARMUP    "warmup"
#define FS_NVTX_TIMED_RUN "timed_run"
#define FS_NVTX_STEP      "step"
#define FS_NVTX_RECORD    "record"

#if FLYSIM_NVTX

/// Open a range named `name` (ASCII, not copied beyond the call) in the flysim
/// domain on the calling thread; ranges nest.
void fs_nvtx_push(const char* name);

/// Close the calling thread's innermost flysim range.
void fs_nvtx_pop(void);

#else

static inline void fs_nvtx_push(const char* name) {
  (void)name;
}
static inline void fs_nvtx_pop(void) {}

#endif

#ifdef __cplusplus
}
#endif
#endif
