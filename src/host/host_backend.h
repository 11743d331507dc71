// The host replay backend in the precision a run asks for (flysim replay --backend
// host --precision f32|f64): both builds of src/host/replay_host.h behind one
// precision-free interface for the app, as src/cuda/cuda_backend.h does for the GPU.
#ifndef FLYSIM_HOST_HOST_BACKEND_H
#define FLYSIM_HOST_HOST_BACKEND_H

#include "common/replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/// An open host replay: its driver interface, its state and how to close it.
typedef struct fsHostBackend {
  const fsBackendOps* ops;
  void* self;
  void (*destroy)(void* self);
  int nthread;    // threads used
  char desc[384]; // "2 threads, float32"
} fsHostBackend;

/// Open plan r on nthread CPU threads (0: one per core) in float32 (bits 32) or
/// float64 (bits 64).
int fs_host_backend_open(const fsReplay* r, int nthread, int bits, fsHostBackend* out,
                         fsError* err);

#ifdef __cplusplus
}
#endif
#endif
