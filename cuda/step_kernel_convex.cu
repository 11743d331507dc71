// The cuda backend's step kernel for models with convex pairs (fsi_convex_types: meshes,
// ellipsoids, cylinders with most shapes; FlyGym's terrains with the mesh fly, box-mesh):
// cuda/step_kernel.cuh's Convex variant, compiled with the convex collider (GJK, EPA,
// multiccd: common/engine/collision_convex.h) in the step (FS_DEVICE_CONVEX;
// cuda/step_kernel.cuh says why the other variants leave it out). Each world steps with its
// own model where the batch has them.
#define FS_DEVICE_CONVEX 1
#include "cuda/step_kernel.cuh"

using namespace FS_KERNELS;

extern "C" const void* fs_step_kernel_convex(void) {
  return (const void*)step_kernel<Convex>;
}

extern "C" void fs_step_launch_convex(const StepLaunch* l) {
  launch_step<Convex>(*l);
}
