// The kernels the engine's tests and parity checks run on a device (cuda/test_kernels.cu):
// one stage of every world, mj_forward, or steps, each without a graph and synchronous,
// on any model (the convex collider is in them). Host-callable C API over a device's
// memory (cuda/device.h).
#ifndef FLYSIM_CUDA_TEST_KERNELS_H
#define FLYSIM_CUDA_TEST_KERNELS_H

#include "common/base/error.h"
#include "cuda/device.h"

// This build's names (common/exec/real.h FS_PREC): both precisions link into one program.
#define fs_device_stage   FS_PREC(fs_device_stage)
#define fs_device_forward FS_PREC(fs_device_forward)
#define fs_device_step    FS_PREC(fs_device_step)

#ifdef __cplusplus
extern "C" {
#endif

/// Run one stage (fsStage) on every world / mj_forward / nstep steps (the step kernel's
/// Bare variant, with dev's lanes and on-chip plan), on dev's stream, and wait. A device
/// whose worlds have their own models is refused by fs_device_step (the cuda backend
/// steps those).
int fs_device_stage(fsDevice* dev, int stage, fsError* err);
int fs_device_forward(fsDevice* dev, fsError* err);
int fs_device_step(fsDevice* dev, int nstep, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
