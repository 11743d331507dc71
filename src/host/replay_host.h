// The host replay backend (flysim replay --backend host): the batched stepper's own
// stage code (src/engine/stage_*.h, what the kernels run) stepping every world of a
// replay plan on CPU threads, each thread a contiguous range of worlds as cpu/
// does. The same interface as the CPU and GPU backends for fs_replay_run:
//
//   fsHostReplay* h = fs_host_create(&plan, nthread, &err); // NULL + message: exit 1
//   fs_replay_run(&plan, &fs_host_ops, h, &opt, &result, &err);
//   fs_host_destroy(h);
//
// It runs what the GPU runs, in the same real (float32 or float64), without a GPU:
// comparisons in CI and on a laptop, and the GPU code's behaviour apart from the
// device. The model must pass fs_model_check (src/model/model.h), as on the GPU.
//
// FLYSIM_PERTURB_PASSIVE=<x> (a test switch, src/host/host.h; named in the description
// when set) scales every world's passive force by (1 + x) in every step: a
// deliberately broken stage, which `flysim compare` must catch.
#ifndef FLYSIM_HOST_REPLAY_HOST_H
#define FLYSIM_HOST_REPLAY_HOST_H

#include "common/replay/replay.h"
#include "src/exec/real.h"

// This build's names (src/exec/real.h FS_PREC): both precisions link into one program.
#define fs_host_create   FS_PREC(fs_host_create)
#define fs_host_destroy  FS_PREC(fs_host_destroy)
#define fs_host_ops      FS_PREC(fs_host_ops)
#define fs_host_threads  FS_PREC(fs_host_threads)
#define fs_host_describe FS_PREC(fs_host_describe)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsHostReplay fsHostReplay;

/// Convert the model and allocate N worlds on nthread threads (capped at N; 0: one
/// per core). r must outlive the stepper.
fsHostReplay* fs_host_create(const fsReplay* r, int nthread, fsError* err);
void fs_host_destroy(fsHostReplay* h);

/// The backend interface (warm-up, blocks, world health, compare's reads).
extern const fsBackendOps fs_host_ops;

/// Threads actually used.
int fs_host_threads(const fsHostReplay* h);

/// "2 threads, float32" (and the perturbation, when FLYSIM_PERTURB_PASSIVE is set).
void fs_host_describe(const fsHostReplay* h, char* out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
