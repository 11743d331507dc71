// The GPU replay backend: every world of a replay plan stepped by the batched
// stepper on one GPU. The same interface as the CPU backend (src/cpu/replay_cpu.h)
// for fs_replay_run:
//
//   fsCudaReplay* c = fs_cuda_create(&plan, &err);   // NULL + message: exit 1
//   fs_replay_run(&plan, &fs_cuda_ops, c, &opt, &result, &err);
//   fs_cuda_destroy(c);
//
// Each step is one CUDA graph, captured once per (model, number of worlds) and
// replayed: targets (each world's row of the device-resident clip, from a device
// step counter: world w at plan.world_start[w]) -> the step kernel (mj_step of
// every world, a warp each) -> recording (joint angles and targets into the
// block's device buffer) -> world health (first warning) -> counter + 1.
// FLYSIM_NO_GRAPH=1 launches the same kernels without the graph (debugging).
// begin_block launches a block's steps and queues the copies of what they
// recorded to pinned host memory; end_block waits for the device, so the
// driver's clock stops only after the GPU is done.
//
// The model must pass fs_model_check (src/model/model.h): until part 2 (contacts and
// the constraint solver), NeuroMechFly runs with contacts disabled (flysim
// replay --disable contact); otherwise fs_cuda_create fails with the checker's
// list. No GPU: fs_cuda_create fails with a clear message.
#ifndef FLYSIM_CUDA_REPLAY_CUDA_H
#define FLYSIM_CUDA_REPLAY_CUDA_H

#include "common/replay/replay.h"
#include "src/cuda/device.h"

// This build's names (src/exec/real.h FS_PREC): both precisions link into one program.
#define fs_cuda_create     FS_PREC(fs_cuda_create)
#define fs_cuda_destroy    FS_PREC(fs_cuda_destroy)
#define fs_cuda_ops        FS_PREC(fs_cuda_ops)
#define fs_cuda_uses_graph FS_PREC(fs_cuda_uses_graph)
#define fs_cuda_describe   FS_PREC(fs_cuda_describe)
#define fs_cuda_device     FS_PREC(fs_cuda_device)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsCudaReplay fsCudaReplay;

/// Upload the model, the clip and N worlds to the current GPU. r must outlive it.
fsCudaReplay* fs_cuda_create(const fsReplay* r, fsError* err);
void fs_cuda_destroy(fsCudaReplay* c);

/// The backend interface (warm-up, blocks, world health) for fs_replay_run.
extern const fsBackendOps fs_cuda_ops;

/// 1 if steps replay the CUDA graph, 0 under FLYSIM_NO_GRAPH=1.
int fs_cuda_uses_graph(const fsCudaReplay* c);

/// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, 1980 MHz), driver 13.0, CUDA runtime 13.0,
/// float32" into out.
void fs_cuda_describe(const fsCudaReplay* c, char* out, size_t n);

/// The stepper's device (model and worlds), e.g. to read worlds back in tests.
fsDevice* fs_cuda_device(fsCudaReplay* c);

#ifdef __cplusplus
}
#endif
#endif
