// With NVTX off, common/base/nvtx.h's wrappers compile to nothing: this file includes it
// with FLYSIM_NVTX=0 whatever the build says, runs the range pattern with the test
// injection library named in the environment, and checks that nvtx3 never loaded it
// and that no nvtx3 code is in this binary. In a -DFLYSIM_NVTX=OFF build it also
// checks the flysim executable.
#if defined(FLYSIM_NVTX) && FLYSIM_NVTX
#define BUILD_HAS_NVTX 1
#else
#define BUILD_HAS_NVTX 0
#endif
#undef FLYSIM_NVTX
#define FLYSIM_NVTX 0

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/base/nvtx.h"
#include "tests/profiling/nvtx_log.h"
#include "tests/testutil.h"

int main(void) {
  const char* dir = fs_test_tmpdir("nvtx-off");
  char log[600];
  snprintf(log, sizeof log, "%s/nvtx.log", dir);
#ifdef FLYSIM_NVTX_INJECT
  setenv("NVTX_INJECTION64_PATH", FLYSIM_NVTX_INJECT, 1);
#endif
  setenv("FLYSIM_NVTX_LOG", log, 1);

  fs_nvtx_push(FS_NVTX_WARMUP);
  fs_nvtx_pop();
  fs_nvtx_push(FS_NVTX_TIMED_RUN);
  for (int i = 0; i < 10; i++) {
    fs_nvtx_push(FS_NVTX_STEP);
    fs_nvtx_pop();
  }
  fs_nvtx_pop();

  struct stat st;
  CHECK_MSG(stat(log, &st) != 0, "%s exists: NVTX was initialised with FLYSIM_NVTX=0", log);
  int in_self = nvtx_binary_has_loader("/proc/self/exe");
  CHECK_MSG(in_self == 0, "nvtx3 code in this binary (%d) with FLYSIM_NVTX=0", in_self);
#if !BUILD_HAS_NVTX
  int in_flysim = nvtx_binary_has_loader(FLYSIM_BINARY);
  CHECK_MSG(in_flysim == 0, "%s: nvtx3 code (%d) in a -DFLYSIM_NVTX=OFF build", FLYSIM_BINARY,
            in_flysim);
#endif
  printf("NVTX option of this build: %s\n", BUILD_HAS_NVTX ? "ON" : "OFF");
  return fs_test_finish("test_nvtx_off");
}
