// The batched stepper's device memory: the model uploaded once, every world's data in
// device memory (world-major, as common/engine/fields.h defines), each world's own model
// where the worlds vary, and each world's region of a block's shared memory (the on-chip
// plan, common/model/onchip.h) with the kernels' shared-memory attributes and resources.
// Host-callable C API; every CUDA call checked. The kernels that run the stage functions on
// it: cuda/step_kernel.cuh (the step), cuda/test_kernels.h (the tests' stages, forward and
// steps); the cuda backend (cuda/backend_cuda.cu) builds on it.
#ifndef FLYSIM_CUDA_DEVICE_H
#define FLYSIM_CUDA_DEVICE_H

#include "common/base/error.h"
#include "common/model/worlds.h"
#include "common/engine/fields.h"

// This build's names (common/exec/real.h FS_PREC): both precisions link into one program.
#define fs_cuda_device_count         FS_PREC(fs_cuda_device_count)
#define fs_device_create             FS_PREC(fs_device_create)
#define fs_device_create_on          FS_PREC(fs_device_create_on)
#define fs_device_destroy            FS_PREC(fs_device_destroy)
#define fs_device_upload             FS_PREC(fs_device_upload)
#define fs_device_download           FS_PREC(fs_device_download)
#define fs_device_model              FS_PREC(fs_device_model)
#define fs_device_data               FS_PREC(fs_device_data)
#define fs_device_nworld             FS_PREC(fs_device_nworld)
#define fs_device_stream             FS_PREC(fs_device_stream)
#define fs_device_set_world_models   FS_PREC(fs_device_set_world_models)
#define fs_device_clear_world_models FS_PREC(fs_device_clear_world_models)
#define fs_device_kernel_info        FS_PREC(fs_device_kernel_info)
#define fs_device_chip_budget        FS_PREC(fs_device_chip_budget)
#define fs_device_set_chip_plan      FS_PREC(fs_device_set_chip_plan)
#define fs_device_chip_plan          FS_PREC(fs_device_chip_plan)
#define fs_device_world_models       FS_PREC(fs_device_world_models)
#define fs_device_lanes              FS_PREC(fs_device_lanes)
#define fs_world_lanes_env           FS_PREC(fs_world_lanes_env)
#define fs_device_kernel_smem        FS_PREC(fs_device_kernel_smem)

#ifdef __cplusplus
extern "C" {
#endif

/// The step kernel as compiled and launched (flysim bench): its registers, local
/// memory (stack and spills) and shared memory per thread block (static and the
/// on-chip plan's), the plan's bytes per world, the block, and the theoretical
/// occupancy (resident threads over the SM's maximum).
typedef struct fsKernelInfo {
  int registers, local_bytes, shared_bytes, chip_bytes, block_threads;
  double occupancy;
} fsKernelInfo;

typedef struct fsDevice fsDevice;

/// Number of usable CUDA devices (0 if no driver or no device).
int fs_cuda_device_count(void);

/// Upload model m (host arrays, from fs_model_build) and allocate nworld worlds
/// on the current device, with a stream of its own. Fails clearly without a GPU or
/// without the memory.
fsDevice* fs_device_create(const fsModel* m, int nworld, fsError* err);

/// fs_device_create queueing dev's work on `stream` (a cudaStream_t of the caller's,
/// which dev uses but never destroys), or on a stream of its own (NULL).
fsDevice* fs_device_create_on(const fsModel* m, int nworld, void* stream, fsError* err);
void fs_device_destroy(fsDevice* dev);

/// Copy every field of every world host -> device / device -> host (synchronous).
int fs_device_upload(fsDevice* dev, const fsWorlds* host, fsError* err);
int fs_device_download(fsDevice* dev, fsWorlds* host, fsError* err);

/// The device copy of the model (device pointers) and the worlds' base pointers.
const fsModel* fs_device_model(const fsDevice* dev);
const fsData* fs_device_data(const fsDevice* dev);
int fs_device_nworld(const fsDevice* dev);

/// The stream all of dev's work is queued on (a cudaStream_t).
void* fs_device_stream(const fsDevice* dev);

/// Per-world models (fs_batch_set_param): world(arg, w) is world w's host model (sizes
/// as base's, the host model dev was made from; borrowed for the call), or NULL: base
/// itself. The fields that differ from base in any world get per-world device copies
/// (uploaded on dev's stream); the others, and the meshes, stay shared; each world's
/// options (gravity, ...) are its own. The cuda backend's step kernel then reads world w's
/// model (its Own or Convex variant, cuda/step_kernel.cuh); fs_device_step refuses such a
/// device. Replaces the worlds' models of an earlier call (after the work queued on dev's
/// stream is done).
int fs_device_set_world_models(fsDevice* dev, const fsModel* base,
                               const fsModel* (*world)(void* arg, int w), void* arg, fsError* err);

/// Every world back to the model dev was made from (after the work queued on dev's
/// stream is done): fs_device_world_models is NULL again.
int fs_device_clear_world_models(fsDevice* dev, fsError* err);

/// The most on-chip bytes a world of `kernel` (a step kernel, keeping the views in
/// shared memory) can have on the current device: its shared memory per block over a
/// block's worlds; with keep_occupancy, at most the share of an SM's shared memory of
/// each of the blocks the kernel's registers let it hold (without, kernel is not read and
/// may be NULL). -1 on a CUDA error.
long fs_device_chip_budget(const fsDevice* dev, const void* kernel, int keep_occupancy,
                           fsError* err);

/// The step kernels keep plan's fields of each world in shared memory
/// (common/model/onchip.h) from now on; the stage kernels (fs_device_stage, _forward) never
/// do. Fails, keeping the current plan, if it does not fit a block's shared memory. Each
/// kernel that launches with it raises its own attributes (fs_device_kernel_smem).
typedef struct fsChipPlan fsChipPlan;
int fs_device_set_chip_plan(fsDevice* dev, const fsChipPlan* plan, fsError* err);

/// Lanes per world of dev's kernels: FLYSIM_WORLD_LANES at fs_device_create, else
/// FS_WORLD_LANES (common/exec/real.h).
int fs_device_lanes(const fsDevice* dev);

/// FLYSIM_WORLD_LANES (a power of two from 1 to 32) or FS_WORLD_LANES if unset; -1
/// with an error naming the variable and the fix if it is not one.
int fs_world_lanes_env(fsError* err);

/// The plan the step kernels use (none: bytes 0).
const fsChipPlan* fs_device_chip_plan(const fsDevice* dev);

/// The worlds' own models on the device (fs_device_set_world_models), or NULL.
const fsModel* fs_device_world_models(const fsDevice* dev);

/// A step kernel's fsKernelInfo on the current device, launched with dev's lanes and plan:
/// kernel is the __global__ function (the variant the cuda backend launches).
int fs_device_kernel_info(const fsDevice* dev, const void* kernel, fsKernelInfo* out, fsError* err);

/// Let `kernel` (a step kernel) launch with smem bytes of dynamic shared memory a block
/// and as many blocks an SM as its registers allow: its opt-in limit
/// (cudaFuncAttributeMaxDynamicSharedMemorySize) and its preferred shared-memory carveout
/// (the percentage of the SM's shared memory those blocks take) are raised to what that
/// needs. Both attributes belong to the kernel, process-wide, and every backend that
/// launches it shares them: they only ever grow (under a lock), so that a second live
/// backend with a smaller plan never takes away what the first one's launches need.
int fs_device_kernel_smem(const void* kernel, size_t smem, fsError* err);

/// The kernels' blocks: FS_BLOCK_THREADS threads (128: four warps, each holding whole
/// worlds), lanes per world chosen at launch (fs_device_lanes).
#ifndef FS_BLOCK_THREADS // (CMake's FLYSIM_BLOCK_THREADS)
#define FS_BLOCK_THREADS 128
#endif

#ifdef __cplusplus
}
#endif
#endif
