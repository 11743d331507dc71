// The cuda backend's replay kernel for models with box-mesh pairs (FlyGym's terrains with
// the mesh fly): cuda/step_kernels.cuh's replay kernel compiled again with the box-mesh
// collider (GJK, EPA, multiccd: common/engine/collision_convex.h) in the step
// (FS_DEVICE_CONVEX, common/engine/stage_collision.h says why the other replay kernels leave
// it out). One instantiation: each world with its own model where the batch has them.
#define FS_DEVICE_CONVEX      1
#define FS_REPLAY_KERNEL      replay_convex_kernel
#define FS_REPLAY_KERNEL_ONLY 1

#include <cuda_runtime.h>

#include "common/api/backend.h"
#include "cuda/device.h"
#include "cuda/kernel_world.cuh"
#include "common/engine/stage_forward.h"
#include "common/model/health.h"
#include "common/model/model.h"
#include "common/model/onchip.h"
#include "common/model/record.h"
#include "cuda/step_kernels.cuh"
#include "cuda/replay_convex.h"

extern "C" const void* fs_replay_convex_kernel(void) {
  return (const void*)FS_KERNELS::replay_convex_kernel<-1>;
}

extern "C" void fs_replay_convex_launch(const fsReplayLaunch* l) {
  FS_KERNELS::replay_convex_kernel<-1><<<l->grid, l->block, l->smem, l->stream>>>(
      *l->m, *l->d, l->models, *l->plan, *l->a, l->nstep);
}
