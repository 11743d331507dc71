// The cuda backend's step kernel without the convex collider (cuda/step_kernel.cuh: its
// Shared and Own variants), and the entry points to every variant the backend launches
// (the Convex one is cuda/step_kernel_convex.cu's).
#include "cuda/step_kernel.cuh"

using namespace FS_KERNELS;

extern "C" const void* fs_step_kernel(int variant) {
  return variant == FS_STEP_CONVEX ? fs_step_kernel_convex()
         : variant == FS_STEP_OWN  ? (const void*)step_kernel<Own>
                                   : (const void*)step_kernel<Shared>;
}

extern "C" void fs_step_launch(int variant, const StepLaunch* l) {
  if (variant == FS_STEP_CONVEX)
    fs_step_launch_convex(l);
  else if (variant == FS_STEP_OWN)
    launch_step<Own>(*l);
  else
    launch_step<Shared>(*l);
}
