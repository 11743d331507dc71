// How a kernel finds its world and the world's view (CUDA only; cuda/device.cu's
// stepper kernels and cuda/replay_cuda.cu's replay kernel).
//
// Block (32, FS_WARPS_PER_BLOCK): a warp per threadIdx.y, each warp running
// FS_WORLDS_PER_WARP worlds on groups of FS_WORLD_LANES lanes (threadIdx.x / lanes picks
// the group, threadIdx.x % lanes is the lane: cuda/real.h). A group leaves together
// when its world is past the end; the warp's other groups sync among themselves.
#ifndef FLYSIM_CUDA_KERNEL_WORLD_CUH
#define FLYSIM_CUDA_KERNEL_WORLD_CUH

#include "cuda/device.h"
#include "cuda/onchip.h"

static const dim3 kWorldBlock(32, FS_WARPS_PER_BLOCK);

/// Blocks for nworld worlds.
static inline dim3 fs_world_grid(int nworld) {
  return dim3((unsigned)((nworld + FS_WORLDS_PER_BLOCK - 1) / FS_WORLDS_PER_BLOCK));
}

/// This thread's world.
__device__ static inline int fs_kernel_world(void) {
  return (int)((blockIdx.x * blockDim.y + threadIdx.y) * FS_WORLDS_PER_WARP +
               threadIdx.x / FS_WORLD_LANES);
}

/// This thread's world's place in its block.
__device__ static inline int fs_kernel_slot(void) {
  return (int)(threadIdx.y * FS_WORLDS_PER_WARP + threadIdx.x / FS_WORLD_LANES);
}

/// A step kernel's dynamic shared memory: each world of the block its plan's bytes.
extern __shared__ __align__(FS_CHIP_ALIGN)
char fs_chip_memory[];

/// World w's view, with the plan's fields in its part of the block's shared memory,
/// itself kept in shared memory: the stage functions load a field's pointer when they
/// use it instead of holding the view's ~130 pointers in registers (held there, they
/// spilled: 732 B of spill stores a thread).
__device__ static inline fsData* fs_kernel_view(const fsModel* m, const fsData* base, int w,
                                                const fsChipPlan* plan) {
  __shared__ fsData views[FS_WORLDS_PER_BLOCK];
  int slot = fs_kernel_slot();
  FS_LANE0 {
    fsData g = fs_data_world(m, base, w);
    views[slot] =
        plan->bytes ? fs_data_on_chip(&g, plan, fs_chip_memory + (size_t)slot * plan->bytes) : g;
  }
  FS_SYNC();
  return &views[slot];
}

#endif
