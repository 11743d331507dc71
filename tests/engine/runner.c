// The runner of a test program: the host's, or the device's in the GPU variants
// (FSH_RUNNER_CUDA), whose open returns FSH_SKIP (77: ctest's skip) without a GPU.
#include "common/parity/harness.h"

fshRunner fsh_runner(void) {
#ifdef FSH_RUNNER_CUDA
  return fsh_runner_cuda();
#else
  return fsh_runner_host();
#endif
}
