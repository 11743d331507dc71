// The device runner: the batch is uploaded, the stage (or forward, or steps) runs
// in the kernels, the batch comes back. No GPU: open returns FSH_SKIP.
#include "cuda/device.h"
#include "cuda/test_kernels.h"
#include "common/parity/harness.h"

typedef struct CudaRunner {
  fsDevice* dev;
} CudaRunner;

static int cuda_open(void* self, fsModel* m, int nworld, fsError* err) {
  if (fs_cuda_device_count() == 0) return FSH_SKIP;
  if (m->nbranchpair && m->npairnv) // as fs_model_for_lanes refuses them for the cuda backend
    return fs_fail_status(err, FS_ERR_MODEL,
                          "the device does not implement %d contact pairs whose rows move two "
                          "branches of a tree or two trees (the Hessian's tree layout)",
                          m->nbranchpair);
  if (fs_model_kernels_lack(m, NULL, err)) return -1;
  fs_model_without_sensors(m); // the sensor stage is the host's: nothing to compare here
  CudaRunner* r = self;
  r->dev = fs_device_create(m, nworld, err);
  return r->dev ? 0 : -1;
}

static int cuda_run(void* self, fsWorlds* b, int what, int n, fsError* err) {
  CudaRunner* r = self;
  if (fs_device_upload(r->dev, b, err)) return -1;
  int rc = what == FSH_FORWARD ? fs_device_forward(r->dev, err)
           : what == FSH_STEP  ? fs_device_step(r->dev, n, err)
                               : fs_device_stage(r->dev, what, err);
  if (rc) return -1;
  return fs_device_download(r->dev, b, err);
}

static void cuda_close(void* self) {
  CudaRunner* r = self;
  fs_device_destroy(r->dev);
  r->dev = NULL;
}

fshRunner fsh_runner_cuda(void) {
  static CudaRunner self;
  return (fshRunner){"cuda " FS_REAL_NAME, &self, cuda_open, cuda_run, cuda_close};
}
