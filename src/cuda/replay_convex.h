// The replay kernel for models with box-mesh pairs (src/cuda/replay_convex.cu): the same
// kernel as src/cuda/step_kernels.cuh's replay_kernel, with the box-mesh collider in the
// step. Include after step_kernels.cuh (its StepArgs), within nothing.
#ifndef FLYSIM_CUDA_REPLAY_CONVEX_H
#define FLYSIM_CUDA_REPLAY_CONVEX_H

namespace FS_KERNELS {

/// The kernel (for attributes, occupancy and shared memory): replay_convex_kernel<-1>,
/// which steps each world with its own model where models is not NULL.
const void* replay_convex_kernel_ptr(void);

/// nstep steps of every world on stream, as replay_kernel's launch does.
void replay_convex_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const fsModel& m,
                          const fsData& d, const fsModel* models, const fsChipPlan& plan,
                          const StepArgs& a, int nstep);

} // namespace FS_KERNELS

#endif
