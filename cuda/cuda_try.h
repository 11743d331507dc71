// Checking every CUDA runtime call: the message names the expression, the CUDA
// error, the function, file and line (ggml's CUDA_CHECK, flysim's fsError).
#ifndef FLYSIM_CUDA_CUDA_TRY_H
#define FLYSIM_CUDA_CUDA_TRY_H

#include <cuda_runtime.h>

#include "common/base/error.h"

/// Run a CUDA call; on failure write the message into err (status FS_ERR_MEMORY when the
/// device ran out of memory, else FS_ERR_RUNTIME) and return -1 from the enclosing
/// function (which returns int).
#define FS_CUDA_TRY(expr, err)                                                                     \
  do {                                                                                             \
    cudaError_t fs_rc_ = (expr);                                                                   \
    if (fs_rc_ != cudaSuccess)                                                                     \
      return fs_fail_status((err),                                                                 \
                            fs_rc_ == cudaErrorMemoryAllocation ? FS_ERR_MEMORY : FS_ERR_RUNTIME,  \
                            "CUDA error %s (%s) in %s: %s at %s:%d", cudaGetErrorName(fs_rc_),     \
                            cudaGetErrorString(fs_rc_), #expr, __func__, __FILE__, __LINE__);      \
  } while (0)

/// Run a CUDA call where no error can be returned (clean-up): its error is dropped (the
/// library never prints; a sticky error shows at the next checked call).
#define FS_CUDA_IGNORE(expr) ((void)(expr))

#endif
