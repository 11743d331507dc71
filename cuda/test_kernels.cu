// The kernels the engine's tests and parity checks run (cuda/test_kernels.h): a stage of
// every world, mj_forward, and the step kernel's Bare variant (cuda/step_kernel.cuh), each
// a thin map of a group of a warp's lanes to a world (cuda/kernel_world.cuh) over the stage
// functions. They run any model, so they collide convex pairs too (FS_DEVICE_CONVEX,
// common/engine/stage_collision.h).
#define FS_DEVICE_CONVEX 1
#include "cuda/test_kernels.h"

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/cuda_try.h"
#include "cuda/step_kernel.cuh"

namespace FS_KERNELS {

static __global__ void stage_kernel(const __grid_constant__ fsModel m,
                                    const __grid_constant__ fsData base, int nworld, int stage) {
  int w = fs_kernel_world();
  if (w >= nworld) return;
  fsData d = fs_data_world(&m, &base, 0, w);
  fs_stage_run(&m, &d, stage);
}

static __global__ void forward_kernel(const __grid_constant__ fsModel m,
                                      const __grid_constant__ fsData base, int nworld) {
  int w = fs_kernel_world();
  if (w >= nworld) return;
  fsData d = fs_data_world(&m, &base, 0, w);
  fs_forward(&m, &d);
  fs_sensor(&m, &d); // mj_forward's sensors (none in the kernels yet: fs_model_without_sensors)
}

} // namespace FS_KERNELS
using namespace FS_KERNELS;

// Wait for the launch just queued on dev's stream.
static int finish(fsDevice* dev, fsError* err) {
  if (cudaPeekAtLastError() == cudaErrorNoKernelImageForDevice) {
    (void)cudaGetLastError();
    return fs_fail(err,
                   "the tests' kernels (cuda/test_kernels.cu) are built for CUDA "
                   "architectures %s alone, not this GPU's; fix: reconfigure with "
                   "-DFLYSIM_CUDA_TEST_ARCHITECTURES=<this GPU's, e.g. 80>",
                   FS_TEST_ARCHITECTURES);
  }
  FS_CUDA_TRY(cudaGetLastError(), err);
  FS_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)fs_device_stream(dev)), err);
  return 0;
}

int fs_device_stage(fsDevice* dev, int stage, fsError* err) {
  int n = fs_device_nworld(dev), lanes = fs_device_lanes(dev);
  stage_kernel<<<fs_world_grid(n, lanes), fs_world_block(lanes), 0,
                 (cudaStream_t)fs_device_stream(dev)>>>(*fs_device_model(dev), *fs_device_data(dev),
                                                        n, stage);
  return finish(dev, err);
}

int fs_device_forward(fsDevice* dev, fsError* err) {
  int n = fs_device_nworld(dev), lanes = fs_device_lanes(dev);
  forward_kernel<<<fs_world_grid(n, lanes), fs_world_block(lanes), 0,
                   (cudaStream_t)fs_device_stream(dev)>>>(*fs_device_model(dev),
                                                          *fs_device_data(dev), n);
  return finish(dev, err);
}

int fs_device_step(fsDevice* dev, int nstep, fsError* err) {
  if (fs_device_world_models(dev))
    return fs_fail(err, "fs_device_step: the worlds have their own models, which the cuda "
                        "backend steps (cuda/backend_cuda.cu); fix: step them there");
  const fsChipPlan* plan = fs_device_chip_plan(dev);
  int n = fs_device_nworld(dev), lanes = fs_device_lanes(dev);
  size_t smem = fs_world_smem(lanes, plan->bytes);
  if (fs_device_kernel_smem((const void*)step_kernel<Bare>, smem, err)) return -1;
  StepArgs a;
  memset(&a, 0, sizeof a);
  a.N = n;
  StepLaunch l = {fs_world_grid(n, lanes),
                  fs_world_block(lanes),
                  smem,
                  (cudaStream_t)fs_device_stream(dev),
                  fs_device_model(dev),
                  fs_device_data(dev),
                  NULL,
                  plan,
                  &a,
                  nstep};
  launch_step<Bare>(l);
  return finish(dev, err);
}
