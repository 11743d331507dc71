// The batched stepper on a GPU: the model uploaded once, every world's data in
// device memory (world-major, as cuda/fields.h defines), and the kernels that run
// the stage functions of cuda/stage_*.h -- a warp per world, its lanes over the
// world's elements. Host-callable C API; every CUDA call checked.
#ifndef FLYSIM_CUDA_DEVICE_H
#define FLYSIM_CUDA_DEVICE_H

#include "common/base/error.h"
#include "cuda/batch.h"
#include "cuda/fields.h"

// This build's names (cuda/real.h FS_PREC): both precisions link into one program.
#define fs_cuda_device_count       FS_PREC(fs_cuda_device_count)
#define fs_device_create           FS_PREC(fs_device_create)
#define fs_device_destroy          FS_PREC(fs_device_destroy)
#define fs_device_upload           FS_PREC(fs_device_upload)
#define fs_device_download         FS_PREC(fs_device_download)
#define fs_device_stage            FS_PREC(fs_device_stage)
#define fs_device_forward          FS_PREC(fs_device_forward)
#define fs_device_step             FS_PREC(fs_device_step)
#define fs_device_model            FS_PREC(fs_device_model)
#define fs_device_data             FS_PREC(fs_device_data)
#define fs_device_nworld           FS_PREC(fs_device_nworld)
#define fs_device_stream           FS_PREC(fs_device_stream)
#define fs_device_launch_step      FS_PREC(fs_device_launch_step)
#define fs_device_set_world_models FS_PREC(fs_device_set_world_models)
#define fs_device_kernel_info      FS_PREC(fs_device_kernel_info)

#ifdef __cplusplus
extern "C" {
#endif

/// The step kernel as compiled and launched (flysim bench): its registers, local
/// memory (stack and spills) and static shared memory per thread block, the block, and
/// the theoretical occupancy (resident threads over the SM's maximum).
typedef struct fsKernelInfo {
  int registers, local_bytes, shared_bytes, block_threads;
  double occupancy;
} fsKernelInfo;

typedef struct fsDevice fsDevice;

/// Number of usable CUDA devices (0 if no driver or no device).
int fs_cuda_device_count(void);

/// Upload model m (host arrays, from fs_model_build) and allocate nworld worlds
/// on the current device. Fails clearly without a GPU or without the memory.
fsDevice* fs_device_create(const fsModel* m, int nworld, fsError* err);
void fs_device_destroy(fsDevice* dev);

/// Copy every field of every world host -> device / device -> host (synchronous).
int fs_device_upload(fsDevice* dev, const fsBatch* host, fsError* err);
int fs_device_download(fsDevice* dev, fsBatch* host, fsError* err);

/// Run one stage (fsStage) on every world / mj_forward / nstep steps, without a
/// graph (the graph is the replay's, cuda/replay_cuda.h). Synchronous.
int fs_device_stage(fsDevice* dev, int stage, fsError* err);
int fs_device_forward(fsDevice* dev, fsError* err);
int fs_device_step(fsDevice* dev, int nstep, fsError* err);

/// The device copy of the model (device pointers) and the worlds' base pointers.
const fsModel* fs_device_model(const fsDevice* dev);
const fsData* fs_device_data(const fsDevice* dev);
int fs_device_nworld(const fsDevice* dev);

/// The stream all of dev's work is queued on (a cudaStream_t).
void* fs_device_stream(const fsDevice* dev);

/// Launch the step kernel (nstep steps of every world) on dev's stream, without
/// waiting: what the replay captures into its graph.
int fs_device_launch_step(fsDevice* dev, int nstep, fsError* err);

/// Per-world models (flysim generate's model axes): world(arg, w, out, err) builds
/// world w's host model (sizes as base's, the model dev was made from). The fields
/// that differ from base in any world get per-world device copies; the others, and
/// the meshes, stay shared; each world's options (gravity, ...) are its own. From then
/// on the step kernel reads world w's model (a second kernel: the shared model's
/// kernel is unchanged).
int fs_device_set_world_models(fsDevice* dev, const fsModel* base,
                               int (*world)(void* arg, int w, fsModel* out, fsError* err),
                               void* arg, fsError* err);

/// The step kernel's fsKernelInfo on the current device.
int fs_device_kernel_info(const fsDevice* dev, fsKernelInfo* out, fsError* err);

/// Worlds per block of the kernels (a warp each).
#define FS_WORLDS_PER_BLOCK 4

#ifdef __cplusplus
}
#endif
#endif
