// The GPU replay backend in the precision a run asks for (flysim replay --precision
// f32|f64): both builds of the stepper (src/cuda/replay_cuda.h under each precision's
// names, src/exec/real.h FS_PREC) behind one precision-free interface for the app.
#ifndef FLYSIM_CUDA_CUDA_BACKEND_H
#define FLYSIM_CUDA_CUDA_BACKEND_H

#include "common/replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/// An open GPU replay: its driver interface, its state and how to close it.
typedef struct fsCudaBackend {
  const fsBackendOps* ops;
  void* self;
  void (*destroy)(void* self);
  int uses_graph; // 0 under FLYSIM_NO_GRAPH=1
  char desc[384]; // "NVIDIA H200 (sm_90, ...), CUDA runtime 13.0, float32"
} fsCudaBackend;

/// Open plan r on the current GPU in float32 (bits 32) or float64 (bits 64).
int fs_cuda_backend_open(const fsReplay* r, int bits, fsCudaBackend* out, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
