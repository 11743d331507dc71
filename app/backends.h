// The steppers a verb can run (cpu, cuda, host), opened by kind behind the replay
// driver's interface (common/replay/replay.h): what `flysim replay` and `flysim compare`
// share.
#ifndef FLYSIM_APP_BACKENDS_H
#define FLYSIM_APP_BACKENDS_H

#include "common/replay/options.h"
#include "common/replay/replay.h"

/// An open stepper.
typedef struct fsBackend {
  fsBackendKind kind;
  int bits; // its real: 64 (cpu, or --precision f64) or 32
  const fsBackendOps* ops;
  void* self;
  void (*destroy)(void* self);
  int nthread;    // CPU threads (0 for the GPU)
  char desc[384]; // "2 threads" / "2 threads, float32" / "NVIDIA H200 (...)"
} fsBackend;

/// Open plan r on a stepper of `kind` (bits: flysim's real; the cpu is float64),
/// nthread CPU threads (0: one per core). The error names the fix when the kind
/// is missing here (cuda without nvcc or without a GPU).
int fs_backend_open(fsBackendKind kind, int bits, const fsReplay* r, int nthread, fsBackend* out,
                    fsError* err);

/// Close (b may be zeroed or already closed).
void fs_backend_close(fsBackend* b);

/// "cpu", "cuda", "host".
const char* fs_backend_kind_name(fsBackendKind kind);

/// 1 if this flysim was built with the CUDA backend and sees a CUDA device.
int fs_backend_have_cuda(void);

#endif
