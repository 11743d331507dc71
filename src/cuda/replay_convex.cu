// The cuda backend's replay kernel for models with box-mesh pairs (FlyGym's terrains with
// the mesh fly): src/cuda/step_kernels.cuh's replay kernel compiled again with the box-mesh
// collider (GJK, EPA, multiccd: src/engine/stage_collision_convex.h) in the step
// (FS_DEVICE_CONVEX, src/engine/stage_collision.h says why the other replay kernels leave
// it out). One instantiation: each world with its own model where the batch has them.
#define FS_DEVICE_CONVEX      1
#define FS_REPLAY_KERNEL      replay_convex_kernel
#define FS_REPLAY_KERNEL_ONLY 1

#include <cuda_runtime.h>

#include "src/api/backend.h"
#include "src/cuda/device.h"
#include "src/cuda/kernel_world.cuh"
#include "src/engine/stage_forward.h"
#include "src/model/health.h"
#include "src/model/model.h"
#include "src/model/onchip.h"
#include "src/model/record.h"
#include "src/cuda/step_kernels.cuh"
#include "src/cuda/replay_convex.h"

extern "C" const void* fs_replay_convex_kernel(void) {
  return (const void*)FS_KERNELS::replay_convex_kernel<-1>;
}

extern "C" void fs_replay_convex_launch(const fsReplayLaunch* l) {
  FS_KERNELS::replay_convex_kernel<-1><<<l->grid, l->block, l->smem, l->stream>>>(
      *l->m, *l->d, l->models, *l->plan, *l->a, l->nstep);
}
