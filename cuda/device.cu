// The batched stepper's device memory (cuda/device.h): allocation and copies driven by the
// field tables, each world's own model, and each world's share of a block's shared memory
// (the on-chip plan, the kernels' shared-memory attributes). No kernels: the step kernel is
// cuda/step_kernel.cuh's, the tests' are cuda/test_kernels.cu's.
#include "cuda/device.h"

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_try.h"
#include "common/model/model.h"
#include "cuda/kernel_world.cuh"
#include "common/model/onchip.h"

struct fsDevice {
  fsModel m;   // device pointers, host-side sizes and options
  fsData base; // device base pointers of every world's data
  int nworld;
  cudaStream_t stream;
  int own_stream;      // dev made the stream (and destroys it)
  fsModel* d_models;   // (nworld) per-world models on the device, or NULL
  void** world_fields; // (fs_model_nfield) their per-world copies (nworld x field), or NULL
  fsChipPlan chip;     // the step's on-chip fields (common/model/onchip.h); none until set
  int lanes;           // lanes per world (common/exec/real.h)
};

//---------------------------------- shared memory and a kernel's resources -----------------------

long fs_device_chip_budget(const fsDevice* dev, const void* kernel, int keep_occupancy,
                           fsError* err) {
  int device = 0, optin = 0, per_sm = 0, reserved = 0, blocks = 0;
  FS_CUDA_TRY(cudaGetDevice(&device), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
              err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device),
              err);
  long per_block = FS_BLOCK_THREADS / dev->lanes;
  long most = (long)optin; // a block's shared memory at most
  if (keep_occupancy) {    // the blocks the registers allow, each its share of the SM
    FS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, FS_BLOCK_THREADS, 0),
                err);
    long share = blocks > 0 ? (long)per_sm / blocks - reserved : 0;
    most = share < most ? share : most;
  }
  most = most / per_block - (long)FS_VIEW_BYTES; // each world: its view, then its region
  return most > 0 ? most / FS_CHIP_ALIGN * FS_CHIP_ALIGN : 0;
}

// What fs_device_kernel_smem has granted each kernel so far (process-wide, as the
// attributes are).
enum { MAX_SMEM_KERNELS = 16 };
static struct {
  const void* kernel;
  size_t smem;
  int carveout;
} g_smem[MAX_SMEM_KERNELS];
static int g_nsmem;
static pthread_mutex_t g_smem_lock = PTHREAD_MUTEX_INITIALIZER;

static int raise_smem(const void* kernel, size_t smem, fsError* err) {
  int device = 0, per_sm = 0, reserved = 0, blocks = 0, k = 0;
  cudaFuncAttributes a;
  FS_CUDA_TRY(cudaGetDevice(&device), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
              err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device),
              err);
  FS_CUDA_TRY(cudaFuncGetAttributes(&a, kernel), err);
  FS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, FS_BLOCK_THREADS, 0),
              err);
  // the register-limited blocks, each its static and dynamic shared memory and the
  // system's reservation, as a percentage of the SM's (rounded up; the driver picks the
  // next configuration it has)
  double need = (double)blocks * (double)(smem + a.sharedSizeBytes + (size_t)reserved);
  int carveout = per_sm > 0 ? (int)((need * 100 + per_sm - 1) / per_sm) : 100;
  carveout = carveout > 100 ? 100 : carveout < 0 ? 0 : carveout;
  while (k < g_nsmem && g_smem[k].kernel != kernel) k++;
  if (k == g_nsmem) {
    if (g_nsmem == MAX_SMEM_KERNELS)
      return fs_fail(err, "fs_device_kernel_smem: more than %d kernels", MAX_SMEM_KERNELS);
    g_smem[g_nsmem++] = {kernel, 0, -1};
  }
  if (smem > g_smem[k].smem) {
    FS_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), err);
    g_smem[k].smem = smem;
  }
  if (carveout > g_smem[k].carveout) {
    FS_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout),
        err);
    g_smem[k].carveout = carveout;
  }
  return 0;
}

int fs_device_kernel_smem(const void* kernel, size_t smem, fsError* err) {
  pthread_mutex_lock(&g_smem_lock);
  int rc = raise_smem(kernel, smem, err);
  pthread_mutex_unlock(&g_smem_lock);
  return rc;
}

int fs_device_set_chip_plan(fsDevice* dev, const fsChipPlan* plan, fsError* err) {
  long most = fs_device_chip_budget(dev, NULL, 0, err);
  if (most < 0) return -1;
  if (plan->bytes > most)
    return fs_fail(err,
                   "the on-chip plan takes %d bytes a world, the device has %ld for each of a "
                   "block's %d worlds; fix: a smaller FLYSIM_ONCHIP_BYTES",
                   plan->bytes, most, FS_BLOCK_THREADS / dev->lanes);
  dev->chip = *plan;
  return 0;
}

int fs_world_lanes_env(fsError* err) {
  const char* s = getenv("FLYSIM_WORLD_LANES");
  if (!s || !*s) return FS_WORLD_LANES;
  char* end;
  long n = strtol(s, &end, 10);
  if (*end || !fs_lanes_valid(n))
    return fs_fail(err,
                   "FLYSIM_WORLD_LANES='%s' is not 1, 2, 4, 8, 16 or 32; fix: unset it (default "
                   "%d lanes a world) or give a power of two up to 32",
                   s, FS_WORLD_LANES);
  return (int)n;
}

int fs_device_lanes(const fsDevice* dev) {
  return dev->lanes;
}

const fsChipPlan* fs_device_chip_plan(const fsDevice* dev) {
  return &dev->chip;
}

const fsModel* fs_device_world_models(const fsDevice* dev) {
  return dev->d_models;
}

int fs_device_kernel_info(const fsDevice* dev, const void* kernel, fsKernelInfo* out,
                          fsError* err) {
  cudaFuncAttributes a;
  int blocks = 0, device = 0, max_threads = 0;
  const int threads = FS_BLOCK_THREADS;
  FS_CUDA_TRY(cudaFuncGetAttributes(&a, kernel), err);
  size_t smem = fs_world_smem(dev->lanes, dev->chip.bytes);
  FS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem), err);
  FS_CUDA_TRY(cudaGetDevice(&device), err);
  FS_CUDA_TRY(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device),
              err);
  out->registers = a.numRegs;
  out->local_bytes = (int)a.localSizeBytes;
  out->shared_bytes = (int)(a.sharedSizeBytes + smem);
  out->chip_bytes = dev->chip.bytes;
  out->block_threads = threads;
  out->occupancy = max_threads > 0 ? (double)blocks * threads / max_threads : 0;
  return 0;
}

//---------------------------------- memory --------------------------------------------------------

int fs_cuda_device_count(void) {
  int n = 0;
  // no driver or no device is an answer here (0), not an error
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError(); // clear it so that later calls do not report it
    return 0;
  }
  return n;
}

static size_t field_bytes(const fsModel* m, const fsFieldInfo* f, int nworld) {
  return (size_t)nworld * fs_field_bytes(m, f);
}

// Bytes the model and nworld worlds take on the device.
static size_t device_bytes(const fsModel* m, int nworld) {
  return fs_model_bytes(m) + (size_t)nworld * fs_world_bytes(m);
}

static int check_memory(const fsModel* m, int nworld, fsError* err) {
  size_t free_b = 0, total_b = 0;
  FS_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b), err);
  size_t need = device_bytes(m, nworld);
  if (need > free_b / 10 * 9)
    return fs_fail_status(err, FS_ERR_MEMORY,
                          "%d worlds need %.2f GiB of device memory (%.1f KiB each), the device "
                          "has %.2f GiB free; fix: fewer worlds, or fewer contacts a world (a "
                          "smaller max_contacts)",
                          nworld, need / 1073741824.0, need / 1024.0 / nworld,
                          free_b / 1073741824.0);
  return 0;
}

static int alloc_model(fsDevice* dev, const fsModel* host, fsError* err) {
  dev->m = *host; // sizes and options; every pointer nulled, then allocated below, so that
  for (int f = 0; f < fs_model_nfield; f++) // a failure frees device pointers only
    *fs_field_ptr(&dev->m, &fs_model_fields[f]) = NULL;
  for (int f = 0; f < fs_model_nfield; f++) {
    const fsFieldInfo* fi = &fs_model_fields[f];
    void** dst = fs_field_ptr(&dev->m, fi);
    size_t n = field_bytes(host, fi, 1);
    FS_CUDA_TRY(cudaMalloc(dst, n ? n : 1), err);
    FS_CUDA_TRY(cudaMemcpy(*dst, *fs_field_ptr((void*)host, fi), n, cudaMemcpyHostToDevice), err);
  }
  return 0;
}

static int alloc_data(fsDevice* dev, fsError* err) {
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    void** dst = fs_field_ptr(&dev->base, fi);
    size_t n = field_bytes(&dev->m, fi, dev->nworld);
    FS_CUDA_TRY(cudaMalloc(dst, n ? n : 1), err);
    FS_CUDA_TRY(cudaMemset(*dst, 0, n ? n : 1), err);
  }
  return 0;
}

// Non-blocking: the stream does not wait for stream 0, nor stream 0 for it. A caller's
// stream is used as it is.
static int create_stream(fsDevice* dev, void* stream, fsError* err) {
  if (stream) {
    dev->stream = (cudaStream_t)stream;
    return 0;
  }
  FS_CUDA_TRY(cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking), err);
  dev->own_stream = 1;
  return 0;
}

static int sync_device(fsError* err) {
  FS_CUDA_TRY(cudaDeviceSynchronize(), err);
  return 0;
}

fsDevice* fs_device_create(const fsModel* m, int nworld, fsError* err) {
  return fs_device_create_on(m, nworld, NULL, err);
}

fsDevice* fs_device_create_on(const fsModel* m, int nworld, void* stream, fsError* err) {
  if (fs_cuda_device_count() == 0) {
    fs_fail_status(err, FS_ERR_UNAVAILABLE,
                   "no CUDA device: the CUDA stepper needs an NVIDIA GPU and its driver; fix: "
                   "run on a machine with a GPU, or use the cpu or host backend");
    return NULL;
  }
  if (check_memory(m, nworld, err)) return NULL;
  fsDevice* dev = (fsDevice*)fs_calloc(err, "the CUDA stepper", 1, sizeof(fsDevice));
  if (!dev) return NULL;
  dev->nworld = nworld;
  dev->lanes = fs_world_lanes_env(err);
  if (dev->lanes < 0) {
    free(dev);
    return NULL;
  }
  for (int f = 0; f < FS_NDATA_FIELD; f++) dev->chip.off[f] = -1; // no plan: global memory
  // uploads on stream 0 finish before any kernel runs on dev's (non-blocking) stream
  fsChipPlan none = dev->chip; // the step kernels' views alone must fit (over 48 KiB at 1
                               // lane a world)
  if (create_stream(dev, stream, err) || alloc_model(dev, m, err) || alloc_data(dev, err) ||
      fs_device_set_chip_plan(dev, &none, err) || sync_device(err)) {
    fs_device_destroy(dev);
    return NULL;
  }
  return dev;
}

// The worlds' own models freed (no work may still read them).
static void free_world_models(fsDevice* dev) {
  if (dev->d_models) FS_CUDA_IGNORE(cudaFree(dev->d_models));
  dev->d_models = NULL;
  for (int f = 0; dev->world_fields && f < fs_model_nfield; f++)
    if (dev->world_fields[f]) FS_CUDA_IGNORE(cudaFree(dev->world_fields[f]));
  free(dev->world_fields);
  dev->world_fields = NULL;
}

void fs_device_destroy(fsDevice* dev) {
  if (!dev) return;
  if (dev->stream) FS_CUDA_IGNORE(cudaStreamSynchronize(dev->stream));
  free_world_models(dev);
  for (int f = 0; f < fs_model_nfield; f++) {
    void** p = fs_field_ptr(&dev->m, &fs_model_fields[f]);
    if (*p) FS_CUDA_IGNORE(cudaFree(*p));
  }
  for (int f = 0; f < fs_data_nfield; f++) {
    void** p = fs_field_ptr(&dev->base, &fs_data_fields[f]);
    if (*p) FS_CUDA_IGNORE(cudaFree(*p));
  }
  if (dev->stream && dev->own_stream) FS_CUDA_IGNORE(cudaStreamDestroy(dev->stream));
  free(dev);
}

//---------------------------------- per-world models ----------------------------------------------

// Which model fields differ from base in some world, each world's sizes checked.
static int find_varying(const fsDevice* dev, const fsModel* base,
                        const fsModel* (*world)(void*, int), void* arg, char* varies,
                        fsError* err) {
  for (int w = 0; w < dev->nworld; w++) {
    const fsModel* mw = world(arg, w);
    if (!mw) continue;
    for (int f = 0; f < fs_model_nfield; f++) {
      const fsFieldInfo* fi = &fs_model_fields[f];
      size_t n = field_bytes(base, fi, 1);
      if (field_bytes(mw, fi, 1) != n)
        return fs_fail_status(err, FS_ERR_ARGUMENT,
                              "world %d's model has another size of %s than the batch's; fix: "
                              "vary values, not the model's structure",
                              w, fi->name);
      if (n && memcmp(*fs_field_ptr((void*)mw, fi), *fs_field_ptr((void*)base, fi), n))
        varies[f] = 1;
    }
  }
  return 0;
}

// The varying fields' per-world copies, every world's values side by side (staged on
// the host, one upload a field), and each world's model struct.
static int upload_worlds(fsDevice* dev, const fsModel* base, const fsModel* (*world)(void*, int),
                         void* arg, const char* varies, fsModel* structs, fsError* err) {
  for (int w = 0; w < dev->nworld; w++) {
    const fsModel* mw = world(arg, w);
    fsModel s = mw ? *mw : *base; // this world's sizes and options
    for (int f = 0; f < fs_model_nfield; f++) {
      const fsFieldInfo* fi = &fs_model_fields[f];
      void** dst = fs_field_ptr(&s, fi);
      *dst = varies[f] ? (char*)dev->world_fields[f] + (size_t)w * field_bytes(base, fi, 1)
                       : *fs_field_ptr(&dev->m, fi);
    }
    structs[w] = s;
  }
  for (int f = 0; f < fs_model_nfield; f++) {
    if (!varies[f]) continue;
    const fsFieldInfo* fi = &fs_model_fields[f];
    size_t n = field_bytes(base, fi, 1);
    char* all = (char*)fs_calloc(err, "the worlds' model values", (size_t)dev->nworld, n);
    if (!all) return -1;
    for (int w = 0; w < dev->nworld; w++) {
      const fsModel* mw = world(arg, w);
      memcpy(all + (size_t)w * n, *fs_field_ptr((void*)(mw ? mw : base), fi), n);
    }
    // pageable: staged before the call returns, in order with dev's kernels
    cudaError_t e = cudaMemcpyAsync(dev->world_fields[f], all, n * dev->nworld,
                                    cudaMemcpyHostToDevice, dev->stream);
    free(all);
    if (e != cudaSuccess)
      return fs_fail(err, "CUDA error %s (%s) uploading the worlds' %s", cudaGetErrorName(e),
                     cudaGetErrorString(e), fi->name);
  }
  return 0;
}

int fs_device_clear_world_models(fsDevice* dev, fsError* err) {
  FS_CUDA_TRY(cudaStreamSynchronize(dev->stream), err); // queued steps may read them
  free_world_models(dev);
  return 0;
}

int fs_device_set_world_models(fsDevice* dev, const fsModel* base,
                               const fsModel* (*world)(void* arg, int w), void* arg, fsError* err) {
  if (fs_device_clear_world_models(dev, err)) return -1;
  char* varies = (char*)fs_calloc(err, "the model fields", (size_t)fs_model_nfield, 1);
  fsModel* structs =
      (fsModel*)fs_calloc(err, "the worlds' models", (size_t)dev->nworld, sizeof(fsModel));
  dev->world_fields =
      (void**)fs_calloc(err, "the model fields", (size_t)fs_model_nfield, sizeof(void*));
  int rc = -1;
  if (!varies || !structs || !dev->world_fields) goto done;
  if (find_varying(dev, base, world, arg, varies, err)) goto done;
  for (int f = 0; f < fs_model_nfield; f++) {
    if (!varies[f]) continue;
    size_t n = field_bytes(base, &fs_model_fields[f], dev->nworld);
    cudaError_t e = cudaMalloc(&dev->world_fields[f], n ? n : 1);
    if (e != cudaSuccess) {
      fs_fail_status(err, FS_ERR_MEMORY,
                     "%d worlds' %s: %s (%.1f MiB of device memory); fix: fewer worlds",
                     dev->nworld, fs_model_fields[f].name, cudaGetErrorString(e), n / 1048576.0);
      goto done;
    }
  }
  if (upload_worlds(dev, base, world, arg, varies, structs, err)) goto done;
  {
    cudaError_t e = cudaMalloc((void**)&dev->d_models, sizeof(fsModel) * dev->nworld);
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(dev->d_models, structs, sizeof(fsModel) * dev->nworld,
                          cudaMemcpyHostToDevice, dev->stream);
    if (e != cudaSuccess) {
      fs_fail_status(err, e == cudaErrorMemoryAllocation ? FS_ERR_MEMORY : FS_ERR_RUNTIME,
                     "CUDA error %s (%s) uploading the worlds' models", cudaGetErrorName(e),
                     cudaGetErrorString(e));
      goto done;
    }
  }
  rc = 0;
done:
  if (rc) free_world_models(dev);
  free(varies);
  free(structs);
  return rc;
}

static int copy_all(fsDevice* dev, fsWorlds* host, int to_device, fsError* err) {
  if (host->nworld != dev->nworld)
    return fs_fail(err, "batch of %d worlds, device of %d", host->nworld, dev->nworld);
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    void* d = *fs_field_ptr(&dev->base, fi);
    void* h = *fs_field_ptr(&host->base, fi);
    size_t n = fs_field_bytes(&dev->m, fi);
    // world by world: side by side on the device, a block apart on the host (worlds.h; not
    // one cudaMemcpy2DAsync, which the GPU simulator lacks); on dev's stream: ordered with
    // its kernels (the stream does not sync with stream 0)
    for (int w = 0; w < dev->nworld && n; w++) {
      char* dw = (char*)d + (size_t)w * n;
      char* hw = (char*)h + (size_t)w * host->world_bytes;
      if (to_device)
        FS_CUDA_TRY(cudaMemcpyAsync(dw, hw, n, cudaMemcpyHostToDevice, dev->stream), err);
      else
        FS_CUDA_TRY(cudaMemcpyAsync(hw, dw, n, cudaMemcpyDeviceToHost, dev->stream), err);
    }
  }
  FS_CUDA_TRY(cudaStreamSynchronize(dev->stream), err);
  return 0;
}

int fs_device_upload(fsDevice* dev, const fsWorlds* host, fsError* err) {
  return copy_all(dev, (fsWorlds*)host, 1, err);
}

int fs_device_download(fsDevice* dev, fsWorlds* host, fsError* err) {
  return copy_all(dev, host, 0, err);
}

const fsModel* fs_device_model(const fsDevice* dev) {
  return &dev->m;
}

const fsData* fs_device_data(const fsDevice* dev) {
  return &dev->base;
}

int fs_device_nworld(const fsDevice* dev) {
  return dev->nworld;
}

void* fs_device_stream(const fsDevice* dev) {
  return (void*)dev->stream;
}
