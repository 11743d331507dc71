// How a kernel finds its world and the world's view (CUDA only; the step kernel,
// cuda/step_kernel.cuh, and the tests' kernels, cuda/test_kernels.cu), and the launch
// geometry the device's budgets use (cuda/device.cu).
//
// Block (lanes, FS_BLOCK_THREADS / lanes), lanes per world chosen at launch (common/exec/real.h):
// threadIdx.x is the lane, threadIdx.y the world in the block; a warp holds 32 / lanes
// worlds. A world's lanes leave together when it is past the end; the warp's other
// worlds sync among themselves.
#ifndef FLYSIM_CUDA_KERNEL_WORLD_CUH
#define FLYSIM_CUDA_KERNEL_WORLD_CUH

#include "cuda/device.h"
#include "common/model/onchip.h"

/// The namespace of this precision's kernels (fs_f32 or fs_f64): a program links both
/// builds, and the kernels' names must tell them apart (profilers show them; the GPU
/// simulator binds a launch to a kernel by its name).
#define FS_KERNELS FS_PREC(fs)

/// A block of `lanes` lanes a world.
static inline dim3 fs_world_block(int lanes) {
  return dim3((unsigned)lanes, (unsigned)(FS_BLOCK_THREADS / lanes));
}

/// Blocks for nworld worlds.
static inline dim3 fs_world_grid(int nworld, int lanes) {
  int per_block = FS_BLOCK_THREADS / lanes;
  return dim3((unsigned)((nworld + per_block - 1) / per_block));
}

/// A world's view in shared memory, padded to keep the regions aligned.
#define FS_VIEW_BYTES ((sizeof(fsData) + FS_CHIP_ALIGN - 1) / FS_CHIP_ALIGN * FS_CHIP_ALIGN)

/// A step kernel's dynamic shared memory per block: each world's view, then each world's
/// on-chip region of plan_bytes.
static inline size_t fs_world_smem(int lanes, int plan_bytes) {
  return (size_t)(FS_BLOCK_THREADS / lanes) * (FS_VIEW_BYTES + (size_t)plan_bytes);
}

/// This thread's world.
__device__ static inline int fs_kernel_world(void) {
  return (int)(blockIdx.x * blockDim.y + threadIdx.y);
}

/// A step kernel's dynamic shared memory (fs_world_smem).
extern __shared__ __align__(FS_CHIP_ALIGN)
char fs_world_memory[];

/// World w's view, with the plan's fields in its region of the block's shared memory,
/// itself kept in shared memory: the stage functions load a field's pointer when they
/// use it instead of holding the view's ~130 pointers in registers (held there, they
/// spilled: 732 B of spill stores a thread). Lane 0 writes it (fs_data_on_chip).
__device__ static inline fsData* fs_kernel_view(const fsModel* m, const fsData* base, int w,
                                                const fsChipPlan* plan) {
  fsData* v = (fsData*)(fs_world_memory + threadIdx.y * FS_VIEW_BYTES);
  FS_LANE0 fs_data_on_chip(m, base, 0, w, plan, // a device batch: each field's worlds side by side
                           fs_world_memory + blockDim.y * FS_VIEW_BYTES + threadIdx.y * plan->bytes,
                           v);
  FS_SYNC();
  return v;
}

#endif
