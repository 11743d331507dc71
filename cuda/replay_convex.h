// The replay kernel for models with box-mesh pairs (cuda/replay_convex.cu): the same
// kernel as cuda/step_kernels.cuh's replay_kernel, with the box-mesh collider in the
// step. Include after step_kernels.cuh (its StepArgs).
#ifndef FLYSIM_CUDA_REPLAY_CONVEX_H
#define FLYSIM_CUDA_REPLAY_CONVEX_H

// This build's names (common/exec/real.h FS_PREC): both precisions link into one library.
#define fs_replay_convex_kernel FS_PREC(fs_replay_convex_kernel)
#define fs_replay_convex_launch FS_PREC(fs_replay_convex_launch)

/// A launch of the replay kernel: what replay_kernel's launch takes.
struct fsReplayLaunch {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  const fsModel* m;
  const fsData* d;
  const fsModel* models; // each world's own model, or NULL: m
  const fsChipPlan* plan;
  const FS_KERNELS::StepArgs* a;
  int nstep;
};

/// The kernel (for attributes, occupancy and shared memory): replay_convex_kernel<-1>,
/// which steps each world with its own model where models is not NULL.
extern "C" const void* fs_replay_convex_kernel(void);

/// nstep steps of every world on l->stream, as replay_kernel's launch does.
extern "C" void fs_replay_convex_launch(const fsReplayLaunch* l);

#endif
